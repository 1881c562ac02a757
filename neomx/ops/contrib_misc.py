"""Smaller ``mx.nd.contrib`` / ``mx.sym.contrib`` operators: arange_like, index_copy, index_array,
allclose, gradientmultiplier, BilinearResize2D, AdaptiveAvgPooling2D and the interleaved
multi-head attention products (interleaved_matmul_selfatt_qk/valatt, encdec_qk/valatt).

Semantics, parameters and check messages follow MXNet 1.9.1 (``src/operator/contrib/
arange_like``/``index_copy.cc``, ``index_array.cc``, ``allclose_op.cc``,
``gradient_multiplier_op.cc``, ``bilinear_resize-inl.h``, ``adaptive_avg_pooling-inl.h``,
``transformer.cc``). Gradients of the layers replay the forward under torch autograd.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from .nn_layers import replay_op
from .registry import OpDef, Param, ShapeError, register, zero_gradient

_I64 = np.dtype(np.int64)
_U8 = np.dtype(np.uint8)


def _check(cond, text):
    if not cond:
        raise ShapeError("Check failed: " + text)


def _ndim_check(i, ndim):
    """MXNet's TShape index check (``shape[i]`` on a too-short shape)."""
    _check(i < ndim, f"i >= 0 && i < ndim(): index = {i} must be in range [0, {ndim})")


# --- arange_like ---------------------------------------------------------------------------------
_ARANGE_PARAMS = (
    Param("start", "float", 0.0, "Start of interval. The interval includes this value. The "
                                 "default start value is 0."),
    Param("step", "float", 1.0, "Spacing between values."),
    Param("repeat", "int", 1, "The repeating time of all elements. E.g repeat=3, the element a "
                              "will be repeated three times --> a, a, a."),
    Param("ctx", "str", "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
                            "imperative calls."),
    Param("axis", "int", None, "Arange elements according to the size of a certain axis of input "
                               "array. If not provided, will arange elements according to the "
                               "input shape.", optional=True),
)


def _arange_like_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    if p.axis is None:
        return [tuple(d)], [tuple(d)]
    axis = p.axis + len(d) if p.axis < 0 else p.axis
    _check(0 <= axis < len(d), f"axis < ndim ({p.axis} vs. {len(d)}) : axis out of range")
    return [tuple(d)], [(d[axis],)]


def _arange_like(p, ins, oc):
    x = ins[0]
    shape = tuple(x.shape) if p.axis is None else (x.shape[p.axis],)
    n = int(np.prod(shape))
    i = torch.arange(n, dtype=torch.float64, device=x.device)
    vals = p.start + torch.div(i, p.repeat, rounding_mode="floor") * p.step
    return vals.to(x.dtype).reshape(shape)


register(OpDef(
    "_contrib_arange_like", _arange_like, _arange_like_shape, params=_ARANGE_PARAMS,
    gradient=zero_gradient, hint="arange_like",
    doc="Return an array with evenly spaced values, shaped like the input (or of the length of\n"
        "its ``axis``): ``start + (i // repeat) * step``, in the input's dtype.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.contrib.arange_like(mx.nd.zeros((2, 3)), start=1).asnumpy().tolist()\n"
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"))


# --- index_copy ----------------------------------------------------------------------------------
def _index_copy_shape(p, ins, outs):
    old, idx, new = ins
    if old is None or idx is None or new is None:
        return ins, outs
    _check(len(idx) == 1, f"in_attrs->at(1).ndim() == 1 ({len(idx)} vs. 1) :")
    _check(idx[0] == new[0], f"in_attrs->at(1)[0] == in_attrs->at(2)[0] ({idx[0]} vs. "
                             f"{new[0]}) :")
    _check(len(old) == len(new), f"in_attrs->at(0).ndim() == in_attrs->at(2).ndim() "
                                 f"({len(old)} vs. {len(new)}) :")
    for i in range(1, len(old)):
        _check(old[i] == new[i], f"in_attrs->at(0)[i] == in_attrs->at(2)[i] ({old[i]} vs. "
                                 f"{new[i]}) :")
    return [tuple(old), tuple(idx), tuple(new)], [tuple(old)]


def _index_copy_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else (ins[2] if ins[2] is not None else outs[0])
    if t is None:
        return ins, outs
    return [t, ins[1] if ins[1] is not None else t, t], [t]


def _index_copy(p, ins):
    old, idx, new = ins
    return old.index_copy(0, idx.detach().to(torch.int64), new)


replay_op(
    "_contrib_index_copy", _index_copy, lambda p, ins, oc: _index_copy(p, ins),
    _index_copy_shape, params=(), inputs=("old_tensor", "index_vector", "new_tensor"),
    no_grad=(1,), zero_grad=True, infer_type=_index_copy_type, hint="index_copy",
    doc="Copies the rows of ``new_tensor`` into ``old_tensor`` at the rows ``index_vector``\n"
        "(row ``i`` of new to row ``index_vector[i]``); the gradient of ``old_tensor`` is the\n"
        "output gradient with those rows zeroed, of ``new_tensor`` the rows read back.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> t = mx.nd.array([[1, 2], [3, 4]])\n"
        ">>> mx.nd.contrib.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([2, 0]), t).asnumpy().tolist()\n"
        "[[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]")


# --- index_array ---------------------------------------------------------------------------------
def _index_array_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    n = len(d) if p.axes is None else len(p.axes)
    return [tuple(d)], [tuple(d) + (n,)]


def _index_array(p, ins, oc):
    x = ins[0]
    nd = x.dim()
    axes = list(range(nd)) if p.axes is None else [a + nd if a < 0 else a for a in p.axes]
    for a in axes:
        if not 0 <= a < nd:
            raise ShapeError(f"index_array: axis {a} out of range for a {nd}-d input")
    grids = torch.meshgrid(*[torch.arange(s, dtype=torch.int64, device=x.device)
                             for s in x.shape], indexing="ij") if nd else []
    if not axes:
        return torch.zeros(tuple(x.shape) + (0,), dtype=torch.int64, device=x.device)
    return torch.stack([grids[a] for a in axes], dim=-1)


register(OpDef(
    "_contrib_index_array", _index_array, _index_array_shape,
    params=(Param("axes", "shape", None, "The axes to include in the index array. Supports "
                                         "negative values.", optional=True),),
    infer_type=lambda p, ins, outs: (ins, [_I64]), gradient=zero_gradient, hint="index_array",
    doc="Returns an array of indexes of the input array: ``out[i, j, ..., k]`` holds the\n"
        "coordinates ``(i, j, ...)`` along ``axes`` (all by default), int64.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.contrib.index_array(mx.nd.zeros((2, 2))).asnumpy().tolist()\n"
        "[[[0, 0], [0, 1]], [[1, 0], [1, 1]]]"))


# --- allclose ------------------------------------------------------------------------------------
_ALLCLOSE_PARAMS = (
    Param("rtol", "float", 1e-5, "Relative tolerance."),
    Param("atol", "float", 1e-8, "Absolute tolerance."),
    Param("equal_nan", "bool", True, "Whether to compare NaN's as equal. If True, NaN's in A will "
                                     "be considered equal to NaN's in B in the output array."),
)


def _allclose_shape(p, ins, outs):
    a, b = ins
    if a is not None and b is not None:
        _check(tuple(a) == tuple(b), f"lshape == rshape : Shape of a {tuple(a)} and shape of b "
                                     f"{tuple(b)} are different")
    return list(ins), [()]


def _allclose(p, ins, oc):
    a, b = ins
    ok = (a - b).abs() <= p.atol + p.rtol * b.abs()
    if p.equal_nan:
        ok |= torch.isnan(a) & torch.isnan(b)
    return ok.all().to(torch.uint8)


register(OpDef(
    "_contrib_allclose", _allclose, _allclose_shape, params=_ALLCLOSE_PARAMS,
    inputs=("a", "b"), hint="allclose",
    infer_type=lambda p, ins, outs: (ins, [_U8]),
    doc="``numpy.allclose`` in the inputs' dtype: 1 (uint8, shape ``()``) when every\n"
        "``|a - b| <= atol + rtol * |b|`` (NaNs equal with ``equal_nan``), else 0.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> int(mx.nd.contrib.allclose(mx.nd.array([1, 2]), mx.nd.array([1, 2.00001])).asscalar())\n"
        "1"))


# --- gradientmultiplier --------------------------------------------------------------------------
register(OpDef(
    "_contrib_gradientmultiplier", lambda p, ins, oc: ins[0].clone(),
    lambda p, ins, outs: (list(ins), [ins[0] if ins[0] is not None else outs[0]]),
    params=(Param("scalar", "float", 1.0, "Scalar input value"),
            Param("is_int", "bool", True, "Indicate whether scalar input is int type")),
    gradient=lambda F, p, ins, outs, ograds: [F._mul_scalar(ograds[0], scalar=p.scalar)],
    hint="gradientmultiplier",
    doc="Identity forward; the gradient is multiplied by ``scalar`` (a gradient reversal layer\n"
        "with a negative scalar)."))


# --- BilinearResize2D ----------------------------------------------------------------------------
_RESIZE_MODES = ("like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")
_RESIZE_PARAMS = (
    Param("height", "int", 1, "output height (required, but ignored if scale_height is defined "
                              "or mode is not \"size\")"),
    Param("width", "int", 1, "output width (required, but ignored if scale_width is defined or "
                             "mode is not \"size\")"),
    Param("scale_height", "float", None, "sampling scale of the height (optional, used in modes "
                                         "\"scale\" and \"odd_scale\")", optional=True),
    Param("scale_width", "float", None, "sampling scale of the width (optional, used in modes "
                                        "\"scale\" and \"odd_scale\")", optional=True),
    Param("mode", "str", "size", "resizing mode", choices=_RESIZE_MODES),
    Param("align_corners", "bool", True, "With align_corners = True, the interpolating doesn't "
                                         "proportionally align theoutput and input pixels, and "
                                         "thus the output values can depend on the input size."),
)


def _resize_inputs(p):
    return ("data", "like") if p.mode == "like" else ("data",)


def _resize_hw(p, h, w, like):
    m = p.mode
    if m == "size":
        return (int(h * p.scale_height) if p.scale_height is not None else p.height,
                int(w * p.scale_width) if p.scale_width is not None else p.width)
    if m == "odd_scale":
        return tuple(int((s - 1) * sc + 1) if s % 2 else int(s * sc)
                     for s, sc in ((h, p.scale_height), (w, p.scale_width)))
    if m == "like":
        return like[2], like[3]
    if m == "to_even_down":
        return h - h % 2, w - w % 2
    if m == "to_even_up":
        return h + h % 2, w + w % 2
    if m == "to_odd_down":
        return (h if h % 2 else h - 1), (w if w % 2 else w - 1)
    return (h if h % 2 else h + 1), (w if w % 2 else w + 1)


def _resize_shape(p, ins, outs):
    d = ins[0]
    if d is None or (p.mode == "like" and ins[1] is None):
        return ins, outs
    _ndim_check(3, len(d))
    if p.mode == "like":
        _ndim_check(3, len(ins[1]))
    if p.mode == "odd_scale" and (p.scale_height is None or p.scale_width is None):
        raise ShapeError("BilinearResize2D: mode 'odd_scale' needs scale_height and scale_width")
    h, w = _resize_hw(p, d[2], d[3], ins[1] if p.mode == "like" else None)
    return [tuple(s) for s in ins], [(d[0], d[1], h, w)]


def _resize(p, ins):
    x = ins[0]
    h, w = _resize_hw(p, x.shape[2], x.shape[3], ins[1].shape if p.mode == "like" else None)
    return TF.interpolate(x, size=(h, w), mode="bilinear", align_corners=p.align_corners)


replay_op(
    "_contrib_BilinearResize2D", _resize, lambda p, ins, oc: _resize(p, ins), _resize_shape,
    params=_RESIZE_PARAMS, inputs=_resize_inputs, no_grad=(1,), zero_grad=True,
    hint="bilinearresize2d",
    doc="Perform 2D resizing (upsampling or downsampling) of (N, C, H, W) input using bilinear\n"
        "interpolation, to ``(height, width)``, the input scaled by ``scale_height`` and\n"
        "``scale_width``, the shape of ``like``, or the nearest even/odd size (``mode``).")


# --- AdaptiveAvgPooling2D ------------------------------------------------------------------------
def _adaptive_hw(p):
    size = tuple(p.output_size)
    return (1, 1) if not size else (size[0], size[0]) if len(size) == 1 else size[:2]


def _adaptive_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    _ndim_check(3, len(d))
    h, w = _adaptive_hw(p)
    return [tuple(d)], [(d[0], d[1], h, w)]


replay_op(
    "_contrib_AdaptiveAvgPooling2D",
    lambda p, ins: TF.adaptive_avg_pool2d(ins[0], _adaptive_hw(p)),
    lambda p, ins, oc: TF.adaptive_avg_pool2d(ins[0], _adaptive_hw(p)), _adaptive_shape,
    params=(Param("output_size", "shape", (), "int (output size) or a tuple of int for output "
                                              "(height, width)."),),
    hint="adaptiveavgpooling2d",
    doc="Applies a 2D adaptive average pooling over (N, C, H, W) input: output bin ``i`` of\n"
        "``output_size`` averages rows ``floor(i*H/oh)`` to ``ceil((i+1)*H/oh)`` (same for\n"
        "columns). ``output_size``: one int for a square output, (height, width), or empty\n"
        "for 1x1.")


# --- interleaved multi-head attention ------------------------------------------------------------
_HEADS = (Param("heads", "int", doc="Set number of heads"),)


def _split_heads(t, heads, parts, which):
    """(L, B, heads*parts*D) -> the ``which`` part as (B*heads, L, D)."""
    length, batch, proj = t.shape
    d = proj // (heads * parts)
    if d * heads * parts != proj:
        raise ShapeError(f"the projection size {proj} is not a multiple of heads * {parts} "
                         f"({heads} * {parts})")
    part = t.reshape(length, batch, heads, parts, d)[:, :, :, which, :]
    return part.permute(1, 2, 0, 3).reshape(batch * heads, length, d)


def _merge_heads(t, heads):
    """(B*heads, L, D) -> (L, B, heads*D)."""
    bh, length, d = t.shape
    return t.reshape(bh // heads, heads, length, d).permute(2, 0, 1, 3).reshape(
        length, bh // heads, heads * d)


def _check_3d(s, name, layout):
    _check(len(s) == 3, f"{name}.ndim() == 3U ({len(s)} vs. 3) : Input {name} should be 3D in "
                        f"{layout}, currently is: {len(s)}D")


def _selfatt_qk_shape(p, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    _check_3d(s, "queries_keys_values", "seq_length-batch-proj_dim")
    return [tuple(s)], [(s[1] * p.heads, s[0], s[0])]


def _selfatt_qk(p, ins):
    qkv = ins[0]
    q = _split_heads(qkv, p.heads, 3, 0)
    k = _split_heads(qkv, p.heads, 3, 1)
    return torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(1, 2))


def _selfatt_valatt_shape(p, ins, outs):
    s, att = ins
    if s is None:
        return ins, outs
    _check_3d(s, "queries_keys_values", "seq_length-batch-proj_dim")
    want = (s[1] * p.heads, s[0], s[0])
    return [tuple(s), want if att is None else tuple(att)], [(s[0], s[1], s[2] // 3)]


def _selfatt_valatt(p, ins):
    qkv, att = ins
    return _merge_heads(torch.bmm(att, _split_heads(qkv, p.heads, 3, 2)), p.heads)


def _encdec_qk_shape(p, ins, outs):
    q, kv = ins
    if q is None or kv is None:
        return ins, outs
    _check_3d(q, "queries", "seq_length-batch-proj_dim")
    _check_3d(kv, "keys_values", "seq_length-batch-proj_dim")
    _check(q[1] == kv[1], f"q_shape[1] == kv_shape[1] ({q[1]} vs. {kv[1]}) : queries.shape[1] "
                          f"should be equal to keys_values.shape[1], currently are: {q[1]} and "
                          f"{kv[1]}")
    return [tuple(q), tuple(kv)], [(q[1] * p.heads, q[0], kv[0])]


def _encdec_qk(p, ins):
    q_in, kv = ins
    length, batch, proj = q_in.shape
    q = _split_heads(q_in, p.heads, 1, 0)
    k = _split_heads(kv, p.heads, 2, 0)
    return torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(1, 2))


def _encdec_valatt_shape(p, ins, outs):
    kv, att = ins
    if kv is None or att is None:
        return ins, outs
    _check_3d(kv, "keys_values", "seq_length-batch-proj_dim")
    return [tuple(kv), tuple(att)], [(att[1], kv[1], kv[2] // 2)]


def _encdec_valatt(p, ins):
    kv, att = ins
    return _merge_heads(torch.bmm(att, _split_heads(kv, p.heads, 2, 1)), p.heads)


for _name, _fn, _shape, _inputs, _doc in (
        ("selfatt_qk", _selfatt_qk, _selfatt_qk_shape, ("queries_keys_values",),
         "q k^T / sqrt(head_dim) of self-attention, from (L, B, heads*head_dim*3) interleaved\n"
         "queries, keys and values (per head: q, k, v); output (B*heads, L, L)."),
        ("selfatt_valatt", _selfatt_valatt, _selfatt_valatt_shape,
         ("queries_keys_values", "attention"),
         "attention @ v of self-attention: ``attention`` (B*heads, L, L) applied to the values of\n"
         "the interleaved (L, B, heads*head_dim*3) projections; output (L, B, heads*head_dim)."),
        ("encdec_qk", _encdec_qk, _encdec_qk_shape, ("queries", "keys_values"),
         "q k^T / sqrt(head_dim) of encoder-decoder attention: ``queries`` (Lq, B,\n"
         "heads*head_dim), interleaved ``keys_values`` (Lk, B, heads*head_dim*2); output\n"
         "(B*heads, Lq, Lk)."),
        ("encdec_valatt", _encdec_valatt, _encdec_valatt_shape, ("keys_values", "attention"),
         "attention @ v of encoder-decoder attention: ``attention`` (B*heads, Lq, Lk) applied to\n"
         "the values of the interleaved (Lk, B, heads*head_dim*2) projections; output (Lq, B,\n"
         "heads*head_dim).")):
    replay_op(f"_contrib_interleaved_matmul_{_name}", _fn,
              (lambda f: lambda p, ins, oc: f(p, ins))(_fn), _shape, params=_HEADS,
              inputs=_inputs, hint=f"interleaved_matmul_{_name}", doc=_doc)
