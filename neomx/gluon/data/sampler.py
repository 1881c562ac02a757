"""Samplers: iterables of dataset indices (or of index batches), as MXNet 1.9.1's
``gluon.data.sampler``, plus ``IntervalSampler`` (MXNet 2's)."""
from __future__ import annotations

import numpy as np

from ...base import MXNetError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]


class Sampler:
    """Base class for samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``start, start + 1, ..., start + length - 1`` in order.

    Examples
    --------
    >>> from neomx.gluon.data import SequentialSampler
    >>> list(SequentialSampler(3, start=2))
    [2, 3, 4]
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A fresh permutation of ``range(length)`` each pass (``np.random``, as MXNet)."""

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true."""

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


_LAST_BATCH = ("keep", "discard", "rollover")


def _check_last_batch(last_batch):
    if last_batch not in _LAST_BATCH:
        raise MXNetError("last_batch must be one of 'keep', 'discard', or 'rollover', but got "
                         f"{last_batch!r}")


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    ``last_batch``: ``'keep'`` yields a short last batch, ``'discard'`` drops it, ``'rollover'``
    keeps its indices for the start of the next pass.

    Examples
    --------
    >>> from neomx.gluon.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    >>> roll = BatchSampler(SequentialSampler(5), 2, 'rollover')
    >>> list(roll), list(roll)
    ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        _check_last_batch(last_batch)
        if int(batch_size) <= 0:
            raise MXNetError(f"batch_size must be a positive integer, got {batch_size!r}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size


class IntervalSampler(Sampler):
    """Indices ``0, interval, 2 * interval, ...``, then (``rollover``) ``1, 1 + interval, ...``
    and so on: every index once, in strides.

    Examples
    --------
    >>> from neomx.gluon.data import IntervalSampler
    >>> list(IntervalSampler(7, 3))
    [0, 3, 6, 1, 4, 2, 5]
    >>> list(IntervalSampler(7, 3, rollover=False))
    [0, 3, 6]
    """

    def __init__(self, length, interval, rollover=True):
        if not 0 < interval <= length:
            raise MXNetError(f"Interval {interval} must be positive and at most the length "
                             f"{length}")
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return (self._length + self._interval - 1) // self._interval
