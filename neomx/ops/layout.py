"""Shape, layout and creation operators: slice_like, reshape_like, broadcast_like,
broadcast_axis, SwapAxis, reverse, diag, depth_to_space, space_to_depth, _split_v2, Pad, Crop,
im2col, col2im, _eye, _linspace, _arange.

Shape rules and error texts follow MXNet 1.9.1 (``src/operator/tensor/matrix_op-inl.h``,
``broadcast_reduce_op.h``, ``diag_op-inl.h``, ``init_op.h``, ``pad-inl.h``, ``crop-inl.h``,
``nn/im2col.h``). Linear ops without a simpler rule differentiate through a small
``_backward_*`` op that takes torch's vector-Jacobian product of the same forward.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as tF

from ..base import dtype_np, dtype_torch
from .indexing import DtypeParam
from .matrix import _norm_axis
from .registry import OpDef, Param, ShapeError, TypeInferError, register, _sh


def _linear_vjp(fn, shape, g):
    """The gradient of the linear map ``fn`` at any point (zeros), for head gradient ``g``."""
    with torch.enable_grad():
        x = torch.zeros(shape, dtype=g.dtype, device=g.device, requires_grad=True)
        (gx,) = torch.autograd.grad(fn(x), x, g)
    return gx


def _vjp_infer(p, ins, outs):
    return ins, [tuple(p.shape)]


def _second_zero(F, ins, g0):
    return [g0, F.zeros_like(ins[1])]


# --- slice_like ----------------------------------------------------------------------------------
def _slice_like_shape(p, d, s):
    out = list(d)
    if not p.axes:
        if len(s) != len(d):
            raise ShapeError(f"By default slice_axis performs slice on all axes, but ndim "
                             f"mismatch for inputs: {len(d)} vs. {len(s)}")
        axes = range(len(d))
    else:
        axes = []
        for a in p.axes:
            if not -len(d) <= a < len(d):
                raise ShapeError(f"Slice axis: {a} exceeds first input: {len(d)}")
            a = a % len(d)
            if a >= len(s):
                raise ShapeError(f"Slice axis: {a} exceeds second input: {len(s)}")
            axes.append(a)
    for a in axes:
        if s[a] > d[a] or not d[a]:  # (an unknown dimension is -1 to MXNet's check)
            raise ShapeError(f"Slice axis {a} with size {s[a]}exceeds limit of input with size "
                             f"{d[a] or -1}")
        out[a] = s[a]
    return tuple(out)


def _slice_like_infer(p, ins, outs):
    d, s = ins
    if d is None or s is None:
        return ins, outs
    return ins, [_slice_like_shape(p, d, s)]


def _slice_like_forward(p, ins, oc):
    x, like = ins
    out = _slice_like_shape(p, tuple(x.shape), tuple(like.shape))
    return x[tuple(slice(0, n) for n in out)]


def _backward_slice_like(p, ins, oc):
    g = ins[0]
    out = g.new_zeros(tuple(p.shape))
    out[tuple(slice(0, n) for n in g.shape)] = g
    return out


register(OpDef(
    "slice_like", _slice_like_forward, _slice_like_infer, inputs=("data", "shape_like"),
    params=(Param("axes", "shape", (), "List of axes on which input data will be sliced "
                                       "according to the corresponding size of the second input. "
                                       "By default will slice on all axes. Negative axes are "
                                       "supported."),),
    infer_type=lambda p, ins, outs: (ins, [ins[0]]),
    gradient=lambda F, p, ins, outs, ograds: _second_zero(
        F, ins, F._backward_slice_like(ograds[0], shape=tuple(ins[0].shape))),
    doc="Slices ``data`` from the start of each axis to the size ``shape_like`` has there\n"
        "(all axes, or only ``axes``)."))
register(OpDef(
    "_backward_slice_like", _backward_slice_like, _vjp_infer,
    params=(Param("shape", "shape", doc="shape of slice_like's data"),), public=False,
    doc="Gradient of slice_like: the head gradient placed in a zero array."))


# --- reshape_like --------------------------------------------------------------------------------
def _range_of(begin, end, ndim, side):
    b = 0 if begin is None else (begin + ndim if begin < 0 else begin)
    e = ndim if end is None else (end + ndim if end < 0 else end)
    if not 0 <= b < e <= ndim:
        raise ShapeError(f"Invalid begin, end, get {side}_begin={begin}, {side}_end={end}")
    return b, e


def _reshape_like_shape(p, lhs, rhs):
    lb, le = _range_of(p.lhs_begin, p.lhs_end, len(lhs), "lhs")
    rb, re_ = _range_of(p.rhs_begin, p.rhs_end, len(rhs), "rhs")
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re_]) + tuple(lhs[le:])
    if math.prod(out) != math.prod(lhs):
        raise ShapeError(f"Cannot reshape lhs with shape {_sh(lhs)}to new shape {_sh(out)} "
                         f"because they have different size.")
    return out


def _reshape_like_infer(p, ins, outs):
    lhs, rhs = ins
    if lhs is None and rhs is not None:  # MXNet checks the range against an unknown shape
        _range_of(p.lhs_begin, p.lhs_end, 0, "lhs")
    if lhs is None or rhs is None:
        return ins, outs
    return ins, [_reshape_like_shape(p, lhs, rhs)]


def _opt_int(name, doc):
    return Param(name, "int", None, doc, optional=True)


register(OpDef(
    "reshape_like",
    lambda p, ins, oc: ins[0].reshape(_reshape_like_shape(p, tuple(ins[0].shape),
                                                          tuple(ins[1].shape))),
    _reshape_like_infer, inputs=("lhs", "rhs"),
    params=(_opt_int("lhs_begin", "Defaults to 0. The beginning index along which the lhs "
                                  "dimensions are to be reshaped. Supports negative indices."),
            _opt_int("lhs_end", "Defaults to None. The ending index along which the lhs "
                                "dimensions are to be used for reshaping. Supports negative "
                                "indices."),
            _opt_int("rhs_begin", "Defaults to 0. The beginning index along which the rhs "
                                  "dimensions are to be used for reshaping. Supports negative "
                                  "indices."),
            _opt_int("rhs_end", "Defaults to None. The ending index along which the rhs "
                                "dimensions are to be used for reshaping. Supports negative "
                                "indices.")),
    infer_type=lambda p, ins, outs: (ins, [ins[0]]),
    gradient=lambda F, p, ins, outs, ograds: _second_zero(
        F, ins, F.Reshape(ograds[0], shape=tuple(ins[0].shape))),
    doc="Reshapes ``lhs[lhs_begin:lhs_end]``'s dimensions to ``rhs[rhs_begin:rhs_end]``'s."))


# --- broadcast_like / broadcast_axis -------------------------------------------------------------
def _broadcast_like_shape(p, lhs, rhs):
    if p.lhs_axes is None and p.rhs_axes is None:
        if len(lhs) != len(rhs):
            raise ShapeError(f"Operand of shape {_sh(lhs)} cannot be broadcasted to {_sh(rhs)}")
        for a, b in zip(lhs, rhs):
            if a != b and a != 1:
                raise ShapeError(f"Array cannot be broadcasted from {_sh(lhs)} to {_sh(rhs)}")
        return tuple(rhs)
    la, ra = tuple(p.lhs_axes or ()), tuple(p.rhs_axes or ())
    if len(la) != len(ra):
        raise ShapeError("Input_axis and other_axis size does not match")
    out = list(lhs)
    for a, b in zip(la, ra):
        a, b = _norm_axis(a, len(lhs)), _norm_axis(b, len(rhs))
        if out[a] != 1:
            raise ShapeError(f"Broadcasting axis must have size 1, got {out[a]}")
        out[a] = rhs[b]
    return tuple(out)


def _broadcast_like_infer(p, ins, outs):
    lhs, rhs = ins
    if lhs is None or rhs is None:
        return ins, outs
    return ins, [_broadcast_like_shape(p, lhs, rhs)]


def _axes_param(name, doc):
    return Param(name, "shape", None, doc, optional=True)


register(OpDef(
    "broadcast_like",
    lambda p, ins, oc: ins[0].expand(_broadcast_like_shape(p, tuple(ins[0].shape),
                                                           tuple(ins[1].shape))),
    _broadcast_like_infer, inputs=("lhs", "rhs"),
    params=(_axes_param("lhs_axes", "Axes to perform broadcast on in the first input array"),
            _axes_param("rhs_axes", "Axes to copy from the second input array")),
    infer_type=lambda p, ins, outs: (ins, [ins[0]]),
    gradient=lambda F, p, ins, outs, ograds: _second_zero(
        F, ins, F._reduce_to(ograds[0], shape=tuple(ins[0].shape))),
    doc="Broadcasts ``lhs`` to the shape of ``rhs`` (or only on ``lhs_axes``, taking the sizes\n"
        "of ``rhs_axes``)."))


def _broadcast_axis_shape(p, x):
    axes, sizes = tuple(p.axis), tuple(p.size)
    if len(axes) != len(sizes):
        raise ShapeError(f"param.axis.ndim() == param.size.ndim() ({len(axes)} vs. {len(sizes)})")
    out = list(x)
    for a, s in zip(axes, sizes):
        a = _positive_axis(a, len(x))
        if out[a] != 1:
            raise ShapeError(f"Broadcasting axis must have size 1 ({out[a]} vs. 1)")
        out[a] = s
    return tuple(out)


register(OpDef(
    "broadcast_axis",
    lambda p, ins, oc: ins[0].expand(_broadcast_axis_shape(p, tuple(ins[0].shape))),
    lambda p, ins, outs: (ins, [None if ins[0] is None or 0 in ins[0] else
                                _broadcast_axis_shape(p, ins[0])]),
    params=(Param("axis", "shape", (), "The axes to perform the broadcasting."),
            Param("size", "shape", (), "Target sizes of the broadcasting axes.")),
    aliases=("broadcast_axes",),
    gradient=lambda F, p, ins, outs, ograds: [F._reduce_to(ograds[0], shape=tuple(ins[0].shape))],
    doc="Broadcasts the input array over particular axes (each of size 1)."))


def _positive_axis(a, ndim):
    """MXNet 1.9.1's reverse and broadcast_axis take no negative axes."""
    if not 0 <= a < ndim:
        raise ShapeError(f"index = {a} must be in range [0, {ndim})" if a < 0 else
                         f"axis {a} exceeds the input dimension of {ndim}")
    return a


# --- SwapAxis / reverse --------------------------------------------------------------------------
def _swap_dims(p, ndim):
    for d in (p.dim1, p.dim2):
        if not -ndim <= d < ndim:
            raise ShapeError(f"axis {d} is out of bounds for array of ndim {ndim}")
    return p.dim1 % ndim, p.dim2 % ndim


def _swap_shape(p, x):
    a, b = _swap_dims(p, len(x))
    out = list(x)
    out[a], out[b] = out[b], out[a]
    return tuple(out)


register(OpDef(
    "SwapAxis", lambda p, ins, oc: ins[0].transpose(*_swap_dims(p, ins[0].dim())),
    lambda p, ins, outs: (ins, [None if ins[0] is None else _swap_shape(p, ins[0])]),
    params=(Param("dim1", "int", 0, "the first axis to be swapped."),
            Param("dim2", "int", 0, "the second axis to be swapped.")),
    aliases=("swapaxes",), hint="swapaxis",
    gradient=lambda F, p, ins, outs, ograds: [F.SwapAxis(ograds[0], **p)],
    doc="Interchanges two axes of an array."))


def _reverse_axes(p, ndim):
    return tuple(_positive_axis(a, ndim) for a in p.axis)


def _reverse_infer(p, ins, outs):
    """The output has the input's shape (inferred both ways, as MXNet's)."""
    x = ins[0] if ins[0] is not None else outs[0]
    if x is None:
        return ins, outs
    _reverse_axes(p, len(x))
    return [tuple(x)], [tuple(x)]


register(OpDef(
    "reverse", lambda p, ins, oc: torch.flip(ins[0], _reverse_axes(p, ins[0].dim())),
    lambda p, ins, outs: _reverse_infer(p, ins, outs),
    params=(Param("axis", "shape", doc="The axis which to reverse elements."),),
    aliases=("flip",),
    gradient=lambda F, p, ins, outs, ograds: [F.reverse(ograds[0], **p)],
    doc="Reverses the order of elements along the given axes, preserving the shape."))


# --- diag ----------------------------------------------------------------------------------------
def _diag_shape(p, x):
    if len(x) == 1:
        n = x[0] + abs(p.k)
        return (n, n)
    if len(x) < 1:
        raise ShapeError("Input must be 1- or 2-d.")
    a1, a2 = _norm_axis(p.axis1, len(x)), _norm_axis(p.axis2, len(x))
    if a1 == a2:
        raise ShapeError(f"axis1 and axis2 cannot refer to the same axis {a1}")
    h, w = x[a1], x[a2]
    k = p.k
    n = min(h + k, w) if k < 0 else min(h, w - k)
    if n <= 0:
        raise ShapeError("Diagonal does not exist.")
    return tuple(d for i, d in enumerate(x) if i not in (a1, a2)) + (n,)


def _diag_forward(p, ins, oc):
    x = ins[0]
    if x.dim() == 1:
        return torch.diag(x, p.k)
    _diag_shape(p, tuple(x.shape))
    return torch.diagonal(x, p.k, _norm_axis(p.axis1, x.dim()),
                          _norm_axis(p.axis2, x.dim())).contiguous()


_DIAG_PARAMS = (
    Param("k", "int", 0, "Diagonal in question. The default is 0. Use k>0 for diagonals above the "
                         "main diagonal, and k<0 for diagonals below the main diagonal."),
    Param("axis1", "int", 0, "The first axis of the sub-arrays of interest. Ignored when the "
                             "input is a 1-D array."),
    Param("axis2", "int", 1, "The second axis of the sub-arrays of interest. Ignored when the "
                             "input is a 1-D array."))

register(OpDef(
    "diag", _diag_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else _diag_shape(p, ins[0])]),
    params=_DIAG_PARAMS,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_diag(ograds[0], shape=tuple(ins[0].shape), **p)],
    doc="Extracts a diagonal of an N-D array (on ``axis1``/``axis2``) or builds a 2-D array\n"
        "with a 1-D input on its ``k``-th diagonal."))
register(OpDef(
    "_backward_diag",
    lambda p, ins, oc: _linear_vjp(lambda x: _diag_forward(p, [x], oc), tuple(p.shape), ins[0]),
    _vjp_infer, params=_DIAG_PARAMS + (Param("shape", "shape", doc="shape of diag's input"),),
    public=False, doc="Gradient of diag."))


# --- depth_to_space / space_to_depth -------------------------------------------------------------
def _d2s_shape(p, x):
    b = p.block_size
    if len(x) != 4:
        raise ShapeError("Operation Depth To Space requires exactly 4D tensor")
    if b <= 0:
        raise ShapeError("block_size must be a positive integer value")
    if x[1] % (b * b):
        raise ShapeError("Cannot perform Depth To Space operation on the specified tensor. "
                         "Dimension:1(depth dimension) should be a multiple of 'block^2'")
    return (x[0], x[1] // (b * b), x[2] * b, x[3] * b)


def _s2d_shape(p, x):
    b = p.block_size
    if len(x) != 4:
        raise ShapeError("Operation Space To Depth requires exactly 4D tensor")
    if b <= 0:
        raise ShapeError("block_size must be a positive integer value")
    for i, what in ((2, "1st"), (3, "2nd")):
        if x[i] % b:
            raise ShapeError(f"Cannot perform Depth To Space operation on the specified tensor. "
                             f"Dimension:{i}({what} Space dimension) should be a multiple of "
                             f"'block' ")
    return (x[0], x[1] * b * b, x[2] // b, x[3] // b)


def _d2s_forward(p, ins, oc):
    x = ins[0]
    n, c, h, w = x.shape
    b = p.block_size
    out = _d2s_shape(p, tuple(x.shape))
    return x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2).reshape(out)


def _s2d_forward(p, ins, oc):
    x = ins[0]
    n, c, h, w = x.shape
    b = p.block_size
    out = _s2d_shape(p, tuple(x.shape))
    return x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4).reshape(out)


_BLOCK = (Param("block_size", "int", doc="Blocks of [block_size. block_size] are moved"),)
def _needs_input(shape_fn, what):
    """Shape rule of ops whose MXNet rule checks the input's ndim even when it is unknown."""
    def infer(p, ins, outs):
        if ins[0] is None:
            raise ShapeError(what)
        return ins, [shape_fn(p, ins[0])]
    return infer


register(OpDef(
    "depth_to_space", _d2s_forward,
    _needs_input(_d2s_shape, "Operation Depth To Space requires exactly 4D tensor"),
    params=_BLOCK,
    gradient=lambda F, p, ins, outs, ograds: [F.space_to_depth(ograds[0], **p)],
    doc="Rearranges (permutes) data from depth into blocks of spatial data (NCHW, DCR order)."))
register(OpDef(
    "space_to_depth", _s2d_forward,
    _needs_input(_s2d_shape, "Operation Space To Depth requires exactly 4D tensor"),
    params=_BLOCK,
    gradient=lambda F, p, ins, outs, ograds: [F.depth_to_space(ograds[0], **p)],
    doc="Rearranges (permutes) blocks of spatial data into depth (the inverse of\n"
        "depth_to_space)."))


# --- _split_v2 -----------------------------------------------------------------------------------
def _split_v2_bounds(p, shape):
    ax = _norm_axis(p.axis, len(shape))
    n = shape[ax]
    if p.sections > 0:
        if n % p.sections:
            raise ShapeError(f"Input shape {_sh(shape)} along axis {ax} is not divisible by "
                             f"sections {p.sections}")
        step = n // p.sections
        starts = [i * step for i in range(p.sections)]
    else:
        starts = list(p.indices)
    ends = starts[1:] + [n]
    for b, e in zip(starts, ends):
        if not 0 <= b <= e <= n:
            raise ShapeError(f"Invalid indices {tuple(p.indices)} for axis {ax} of size {n}")
    return ax, list(zip(starts, ends))


def _split_v2_outputs(p):
    n = p.sections if p.sections > 0 else len(p.indices)
    return [f"output{i}" for i in range(n)]


def _split_v2_infer(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    ax, bounds = _split_v2_bounds(p, tuple(x))
    res = []
    for b, e in bounds:
        if p.squeeze_axis:
            if e - b != 1:
                raise ShapeError("squeeze_axis requires every piece to have size 1 along axis")
            res.append(tuple(x[:ax]) + tuple(x[ax + 1:]))
        else:
            res.append(tuple(x[:ax]) + (e - b,) + tuple(x[ax + 1:]))
    return ins, res


def _split_v2_forward(p, ins, oc):
    x = ins[0]
    ax, bounds = _split_v2_bounds(p, tuple(x.shape))
    parts = [x.narrow(ax, b, e - b) for b, e in bounds]
    if p.squeeze_axis:
        parts = [t.squeeze(ax) for t in parts]
    return parts[0] if len(parts) == 1 else tuple(parts)


def _split_v2_gradient(F, p, ins, outs, ograds):
    x = ins[0]
    ax, bounds = _split_v2_bounds(p, tuple(x.shape))
    gs = [F.expand_dims(g, axis=ax) for g in ograds] if p.squeeze_axis else list(ograds)
    if bounds[0][0] > 0:
        gs.insert(0, F.zeros_like(F.slice_axis(x, axis=ax, begin=0, end=bounds[0][0])))
    return [gs[0] if len(gs) == 1 else F.Concat(*gs, dim=ax)]


register(OpDef(
    "_split_v2", _split_v2_forward, _split_v2_infer,
    params=(Param("indices", "shape", doc="Indices of splits. The elements should denote the "
                                          "boundaries of at which split is performed along the "
                                          "`axis`."),
            Param("axis", "int", 1, "Axis along which to split."),
            Param("squeeze_axis", "bool", False, "If true, Removes the axis with length 1 from the "
                                                 "shapes of the output arrays."),
            Param("sections", "int", 0, "Number of sections if equally splitted. Default to 0 "
                                        "which means split by indices.")),
    outputs=_split_v2_outputs, gradient=_split_v2_gradient,
    doc="Splits an array along an axis at ``indices`` (piece i is [indices[i],\n"
        "indices[i+1])) or into ``sections`` equal pieces."))


# --- Pad -----------------------------------------------------------------------------------------
def _pad_check(p, x):
    if len(x) not in (4, 5):
        raise ShapeError("Current implementation only supports 4-D or 5-D input.")
    pw = tuple(p.pad_width)
    if len(pw) != 2 * len(x):
        raise ShapeError("Input shape vs padding spec mismatch.")
    if any(pw[:4]):
        raise ShapeError("Current implementation expects padding on the first two axes to be "
                         "zero.")
    if p.mode == "reflect" and any(pw[2 * i] >= d or pw[2 * i + 1] >= d
                                   for i, d in enumerate(x) if i >= 2):
        raise ShapeError("Current implementation of reflection padding only supports padding "
                         "sizes smaller than the input size.")
    return pw


def _pad_shape(p, x):
    pw = _pad_check(p, x)
    return tuple(d + pw[2 * i] + pw[2 * i + 1] for i, d in enumerate(x))


def _pad_torch(p, x):
    pw = _pad_check(p, tuple(x.shape))
    pads = []
    for i in range(x.dim() - 1, 1, -1):
        pads += [pw[2 * i], pw[2 * i + 1]]
    if p.mode == "constant":
        return tF.pad(x, pads, mode="constant", value=p.constant_value)
    return tF.pad(x, pads, mode="replicate" if p.mode == "edge" else "reflect")


def _float_only(p, ins, outs):
    """Pad, im2col and col2im have floating-point kernels only (MXNet's text)."""
    t = ins[0]
    if t is not None and not np.issubdtype(np.dtype(t), np.floating):
        raise TypeInferError(f"This operation only support floating point types, not "
                             f"{np.dtype(t).name}")
    return ins, [t if t is not None else outs[0]]


_PAD_PARAMS = (
    Param("mode", "str", doc="Padding type to use. \"constant\" pads with `constant_value` "
                             "\"edge\" pads using the edge values of the input array \"reflect\" "
                             "pads by reflecting values with respect to the edges.",
          choices=("constant", "edge", "reflect")),
    Param("pad_width", "shape", doc="Widths of the padding regions applied to the edges of each "
                                    "axis. It is a tuple of integer padding widths for each axis "
                                    "of the format ``(before_1, after_1, ... , before_N, "
                                    "after_N)``."),
    Param("constant_value", "float", 0.0, "The value used for padding when `mode` is "
                                          "\"constant\"."))

register(OpDef(
    "Pad", lambda p, ins, oc: _pad_torch(p, ins[0]),
    _needs_input(_pad_shape, "Current implementation only supports 4-D or 5-D input."),
    params=_PAD_PARAMS, aliases=("pad",), infer_type=_float_only,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_Pad(ograds[0], shape=tuple(ins[0].shape), **p)],
    doc="Pads an input array (4-D or 5-D, spatial axes only) with a constant or edge values."))
register(OpDef(
    "_backward_Pad",
    lambda p, ins, oc: _linear_vjp(lambda x: _pad_torch(p, x), tuple(p.shape), ins[0]),
    _vjp_infer, params=_PAD_PARAMS + (Param("shape", "shape", doc="shape of Pad's input"),),
    public=False, doc="Gradient of Pad."))


# --- Crop ----------------------------------------------------------------------------------------
def _crop_box(p, x, like):
    if len(x) != 4:
        raise ShapeError("Input data should be 4D in batch-num_filter-y-x")
    if p.num_args == 2:
        if like is None:
            return None
        h, w = like[2], like[3]
    else:
        h, w = p.h_w
    H, W = x[2], x[3]
    if h > H:
        raise ShapeError("the crop height(h_w[0]) should be less than the input data's height")
    if w > W:
        raise ShapeError("the crop width(h_w[1]) should be less than the input data's width")
    if p.center_crop:
        oy, ox = (H - h) // 2, (W - w) // 2
    else:
        oy, ox = p.offset
        if oy > H - h:
            raise ShapeError("offset[0] should be less than the residual space of height")
        if ox > W - w:
            raise ShapeError("offset[1] should be less than the residual space of width")
    return oy, ox, h, w


def _crop_infer(p, ins, outs):
    x = ins[0]
    if x is None:
        raise ShapeError("Input data should be 4D in batch-num_filter-y-x")
    box = _crop_box(p, x, ins[1] if len(ins) > 1 else None)
    if box is None:
        return ins, outs
    return ins, [tuple(x[:2]) + box[2:]]


def _crop_forward(p, ins, oc):
    x = ins[0]
    oy, ox, h, w = _crop_box(p, tuple(x.shape), tuple(ins[1].shape) if len(ins) > 1 else None)
    return x[:, :, oy:oy + h, ox:ox + w]


def _crop_gradient(F, p, ins, outs, ograds):
    oy, ox, h, w = _crop_box(p, tuple(ins[0].shape),
                             tuple(ins[1].shape) if len(ins) > 1 else None)
    g = F._backward_slice(ograds[0], begin=(None, None, oy, ox), end=(None, None, oy + h, ox + w),
                          shape=tuple(ins[0].shape))
    return [g] + [F.zeros_like(x) for x in ins[1:]]


register(OpDef(
    "Crop", _crop_forward, _crop_infer,
    params=(Param("num_args", "int", doc="Number of inputs for crop, if equals one, then we "
                                         "will use the h_wfor crop height and width, else if "
                                         "equals two, then we will use the heightand width of "
                                         "the second input symbol, we name crop_like here"),
            Param("offset", "shape", (0, 0), "crop offset coordinate: (y, x)"),
            Param("h_w", "shape", (0, 0), "crop height and width: (h, w)"),
            Param("center_crop", "bool", False, "If set to true, then it will use be the "
                                                "center_crop,or it will crop using the shape of "
                                                "crop_like")),
    inputs=lambda p: ["data", "crop_like"][:p.num_args], key_var_num_args="num_args",
    infer_type=lambda p, ins, outs: (ins, [ins[0]]), gradient=_crop_gradient,
    doc="Crops the 2-D spatial part of an NCHW input to ``h_w`` or to ``crop_like``'s size, at\n"
        "``offset`` or centred."))


# --- im2col / col2im -----------------------------------------------------------------------------
def _conv_geometry(p, nsp):
    k = tuple(p.kernel)
    if len(k) != nsp:
        raise ShapeError(f"kernel must have {nsp} dimensions, got {len(k)}")
    s = tuple(p.stride) or (1,) * nsp
    d = tuple(p.dilate) or (1,) * nsp
    pd = tuple(p.pad) or (0,) * nsp
    return k, s, d, pd


def _im2col_shape(p, x):
    nsp = len(p.kernel)
    if len(x) != nsp + 2:
        raise ShapeError(f"im2col: input must be {nsp + 2}-D for a {nsp}-D kernel, got {_sh(x)}")
    k, s, d, pd = _conv_geometry(p, nsp)
    L = 1
    for i in range(nsp):
        o = (x[2 + i] + 2 * pd[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1
        if o <= 0:
            raise ShapeError("kernel size exceed input")
        L *= o
    return (x[0], x[1] * math.prod(k), L)


def _as2d(t, nsp):
    return t.unsqueeze(-1) if nsp == 1 else t


def _pairs(v, nsp, fill):
    return tuple(v) + (fill,) if nsp == 1 else tuple(v)


def _im2col_forward(p, ins, oc):
    x = ins[0]
    nsp = len(p.kernel)
    if nsp not in (1, 2):
        raise ShapeError("im2col: only 1-D and 2-D kernels are supported")
    _im2col_shape(p, tuple(x.shape))
    k, s, d, pd = _conv_geometry(p, nsp)
    return tF.unfold(_as2d(x, nsp), _pairs(k, nsp, 1), dilation=_pairs(d, nsp, 1),
                     padding=_pairs(pd, nsp, 0), stride=_pairs(s, nsp, 1))


def _col2im_forward(p, ins, oc):
    x = ins[0]
    nsp = len(p.kernel)
    if nsp not in (1, 2):
        raise ShapeError("col2im: only 1-D and 2-D kernels are supported")
    k, s, d, pd = _conv_geometry(p, nsp)
    size = _pairs(p.output_size, nsp, 1)
    out = tF.fold(x, size, _pairs(k, nsp, 1), dilation=_pairs(d, nsp, 1),
                  padding=_pairs(pd, nsp, 0), stride=_pairs(s, nsp, 1))
    return out.squeeze(-1) if nsp == 1 else out


def _col2im_shape(p, x):
    nsp = len(p.kernel)
    if len(p.output_size) != nsp:
        raise ShapeError("output_size and kernel must have the same number of dimensions")
    if len(x) != 3:
        raise ShapeError(f"col2im: input must be 3-D, got {_sh(x)}")
    kk = math.prod(p.kernel)
    if x[1] % kk:
        raise ShapeError("the second dim of input shape should be multiples of kernel size")
    c = x[1] // kk
    want = _im2col_shape(p, (x[0], c) + tuple(p.output_size))
    if want[2] != x[2]:
        raise ShapeError(f"col2im: input has {x[2]} blocks, output_size gives {want[2]}")
    return (x[0], c) + tuple(p.output_size)


_CONV_PARAMS = (
    Param("kernel", "shape", doc="Convolution kernel size: (w,), (h, w) or (d, h, w)."),
    Param("stride", "shape", (), "Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 "
                                 "for each dimension."),
    Param("dilate", "shape", (), "Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 "
                                 "for each dimension."),
    Param("pad", "shape", (), "Padding for convolution: (w,), (h, w) or (d, h, w). Defaults to "
                              "no padding."))

register(OpDef(
    "im2col", _im2col_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else _im2col_shape(p, ins[0])]),
    params=_CONV_PARAMS, infer_type=_float_only,
    gradient=lambda F, p, ins, outs, ograds: [
        F.col2im(ograds[0], output_size=tuple(ins[0].shape[2:]), **p)],
    doc="Extracts sliding blocks from a batched input into columns: ``(N, C*prod(kernel),\n"
        "L)``."))
register(OpDef(
    "col2im", _col2im_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else _col2im_shape(p, ins[0])]),
    params=(Param("output_size", "shape", doc="The spatial dimension of image array: (w,), (h, "
                                              "w) or (d, h, w)."),) + _CONV_PARAMS,
    infer_type=_float_only,
    gradient=lambda F, p, ins, outs, ograds: [
        F.im2col(ograds[0], **{k: v for k, v in p.items() if k != "output_size"})],
    doc="Combines columns of sliding blocks back into an array, summing overlaps (the adjoint\n"
        "of im2col)."))


# --- _eye / _linspace / _arange ------------------------------------------------------------------
_CTX = Param("ctx", "str", "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used "
                               "for imperative calls.")


def _creation_dtype(*names, default="float32"):
    return DtypeParam("dtype", "dtype", dtype_np(default), "Target data type.",
                 choices=tuple(dtype_np(n) for n in names))


def _eye_forward(p, ins, oc):
    m = p.M if p.M > 0 else p.N
    vals = np.eye(p.N, m, p.k, dtype=np.float64)
    return torch.from_numpy(vals).to(device=oc.device, dtype=dtype_torch(p.dtype))


def _range_vals(p):
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    if p.step == 0:
        raise ShapeError("Range does not support step=0, received 0")
    n = int(math.ceil((stop - start) / p.step))
    if n <= 0:
        raise ShapeError(f"Invalid range (start, stop, step) = ({_g(start)},{_g(stop)},"
                         f"{_g(p.step)})")
    vals = start + np.arange(n, dtype=np.float64) * p.step
    return np.repeat(vals, p.repeat) if p.repeat != 1 else vals


def _g(v):
    return f"{v:g}"


def _linspace_vals(p):
    if p.num < 0:
        raise ShapeError(f"Number of sequence should be non-negative, received {p.num}")
    if p.num == 0:
        return np.zeros(0)
    div = (p.num - 1) if p.endpoint else p.num
    step = (p.stop - p.start) / div if div > 0 else 0.0
    return p.start + np.arange(p.num, dtype=np.float64) * step


def _values_forward(fn):
    def forward(p, ins, oc):
        return torch.from_numpy(fn(p)).to(device=oc.device, dtype=dtype_torch(p.dtype))
    return forward


def _creation_type(p, ins, outs):
    return ins, [p.dtype]


_NO_GRAD = lambda F, p, ins, outs, ograds: []  # noqa: E731

register(OpDef(
    "_eye", _eye_forward,
    lambda p, ins, outs: (ins, [(p.N, p.M if p.M > 0 else p.N)]),
    params=(Param("N", "int", doc="Number of rows in the output."),
            Param("M", "int", 0, "Number of columns in the output. If 0, defaults to N"),
            Param("k", "int", 0, "Index of the diagonal. 0 (the default) refers to the main "
                                 "diagonal.A positive value refers to an upper diagonal.A "
                                 "negative value to a lower diagonal."),
            _CTX, _creation_dtype("float16", "float32", "float64", "int32", "int64", "int8",
                                  "uint8")),
    inputs=(), aliases=("eye",), infer_type=_creation_type, gradient=_NO_GRAD,
    doc="Returns a 2-D array with ones on the ``k``-th diagonal and zeros elsewhere."))

_RANGE_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")
register(OpDef(
    "_linspace", _values_forward(_linspace_vals),
    lambda p, ins, outs: (ins, [(p.num,)]),
    params=(Param("start", "float", doc="Start of interval."),
            Param("stop", "float", doc="End of interval."),
            Param("num", "int", doc="Number of samples to generate. Must be non-negative."),
            Param("endpoint", "bool", True, "If True, stop is the last sample. Otherwise, it is "
                                            "not included."),
            _CTX, _creation_dtype(*_RANGE_DTYPES)),
    inputs=(), aliases=("linspace",), infer_type=_creation_type, gradient=_NO_GRAD,
    doc="Returns ``num`` evenly spaced samples over ``[start, stop]`` (``stop`` excluded when\n"
        "``endpoint`` is False)."))
register(OpDef(
    "_arange", _values_forward(_range_vals),
    lambda p, ins, outs: (ins, [(len(_range_vals(p)),)]),
    params=(Param("start", "float", doc="Start of interval. The interval includes this value. "
                                        "The default start value is 0."),
            Param("stop", "float", None, "End of interval. The interval does not include this "
                                         "value, except in some cases where step is not an "
                                         "integer and floating point round-off affects the "
                                         "length of out.", optional=True),
            Param("step", "float", 1.0, "Spacing between values."),
            Param("repeat", "int", 1, "The repeating time of all elements. E.g repeat=3, the "
                                      "element a will be repeated three times --> a, a, a."),
            Param("infer_range", "bool", False, "When set to True, infer the stop position from "
                                                "the start, step, repeat, and output tensor "
                                                "size."),
            _CTX, _creation_dtype(*_RANGE_DTYPES)),
    inputs=(), aliases=("arange",), infer_type=_creation_type, gradient=_NO_GRAD,
    doc="Returns evenly spaced values within ``[start, stop)``, each repeated ``repeat`` times."))
