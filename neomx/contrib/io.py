"""Contrib data iterators (``mx.contrib.io``): a gluon ``DataLoader`` as a Module ``DataIter``."""
from __future__ import annotations

from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Returns an iterator for ``mx.gluon.data.DataLoader`` so a gluon data loader can be used
    in a symbolic module.

    The first batch fixes ``batch_size`` and the shapes of ``provide_data``/``provide_label``
    (the loader is read once for it, then reset). A shorter last batch is padded up to
    ``batch_size`` (the padding rows are uninitialized, as MXNet; ``getpad`` counts them).

    Parameters
    ----------
    loader : mx.gluon.data.DataLoader
        Gluon dataloader instance (yielding ``(data, label)`` batches)
    data_name : str, optional
        The data name.
    label_name : str, optional
        The label name.
    dtype : str, optional
        The dtype specifier, can be float32 or float16

    Examples
    --------
    >>> import neomx as mx
    >>> ds = mx.gluon.data.ArrayDataset(mx.nd.arange(10).reshape((5, 2)), mx.nd.arange(5))
    >>> it = mx.contrib.io.DataLoaderIter(mx.gluon.data.DataLoader(ds, batch_size=2))
    >>> [(b.data[0].shape, b.pad) for b in it]
    [((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
    """

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        self._iter = iter(self._loader)
        data, label = next(self._iter)
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current_batch = next(self._iter)
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, i):
        part = self._current_batch[i]
        if self.getpad():
            ret = nd.empty(shape=[self.batch_size] + list(part.shape[1:]))
            ret[:part.shape[0]] = part.astype(self.dtype)
            return [ret]
        return [part.astype(self.dtype)]

    def getdata(self):
        return self._padded(0)

    def getlabel(self):
        return self._padded(1)

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
