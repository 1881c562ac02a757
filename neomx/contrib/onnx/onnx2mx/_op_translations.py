"""One converter per ONNX operator: ``convert(g, node, attrs) -> Symbol or list of Symbols``.

``g`` is the :class:`~.import_onnx.GraphProto` being built: ``g.sym(i)`` is the node's i-th
input as a Symbol (a weight becomes a Variable named after its initializer), ``g.const(i)`` its
value as a numpy array when it is a constant (shapes, pads, axes, ...), and ``g.name`` the
node's name, given to the operator that produces its output (as MXNet's importer does).
"""
from __future__ import annotations

import numpy as np

from ....base import MXNetError
from .... import symbol
from ....symbol import _internal

TABLE = {}


def converter(*names):
    def deco(fn):
        for n in names:
            TABLE[n] = fn
        return fn
    return deco


def _simple(onnx_op, mx_op, **fixed):
    TABLE[onnx_op] = lambda g, node, a: getattr(symbol, mx_op)(g.sym(0), name=g.name, **fixed)


for _onnx_op, _mx_op in [("Relu", "relu"), ("Sigmoid", "sigmoid"), ("Tanh", "tanh"),
                         ("Identity", "identity"), ("Exp", "exp"), ("Log", "log"),
                         ("Sqrt", "sqrt"), ("Neg", "negative"), ("Abs", "abs"),
                         ("Softsign", "softsign"), ("Reciprocal", "reciprocal"),
                         ("Floor", "floor"), ("Ceil", "ceil")]:
    _simple(_onnx_op, _mx_op)
_simple("Softplus", "Activation", act_type="softrelu")
_simple("Selu", "LeakyReLU", act_type="selu")


def _pads(pads, n):
    """ONNX's (x1_begin, x2_begin, ..., x1_end, x2_end) as (begins, ends) of n axes."""
    pads = [int(v) for v in pads] if pads else [0] * (2 * n)
    return tuple(pads[:n]), tuple(pads[n:])


def _pad_before(x, begins, ends, mode, name):
    """MXNet's pad operator on the spatial axes (its convolutions pad symmetrically only)."""
    width = (0, 0, 0, 0) + tuple(v for be in zip(begins, ends) for v in be)
    return symbol.pad(x, mode=mode, pad_width=width, name=name + "_pad")


def _param_shape(g, i):
    value = g.param(i)
    if value is None:
        raise MXNetError(f"ONNX import: {g.node_desc} needs its input {i} to be an initializer "
                         "(its shape gives the operator's size)")
    return value.shape


# --- arithmetic -----------------------------------------------------------------------------------

def _binary(mx_op, scalar_op, rscalar_op):
    def convert(g, node, a):
        if a.get("broadcast") == 1 and "axis" in a:
            raise MXNetError("ONNX import: legacy Add/Mul/... with broadcast axis is not supported")
        lhs, rhs = g.const(0), g.const(1)
        if rhs is not None and rhs.size == 1 and rhs.ndim <= 1:
            return getattr(_internal, scalar_op)(g.sym(0), scalar=float(rhs.reshape(())),
                                              name=g.name)
        if lhs is not None and lhs.size == 1 and lhs.ndim <= 1:
            return getattr(_internal, rscalar_op)(g.sym(1), scalar=float(lhs.reshape(())),
                                               name=g.name)
        return getattr(symbol, mx_op)(g.sym(0), g.sym(1), name=g.name)
    return convert


TABLE["Add"] = _binary("broadcast_add", "_plus_scalar", "_plus_scalar")
TABLE["Sub"] = _binary("broadcast_sub", "_minus_scalar", "_rminus_scalar")
TABLE["Mul"] = _binary("broadcast_mul", "_mul_scalar", "_mul_scalar")
TABLE["Div"] = _binary("broadcast_div", "_div_scalar", "_rdiv_scalar")
TABLE["Pow"] = _binary("broadcast_power", "_power_scalar", "_rpower_scalar")


@converter("Sum")
def _sum(g, node, a):
    return symbol.add_n(*[g.sym(i) for i in range(len(node.input))], name=g.name)


@converter("MatMul")
def _matmul(g, node, a):
    b = g.param(1)
    if b is not None and b.ndim == 2:  # (..., K) x (K, N): MXNet's dot keeps the leading axes
        return symbol.dot(g.sym(0), g.sym(1), name=g.name)
    return symbol.linalg_gemm2(g.sym(0), g.sym(1), name=g.name)


@converter("Gemm")
def _gemm(g, node, a):
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    trans_a, trans_b = int(a.get("transA", 0)), int(a.get("transB", 0))
    has_c = len(node.input) > 2 and node.input[2]
    w = g.param(1)
    c = g.param(2) if has_c else None
    if (not trans_a and trans_b and alpha == 1.0 and beta == 1.0 and w is not None
            and (not has_c or (c is not None and c.shape == (w.shape[0],)))):
        ins = [g.sym(0), g.sym(1)] + ([g.sym(2)] if has_c else [])
        return symbol.FullyConnected(*ins, num_hidden=w.shape[0], no_bias=not has_c,
                                     flatten=True, name=g.name)
    y = symbol.linalg_gemm2(g.sym(0), g.sym(1), transpose_a=bool(trans_a),
                            transpose_b=bool(trans_b), alpha=alpha,
                            name=g.name + ("_gemm" if has_c else ""))
    if not has_c:
        return y
    bias = g.sym(2) if beta == 1.0 else _internal._mul_scalar(g.sym(2), scalar=beta)
    return symbol.broadcast_add(y, bias, name=g.name)


# --- activations and normalization ----------------------------------------------------------------

@converter("LeakyRelu")
def _leaky(g, node, a):
    return symbol.LeakyReLU(g.sym(0), act_type="leaky", slope=float(a.get("alpha", 0.01)),
                            name=g.name)


@converter("Elu")
def _elu(g, node, a):
    return symbol.LeakyReLU(g.sym(0), act_type="elu", slope=float(a.get("alpha", 1.0)),
                            name=g.name)


@converter("PRelu")
def _prelu(g, node, a):
    slope = g.param(1)
    if slope is not None:
        if slope.ndim > 1:  # (C, 1, 1) broadcasts over (N, C, H, W); MXNet's gamma is (C,)
            g.reshape_param(1, (-1,))
        gamma = g.sym(1)
    else:  # e.g. the exporter's Reshape of the (C,) gamma to (C, 1, 1)
        gamma = symbol.reshape(g.sym(1), shape=(-1,), name=g.name + "_gamma")
    return symbol.LeakyReLU(g.sym(0), gamma, act_type="prelu", name=g.name)


@converter("Softmax")
def _softmax(g, node, a):
    if g.opset < 13:
        # softmax over the input flattened from `axis` on: keeping the axes before it and
        # merging the rest gives the same values
        axis = int(a.get("axis", 1))
        if axis < 0:
            raise MXNetError("ONNX import: Softmax (opset < 13) with a negative axis")
        flat = symbol.reshape(g.sym(0), shape=(0,) * axis + (-1,), name=g.name + "_flat")
        return symbol.reshape_like(symbol.softmax(flat, axis=-1, name=g.name + "_softmax"),
                                   g.sym(0), name=g.name)
    return symbol.softmax(g.sym(0), axis=int(a.get("axis", -1)), name=g.name)


@converter("LogSoftmax")
def _log_softmax(g, node, a):
    return symbol.log_softmax(g.sym(0), axis=int(a.get("axis", -1)), name=g.name)


@converter("BatchNormalization")
def _batchnorm(g, node, a):
    if len(node.output) > 1 and any(node.output[1:]):
        raise MXNetError("ONNX import: BatchNormalization in training mode is not supported")
    return symbol.BatchNorm(*[g.sym(i) for i in range(5)], eps=float(a.get("epsilon", 1e-5)),
                            momentum=float(a.get("momentum", 0.9)), fix_gamma=False,
                            name=g.name)


@converter("Dropout")
def _dropout(g, node, a):
    ratio = g.const(1) if len(node.input) > 1 and node.input[1] else None
    p = float(ratio.reshape(())) if ratio is not None else float(a.get("ratio", 0.5))
    return symbol.Dropout(g.sym(0), p=p, mode="training", name=g.name)


@converter("Clip")
def _clip(g, node, a):
    lo, hi = a.get("min", -np.inf), a.get("max", np.inf)
    if len(node.input) > 1 and node.input[1]:
        lo = g.const(1).reshape(())
    if len(node.input) > 2 and node.input[2]:
        hi = g.const(2).reshape(())
    return symbol.clip(g.sym(0), a_min=float(lo), a_max=float(hi), name=g.name)


# --- convolution and pooling ----------------------------------------------------------------------

@converter("Conv")
def _conv(g, node, a):
    wshape = _param_shape(g, 1)
    n = len(wshape) - 2
    kernel = tuple(int(k) for k in a.get("kernel_shape", wshape[2:]))
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise MXNetError(f"ONNX import: Conv auto_pad={a['auto_pad']} is not supported")
    begins, ends = _pads(a.get("pads"), n)
    x = g.sym(0)
    if begins != ends:
        x, begins = _pad_before(x, begins, ends, "constant", g.name), (0,) * n
    has_bias = len(node.input) > 2 and bool(node.input[2])
    ins = [x, g.sym(1)] + ([g.sym(2)] if has_bias else [])
    return symbol.Convolution(*ins, kernel=kernel, stride=tuple(a.get("strides", (1,) * n)),
                              dilate=tuple(a.get("dilations", (1,) * n)), pad=begins,
                              num_filter=wshape[0], num_group=int(a.get("group", 1)),
                              no_bias=not has_bias, name=g.name)


def _pool(pool_type):
    def convert(g, node, a):
        kernel = tuple(int(k) for k in a["kernel_shape"])
        n = len(kernel)
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            raise MXNetError(f"ONNX import: {node.op_type} auto_pad={a['auto_pad']} is not "
                             "supported")
        if any(d != 1 for d in a.get("dilations", ())):
            raise MXNetError(f"ONNX import: {node.op_type} with dilations is not supported")
        begins, ends = _pads(a.get("pads"), n)
        include = bool(a.get("count_include_pad", 0))
        x = g.sym(0)
        if begins != ends:  # max pads with edge values, avg with zeros (as MXNet's importer)
            mode = "edge" if pool_type == "max" or not include else "constant"
            if pool_type == "avg" and not include:
                raise MXNetError("ONNX import: AveragePool with asymmetric pads and "
                                 "count_include_pad=0 is not supported")
            x, begins = _pad_before(x, begins, ends, mode, g.name), (0,) * n
        kw = {"count_include_pad": include} if pool_type == "avg" else {}
        return symbol.Pooling(x, kernel=kernel, pool_type=pool_type, pad=begins,
                              stride=tuple(a.get("strides", (1,) * n)),
                              pooling_convention="full" if a.get("ceil_mode", 0) else "valid",
                              name=g.name, **kw)
    return convert


TABLE["MaxPool"] = _pool("max")
TABLE["AveragePool"] = _pool("avg")


def _global_pool(pool_type):
    return lambda g, node, a: symbol.Pooling(g.sym(0), kernel=(1, 1), global_pool=True,
                                             pool_type=pool_type, name=g.name)


TABLE["GlobalAveragePool"] = _global_pool("avg")
TABLE["GlobalMaxPool"] = _global_pool("max")


# --- shapes ---------------------------------------------------------------------------------------

@converter("Flatten")
def _flatten(g, node, a):
    axis = int(a.get("axis", 1))
    if axis == 1:
        return symbol.Flatten(g.sym(0), name=g.name)
    if axis == 0:
        return symbol.reshape(g.sym(0), shape=(1, -1), name=g.name)
    raise MXNetError(f"ONNX import: Flatten with axis={axis} is not supported (axis 0 or 1)")


@converter("Reshape")
def _reshape(g, node, a):
    shape = g.const(1)
    if shape is None:
        raise MXNetError("ONNX import: Reshape needs a constant shape")
    if a.get("allowzero", 0) and 0 in shape:
        raise MXNetError("ONNX import: Reshape with allowzero=1 and a 0 is not supported")
    return symbol.reshape(g.sym(0), shape=tuple(int(d) for d in shape), name=g.name)


@converter("Transpose")
def _transpose(g, node, a):
    return symbol.transpose(g.sym(0), axes=tuple(a.get("perm", ())), name=g.name)


@converter("Concat")
def _concat(g, node, a):
    ins = [g.sym(i) for i in range(len(node.input))]
    return symbol.concat(*ins, dim=int(a.get("axis", 1)), name=g.name)


def _axes(g, node, a, i=1):
    """The axes of Squeeze/Unsqueeze/Reduce*: an input from opset 13 (18 for Reduce*), an
    attribute before; None where none are given."""
    if len(node.input) > i and node.input[i]:
        axes = g.const(i)
        if axes is None:
            raise MXNetError(f"ONNX import: {node.op_type} needs constant axes")
        return tuple(int(v) for v in axes.reshape(-1))
    return tuple(int(v) for v in a["axes"]) if "axes" in a else None


@converter("Squeeze")
def _squeeze(g, node, a):
    return symbol.squeeze(g.sym(0), axis=_axes(g, node, a), name=g.name)


@converter("Unsqueeze")
def _unsqueeze(g, node, a):
    axes = sorted(_axes(g, node, a))
    if any(ax < 0 for ax in axes):
        raise MXNetError("ONNX import: Unsqueeze with negative axes is not supported")
    out = g.sym(0)
    for k, ax in enumerate(axes):
        last = k == len(axes) - 1
        out = symbol.expand_dims(out, axis=ax, name=g.name if last else f"{g.name}_{k}")
    return out


@converter("Pad")
def _pad(g, node, a):
    pads = g.const(1) if len(node.input) > 1 else a.get("pads")
    if pads is None:
        raise MXNetError("ONNX import: Pad needs constant pads")
    pads = [int(v) for v in np.asarray(pads).reshape(-1)]
    n = len(pads) // 2
    value = a.get("value", 0.0)
    if len(node.input) > 2 and node.input[2]:
        value = g.const(2).reshape(())
    width = tuple(v for be in zip(pads[:n], pads[n:]) for v in be)
    return symbol.pad(g.sym(0), mode=a.get("mode", "constant"), pad_width=width,
                      constant_value=float(value), name=g.name)


@converter("Gather")
def _gather(g, node, a):
    return symbol.take(g.sym(0), g.sym(1), axis=int(a.get("axis", 0)), name=g.name)


@converter("Cast")
def _cast(g, node, a):
    from onnx import helper
    return symbol.cast(g.sym(0), dtype=np.dtype(helper.tensor_dtype_to_np_dtype(a["to"])).name,
                       name=g.name)


def _reduce(mx_op, axes_input_from):
    def convert(g, node, a):
        axes = _axes(g, node, a) if g.opset >= axes_input_from else _axes(g, node, a, i=99)
        if not axes and a.get("noop_with_empty_axes", 0):
            return symbol.identity(g.sym(0), name=g.name)
        return getattr(symbol, mx_op)(g.sym(0), axis=axes or None,
                                      keepdims=bool(a.get("keepdims", 1)), name=g.name)
    return convert


TABLE["ReduceSum"] = _reduce("sum", 13)
for _onnx_op, _mx_op in [("ReduceMean", "mean"), ("ReduceMax", "max"), ("ReduceMin", "min"),
                         ("ReduceProd", "prod")]:
    TABLE[_onnx_op] = _reduce(_mx_op, 18)


@converter("Slice")
def _slice(g, node, a):
    starts, ends = g.const(1), g.const(2)
    if starts is None or ends is None:
        raise MXNetError("ONNX import: Slice needs constant starts and ends")
    axes = g.const(3)
    axes = range(len(starts)) if axes is None else axes
    steps = g.const(4)
    if steps is not None and any(int(s) != 1 for s in steps):
        raise MXNetError("ONNX import: Slice with steps other than 1 is not supported")
    out = g.sym(0)
    spec = list(zip(axes, starts, ends))
    for k, (axis, begin, end) in enumerate(spec):
        end = None if int(end) >= 2 ** 31 - 1 else int(end)
        out = symbol.slice_axis(out, axis=int(axis), begin=int(begin), end=end,
                                name=g.name if k == len(spec) - 1 else f"{g.name}_{k}")
    return out


@converter("Split")
def _split(g, node, a):
    sizes = g.const(1)
    sizes = a.get("split") if sizes is None else sizes
    if sizes is not None and len(set(int(s) for s in sizes)) > 1:
        raise MXNetError("ONNX import: Split into parts of different sizes is not supported")
    out = symbol.split(g.sym(0), num_outputs=len(node.output), axis=int(a.get("axis", 0)),
                       name=g.name)
    return [out[i] for i in range(len(node.output))]


@converter("ConvTranspose")
def _deconv(g, node, a):
    wshape = _param_shape(g, 1)
    n = len(wshape) - 2
    if "output_shape" in a or a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise MXNetError("ONNX import: ConvTranspose with output_shape or auto_pad is not "
                         "supported")
    begins, ends = _pads(a.get("pads"), n)
    if begins != ends:
        raise MXNetError("ONNX import: ConvTranspose with asymmetric pads is not supported")
    group = int(a.get("group", 1))
    has_bias = len(node.input) > 2 and bool(node.input[2])
    ins = [g.sym(0), g.sym(1)] + ([g.sym(2)] if has_bias else [])
    return symbol.Deconvolution(*ins, kernel=tuple(a.get("kernel_shape", wshape[2:])),
                                stride=tuple(a.get("strides", (1,) * n)),
                                dilate=tuple(a.get("dilations", (1,) * n)), pad=begins,
                                adj=tuple(a.get("output_padding", (0,) * n)),
                                num_filter=wshape[1] * group, num_group=group,
                                no_bias=not has_bias, name=g.name)


@converter("InstanceNormalization")
def _instance_norm(g, node, a):
    return symbol.InstanceNorm(g.sym(0), g.sym(1), g.sym(2), eps=float(a.get("epsilon", 1e-5)),
                               name=g.name)


@converter("LayerNormalization")
def _layer_norm(g, node, a):
    if int(a.get("axis", -1)) != -1 or len(node.input) < 3 or any(node.output[1:]):
        raise MXNetError("ONNX import: LayerNormalization is imported over the last axis, with "
                         "scale and bias and one output only")
    return symbol.LayerNorm(g.sym(0), g.sym(1), g.sym(2), axis=-1,
                            eps=float(a.get("epsilon", 1e-5)), name=g.name)


@converter("LRN")
def _lrn(g, node, a):
    return symbol.LRN(g.sym(0), alpha=float(a.get("alpha", 1e-4)), beta=float(a.get("beta", 0.75)),
                      knorm=float(a.get("bias", 1.0)), nsize=int(a["size"]), name=g.name)
