"""``mx.nd.sparse``: compressed sparse row (``csr``) and row-sparse (``row_sparse``) NDArrays.

A sparse array is an :class:`NDArray` subclass whose ``_data`` is its *stored values* (MXNet's
``data``) and whose ``_aux`` holds the int64 index tensors in MXNet's order (csr: indptr,
indices; row_sparse: row indices); ``shape`` is the full shape. Operators reach sparse inputs
through ``invoke_sparse`` (called by the imperative dispatch only when an input or ``out`` is
sparse): an operator with a storage-type rule (``neomx/ops/sparse.py``) runs its sparse kernel,
any other one computes on dense copies after MXNet's storage fallback warning.

Examples
--------
>>> import neomx as mx
>>> a = mx.nd.sparse.csr_matrix(([1., 2., 3.], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
>>> a.stype, a.indptr.asnumpy().tolist()
('csr', [0, 2, 2, 3])
>>> mx.nd.dot(a, mx.nd.ones((3, 2))).asnumpy()
array([[3., 3.],
       [0., 0.],
       [3., 3.]], dtype=float32)
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import torch

from .. import engine
from ..base import (MXNetError, NotSupportedForSparseNDArray, dtype_np, dtype_torch,
                    integer_types, numeric_types, mx_real_t)
from ..context import Context, current_context
from ..ops import registry as _reg
from ..ops import sparse as _sp
from ..ops.sparse import Sparse
from . import register as _register
from .ndarray import NDArray, check_same_device, from_torch
from .tape import FLAGS as _AG
from .tape import RECORDING as _REC

py_slice = slice
py_sum = sum

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "add", "subtract", "multiply",
           "divide", "cast_storage"]

_AUX_TYPES = {"csr": (np.int64, np.int64), "row_sparse": (np.int64,)}


# --- the array classes ------------------------------------------------------------------------
class BaseSparseNDArray(NDArray):
    """The base class of sparse NDArrays (``CSRNDArray``, ``RowSparseNDArray``)."""

    __slots__ = ("_aux", "_sshape")

    # attributes
    @property
    def shape(self) -> tuple:
        return self._sshape

    @property
    def ndim(self) -> int:
        return len(self._sshape)

    @property
    def size(self):
        raise NotImplementedError()  # (ambiguous for a sparse array, as in MXNet)

    def __len__(self):
        return self._sshape[0]

    def __repr__(self):
        shape_info = "x".join(str(x) for x in self.shape)
        return f"\n<{type(self).__name__} {shape_info} @{self._ctx}>"

    __str__ = __repr__

    def _sparse(self) -> Sparse:
        return Sparse(self.stype, self._data, self._aux, self._sshape)

    def _set(self, s: Sparse):
        """Take ``s``'s parts (in place: ``x[:] = y``, ``copyto``, ``out=``)."""
        self._data, self._aux = s.data, tuple(s.aux)

    def _aux_data(self, i) -> NDArray:
        engine.wait_for(self)
        return from_torch(self._aux[i].clone(), self._ctx)

    @property
    def data(self) -> NDArray:
        """A copy of the stored values."""
        engine.wait_for(self)
        return from_torch(self._data.clone(), self._ctx)

    @property
    def _num_aux(self):
        return len(self._aux)

    @property
    def _aux_types(self):
        return [dtype_np(a.dtype) for a in self._aux]

    # conversions
    def asnumpy(self) -> np.ndarray:
        engine.wait_for(self)
        t = _sp.to_dense(self._sparse())
        return t.float().numpy() if t.dtype is torch.bfloat16 else t.cpu().numpy()

    def tostype(self, stype):
        """A copy with storage type ``stype`` (csr and row_sparse do not convert)."""
        other = "row_sparse" if self.stype == "csr" else "csr"
        if stype == other:
            raise ValueError(f"cast_storage from {self.stype} to {other} is not supported")
        return cast_storage(self, stype=stype)

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        dt = dtype_torch(dtype)
        engine.wait_for(self)
        return _wrap(Sparse(self.stype, self._data.to(dt, copy=True),
                            tuple(a.clone() for a in self._aux), self._sshape), self._ctx)

    def copy(self):
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an array of the same storage type or dense) or onto a Context."""
        if isinstance(other, Context):
            engine.wait_for(self)
            dev = other.torch_device
            return _wrap(Sparse(self.stype, self._data.to(dev, copy=True),
                                tuple(a.to(dev, copy=True) for a in self._aux), self._sshape), other)
        if not isinstance(other, NDArray):
            raise TypeError("copyto does not support type " + str(type(other)))
        if other is self:
            warnings.warn("You are attempting to copy an array to itself", RuntimeWarning)
            return False
        if other.stype not in ("default", self.stype):
            raise TypeError("copyto does not support destination NDArray stype " + other.stype)
        return assign(other, self)

    def check_format(self, full_check=True):
        """Raise MXNetError when the index structure is invalid (MXNet's checks)."""
        engine.wait_for(self)
        _sp.check_format(self._sparse(), full_check)

    def detach(self):
        return _wrap(self._sparse(), self._ctx)

    def reshape(self, *shape, **kwargs):
        raise NotSupportedForSparseNDArray(
            f"Function reshape with arguments ({tuple}) is not supported for SparseNDArray and "
            "only available in NDArray.")

    def _slice(self, start, stop):
        raise NotSupportedForSparseNDArray(
            "Function _slice is not supported for SparseNDArray and only available in NDArray.")

    @property
    def T(self):
        return _register.invoke_by_name("transpose", [self], {})

    def __reduce__(self):
        engine.wait_for(self)
        return (_rebuild_sparse, (self.stype, self._data.cpu().numpy(),
                                  [a.cpu().numpy() for a in self._aux], self._sshape,
                                  str(self._ctx.device_type), self._ctx.device_id))

    def to_torch(self):
        raise NotSupportedForSparseNDArray(
            "to_torch is not supported for SparseNDArray; use .data and the index arrays")

    # arithmetic (MXNet: sparse add/subtract/multiply/divide; in-place ops copy back)
    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __mul__(self, other):
        return multiply(self, other)

    def __truediv__(self, other):
        return divide(self, other)

    __div__ = __truediv__

    def __iadd__(self, other):
        (self + other).copyto(self)
        return self

    def __isub__(self, other):
        (self - other).copyto(self)
        return self

    def __imul__(self, other):
        (self * other).copyto(self)
        return self

    def __itruediv__(self, other):
        (self / other).copyto(self)
        return self

    __idiv__ = __itruediv__

    def _setitem_all(self, key, value):
        if not (isinstance(key, py_slice) and key == py_slice(None)):
            raise TypeError(f"{type(self).__name__} only supports [:] for assignment")
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
        elif isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
            if self.stype == "csr":
                raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
            full = torch.full(self._sshape, float(value), dtype=self._data.dtype,
                              device=self._data.device)
            self._set(_sp.rsp_from_dense(full) if value == 0 else
                      Sparse("row_sparse", full, (torch.arange(self._sshape[0],
                             device=full.device),), self._sshape))
        elif isinstance(value, (np.ndarray, np.generic)):
            warnings.warn(f"Assigning non-NDArray object to {type(self).__name__} is not "
                          "efficient", RuntimeWarning)
            from . import array as _array
            _array(value).copyto(self)
        else:
            raise TypeError(f"type {type(value)} not supported")


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format: row ``i`` holds the values
    ``data[indptr[i]:indptr[i+1]]`` at the columns ``indices[indptr[i]:indptr[i+1]]``."""

    __slots__ = ()

    @property
    def stype(self) -> str:
        return "csr"

    @property
    def indices(self) -> NDArray:
        """A copy of the column indices."""
        return self._aux_data(1)

    @property
    def indptr(self) -> NDArray:
        """A copy of the row pointers."""
        return self._aux_data(0)

    def __getitem__(self, key):
        if isinstance(key, integer_types):
            begin = self.shape[0] - 1 if key == -1 else int(key)
            return _register.invoke_by_name("slice", [self], {"begin": (begin,), "end": (begin + 1,)})
        if isinstance(key, py_slice):
            if key.step is not None:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is not None or key.stop is not None:
                begin = key.start if key.start else 0
                end = key.stop if key.stop else self.shape[0]
                return _register.invoke_by_name("slice", [self], {"begin": (begin,), "end": (end,)})
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError(f"Undefined behaviour for {key}")

    def __setitem__(self, key, value):
        if not isinstance(key, py_slice):
            raise Exception("CSRNDArray only supports [:] for assignment")
        if key != py_slice(None):
            raise ValueError("Assignment with slice for CSRNDArray is not implemented yet.")
        self._setitem_all(key, value)

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` copy (needs SciPy)."""
        try:
            import scipy.sparse as spsp
        except ImportError:
            raise ImportError("scipy could not be imported. "
                              "Please make sure that the scipy is installed.") from None
        return spsp.csr_matrix((self.data.asnumpy(), self.indices.asnumpy(),
                                self.indptr.asnumpy()), shape=self.shape, dtype=self.dtype)


class RowSparseNDArray(BaseSparseNDArray):
    """An array of which only the rows ``indices`` are stored (``data[i]`` is row
    ``indices[i]``; every other row is zero)."""

    __slots__ = ()

    @property
    def stype(self) -> str:
        return "row_sparse"

    @property
    def indices(self) -> NDArray:
        """A copy of the stored rows' indices."""
        return self._aux_data(0)

    def __getitem__(self, key):
        if isinstance(key, integer_types):
            raise Exception("__getitem__ with int key is not implemented for RowSparseNDArray yet")
        if isinstance(key, py_slice):
            if key != py_slice(None):
                raise Exception("RowSparseNDArray only supports [:] for __getitem__")
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError(f"Undefined behaviour for {key}")

    def __setitem__(self, key, value):
        if isinstance(key, py_slice) and key != py_slice(None):
            raise ValueError("Assignment with slice for RowSparseNDArray is not implmented yet.")
        self._setitem_all(key, value)

    def retain(self, *args, **kwargs):
        """Fluent :func:`retain` (this array as data)."""
        return retain(self, *args, **kwargs)


_CLASSES = {"csr": CSRNDArray, "row_sparse": RowSparseNDArray}


def _wrap(s: Sparse, ctx: Context) -> BaseSparseNDArray:
    a = object.__new__(_CLASSES[s.stype])
    a._data, a._aux, a._sshape, a._ctx = s.data, tuple(s.aux), tuple(int(d) for d in s.shape), ctx
    return a


def _rebuild_sparse(stype, data, aux, shape, devtype, devid):
    return _wrap(Sparse(stype, torch.from_numpy(data), tuple(torch.from_numpy(a) for a in aux),
                        tuple(shape)), Context(devtype, devid))


def _value(a: NDArray):
    return a._sparse() if isinstance(a, BaseSparseNDArray) else a._data


def _result(v, ctx):
    return _wrap(v, ctx) if isinstance(v, Sparse) else from_torch(v, ctx)


# --- copying into arrays of any storage type ------------------------------------------------------
_COPY_FALLBACK = ("\nStorage fallback detected:\nCopy from {src} storage type on {dev} to default "
                  "storage type on {dev}.\nA temporary ndarray with default storage type will be "
                  "generated in order to perform the copy. This does not affect the correctness of "
                  "the programme. You can set environment variable "
                  "MXNET_STORAGE_FALLBACK_LOG_VERBOSE to 0 to suppress this warning.")


def assign(dst: NDArray, src: NDArray):
    """``src``'s values into ``dst`` (same shape), converting storage and dtype; returns dst."""
    if dst.shape != src.shape:
        raise MXNetError(f"copyto: Incompatible attr: expected {src.shape}, got {dst.shape}")
    engine.wait_for(src)
    dev = dst._data.device
    if isinstance(dst, BaseSparseNDArray):
        s = _sp.dense_to(src._data, dst.stype) if not isinstance(src, BaseSparseNDArray) else \
            (src._sparse() if src.stype == dst.stype else _sp.dense_to(_sp.to_dense(src._sparse()),
                                                                        dst.stype))
        engine.wait_for(dst)  # (no pending reader may see the parts change under it)
        dst._set(Sparse(dst.stype, s.data.to(dev, dst._data.dtype, copy=True),
                        tuple(a.to(dev, copy=True) for a in s.aux), s.shape))
        return dst
    if isinstance(src, BaseSparseNDArray):
        _warn(_COPY_FALLBACK.format(src=src.stype, dev=_dev_name(src._ctx)))
        dst[:] = from_torch(_sp.to_dense(src._sparse()), src._ctx)
        return dst
    dst[:] = src
    return dst


# --- the dispatch ----------------------------------------------------------------------------------
_FALLBACK = ("\nStorage type fallback detected:\noperator = {op}\ninput storage types = [{ins}]\n"
             "output storage types = [{outs}]\nparams = {{{params}}}\ncontext.dev_mask = {dev}\n"
             "The operator with default storage type will be dispatched for execution. You're "
             "seeing this warning message because the operator above is unable to process the "
             "given ndarrays with specified storage types, context and parameter. Temporary dense "
             "ndarrays are generated in order to execute the operator. This does not affect the "
             "correctness of the programme. You can set environment variable "
             "MXNET_STORAGE_FALLBACK_LOG_VERBOSE to 0 to suppress this warning.")


class StorageFallbackWarning(UserWarning):
    """MXNet's storage fallback message: an operator computed sparse inputs in dense form."""


def _warn(msg):
    if os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1") != "0":
        warnings.warn(msg, StorageFallbackWarning, stacklevel=4)


def _dev_name(ctx):
    return "gpu" if ctx.device_typeid == 2 else "cpu"


def _given(op, p):
    """The parameters that differ from the defaults, as MXNet prints them."""
    parts = []
    for prm in op.params:
        v = p.get(prm.name)
        if not prm.required and v == prm.default:
            continue
        parts.append(f'"{prm.name}" : {_reg._mx_str(v)}, ')
    return "".join(reversed(parts))


def has_sparse(inputs, out) -> bool:
    for a in inputs:
        if isinstance(a, BaseSparseNDArray):
            return True
    if out is None:
        return False
    return any(isinstance(o, BaseSparseNDArray) for o in (out if isinstance(out, (list, tuple))
                                                           else [out]))


def invoke_sparse(op, p, inputs, out=None, ctx=None, is_train=False):
    """Run ``op`` on inputs of which one is sparse (or into a sparse ``out``)."""
    if inputs:
        ctx = check_same_device(inputs, op.name)
    _register._check(op, p, inputs)
    stypes = [a.stype for a in inputs]
    out_stypes = None
    # (kernels marked off_tape -- the update and graph operators, which have no gradient --
    # run while recording too)
    recording = _REC.n and _AG.recording and not getattr(op.sparse_forward, "off_tape", False)
    if op.infer_storage_type is not None and (
            op.num_outputs(p) == 1 or getattr(op.sparse_forward, "multi_output", False)):
        out_stypes = op.infer_storage_type(p, stypes, [a.shape for a in inputs])
    if recording and out is None and out_stypes and not isinstance(out_stypes, _sp.Fallback):
        res = _sgrad.record_csr_dot(op, p, inputs, ctx, is_train)
        if res is not None:  # (dot(csr, weight): recorded without a dense copy of the csr)
            return res
    if recording or out_stypes is None or isinstance(out_stypes, _sp.Fallback):
        # MXNet's fallback: the dense form on dense copies of the sparse inputs. While
        # recording, supported calls also run densely (no warning) so that the tape records
        # them: the copies carry the sparse inputs' autograd entries, and the node remembers
        # its sparse inputs for the row_sparse gradient rules (sparse_grad.py).
        fallback = out_stypes is None or isinstance(out_stypes, _sp.Fallback)
        want = out_stypes if fallback and out_stypes else \
            ["default"] * op.num_visible_outputs(p)
        if fallback and any(s != "default" for s in stypes):
            _warn(_FALLBACK.format(op=op.name, ins="".join(f"{s}, " for s in stypes),
                                   outs="".join(f"{s}, " for s in want),
                                   params=_given(op, p), dev=_dev_name(ctx)))
        dense = [to_dense_array(a) for a in inputs]
        if recording:
            for d, a in zip(dense, inputs):
                if d is not a:
                    d._ag = a._ag
        res = _register.invoke(op, p, dense, out=None, ctx=ctx, is_train=is_train)
        if op.mutates_aux:  # (mutated sparse states: their dense copies go back, as MXNet's)
            n_in = len(op.list_inputs(p))
            for a, d in zip(inputs[n_in:], dense[n_in:]):
                if d is not a:
                    assign(a, d)
        if recording:
            _sgrad.remember(res, inputs)
        elif out_stypes:
            res = _result(_sp.dense_to(res._data, out_stypes[0]), ctx)
    else:
        for a in inputs:
            engine.wait_for(a)
        if op.mutates_aux:
            _fill_sparse_states(inputs[len(op.list_inputs(p)):])
        oc = _register._op_context(is_train, ctx.torch_device)
        if out is not None and inputs and out is inputs[0] and out.__class__ is NDArray \
                and getattr(op.sparse_forward, "inplace_weight", False):
            # (an update writing its dense weight, out=weight: the kernel updates the weight's
            # rows in place and returns None -- no copy of a large weight per step)
            oc = _reg.OpContext(is_train=oc.is_train, device=oc.device)
            oc.inplace_weight = True
        try:
            if getattr(oc, "inplace_weight", False):  # (after the weight's pending readers)
                vals = [_value(a) for a in inputs]
                v = engine.push(lambda: op.sparse_forward(p, vals, out_stypes, oc),
                                reads=inputs[1:], writes=(inputs[0],))
            else:
                v = op.sparse_forward(p, [_value(a) for a in inputs], out_stypes, oc)
        except MXNetError:
            raise
        except (RuntimeError, ValueError, IndexError) as e:
            raise MXNetError(f"Error in operator {op.name}: {str(e).splitlines()[0]}") from None
        if v is None and getattr(oc, "inplace_weight", False):
            return out
        if isinstance(v, list):  # (several outputs)
            res = [_result(x, ctx) for x in v]
            res = res[0] if len(res) == 1 else res
        else:
            res = _result(v, ctx)
    if out is None:
        return res
    targets = out if isinstance(out, (list, tuple)) else [out]
    for src, dst in zip(res if isinstance(res, list) else [res], targets):
        assign(dst, src)
    return out


def _fill_sparse_states(states) -> None:
    """Row_sparse states that an update operator mutates get every row stored (zeros where
    none was), as MXNet fills them before its sparse update kernels run: the kernel then
    updates their stored rows in place."""
    for a in states:
        if isinstance(a, RowSparseNDArray) and a._aux[0].numel() != a.shape[0]:
            full = _sp.to_dense(a._sparse())
            rows = torch.arange(a.shape[0], dtype=torch.int64, device=full.device)
            a._set(Sparse("row_sparse", full, (rows,), a.shape))


def to_dense_array(a: NDArray) -> NDArray:
    if not isinstance(a, BaseSparseNDArray):
        return a
    engine.wait_for(a)
    return from_torch(_sp.to_dense(a._sparse()), a._ctx)


_register.SPARSE_HOOK[:] = [has_sparse, invoke_sparse]
from . import sparse_grad as _sgrad  # noqa: E402  (row_sparse gradients; needs the classes)


# --- construction ------------------------------------------------------------------------------------
def _prepare_default_dtype(src, dtype):
    if dtype is None:
        if isinstance(src, (NDArray, np.ndarray)):
            return src.dtype
        if _is_scipy_csr(src):
            return src.dtype
        return mx_real_t
    return dtype


def _is_scipy_csr(x):
    mod = type(x).__module__
    return mod.startswith("scipy.sparse") and getattr(x, "format", None) == "csr"


def _check_shape(s1, s2):
    if s1 and s2 and tuple(s1) != tuple(s2):
        raise ValueError("Shape mismatch detected. " + str(s1) + " v.s. " + str(s2))


def _tensor(src, dtype, ctx) -> torch.Tensor:
    dev = ctx.torch_device
    if isinstance(src, NDArray):
        if isinstance(src, BaseSparseNDArray):
            raise TypeError("values must be array like object")
        engine.wait_for(src)
        return src._data.to(dev, dtype_torch(dtype), copy=True)
    try:
        arr = np.array(src, dtype=dtype_np(dtype))
    except (TypeError, ValueError):
        raise TypeError("values must be array like object") from None
    return torch.from_numpy(arr).to(dev)


def _dense_src(arg, dtype, ctx):
    from . import array as _array
    dtype = _prepare_default_dtype(arg, dtype)
    dns = _array(arg, dtype=dtype)
    if ctx is not None and dns.context != ctx:
        dns = dns.as_in_context(ctx)
    return dns


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from (data, indices, indptr), (data, (row, col)) (needs SciPy), a shape
    (M, N), a dense array, a CSRNDArray or a SciPy CSR matrix (as MXNet's ``csr_matrix``)."""
    if isinstance(arg1, tuple):
        if len(arg1) == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                import scipy.sparse as spsp
                data, (row, col) = arg1
                data, row, col = [x.asnumpy() if isinstance(x, NDArray) else x
                                  for x in (data, row, col)]
                coo = spsp.coo_matrix((data, (row, col)), shape=shape)
                _check_shape(coo.shape, shape)
                return array(coo.tocsr(), ctx=ctx, dtype=dtype)
            _check_shape(arg1, shape)
            return empty("csr", arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 3:
            return _csr_from_definition(*arg1, shape=shape, ctx=ctx, dtype=dtype)
        raise ValueError("Unexpected length of input tuple: " + str(len(arg1)))
    if isinstance(arg1, CSRNDArray) or _is_scipy_csr(arg1):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray")
    dns = _dense_src(arg1, dtype, ctx)
    _check_shape(dns.shape, shape)
    return dns.tostype("csr")


def _csr_from_definition(data, indices, indptr, shape=None, ctx=None, dtype=None):
    ctx = current_context() if ctx is None else ctx
    dtype = _prepare_default_dtype(data, dtype)
    data = _tensor(data, dtype, ctx)
    indptr = _tensor(indptr, np.int64, ctx)
    indices = _tensor(indices, np.int64, ctx)
    if shape is None:
        if indices.dim() != 1 or indices.shape[0] == 0:
            raise ValueError("invalid shape")
        shape = (indptr.shape[0] - 1, int(indices.max()) + 1)
    if data.dim() != 1 or indptr.dim() != 1 or indices.dim() != 1 or indptr.shape[0] == 0 \
            or len(shape) != 2:
        raise ValueError("invalid shape")
    return _wrap(Sparse("csr", data, (indptr, indices), tuple(shape)), ctx)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from (data, indices), a shape, a dense array or a RowSparseNDArray
    (as MXNet's ``row_sparse_array``)."""
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError("Unexpected length of input tuple: " + str(len(arg1)))
        if len(arg1) > 2 or (isinstance(arg1[0], integer_types)
                             and isinstance(arg1[1], integer_types)):
            _check_shape(arg1, shape)
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        return _rsp_from_definition(arg1[0], arg1[1], shape=shape, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray")
    dns = _dense_src(arg1, dtype, ctx)
    _check_shape(dns.shape, shape)
    return dns.tostype("row_sparse")


def _rsp_from_definition(data, indices, shape=None, ctx=None, dtype=None):
    ctx = current_context() if ctx is None else ctx
    dtype = _prepare_default_dtype(data, dtype)
    data = _tensor(data, dtype, ctx)
    indices = _tensor(indices, np.int64, ctx)
    if shape is None:
        if indices.dim() != 1 or indices.shape[0] == 0:
            raise ValueError("invalid shape")
        shape = (int(indices[-1]) + 1,) + tuple(data.shape[1:])
    shape = tuple(shape)
    if data.dim() != len(shape) or indices.dim() != 1 or int(np.prod(shape[1:])) == 0:
        raise ValueError("invalid shape")
    return _wrap(Sparse("row_sparse", data, (indices,), shape), ctx)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` ('default', 'csr' or 'row_sparse')."""
    if stype == "default":
        from . import zeros as _zeros
        return _zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    if stype not in ("row_sparse", "csr"):
        raise ValueError("unknown storage type" + stype)
    ctx = current_context() if ctx is None else ctx
    shape = (int(shape),) if isinstance(shape, integer_types) else tuple(int(s) for s in shape)
    if stype == "csr" and len(shape) != 2:
        raise MXNetError(f"csr storage needs a 2-D shape, got {shape}")
    res = _wrap(_sp.empty_sparse(stype, shape, dtype_torch(dtype or mx_real_t), ctx.torch_device),
                ctx)
    out = kwargs.pop("out", None)
    if out is not None:
        return assign(out, res)
    return res


def empty(stype, shape, ctx=None, dtype=None):
    """An empty sparse array (all zeros, nothing stored)."""
    if stype in ("csr", "row_sparse"):
        return zeros(stype, shape, ctx=ctx, dtype=dtype or mx_real_t)
    raise Exception("unknown stype : " + str(stype))


def array(source_array, ctx=None, dtype=None):
    """A sparse copy of a CSRNDArray, RowSparseNDArray or SciPy CSR matrix."""
    ctx = current_context() if ctx is None else ctx
    if isinstance(source_array, NDArray):
        if source_array.stype == "default":
            raise AssertionError("Please use `tostype` to create RowSparseNDArray or CSRNDArray "
                                 "from an NDArray")
        dtype = _prepare_default_dtype(source_array, dtype)
        arr = empty(source_array.stype, source_array.shape, dtype=dtype, ctx=ctx)
        arr[:] = source_array
        return arr
    if _is_scipy_csr(source_array):
        csr = source_array.sorted_indices()
        csr.sum_duplicates()
        dtype = _prepare_default_dtype(source_array, dtype)
        return csr_matrix((csr.data, csr.indices, csr.indptr), shape=csr.shape, dtype=dtype,
                          ctx=ctx)
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError("Please use mx.nd.array to create an NDArray with source_array of type ",
                         type(source_array))
    raise ValueError("Unexpected source_array type: ", type(source_array))


# --- functions --------------------------------------------------------------------------------------
def cast_storage(data, stype, out=None, name=None, **kwargs):
    """A copy of ``data`` with storage type ``stype`` ('default', 'csr', 'row_sparse')."""
    op = _reg.get("cast_storage")
    p, _ = op.parse_params({"stype": stype})
    if not isinstance(data, NDArray):
        raise MXNetError(f"cast_storage: input 0 must be an NDArray, got {type(data).__name__}")
    if p.stype == "default":  # (recorded by autograd when it records)
        res = _register.invoke(op, p, [to_dense_array(data)], ctx=data._ctx,
                               is_train=_AG.training if _REC.n else False)
    else:
        engine.wait_for(data)
        res = _result(op.sparse_forward(p, [_value(data)], [p.stype], None), data._ctx)
    if out is not None:
        return assign(out, res)
    return res


def _ufunc_helper(lhs, rhs, fn_array, fn_scalar, lfn_scalar, rfn_scalar=None):
    if isinstance(lhs, numeric_types) and not isinstance(lhs, NDArray):
        if isinstance(rhs, numeric_types) and not isinstance(rhs, NDArray):
            return fn_scalar(lhs, rhs)
        return (rfn_scalar or lfn_scalar)(rhs, scalar=float(lhs))
    if isinstance(rhs, numeric_types) and not isinstance(rhs, NDArray):
        return lfn_scalar(lhs, scalar=float(rhs))
    if isinstance(rhs, NDArray):
        return fn_array(lhs, rhs)
    raise TypeError(f"type {type(rhs)} not supported")


def _fn(name):
    return _register.function_for(_reg.get(name))


def _elem_or_broadcast(elem, bcast):
    def fn(lhs, rhs):
        return _fn(elem if lhs.shape == rhs.shape else bcast)(lhs, rhs)
    return fn


def add(lhs, rhs):
    """``lhs + rhs`` (elemwise_add for equal shapes, keeping sparse storage; else broadcast)."""
    return _ufunc_helper(lhs, rhs, _elem_or_broadcast("elemwise_add", "broadcast_add"),
                         lambda a, b: a + b, _fn("_plus_scalar"))


def subtract(lhs, rhs):
    """``lhs - rhs`` (elemwise_sub for equal shapes, keeping sparse storage; else broadcast)."""
    return _ufunc_helper(lhs, rhs, _elem_or_broadcast("elemwise_sub", "broadcast_sub"),
                         lambda a, b: a - b, _fn("_minus_scalar"), _fn("_rminus_scalar"))


def multiply(lhs, rhs):
    """``lhs * rhs`` (elemwise_mul for equal shapes, keeping sparse storage; else broadcast)."""
    return _ufunc_helper(lhs, rhs, _elem_or_broadcast("elemwise_mul", "broadcast_mul"),
                         lambda a, b: a * b, _fn("_mul_scalar"))


def divide(lhs, rhs):
    """``lhs / rhs`` (elemwise_div for equal shapes; else broadcast)."""
    return _ufunc_helper(lhs, rhs, _elem_or_broadcast("elemwise_div", "broadcast_div"),
                         lambda a, b: a / b, _fn("_div_scalar"), _fn("_rdiv_scalar"))


def retain(data=None, indices=None, out=None, name=None, **kwargs):
    """The rows of a RowSparseNDArray listed in ``indices`` (MXNet's ``sparse.retain``)."""
    return _fn("_sparse_retain")(data, indices, out=out)


gs_retain = retain


def adagrad_update(weight=None, grad=None, history=None, out=None, name=None, **kwargs):
    """AdaGrad with a row_sparse gradient, lazily on its rows (MXNet's
    ``_sparse_adagrad_update``): ``history += g²; weight -= lr * g / sqrt(history + epsilon)``
    with ``g = clip(rescale_grad * grad, clip_gradient)``; ``wd`` must be 0."""
    return _fn("_sparse_adagrad_update")(weight, grad, history, out=out, **kwargs)

# The operators of MXNet's mx.nd.sparse (its gen_sparse namespace): the mx.nd functions, whose
# dispatch runs the sparse kernels.
_OPERATORS = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "abs", "adagrad_update", "adam_update",
    "add_n", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add",
    "broadcast_div", "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub",
    "cbrt", "ceil", "clip", "concat", "cos", "cosh", "degrees", "dot", "elemwise_add",
    "elemwise_div", "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor",
    "ftrl_update", "gamma", "gammaln", "log", "log10", "log1p", "log2", "make_loss", "mean",
    "negative", "norm", "radians", "relu", "rint", "round", "rsqrt", "sgd_mom_update",
    "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice", "sqrt", "square", "stop_gradient",
    "sum", "tan", "tanh", "trunc", "where", "zeros_like")
_OPERATORS = tuple(n for n in _OPERATORS if _reg.find(n) is not None)
for _name in _OPERATORS:
    globals()[_name] = _fn(_name)
__all__ += list(_OPERATORS) + ["retain", "gs_retain", "adagrad_update"]

# cast_storage's mx.nd function is the one above (its result's storage type is a parameter,
# which the generated dispatch, keyed on dense inputs, cannot honour).
_register._FUNCTIONS[id(_reg.get("cast_storage"))] = cast_storage
