"""``image-record-iter``: reading an ImageNet-style ``.rec`` with ``mx.io.ImageRecordIter``.

2,000 generated 256x256 JPEGs (10 class folders) are packed once with neomx's im2rec
(``--pass-through``, so the JPEG bytes are the generated ones) into a temporary folder named by
the content's parameters, reused by every run and peer. Each run reads them with
``ImageRecordIter(rand_crop 224, rand_mirror, ImageNet mean/std, batch 64,
preprocess_threads=2)``: neomx and MXNet 1.9.1 run the same code. PyTorch's peer is a
``torch.utils.data.DataLoader`` with 2 workers over ``neomx.contrib.torch_data.RecordDataset``
(random crop, flip and normalisation in torch).

Metric: microseconds per image (lower is better, so ``run.py``'s ratios keep their meaning);
``images_per_s`` is in the extras. Extras also hold im2rec's packing speed (300 images,
re-encoded, 1 thread): neomx's ``python -m neomx.tools.im2rec`` and MXNet's
``tools/im2rec.py`` from the MXNet package.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

METRIC = ("us_per_image", "us/image", "ImageRecordIter: crop 224, mirror, normalize, batch 64")
N_IMAGES, SIZE, CLASSES, BATCH, CROP = 2000, 256, 10, 64, 224
MEAN = dict(mean_r=123.68, mean_g=116.28, mean_b=103.53)
STD = dict(std_r=58.395, std_g=57.12, std_b=57.375)
PACK_SUBSET = 300


def _cache_dir():
    key = hashlib.sha1(f"v1-{N_IMAGES}-{SIZE}-{CLASSES}-q90".encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"neomx-bench-imgrec-{key}")


def _image(i):
    r = np.random.RandomState(i)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    base = np.stack([(xx * (1 + i % 7)) % 256, (yy * (2 + i % 5)) % 256,
                     ((xx + yy) * (1 + i % 3)) % 256], -1).astype(np.float32)
    return np.clip(base + r.normal(0, 12, base.shape), 0, 255).astype(np.uint8)


def _build(mx_name):
    """The cached images and ``data.rec``/``.idx`` (made once; atomically renamed)."""
    import cv2
    final = _cache_dir()
    if os.path.exists(os.path.join(final, "data.rec")):
        return final
    tmp = tempfile.mkdtemp(prefix="neomx-bench-imgrec-build-")
    root = os.path.join(tmp, "img")
    for i in range(N_IMAGES):
        folder = os.path.join(root, "c%02d" % (i % CLASSES))
        os.makedirs(folder, exist_ok=True)
        cv2.imwrite(os.path.join(folder, "%05d.jpg" % i), _image(i),
                    [cv2.IMWRITE_JPEG_QUALITY, 90])
    prefix = os.path.join(tmp, "data")
    if mx_name == "neomx":
        run = [sys.executable, "-m", "neomx.tools.im2rec"]
        subprocess.run(run + ["--list", "--recursive", prefix, root], check=True,
                       capture_output=True)
        subprocess.run(run + ["--pass-through", "--num-thread", "2", "--no-progress", prefix,
                              root], check=True, capture_output=True)
    else:  # MXNet's process made it first: the same records with mx.recordio
        import mxnet as mx
        w = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "w")
        with open(prefix + ".lst", "w") as lst:
            for i in range(N_IMAGES):
                rel = "c%02d/%05d.jpg" % (i % CLASSES, i)
                lst.write("%d\t%d\t%s\n" % (i, i % CLASSES, rel))
                with open(os.path.join(root, rel), "rb") as f:
                    w.write_idx(i, mx.recordio.pack(
                        mx.recordio.IRHeader(0, float(i % CLASSES), i, 0), f.read()))
        w.close()
    try:
        os.rename(tmp, final)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _pack_speed(cache, tool):
    """Images/s of an im2rec packing PACK_SUBSET images (re-encoded, 1 thread)."""
    work = tempfile.mkdtemp(prefix="neomx-bench-im2rec-")
    try:
        with open(os.path.join(cache, "data.lst")) as f:
            lines = f.readlines()[:PACK_SUBSET]
        prefix = os.path.join(work, "sub")
        with open(prefix + ".lst", "w") as f:
            f.writelines(lines)
        t0 = time.perf_counter()
        subprocess.run(tool + ["--num-thread", "1", prefix, os.path.join(cache, "img")],
                       check=True, capture_output=True)
        return PACK_SUBSET / (time.perf_counter() - t0)
    except (OSError, subprocess.CalledProcessError):
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _batches(cfg):
    return (6, 3) if cfg["quick"] else (2 * N_IMAGES // BATCH, 4)


def run_mx(mx, cfg):
    name = mx.__name__.split(".")[0]
    cache = _build(name)
    n_batches, warmup = _batches(cfg)
    it = mx.io.ImageRecordIter(path_imgrec=os.path.join(cache, "data.rec"),
                               data_shape=(3, CROP, CROP), batch_size=BATCH, rand_crop=True,
                               rand_mirror=True, preprocess_threads=2, **MEAN, **STD)

    def take(n):
        done = 0
        while done < n:
            try:
                b = it.next()
            except StopIteration:
                it.reset()
                continue
            b.data[0].wait_to_read()
            done += 1
    take(warmup)
    t0 = time.perf_counter()
    take(n_batches)
    dt = time.perf_counter() - t0
    images = n_batches * BATCH
    extra = {"images_per_s": images / dt, "images": images}
    if not cfg["quick"]:
        if name == "neomx":
            tool = [sys.executable, "-m", "neomx.tools.im2rec", "--no-progress"]
        else:
            tool = [sys.executable, os.path.join(os.path.dirname(mx.__file__), "tools",
                                                 "im2rec.py")]
        speed = _pack_speed(cache, tool)
        if speed:
            extra["im2rec_images_per_s"] = speed
    return {"value": 1e6 * dt / images, "extra": extra}


def run_torch(torch, cfg):
    from neomx.contrib.torch_data import RecordDataset, random_crop_flip_normalize
    cache = _build("neomx")
    n_batches, warmup = _batches(cfg)
    mean = (MEAN["mean_r"], MEAN["mean_g"], MEAN["mean_b"])
    std = (STD["std_r"], STD["std_g"], STD["std_b"])
    ds = RecordDataset(os.path.join(cache, "data.rec"),
                       transform=random_crop_flip_normalize(CROP, mean, std))
    loader = torch.utils.data.DataLoader(ds, batch_size=BATCH, num_workers=2,
                                         persistent_workers=True)
    state = {"it": iter(loader)}

    def take(n):
        done = 0
        while done < n:
            try:
                next(state["it"])
            except StopIteration:
                state["it"] = iter(loader)
                continue
            done += 1
    take(warmup)
    t0 = time.perf_counter()
    take(n_batches)
    dt = time.perf_counter() - t0
    images = n_batches * BATCH
    return {"value": 1e6 * dt / images, "extra": {"images_per_s": images / dt,
                                                  "images": images}}
