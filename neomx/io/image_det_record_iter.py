"""``mx.io.ImageDetRecordIter``: MXNet 1.9.1's C++ detection RecordIO iterator, in Python.

A detection record's label (``mx.recordio.pack`` with an array label) is
``[A, B, extra header values (A - 2), object 0 (B values), object 1, ...]`` where each object is
``[class, xmin, ymin, xmax, ymax, ...]`` in relative coordinates. The batch label holds per
image ``[channels, height, width, label length, label..., label_pad_value...]``, padded to the
longest label of the data (or ``label_pad_width``).
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError
from ..recordio import _require_cv2
from ._image_aug import inter_method
from .image_record_iter import _IR, ImageRecordIter, _LazyRng, parse_param

__all__ = ["ImageDetRecordIter"]

_DET = dict(label_pad_width=0, label_pad_value=-1.0, rand_mirror_prob=0.0, resize_mode="force",
            rand_crop_prob=0.0, rand_pad_prob=0.0, random_hue_prob=0.0,
            random_saturation_prob=0.0, random_illumination_prob=0.0,
            random_contrast_prob=0.0, fill_value=127)
_UNSUPPORTED = ("rand_crop_prob", "rand_pad_prob", "random_hue_prob", "random_saturation_prob",
                "random_illumination_prob", "random_contrast_prob")


class ImageDetRecordIter(ImageRecordIter):
    """Batches of images and their object boxes from a detection ``.rec``, as MXNet 1.9.1's
    C++ ``ImageDetRecordIter`` (keyword arguments only).

    Each image is resized to ``data_shape`` (``resize_mode='force'``, ``inter_method``),
    mirrored with probability ``rand_mirror_prob`` (the boxes' x coordinates follow), and
    normalised as ``(pixel - mean) / std * scale`` where a ``std_*`` of 0 (the default) means
    no division. The label is (batch_size, 4 + longest label) as described in the module;
    ``index`` holds the records' ids; without ``round_batch`` the last batch reports its
    ``pad`` (its tail rows are zeros and ``label_pad_value``).

    neomx supports the iterator's order, parts, shuffling, resizing, mirroring and
    normalisation; the random crop/pad/colour options (``rand_crop_prob``, ``rand_pad_prob``,
    ``random_*_prob``) and the ``fit``/``shrink`` resize modes raise ``MXNetError``.
    """

    _NAME = "ImageDetRecordIter"
    _V1_PAD = True

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError("ImageDetRecordIter can only accept keyword arguments")
        det = {k: parse_param(k, kwargs.pop(k), v) if k in kwargs else v
               for k, v in _DET.items()}
        for k in _UNSUPPORTED:
            if det[k] > 0:
                raise MXNetError(f"ImageDetRecordIter: {k} is not supported by neomx yet")
        if det["resize_mode"] != "force":
            raise MXNetError(f"ImageDetRecordIter: resize_mode={det['resize_mode']!r} is not "
                             "supported by neomx yet (only 'force')")
        self._det = det
        kwargs.setdefault("label_width", -1)
        for c in "rgba":
            kwargs.setdefault("std_" + c, 0.0)
        kwargs.setdefault("aug_seq", "det_aug_default")
        self._det_width = None
        super().__init__(**kwargs)

    def _label_shape(self, shape):
        return (self.batch_size, self._estimate_width())

    def _estimate_width(self):
        """4 + the longest label of the part (MXNet scans the data once for it)."""
        if self._det_width is None:
            src = self._planner.source
            state = src.state()
            src._pos = 0 if src._order is not None else src._begin  # the whole part
            longest = 0
            while True:
                rec = src.next()
                if rec is None:
                    break
                flag = _IR.unpack_from(rec)[0]
                longest = max(longest, flag if flag > 0 else 1)
            src.restore(state)
            pad_width = int(self._det["label_pad_width"])
            if pad_width > 0:
                if pad_width < longest:
                    raise MXNetError(f"ImageDetRecordIOParser: label_pad_width: {pad_width} "
                                     f"smaller than estimated width: {longest}")
                longest = pad_width
            self._det_width = 4 + longest
        return self._det_width

    def _new_arrays(self):
        data = np.zeros((self.batch_size,) + self.data_shape, self._data_dtype)
        labels = np.full((self.batch_size, self._estimate_width()),
                         self._det["label_pad_value"], np.float32)
        return data, labels

    def _index(self, recs):
        index = np.zeros(self.batch_size, np.uint64)
        for i, rec in enumerate(recs):
            index[i] = _IR.unpack_from(rec)[2]
        return index

    def _work(self, rec, serial, row, data, labels):
        if len(rec) < _IR.size:
            raise MXNetError(f"Invalid image record of {len(rec)} bytes")
        flag, label, image_id, _ = _IR.unpack_from(rec)
        start = _IR.size + 4 * max(flag, 0)
        lab = (np.frombuffer(rec, np.float32, flag, _IR.size).copy() if flag > 0
               else np.array([label], np.float32))
        if lab.size < 7:
            raise MXNetError(f"Check failed: label_width >= 7 ({lab.size} vs. 7) : ")
        rng = _LazyRng((self._aug_seed & 0xFFFFFFFF, serial, row))
        img = self._decode(memoryview(rec)[start:], image_id)
        cv2 = _require_cv2()
        c, h, w = self.data_shape
        interp = inter_method(self._aug.inter_method, img.shape[1], img.shape[0], w, h, rng)
        img = cv2.resize(img, (w, h), interpolation=interp)
        if img.ndim == 2:
            img = img[:, :, None]
        mirror = self._det["rand_mirror_prob"] > 0 and rng.random() < self._det[
            "rand_mirror_prob"]
        if mirror:
            img = img[:, ::-1]
            head, width = int(lab[0]), int(lab[1])
            for o in range(head, lab.size - width + 1, width):
                xmin, xmax = lab[o + 1], lab[o + 3]
                lab[o + 1], lab[o + 3] = 1 - xmax, 1 - xmin
        out = labels[row]
        out[:4] = (c, h, w, lab.size)
        out[4:4 + lab.size] = lab
        self._write_det(img, data[row])

    def _write_det(self, img, dst):
        swap = self._swap
        for k in range(dst.shape[0]):
            ch = img[:, :, swap[k]]
            np.subtract(ch, self._mean[k], out=dst[k], dtype=np.float32)
            if self._std[k] > 0:
                np.divide(dst[k], self._std[k], out=dst[k])
            if self._scale != 1:
                np.multiply(dst[k], self._scale, out=dst[k])
