"""``mx.io.CSVIter`` and ``mx.io.LibSVMIter``: MXNet 1.9.1's C++ text-file iterators, in Python.

Both read the whole file(s) into memory and batch them with MXNet's ``BatchLoader`` rule: a last
batch that runs past the end is completed from the start (``round_batch``, ``pad`` = how many)
and the next epoch carries on after those rows; ``index`` holds the rows' positions.
"""
from __future__ import annotations

import os

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import from_torch
from .image_record_iter import check_dtype, parse_param, parse_shape, required
from .io import DataBatch, DataDesc, DataIter

__all__ = ["CSVIter", "LibSVMIter"]

_MAX_DENSE = 1 << 28  # values in one dense LibSVM batch


class _RowBatcher:
    """MXNet's ``BatchLoader`` over ``n`` rows: which rows make each batch, and the pad."""

    def __init__(self, n, batch_size, round_batch):
        self.n, self.batch_size, self.round_batch = n, batch_size, round_batch
        self.pos = 0
        self.num_overflow = 0

    def next(self):
        if self.num_overflow:
            return None
        bs = self.batch_size
        rows = list(range(self.pos, min(self.n, self.pos + bs)))
        self.pos += len(rows)
        if len(rows) == bs:
            return rows, 0
        if not rows:
            return None
        if not self.round_batch:
            return rows, bs - len(rows)
        self.pos = 0
        while len(rows) < bs:
            if self.pos >= self.n:
                raise MXNetError("Check failed: base_->Next(): number of input must be bigger "
                                 "than batch size")
            rows.append(self.pos)
            self.pos += 1
            self.num_overflow += 1
        return rows, self.num_overflow

    def reset(self):
        if not self.round_batch or self.num_overflow == 0:
            self.pos = 0
        else:
            self.num_overflow = 0


def _files(path, what):
    """A file, or the files of a folder (sorted), as dmlc reads a URI."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
    elif os.path.isfile(path):
        files = [path]
    else:
        files = []
    if not files:
        raise MXNetError("Check failed: files_.size() != 0U (0 vs. 0) : Cannot find any files "
                         f"that matches the URI pattern {path}")
    return files


def _read_text(path, what):
    return "".join(open(f).read() for f in _files(path, what))


class _TableIter(DataIter):
    """Batches of rows of in-memory ``data``/``label`` arrays with the BatchLoader rule."""

    def _init_table(self, data, label, batch_size, round_batch, data_name, label_name,
                    label_shape):
        super().__init__(batch_size)
        self._data, self._label = data, label
        self._batcher = _RowBatcher(data.shape[0], batch_size, round_batch)
        lshape = (batch_size,) if label_shape == (1,) else (batch_size,) + label_shape
        self._lshape = lshape
        self.provide_data = [DataDesc(data_name, (batch_size,) + data.shape[1:], data.dtype)]
        self.provide_label = [DataDesc(label_name, lshape, label.dtype)]
        self._current = None
        self.first_batch = None
        self.first_batch = self.next()

    def next(self):
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        plan = self._batcher.next()
        if plan is None:
            raise StopIteration
        rows, pad = plan
        bs = self.batch_size
        data = np.zeros((bs,) + self._data.shape[1:], self._data.dtype)
        label = np.zeros((bs,) + self._label.shape[1:], self._label.dtype)
        data[:len(rows)] = self._data[rows]
        label[:len(rows)] = self._label[rows]
        index = np.zeros(bs, np.uint64)
        index[:len(rows)] = rows
        ctx = cpu()
        self._current = DataBatch(
            [from_torch(torch.from_numpy(data), ctx)],
            [from_torch(torch.from_numpy(label.reshape(self._lshape)), ctx)], pad=pad,
            index=index)
        return self._current

    def iter_next(self):
        try:
            self._current = self.next()
        except StopIteration:
            return False
        return True

    def getdata(self):
        return self._current.data[0]

    def getlabel(self):
        return self._current.label[0]

    def getindex(self):
        return self._current.index

    def getpad(self):
        return self._current.pad

    def reset(self):
        self._batcher.reset()
        self.first_batch = None


def _out_dtype(dtype, name):
    dtype = check_dtype(dtype)
    if dtype in (None, "float32"):
        return np.float32
    if dtype in ("int32", "int64"):
        return np.dtype(dtype).type
    raise MXNetError(f"{name}: dtype {dtype} is not supported (float32, int32, int64)")


class CSVIter(_TableIter):
    """Batches of rows of CSV files, as MXNet 1.9.1's C++ ``CSVIter`` (keyword arguments).

    Parameters
    ----------
    data_csv : str
        A CSV file, or a folder whose files are read in name order.
    data_shape : tuple
        Shape of one row's example (the row must have ``prod(data_shape)`` values).
    label_csv : str, optional
        The labels' CSV ('NULL', the default: all labels are 0).
    label_shape : tuple
        Shape of one label (default (1,): the label batch is (batch_size,)).
    batch_size : int
    round_batch : bool
        Complete the last batch from the start (``pad``) and start the next epoch after those
        rows; otherwise the last batch's tail rows are zeros (MXNet leaves stale rows there).
    dtype : {None, 'float32', 'int32', 'int64'}
        Parses every value as this type (data and label).
    data_name, label_name : str

    Examples
    --------
    >>> import os, tempfile, neomx as mx
    >>> path = os.path.join(tempfile.mkdtemp(), 'd.csv')
    >>> _ = open(path, 'w').write('1,2,3\\n2,3,4\\n3,4,5\\n4,5,6\\n')
    >>> it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=3)
    >>> [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it]
    [([1.0, 2.0, 3.0], 0), ([4.0, 1.0, 2.0], 2)]
    >>> it.reset(); [b.data[0].asnumpy()[:, 0].tolist() for b in it]
    [[3.0, 4.0, 1.0]]
    """

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError("CSVIter can only accept keyword arguments")
        data_csv = required(kwargs, "data_csv", "string")
        data_shape = parse_shape("data_shape", required(kwargs, "data_shape", "Shape(tuple)"))
        batch_size = int(parse_param("batch_size", required(kwargs, "batch_size",
                                                            "int (non-negative)"), 0))
        label_csv = str(kwargs.get("label_csv", "NULL"))
        label_shape = parse_shape("label_shape", kwargs.get("label_shape", (1,)))
        round_batch = parse_param("round_batch", kwargs.get("round_batch", True), True)
        dtype = _out_dtype(kwargs.get("dtype"), "CSVIter")
        data = self._load(data_csv, data_shape, dtype)
        if label_csv != "NULL":
            label = self._load(label_csv, label_shape, dtype)
        else:
            label = np.zeros((data.shape[0],) + label_shape, dtype)
        if label.shape[0] != data.shape[0]:
            raise MXNetError(f"CSVIter: {data.shape[0]} data rows but {label.shape[0]} label "
                             "rows")
        if batch_size < 1:
            raise MXNetError(f"CSVIter: batch_size must be positive, got {batch_size}")
        self._init_table(data, label, batch_size, round_batch, kwargs.get("data_name", "data"),
                         kwargs.get("label_name", "softmax_label"), label_shape)

    @staticmethod
    def _load(path, shape, dtype):
        size = int(np.prod(shape))
        rows = []
        for lineno, line in enumerate(_read_text(path, "CSV").splitlines(), 1):
            if not line.strip():
                continue
            fields = line.split(",")
            if len(fields) != size:
                raise MXNetError(f"Check failed: row.length == shape.Size() ({len(fields)} vs. "
                                 f"{size}) : The data size in CSV do not match size of shape: "
                                 f"specified shape=[{','.join(map(str, shape))}], the csv "
                                 f"row-length={len(fields)}")
            try:
                rows.append([float(v) if dtype is np.float32 else int(float(v))
                             for v in fields])
            except ValueError:
                raise MXNetError(f'CSVIter: "{path}" line {lineno}: not a number in '
                                 f"{line!r}") from None
        arr = np.asarray(rows, dtype).reshape((len(rows),) + shape)
        return arr


def _line_part(text: str, part_index: int, num_parts: int) -> str:
    """dmlc's LineSplitter part: equal byte ranges, each starting after a line end."""
    raw = text.encode()
    size = len(raw)
    step = -(-size // num_parts)

    def start(pos):
        if pos <= 0:
            return 0
        if pos >= size:
            return size
        nl = min([i for i in (raw.find(b"\n", pos), raw.find(b"\r", pos)) if i != -1],
                 default=size)
        while nl < size and raw[nl:nl + 1] in (b"\n", b"\r"):
            nl += 1
        return nl

    begin = start(min(step * part_index, size))
    end = start(min(step * (part_index + 1), size))
    return raw[begin:max(begin, end)].decode()


class LibSVMIter(_TableIter):
    """Batches of rows of a LibSVM file (zero-based, sorted column indices), as MXNet 1.9.1's
    ``LibSVMIter`` -- but **dense**: neomx has no sparse ``CSRNDArray`` yet, so the data (and
    a ``label_libsvm`` label) come as dense float32 NDArrays of the same values, shape
    (batch_size,) + data_shape. A batch too large to hold densely raises ``MXNetError``.

    Parameters
    ----------
    data_libsvm : str
        ``label idx:value idx:value ...`` lines.
    data_shape : tuple
        (number of features,).
    label_libsvm : str, optional
        Labels as LibSVM rows of ``label_shape`` features ('NULL': the first value of each
        data line).
    label_shape : tuple
    batch_size : int
    round_batch : bool
        Must be True (MXNet's sparse batch loader supports nothing else).
    num_parts, part_index : int
        Read only this part (equal byte ranges of the file, cut at line ends).
    data_name, label_name : str
    """

    def __init__(self, *args, **kwargs):
        if args:
            raise TypeError("LibSVMIter can only accept keyword arguments")
        data_path = required(kwargs, "data_libsvm", "string")
        data_shape = parse_shape("data_shape", required(kwargs, "data_shape", "Shape(tuple)"))
        batch_size = int(parse_param("batch_size", required(kwargs, "batch_size",
                                                            "int (non-negative)"), 0))
        label_path = str(kwargs.get("label_libsvm", "NULL"))
        label_shape = parse_shape("label_shape", kwargs.get("label_shape", (1,)))
        round_batch = parse_param("round_batch", kwargs.get("round_batch", True), True)
        num_parts = int(kwargs.get("num_parts", 1))
        part_index = int(kwargs.get("part_index", 0))
        _out_dtype(kwargs.get("dtype"), "LibSVMIter")
        if not round_batch:
            raise MXNetError("sparse batch loader doesn't support round_batch == false yet")
        if not 0 <= part_index < num_parts:
            raise MXNetError("Check failed: part < nsplit: invalid input parameter for "
                             "InputSplit::Create")
        if batch_size * int(np.prod(data_shape)) > _MAX_DENSE:
            raise MXNetError(f"LibSVMIter: a dense batch of {batch_size} x {data_shape} values "
                             "is too large; neomx has no sparse CSRNDArray yet (use a smaller "
                             "batch_size)")
        text = _line_part(_read_text(data_path, "LibSVM"), part_index, num_parts)
        first, data = self._parse(text, data_shape, data_path)
        if label_path != "NULL":
            ltext = _line_part(_read_text(label_path, "LibSVM"), part_index, num_parts)
            label = self._parse(ltext, label_shape, label_path)[1]
        else:
            label = first.reshape((-1,) + (label_shape if label_shape != (1,) else ()))
        if batch_size < 1:
            raise MXNetError(f"LibSVMIter: batch_size must be positive, got {batch_size}")
        if data.shape[0] == 0:
            raise MXNetError(f'LibSVMIter: no rows in part {part_index} of "{data_path}"')
        if label.ndim == 1:
            label = label.reshape(-1, 1) if label_shape != (1,) else label
        self._init_table(data, label, batch_size, True, kwargs.get("data_name", "data"),
                         kwargs.get("label_name", "softmax_label"), label_shape)

    @staticmethod
    def _parse(text, shape, path):
        width = int(np.prod(shape))
        firsts, rows = [], []
        for lineno, line in enumerate(text.splitlines(), 1):
            fields = line.split()
            if not fields:
                continue
            row = np.zeros(width, np.float32)
            try:
                firsts.append(float(fields[0]))
                for item in fields[1:]:
                    k, v = item.split(":")
                    k = int(k)
                    if not 0 <= k < width:
                        raise ValueError(f"feature index {k} outside data_shape {shape}")
                    row[k] = float(v)
            except ValueError as e:
                raise MXNetError(f'LibSVMIter: "{path}" line {lineno}: {e}') from None
            rows.append(row)
        data = np.stack(rows).reshape((-1,) + shape) if rows else np.zeros((0,) + shape,
                                                                            np.float32)
        return np.asarray(firsts, np.float32), data
