"""``mx.io.ImageRecordIter``: MXNet 1.9.1's C++ image RecordIO iterator, in Python.

The records are read in dmlc-core's order (:mod:`neomx.io._rec_source`: parts, shuffles),
decoded with OpenCV and augmented by MXNet's default augmenter (:mod:`neomx.io._image_aug`) in
a pool of ``preprocess_threads`` threads (OpenCV and NumPy release the GIL while they work), and
up to ``prefetch_buffer`` batches are prepared ahead of the one being consumed.

Epochs follow MXNet's ``round_batch`` rule (``ImageRecordIOParser2``): a last batch that runs
past the end of the data is completed from the start of the data (``pad`` = how many) and the
next epoch, after ``reset()``, carries on from there, so no record is skipped over epochs.
"""
from __future__ import annotations

import ast
import collections
import math
import struct
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import from_torch
from ..recordio import _require_cv2
from ._image_aug import AugParams, augment
from ._rec_source import RecordSource
from .io import DataBatch, DataDesc, DataIter

__all__ = ["ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter"]

_IR = struct.Struct("<IfQQ")
_DTYPES = (None, "bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")
_PARSER = dict(path_imglist="", path_imgrec="", path_imgidx="", aug_seq="aug_default",
               label_width=1, preprocess_threads=4, verbose=True, num_parts=1, part_index=0,
               device_id=0, shuffle_chunk_size=0, shuffle_chunk_seed=0, seed_aug=None,
               shuffle=False, seed=0, round_batch=True, prefetch_buffer=4, ctx="gpu",
               dtype=None, mirror=False, rand_mirror=False, mean_img="", mean_r=0.0,
               mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0, std_b=1.0, std_a=1.0,
               scale=1.0, max_random_contrast=0.0, max_random_illumination=0.0)


def parse_shape(name, value, ndim=None):
    """A Shape(tuple) parameter from a tuple, list or MXNet's string form ``'(3, 224, 224)'``."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise MXNetError(f"Invalid Parameter format for {name} expect Shape(tuple) but "
                             f"value='{value}'") from None
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    try:
        shape = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise MXNetError(f"Invalid Parameter format for {name} expect Shape(tuple) but "
                         f"value='{value}'") from None
    if ndim is not None and len(shape) != ndim:
        raise MXNetError("value [%s]for Parameter %s has wrong dimensions, expected "
                         "dimension=%d" % (",".join(map(str, shape)), name, ndim))
    return shape


def parse_param(name, value, default):
    """One keyword value as dmlc's parameter parser reads it (``str(value)`` forms allowed)."""
    if value is None or (isinstance(value, str) and value == "None"):
        return None
    if isinstance(default, str) or (default is None and isinstance(value, str)):
        return str(value)
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() in ("1", "true"):
                    return True
                if value.lower() in ("0", "false"):
                    return False
                raise ValueError(value)
            return bool(value)
        if isinstance(default, int) or (default is None and name == "seed_aug"):
            return int(value)
        return float(value)
    except (TypeError, ValueError):
        kind = type(default).__name__ if default is not None else "int"
        raise MXNetError(f"Invalid Parameter format for {name} expect {kind} but "
                         f"value='{value}'") from None


def required(kwargs, name, kind):
    if name not in kwargs:
        raise MXNetError(f"Required parameter {name} of {kind} is not presented")
    return kwargs[name]


def check_dtype(dtype):
    if dtype is not None and not isinstance(dtype, str):
        dtype = np.dtype(dtype).name
    if dtype not in _DTYPES:
        raise MXNetError(f"Invalid Input: '{dtype}', valid values are: {{None, 'bfloat16', "
                         "'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}")
    return dtype


def _load_label_map(path, label_width):
    """``.lst`` labels by image index (MXNet's ``ImageLabelMap``: ``label_width`` values after
    the index)."""
    labels = {}
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise MXNetError(f"LocalFileSystem.GetPathInfo: {path} error: "
                         f"{e.strerror or e}") from None
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            key = int(float(fields[0]))
            values = [float(v) for v in fields[1:1 + label_width]]
            if len(values) != label_width:
                raise ValueError("too few labels")
        except ValueError as e:
            raise MXNetError(f'Invalid image list "{path}" line {lineno} ({line!r}): '
                             f"{e}") from None
        labels[key] = np.asarray(values, np.float32)
    return labels


class _LazyRng:
    """A NumPy Generator seeded by ``key``, made on first use (most images draw nothing)."""

    __slots__ = ("_key", "_rng")

    def __init__(self, key):
        self._key = key
        self._rng = None

    def __getattr__(self, name):
        if self._rng is None:
            self._rng = np.random.default_rng(list(self._key))
        return getattr(self._rng, name)


class _Planner:
    """Which records make each batch: ``ImageRecordIOParser2``'s ``ParseNext``/``BeforeFirst``
    state machine (the round batch and its overflow flag) over a :class:`RecordSource`."""

    def __init__(self, source: RecordSource, batch_size: int, round_batch: bool,
                 v1_pad: bool = False):
        self.source = source
        self.batch_size = batch_size
        self.round_batch = round_batch
        self.v1_pad = v1_pad  # the v1 BatchLoader reports pad without round_batch
        self.overflow = False
        self.serial = 0

    def next_plan(self):
        """(list of record bytes, pad, serial) of the next batch, or None at the epoch's end.

        Without ``round_batch`` the list may be short (its rows are left as they are)."""
        if self.overflow:
            return None
        recs, taken, bs = [], None, self.batch_size
        while len(recs) < bs:
            rec = self.source.next()
            if rec is None:
                if not recs:
                    return None
                if self.overflow:
                    raise MXNetError("Check failed: !overflow: number of input images must be "
                                     "bigger than the batch size")
                self.overflow = True
                taken = len(recs)
                if not self.round_batch:
                    break
                self.source.before_first()
                continue
            recs.append(rec)
        if taken is None:
            pad = 0
        elif self.round_batch or self.v1_pad:
            pad = bs - taken
        else:
            pad = 0  # MXNet 1.9.1's ImageRecordIter reports no pad here
        self.serial += 1
        return recs, pad, self.serial

    def reset(self):
        if not self.round_batch or not self.overflow:
            self.source.before_first()
        self.overflow = False

    def state(self):
        return (self.overflow, self.serial, self.source.state())

    def restore(self, state):
        self.overflow, self.serial, src = state
        self.source.restore(src)


class ImageRecordIter(DataIter):
    """Batches of images from an image RecordIO file (``.rec``), as MXNet 1.9.1's C++
    ``ImageRecordIter``. Keyword arguments only, with MXNet's names and defaults.

    Each record (``mx.recordio.pack_img``/im2rec) is decoded with OpenCV, passed through MXNet's
    default augmenter, and written to the batch as CHW in RGB order, normalised as
    ``(pixel - mean) * scale / std`` (float32). With the random augmentations off the batches
    equal MXNet's bit for bit; decoding and augmentation run in ``preprocess_threads`` threads
    and ``prefetch_buffer`` batches are prepared ahead.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file.
    path_imgidx : str, optional
        Its ``.idx``: parts (``num_parts``) are then counted in records, not bytes.
    path_imglist : str, optional
        An ``.lst`` whose labels replace the records' (looked up by the record's id).
    data_shape : tuple
        (channels, height, width) of the output images; 1 channel decodes gray, 3 color
        (RGB), 4 with alpha (RGBA).
    batch_size : int
    label_width : int
        Labels per image: the label is (batch_size,) for 1, else (batch_size, label_width).
    shuffle, seed : bool, int
        Shuffle the records (a new order at each ``reset``), in MXNet's exact order for a seed.
    round_batch : bool
        Complete the last batch from the start of the data (``pad`` = how many) and start the
        next epoch after those records. Without it the last batch's tail rows are zeros and, as
        in MXNet, its ``pad`` is 0.
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` (distributed training).
    preprocess_threads, prefetch_buffer : int
        Decoding threads; batches prepared ahead.
    resize : int
        Resize the shorter edge to this before cropping (``inter_method``).
    rand_crop, rand_mirror, mirror : bool
        A random instead of the center crop; flip half of the images; flip all.
    random_resized_crop, max/min_random_area, max/min_aspect_ratio, max_rotate_angle, rotate,
    max_shear_ratio, max/min_random_scale, max/min_crop_size, max/min_img_size, pad, fill_value,
    brightness, contrast, saturation, pca_noise, random_h, random_s, random_l,
    max_random_contrast, max_random_illumination :
        MXNet's default augmenter's options (see MXNet's documentation).
    inter_method : int
        0 nearest, 1 bilinear (default), 2 bicubic, 3 area, 4 Lanczos, 9 by the size change,
        10 random.
    mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale : float
        The normalisation.
    seed_aug : int, optional
        Seed of the random augmentations (default: ``seed``). Every image draws from its own
        generator seeded by (seed, batch, position), so runs repeat whatever
        ``preprocess_threads`` is; the draws are not MXNet's (its generators are C++'s).
    dtype : {None, 'float32', 'uint8', 'int8'}
        float32 (default); uint8: the raw pixels (no normalisation); int8: ``pixel - mean``
        rounded down and saturated (as MXNet, without ``std``/``scale``).
    data_name, label_name : str
        Names in ``provide_data``/``provide_label``.

    Options MXNet reads but neomx does not support (``mean_img`` files, ``shuffle_chunk_size``,
    ``aug_seq`` other than the default, a folder as ``path_imgrec``) raise ``MXNetError``;
    ``ctx``, ``device_id`` and ``verbose`` are accepted and ignored, and so are unknown
    keywords, as in MXNet. ``getindex()`` gives zeros, as MXNet's.

    Examples
    --------
    >>> import os, tempfile, numpy as np, neomx as mx
    >>> d = tempfile.mkdtemp(); rec = os.path.join(d, 'a.rec')
    >>> w = mx.recordio.MXRecordIO(rec, 'w')
    >>> for i in range(5):
    ...     img = np.full((40, 50, 3), 10 * i, np.uint8)
    ...     w.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, i, i, 0), img, img_fmt='.png', quality=3))
    >>> w.close()
    >>> it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 32, 32), batch_size=2,
    ...                            mean_r=5, mean_g=5, mean_b=5)
    >>> it.provide_data
    [DataDesc[data,(2, 3, 32, 32),<class 'numpy.float32'>,NCHW]]
    >>> [(b.label[0].asnumpy().tolist(), b.pad) for b in it]
    [([0.0, 1.0], 0), ([2.0, 3.0], 0), ([4.0, 0.0], 1)]
    >>> it.reset(); [b.label[0].asnumpy().tolist() for b in it]
    [[1.0, 2.0], [3.0, 4.0]]
    """

    _FORCED_DTYPE = None
    _NAME = "ImageRecordIter"

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError(f"{self._NAME} can only accept keyword arguments")
        data_name = kwargs.pop("data_name", "data")
        label_name = kwargs.pop("label_name", "softmax_label")
        p = {k: parse_param(k, kwargs[k], v) if k in kwargs else v for k, v in _PARSER.items()}
        p["dtype"] = check_dtype(kwargs.get("dtype", None) if self._FORCED_DTYPE is None
                                 else self._FORCED_DTYPE)
        shape = parse_shape("data_shape", required(kwargs, "data_shape", "Shape(tuple)"), 3)
        batch_size = int(parse_param("batch_size", required(kwargs, "batch_size",
                                                            "int (non-negative)"), 0))
        if batch_size < 1:
            raise MXNetError(f"{self._NAME}: batch_size must be positive, got {batch_size}")
        if p["dtype"] not in (None, "float32", "uint8", "int8"):
            raise MXNetError(f"unknown dtype for ImageRecordIter2.")
        self._check_unsupported(p)
        super().__init__(batch_size)
        self._p = p
        self._aug = AugParams(shape, kwargs)
        self.data_shape = shape
        if shape[0] not in (1, 3, 4):
            raise MXNetError("Invalid output shape [%s]" % ",".join(map(str, shape)))
        _require_cv2()
        self._label_width = p["label_width"]
        self._label_map = (_load_label_map(p["path_imglist"], self._label_width)
                           if p["path_imglist"] else None)
        source = RecordSource(p["path_imgrec"], p["path_imgidx"], p["part_index"],
                              p["num_parts"], p["shuffle"], p["seed"])
        self._planner = _Planner(source, batch_size, p["round_batch"],
                                 v1_pad=self._V1_PAD)
        self._setup_normalize()
        self._aug_seed = p["seed_aug"] if p["seed_aug"] is not None else p["seed"]
        self._threads = max(1, p["preprocess_threads"])
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="neomx-imgrec")
        self._prefetch = max(1, int(p["prefetch_buffer"]))
        self._pending = collections.deque()
        self._consumed = self._planner.state()
        self._data_dtype = {None: np.float32, "float32": np.float32, "uint8": np.uint8,
                            "int8": np.int8}[p["dtype"]]
        label_shape = ((batch_size,) if self._label_width == 1
                       else (batch_size, self._label_width))
        self.provide_data = [DataDesc(data_name, (batch_size,) + shape, self._data_dtype)]
        self.provide_label = [DataDesc(label_name, self._label_shape(label_shape), np.float32)]
        self._current = None
        self.first_batch = None
        self.first_batch = self.next()

    _V1_PAD = False

    def _label_shape(self, shape):
        return shape

    @staticmethod
    def _check_unsupported(p):
        if p["mean_img"]:
            raise MXNetError("ImageRecordIter: mean_img (a mean image file) is not supported by "
                             "neomx; use mean_r/mean_g/mean_b")
        if p["shuffle_chunk_size"]:
            raise MXNetError("ImageRecordIter: shuffle_chunk_size is not supported by neomx; "
                             "use shuffle=True with path_imgidx")
        if p["aug_seq"] not in ("aug_default", "det_aug_default"):
            raise MXNetError(f"ImageRecordIter: aug_seq={p['aug_seq']!r}: neomx has only the "
                             "default augmenter")

    def _setup_normalize(self):
        p = self._p
        c = self.data_shape[0]
        f32 = np.float32
        self._mean = np.array([p["mean_r"], p["mean_g"], p["mean_b"], p["mean_a"]], f32)[:c]
        std = np.array([p["std_r"], p["std_g"], p["std_b"], p["std_a"]], f32)[:c]
        self._std = std
        self._scale = f32(p["scale"])
        # channel k of the output reads channel swap[k] of OpenCV's BGR(A) image
        self._swap = {1: (0,), 3: (2, 1, 0), 4: (2, 1, 0, 3)}[c]
        self._jitter = p["max_random_contrast"] > 0 or p["max_random_illumination"] > 0

    # -- the per-image work (runs in the pool) -------------------------------------------------

    def _decode(self, buf, image_id):
        cv2 = _require_cv2()
        c = self.data_shape[0]
        flag = {1: cv2.IMREAD_GRAYSCALE, 3: cv2.IMREAD_COLOR, 4: cv2.IMREAD_UNCHANGED}[c]
        img = cv2.imdecode(np.frombuffer(buf, np.uint8), flag)
        if img is None:
            raise MXNetError(f"Invalid image with index {image_id}: OpenCV could not decode it")
        if img.ndim == 2:
            img = img[:, :, None]
        if c == 4 and img.shape[2] != 4:
            raise MXNetError(f"Check failed: res.channels() == 4 ({img.shape[2]} vs. 4) : "
                             f"Invalid image with index {image_id}. Expected 4 channels, got "
                             f"{img.shape[2]}")
        return img

    def _record_label(self, flag, label, image_id, payload, out):
        if self._label_map is not None:
            try:
                out[:] = self._label_map[image_id]
            except KeyError:
                raise MXNetError("Check failed: it != idx2label_.end(): fail to find imagelabel "
                                 f"for id {image_id}") from None
        elif flag > 0:
            if flag != self._label_width:
                raise MXNetError(f"Check failed: param_.label_width == rec.num_label "
                                 f"({self._label_width} vs. {flag}) : rec file provide {flag}-"
                                 f"dimensional label but label_width is set to "
                                 f"{self._label_width}")
            out[:] = np.frombuffer(payload, np.float32, flag, _IR.size)
        else:
            if self._label_width != 1:
                raise MXNetError(f"Check failed: param_.label_width == 1 ({self._label_width} "
                                 "vs. 1) : label_width must be 1 unless an imglist is provided "
                                 "or the rec file is packed with multi dimensional label")
            out[:] = label

    def _work(self, rec, serial, row, data, labels):
        """Unpack, decode, augment and normalise record ``rec`` into row ``row``."""
        if len(rec) < _IR.size:
            raise MXNetError(f"Invalid image record of {len(rec)} bytes (shorter than its "
                             "header)")
        flag, label, image_id, _ = _IR.unpack_from(rec)
        start = _IR.size + 4 * flag
        if len(rec) < start:
            raise MXNetError(f"Invalid image record: its header announces {flag} labels")
        self._record_label(flag, label, image_id, rec, labels[row])
        rng = _LazyRng((self._aug_seed & 0xFFFFFFFF, serial, row))
        img = augment(self._aug, self._decode(memoryview(rec)[start:], image_id), rng)
        mirror = self._p["mirror"] or (self._p["rand_mirror"] and rng.random() < 0.5)
        self._write(img, data[row], mirror, rng)

    def _write(self, img, dst, mirror, rng):
        """HWC BGR uint8 -> CHW RGB in the output dtype, normalised (MXNet's arithmetic)."""
        if mirror:
            img = img[:, ::-1]
        swap = self._swap
        if self._data_dtype is np.uint8:
            for k in range(dst.shape[0]):
                dst[k] = img[:, :, swap[k]]
            return
        if self._data_dtype is np.int8:
            for k in range(dst.shape[0]):
                v = np.floor(np.subtract(img[:, :, swap[k]], self._mean[k], dtype=np.float32))
                dst[k] = np.clip(v, -128, 127)
            return
        contrast, illum = np.float32(1.0), np.float32(0.0)
        if self._jitter:
            c, i = self._p["max_random_contrast"], self._p["max_random_illumination"]
            if c > 0:
                contrast = np.float32(rng.random() * c * 2 - c + 1)
            if i > 0:
                illum = np.float32(rng.random() * i * 2 - i)
        mult = (contrast * self._scale) / self._std
        bias = (illum * self._scale) / self._std
        for k in range(dst.shape[0]):
            ch = img[:, :, swap[k]]
            if self._mean[k] != 0:
                np.subtract(ch, self._mean[k], out=dst[k], dtype=np.float32)
            else:
                dst[k] = ch
            if mult[k] != 1:
                np.multiply(dst[k], mult[k], out=dst[k])
            if bias[k] != 0:
                np.add(dst[k], bias[k], out=dst[k])

    # -- batches -----------------------------------------------------------------------------

    def _new_arrays(self):
        data = np.zeros((self.batch_size,) + self.data_shape, self._data_dtype)
        lw = self._label_width
        labels = np.zeros((self.batch_size, lw), np.float32)
        return data, labels

    def _submit(self):
        """Plan the next batch and queue its images on the pool; False at the epoch's end."""
        plan = self._planner.next_plan()
        if plan is None:
            return False
        recs, pad, serial = plan
        data, labels = self._new_arrays()
        futures = [self._pool.submit(self._work, rec, serial, row, data, labels)
                   for row, rec in enumerate(recs)]
        self._pending.append((futures, data, labels, recs, pad, self._planner.state()))
        return True

    def _finish(self, data, labels, recs):
        return data, labels

    def next(self):
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        while len(self._pending) < self._prefetch and self._submit():
            pass
        if not self._pending:
            raise StopIteration
        futures, data, labels, recs, pad, state = self._pending.popleft()
        try:
            for f in futures:
                f.result()
        except BaseException:
            self._drop_pending()
            raise
        self._consumed = state
        data, labels = self._finish(data, labels, recs)
        if labels.ndim == 2 and labels.shape[1] == 1 and len(self.provide_label[0].shape) == 1:
            labels = labels[:, 0]
        ctx = cpu()
        batch = DataBatch([from_torch(torch.from_numpy(data), ctx)],
                          [from_torch(torch.from_numpy(np.ascontiguousarray(labels)), ctx)],
                          pad=pad, index=self._index(recs))
        self._current = batch
        return batch

    def _index(self, recs):
        return np.zeros(self.batch_size, np.uint64)

    def iter_next(self):
        try:
            self._current = self.next()
        except StopIteration:
            return False
        return True

    def getdata(self):
        return self._current.data[0] if self._current is not None else None

    def getlabel(self):
        return self._current.label[0] if self._current is not None else None

    def getindex(self):
        return self._current.index if self._current is not None else None

    def getpad(self):
        return self._current.pad if self._current is not None else 0

    def _drop_pending(self):
        while self._pending:
            for f in self._pending.popleft()[0]:
                f.cancel()

    def reset(self):
        """Start the next epoch (MXNet's ``BeforeFirst``: after a round batch the data carries
        on where the padding stopped; a shuffled iterator draws a new order)."""
        self._drop_pending()
        self._planner.restore(self._consumed)
        self._planner.reset()
        self._consumed = self._planner.state()
        self.first_batch = None
        self._current = None

    def close(self):
        """Stops the decoding threads and closes the file."""
        pool = getattr(self, "_pool", None)
        if pool is not None:
            self._drop_pending()
            pool.shutdown(wait=False)
            self._pool = None
            self._planner.source.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


class ImageRecordIter_v1(ImageRecordIter):  # noqa: N801  (MXNet's name)
    """MXNet's deprecated first ``ImageRecordIter``: the same batches as :class:`ImageRecordIter`
    here, except that a last batch without ``round_batch`` reports its ``pad`` and ``index``
    holds the records' ids."""

    _NAME = "ImageRecordIter_v1"
    _V1_PAD = True

    def _index(self, recs):
        """The records' ids (the v1 iterator fills the index)."""
        index = np.zeros(self.batch_size, np.uint64)
        for i, rec in enumerate(recs):
            index[i] = _IR.unpack_from(rec)[2]
        return index


class ImageRecordUInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` with ``dtype='uint8'`` (the raw pixels; MXNet deprecates it)."""

    _NAME = "ImageRecordUInt8Iter"
    _FORCED_DTYPE = "uint8"


class ImageRecordUInt8Iter_v1(ImageRecordIter_v1):  # noqa: N801  (MXNet's name)
    """:class:`ImageRecordIter_v1` with ``dtype='uint8'`` (the raw pixels; MXNet deprecates it
    for :class:`ImageRecordUInt8Iter`)."""

    _NAME = "ImageRecordUInt8Iter_v1"
    _FORCED_DTYPE = "uint8"


class ImageRecordInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` with ``dtype='int8'`` (``pixel - mean`` saturated; MXNet
    deprecates it)."""

    _NAME = "ImageRecordInt8Iter"
    _FORCED_DTYPE = "int8"
