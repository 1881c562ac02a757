"""``mx.io``: data descriptions, batches and data iterators.

* :class:`DataDesc`, :class:`DataBatch`, :class:`DataIter` -- the iterator protocol.
* :class:`NDArrayIter` -- mini-batches over in-memory arrays (pad / discard / roll_over).
* :class:`MNISTIter` -- mini-batches straight from MNIST IDX files.
* :class:`ImageRecordIter` (and its ``_v1``/``UInt8``/``Int8`` forms) -- images from a ``.rec``
  decoded and augmented in threads, as MXNet's C++ iterator; :class:`ImageDetRecordIter`
  (detection labels), :class:`CSVIter`, :class:`LibSVMIter` (csr batches).
* :class:`PrefetchingIter`, :class:`ResizeIter` -- wrappers around other iterators.
* :mod:`neomx.io.idx` -- the IDX reader and writer behind MNISTIter and ``get_mnist``.
"""
from __future__ import annotations

from . import idx, io, utils
from .idx import read_idx, read_idx_images, read_idx_labels, write_idx
from .io import DataBatch, DataDesc, DataIter, MXDataIter, NDArrayIter
from .mnist import MNISTIter
from .image_record_iter import (ImageRecordIter, ImageRecordIter_v1, ImageRecordUInt8Iter,
                                ImageRecordUInt8Iter_v1, ImageRecordInt8Iter)
from .image_det_record_iter import ImageDetRecordIter
from .text_iters import CSVIter, LibSVMIter
from .wrappers import PrefetchingIter, ResizeIter
from .utils import _getdata_by_idx, _has_instance, _init_data

MXDataIter.register(MNISTIter)  # a C++ iterator in MXNet

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "NDArrayIter", "MNISTIter", "idx",
           "ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter", "ImageRecordUInt8Iter_v1",
           "ImageRecordInt8Iter", "ImageDetRecordIter", "CSVIter", "LibSVMIter",
           "PrefetchingIter", "ResizeIter",
           "read_idx", "read_idx_images", "read_idx_labels", "write_idx"]
