"""Reductions (sum, mean, max, min, prod, argmax, argmin, argmax_channel) and dot."""
from __future__ import annotations

import operator

import torch

from .gemm_kernels import mm
from .registry import OpDef, Param, ShapeError, register, zero_gradient, _sh

_REDUCE_PARAMS = (
    Param("axis", "axis", None, "The axis or axes along which to perform the reduction.", optional=True),
    Param("keepdims", "bool", False, "If true, the reduced axes are left as size-one dimensions."),
    Param("exclude", "bool", False, "Whether to reduce over all axes except the ones in axis."),
)


def reduce_axes(ndim, axis, exclude):
    """The sorted tuple of axes a reduction covers."""
    if axis is None or axis == ():
        return tuple(range(ndim))  # exclude has no effect without axes (MXNet reduces everything)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        for a in axes:
            if not -ndim <= a < ndim:
                raise ShapeError(f"axis {a} exceeds the input dimension of {ndim}")
        axes = tuple(sorted({a % ndim for a in axes}))
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    out = tuple(s for i, s in enumerate(shape) if i not in axes)
    return out if out else (1,)


def _reduce_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    axes = reduce_axes(len(x), p.axis, p.exclude)
    return ins, [_reduced_shape(x, axes, p.keepdims)]


def _reduce_forward(fn):
    def forward(p, ins, oc):
        x = ins[0]
        axes = reduce_axes(x.dim(), p.axis, p.exclude)
        if not axes:
            return x.clone()
        out = fn(x, axes, p.keepdims)
        return out.reshape(1) if out.dim() == 0 else out
    return forward


_SUM_TO_1 = operator.methodcaller("sum_to_size", 1)


def _sum_to_1(x):
    """A full sum of shape (1,) in one ATen call (refusing 0-dim inputs: general path); integer
    sums keep their dtype (torch widens them to int64); a (1,)-shaped input comes back itself,
    which the imperative fast path copies."""
    out = _SUM_TO_1(x)
    return out if out.dtype is x.dtype else out.to(x.dtype)


def _reduce_fast_kernel(fn, full=None, by_axes=True):
    """Direct kernels of a reduction (no validation: torch refuses what MXNet refuses, and
    those calls take the general path). Over every axis (no ``axis``) any input is accepted:
    one call; ``full(x)`` is the same reduction over all axes as a 0-dim tensor (bitwise equal
    to ``fn``). Over given axes (not ``exclude``; ``by_axes``: ``fn`` is torch's reduction, which
    refuses repeated and out-of-range axes), ``fn`` with those axes as torch takes them."""
    def make(p):
        keep = p.keepdims
        if p.axis is not None and p.axis != ():
            if p.exclude or not by_axes:
                return None
            axes = p.axis

            def axes_kernel(x):  # (out-of-range or repeated axes raise in torch: general path)
                out = fn(x, axes, keep)
                return out if out.dim() else out.reshape(1)
            return axes_kernel, False
        if full is torch.sum and not keep:  # one ATen call to shape (1,), bitwise the same sum
            return _sum_to_1, False
        if full is not None and not keep:
            return (lambda x: full(x).unsqueeze(0) if x.dim() else x.clone()), False

        def kernel(x):
            if x.dim() == 0:
                return x.clone()
            out = fn(x, tuple(range(x.dim())), keep)
            return out.reshape(1) if out.dim() == 0 else out
        return kernel, False
    return make


def _int_kept(reduce):
    """MXNet keeps an integer input's dtype (sums and products wrap around in it); torch
    widens integer sums and products to int64."""
    def fn(x, axes, keep):
        out = reduce(x, axes, keep)
        return out if out.dtype is x.dtype else out.to(x.dtype)
    return fn


def _mean(x, axes, keep):
    if x.is_floating_point():
        return torch.mean(x, dim=axes, keepdim=keep)
    n = 1  # integers: MXNet divides the integer sum (wrapped in the dtype), truncating toward 0
    for a in ((axes,) if isinstance(axes, int) else axes):
        n *= x.shape[a]
    s = torch.sum(x, dim=axes, keepdim=keep).to(x.dtype)
    return torch.div(s, max(n, 1), rounding_mode="trunc").to(x.dtype)


def _mean_full(x):
    return torch.mean(x) if x.is_floating_point() else _mean(x, tuple(range(x.dim())), False)


def _nansum_full(x):
    out = torch.nansum(x)
    return out if out.dtype is x.dtype else out.to(x.dtype)


def _torch_max(x, axes, keep):
    return torch.amax(x, dim=axes, keepdim=keep)


def _torch_min(x, axes, keep):
    return torch.amin(x, dim=axes, keepdim=keep)


def _expand_back(F, p, g, x):
    """Broadcast a reduction's output gradient back to the input's shape."""
    axes = reduce_axes(x.ndim, p.axis, p.exclude)
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if tuple(g.shape) != kept:
        g = F.Reshape(g, shape=kept)
    return F.broadcast_to(g, shape=tuple(x.shape)), axes


def _sum_grad(F, p, ins, outs, ograds):
    g, _ = _expand_back(F, p, ograds[0], ins[0])
    return [g]


def _mean_grad(F, p, ins, outs, ograds):
    g, axes = _expand_back(F, p, ograds[0], ins[0])
    n = 1
    for a in axes:
        n *= ins[0].shape[a]
    return [F._div_scalar(g, scalar=float(n))]


def _extreme_grad(F, p, ins, outs, ograds):
    g, _ = _expand_back(F, p, ograds[0], ins[0])
    y, _ = _expand_back(F, p, outs[0], ins[0])
    return [F.elemwise_mul(g, F._equal(ins[0], y))]


for _name, _fn, _full, _grad, _aliases in (
        ("sum", _int_kept(lambda x, a, k: torch.sum(x, dim=a, keepdim=k)), torch.sum, _sum_grad,
         ("sum_axis",)),
        ("mean", _mean, _mean_full, _mean_grad, ()),
        ("max", _torch_max, None, _extreme_grad, ("max_axis",)),
        ("min", _torch_min, None, _extreme_grad, ("min_axis",)),
        ("prod", _int_kept(lambda x, a, k: _prod_axes(x, a, k)), None, lambda F, p, i, o, g: _prod_grad(F, p, i, o, g), ()),
        ("nansum", _int_kept(lambda x, a, k: torch.nansum(x, dim=a, keepdim=k)), _nansum_full,
         lambda F, p, i, o, g: _nansum_grad(F, p, i, o, g), ()),
):
    register(OpDef(_name, _reduce_forward(_fn), _reduce_infer_shape, params=_REDUCE_PARAMS,
                   fast_kernel=_reduce_fast_kernel(_fn, _full, _name != "prod"),
                   gradient=_grad, aliases=_aliases,
                   doc=f"Computes the {_name} of array elements over given axes.\n\n"
                       "A reduction over every axis returns shape ``(1,)``."))


def _prod_grad(F, p, ins, outs, ograds):
    g, _ = _expand_back(F, p, ograds[0], ins[0])
    y, _ = _expand_back(F, p, outs[0], ins[0])
    return [F.elemwise_mul(g, F.elemwise_div(y, ins[0]))]


def _nansum_grad(F, p, ins, outs, ograds):
    g, _ = _expand_back(F, p, ograds[0], ins[0])
    return [F.elemwise_mul(g, F._equal(ins[0], ins[0]))]


def _prod_axes(x, axes, keep):
    for a in sorted(axes, reverse=True):
        x = torch.prod(x, dim=a, keepdim=keep)
    return x


# --- broadcast_to --------------------------------------------------------------------------------
def _broadcast_to_infer(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    target = tuple(p.shape)
    if len(target) != len(x):
        raise ShapeError(f"Operand of shape {_sh(x)} cannot be broadcasted to {_sh(target)}")
    out = []
    for s, t in zip(x, target):
        if t == 0:
            t = s
        if s != t and s != 1:
            raise ShapeError(f"Array cannot be broadcasted from {_sh(x)} to {_sh(target)}")
        out.append(t)
    return ins, [tuple(out)]


def _broadcast_to_forward(p, ins, oc):
    x = ins[0]
    target = tuple(t if t != 0 else s for s, t in zip(x.shape, p.shape))
    return x.expand(target)


register(OpDef(
    "broadcast_to", _broadcast_to_forward, _broadcast_to_infer,
    params=(Param("shape", "shape", (), "The shape of the desired array (0 keeps a dim)."),),
    gradient=lambda F, p, ins, outs, ograds: [F._reduce_to(ograds[0], shape=tuple(ins[0].shape))],
    doc="Broadcasts the input array to a new shape."))


# --- argmax / argmin -----------------------------------------------------------------------------
_ARG_PARAMS = (Param("axis", "int", None, "The axis along which to perform the reduction; "
                                          "None flattens the input.", optional=True),
               Param("keepdims", "bool", False, "Keep the reduced axis as size one."))


def _arg_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    if p.axis is None:
        return ins, [(1,) * len(x) if p.keepdims else (1,)]
    ax = p.axis % len(x)
    return ins, [_reduced_shape(x, (ax,), p.keepdims)]


def _arg_forward(fn):
    def forward(p, ins, oc):
        x = ins[0]
        if p.axis is None:
            idx = fn(x.reshape(-1), 0)
            out = idx.reshape((1,) * x.dim() if p.keepdims else (1,))
        else:
            out = fn(x, p.axis)
            if p.keepdims:
                out = out.unsqueeze(p.axis)
            if out.dim() == 0:
                out = out.reshape(1)
        return out.to(x.dtype)
    return forward


def _first_argmax(x, dim):
    # torch.argmax returns the first maximal index on CPU and CUDA (documented since 1.7).
    return torch.argmax(x, dim=dim)


def _first_argmin(x, dim):
    return torch.argmin(x, dim=dim)


register(OpDef("argmax", _arg_forward(_first_argmax), _arg_infer_shape, params=_ARG_PARAMS,
               gradient=zero_gradient,
               doc="Returns indices of the maximum values along an axis (as floats, like the input)."))
register(OpDef("argmin", _arg_forward(_first_argmin), _arg_infer_shape, params=_ARG_PARAMS,
               gradient=zero_gradient,
               doc="Returns indices of the minimum values along an axis."))
register(OpDef(
    "argmax_channel", lambda p, ins, oc: torch.argmax(ins[0], dim=1).to(ins[0].dtype),
    lambda p, ins, outs: (ins, [None if ins[0] is None else (ins[0][0],) + tuple(ins[0][2:])]),
    doc="Returns argmax indices of each channel (axis 1) from the input array."))


# --- dot -----------------------------------------------------------------------------------------
_DOT_PARAMS = (Param("transpose_a", "bool", False, "If true then transpose the first input before dot."),
               Param("transpose_b", "bool", False, "If true then transpose the second input before dot."),
               Param("forward_stype", "str", None, "unused (sparse storage)", optional=True))


# MXNet's N-D dot contracts the lhs's last axis (its first when transposed) with the rhs's first
# axis (its last when transposed); the other axes keep their order. For matrices these are the
# plain transposes.
def _lhs_axes(nd):
    return tuple(range(1, nd)) + (0,)


def _rhs_axes(nd):
    return (nd - 1,) + tuple(range(nd - 1))


def _inverse(axes):
    return tuple(sorted(range(len(axes)), key=lambda i: axes[i]))


def _rev(s, flag, lhs=True):
    """The operand's shape as the product sees it (transposed: the contracted axis moved)."""
    if not flag or len(s) < 2:
        return tuple(s)
    axes = _lhs_axes(len(s)) if lhs else _rhs_axes(len(s))
    return tuple(s[i] for i in axes)


def _dot_infer_shape(p, ins, outs):
    a, b = ins
    if a is None or b is None:
        return ins, outs
    ta, tb = _rev(a, p.transpose_a), _rev(b, p.transpose_b, lhs=False)
    if len(a) == 1 and len(b) == 1:
        if a[0] != b[0]:
            raise ShapeError(f"dot shape error: {_sh(a)} X {_sh(b)}")
        return ins, [(1,)]
    if ta[-1] != tb[0]:
        raise ShapeError(f"dot shape error: {_sh(a)} X {_sh(b)}")
    out = ta[:-1] + tb[1:]
    return ins, [out if out else (1,)]


def _dot_forward(p, ins, oc):
    a, b = ins
    if p.transpose_a and a.dim() > 1:
        a = a.permute(*_lhs_axes(a.dim()))
    if p.transpose_b and b.dim() > 1:
        b = b.permute(*_rhs_axes(b.dim()))
    if a.dim() == 2 and b.dim() == 2:
        return mm(a, b)
    if a.dim() == 1 and b.dim() == 1:
        return torch.dot(a, b).reshape(1)
    return torch.tensordot(a, b, dims=1)


def _dot_gradient(F, p, ins, outs, ograds):
    a, b = ins
    g = ograds[0]
    ta, tb = p.transpose_a, p.transpose_b
    if a.ndim != 2 or b.ndim != 2:
        # N-D: a transposed operand has its contracted axis moved (see _lhs_axes); differentiate
        # the plain dot of the moved operands as matrices, then move the gradients' axes back
        a1 = F.transpose(a, axes=_lhs_axes(a.ndim)) if ta and a.ndim > 1 else a
        b1 = F.transpose(b, axes=_rhs_axes(b.ndim)) if tb and b.ndim > 1 else b
        k = a1.shape[-1]
        a2 = F.Reshape(a1, shape=(-1, k))
        b2 = F.Reshape(b1, shape=(k, -1))
        g2 = F.Reshape(g, shape=(a2.shape[0], b2.shape[1]))
        da = F.Reshape(F.dot(g2, b2, transpose_b=True), shape=tuple(a1.shape))
        db = F.Reshape(F.dot(a2, g2, transpose_a=True), shape=tuple(b1.shape))
        if a1 is not a:
            da = F.transpose(da, axes=_inverse(_lhs_axes(a.ndim)))
        if b1 is not b:
            db = F.transpose(db, axes=_inverse(_rhs_axes(b.ndim)))
        return [da, db]
    if not ta and not tb:
        if getattr(a, "stype", "default") == "csr":
            # (MXNet's executors compute no gradient for a csr lhs: its array stays zero)
            return [F._zeros(shape=a.shape, dtype=a.dtype), F.dot(a, g, transpose_a=True)]
        return [F.dot(g, b, transpose_b=True), F.dot(a, g, transpose_a=True)]
    if ta and not tb:
        return [F.dot(b, g, transpose_b=True), F.dot(a, g)]
    if tb and not ta:
        return [F.dot(g, b), F.dot(g, a, transpose_a=True)]
    return [F.dot(b, g, transpose_a=True, transpose_b=True), F.dot(g, a, transpose_a=True, transpose_b=True)]


def _mm_ta(a, b):
    return mm(a.t(), b)


def _mm_tb(a, b):
    return mm(a, b.t())


def _mm_tab(a, b):
    return mm(a.t(), b.t())


def _dot_fast_kernel(p):
    # mm (torch.mm's checks) takes exactly the valid matrix products (it refuses mismatched
    # shapes or dtypes and other ranks; those calls go to the general path); ``t()`` of a matrix
    # is its transpose (of a vector the vector itself, which mm then refuses)
    if p.transpose_a:
        return (_mm_tab if p.transpose_b else _mm_ta), False
    return (_mm_tb if p.transpose_b else mm), False


register(OpDef("dot", _dot_forward, _dot_infer_shape, params=_DOT_PARAMS, inputs=("lhs", "rhs"),
               fast_kernel=_dot_fast_kernel, fresh_output=True,
               gradient=_dot_gradient,
               doc="Dot product of two arrays: contracts the last axis of ``lhs`` with the first\n"
                   "axis of ``rhs``; two 1-D arrays give shape ``(1,)``."))


# --- batch_dot -----------------------------------------------------------------------------------
def _batch_dot_infer_shape(p, ins, outs):
    a, b = ins
    if a is None or b is None:
        return ins, outs
    if len(a) != 3 or len(b) != 3:
        raise ShapeError(f"batch_dot only supports 3-D inputs, got {_sh(a)} and {_sh(b)}")
    m, k = (a[2], a[1]) if p.transpose_a else (a[1], a[2])
    k2, n = (b[2], b[1]) if p.transpose_b else (b[1], b[2])
    if a[0] != b[0] or k != k2:
        raise ShapeError(f"batch_dot shape error: {_sh(a)} X {_sh(b)}")
    return ins, [(a[0], m, n)]


def _batch_dot_forward(p, ins, oc):
    a, b = ins
    if p.transpose_a:
        a = a.transpose(1, 2)
    if p.transpose_b:
        b = b.transpose(1, 2)
    return torch.bmm(a, b)


def _batch_dot_gradient(F, p, ins, outs, ograds):
    a, b = ins
    g = ograds[0]
    ta, tb = p.transpose_a, p.transpose_b
    bd = F.batch_dot
    if not ta and not tb:
        return [bd(g, b, transpose_b=True), bd(a, g, transpose_a=True)]
    if ta and not tb:
        return [bd(b, g, transpose_b=True), bd(a, g)]
    if tb and not ta:
        return [bd(g, b), bd(g, a, transpose_a=True)]
    return [bd(b, g, transpose_a=True, transpose_b=True), bd(g, a, transpose_a=True, transpose_b=True)]


register(OpDef("batch_dot", _batch_dot_forward, _batch_dot_infer_shape, params=_DOT_PARAMS,
               inputs=("lhs", "rhs"), gradient=_batch_dot_gradient,
               doc="Batchwise dot product of two 3-D arrays: ``out[i] = dot(lhs[i], rhs[i])``."))
