"""RecordIO files for plain PyTorch: :class:`RecordDataset` is a ``torch.utils.data.Dataset``
over an MXNet image RecordIO file (``.rec`` with its ``.idx``, e.g. from im2rec), whose samples
are torch tensors, so a ``torch.utils.data.DataLoader`` (with worker processes) reads it
without MXNet::

    from torch.utils.data import DataLoader
    from neomx.contrib.torch_data import RecordDataset

    ds = RecordDataset('train.rec')                 # train.idx next to it
    loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4)
    for images, labels in loader:                   # uint8 (64, 3, H, W) if all images are HxW
        ...

Each sample is ``(image, label)``: the image decoded with OpenCV (as MXNet) to a uint8 tensor
in RGB, CHW by default (``layout='HWC'`` keeps OpenCV's layout), the label a float32 tensor (a
scalar, or the record's label array). ``transform(image) -> image`` runs in the worker, e.g.
:func:`random_crop_flip_normalize`. The file is opened lazily in each process, so the dataset
pickles cheaply into DataLoader workers.
"""
from __future__ import annotations

import os

import numpy as np
import torch

from .. import recordio
from ..base import MXNetError
from ..recordio import _require_cv2

__all__ = ["RecordDataset", "random_crop_flip_normalize", "center_crop_normalize"]

IMAGENET_MEAN = (123.68, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)


class RecordDataset(torch.utils.data.Dataset):
    """An indexed image ``.rec`` as a map-style torch dataset of ``(image, label)`` tensors.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file.
    path_imgidx : str, optional
        Its index (default: the ``.rec`` path with ``.idx``).
    transform : callable, optional
        Applied to each image tensor (in the worker process).
    flag : int
        1: color (RGB, 3 channels), 0: grayscale (1 channel).
    layout : {'CHW', 'HWC'}

    Examples
    --------
    >>> import os, tempfile, numpy as np, neomx as mx
    >>> from neomx.contrib.torch_data import RecordDataset
    >>> d = tempfile.mkdtemp()
    >>> w = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
    >>> for i in range(3):
    ...     img = np.full((8, 6, 3), i, np.uint8)
    ...     w.write_idx(i, mx.recordio.pack_img((0, float(i), i, 0), img, img_fmt='.png', quality=3))
    >>> w.close()
    >>> ds = RecordDataset(os.path.join(d, 'a.rec'))
    >>> img, label = ds[2]
    >>> len(ds), tuple(img.shape), img.dtype, label
    (3, (3, 8, 6), torch.uint8, tensor(2.))
    """

    def __init__(self, path_imgrec, path_imgidx=None, transform=None, flag=1, layout="CHW"):
        self.path_imgrec = os.fspath(path_imgrec)
        self.path_imgidx = (os.fspath(path_imgidx) if path_imgidx is not None
                            else os.path.splitext(self.path_imgrec)[0] + ".idx")
        if layout not in ("CHW", "HWC"):
            raise MXNetError(f"RecordDataset: layout must be 'CHW' or 'HWC', got {layout!r}")
        self.transform = transform
        self.flag = flag
        self.layout = layout
        rec = recordio.MXIndexedRecordIO(self.path_imgidx, self.path_imgrec, "r")
        self.keys = list(rec.keys)
        rec.close()
        self._rec = None
        self._pid = None

    def __len__(self):
        return len(self.keys)

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_rec"] = None  # each process opens its own handle
        return d

    def _reader(self):
        if self._rec is None or self._pid != os.getpid():
            self._rec = recordio.MXIndexedRecordIO(self.path_imgidx, self.path_imgrec, "r")
            self._pid = os.getpid()
        return self._rec

    def __getitem__(self, i):
        header, buf = recordio.unpack(self._reader().read_idx(self.keys[i]))
        cv2 = _require_cv2()
        img = cv2.imdecode(np.frombuffer(buf, np.uint8),
                           cv2.IMREAD_COLOR if self.flag else cv2.IMREAD_GRAYSCALE)
        if img is None:
            raise MXNetError(f'RecordDataset: record {self.keys[i]} of "{self.path_imgrec}" is '
                             "not a decodable image")
        if img.ndim == 2:
            img = img[:, :, None]
        else:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        t = torch.from_numpy(img)
        if self.layout == "CHW":
            t = t.permute(2, 0, 1).contiguous()
        if self.transform is not None:
            t = self.transform(t)
        label = torch.as_tensor(np.asarray(header.label, np.float32))
        return t, label


def _normalize(t, mean, std):
    mean = torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1)
    std = torch.tensor(std, dtype=torch.float32).view(-1, 1, 1)
    return (t.float() - mean) / std


def random_crop_flip_normalize(size, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    """A transform for CHW uint8 tensors: a random ``size`` x ``size`` crop, a random
    left-right flip, then ``(x - mean) / std`` as float32 (ImageRecordIter's ``rand_crop``,
    ``rand_mirror``, ``mean_*``/``std_*``)."""
    def transform(t):
        h, w = t.shape[-2:]
        if h < size or w < size:
            raise MXNetError(f"random_crop_flip_normalize: image {h}x{w} is smaller than the "
                             f"{size}x{size} crop")
        y = int(torch.randint(0, h - size + 1, ()))
        x = int(torch.randint(0, w - size + 1, ()))
        t = t[..., y:y + size, x:x + size]
        if torch.rand(()) < 0.5:
            t = t.flip(-1)
        return _normalize(t, mean, std)
    return transform


def center_crop_normalize(size, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    """A transform for CHW uint8 tensors: the central ``size`` x ``size`` crop, normalised."""
    def transform(t):
        h, w = t.shape[-2:]
        y, x = max(0, (h - size) // 2), max(0, (w - size) // 2)
        return _normalize(t[..., y:y + size, x:x + size], mean, std)
    return transform
