"""Executors with sparse arrays: reading csr / row_sparse NDArrays into plan slots (as
:class:`~neomx.ops.sparse.Sparse` values) and writing slot values back into outputs and
gradient arrays of any storage type, with MXNet's rules for sparse gradients."""
from __future__ import annotations

import os
import warnings

import torch

from ..base import MXNetError, dtype_torch
from ..ndarray.ndarray import NDArray, from_torch
from ..ndarray.sparse import _FALLBACK, BaseSparseNDArray, StorageFallbackWarning, _given, _wrap
from ..ndarray.tape import store_dense_grad
from ..ops import sparse as _sp
from ..ops.sparse import Sparse


def empty_array(stype, shape, dtype, ctx) -> NDArray:
    """A zero array of storage type ``stype`` (no stored values for csr / row_sparse)."""
    if stype == "default":
        return from_torch(torch.zeros(tuple(shape), dtype=dtype_torch(dtype),
                                      device=ctx.torch_device), ctx)
    return _wrap(_sp.empty_sparse(stype, shape, dtype_torch(dtype), ctx.torch_device), ctx)


def value(a: NDArray):
    """The slot value of a bound array: a Sparse for csr / row_sparse, else its tensor."""
    return a._sparse() if isinstance(a, BaseSparseNDArray) else a._data


def dense(a: NDArray) -> torch.Tensor:
    return _sp.to_dense(value(a))


def head_grad(g: NDArray, stype: str, device):
    """A head gradient as the slot of storage type ``stype`` holds it (an output's)."""
    v = value(g)
    if isinstance(v, Sparse) and v.stype == stype:
        return _copy(v, device, v.data.dtype) if v.data.device != device else v
    t = _sp.to_dense(v)
    t = t if t.device == device else t.to(device)
    return t if stype == "default" else _sp.dense_to(t, stype)


def array(v, ctx) -> NDArray:
    """An NDArray viewing a slot value (monitor callbacks)."""
    return _wrap(v, ctx) if isinstance(v, Sparse) else from_torch(v, ctx)


def _copy(s: Sparse, device, dtype) -> Sparse:
    return Sparse(s.stype, s.data.to(device, dtype, copy=True),
                  tuple(a.to(device, copy=True) for a in s.aux), s.shape)


def store(dst: NDArray, v) -> None:
    """Write the slot value ``v`` into ``dst`` (an output array), converting storage."""
    if isinstance(dst, BaseSparseNDArray):
        s = v if isinstance(v, Sparse) and v.stype == dst.stype else \
            _sp.dense_to(_sp.to_dense(v), dst.stype)
        dst._set(_copy(s, dst._data.device, dst._data.dtype))
        return
    t = _sp.to_dense(v)
    dst._data.copy_(t if t.device == dst._data.device else t.to(dst._data.device))


# MXNet's checks when a sparse gradient is asked to be added (grad_req='add'): the kernels
# that make row_sparse gradients write only.
_ADD_ERRORS = {
    "_backward_Embedding": "Check failed: req == kWriteTo (3 vs. 1) : SparseEmbedding layer "
                           "doesn't support weight gradient calculation with req != write",
    "dot": "Check failed: req == kWriteTo (3 vs. 1) : ",
}


def store_grad(buf: NDArray, v, req: str, producer) -> None:
    """Write (``req='write'``) or add (``'add'``) the gradient value ``v`` into ``buf``.

    A row_sparse buffer takes a row_sparse gradient as it is (its rows) and the nonzero rows
    of a dense one (MXNet's cast_storage); adding into a sparse buffer is refused as in MXNet.
    A dense buffer takes the dense form of any gradient.
    """
    if isinstance(buf, BaseSparseNDArray):
        if req == "add":
            raise MXNetError(_ADD_ERRORS.get(producer, "Check failed: temp.IsDefaultData(): "))
        store(buf, v)
        return
    store_dense_grad(buf._data, _sp.to_dense(v), req)


def assign(dst: NDArray, src) -> None:
    """``src`` (an NDArray of any storage type, or array-like) into ``dst``, converting
    storage and dtype (copy_params_from with sparse parameters)."""
    from ..ndarray import array as _array
    from ..ndarray.sparse import assign as _assign
    if not isinstance(src, NDArray):
        src = _array(src)
    if src.dtype != dst.dtype:
        src = src.astype(dst.dtype)
    _assign(dst, src)


def warn_fallbacks(fallbacks, ctx) -> None:
    """MXNet's storage fallback message, once per forward node of a bound graph that computes
    sparse inputs in dense form (MXNet logs it when the executor is bound)."""
    if not fallbacks or os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1") == "0":
        return
    dev = "gpu" if ctx.device_typeid == 2 else "cpu"
    for node, ins, outs in fallbacks:
        warnings.warn(_FALLBACK.format(op=node.op.name, ins="".join(f"{s}, " for s in ins),
                                       outs="".join(f"{s}, " for s in outs),
                                       params=_given(node.op, node.params), dev=dev),
                      StorageFallbackWarning, stacklevel=5)
