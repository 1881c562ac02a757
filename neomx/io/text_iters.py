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
from . import _libsvm_parse as _lp
from .io import DataBatch, DataDesc, DataIter

__all__ = ["CSVIter", "LibSVMIter"]

class _RowBatcher:
    """MXNet's ``BatchLoader`` over ``n`` rows: which rows make each batch, and the pad."""

    def __init__(self, n, batch_size, round_batch, base="base_"):
        self.n, self.batch_size, self.round_batch = n, batch_size, round_batch
        self._base = base
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
                raise MXNetError(f"Check failed: {self._base}->Next(): number of input must "
                                 "be bigger than batch size")
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


class _BatcherIter(DataIter):
    """MXDataIter's interface over the last batch (``self._current``) of an iterator whose rows
    come from a ``_RowBatcher`` (``self._batcher``): CSVIter's and LibSVMIter's."""

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


class _TableIter(_BatcherIter):
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

    def reset(self):
        super().reset()
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


def _read_bytes(path):
    """The bytes of each file of ``path`` (a file or a folder), without empty files."""
    raws = [(f, open(f, "rb").read()) for f in _files(path, "LibSVM")]
    raws = [(f, r) for f, r in raws if r]
    if not raws:  # dmlc skips empty files, then finds none
        raise MXNetError("Check failed: files_.size() != 0U (0 vs. 0) : Cannot find any files "
                         f"that matches the URI pattern {path}")
    return raws


def _load_libsvm(path, width, part_index, num_parts):
    """Parsed rows of part ``part_index`` of ``num_parts`` of the LibSVM file(s) ``path``."""
    raws = _read_bytes(path)
    offsets = np.cumsum([0] + [len(r) for _, r in raws[:-1]])
    rows = _lp.concat_rows([_lp.parse_libsvm(r, width, f) for f, r in raws], offsets)
    if num_parts > 1:
        begin, end = _lp.part_range(b"".join(r for _, r in raws), part_index, num_parts)
        keep = np.flatnonzero((rows.starts >= begin) & (rows.starts < end))
        ptr, idx, val = _lp.take_rows(rows.indptr, rows.indices, rows.values, keep)
        rows = _lp.LibSVMRows(rows.labels[keep], ptr, idx, val, rows.starts[keep],
                              rows.lines[keep])
    return rows


def _csr_batch(rows, take, batch_size, width, ctx):
    """A CSRNDArray (batch_size, width) of the rows ``take`` of ``rows`` (missing rows empty)."""
    from ..ndarray.sparse import _wrap
    from ..ops.sparse import Sparse
    ptr, idx, val = _lp.take_rows(rows.indptr, rows.indices, rows.values, take)
    if len(take) < batch_size:
        ptr = np.concatenate([ptr, np.full(batch_size - len(take), ptr[-1], np.int64)])
    return _wrap(Sparse("csr", torch.from_numpy(val), (torch.from_numpy(ptr),
                                                       torch.from_numpy(idx)),
                        (batch_size, width)), ctx)


class LibSVMIter(_BatcherIter):
    """Batches of rows of LibSVM files as ``csr`` arrays, as MXNet 1.9.1's ``LibSVMIter``.

    Each line is ``label index:value index:value ...`` with zero-based column indices (MXNet
    expects them sorted; they are kept in the file's order). Data batches are
    :class:`~neomx.ndarray.sparse.CSRNDArray` of shape (batch_size, data_shape[0]); labels are
    the lines' first numbers as a dense (batch_size,) array, or -- with ``label_libsvm`` -- the
    rows of that file as a CSRNDArray (batch_size, label_shape[0]) (its first column is
    ignored). Files are parsed with NumPy, vectorised (neomx/io/_libsvm_parse.py).

    Batching is MXNet's sparse batch loader with ``round_batch``: a last batch that runs past
    the end is completed from the start (``pad`` = how many), and after ``reset()`` the next
    epoch continues after those rows; ``index`` holds the rows' positions.

    Parameters
    ----------
    data_libsvm : str
        A LibSVM file, or a folder whose files are read in name order.
    data_shape : tuple
        (number of features,); 1-D.
    label_libsvm : str, optional
        Labels as LibSVM rows of ``label_shape[0]`` features ('NULL': the first number of each
        data line, with ``label_shape`` (1,)).
    label_shape : tuple
    batch_size : int
    round_batch : bool
        Must be True (MXNet's sparse batch loader supports nothing else).
    num_parts, part_index : int
        Read only this part: equal byte ranges of the file(s), each starting after a line end.
    dtype : None or 'float32'
        MXNet 1.9.1 produces float32 only (other dtypes fail there too).
    data_name, label_name : str

    A malformed line (a token that is not ``index:value``, not a number, a negative,
    fractional or out-of-range index) raises MXNetError naming the file and the line.

    Examples
    --------
    >>> import os, tempfile, neomx as mx
    >>> path = os.path.join(tempfile.mkdtemp(), 'data.t')
    >>> _ = open(path, 'w').write('1.0 0:0.5 2:1.2\\n-2.0\\n-3.0 0:0.6 1:2.4 2:1.2\\n4 2:-1.2\\n')
    >>> it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(3,), batch_size=3)
    >>> b = next(it)
    >>> b.data[0].stype, b.data[0].indptr.asnumpy().tolist(), b.label[0].asnumpy().tolist()
    ('csr', [0, 2, 2, 5], [1.0, -2.0, -3.0])
    >>> b = next(it); b.index.tolist(), b.pad
    ([3, 0, 1], 2)
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
        dtype = check_dtype(kwargs.get("dtype"))
        if len(data_shape) != 1:
            raise MXNetError(f"Check failed: param_.data_shape.ndim() == 1 ({len(data_shape)} "
                             "vs. 1) : dimension of data_shape is expected to be 1")
        if label_path != "NULL":
            if len(label_shape) != 1:
                raise MXNetError(f"Check failed: param_.label_shape.ndim() == 1 "
                                 f"({len(label_shape)} vs. 1) : dimension of label_shape is "
                                 "expected to be 1")
            if int(np.prod(label_shape)) <= 1:
                raise MXNetError("Check failed: param_.label_shape.Size() > 1 (1 vs. 1) : "
                                 "label_shape is not expected to be (1,) when "
                                 "param_.label_libsvm is set.")
        elif int(np.prod(label_shape)) != 1:
            raise MXNetError(f"Check failed: param_.label_shape.Size() == 1 "
                             f"({int(np.prod(label_shape))} vs. 1) : label_shape is expected "
                             "to be (1,) when param_.label_libsvm is NULL")
        if dtype not in (None, "float32"):
            raise MXNetError(f"LibSVMIter: dtype {dtype} is not supported: LibSVM data is "
                             "float32 (MXNet 1.9.1 fails on other dtypes too)")
        if not round_batch:
            raise MXNetError("sparse batch loader doesn't support round_batch == false yet")
        if not 0 <= part_index < num_parts:
            raise MXNetError("Check failed: part < nsplit: invalid input parameter for "
                             "InputSplit::Create")
        if batch_size < 1:
            raise MXNetError(f"LibSVMIter: batch_size must be positive, got {batch_size}")
        super().__init__(batch_size)
        self._width = data_shape[0]
        self._rows = _load_libsvm(data_path, self._width, part_index, num_parts)
        n = len(self._rows.labels)
        if n == 0:
            raise MXNetError(f'LibSVMIter: no rows in part {part_index} of {num_parts} of '
                             f'"{data_path}"')
        self._label_rows = None
        if label_path != "NULL":
            self._lwidth = label_shape[0]
            self._label_rows = _load_libsvm(label_path, self._lwidth, part_index, num_parts)
            if len(self._label_rows.labels) < n:
                raise MXNetError("Check failed: label_parser_->Next(): Data LibSVM's row is "
                                 "smaller than the number of rows in label_libsvm "
                                 f'("{data_path}": {n} rows, "{label_path}": '
                                 f"{len(self._label_rows.labels)})")
        if batch_size > n:
            raise MXNetError("Check failed: sparse_base_->Next(): number of input must be bigger "
                             f"than batch size ({n} rows, batch_size {batch_size})")
        self._batcher = _RowBatcher(n, batch_size, True, "sparse_base_")
        data_name = kwargs.get("data_name", "data")
        label_name = kwargs.get("label_name", "softmax_label")
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape, np.float32)]
        lshape = (batch_size,) if label_path == "NULL" else (batch_size,) + label_shape
        self.provide_label = [DataDesc(label_name, lshape, np.float32)]
        self._current = None

    def next(self):
        plan = self._batcher.next()
        if plan is None:
            raise StopIteration
        rows, pad = plan
        take = np.asarray(rows, np.int64)
        bs, ctx = self.batch_size, cpu()
        data = _csr_batch(self._rows, take, bs, self._width, ctx)
        if self._label_rows is None:
            lab = np.zeros(bs, np.float32)
            lab[:len(take)] = self._rows.labels[take]
            label = from_torch(torch.from_numpy(lab), ctx)
        else:
            label = _csr_batch(self._label_rows, take, bs, self._lwidth, ctx)
        index = np.zeros(bs, np.uint64)
        index[:len(take)] = take
        self._current = DataBatch([data], [label], pad=pad, index=index)
        return self._current

