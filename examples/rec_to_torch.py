"""Feed an MXNet RecordIO file (.rec + .idx) to plain PyTorch.

Packs generated images (4 classes: a coloured gradient each, plus noise) into a .rec with
``mx.recordio.pack_img`` (``python -m neomx.tools.im2rec`` makes the same files from image
folders), then trains a tiny CNN from a ``torch.utils.data.DataLoader`` with worker processes
over ``neomx.contrib.torch_data.RecordDataset``. No MXNet is needed to read the file.

    .venv/bin/python examples/rec_to_torch.py [--images 400] [--epochs 3] [--workers 2] [--out DIR]
"""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import torch
from torch import nn

import neomx as mx
from neomx.contrib.torch_data import RecordDataset, random_crop_flip_normalize

CLASSES = 4


def make_image(label, rng, size=40):
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    ramps = [xx, yy, xx + yy, size - xx]
    img = np.zeros((size, size, 3), np.float32)
    img[:, :, label % 3] = ramps[label] * (255.0 / (2 * size))
    img += rng.normal(0, 20, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def pack(folder, n, seed=0):
    """``n`` images with labels 0..3 as folder/train.rec + train.idx; returns the .rec path."""
    rng = np.random.RandomState(seed)
    rec = os.path.join(folder, "train.rec")
    w = mx.recordio.MXIndexedRecordIO(os.path.join(folder, "train.idx"), rec, "w")
    for i in range(n):
        label = i % CLASSES
        header = mx.recordio.IRHeader(0, float(label), i, 0)
        w.write_idx(i, mx.recordio.pack_img(header, make_image(label, rng), quality=90))
    w.close()
    return rec


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=400)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=None, help="folder for the .rec (default: a temp folder)")
    a = p.parse_args(argv)
    folder = a.out or tempfile.mkdtemp(prefix="rec_to_torch_")
    os.makedirs(folder, exist_ok=True)
    rec = pack(folder, a.images)
    print(f"packed {a.images} images into {rec}")

    torch.manual_seed(0)
    ds = RecordDataset(rec, transform=random_crop_flip_normalize(32, mean=(128,) * 3,
                                                                 std=(64,) * 3))
    loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True,
                                         num_workers=a.workers)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    acc = 0.0
    for epoch in range(a.epochs):
        correct = seen = 0
        for images, labels in loader:  # images: float32 (32, 3, 32, 32); labels: float32
            target = labels.long()
            out = model(images)
            loss = nn.functional.cross_entropy(out, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += int((out.argmax(1) == target).sum())
            seen += len(target)
        acc = correct / seen
        print(f"epoch {epoch}: loss {loss.item():.3f}  train accuracy {acc:.2f}")
    return acc


if __name__ == "__main__":
    main()
