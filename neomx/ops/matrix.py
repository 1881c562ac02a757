"""Array manipulation: Concat, stack, SliceChannel, transpose, expand_dims, squeeze, slice_axis,
slice, tile, repeat, clip, where, one_hot, topk, Cast.

Shape checks and error texts follow MXNet 1.9.1 (``src/operator/tensor/matrix_op-inl.h``,
``nn/concat.cc``, ``slice_channel-inl.h``, ``ordering_op-inl.h``, ``indexing_op.h``).
"""
from __future__ import annotations

import ast
import math

import numpy as np
import torch

from ..base import bf16_truncate, dtype_np, dtype_torch
from .registry import (merge_shape, OpDef, Param, ShapeError, TypeInferError, register, same_shape,
                       zero_gradient, _sh)


def _norm_axis(axis: int, ndim: int) -> int:
    """``axis`` in ``[-ndim, ndim)`` made non-negative (MXNet's CheckAxis)."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} exceeds the input dimension of {ndim}")
    return axis % ndim


def _known(shapes):
    return next((s for s in shapes if s is not None), None)


def _variadic_inputs(p):
    return [f"arg{i}" for i in range(p.num_args)]


# --- Concat --------------------------------------------------------------------------------------
def _concat_infer_shape(p, ins, outs):
    """MXNet's rule: the dimensions other than ``dim`` are shared by every input and the output
    (completed from whichever knows them); the output's ``dim`` is the inputs' sum when it is
    known for every input. Nothing is inferred backwards into an input's ``dim``."""
    known = [s for s in list(ins) + [outs[0]] if s is not None]
    if not known:
        return ins, outs
    nd = len(known[0])
    ax = _norm_axis(p.dim, nd)
    common = [0] * nd
    for s in known:
        if len(s) != nd:
            raise ShapeError(f"Incompatible input shape: expected {_sh(_concat_tmpl(common, ax))}, "
                             f"got {_sh(s)}")
        for i, d in enumerate(s):
            if i != ax and d:
                if common[i] and common[i] != d:
                    raise ShapeError(f"Incompatible input shape: expected "
                                     f"{_sh(_concat_tmpl(common, ax))}, got {_sh(s)}")
                common[i] = d
    new_ins = []
    for s in ins:
        new_ins.append(tuple(d if i == ax else common[i] for i, d in enumerate(s if s is not None
                                                                            else [0] * nd)))
    # As MXNet 1.9.1: an input whose shape is wholly unknown does not count (the output's
    # ``dim`` is then the sum over the others); a known shape with an unknown ``dim`` does.
    if all(s is None or s[ax] for s in ins):
        total = sum(s[ax] for s in ins if s is not None)
        if outs[0] is not None and outs[0][ax] and outs[0][ax] != total:
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(outs[0])}, inferred shape="
                             f"{_sh(tuple(total if i == ax else d for i, d in enumerate(common)))}")
        common[ax] = total
    elif outs[0] is not None:
        common[ax] = outs[0][ax]
    return new_ins, [tuple(common)]


def _concat_tmpl(common, ax):
    return tuple(-1 if i == ax else d for i, d in enumerate(common))


def _concat_gradient(F, p, ins, outs, ograds):
    g = ograds[0]
    if len(ins) == 1:
        return [g]
    ax = p.dim % g.ndim
    grads, begin = [], 0
    for x in ins:
        end = begin + x.shape[ax]
        grads.append(F.slice_axis(g, axis=ax, begin=begin, end=end))
        begin = end
    return grads


register(OpDef(
    "Concat", lambda p, ins, oc: torch.cat(list(ins), dim=p.dim), _concat_infer_shape,
    params=(Param("num_args", "int", doc="Number of inputs to be concated."),
            Param("dim", "int", 1, "the dimension to be concated.")),
    inputs=_variadic_inputs, aliases=("concat",), hint="concat", key_var_num_args="num_args",
    gradient=_concat_gradient,
    doc="Joins input arrays along a given axis.\n\n"
        "All dimensions except ``dim`` must match; the output's ``dim`` is the sum of the\n"
        "inputs'."))


# --- stack ---------------------------------------------------------------------------------------
def _stack_infer_shape(p, ins, outs):
    """Every input has one shape; the output inserts the count at ``axis`` (MXNet infers
    forwards only: inputs are not completed from the output)."""
    first = None
    for s in ins:
        if s is not None:
            if first is None:
                first = s
            else:
                m = merge_shape(first, s)
                if m is None:
                    raise ShapeError(f"Shape inconsistent, Provided = {_sh(s)}, "
                                     f"inferred shape={_sh(first)}")
                first = m
    if first is None or any(s is None for s in ins):
        return ins, outs
    ax = _norm_axis(p.axis, len(first) + 1)
    return ins, [first[:ax] + (len(ins),) + first[ax:]]


def _stack_forward(p, ins, oc):
    return torch.stack(list(ins), dim=_norm_axis(p.axis, ins[0].dim() + 1))


def _stack_gradient(F, p, ins, outs, ograds):
    ax = _norm_axis(p.axis, ins[0].ndim + 1)
    parts = F.SliceChannel(ograds[0], num_outputs=len(ins), axis=ax, squeeze_axis=True)
    return list(parts) if len(ins) > 1 else [parts]


register(OpDef(
    "stack", _stack_forward, _stack_infer_shape,
    params=(Param("axis", "int", 0, "The axis in the result array along which the input arrays "
                                    "are stacked."),
            Param("num_args", "int", doc="Number of inputs to be stacked.")),
    inputs=_variadic_inputs, key_var_num_args="num_args", gradient=_stack_gradient,
    doc="Joins a sequence of arrays of one shape along a new axis."))


# --- SliceChannel / split ------------------------------------------------------------------------
def _split_piece(p, shape):
    ax = _norm_axis(p.axis, len(shape))
    n = p.num_outputs
    if shape[ax] % n:
        raise ShapeError(
            f"You are trying to split the {ax}-th axis of input tensor with shape {_sh(shape)} "
            f"into num_outputs={n} evenly sized chunks, but this is not possible because {n} "
            f"does not evenly divide {shape[ax]}")
    if p.squeeze_axis:
        if shape[ax] != n:
            raise ShapeError(f"If squeeze axis is True, the size of the sliced axis must be the "
                             f"same as num_outputs. Input shape={_sh(shape)}, axis={p.axis}, "
                             f"num_outputs={n}.")
        return ax, shape[:ax] + shape[ax + 1:]
    return ax, shape[:ax] + (shape[ax] // n,) + shape[ax + 1:]


def _split_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        if any(o is None for o in outs) or p.squeeze_axis:
            return ins, outs
        ax = _norm_axis(p.axis, len(outs[0]))
        x = outs[0][:ax] + (sum(o[ax] for o in outs),) + outs[0][ax + 1:]
    _, piece = _split_piece(p, x)
    return [x], [piece] * p.num_outputs


def _split_forward(p, ins, oc):
    x = ins[0]
    ax, _ = _split_piece(p, tuple(x.shape))
    parts = torch.chunk(x, p.num_outputs, dim=ax)
    if p.squeeze_axis:
        parts = [t.squeeze(ax) for t in parts]
    return parts[0] if p.num_outputs == 1 else tuple(parts)


def _split_gradient(F, p, ins, outs, ograds):
    x = ins[0]
    ax = _norm_axis(p.axis, x.ndim)
    gs = list(ograds)
    if p.squeeze_axis:
        gs = [F.expand_dims(g, axis=ax) for g in gs]
    return [gs[0] if len(gs) == 1 else F.Concat(*gs, dim=ax)]


register(OpDef(
    "SliceChannel", _split_forward, _split_infer_shape,
    params=(Param("num_outputs", "int", doc="Number of splits. Note that this should evenly "
                                            "divide the length of the `axis`."),
            Param("axis", "int", 1, "Axis along which to split."),
            Param("squeeze_axis", "bool", False, "If true, Removes the axis with length 1 from the "
                                                 "shapes of the output arrays.")),
    outputs=lambda p: [f"output{i}" for i in range(p.num_outputs)], aliases=("split",),
    gradient=_split_gradient,
    doc="Splits an array along a particular axis into ``num_outputs`` equal parts.\n\n"
        "With ``squeeze_axis=True`` the split axis (then of size 1) is removed."))


# --- transpose -----------------------------------------------------------------------------------
def _perm(p, ndim):
    axes = tuple(p.axes)
    if not axes:
        return tuple(range(ndim - 1, -1, -1))
    if len(axes) != ndim:
        raise ShapeError(f"transpose: axes {axes} must list all {ndim} axes of the input")
    if sorted(axes) != list(range(ndim)):
        raise ShapeError(f"transpose: axes {axes} is not a permutation of [0, {ndim})")
    return axes


def _transpose_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        y = outs[0]
        if y is None:
            return ins, outs
        perm = _perm(p, len(y))
        inv = [0] * len(perm)
        for i, a in enumerate(perm):
            inv[a] = i
        return [tuple(y[inv[i]] for i in range(len(y)))], outs
    perm = _perm(p, len(x))
    return ins, [tuple(x[a] for a in perm)]


def _transpose_gradient(F, p, ins, outs, ograds):
    perm = _perm(p, ins[0].ndim)
    inv = [0] * len(perm)
    for i, a in enumerate(perm):
        inv[a] = i
    return [F.transpose(ograds[0], axes=tuple(inv))]


register(OpDef(
    "transpose", lambda p, ins, oc: ins[0].permute(*_perm(p, ins[0].dim())),
    _transpose_infer_shape,
    params=(Param("axes", "shape", (), "Target axis order. By default the axes will be "
                                       "inverted."),),
    gradient=_transpose_gradient,
    doc="Permutes the dimensions of an array (reverses them when ``axes`` is empty)."))


# --- expand_dims / squeeze -----------------------------------------------------------------------
def _reshape_back(F, p, ins, outs, ograds):
    return [F.Reshape(ograds[0], shape=tuple(ins[0].shape))]


def _expand_axis(axis, ndim):
    if not -ndim - 1 <= axis <= ndim:
        # MXNet 1.9.1 prints the range as [-ndim, ndim] while accepting -ndim-1.
        raise ShapeError(f"axis must be in the range [{-ndim}, {ndim}] ({axis} provided)")
    return axis + ndim + 1 if axis < 0 else axis


def _expand_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        y = outs[0]
        if y is None:
            return ins, outs
        ax = _expand_axis(p.axis, len(y) - 1)
        return [y[:ax] + y[ax + 1:]], outs
    ax = _expand_axis(p.axis, len(x))
    return ins, [x[:ax] + (1,) + x[ax:]]


register(OpDef(
    "expand_dims", lambda p, ins, oc: ins[0].unsqueeze(_expand_axis(p.axis, ins[0].dim())),
    _expand_infer_shape,
    params=(Param("axis", "int", doc="Position where new axis is to be inserted. Suppose that "
                                     "the input NDArray's dimension is ndim, the range of the "
                                     "inserted axis is [-ndim-1, ndim]"),),
    gradient=_reshape_back,
    doc="Inserts a new axis of size 1 into the array shape."))


def _squeeze_shape(p, shape):
    nd = len(shape)
    if p.axis is None:
        out = tuple(d for d in shape if d != 1)
    else:
        axes = (p.axis,) if isinstance(p.axis, int) else tuple(p.axis)
        norm = [_norm_axis(a, nd) for a in axes]
        if len(set(norm)) != len(norm):
            raise ShapeError("duplicate value in axis")
        for a in norm:
            if shape[a] != 1:
                raise ShapeError(f"cannot select an axis to squeeze out which has size={shape[a]} "
                                 f"not equal to one")
        out = tuple(d for i, d in enumerate(shape) if i not in norm)
    return out if out else (1,)


register(OpDef(
    "squeeze", lambda p, ins, oc: ins[0].reshape(_squeeze_shape(p, tuple(ins[0].shape))),
    lambda p, ins, outs: (ins, [None if ins[0] is None else _squeeze_shape(p, ins[0])]),
    params=(Param("axis", "axis", None, "Selects a subset of the single-dimensional entries in "
                                        "the shape. If an axis is selected with shape entry "
                                        "greater than one, an error is raised.", optional=True),),
    gradient=_reshape_back,
    doc="Removes single-dimensional entries from the shape (all of them when ``axis`` is None).\n\n"
        "Squeezing every axis away gives shape ``(1,)``."))


# --- slice_axis ----------------------------------------------------------------------------------
def _slice_axis_range(p, shape):
    nd = len(shape)
    ax = p.axis + nd if p.axis < 0 else p.axis
    if not 0 <= ax < nd:
        raise ShapeError(f"Transformed axis must be smaller than the source ndim and larger than "
                         f"zero! Recieved axis={p.axis}, src_ndim={nd}, transformed axis={ax}")
    size = shape[ax]
    begin = p.begin + size if p.begin < 0 else p.begin
    end = size if p.end is None else (p.end + size if p.end < 0 else p.end)
    if end > size:
        raise ShapeError(f"Invalid end for end={p.end} as axis_size is {size}")
    if not begin < end:
        raise ShapeError(f"Invalid begin, end, get begin={p.begin}, end={p.end}")
    if begin < 0:
        raise ShapeError(f"Invalid begin for begin={p.begin}")
    return ax, begin, end


def _slice_axis_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    ax, b, e = _slice_axis_range(p, x)
    return ins, [x[:ax] + (e - b,) + x[ax + 1:]]


def _slice_axis_forward(p, ins, oc):
    ax, b, e = _slice_axis_range(p, tuple(ins[0].shape))
    return ins[0].narrow(ax, b, e - b)


def _backward_slice_axis(p, ins, oc):
    g = ins[0]
    ax, b, e = _slice_axis_range(p, tuple(p.shape))
    out = g.new_zeros(tuple(p.shape))
    out.narrow(ax, b, e - b).copy_(g)
    return out


_SLICE_AXIS_PARAMS = (
    Param("axis", "int", doc="Axis along which to be sliced, supports negative indexes."),
    Param("begin", "int", doc="The beginning index along the axis to be sliced, supports "
                              "negative indexes."),
    Param("end", "int", None, "The ending index along the axis to be sliced, supports negative "
                              "indexes (None: to the end).", optional=True))

register(OpDef(
    "slice_axis", _slice_axis_forward, _slice_axis_infer_shape, params=_SLICE_AXIS_PARAMS,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_slice_axis(ograds[0], shape=tuple(ins[0].shape), **p)],
    doc="Slices along a given axis: ``[begin, end)``; ``end=None`` runs to the end."))
register(OpDef(
    "_backward_slice_axis", _backward_slice_axis,
    lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=_SLICE_AXIS_PARAMS + (Param("shape", "shape", doc="shape of the sliced input"),),
    inputs=("out_grad",), public=False,
    doc="Gradient of slice_axis: the head gradient placed in a zero array."))


# --- slice ---------------------------------------------------------------------------------------
def _opt_tuple(v):
    """``begin``/``end``/``step`` text: a tuple whose entries are ints or None."""
    if v is None:
        return ()
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "None"):
            return ()
        v = ast.literal_eval(s)
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(None if x is None else int(x) for x in v)


def _slice_ranges(p, shape):
    """One ``(start, stop, step)`` per sliced axis, Python slicing rules (as MXNet's)."""
    begin, end, step = _opt_tuple(p.begin), _opt_tuple(p.end), _opt_tuple(p.step)
    if len(begin) > len(shape):
        raise ShapeError("Slicing axis exceeds data dimensions")
    if len(begin) != len(end):
        raise ShapeError("begin and end must have the same length")
    if step and len(step) != len(begin):
        raise ShapeError("step and begin must have the same length")
    ranges = []
    for i, (b, e) in enumerate(zip(begin, end)):
        s = step[i] if step and step[i] is not None else 1
        if s == 0:
            raise ShapeError(f"slice op step[{i}] cannot be 0")
        ranges.append(slice(b, e, s).indices(shape[i]))
    return ranges


def _slice_shape(p, shape):
    rs = _slice_ranges(p, shape)
    return tuple(len(range(*r)) for r in rs) + tuple(shape[len(rs):])


def _slice_index(t, rs):
    """Index tensors selecting the slice (advanced indexing, so negative steps work)."""
    dev = t.device
    return [torch.arange(*r, device=dev) for r in rs]


def _slice_forward(p, ins, oc):
    x = ins[0]
    rs = _slice_ranges(p, tuple(x.shape))
    if all(r[2] > 0 for r in rs):
        return x[tuple(slice(*r) for r in rs)]
    out = x
    for ax, idx in enumerate(_slice_index(x, rs)):
        out = out.index_select(ax, idx)
    return out


def _backward_slice(p, ins, oc):
    g = ins[0]
    shape = tuple(p.shape)
    rs = _slice_ranges(p, shape)
    out = g.new_zeros(shape)
    if all(r[2] > 0 for r in rs):
        out[tuple(slice(*r) for r in rs)] = g
        return out
    idx = _slice_index(g, rs)
    grids = torch.meshgrid(*idx, indexing="ij") if idx else ()
    out[tuple(grids)] = g
    return out


_SLICE_PARAMS = (
    Param("begin", "str", doc="starting indices for the slice operation, supports negative "
                              "indices (entries may be None)."),
    Param("end", "str", doc="ending indices for the slice operation, supports negative "
                            "indices (entries may be None)."),
    Param("step", "str", "()", "step for the slice operation, supports negative values."))

register(OpDef(
    "slice", _slice_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else _slice_shape(p, ins[0])]),
    params=_SLICE_PARAMS, aliases=("crop",),
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_slice(ograds[0], shape=tuple(ins[0].shape), **p)],
    doc="Slices a region of the array: per axis ``begin:end:step`` with Python rules; axes\n"
        "beyond ``len(begin)`` are kept whole."))
register(OpDef(
    "_backward_slice", _backward_slice, lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=_SLICE_PARAMS + (Param("shape", "shape", doc="shape of the sliced input"),),
    inputs=("out_grad",), public=False,
    doc="Gradient of slice: the head gradient scattered into a zero array."))


# --- tile / repeat -------------------------------------------------------------------------------
def _tile_dims(p, shape):
    reps = tuple(p.reps)
    m = max(len(reps), len(shape))
    return (1,) * (m - len(shape)) + tuple(shape), (1,) * (m - len(reps)) + reps


def _tile_shape(p, shape):
    if not p.reps:
        return tuple(shape)
    xs, rs = _tile_dims(p, shape)
    return tuple(s * r for s, r in zip(xs, rs))


def _tile_forward(p, ins, oc):
    x = ins[0]
    if not p.reps:
        return x
    xs, rs = _tile_dims(p, tuple(x.shape))
    return x.reshape(xs).repeat(*rs)


def _tile_gradient(F, p, ins, outs, ograds):
    x = ins[0]
    if not p.reps:
        return [ograds[0]]
    xs, rs = _tile_dims(p, tuple(x.shape))
    g = F.Reshape(ograds[0], shape=tuple(d for pair in zip(rs, xs) for d in pair))
    g = F.sum(g, axis=tuple(range(0, 2 * len(xs), 2)))
    return [F.Reshape(g, shape=tuple(x.shape))]


register(OpDef(
    "tile", _tile_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None or 0 in ins[0] else _tile_shape(p, ins[0])]),
    params=(Param("reps", "shape", doc="The number of times for repeating the tensor a. Each dim "
                                       "size of reps must be a positive integer."),),
    gradient=_tile_gradient,
    doc="Repeats the whole array ``reps`` times along each axis (numpy.tile)."))


def _repeat_shape(p, shape):
    if p.repeats < 0:
        raise ShapeError(f"repeats should be a non-negative integer, got {p.repeats}")
    if p.axis is None:
        return (math.prod(shape) * p.repeats,)
    ax = _norm_axis(p.axis, len(shape))
    return shape[:ax] + (shape[ax] * p.repeats,) + shape[ax + 1:]


def _repeat_forward(p, ins, oc):
    x = ins[0]
    if p.axis is None:
        return torch.repeat_interleave(x.reshape(-1), p.repeats)
    return torch.repeat_interleave(x, p.repeats, dim=_norm_axis(p.axis, x.dim()))


def _repeat_gradient(F, p, ins, outs, ograds):
    x = ins[0]
    shape = tuple(x.shape)
    if p.axis is None:
        g = F.Reshape(ograds[0], shape=(math.prod(shape), p.repeats))
        return [F.Reshape(F.sum(g, axis=1), shape=shape)]
    ax = _norm_axis(p.axis, len(shape))
    g = F.Reshape(ograds[0], shape=shape[:ax + 1] + (p.repeats,) + shape[ax + 1:])
    return [F.Reshape(F.sum(g, axis=ax + 1), shape=shape)]


register(OpDef(
    "repeat", _repeat_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else _repeat_shape(p, ins[0])]),
    params=(Param("repeats", "int", doc="The number of repetitions for each element."),
            Param("axis", "int", None, "The axis along which to repeat values. The negative "
                                       "numbers are interpreted counting from the backward. By "
                                       "default, use the flattened input array, and return a "
                                       "flat output array.", optional=True)),
    gradient=_repeat_gradient,
    doc="Repeats each element ``repeats`` times along ``axis`` (flattened when None)."))


# --- clip ----------------------------------------------------------------------------------------
def _clip_forward(p, ins, oc):
    x = ins[0]
    lo, hi = p.a_min, p.a_max
    if not x.dtype.is_floating_point:
        lo, hi = int(lo), int(hi)  # MXNet casts the bounds to the array's dtype
    return torch.clamp(x, min=lo, max=hi)


def _clip_gradient(F, p, ins, outs, ograds):
    x, g = ins[0], ograds[0]
    inside = F.elemwise_mul(F._greater_equal_scalar(x, scalar=p.a_min),
                            F._lesser_equal_scalar(x, scalar=p.a_max))
    return [F.elemwise_mul(g, inside)]


register(OpDef(
    "clip", _clip_forward, same_shape,
    params=(Param("a_min", "float", doc="Minimum value"),
            Param("a_max", "float", doc="Maximum value")),
    gradient=_clip_gradient,
    doc="Clips the values of an array to ``[a_min, a_max]``.\n\n"
        "The gradient passes where ``a_min <= x <= a_max`` (bounds included) and is 0 elsewhere."))


# --- where ---------------------------------------------------------------------------------------
def _where_infer_shape(p, ins, outs):
    cond, x, y = ins
    known = _known([x, y, outs[0]])
    if known is not None:
        for s in (x, y, outs[0]):
            if s is not None and s != known:
                raise ShapeError(f"Shape inconsistent, Provided = {_sh(s)}, inferred shape="
                                 f"{_sh(known)}")
    if cond is not None and known is not None and cond != known:
        if len(cond) != 1 or cond[0] != known[0]:
            raise ShapeError(f"condition shape {_sh(cond)} must be the data shape {_sh(known)} or "
                             f"({known[0]},)")
    if known is None:
        return ins, outs
    return [cond, known, known], [known]


def _where_infer_type(p, ins, outs):
    known = _known([ins[1], ins[2], outs[0]])
    if known is None:
        return ins, outs
    for i, t in ((1, ins[1]), (2, ins[2])):
        if t is not None and np.dtype(t) != np.dtype(known):
            raise TypeInferError(f"at {i}-th input: expected {np.dtype(known).name}, got "
                                 f"{np.dtype(t).name}")
    return [ins[0], known, known], [known]


def _cond_mask(cond, like):
    mask = cond != 0
    if mask.dim() != like.dim():
        mask = mask.reshape(mask.shape + (1,) * (like.dim() - 1))
    return mask


def _where_forward(p, ins, oc):
    cond, x, y = ins
    return torch.where(_cond_mask(cond, x), x, y)


def _backward_where(p, ins, oc):
    g, cond = ins
    mask = _cond_mask(cond, g)
    zero = torch.zeros((), dtype=g.dtype, device=g.device)
    return torch.where(mask, g, zero), torch.where(mask, zero, g)


register(OpDef(
    "where", _where_forward, _where_infer_shape, inputs=("condition", "x", "y"),
    infer_type=_where_infer_type,
    gradient=lambda F, p, ins, outs, ograds: [F.zeros_like(ins[0])] + list(
        F._backward_where(ograds[0], ins[0])),
    doc="Takes elements from ``x`` where ``condition`` is non-zero, else from ``y``.\n\n"
        "``condition`` has the shape of ``x`` or is 1-D of length ``x.shape[0]`` (picks rows)."))
register(OpDef(
    "_backward_where", _backward_where,
    lambda p, ins, outs: (ins, [ins[0], ins[0]]),
    inputs=("out_grad", "condition"), outputs=("x_grad", "y_grad"),
    infer_type=lambda p, ins, outs: (ins, [ins[0], ins[0]]), public=False,
    doc="Gradient of where for x and y."))


# --- one_hot -------------------------------------------------------------------------------------
_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")
_DTYPE_CHOICES = tuple(dtype_np(d) for d in _DTYPES)


def _one_hot_forward(p, ins, oc):
    ind = ins[0]
    idx = ind.to(torch.int64)  # truncation toward zero, like MXNet's static_cast<int>
    valid = (idx >= 0) & (idx < p.depth)
    dt = dtype_torch(p.dtype)
    out = torch.full(tuple(ind.shape) + (p.depth,), p.off_value, dtype=dt, device=ind.device)
    out.scatter_(-1, torch.where(valid, idx, 0).unsqueeze(-1),
                 torch.where(valid, p.on_value, p.off_value).to(dt).unsqueeze(-1))
    return out


register(OpDef(
    "one_hot", _one_hot_forward,
    lambda p, ins, outs: (ins, [None if ins[0] is None else tuple(ins[0]) + (p.depth,)]),
    params=(Param("depth", "int", doc="Depth of the one hot dimension."),
            Param("on_value", "float", 1.0, "The value assigned to the locations represented by "
                                            "indices."),
            Param("off_value", "float", 0.0, "The value assigned to the locations not represented "
                                             "by indices."),
            Param("dtype", "dtype", np.float32, "DType of the output", choices=_DTYPE_CHOICES)),
    inputs=("indices",), gradient=zero_gradient,
    infer_type=lambda p, ins, outs: (ins, [p.dtype]),
    doc="Returns a one-hot array: ``out[i..., k] = on_value if k == int(indices[i...]) else\n"
        "off_value``; indices outside ``[0, depth)`` give a row of ``off_value``."))


# --- Cast ----------------------------------------------------------------------------------------
def _cast(x, dt):
    # to bfloat16, MXNet's (mshadow's) conversion truncates
    return bf16_truncate(x) if dt is torch.bfloat16 else x.to(dt)


register(OpDef(
    "Cast", lambda p, ins, oc: _cast(ins[0], dtype_torch(p.dtype)), same_shape,
    params=(Param("dtype", "dtype", doc="Output data type.",
                  choices=_DTYPE_CHOICES + (np.bool_,)),),
    aliases=("cast",), infer_type=lambda p, ins, outs: (ins, [p.dtype]),
    gradient=lambda F, p, ins, outs, ograds: [F.Cast(ograds[0], dtype=ins[0].dtype)],
    doc="Casts all elements of the input to a new type (float to int truncates toward zero)."))


# --- topk ----------------------------------------------------------------------------------------
def _topk_outputs(p):
    """Visible outputs: 'value' has a hidden second output (the indices) and so is 'output0'."""
    return {"both": ("output0", "output1"), "value": ("output0",)}.get(p.ret_typ, ("output",))


def _topk_geometry(p, shape):
    """(axis or None, k, output shape of values/indices)."""
    if p.axis is None:
        n = math.prod(shape)
        ax, out_of = None, lambda k: (k,)
    else:
        ax = _norm_axis(p.axis, len(shape))
        n = shape[ax]
        out_of = lambda k: shape[:ax] + (k,) + shape[ax + 1:]  # noqa: E731
    k = p.k if p.k >= 1 else n
    if k > n:
        raise ShapeError(f"k must be smaller than {n}, get k = {k}")
    return ax, k, out_of(k)


def _topk_infer_shape(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    _, _, target = _topk_geometry(p, tuple(x))
    if p.ret_typ == "mask":
        return ins, [tuple(x)]
    return ins, [target] * (2 if p.ret_typ in ("value", "both") else 1)


def _topk_infer_type(p, ins, outs):
    t = ins[0]
    if t is None:
        return ins, outs
    if p.ret_typ == "indices":
        return ins, [p.dtype]
    if p.ret_typ == "mask":
        return ins, [t]
    return ins, [t, p.dtype]


def _topk_forward(p, ins, oc):
    x = ins[0]
    ax, k, _ = _topk_geometry(p, tuple(x.shape))
    src = x.reshape(-1) if ax is None else x
    dim = 0 if ax is None else ax
    # stable sort: ties keep the lower index first, in either direction (as MXNet does)
    vals, idx = torch.sort(src, dim=dim, descending=not p.is_ascend, stable=True)
    vals, idx = vals.narrow(dim, 0, k), idx.narrow(dim, 0, k)
    if p.ret_typ == "mask":
        mask = torch.zeros_like(src).scatter_(dim, idx, 1)
        return mask.reshape(x.shape)
    idx_out = idx.to(dtype_torch(p.dtype))
    if p.ret_typ == "indices":
        return idx_out
    return vals, idx_out


def _topk_gradient(F, p, ins, outs, ograds):
    if p.ret_typ in ("indices", "mask"):
        return zero_gradient(F, p, ins, outs, ograds)
    # axis=None sorts the flattened input: the backward scatters into a flat buffer
    return [F._backward_topk(ograds[0], outs[1], shape=tuple(ins[0].shape),
                             axis=-1 if p.axis is None else p.axis, flat=p.axis is None)]


def _backward_topk(p, ins, oc):
    g, idx = ins
    shape = tuple(p.shape)
    idx = idx.to(torch.int64)
    if p.flat:
        return g.new_zeros(math.prod(shape)).scatter_add_(0, idx, g).reshape(shape)
    return g.new_zeros(shape).scatter_add_(_norm_axis(p.axis, len(shape)), idx, g)


_TOPK_DTYPES = tuple(dtype_np(d) for d in ("uint8", "int32", "int64", "float16", "float32",
                                            "float64"))
register(OpDef(
    "topk", _topk_forward, _topk_infer_shape,
    params=(Param("axis", "int", -1, "Axis along which to choose the top k indices. If not given, "
                                     "the flattened array is used.", optional=True),
            Param("k", "int", 1, "Number of top elements to select; k < 1 selects all."),
            Param("ret_typ", "str", "indices", "The return type.",
                  choices=("both", "indices", "mask", "value")),
            Param("is_ascend", "bool", False, "Whether to choose k largest or k smallest elements."),
            Param("dtype", "dtype", np.float32, "DType of the output indices.",
                  choices=_TOPK_DTYPES)),
    outputs=_topk_outputs,
    num_hidden_outputs=lambda p: 1 if p.ret_typ == "value" else 0,
    infer_type=_topk_infer_type, gradient=_topk_gradient,
    doc="Returns the top ``k`` elements along an axis.\n\n"
        "ret_typ: 'indices' (as ``dtype``), 'value', 'both' (values, indices) or 'mask' (1 at\n"
        "the chosen positions). Ties go to the lower index."))
register(OpDef(
    "_backward_topk", _backward_topk, lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=(Param("shape", "shape", doc="shape of topk's input"),
            Param("axis", "int", -1, "topk's axis"),
            Param("flat", "bool", False, "topk ran on the flattened input")),
    inputs=("out_grad", "indices"),
    infer_type=lambda p, ins, outs: (ins, [ins[0]]), public=False,
    doc="Gradient of topk: the head gradient scattered back to the chosen positions."))
