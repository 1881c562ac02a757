"""Converters of neomx operators to ONNX nodes (opset 17), one per operator.

Each converter is ``fn(ctx, node, p, ins) -> value name(s)``; ``ins`` are ONNX value names and
``ctx`` (``_export.Builder``) makes nodes and constants: ``ctx.op(type, inputs, **attrs)``,
``ctx.const(array)``, ``ctx.param(name)`` (an initializer's array), ``ctx.shape/rank/dtype``
of an input as shape inference gave it.
"""
from __future__ import annotations

import math

import numpy as np

from ..export.graph import Unsupported, reduce_axes, reshape_plan, slice_spec, spatial
from ..export.torch_ops import check_rnn, rnn_input_size, rnn_views

TABLE: dict = {}


def converter(*names):
    def deco(fn):
        for n in names:
            TABLE[n] = fn
        return fn
    return deco


def _simple(name, op_type, n_in=1, **attrs):
    TABLE[name] = lambda ctx, node, p, ins: ctx.op(op_type, ins[:n_in], **attrs)


# --- elementwise ----------------------------------------------------------------------------------
for _n, _t in {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
               "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal",
               "erf": "Erf", "sin": "Sin", "cos": "Cos", "floor": "Floor", "ceil": "Ceil",
               "sign": "Sign", "softsign": "Softsign", "BlockGrad": "Identity",
               "stop_gradient": "Identity", "_copy": "Identity", "identity": "Identity",
               "LinearRegressionOutput": "Identity", "MAERegressionOutput": "Identity",
               "LogisticRegressionOutput": "Sigmoid"}.items():
    _simple(_n, _t)
for _n, _t in {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max",
               "minimum": "Min", "power": "Pow"}.items():
    _simple(f"broadcast_{_n}", _t, 2)
    if _n in ("add", "sub", "mul", "div"):
        _simple(f"elemwise_{_n}", _t, 2)
_simple("_maximum", "Max", 2)
_simple("_minimum", "Min", 2)
_simple("_power", "Pow", 2)
_simple("Flatten", "Flatten", axis=1)


@converter("square")
def _square(ctx, node, p, ins):
    return ctx.op("Mul", [ins[0], ins[0]])


@converter("rsqrt")
def _rsqrt(ctx, node, p, ins):
    return ctx.op("Reciprocal", [ctx.op("Sqrt", ins)])


@converter("add_n")
def _add_n(ctx, node, p, ins):
    return ctx.op("Sum", ins)


_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}


def _scalar(ctx, node, p, ins):
    op_type, rev = _SCALAR[node.op.name]
    s = ctx.const(np.array(p.scalar, dtype=ctx.dtype(node, 0)))
    return ctx.op(op_type, [s, ins[0]] if rev else [ins[0], s])


for _n in _SCALAR:
    TABLE[_n] = _scalar


@converter("clip")
def _clip(ctx, node, p, ins):
    dt = ctx.dtype(node, 0)
    return ctx.op("Clip", [ins[0], ctx.const(np.array(p.a_min, dt)),
                           ctx.const(np.array(p.a_max, dt))])


@converter("hard_sigmoid")
def _hard_sigmoid(ctx, node, p, ins):
    return ctx.op("HardSigmoid", ins, alpha=p.alpha, beta=p.beta)


@converter("Cast")
def _cast(ctx, node, p, ins):
    return ctx.op("Cast", ins, to=ctx.onnx_type(p.dtype))


@converter("zeros_like", "ones_like")
def _fill_like(ctx, node, p, ins):
    value = np.array([0 if node.op.name == "zeros_like" else 1], ctx.dtype(node, 0))
    from onnx import numpy_helper
    return ctx.op("ConstantOfShape", [ctx.op("Shape", ins)], value=numpy_helper.from_array(value))


# --- layers ---------------------------------------------------------------------------------------
_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
        "softsign": "Softsign"}


@converter("Activation")
def _activation(ctx, node, p, ins):
    return ctx.op(_ACT[p.act_type], ins)


def _gelu(ctx, x, dt):
    half = ctx.op("Mul", [x, ctx.const(np.array(0.5, dt))])
    erf = ctx.op("Erf", [ctx.op("Div", [x, ctx.const(np.array(math.sqrt(2.0), dt))])])
    return ctx.op("Mul", [half, ctx.op("Add", [erf, ctx.const(np.array(1.0, dt))])])


@converter("LeakyReLU")
def _leaky(ctx, node, p, ins):
    t, x = p.act_type, ins[0]
    if t == "leaky":
        return ctx.op("LeakyRelu", [x], alpha=p.slope)
    if t == "rrelu":  # inference: the mean slope
        return ctx.op("LeakyRelu", [x], alpha=(p.lower_bound + p.upper_bound) / 2)
    if t == "elu":
        return ctx.op("Elu", [x], alpha=p.slope)
    if t == "selu":
        return ctx.op("Selu", [x])
    if t == "gelu":
        return _gelu(ctx, x, ctx.dtype(node, 0))
    if t == "prelu":
        rank = ctx.need_rank(node, 0)
        slope = ins[1]
        if rank > 2:  # MXNet's gamma is per channel (axis 1)
            slope = ctx.op("Reshape", [slope, ctx.const(np.array([-1] + [1] * (rank - 2),
                                                                 np.int64))])
        return ctx.op("PRelu", [x, slope])
    raise Unsupported(f"act_type={t}")


def _channel_first(p, what):
    if p.layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise Unsupported(f"layout={p.layout} ({what} is exported channel-first only)")


@converter("FullyConnected")
def _fc(ctx, node, p, ins):
    x, w = ins[0], ins[1]
    if p.flatten:
        if ctx.rank(node, 0) != 2:
            x = ctx.op("Flatten", [x], axis=1)
        return ctx.op("Gemm", [x, w] + ([] if p.no_bias else [ins[2]]), transB=1)
    y = ctx.op("MatMul", [x, ctx.op("Transpose", [w], perm=[1, 0])])
    return y if p.no_bias else ctx.op("Add", [y, ins[2]])


@converter("Convolution")
def _conv(ctx, node, p, ins):
    _channel_first(p, "Convolution")
    n = len(p.kernel)
    pad = list(spatial(p.pad, n, 0))
    return ctx.op("Conv", ins[:2] if p.no_bias else ins[:3], kernel_shape=list(p.kernel),
                  strides=list(spatial(p.stride, n, 1)), dilations=list(spatial(p.dilate, n, 1)),
                  pads=pad + pad, group=p.num_group)


@converter("Deconvolution")
def _deconv(ctx, node, p, ins):
    _channel_first(p, "Deconvolution")
    if p.target_shape:
        raise Unsupported("target_shape (give pad and adj instead)")
    n = len(p.kernel)
    pad = list(spatial(p.pad, n, 0))
    return ctx.op("ConvTranspose", ins[:2] if p.no_bias else ins[:3],
                  kernel_shape=list(p.kernel), strides=list(spatial(p.stride, n, 1)),
                  dilations=list(spatial(p.dilate, n, 1)), pads=pad + pad,
                  output_padding=list(spatial(p.adj, n, 0)), group=p.num_group)


@converter("Pooling")
def _pooling(ctx, node, p, ins):
    _channel_first(p, "Pooling")
    x = ins[0]
    if p.global_pool:
        if p.pool_type in ("max", "avg"):
            return ctx.op("GlobalMaxPool" if p.pool_type == "max" else "GlobalAveragePool", [x])
        if p.pool_type == "lp" and p.p_value in (1, 2, 3):
            return ctx.op("GlobalLpPool", [x], p=p.p_value)
        if p.pool_type == "sum":
            axes = list(range(2, ctx.need_rank(node, 0)))
            return ctx.op("ReduceSum", [x, ctx.const(np.array(axes, np.int64))], keepdims=1)
        raise Unsupported(f"global pool_type={p.pool_type}")
    if p.pooling_convention == "same":
        raise Unsupported("pooling_convention='same'")
    n = len(p.kernel)
    pad = list(spatial(p.pad, n, 0))
    attrs = dict(kernel_shape=list(p.kernel), strides=list(spatial(p.stride, n, 1)),
                 pads=pad + pad, ceil_mode=int(p.pooling_convention == "full"))
    if p.pool_type == "max":
        return ctx.op("MaxPool", [x], **attrs)
    include = p.count_include_pad is None or p.count_include_pad
    if p.pool_type == "avg":
        return ctx.op("AveragePool", [x], count_include_pad=int(include), **attrs)
    if p.pool_type == "sum" and include:
        avg = ctx.op("AveragePool", [x], count_include_pad=1, **attrs)
        k = float(np.prod(p.kernel))
        if attrs["ceil_mode"]:
            raise Unsupported("sum pooling with pooling_convention='full'")
        return ctx.op("Mul", [avg, ctx.const(np.array(k, ctx.dtype(node, 0)))])
    raise Unsupported(f"pool_type={p.pool_type}")


@converter("BatchNorm")
def _batchnorm(ctx, node, p, ins):
    if p.output_mean_var:
        raise Unsupported("output_mean_var=True")
    x, gamma, beta, mean, var = ins
    if p.fix_gamma:
        c = ctx.param_shape(node, 1)[0]
        gamma = ctx.const(np.ones(c, ctx.dtype(node, 1)), f"{node.name}_fixed_gamma")
    axis = p.axis
    rank = ctx.rank(node, 0)
    if axis < 0 or axis > 1:
        rank = ctx.need_rank(node, 0)
        axis %= rank
    if axis == 1:
        return ctx.op("BatchNormalization", [x, gamma, beta, mean, var], epsilon=p.eps,
                      momentum=p.momentum)
    perm = [0, axis] + [d for d in range(1, rank) if d != axis]
    inv = [perm.index(d) for d in range(rank)]
    xt = ctx.op("Transpose", [x], perm=perm)
    y = ctx.op("BatchNormalization", [xt, gamma, beta, mean, var], epsilon=p.eps,
               momentum=p.momentum)
    return ctx.op("Transpose", [y], perm=inv)


@converter("LayerNorm")
def _layernorm(ctx, node, p, ins):
    if p.output_mean_var:
        raise Unsupported("output_mean_var=True")
    rank = ctx.need_rank(node, 0)
    axis = p.axis % rank
    if axis == rank - 1:
        return ctx.op("LayerNormalization", ins, axis=-1, epsilon=p.eps)
    perm = [d for d in range(rank) if d != axis] + [axis]
    inv = [perm.index(d) for d in range(rank)]
    y = ctx.op("LayerNormalization", [ctx.op("Transpose", [ins[0]], perm=perm)] + ins[1:],
               axis=-1, epsilon=p.eps)
    return ctx.op("Transpose", [y], perm=inv)


@converter("InstanceNorm")
def _instancenorm(ctx, node, p, ins):
    return ctx.op("InstanceNormalization", ins, epsilon=p.eps)


@converter("LRN")
def _lrn(ctx, node, p, ins):
    if p.nsize % 2 == 0:
        raise Unsupported("an even nsize")
    return ctx.op("LRN", ins, alpha=p.alpha, beta=p.beta, bias=p.knorm, size=p.nsize)


@converter("Dropout")
def _dropout(ctx, node, p, ins):
    if p.mode == "always" and p.p > 0:
        raise Unsupported("mode='always' (dropout at inference)")
    return ctx.op("Identity", ins)


@converter("Embedding")
def _embedding(ctx, node, p, ins):
    return ctx.op("Gather", [ins[1], ctx.op("Cast", [ins[0]], to=ctx.onnx_type(np.int64))],
                  axis=0)


@converter("UpSampling")
def _upsampling(ctx, node, p, ins):
    if p.sample_type != "nearest" or len(ins) != 1:
        raise Unsupported(f"sample_type={p.sample_type} with {len(ins)} inputs")
    rank = ctx.need_rank(node, 0)
    scales = np.array([1.0, 1.0] + [float(p.scale)] * (rank - 2), np.float32)
    return ctx.op("Resize", [ins[0], "", ctx.const(scales)], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")


@converter("Pad", "pad")
def _pad(ctx, node, p, ins):
    pw = list(p.pad_width)
    pads = np.array(pw[0::2] + pw[1::2], np.int64)
    mode = {"constant": "constant", "edge": "edge", "reflect": "reflect"}[p.mode]
    extra = [ctx.const(np.array(p.constant_value, ctx.dtype(node, 0)))] if mode == "constant" else []
    return ctx.op("Pad", [ins[0], ctx.const(pads)] + extra, mode=mode)


# --- softmax and loss heads -----------------------------------------------------------------------
def _temper(ctx, node, p, x):
    if p.use_length:
        raise Unsupported("use_length=True")
    if p.temperature is None or p.temperature == 1.0:
        return x
    return ctx.op("Div", [x, ctx.const(np.array(p.temperature, ctx.dtype(node, 0)))])


@converter("softmax")
def _softmax(ctx, node, p, ins):
    return ctx.op("Softmax", [_temper(ctx, node, p, ins[0])], axis=p.axis)


@converter("log_softmax")
def _log_softmax(ctx, node, p, ins):
    return ctx.op("LogSoftmax", [_temper(ctx, node, p, ins[0])], axis=p.axis)


@converter("softmin")
def _softmin(ctx, node, p, ins):
    return ctx.op("Softmax", [ctx.op("Neg", [_temper(ctx, node, p, ins[0])])], axis=p.axis)


def _softmax_flat(ctx, node, x):
    if ctx.rank(node, 0) == 2:
        return ctx.op("Softmax", [x], axis=1)
    y = ctx.op("Softmax", [ctx.op("Flatten", [x], axis=1)], axis=1)
    return ctx.op("Reshape", [y, ctx.op("Shape", [x])])


@converter("SoftmaxOutput")
def _softmax_output(ctx, node, p, ins):
    if p.multi_output:
        return ctx.op("Softmax", ins[:1], axis=1)
    if p.preserve_shape:
        return ctx.op("Softmax", ins[:1], axis=-1)
    return _softmax_flat(ctx, node, ins[0])


@converter("SoftmaxActivation")
def _softmax_activation(ctx, node, p, ins):
    if p.mode == "channel":
        return ctx.op("Softmax", ins, axis=1)
    return _softmax_flat(ctx, node, ins[0])


# --- shapes and layout ----------------------------------------------------------------------------
@converter("Reshape")
def _reshape(ctx, node, p, ins):
    x = ins[0]
    out_shape = ctx.out_shape(node)
    if out_shape is not None and not ctx.dynamic:
        return ctx.op("Reshape", [x, ctx.const(np.array(out_shape, np.int64))])
    codes = tuple(p.shape) if p.shape else tuple(p.target_shape)
    plan = reshape_plan(codes, ctx.rank(node, 0), p.reverse)
    if all(it[0] == "c" for it in plan):
        return ctx.op("Reshape", [x, ctx.const(np.array([it[1] for it in plan], np.int64))])
    shape = ctx.op("Shape", [x])
    parts = []
    for it in plan:
        if it[0] == "c":
            parts.append(ctx.const(np.array([it[1]], np.int64)))
            continue
        dims = it[1] if it[0] == "d" else (it[1],)
        v = ctx.op("Gather", [shape, ctx.const(np.array([dims[0]], np.int64))], axis=0)
        for d in dims[1:]:
            v = ctx.op("Mul", [v, ctx.op("Gather", [shape, ctx.const(np.array([d], np.int64))],
                                         axis=0)])
        if it[0] == "s":
            v = ctx.op("Div", [v, ctx.const(np.array([it[2]], np.int64))])
        parts.append(v)
    return ctx.op("Reshape", [x, ctx.op("Concat", parts, axis=0)])


@converter("transpose")
def _transpose(ctx, node, p, ins):
    axes = list(p.axes)
    if not axes:
        axes = list(range(ctx.need_rank(node, 0) - 1, -1, -1))
    return ctx.op("Transpose", ins, perm=axes)


@converter("SwapAxis")
def _swapaxis(ctx, node, p, ins):
    perm = list(range(ctx.need_rank(node, 0)))
    perm[p.dim1], perm[p.dim2] = perm[p.dim2], perm[p.dim1]
    return ctx.op("Transpose", ins, perm=perm)


@converter("expand_dims")
def _expand_dims(ctx, node, p, ins):
    return ctx.op("Unsqueeze", [ins[0], ctx.const(np.array([p.axis], np.int64))])


@converter("squeeze")
def _squeeze(ctx, node, p, ins):
    if p.axis is None:
        return ctx.op("Squeeze", ins)
    axes = [p.axis] if isinstance(p.axis, int) else list(p.axis)
    return ctx.op("Squeeze", [ins[0], ctx.const(np.array(axes, np.int64))])


@converter("Concat")
def _concat(ctx, node, p, ins):
    return ctx.op("Concat", ins, axis=p.dim)


@converter("stack")
def _stack(ctx, node, p, ins):
    axis = ctx.const(np.array([p.axis], np.int64))
    return ctx.op("Concat", [ctx.op("Unsqueeze", [x, axis]) for x in ins], axis=p.axis)


@converter("SliceChannel")
def _slice_channel(ctx, node, p, ins):
    shape = ctx.shape(node, 0)
    if shape is None:
        raise Unsupported("the input's shape is unknown (give input shapes)")
    size = shape[p.axis] // p.num_outputs
    outs = ctx.op("Split", [ins[0], ctx.const(np.array([size] * p.num_outputs, np.int64))],
                  n_out=p.num_outputs, axis=p.axis)
    if p.squeeze_axis:
        axis = ctx.const(np.array([p.axis], np.int64))
        outs = [ctx.op("Squeeze", [o, axis]) for o in outs]
    return outs


def _slice_op(ctx, x, starts, ends, axes, steps):
    i64 = lambda v: ctx.const(np.array(v, np.int64))  # noqa: E731
    return ctx.op("Slice", [x, i64(starts), i64(ends), i64(axes), i64(steps)])


_BIG = np.iinfo(np.int64).max


@converter("slice_axis")
def _slice_axis(ctx, node, p, ins):
    end = _BIG if p.end is None else p.end
    return _slice_op(ctx, ins[0], [p.begin], [end], [p.axis], [1])


@converter("slice")
def _slice(ctx, node, p, ins):
    spec = slice_spec(p)
    return _slice_op(ctx, ins[0], [0 if b is None else b for b, _, _ in spec],
                     [_BIG if e is None else e for _, e, _ in spec], list(range(len(spec))),
                     [1 if s is None else s for _, _, s in spec])


def _reduce(op_type, axes_as_input):
    def convert(ctx, node, p, ins):
        axes = reduce_axes(p, ctx.rank(node, 0))
        if axes == ():
            return ctx.op("Identity", ins)
        keep = int(p.keepdims)
        if axes is None:
            return ctx.op(op_type, ins, keepdims=keep)
        if axes_as_input:
            return ctx.op(op_type, [ins[0], ctx.const(np.array(axes, np.int64))], keepdims=keep)
        return ctx.op(op_type, ins, axes=list(axes), keepdims=keep)
    return convert


TABLE["sum"] = _reduce("ReduceSum", True)
TABLE["mean"] = _reduce("ReduceMean", False)
TABLE["max"] = _reduce("ReduceMax", False)
TABLE["min"] = _reduce("ReduceMin", False)


@converter("dot")
def _dot(ctx, node, p, ins):
    if ctx.rank(node, 0) != 2 or ctx.rank(node, 1) != 2:
        raise Unsupported("inputs that are not (known to be) 2-D")
    a = ctx.op("Transpose", [ins[0]], perm=[1, 0]) if p.transpose_a else ins[0]
    b = ctx.op("Transpose", [ins[1]], perm=[1, 0]) if p.transpose_b else ins[1]
    return ctx.op("MatMul", [a, b])


@converter("batch_dot")
def _batch_dot(ctx, node, p, ins):
    def t(x, i):
        rank = ctx.need_rank(node, i)
        return ctx.op("Transpose", [x], perm=list(range(rank - 2)) + [rank - 1, rank - 2])
    a = t(ins[0], 0) if p.transpose_a else ins[0]
    b = t(ins[1], 1) if p.transpose_b else ins[1]
    return ctx.op("MatMul", [a, b])


# --- the fused RNN: one ONNX LSTM/GRU/RNN node per layer --------------------------------------------
# ONNX gate orders: LSTM i, o, f, c; GRU z, r, h. MXNet (and torch): LSTM i, f, g, o; GRU r, z, n.
_REORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_tanh": [0], "rnn_relu": [0]}


def _gates(a, mode):
    parts = np.split(a, len(_REORDER[mode]), axis=0)
    return np.concatenate([parts[i] for i in _REORDER[mode]], axis=0)


@converter("RNN")
def _rnn(ctx, node, p, ins):
    check_rnn(p)
    flat = ctx.param(node, 1)
    if flat is None:
        raise Unsupported("a parameter vector that is not in the params")
    n_in = rnn_input_size(p, flat.size)
    if n_in is None:
        raise Unsupported(f"a parameter vector of {flat.size} values")
    views = rnn_views(p, flat.size, n_in)
    d = 2 if p.bidirectional else 1
    x, h0 = ins[0], ins[2]
    c0 = ins[3] if p.mode == "lstm" else None
    op_type = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}[p.mode]
    attrs = dict(hidden_size=p.state_size,
                 direction="bidirectional" if p.bidirectional else "forward")
    if p.mode == "gru":
        attrs["linear_before_reset"] = 1
    if p.mode == "rnn_relu":
        attrs["activations"] = ["Relu"] * d
    hs, cs = [], []
    for layer in range(p.num_layers):
        ws = views[layer * d:(layer + 1) * d]
        get = lambda o, s: flat[o:o + math.prod(s)].reshape(s)  # noqa: E731
        W = np.stack([_gates(get(*w[0]), p.mode) for w in ws])
        R = np.stack([_gates(get(*w[1]), p.mode) for w in ws])
        B = np.stack([np.concatenate([_gates(get(*w[2]), p.mode), _gates(get(*w[3]), p.mode)])
                      for w in ws])
        pre = f"{node.name}_l{layer}"
        sl = lambda v: _slice_op(ctx, v, [layer * d], [(layer + 1) * d], [0], [1])  # noqa: E731
        inputs = [x, ctx.const(W, pre + "_W"), ctx.const(R, pre + "_R"), ctx.const(B, pre + "_B"),
                  "", sl(h0)] + ([sl(c0)] if c0 is not None else [])
        outs = ctx.op(op_type, inputs, n_out=3 if c0 is not None else 2, **attrs)
        y = outs[0]  # (T, D, N, H) -> (T, N, D*H)
        y = ctx.op("Transpose", [y], perm=[0, 2, 1, 3])
        x = ctx.op("Reshape", [y, ctx.const(np.array([0, 0, -1], np.int64))])
        hs.append(outs[1])
        if c0 is not None:
            cs.append(outs[2])
    res = [x]
    if p.state_outputs:
        res.append(hs[0] if len(hs) == 1 else ctx.op("Concat", hs, axis=0))
        if p.mode == "lstm":
            res.append(cs[0] if len(cs) == 1 else ctx.op("Concat", cs, axis=0))
    return res
