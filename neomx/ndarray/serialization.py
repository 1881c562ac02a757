"""MXNet's binary NDArray-list format (``mx.nd.save``/``mx.nd.load``, ``.params`` files).

The writer produces the bytes MXNet 1.9.1 writes; the reader accepts every layout MXNet 1.9.1
reads and trusts nothing: each length, count and shape is checked against the bytes that remain
before anything is allocated, so a truncated, corrupt or hostile file raises
``MXNetError("Invalid NDArray file format: ...")`` at once. No pickle is involved.

Layout (little-endian)::

    file    u64 0x112, u64 0 (reserved), u64 N, N records, u64 M (0 or N), M x (u64 len, utf-8)
    record  u32 0xF993FAC9, i32 stype, [sparse: storage shape], shape, i32 dev_type,
            i32 dev_id, i32 dtype, [sparse: per aux (i32 dtype, shape)], raw C-order data,
            [sparse: raw aux data]
    shape   i32 ndim, ndim x i64

Older records MXNet 1.9.1 still reads: 0xF993FAC8 (V1: no stype), and pre-V1 ones whose first
u32 is the ndim followed by u32 dims. 0xF993FACA (V3) is what MXNet writes under numpy shape
semantics; neomx reads it too.
"""
from __future__ import annotations

import math
import os
import struct
import warnings

import numpy as np
import torch

from .. import engine
from ..base import MXNetError, dtype_from_code, dtype_torch, string_types
from ..context import Context, cpu, gpu, num_gpus
from ..util import atomic_write_bytes
from ..ops.sparse import Sparse
from .ndarray import NDArray, from_torch
from .sparse import _wrap as _sparse_wrap

__all__ = ["save", "load", "load_frombuffer", "to_bytes"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_LEGACY_MAX_NDIM = 32     # a pre-V1 record starts with its ndim instead of a magic
_MIN_RECORD_BYTES = 16    # no record layout is shorter (pre-V1, ndim 1, zero-size)
_STYPES = {0: "default", 1: "row_sparse", 2: "csr"}
_NUM_AUX = {1: 1, 2: 2}   # row_sparse: row indices; csr: indptr, indices

# MXNet type flag -> torch dtype. Codes 0-7 as in base; 12 is bfloat16 in MXNet 1.9.1's mshadow.
_CODE_TO_TORCH = {c: dtype_torch(dtype_from_code(c)) for c in range(8)}
_CODE_TO_TORCH[12] = torch.bfloat16
_TORCH_TO_CODE = {t: c for c, t in _CODE_TO_TORCH.items()}
# How the raw bytes of each torch dtype are read and written with numpy (always little-endian).
_RAW_NP = {torch.float32: "<f4", torch.float64: "<f8", torch.float16: "<f2", torch.uint8: "u1",
           torch.int32: "<i4", torch.int8: "i1", torch.int64: "<i8", torch.bool: "u1",
           torch.bfloat16: "<i2"}


def _invalid(detail: str) -> MXNetError:
    return MXNetError(f"Invalid NDArray file format: {detail}")


# --- reading ----------------------------------------------------------------------------------
class _Reader:
    """A cursor over the file's bytes; every read is bounds-checked first."""

    def __init__(self, buf):
        self.buf = memoryview(buf).cast("B")
        self.pos = 0
        self.where = "header"

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def need(self, nbytes: int, what: str) -> None:
        if nbytes > self.remaining:
            raise _invalid(f"{self.where}: {what} needs {nbytes} bytes at byte offset "
                           f"{self.pos}, but only {self.remaining} remain (truncated or corrupt)")

    def unpack(self, fmt: str, what: str):
        size = struct.calcsize(fmt)
        self.need(size, what)
        value = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += size
        return value

    def u32(self, what): return self.unpack("<I", what)
    def i32(self, what): return self.unpack("<i", what)
    def u64(self, what): return self.unpack("<Q", what)

    def shape(self, what: str, dim_fmt: str = "<i8", ndim: int | None = None) -> tuple:
        if ndim is None:
            ndim = self.i32(f"{what} ndim")
        if ndim < 0:
            raise _invalid(f"{self.where}: {what} has ndim {ndim} (unknown shape)")
        itemsize = np.dtype(dim_fmt).itemsize
        self.need(ndim * itemsize, f"{what} of ndim {ndim}")
        dims = np.frombuffer(self.buf, dtype=dim_fmt, count=ndim, offset=self.pos)
        self.pos += ndim * itemsize
        shape = tuple(int(d) for d in dims)
        if any(d < 0 for d in shape):
            raise _invalid(f"{self.where}: {what} {shape} has a negative dim")
        if math.prod(d for d in shape if d) >= 1 << 63:  # torch would overflow even at size 0
            raise _invalid(f"{self.where}: {what} {shape} overflows int64")
        return shape

    def dtype(self, what: str) -> torch.dtype:
        code = self.i32(what)
        if code not in _CODE_TO_TORCH:
            raise _invalid(f"{self.where}: unknown {what} code {code}")
        return _CODE_TO_TORCH[code]

    def tensor(self, shape: tuple, dtype: torch.dtype, what: str = "data") -> torch.Tensor:
        raw = np.dtype(_RAW_NP[dtype])
        count = math.prod(shape)
        self.need(count * raw.itemsize, f"{what} of shape {shape} ({dtype})")
        arr = np.frombuffer(self.buf, dtype=raw, count=count, offset=self.pos).astype(
            raw.newbyteorder("="))  # a native-order, writable copy
        self.pos += count * raw.itemsize
        t = torch.from_numpy(arr)
        if dtype is torch.bool:
            t = t != 0  # any nonzero byte is true; torch must never see other bool bytes
        elif dtype is torch.bfloat16:
            t = t.view(torch.bfloat16)
        return t.reshape(shape)

    def text(self, what: str) -> str:
        nbytes = self.u64(f"{what} length")
        self.need(nbytes, what)
        raw = bytes(self.buf[self.pos:self.pos + nbytes])
        self.pos += nbytes
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _invalid(f"{self.where}: {what} is not utf-8 ({e.reason})") from None


def _target_context(dev_type: int, dev_id: int) -> Context:
    """Where a loaded array goes: MXNet loads into cpu(0) and moves arrays recorded on a GPU
    back there when that GPU exists; everything else (cpu(1), pinned, ...) lands on cpu(0)."""
    if dev_type == 2 and 0 <= dev_id < num_gpus():
        return gpu(dev_id)
    return cpu(0)


def _read_sparse(r: _Reader, stype: int, sshape: tuple, shape: tuple, dtype: torch.dtype,
                 aux: list) -> Sparse:
    """Read a row_sparse or csr record's values and indices; the index structure is checked
    (ranges and sizes, as MXNet's loader relies on) before an array is made of it."""
    values = r.tensor(sshape, dtype, "sparse values")
    idx = [r.tensor(s, t, f"aux data {k}").to(torch.int64) for k, (t, s) in enumerate(aux)]
    if stype == 1:  # row_sparse: values[k] is row idx[k]
        rows = idx[0].reshape(-1)
        if (len(shape) < 1 or len(sshape) != len(shape) or sshape[1:] != shape[1:]
                or rows.numel() != sshape[0]):
            raise _invalid(f"{r.where}: row_sparse storage shape {sshape} does not fit {shape}")
        if rows.numel() and (int(rows.min()) < 0 or int(rows.max()) >= shape[0]):
            raise _invalid(f"{r.where}: row_sparse row index out of range for shape {shape}")
        return Sparse("row_sparse", values, (rows,), shape)
    indptr, cols = idx[0].reshape(-1), idx[1].reshape(-1)  # csr
    nnz = values.numel()
    if (len(shape) != 2 or indptr.numel() != shape[0] + 1 or cols.numel() != nnz
            or len(sshape) != 1):
        raise _invalid(f"{r.where}: csr aux shapes do not fit shape {shape}")
    if (nnz and (int(cols.min()) < 0 or int(cols.max()) >= shape[1])) or int(indptr[0]) != 0 \
            or int(indptr[-1]) != nnz or bool((indptr[1:] < indptr[:-1]).any()):
        raise _invalid(f"{r.where}: csr indices out of range for shape {shape}")
    return Sparse("csr", values, (indptr, cols), shape)


def _read_record(r: _Reader) -> NDArray:
    magic = r.u32("record magic")
    stype, sshape = 0, None
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.i32("storage type")
        if stype not in _STYPES:
            raise _invalid(f"{r.where}: unknown storage type {stype}")
        if stype:
            sshape = r.shape("storage shape")
        shape = r.shape("shape")
    elif magic == V1_MAGIC:
        shape = r.shape("shape")
    elif magic <= _LEGACY_MAX_NDIM:  # pre-V1: the magic is the ndim, dims are u32
        shape = r.shape("legacy shape", "<u4", ndim=magic)
    else:
        raise _invalid(f"{r.where}: unknown record magic 0x{magic:08X}")
    # MXNet 1.9.1's loader treats a V2 shape of ndim 0 as an empty (none) array and stops
    # there, although its writer follows a 0-d array with context, dtype and one element; we
    # read what the writer wrote, so 0-d arrays saved by MXNet or neomx load as 0-d arrays.
    dev_type, dev_id = r.i32("device type"), r.i32("device id")
    dtype = r.dtype("dtype")
    if stype:
        aux = [(r.dtype(f"aux {k} dtype"), r.shape(f"aux {k} shape"))
               for k in range(_NUM_AUX[stype])]
        if math.prod(sshape) == 0:
            # MXNet writes a stale (0, ...) storage shape and, like its loader, we derive the
            # real one from the index shapes: (rows, *shape[1:]) or the csr indices' shape.
            sshape = (aux[0][1][:1] + shape[1:]) if stype == 1 else aux[1][1]
        sp = _read_sparse(r, stype, sshape, shape, dtype, aux)
        ctx = _target_context(dev_type, dev_id)
        dev = ctx.torch_device
        return _sparse_wrap(Sparse(sp.stype, sp.data.to(dev), tuple(a.to(dev) for a in sp.aux),
                                   sp.shape), ctx)
    t = r.tensor(shape, dtype)
    ctx = _target_context(dev_type, dev_id)
    if ctx.device_typeid == 2:
        t = t.to(ctx.torch_device)
    return from_torch(t, ctx)


def _parse(buf) -> list | dict:
    r = _Reader(buf)
    header = r.u64("list magic")
    if header != LIST_MAGIC:
        raise _invalid(f"header magic is 0x{header:X}, expected 0x{LIST_MAGIC:X}")
    r.u64("reserved field")  # MXNet ignores it
    count = r.u64("array count")
    if count * _MIN_RECORD_BYTES > r.remaining:
        raise _invalid(f"header claims {count} arrays but only {r.remaining} bytes follow")
    arrays = []
    for i in range(count):
        r.where = f"array {i} (byte offset {r.pos})"
        arrays.append(_read_record(r))
    r.where = f"name list (byte offset {r.pos})"
    num_names = r.u64("name count")
    if num_names not in (0, count):
        raise _invalid(f"{num_names} names for {count} arrays")
    names = [r.text(f"name {i}") for i in range(num_names)]
    # Bytes after the names are ignored, as MXNet does.
    if not names:
        return arrays
    return dict(zip(names, arrays))  # a repeated name keeps its last array, as in MXNet


def load_frombuffer(buf) -> list | dict:
    """Load arrays from the bytes of a file written by ``save``.

    Parameters
    ----------
    buf : bytes, bytearray or memoryview
        The file's contents.

    Returns
    -------
    list of NDArray, or dict of str to NDArray
        A list when the file has no names, else a dict (in file order).

    Examples
    --------
    >>> import neomx as mx
    >>> from neomx.ndarray.serialization import to_bytes
    >>> mx.nd.load_frombuffer(to_bytes({'w': mx.nd.ones((2,))}))['w'].asnumpy()
    array([1., 1.], dtype=float32)
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"buf required to be bytes, bytearray or memoryview, "
                        f"not {type(buf).__name__}")
    return _parse(buf)


def load(fname) -> list | dict:
    """Load arrays saved by ``mx.nd.save`` (or MXNet's ``mx.nd.save``).

    Arrays come back on ``cpu(0)``, except those recorded on a GPU, which go back to that GPU
    when it exists. Sparse records come back as CSRNDArray / RowSparseNDArray. A bad file raises ``MXNetError("Invalid NDArray file format: ...")``.

    Parameters
    ----------
    fname : str or os.PathLike
        The file name.

    Returns
    -------
    list of NDArray, or dict of str to NDArray
        A list when the file was saved from a list (or an empty dict), else a dict.
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError("fname required to be a string")
    try:
        with open(fname, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError(f'cannot open "{os.fspath(fname)}": {e.strerror}') from None
    return _parse(buf)


# --- writing ----------------------------------------------------------------------------------
def _as_named_list(data) -> tuple[list, list]:
    """MXNet's argument checks for ``save``: an NDArray, a list of them or a str-keyed dict."""
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        if any(not isinstance(k, string_types) for k in data) or \
                any(not isinstance(v, NDArray) for v in data.values()):
            raise TypeError("save only accept dict str->NDArray or list of NDArray")
        return list(data.values()), list(data.keys())
    if isinstance(data, list):
        if any(not isinstance(v, NDArray) for v in data):
            raise TypeError("save only accept dict str->NDArray or list of NDArray")
        return list(data), []
    raise ValueError("data needs to either be a NDArray, dict of str, NDArray pairs "
                     "or a list of NDarrays.")


def _raw(t: torch.Tensor) -> bytes:
    flat = t.detach().reshape(-1).cpu()
    if t.dtype is torch.bfloat16:
        flat = flat.view(torch.int16)
    return flat.numpy().astype(_RAW_NP[t.dtype], copy=False).tobytes()  # little-endian


def _shape_bytes(shape) -> bytes:
    return struct.pack(f"<I{len(shape)}q", len(shape), *shape)


def _record_bytes(arr: NDArray) -> bytes:
    engine.wait_for(arr)
    t = arr._data.detach()
    code = _TORCH_TO_CODE.get(t.dtype)
    if code is None:
        raise MXNetError(f"cannot save an array of dtype {t.dtype}: MXNet 1.9.1's NDArray file "
                         "format has no type code for it")
    ctx = arr._ctx
    stype = arr.stype
    if stype != "default":  # storage shape, shape, context, dtype, aux types and shapes, data, aux
        aux = arr._aux
        head = (struct.pack("<Ii", V2_MAGIC, 1 if stype == "row_sparse" else 2)
                + _shape_bytes(tuple(t.shape)) + _shape_bytes(arr.shape)
                + struct.pack("<iii", ctx.device_typeid, ctx.device_id, code)
                + b"".join(struct.pack("<i", _TORCH_TO_CODE[a.dtype]) + _shape_bytes(tuple(a.shape))
                           for a in aux))
        return head + _raw(t) + b"".join(_raw(a) for a in aux)
    shape = tuple(t.shape)
    head = struct.pack(f"<IiI{len(shape)}qiii", V2_MAGIC, 0, len(shape), *shape,
                       ctx.device_typeid, ctx.device_id, code)
    return head + _raw(t)


def to_bytes(data) -> bytes:
    """The bytes ``save(fname, data)`` writes."""
    arrays, names = _as_named_list(data)
    if any(a.ndim == 0 for a in arrays):
        warnings.warn("saving a 0-d array: MXNet 1.9.1 writes it with ndim 0, which its own "
                      "loader cannot read back (neomx can)", UserWarning, stacklevel=3)
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    parts += [_record_bytes(a) for a in arrays]
    parts.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        parts += [struct.pack("<Q", len(raw)), raw]
    return b"".join(parts)


def save(fname, data) -> None:
    """Save an NDArray, a list of NDArrays or a dict of str to NDArray in MXNet's format.

    The file is written to a temporary name and renamed into place, so an existing file is
    never left half-overwritten. Arrays on any context are saved (GPU ones record dev_type 2).

    Parameters
    ----------
    fname : str or os.PathLike
        The file name.
    data : NDArray, list of NDArray, or dict of str to NDArray
        What to save; a dict keeps its names (``load`` then returns a dict).

    Examples
    --------
    >>> import os, tempfile
    >>> import neomx as mx
    >>> fname = os.path.join(tempfile.mkdtemp(), 'x.nd')
    >>> mx.nd.save(fname, [mx.nd.array([7.])])
    >>> os.path.getsize(fname)
    68
    >>> mx.nd.load(fname)[0].asnumpy()
    array([7.], dtype=float32)
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError("fname required to be a string")
    payload = to_bytes(data)
    try:
        atomic_write_bytes(fname, payload)
    except OSError as e:
        raise MXNetError(f'cannot write "{os.fspath(fname)}": {e.strerror}') from None
