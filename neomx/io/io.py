"""Data descriptions, batches and the Python data iterators (MXNet 1.9.1's ``mx.io``)."""
from __future__ import annotations

import logging
from abc import ABCMeta
from collections import namedtuple

import numpy as np

from ..base import MXNetError, mx_real_t
from ..ndarray.sparse import CSRNDArray
from .utils import (_getdata_by_idx, _has_instance, _init_data, concat_rows, slice_rows,
                    take_rows, tile_rows)

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "NDArrayIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one data or label input.

    A ``(name, shape)`` tuple: ``dtype`` and ``layout`` are extra attributes that take no part
    in equality or unpacking. ``layout`` tells which axis is the batch axis (``N``).

    Examples
    --------
    >>> import neomx.io
    >>> d = neomx.io.DataDesc('data', (2, 3))
    >>> d
    DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]
    >>> d == ('data', (2, 3)), d.layout
    (True, 'NCHW')
    """

    def __new__(cls, name, shape, dtype=mx_real_t, layout="NCHW"):
        ret = super(cls, DataDesc).__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """The batch axis of ``layout`` (0 when None, -1 when it has no ``N``)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optionally ``[(name, dtype)]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch from an iterator: lists of data and label NDArrays plus bookkeeping.

    Parameters
    ----------
    data, label : list of NDArray
        ``batch_size`` examples each; ``label`` may be None or empty.
    pad : int, optional
        How many examples at the end are padding (to be ignored in prediction).
    index : numpy.ndarray, optional
        Indices of the examples in the batch.
    bucket_key, provide_data, provide_label : optional
        For bucketing; DataDesc lists describing ``data``/``label``.
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lbl.shape for lbl in self.label] if self.label else None
        return "{}: data shapes: {} label shapes: {}".format(
            self.__class__.__name__, data_shapes, label_shapes)


class DataIter:
    """Base class of data iterators; also a Python iterator of :class:`DataBatch`.

    Subclasses either override :meth:`next`, or implement :meth:`iter_next` (advance; False at
    the end) and the ``get*`` accessors that :meth:`next` assembles into a batch. ``reset``
    rewinds to the start of the data. Every iterator has MXNet's ``MXDataIter`` interface:
    after ``iter_next()`` returned True, ``getdata``/``getlabel``/``getindex``/``getpad``
    describe the current batch, and ``debug_skip_load()`` makes ``next(it)`` (and ``for``
    loops) return the first batch again and again (to time a network without loading
    data; a new ``iter(it)`` loads once more).
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        self._debug_batch = None
        return self

    def reset(self):
        """Rewind to the beginning of the data."""

    def next(self):
        """The next :class:`DataBatch`; raises StopIteration at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        if not getattr(self, "_debug_skip_load", False):
            return self.next()
        if getattr(self, "_debug_batch", None) is None:
            self._debug_batch = self.next()
        return self._debug_batch

    def debug_skip_load(self):
        """Always return the first batch from now on (MXNet's ``MXDataIter.debug_skip_load``)."""
        self._debug_skip_load = True
        self._debug_batch = None
        logging.info("Set debug_skip_load to be true, will simply return first batch")

    def iter_next(self):
        """Move to the next batch; returns whether there was one."""

    def getdata(self):
        """Data NDArrays of the current batch."""

    def getlabel(self):
        """Label NDArrays of the current batch."""

    def getindex(self):
        """Example indices of the current batch (None when unknown)."""
        return None

    def getpad(self):
        """Number of padding examples in the current batch."""


class MXDataIter(DataIter, metaclass=ABCMeta):
    """The iterators MXNet implements in C++ (``MNISTIter``, ``ImageRecordIter``, ``CSVIter``
    ...): one data and one label array per batch.

    A subclass implements ``iter_next``, ``getdata``/``getlabel`` (each returns one NDArray),
    ``getindex`` (a numpy array) and ``getpad``; ``next()`` wraps them into a
    :class:`DataBatch` of one-element lists, and after ``debug_skip_load()`` returns the
    current batch without advancing until the next ``reset()``. neomx's iterators written
    with their own ``next`` register as virtual subclasses (``MXDataIter.register``), so
    ``isinstance(it, mx.io.MXDataIter)`` holds as in MXNet.
    """

    def __init__(self, batch_size=0, data_name="data", label_name="softmax_label"):
        super().__init__(batch_size)
        self.data_name = data_name
        self.label_name = label_name
        self._debug_skip_load = False
        self._debug_at_begin = True

    def reset(self):
        self._debug_at_begin = True

    def next(self):
        if self._debug_skip_load and not self._debug_at_begin:
            return self._current_batch()
        self._debug_at_begin = False
        if self.iter_next():
            return self._current_batch()
        raise StopIteration

    def __next__(self):
        return self.next()

    def debug_skip_load(self):
        self._debug_skip_load = True
        logging.info("Set debug_skip_load to be true, will simply return first batch")

    def _current_batch(self):
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())


def _part_rows(count: int, num_parts: int, part_index: int) -> np.ndarray:
    """Row indices of one of ``num_parts`` equal contiguous parts (wrapping at the end)."""
    size = -(-count // num_parts)
    return np.arange(part_index * size, (part_index + 1) * size) % count


class NDArrayIter(DataIter):
    """Iterate over NDArrays / numpy arrays in mini-batches, as MXNet's ``mx.io.NDArrayIter``.

    Parameters
    ----------
    data : array, list of arrays, or dict of name -> array
        One array is named ``data_name``; several in a list become ``_0_<data_name>``,
        ``_1_<data_name>``, ...; dict inputs are named by their keys. Inputs are **sorted by
        name**. Non-NDArray inputs become float32 NDArrays; NDArrays keep their dtype until
        the first shuffle, which turns every dense input into float32 (as MXNet does).
        ``CSRNDArray`` inputs, and ``scipy.sparse.csr_matrix`` ones in a list or dict (a bare
        one is refused, as by MXNet), need ``last_batch_handle='discard'``
        (NotImplementedError otherwise); as in MXNet 1.9.1 their batches are *dense* NDArrays
        (``slice_axis`` has no csr kernel: a storage fallback warning), and shuffling keeps
        them csr with their dtype.
    label : same forms as ``data``, optional
        Named from ``label_name``. Lengths are not checked against ``data``.
    batch_size : int
    shuffle : bool
        Shuffle (with ``numpy.random``) at construction and again at every :meth:`reset`.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        For an incomplete last batch: ``'pad'`` fills it from the start of the data and sets
        ``pad``; ``'discard'`` drops it; ``'roll_over'`` drops it but starts the next epoch
        with the leftover examples (that first batch reports ``pad`` = the leftover count).
    data_name, label_name : str
    layout : str
        Its ``N`` marks the batch axis used for slicing and in ``provide_data``.
    num_parts, part_index : int
        Keep only part ``part_index`` of ``num_parts`` (one worker's shard in distributed
        training: ``num_parts=kv.num_workers, part_index=kv.rank``). Parts are contiguous and
        all of ``ceil(N / num_parts)`` examples -- the last one wraps around to the start of the
        data when ``N`` does not divide evenly -- so every worker gets the same number of
        batches, which dist_sync needs (each batch is a collective step). A neomx extension:
        MXNet's NDArrayIter has no sharding.

    Examples
    --------
    >>> import numpy as np, neomx.io
    >>> it = neomx.io.NDArrayIter(np.arange(10.).reshape(10, 1), np.arange(10.), batch_size=4)
    >>> [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it][-1]
    ([8.0, 9.0, 0.0, 1.0], 2)
    >>> it.provide_data
    [DataDesc[data,(4, 1),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW", num_parts=1,
                 part_index=0):
        super().__init__(batch_size)
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        if (_has_instance(self.data, CSRNDArray) or _has_instance(self.label, CSRNDArray)) \
                and last_batch_handle != "discard":
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray``"
                                      " with `last_batch_handle` set to `discard`.")
        num_parts, part_index = int(num_parts), int(part_index)
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"NDArrayIter: part_index must be in [0, num_parts), got "
                             f"part_index={part_index}, num_parts={num_parts}")
        if num_parts > 1:
            axis = layout.find("N")
            rows = _part_rows(self.data[0][1].shape[axis], num_parts, part_index)
            self.data = [(k, take_rows(v, rows, axis)) for k, v in self.data]
            self.label = [(k, take_rows(v, rows, axis)) for k, v in self.label]
        self.num_parts, self.part_index = num_parts, part_index
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.reset()  # shuffles
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        self._cache_data = None  # leftover of the last epoch, for 'roll_over'
        self._cache_label = None
        self.layout = layout

    # --- descriptions -------------------------------------------------------------------------
    def _descs(self, sources):
        axis = self.layout.find("N")
        return [DataDesc(k, tuple(list(v.shape[:axis]) + [self.batch_size] + list(v.shape[axis + 1:])),
                         v.dtype, layout=self.layout)
                for k, v in sources]

    @property
    def provide_data(self):
        """DataDescs of the data, with the batch axis set to ``batch_size``."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """DataDescs of the labels (empty list without labels)."""
        return self._descs(self.label)

    # --- epoch control ------------------------------------------------------------------------
    def hard_reset(self):
        """Rewind ignoring any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Rewind (and reshuffle); with 'roll_over' the next epoch starts with the leftover."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # the cursor goes negative by the number of leftover examples
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            # an incomplete last batch ('discard'/'roll_over'): keep it for the next epoch
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    # --- batch assembly -----------------------------------------------------------------------
    def _getdata(self, data_source, start=None, end=None):
        """Slices ``[start, end)`` of every source along the batch axis (copies)."""
        assert start is not None or end is not None, "should at least specify start or end"
        start = start if start is not None else 0
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        axis = self.layout.find("N")
        return [slice_rows(x[1], start, end, axis) for x in data_source]

    def _concat(self, first_data, second_data):
        if (not first_data) or (not second_data):
            return first_data if first_data else second_data
        assert len(first_data) == len(second_data), "data source should contain the same size"
        axis = self.layout.find("N")
        return [concat_rows(a, b, axis) for a, b in zip(first_data, second_data)]

    def _tile(self, data, repeats):
        return [tile_rows(d, repeats) for d in data] if data else []

    def _batchify(self, data_source):
        """The current batch of ``data_source`` (data or label list)."""
        assert self.cursor < self.num_data, "DataIter needs reset."
        bs, n = self.batch_size, self.num_data
        if self.last_batch_handle == "roll_over" and -bs < self.cursor < 0:
            # first batch of an epoch after a roll-over: leftover + start of the data
            assert self._cache_data is not None or self._cache_label is not None, \
                "next epoch should have cached data"
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            second = self._getdata(data_source, end=self.cursor + bs)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache, second)
        if self.last_batch_handle == "pad" and self.cursor + bs > n:
            pad = bs - n + self.cursor
            first = self._getdata(data_source, start=self.cursor)
            if pad > n:  # batch larger than the data: wrap around several times
                second = self._tile(self._getdata(data_source, end=n), pad // n)
                if pad % n != 0:
                    second = self._concat(second, self._getdata(data_source, end=pad % n))
            else:
                second = self._getdata(data_source, end=pad)
            return self._concat(first, second)
        end = min(self.cursor + bs, n)
        return self._getdata(data_source, self.cursor, end)

    def getdata(self):
        return self._batchify(self.data)

    def getlabel(self):
        return self._batchify(self.label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        """Permute ``idx`` in place and reorder every source by it (float32 afterwards)."""
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)


def __getattr__(name):
    """``mx.io.io.PrefetchingIter`` / ``ResizeIter``: MXNet defines them in this module; neomx
    keeps them in wrappers.py (which builds on this module), re-exported here on first use."""
    if name in ("PrefetchingIter", "ResizeIter"):
        from . import wrappers
        return getattr(wrappers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
