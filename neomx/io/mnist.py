"""``MNISTIter``: batches straight from MNIST IDX files (MXNet's C++ ``MNISTIter``, in Python)."""
from __future__ import annotations

import logging

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import from_torch
from .idx import read_idx_images, read_idx_labels
from .io import DataBatch, DataDesc, DataIter

__all__ = ["MNISTIter"]

_log = logging.getLogger("neomx.io")


def _part(count: int, num_parts: int, part_index: int) -> slice:
    """MXNet's split: equal parts of ``count // num_parts``; the last one takes the rest."""
    step = count // num_parts
    start = step * part_index
    end = count if part_index == num_parts - 1 else start + step
    return slice(start, end)


class MNISTIter(DataIter):
    """Iterate over MNIST IDX files in mini-batches (keyword arguments only, as in MXNet).

    Pixels are scaled by **1/256** into float32; the data is ``(batch_size, 1, rows, cols)``,
    or ``(batch_size, rows*cols)`` with ``flat=True``; the label is ``(batch_size,)`` float32.
    Examples are shuffled **once**, at construction (seeded by ``seed``), so every epoch sees
    the same order; a last batch smaller than ``batch_size`` is dropped, so ``pad`` is always 0.
    ``num_parts``/``part_index`` keep one contiguous part of the files (for distributed
    training): ``count // num_parts`` examples each, the last part also takes the remainder.

    Unlike MXNet, the files are checked (IDX magic numbers, sizes, equal image and label
    counts) and may be gzip-compressed; ``getindex()`` gives the examples' positions in the
    files (MXNet returns zeros); the shuffle order differs from MXNet's (``numpy``'s
    ``RandomState(seed)``, not ``std::shuffle``). Other keyword arguments MXNet accepts
    (``input_shape``, ``prefetch_buffer``, ...) are accepted and ignored.

    Parameters
    ----------
    image, label : str
        IDX image (magic 2051) and label (magic 2049) files.
    batch_size : int
    shuffle, flat, silent : bool
        ``silent=False`` logs a summary line on the ``neomx.io`` logger.
    seed : int
    num_parts, part_index : int
    data_name, label_name : str
        Names in ``provide_data``/``provide_label``.
    """

    def __init__(self, *args, image="./train-images-idx3-ubyte",
                 label="./train-labels-idx1-ubyte", batch_size=128, shuffle=True, flat=False,
                 seed=0, silent=False, num_parts=1, part_index=0, data_name="data",
                 label_name="softmax_label", **_ignored):
        if args:
            raise TypeError("MNISTIter can only accept keyword arguments")
        batch_size, num_parts, part_index = int(batch_size), int(num_parts), int(part_index)
        if batch_size < 1:
            raise MXNetError(f"MNISTIter: batch_size must be positive, got {batch_size}")
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"MNISTIter: Check failed: param_.num_parts > param_.part_index "
                             f"({num_parts} vs. {part_index})")
        super().__init__(batch_size)
        images, labels = self._load(image, label)
        part = _part(images.shape[0], num_parts, part_index)
        images, labels = images[part], labels[part]
        self._inst = np.arange(part.start, part.start + images.shape[0], dtype=np.uint64)
        if shuffle:
            order = np.random.RandomState(int(seed)).permutation(images.shape[0])
            images, labels, self._inst = images[order], labels[order], self._inst[order]
        rows, cols = images.shape[1:]
        shape = (-1, rows * cols) if flat else (-1, 1, rows, cols)
        # pixel/256 is exact in float32; kept as one tensor, batches are copied out of it
        self._images = torch.from_numpy(images).reshape(shape).float().mul_(1.0 / 256.0)
        self._labels = torch.from_numpy(labels.astype(np.float32))
        self._count = images.shape[0]
        if self._count < batch_size:
            raise MXNetError(f"MNISTIter: batch_size {batch_size} is larger than the "
                             f"{self._count} examples of {image!r}; no batch can be formed")
        self._loc = 0
        self._current = None
        batch_shape = (batch_size,) + tuple(self._images.shape[1:])
        self.provide_data = [DataDesc(data_name, batch_shape, np.float32)]
        self.provide_label = [DataDesc(label_name, (batch_size,), np.float32)]
        if not silent:
            shown = "(%d,%d)" % batch_shape if flat else "[%s]" % ",".join(map(str, batch_shape))
            _log.info("MNISTIter: load %d images, shuffle=%d, shape=%s", self._count,
                      bool(shuffle), shown)

    @staticmethod
    def _load(image, label):
        images = read_idx_images(image)
        labels = read_idx_labels(label)
        if images.shape[0] != labels.shape[0]:
            raise MXNetError(f"MNISTIter: {image!r} holds {images.shape[0]} images but {label!r} "
                             f"holds {labels.shape[0]} labels")
        return images, labels

    def reset(self):
        self._loc = 0
        self._current = None

    def iter_next(self):
        if self._loc + self.batch_size > self._count:
            return False
        self._current = slice(self._loc, self._loc + self.batch_size)
        self._loc += self.batch_size
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=0,
                         index=self.getindex())

    def _check_current(self):
        if self._current is None:
            raise MXNetError("MNISTIter: no current batch; call next() or iter_next() first")

    def getdata(self):
        self._check_current()
        return from_torch(self._images[self._current].clone(), cpu(0))

    def getlabel(self):
        self._check_current()
        return from_torch(self._labels[self._current].clone(), cpu(0))

    def getindex(self):
        self._check_current()
        return self._inst[self._current].copy()

    def getpad(self):
        return 0
