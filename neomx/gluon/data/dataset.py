"""Datasets: indexable collections of samples, as MXNet 1.9.1's ``gluon.data.dataset``."""
from __future__ import annotations

import os

from ... import ndarray as nd
from ...base import MXNetError

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__`` (the i-th sample) and ``__len__``.

    Examples
    --------
    >>> from neomx.gluon.data import SimpleDataset
    >>> ds = SimpleDataset(list(range(10)))
    >>> list(ds.transform(lambda x: x * 10).take(3))
    [0, 10, 20]
    >>> list(ds.filter(lambda x: x % 4 == 0)), list(ds.shard(3, 1))
    ([0, 4, 8], [4, 5, 6])
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (evaluated once, now)."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """The ``index``-th of ``num_shards`` contiguous parts (the first ``len % num_shards``
        parts get one sample more)."""
        if not 0 < num_shards:
            raise MXNetError(f"Number of shards must be greater than 0, got {num_shards}")
        if not 0 <= index < num_shards:
            raise MXNetError(f"Shard index out of bound: {index} out of {num_shards}")
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields (a :class:`Sampler`)."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected "
                            "gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through ``fn`` (tuples as ``fn(*sample)``): on access when
        ``lazy``, else all at once now (a random ``fn`` then gives the same result every epoch)."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """Like :meth:`transform`, on the first element of each sample only (e.g. the image of
        an ``(image, label)`` pair)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array, ...)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` applied to the first element (a picklable class, not a closure: worker
    processes may need to pickle it)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices of ``sampler`` (drawn once)."""

    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several equally long datasets, lists or arrays zipped: sample ``i`` is
    ``(x1[i], x2[i], ...)`` (just ``x1[i]`` for one). 1-D NDArrays are held as numpy arrays, so
    their samples are numpy scalars, as MXNet's.

    Examples
    --------
    >>> import numpy as np
    >>> from neomx.gluon.data import ArrayDataset
    >>> ds = ArrayDataset(np.arange(6).reshape(3, 2), [7, 8, 9])
    >>> len(ds), ds[1]
    (3, (array([2, 3]), 8))
    """

    def __init__(self, *args):
        if not args:
            raise MXNetError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise MXNetError(f"All arrays must have the same length; array[0] has length "
                                 f"{self._length} while array[{i}] has {len(data)}.")
            if isinstance(data, nd.NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``filename``, with its ``.idx`` beside it) as raw bytes,
    in the index file's order."""

    def __init__(self, filename):
        from ... import recordio
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        for path in (self.filename, self.idx_file):
            if not os.path.isfile(path):
                raise MXNetError(f"RecordFileDataset: {path} does not exist (a .rec file needs "
                                 "its .idx index beside it)")
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """A dataset of ``(data, label)`` pairs loaded from files under ``root`` by ``_get_data``
    (neomx never downloads: the files must be there)."""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
