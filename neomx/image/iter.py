"""``mx.image.ImageIter``: batches of augmented images from a ``.rec`` (with or without its
``.idx``), an ``.lst`` image list plus a folder, or an in-memory list, as MXNet 1.9.1's."""
from __future__ import annotations

import logging
import os
import random

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError, numeric_types
from ..io import DataBatch, DataIter
from .augment import CreateAugmenter
from .image import imdecode

__all__ = ["ImageIter"]

_LAST_BATCH = ("pad", "discard", "roll_over")


def _label(label):
    """A record's label: a number, or its float32 array copied out of the read-only record."""
    return np.array(label) if isinstance(label, np.ndarray) else label


class ImageIter(DataIter):
    """Image data iterator with a list of augmenters.

    Reads images from a RecordIO file (``path_imgrec``; random access and shuffling need its
    ``path_imgidx``), from an image list (``path_imglist``, MXNet's ``.lst``:
    ``index\\tlabel(s)\\tpath`` lines, paths relative to ``path_root``), or from ``imglist``
    (a list of ``[label(s)..., path]``). Each image is decoded to RGB, passed through
    ``aug_list`` (default: ``CreateAugmenter(data_shape, **kwargs)``) and transposed to CHW.

    Parameters
    ----------
    batch_size : int
    data_shape : tuple
        (3, height, width) of the output images.
    label_width : int
        Labels per image (batch labels are (batch,) when 1, else (batch, label_width)).
    shuffle : bool
        Reshuffle the order at every ``reset`` (Python's ``random``, as MXNet).
    part_index, num_parts : int
        Read only part ``part_index`` of ``num_parts`` equal parts (the remainder is dropped).
    last_batch_handle : str
        'pad' (fill the last batch from the start, ``pad`` = number of filled), 'discard', or
        'roll_over' (the rest starts the next epoch's first batch).
    data_name, label_name : str
    dtype : str
        Label dtype for image lists ('int32', 'float32', 'int64', 'float64').
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name='data',
                 label_name='softmax_label', dtype='float32', last_batch_handle='pad',
                 **kwargs):
        super().__init__()
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise MXNetError("ImageIter needs path_imgrec, path_imglist or an imglist list")
        if dtype not in ('int32', 'float32', 'int64', 'float64'):
            raise MXNetError(dtype + ' label not supported')
        if last_batch_handle not in _LAST_BATCH:
            raise MXNetError(f"ImageIter: last_batch_handle must be one of {_LAST_BATCH}, got "
                             f"{last_batch_handle!r}")
        self.imgrec, self.imgidx = self._open_rec(path_imgrec, path_imgidx)
        self.imglist, imgkeys = self._load_list(path_imglist, imglist, dtype)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [(label_name, label_shape)]
        self.batch_size = batch_size
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise MXNetError("ImageIter: shuffle and num_parts > 1 need path_imgidx (the "
                                 ".idx of the .rec) for random access")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise MXNetError(f"ImageIter: part_index {part_index} is not in "
                                 f"[0, {num_parts})")
            size = len(self.seq) // num_parts
            self.seq = self.seq[part_index * size:(part_index + 1) * size]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    @staticmethod
    def _open_rec(path_imgrec, path_imgidx):
        if not path_imgrec:
            return None, None
        logging.info('ImageIter: loading recordio %s...', path_imgrec)
        if path_imgidx:
            rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
            return rec, list(rec.keys)
        return recordio.MXRecordIO(path_imgrec, 'r'), None

    @staticmethod
    def _load_list(path_imglist, imglist, dtype):
        """({key: (label NDArray, path)}, keys in order) from a .lst file or a list."""
        if path_imglist:
            logging.info('ImageIter: loading image list %s...', path_imglist)
            result, keys = {}, []
            with open(path_imglist) as fin:
                for lineno, line in enumerate(fin, 1):
                    fields = line.strip().split('\t')
                    if fields == ['']:
                        continue
                    try:
                        if len(fields) < 2:
                            raise ValueError("needs at least an index and a path")
                        key = int(fields[0])
                        label = np.array([float(x) for x in fields[1:-1]])
                    except ValueError as e:
                        raise MXNetError(f'ImageIter: invalid line {lineno} of image list '
                                         f'"{path_imglist}" ({line.strip()!r}): {e}') from None
                    result[key] = (nd.array(label, dtype=dtype), fields[-1])
                    keys.append(key)
            return result, keys
        if isinstance(imglist, list):
            result, keys = {}, []
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numeric_types):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                result[key] = (label, img[-1])
                keys.append(key)
            return result, keys
        return None, None

    # -- epoch state ----------------------------------------------------------------------------

    def reset(self):
        """Starts a new epoch (reshuffling; 'roll_over' keeps its cached partial batch)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Starts over, dropping a cached 'roll_over' batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    # -- samples and batches -------------------------------------------------------------------

    def next_sample(self):
        """(label, encoded image bytes) of the next image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != 'discard':
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(s)
            return _label(header.label), img
        if self.cur >= self.num_image:
            if self.last_batch_handle != 'discard':
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (_label(header.label) if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        """Fills the batch from row ``start``; returns the number of rows filled."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping:  %s', str(e))
                    continue
                data = self.augmentation_transform(data)
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next :class:`DataBatch` (``pad`` = rows filled from the next epoch)."""
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            c, h, w = self.data_shape
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = nd.empty(self.provide_label[0][1])
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    # -- hooks a subclass may override -------------------------------------------------------

    def check_data_shape(self, data_shape):
        """data_shape must be (3, height, width)."""
        if not len(data_shape) == 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if not data_shape[0] == 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def check_valid_image(self, data):
        """Raises RuntimeError for an empty image (which is then skipped)."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    def imdecode(self, s):
        """Decodes one image; errors name the image (its file or record key)."""
        try:
            return imdecode(s)
        except Exception as e:
            raise RuntimeError(f"{self._locate()}, {e}") from e

    def _locate(self):
        if self.seq is None or not self.num_image:
            return f'Broken image in "{self.imgrec.uri}"'
        idx = self.seq[(self.cur % self.num_image) - 1]
        if self.imglist is not None and idx in self.imglist:
            return "Broken image filename: {}".format(self.imglist[idx][1])
        return "Broken image index: {}".format(idx)

    def read_image(self, fname):
        """The bytes of image ``fname`` (relative to ``path_root``)."""
        path = fname if self.path_root is None else os.path.join(self.path_root, fname)
        with open(path, 'rb') as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Applies the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """HWC -> CHW."""
        return nd.transpose(datum, axes=(2, 0, 1))
