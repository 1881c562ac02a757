"""Indexing, sorting and statistics: take, pick (choose_element_0index), batch_take,
fill_element_0index, gather_nd, scatter_nd, sort,
argsort, cumsum, norm, moments, shape_array, size_array, ravel_multi_index, unravel_index,
_histogram.

Semantics, index handling (float indices truncate toward zero; ``clip``/``wrap``/``raise``) and
error texts follow MXNet 1.9.1 (``src/operator/tensor/indexing_op.h``, ``ordering_op-inl.h``,
``broadcast_reduce_op.h``, ``ravel.h``, ``histogram-inl.h``, ``nn/moments-inl.h``). Gradients
scatter-add through small internal ``_backward_*`` ops, as MXNet's do.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..base import MXNetError, dtype_np, dtype_torch
from .reduce import _reduced_shape
from .registry import (OpDef, Param, ShapeError, TypeInferError, register, zero_gradient,
                       _sh)

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _dtypes(*names):
    return tuple(dtype_np(n) for n in names)


class DtypeParam(Param):
    """A dtype parameter limited to ``choices``, with MXNet's error text (optional: None
    allowed and listed)."""

    def parse(self, value, where):
        if value is None or (isinstance(value, str) and value == "None"):
            if self.optional:
                return None
        try:
            out = dtype_np(value)
        except (TypeError, ValueError, MXNetError):
            out = None
        if out is None or np.dtype(out) not in {np.dtype(c) for c in self.choices}:
            names = sorted(np.dtype(c).name for c in self.choices)
            valid = ", ".join((["None"] if self.optional else []) + [f"'{n}'" for n in names])
            raise MXNetError(f"Invalid Input: '{value}', valid values are: {{{valid}}}, in "
                             f"operator {where}")
        return out


def _fix_index(idx, n, mode):
    """Integer indices (int64, truncated toward zero) brought into ``[0, n)`` by ``mode``."""
    if mode == "wrap":
        return torch.remainder(idx, n)
    return idx.clamp(0, max(n - 1, 0))


def _index_type(p, ins, outs):
    """Output has the data's type; the index keeps its own (any) type."""
    t = ins[0] if ins[0] is not None else outs[0]
    return [t, ins[1]], [t]


# --- take ----------------------------------------------------------------------------------------
def _take_axis(p, ndim):
    if not -ndim <= p.axis < ndim:
        raise ShapeError("Axis should be in the range of [-r, r-1] where r is the rank of input "
                         "tensor")
    return p.axis % ndim


def _take_infer_shape(p, ins, outs):
    a, idx = ins
    if a is None:  # MXNet checks the axis against an unknown shape's 0 dimensions
        _take_axis(p, 0)
    if idx is None:
        return ins, outs
    ax = _take_axis(p, len(a))
    return ins, [tuple(a[:ax]) + tuple(idx) + tuple(a[ax + 1:])]


def _take_indices(p, ind, n):
    idx = ind.to(torch.int64).reshape(-1)
    if p.mode == "raise":
        if idx.numel() and (bool((idx < 0).any()) or bool((idx >= n).any())):
            raise MXNetError("take operator contains indices out of bound")
        return idx
    return _fix_index(idx, n, p.mode)


def _take_forward(p, ins, oc):
    a, ind = ins
    ax = _take_axis(p, a.dim())
    idx = _take_indices(p, ind, a.shape[ax])
    out = torch.index_select(a, ax, idx)
    return out.reshape(tuple(a.shape[:ax]) + tuple(ind.shape) + tuple(a.shape[ax + 1:]))


def _backward_take(p, ins, oc):
    g, ind = ins
    shape = tuple(p.shape)
    ax = _take_axis(p, len(shape))
    idx = _take_indices(p, ind, shape[ax])
    g = g.reshape(shape[:ax] + (idx.numel(),) + shape[ax + 1:])
    return g.new_zeros(shape).index_add_(ax, idx, g)


_TAKE_PARAMS = (
    Param("axis", "int", 0, "The axis of input array to be taken. For input tensor of rank r, it "
                            "could be in the range of [-r, r-1]"),
    Param("mode", "str", "clip", "Specify how out-of-bound indices bahave. \"clip\" means clip to "
                                 "the range, \"wrap\" means to wrap around, \"raise\" raises an "
                                 "error.", choices=("clip", "raise", "wrap")))

register(OpDef(
    "take", _take_forward, _take_infer_shape, params=_TAKE_PARAMS, inputs=("a", "indices"),
    infer_type=_index_type,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_take(ograds[0], ins[1], shape=tuple(ins[0].shape), **p),
        F.zeros_like(ins[1])],
    doc="Takes elements from an input array along the given axis.\n\n"
        "The output has shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``; float\n"
        "indices truncate toward zero; ``mode`` handles out-of-bound ones."))
register(OpDef(
    "_backward_take", _backward_take, lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=_TAKE_PARAMS + (Param("shape", "shape", doc="shape of take's input a"),),
    inputs=("out_grad", "indices"), public=False,
    infer_type=lambda p, ins, outs: (ins, [ins[0]]),
    doc="Gradient of take: the head gradient added into the taken rows."))


# --- pick ----------------------------------------------------------------------------------------
def _pick_axis(p, ndim):
    if p.axis is None:
        raise ShapeError("axis=None is not supported by pick yet. Must specify an axis.")
    if not -ndim <= p.axis < ndim:
        raise ShapeError(f"axis {p.axis} exceeds the input dimension of {ndim}")
    return p.axis % ndim


def _pick_infer_shape(p, ins, outs):
    x, idx = ins
    if x is None:
        return ins, outs
    ax = _pick_axis(p, len(x))
    out = _reduced_shape(tuple(x), (ax,), p.keepdims)
    want = _reduced_shape(tuple(x), (ax,), False)  # MXNet's index shape, even with keepdims
    if idx is None:
        idx = want
    elif math.prod(idx) != math.prod(want):
        raise ShapeError(f"Shape inconsistent, Provided = {_sh(idx)}, inferred shape={_sh(want)}")
    return [x, idx], [out]


def _pick_gather_index(p, shape, index):
    ax = _pick_axis(p, len(shape))
    idx = _fix_index(index.to(torch.int64), shape[ax], p.mode)
    shape = list(shape)
    shape[ax] = 1
    return ax, idx.reshape(shape)


def _pick_forward(p, ins, oc):
    x, index = ins
    ax, idx = _pick_gather_index(p, tuple(x.shape), index)
    out = torch.gather(x, ax, idx)
    return out if p.keepdims else out.reshape(tuple(index.shape))


def _backward_pick(p, ins, oc):
    g, index = ins
    shape = tuple(p.shape)
    ax, idx = _pick_gather_index(p, shape, index)
    return g.new_zeros(shape).scatter_add_(ax, idx, g.reshape(idx.shape))


_PICK_PARAMS = (
    Param("axis", "int", -1, "int or None. The axis to picking the elements. Negative values "
                             "means indexing from right to left. If is `None`, the elements in "
                             "the index w.r.t the flattened input will be picked.", optional=True),
    Param("keepdims", "bool", False, "If true, the axis where we pick the elements is left in the "
                                     "result as dimension with size one."),
    Param("mode", "str", "clip", "Specify how out-of-bound indices behave.",
          choices=("clip", "wrap")))

register(OpDef(
    "pick", _pick_forward, _pick_infer_shape, params=_PICK_PARAMS, inputs=("data", "index"),
    infer_type=_index_type, aliases=("choose_element_0index",),
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_pick(ograds[0], ins[1], shape=tuple(ins[0].shape), **p),
        F.zeros_like(ins[1])],
    doc="Picks elements from an input array according to the input indices along the given\n"
        "axis: ``out[i, j] = data[i, index[i, j]]`` for axis 1 of a 2-D input."))
register(OpDef(
    "_backward_pick", _backward_pick, lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=_PICK_PARAMS + (Param("shape", "shape", doc="shape of pick's data"),),
    inputs=("out_grad", "index"), public=False,
    infer_type=lambda p, ins, outs: (ins, [ins[0]]),
    doc="Gradient of pick: the head gradient added at the picked positions."))


# --- fill_element_0index (MXNet's legacy row-wise fill; choose_element_0index is pick) ------
def _rows_infer(p, ins, outs):
    lhs = ins[0]
    if lhs is None:
        return ins, outs
    if len(lhs) != 2:
        raise ShapeError(f"lhs must be a 2-D matrix, got {_sh(lhs)}")
    rows = (lhs[0],)
    new = [lhs] + [rows] * (len(ins) - 1)
    for i, s in enumerate(ins[1:], 1):
        if s is not None and tuple(s) != rows:
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(s)}, inferred shape={_sh(rows)}")
    return new, [tuple(lhs)]


def _fill_forward(p, ins, oc):
    lhs, mhs, rhs = ins
    idx = rhs.to(torch.int64).reshape(-1)
    ok = (idx >= 0) & (idx < lhs.shape[1])  # rows with an out-of-range index stay as they are
    out = lhs.clone()
    rows = torch.arange(lhs.shape[0], device=lhs.device)[ok]
    out[rows, idx[ok]] = mhs.reshape(-1)[ok].to(lhs.dtype)
    return out


register(OpDef(
    "fill_element_0index", _fill_forward, _rows_infer, inputs=("lhs", "mhs", "rhs"),
    infer_type=lambda p, ins, outs: ([ins[0], ins[0], ins[2] if ins[2] is not None else _F32],
                                     [ins[0]]),
    doc="Fills one element of each row of ``lhs``: ``out[i, rhs[i]] = mhs[i]`` (rows with an\n"
        "index out of range are left unchanged). Not differentiable, as in MXNet."))


# --- batch_take ----------------------------------------------------------------------------------
def _batch_take_forward(p, ins, oc):
    a, ind = ins
    n = ind.numel()
    rows = a.reshape(n, -1)
    idx = ind.to(torch.int64).reshape(n, 1).clamp(0, rows.shape[1] - 1)
    return torch.gather(rows, 1, idx).reshape(tuple(ind.shape))


def _batch_take_type(p, ins, outs):
    a, idx = ins
    if idx is not None and np.dtype(idx) != np.dtype(np.int32):
        raise TypeInferError(f"Type inconsistent, Provided = {np.dtype(idx).name}, inferred "
                             f"type = int32")
    return [a, np.dtype(np.int32)], [a]


register(OpDef(
    "batch_take", _batch_take_forward,
    lambda p, ins, outs: (ins, [None if ins[1] is None else tuple(ins[1])]),
    inputs=("a", "indices"), infer_type=_batch_take_type,
    doc="Takes elements from a data batch: ``out[i] = a[i, indices[i]]`` (indices int32,\n"
        "clipped to the row)."))


# --- gather_nd / scatter_nd ----------------------------------------------------------------------
def _gather_nd_shape(dshape, ishape):
    m = ishape[0]
    if m > len(dshape):
        raise ShapeError("Number of indices exceeds data dimension")
    return tuple(ishape[1:]) + tuple(dshape[m:])


def _nd_index(idx, shape):
    """The index tuple of an (M, ...) index array; negative entries count from the end."""
    idx = idx.to(torch.int64)
    return tuple(torch.where(idx[i] < 0, idx[i] + shape[i], idx[i]) for i in range(idx.shape[0]))


def _gather_nd_infer(p, ins, outs):
    d, i = ins
    if d is None or i is None or 0 in d or 0 in i:  # MXNet needs both shapes complete
        return ins, outs
    return ins, [_gather_nd_shape(d, i)]


def _backward_gather_nd(p, ins, oc):
    g, idx = ins
    shape = tuple(p.shape)
    return g.new_zeros(shape).index_put_(_nd_index(idx, shape), g, accumulate=True)


register(OpDef(
    "gather_nd", lambda p, ins, oc: ins[0][_nd_index(ins[1], tuple(ins[0].shape))],
    _gather_nd_infer, inputs=("data", "indices"), infer_type=_index_type,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_gather_nd(ograds[0], ins[1], shape=tuple(ins[0].shape)),
        F.zeros_like(ins[1])],
    doc="Gathers elements or slices from ``data`` into an array of shape\n"
        "``indices.shape[1:] + data.shape[M:]`` (M = ``indices.shape[0]``)."))
register(OpDef(
    "_backward_gather_nd", _backward_gather_nd, lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=(Param("shape", "shape", doc="Shape of output."),),
    inputs=("data", "indices"), infer_type=lambda p, ins, outs: (ins, [ins[0]]), public=False,
    doc="Scatters ``data`` into a zero array of ``shape``, adding where indices repeat."))


def _scatter_nd_forward(p, ins, oc):
    data, idx = ins
    shape = tuple(p.shape)
    return data.new_zeros(shape).index_put_(_nd_index(idx, shape), data)


def _scatter_nd_infer(p, ins, outs):
    d, i = ins
    shape = tuple(p.shape)
    if d is not None and i is not None:
        m = i[0]
        if m > len(shape) or tuple(d) != tuple(i[1:]) + shape[m:]:
            raise ShapeError(f"Invalid data, indices, and output shape combination for "
                             f"scatter_nd: {_sh(d)}, {_sh(i)}, {_sh(shape)}")
    return ins, [shape]


register(OpDef(
    "scatter_nd", _scatter_nd_forward, _scatter_nd_infer,
    params=(Param("shape", "shape", doc="Shape of output."),),
    inputs=("data", "indices"), infer_type=_index_type,
    gradient=lambda F, p, ins, outs, ograds: [F.gather_nd(ograds[0], ins[1]),
                                              F.zeros_like(ins[1])],
    doc="Scatters ``data`` into a new zero array of ``shape`` at ``indices`` (the inverse of\n"
        "gather_nd); with repeated indices the result is undefined."))


# --- sort / argsort ------------------------------------------------------------------------------
def _sort_axis(p, ndim):
    if p.axis is None:
        return None
    ax = p.axis + ndim if p.axis < 0 else p.axis
    if not 0 <= ax < ndim:
        raise ShapeError(f"Invalid axis! axis should be between 0 and {ndim}, found "
                         f"axis={p.axis}")
    return ax


def _sort_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:  # MXNet checks the axis against an unknown shape (ndim -1)
        if p.axis is None:
            return ins, outs
        raise ShapeError(f"Invalid axis! axis should be between 0 and -1, found "
                         f"axis={p.axis - 1 if p.axis < 0 else p.axis}")
    if 0 in x:  # MXNet's sort sizes its workspace from the shape: -1 there
        raise ShapeError("Shape dim size cannot be a negative value -1")
    ax = _sort_axis(p, len(x))
    return ins, [tuple(x) if ax is not None else (math.prod(x),)] * len(outs)


def _sorted(p, x):
    ax = _sort_axis(p, x.dim())
    src, dim = (x.reshape(-1), 0) if ax is None else (x, ax)
    return torch.sort(src, dim=dim, descending=not p.is_ascend, stable=True)


def _sort_forward(p, ins, oc):
    vals, idx = _sorted(p, ins[0])
    return vals, idx  # the indices: sort's hidden second output (as MXNet's)


def _sort_gradient(F, p, ins, outs, ograds):
    x = ins[0]
    return [F._backward_topk(ograds[0], outs[1], shape=tuple(x.shape),
                             axis=-1 if p.axis is None else p.axis, flat=p.axis is None)]


_SORT_AXIS = Param("axis", "int", -1, "Axis along which to sort the input tensor. If not given, "
                                      "the flattened array is used. Default is -1.", optional=True)
_SORT_ASC = Param("is_ascend", "bool", True, "Whether to sort in ascending or descending order.")

def _no_float16(t):
    if t is not None and np.dtype(t) == np.float16:
        raise TypeInferError("This operation does not support float16")


def _sort_type(p, ins, outs):
    _no_float16(ins[0])
    return ins, [ins[0] if ins[0] is not None else outs[0], _I64]


def _argsort_type(p, ins, outs):
    _no_float16(ins[0])
    return ins, [p.dtype]


register(OpDef(
    "sort", _sort_forward, _sort_infer_shape, num_hidden_outputs=1,
    params=(_SORT_AXIS, _SORT_ASC), gradient=_sort_gradient, infer_type=_sort_type,
    doc="Returns a sorted copy of an input array along the given axis (flattened when None)."))
register(OpDef(
    "argsort", lambda p, ins, oc: _sorted(p, ins[0])[1].to(dtype_torch(p.dtype)),
    _sort_infer_shape,
    params=(_SORT_AXIS, _SORT_ASC,
            DtypeParam("dtype", "dtype", np.float32, "DType of the output indices. It is only "
                                                     "valid when ret_typ is \"indices\" or "
                                                     "\"both\".",
                  choices=_dtypes("float16", "float32", "float64", "int32", "int64", "uint8"))),
    infer_type=_argsort_type, gradient=zero_gradient,
    doc="Returns the indices that would sort an input array along the given axis (ties keep\n"
        "their order)."))


# --- cumsum --------------------------------------------------------------------------------------
_CUMSUM_DTYPES = _dtypes("float16", "float32", "float64", "int32", "int64", "int8")


def _cumsum_axis(p, ndim):
    """MXNet 1.9.1's cumsum rejects negative axes (its shape check indexes the shape with them)."""
    if p.axis < 0:
        raise ShapeError(f"index = {p.axis} must be in range [0, {ndim})")
    if p.axis >= ndim:
        raise ShapeError(f"axis value {p.axis} out of range")
    return p.axis


def _cumsum_forward(p, ins, oc):
    x = ins[0]
    dt = dtype_torch(p.dtype) if p.dtype is not None else x.dtype
    if p.axis is None:
        return torch.cumsum(x.reshape(-1), 0, dtype=dt)
    return torch.cumsum(x, _cumsum_axis(p, x.dim()), dtype=dt)


def _cumsum_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:  # with an axis the output has the input's shape: inferred both ways
        if p.axis is not None and outs[0] is not None:
            _cumsum_axis(p, len(outs[0]))
            return [tuple(outs[0])], outs
        return ins, outs
    if p.axis is None:
        return ins, [(math.prod(x),)]
    _cumsum_axis(p, len(x))
    return ins, [tuple(x)]


def _cumsum_gradient(F, p, ins, outs, ograds):
    x, g = ins[0], ograds[0]
    ax = 0 if p.axis is None else _cumsum_axis(p, x.ndim)
    rev = F.reverse(F._np_cumsum(F.reverse(g, axis=(ax,)), axis=ax), axis=(ax,))
    if p.axis is None:
        rev = F.Reshape(rev, shape=tuple(x.shape))
    if p.dtype is not None and np.dtype(p.dtype) != np.dtype(x.dtype):
        rev = F.Cast(rev, dtype=x.dtype)
    return [rev]


register(OpDef(
    "_np_cumsum", _cumsum_forward, _cumsum_infer_shape,
    params=(Param("axis", "int", None, "Axis along which the cumulative sum is computed. The "
                                       "default (None) is to compute the cumsum over the "
                                       "flattened array.", optional=True),
            DtypeParam("dtype", "dtype", None, "Type of the returned array and of the "
                                               "accumulator in which the elements are summed.",
                  choices=_CUMSUM_DTYPES, optional=True)),
    inputs=("a",), aliases=("cumsum",),
    infer_type=lambda p, ins, outs: (ins, [p.dtype if p.dtype is not None else ins[0]]),
    gradient=_cumsum_gradient,
    doc="Returns the cumulative sum of the elements along a given axis (flattened when None)."))


# --- norm ----------------------------------------------------------------------------------------
def _norm_axes(p, ndim):
    if p.axis is None or p.axis == ():
        return tuple(range(ndim))
    axes = (p.axis,) if isinstance(p.axis, int) else tuple(p.axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"axis {a} exceeds the input dimension of {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ShapeError("axis must be unique")
    return tuple(sorted(out))


def _norm_check(p):
    if p.ord not in (1, 2):
        raise ShapeError("norm only supports ord=1 and ord=2")


def _norm_infer_shape(p, ins, outs):
    _norm_check(p)
    x = ins[0]
    if x is None or 0 in x:  # MXNet infers from complete shapes only
        return ins, outs
    return ins, [_reduced_shape(tuple(x), _norm_axes(p, len(x)), p.keepdims)]


def _norm_forward(p, ins, oc):
    _norm_check(p)
    x = ins[0]
    axes = _norm_axes(p, x.dim())
    xf = x if x.dtype.is_floating_point else x.to(torch.float64)
    out = torch.linalg.vector_norm(xf, ord=p.ord, dim=axes, keepdim=p.keepdims)
    out = out.reshape(_reduced_shape(tuple(x.shape), axes, p.keepdims))
    return out.to(x.dtype if p.out_dtype is None else dtype_torch(p.out_dtype))


def _backward_norm(p, ins, oc):
    g, x, y = ins
    axes = _norm_axes(p, x.dim())
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    g, y = g.to(x.dtype).reshape(kept), y.to(x.dtype).reshape(kept)
    if p.ord == 1:
        return g * torch.sign(x)
    return torch.where(y == 0, torch.zeros((), dtype=x.dtype, device=x.device), g * x / y)


_NORM_PARAMS = (
    Param("ord", "int", 2, "Order of the norm. Currently ord=1 and ord=2 is supported."),
    Param("axis", "axis", None, "The axis or axes along which to perform the reduction.",
          optional=True),
    DtypeParam("out_dtype", "dtype", None, "The data type of the output.", optional=True,
          choices=_dtypes("float16", "float32", "float64", "int32", "int64", "int8")),
    Param("keepdims", "bool", False, "If this is set to `True`, the reduced axis is left in the "
                                     "result as dimension with size one."))

register(OpDef(
    "norm", _norm_forward, _norm_infer_shape, params=_NORM_PARAMS,
    infer_type=lambda p, ins, outs: (ins, [p.out_dtype if p.out_dtype is not None else ins[0]]),
    gradient=lambda F, p, ins, outs, ograds: [F._backward_norm(ograds[0], ins[0], outs[0], **p)],
    doc="Computes the norm on an NDArray (ord 1: sum of absolute values, ord 2: Euclidean)."))
register(OpDef(
    "_backward_norm", _backward_norm, lambda p, ins, outs: (ins, [ins[1]]),
    params=_NORM_PARAMS, inputs=("out_grad", "data", "output"), public=False,
    infer_type=lambda p, ins, outs: (ins, [ins[1]]),
    doc="Gradient of norm."))


# --- moments -------------------------------------------------------------------------------------
def _moments_axes(p, ndim):
    if p.axes is None or p.axes == ():
        raise ShapeError("Empty axes is not supported, if you would like to do global moments, "
                         "please pass all axes to axes argument")
    axes = (p.axes,) if isinstance(p.axes, int) else tuple(p.axes)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"axis {a} exceeds the input dimension of {ndim}")
    return tuple(sorted({a % ndim for a in axes}))


def _moments_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:  # MXNet checks the axes against an unknown shape
        axes = _moments_axes(p, 1 << 30)
        raise ShapeError(f"Reduction axis {axes[-1]} Exceeds input dimensions None")
    out = _reduced_shape(tuple(x), _moments_axes(p, len(x)), p.keepdims)
    return ins, [out, out]


def _moments_forward(p, ins, oc):
    x = ins[0]
    axes = _moments_axes(p, x.dim())
    shape = _reduced_shape(tuple(x.shape), axes, p.keepdims)
    if not x.dtype.is_floating_point:  # MXNet divides in the integer type (truncating)
        n = math.prod(x.shape[a] for a in axes)
        mean = torch.div(x.sum(dim=axes, keepdim=True), n, rounding_mode="trunc")
        var = torch.div(((x - mean) ** 2).sum(dim=axes, keepdim=True), n, rounding_mode="trunc")
        return mean.reshape(shape).to(x.dtype), var.reshape(shape).to(x.dtype)
    mean = x.mean(dim=axes, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=axes, keepdim=True)
    return mean.reshape(shape), var.reshape(shape)


def _backward_moments(p, ins, oc):
    gm, gv, x, mean = ins
    axes = _moments_axes(p, x.dim())
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    n = math.prod(x.shape[a] for a in axes)
    gm, gv, mean = gm.reshape(kept), gv.reshape(kept), mean.reshape(kept)
    return (gm + 2.0 * gv * (x - mean)) / n


_MOMENTS_PARAMS = (
    Param("axes", "axis", None, "Array of ints. Axes along which to compute mean and variance.",
          optional=True),
    Param("keepdims", "bool", False, "produce moments with the same dimensionality as the input."))

register(OpDef(
    "moments", _moments_forward, _moments_infer_shape, params=_MOMENTS_PARAMS,
    outputs=("mean", "var"),
    infer_type=lambda p, ins, outs: (ins, [ins[0], ins[0]]),
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_moments(ograds[0], ograds[1], ins[0], outs[0], **p)],
    doc="Calculates the mean and (population) variance of ``data`` over ``axes``."))
register(OpDef(
    "_backward_moments", _backward_moments, lambda p, ins, outs: (ins, [ins[2]]),
    params=_MOMENTS_PARAMS, inputs=("mean_grad", "var_grad", "data", "mean"), public=False,
    infer_type=lambda p, ins, outs: (ins, [ins[2]]),
    doc="Gradient of moments."))


# --- shape_array / size_array --------------------------------------------------------------------


def _shape_forward(p, ins, oc):
    x = ins[0]
    return torch.tensor(tuple(x.shape), dtype=torch.int64, device=x.device)


register(OpDef(
    "shape_array", _shape_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else (len(ins[0]),)]),
    infer_type=lambda p, ins, outs: (ins, [_I64]), gradient=zero_gradient,
    doc="Returns a 1-D int64 array holding the shape of the input."))
register(OpDef(
    "size_array",
    lambda p, ins, oc: torch.tensor([ins[0].numel()], dtype=torch.int64, device=ins[0].device),
    lambda p, ins, outs: (ins, [(1,)]),
    infer_type=lambda p, ins, outs: (ins, [_I64]), gradient=zero_gradient,
    doc="Returns a 1-element int64 array holding the size of the input."))


# --- ravel_multi_index / unravel_index -----------------------------------------------------------
def _strides(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def _ravel_shape(p, what):
    if not p.shape:
        raise ShapeError(f"Empty shape parameter for {what} operator.")
    return tuple(p.shape)


def _ravel_forward(p, ins, oc):
    x = ins[0]
    shape = _ravel_shape(p, "ravel")
    idx = x.to(torch.int64)
    flat = sum(idx[i] * s for i, s in enumerate(_strides(shape)))
    return flat.to(x.dtype)


def _ravel_infer(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    if x[0] and x[0] != len(_ravel_shape(p, "ravel")):
        raise ShapeError("First dimension of input of ravel operator does not match shape "
                         "parameter dimension.")
    return ins, [tuple(x[1:]) if len(x) > 1 else (1,)]


def _unravel_forward(p, ins, oc):
    x = ins[0]
    shape = _ravel_shape(p, "unravel")
    idx = x.to(torch.int64)
    out = [None] * len(shape)
    for j in range(len(shape) - 1, 0, -1):
        out[j] = torch.remainder(idx, shape[j])
        idx = torch.div(idx, shape[j], rounding_mode="floor")
    out[0] = idx
    return torch.stack(out).to(x.dtype)


_RAVEL_SHAPE = Param("shape", "shape", None, "Shape of the array into which the multi-indices "
                                             "apply.", optional=True)

register(OpDef(
    "_ravel_multi_index", _ravel_forward, _ravel_infer, params=(_RAVEL_SHAPE,),
    aliases=("ravel_multi_index",), gradient=zero_gradient,
    doc="Converts a batch of index arrays (rows of ``data``) into flat indices of ``shape``."))
register(OpDef(
    "_unravel_index", _unravel_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else
                                (len(_ravel_shape(p, "unravel")),) + tuple(ins[0])]),
    params=(_RAVEL_SHAPE,), aliases=("unravel_index",), gradient=zero_gradient,
    doc="Converts flat indices into a batch of index arrays (one row per axis of ``shape``)."))


# --- histogram -----------------------------------------------------------------------------------
def _hist_inputs(p):
    return ("data",) if p.bin_cnt is not None else ("data", "bins")


def _hist_infer_shape(p, ins, outs):
    if p.bin_cnt is not None:
        if p.range is None:
            raise ShapeError("cnt and range should both or neither specified")
        return ins, [(p.bin_cnt,), (p.bin_cnt + 1,)]
    bins = ins[1]
    if bins is None:
        return ins, outs
    if len(bins) != 1:
        raise ShapeError("bins should be a 1-D array")
    return ins, [(bins[0] - 1,), tuple(bins)]


def _hist_forward(p, ins, oc):
    x = ins[0].reshape(-1)
    if p.bin_cnt is not None:
        lo, hi = p.range
        edges = torch.linspace(lo, hi, p.bin_cnt + 1, dtype=torch.float64, device=x.device)
        if not x.dtype.is_floating_point:  # MXNet bins integers by the truncated edges
            return _hist_by_edges(x, edges.to(x.dtype))
        xd = x.to(torch.float64)
        inside = (xd >= lo) & (xd <= hi)
        b = torch.floor((xd - lo) / (hi - lo) * p.bin_cnt).to(torch.int64)
        b = b.clamp(0, p.bin_cnt - 1)
        counts = torch.zeros(p.bin_cnt, dtype=torch.int64, device=x.device)
        counts.index_add_(0, b[inside], torch.ones_like(b[inside]))
        return counts, edges.to(ins[0].dtype)
    return _hist_by_edges(x, ins[1].reshape(-1))


def _hist_by_edges(x, edges):
    n = edges.numel() - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    b = (torch.searchsorted(edges.contiguous(), x.contiguous(), right=True) - 1).clamp(0, n - 1)
    counts = torch.zeros(n, dtype=torch.int64, device=x.device)
    counts.index_add_(0, b[inside], torch.ones_like(b[inside]))
    return counts, edges.clone()


def _hist_range(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    if isinstance(v, str):
        import ast
        v = ast.literal_eval(v.strip())
    lo, hi = (float(x) for x in v)
    return (lo, hi)


class _RangeParam(Param):
    def parse(self, value, where):
        try:
            return _hist_range(value)
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError(f"Invalid Parameter format for range expect tuple of <float> but "
                             f"value='{value}', in operator {where}") from None


register(OpDef(
    "_histogram", _hist_forward, _hist_infer_shape,
    params=(Param("bin_cnt", "int", None, "Number of bins for uniform case", optional=True),
            _RangeParam("range", "str", None, "The lower and upper range of the bins. if not "
                                              "provided, range is simply (a.min(), a.max()).",
                        optional=True)),
    inputs=_hist_inputs, outputs=("output0", "output1"),
    infer_type=lambda p, ins, outs: (ins, [_I64, ins[0]]),
    doc="Counts the values of ``data`` in ``bin_cnt`` equal bins over ``range``, or in the bins\n"
        "given by the edges ``bins`` (the last bin includes its right edge)."))
