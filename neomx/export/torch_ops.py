"""Lowerings of neomx operators to plain torch calls, one per operator, for :func:`to_torch`.

Each lowering is ``fn(ctx, node, p, ins)`` written as ordinary torch code over ``torch.fx``
proxies, so every call it makes becomes one node of the GraphModule (torch and
torch.nn.functional only: the module runs without neomx). ``ctx.training`` is the module's
``self.training`` (BatchNorm and Dropout follow ``gm.train()``/``gm.eval()``); ``ctx.rank(node,
i)``/``ctx.shape(node, i)`` give what shape inference knew of input ``i``.
"""
from __future__ import annotations

import math
import operator

import numpy as np
import torch
import torch.nn.functional as F

from .graph import Unsupported, reduce_axes, reshape_plan, slice_spec, spatial

TABLE: dict = {}


def lowering(*names):
    def deco(fn):
        for n in names:
            TABLE[n] = fn
        return fn
    return deco


def _unary(name, fn):
    TABLE[name] = lambda ctx, node, p, ins: fn(ins[0])


def _binary(name, fn):
    TABLE[name] = lambda ctx, node, p, ins: fn(ins[0], ins[1])


def _scalar(name, fn):
    TABLE[name] = lambda ctx, node, p, ins: fn(ins[0], p.scalar)


# --- elementwise ----------------------------------------------------------------------------------
for _n, _f in {"relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp,
               "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "square": torch.square,
               "abs": torch.abs, "negative": torch.neg, "reciprocal": torch.reciprocal,
               "erf": torch.erf, "sin": torch.sin, "cos": torch.cos, "floor": torch.floor,
               "ceil": torch.ceil, "sign": torch.sign, "softsign": F.softsign,
               "log_sigmoid": F.logsigmoid, "expm1": torch.expm1, "log1p": torch.log1p,
               "zeros_like": torch.zeros_like, "ones_like": torch.ones_like,
               "BlockGrad": torch.Tensor.detach, "stop_gradient": torch.Tensor.detach,
               "_copy": torch.clone, "identity": torch.clone,
               "Flatten": lambda x: torch.flatten(x, 1)}.items():
    _unary(_n, _f)
for _n, _f in {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
               "maximum": torch.maximum, "minimum": torch.minimum, "power": torch.pow}.items():
    _binary(f"broadcast_{_n}", _f)
    if _n in ("add", "sub", "mul", "div"):
        _binary(f"elemwise_{_n}", _f)
_binary("_maximum", torch.maximum)
_binary("_minimum", torch.minimum)
_binary("_power", torch.pow)
for _n, _f in {"_plus_scalar": operator.add, "_minus_scalar": operator.sub,
               "_mul_scalar": operator.mul, "_div_scalar": operator.truediv,
               "_rminus_scalar": lambda x, s: s - x, "_rdiv_scalar": lambda x, s: s / x,
               "_power_scalar": torch.pow, "_rpower_scalar": lambda x, s: torch.pow(s, x),
               "_maximum_scalar": torch.clamp_min, "_minimum_scalar": torch.clamp_max}.items():
    _scalar(_n, _f)


@lowering("add_n")
def _add_n(ctx, node, p, ins):
    out = ins[0]
    for x in ins[1:]:
        out = out + x
    return out


@lowering("clip")
def _clip(ctx, node, p, ins):
    return torch.clamp(ins[0], p.a_min, p.a_max)


@lowering("hard_sigmoid")
def _hard_sigmoid(ctx, node, p, ins):
    return torch.clamp(ins[0] * p.alpha + p.beta, 0.0, 1.0)


@lowering("Cast")
def _cast(ctx, node, p, ins):
    return ins[0].to(torch.from_numpy(np.zeros(0, p.dtype)).dtype)


# --- layers ---------------------------------------------------------------------------------------
_ACT = {"relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "softrelu": F.softplus,
        "softsign": F.softsign}


@lowering("Activation")
def _activation(ctx, node, p, ins):
    return _ACT[p.act_type](ins[0])


@lowering("LeakyReLU")
def _leaky(ctx, node, p, ins):
    x, t = ins[0], p.act_type
    if t == "leaky":
        return F.leaky_relu(x, p.slope)
    if t == "prelu":
        return F.prelu(x, ins[1])
    if t == "elu":
        return F.elu(x, p.slope)
    if t == "selu":
        return F.selu(x)
    if t == "gelu":
        return F.gelu(x)
    if t == "rrelu":
        return F.rrelu(x, p.lower_bound, p.upper_bound, training=ctx.training)
    raise Unsupported(f"act_type={t}")


def _channel_first(p, what):
    if p.layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise Unsupported(f"layout={p.layout} ({what} is lowered channel-first only)")


@lowering("FullyConnected")
def _fc(ctx, node, p, ins):
    x = torch.flatten(ins[0], 1) if p.flatten and ctx.rank(node, 0) != 2 else ins[0]
    return F.linear(x, ins[1], None if p.no_bias else ins[2])


@lowering("Convolution")
def _conv(ctx, node, p, ins):
    _channel_first(p, "Convolution")
    n = len(p.kernel)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    return fn(ins[0], ins[1], None if p.no_bias else ins[2], spatial(p.stride, n, 1),
              spatial(p.pad, n, 0), spatial(p.dilate, n, 1), p.num_group)


@lowering("Deconvolution")
def _deconv(ctx, node, p, ins):
    _channel_first(p, "Deconvolution")
    if p.target_shape:
        raise Unsupported("target_shape (give pad and adj instead)")
    n = len(p.kernel)
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
    return fn(ins[0], ins[1], None if p.no_bias else ins[2], spatial(p.stride, n, 1),
              spatial(p.pad, n, 0), spatial(p.adj, n, 0), p.num_group, spatial(p.dilate, n, 1))


@lowering("Pooling")
def _pooling(ctx, node, p, ins):
    _channel_first(p, "Pooling")
    x = ins[0]
    rank = ctx.rank(node, 0) or (len(p.kernel) + 2 if p.kernel else None)
    if rank is None:
        raise Unsupported("the input's rank is unknown (give input shapes)")
    n = rank - 2
    dims = tuple(range(2, rank))
    if p.global_pool:
        if p.pool_type == "max":
            return torch.amax(x, dims, keepdim=True)
        if p.pool_type == "avg":
            return torch.mean(x, dims, keepdim=True)
        if p.pool_type == "sum":
            return torch.sum(x, dims, keepdim=True)
        raise Unsupported(f"global pool_type={p.pool_type}")
    if p.pooling_convention == "same":
        raise Unsupported("pooling_convention='same'")
    k, s, pad = tuple(p.kernel), spatial(p.stride, n, 1), spatial(p.pad, n, 0)
    ceil = p.pooling_convention == "full"
    if p.pool_type == "max":
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
        return fn(x, k, s, pad, 1, ceil)
    include = p.count_include_pad is None or p.count_include_pad
    if p.pool_type == "avg":
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
        return fn(x, k, s, pad, ceil, include)
    if p.pool_type == "sum" and n in (2, 3):
        fn = {2: F.avg_pool2d, 3: F.avg_pool3d}[n]
        return fn(x, k, s, pad, ceil, include, 1)
    raise Unsupported(f"pool_type={p.pool_type} ({n}-D)")


@lowering("BatchNorm")
def _batchnorm(ctx, node, p, ins):
    if p.output_mean_var:
        raise Unsupported("output_mean_var=True")
    x, gamma, beta, mean, var = ins
    axis = p.axis
    if axis < 0:
        if ctx.rank(node, 0) is None:
            raise Unsupported("a negative axis with an unknown input rank (give input shapes)")
        axis += ctx.rank(node, 0)
    if axis != 1:
        x = torch.movedim(x, axis, 1)
    training = False if p.use_global_stats else ctx.training
    y = F.batch_norm(x, mean, var, None if p.fix_gamma else gamma, beta, training,
                     1.0 - p.momentum, p.eps)
    return torch.movedim(y, 1, axis) if axis != 1 else y


@lowering("LayerNorm")
def _layernorm(ctx, node, p, ins):
    if p.output_mean_var:
        raise Unsupported("output_mean_var=True")
    x, gamma, beta = ins
    rank = ctx.rank(node, 0)
    last = p.axis == -1 or (rank is not None and p.axis % rank == rank - 1)
    if not last:
        if rank is None:
            raise Unsupported("axis != -1 with an unknown input rank (give input shapes)")
        x = torch.movedim(x, p.axis, -1)
    c = ctx.param_shape(node, 1)[0]
    y = F.layer_norm(x, (c,), gamma, beta, p.eps)
    return y if last else torch.movedim(y, -1, p.axis)


@lowering("InstanceNorm")
def _instancenorm(ctx, node, p, ins):
    return F.instance_norm(ins[0], None, None, ins[1], ins[2], eps=p.eps)


@lowering("GroupNorm")
def _groupnorm(ctx, node, p, ins):
    if p.output_mean_var:
        raise Unsupported("output_mean_var=True")
    x, gamma, beta = ins
    y = F.group_norm(x, p.num_groups, None, None, p.eps)
    rank = ctx.rank(node, 0)
    if rank is None:
        raise Unsupported("the input's rank is unknown (give input shapes)")
    shape = (1, -1) + (1,) * (rank - 2)
    if ctx.param_shape(node, 1)[0] == p.num_groups:  # MXNet 1.x: one gamma per group
        n = x.shape[0]
        y = y.reshape(n, p.num_groups, -1) * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
        return y.reshape(x.shape)
    return y * gamma.reshape(shape) + beta.reshape(shape)


@lowering("LRN")
def _lrn(ctx, node, p, ins):
    if p.nsize % 2 == 0:
        raise Unsupported("an even nsize")
    return F.local_response_norm(ins[0], p.nsize, p.alpha, p.beta, p.knorm)


@lowering("Dropout")
def _dropout(ctx, node, p, ins):
    if p.axes:
        raise Unsupported("axes (variational dropout)")
    training = True if p.mode == "always" else ctx.training
    return F.dropout(ins[0], p.p, training=training)


@lowering("Embedding")
def _embedding(ctx, node, p, ins):
    return F.embedding(ins[0].long(), ins[1])


@lowering("UpSampling")
def _upsampling(ctx, node, p, ins):
    if p.sample_type != "nearest" or len(ins) != 1:
        raise Unsupported(f"sample_type={p.sample_type} with {len(ins)} inputs")
    return F.interpolate(ins[0], scale_factor=float(p.scale), mode="nearest")


@lowering("Pad", "pad")
def _pad(ctx, node, p, ins):
    pw = tuple(p.pad_width)
    pads = []
    for i in range(len(pw) // 2 - 1, 1, -1):
        pads += [pw[2 * i], pw[2 * i + 1]]
    mode = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}[p.mode]
    if mode == "constant":
        return F.pad(ins[0], pads, mode, p.constant_value)
    return F.pad(ins[0], pads, mode)


# --- softmax and loss heads (inference outputs) ---------------------------------------------------
def _temper(x, p):
    return x if p.temperature is None or p.temperature == 1.0 else x / p.temperature


def _check_softmax(p):
    if p.use_length:
        raise Unsupported("use_length=True")


@lowering("softmax")
def _softmax(ctx, node, p, ins):
    _check_softmax(p)
    return torch.softmax(_temper(ins[0], p), p.axis)


@lowering("log_softmax")
def _log_softmax(ctx, node, p, ins):
    _check_softmax(p)
    return torch.log_softmax(_temper(ins[0], p), p.axis)


@lowering("softmin")
def _softmin(ctx, node, p, ins):
    _check_softmax(p)
    return torch.softmax(-_temper(ins[0], p), p.axis)


@lowering("SoftmaxOutput")
def _softmax_output(ctx, node, p, ins):
    x = ins[0]
    if p.multi_output:
        return torch.softmax(x, 1)
    if p.preserve_shape:
        return torch.softmax(x, -1)
    if ctx.rank(node, 0) == 2:
        return torch.softmax(x, 1)
    return torch.softmax(torch.flatten(x, 1), 1).reshape(x.shape)


@lowering("SoftmaxActivation")
def _softmax_activation(ctx, node, p, ins):
    x = ins[0]
    if p.mode == "channel":
        return torch.softmax(x, 1)
    return torch.softmax(torch.flatten(x, 1), 1).reshape(x.shape)


TABLE["LinearRegressionOutput"] = lambda ctx, node, p, ins: ins[0]
TABLE["MAERegressionOutput"] = lambda ctx, node, p, ins: ins[0]
TABLE["LogisticRegressionOutput"] = lambda ctx, node, p, ins: torch.sigmoid(ins[0])


# --- shapes and layout ----------------------------------------------------------------------------
@lowering("Reshape")
def _reshape(ctx, node, p, ins):
    x = ins[0]
    codes = tuple(p.shape) if p.shape else tuple(p.target_shape)
    out = []
    for item in reshape_plan(codes, ctx.rank(node, 0), p.reverse):
        if item[0] == "c":
            out.append(item[1])
        elif item[0] == "d":
            v = x.shape[item[1][0]]
            for i in item[1][1:]:
                v = v * x.shape[i]
            out.append(v)
        else:
            out.append(x.shape[item[1]] // item[2])
    return x.reshape(out)


@lowering("transpose")
def _transpose(ctx, node, p, ins):
    axes = tuple(p.axes)
    if not axes:
        rank = ctx.rank(node, 0)
        if rank is None:
            raise Unsupported("the input's rank is unknown (give input shapes)")
        axes = tuple(range(rank - 1, -1, -1))
    return ins[0].permute(axes)


@lowering("SwapAxis")
def _swapaxis(ctx, node, p, ins):
    return torch.transpose(ins[0], p.dim1, p.dim2)


@lowering("expand_dims")
def _expand_dims(ctx, node, p, ins):
    return torch.unsqueeze(ins[0], p.axis)


@lowering("squeeze")
def _squeeze(ctx, node, p, ins):
    if p.axis is None:
        return torch.squeeze(ins[0])
    axes = (p.axis,) if isinstance(p.axis, int) else tuple(p.axis)
    return torch.squeeze(ins[0], axes)


@lowering("Concat")
def _concat(ctx, node, p, ins):
    return torch.cat(list(ins), p.dim)


@lowering("stack")
def _stack(ctx, node, p, ins):
    return torch.stack(list(ins), p.axis)


@lowering("SliceChannel")
def _slice_channel(ctx, node, p, ins):
    parts = torch.tensor_split(ins[0], p.num_outputs, p.axis)
    outs = [parts[i] for i in range(p.num_outputs)]
    if p.squeeze_axis:
        outs = [torch.squeeze(o, p.axis) for o in outs]
    return outs


@lowering("slice_axis")
def _slice_axis(ctx, node, p, ins):
    end = p.end
    length = None if end is None else (end - p.begin if end >= 0 and p.begin >= 0 else None)
    if length is None:  # negative bounds: python slicing semantics on that axis
        rank = ctx.rank(node, 0)
        if rank is None:
            raise Unsupported("negative bounds with an unknown input rank (give input shapes)")
        idx = [slice(None)] * rank
        idx[p.axis] = slice(p.begin, end)
        return ins[0][tuple(idx)]
    return torch.narrow(ins[0], p.axis, p.begin, length)


@lowering("slice")
def _slice(ctx, node, p, ins):
    return ins[0][tuple(slice(b, e, s) for b, e, s in slice_spec(p))]


def _reduce(fn):
    def lower(ctx, node, p, ins):
        axes = reduce_axes(p, ctx.rank(node, 0))
        if axes is None:
            return fn(ins[0])  # every axis
        if axes == ():
            return ins[0]
        return fn(ins[0], axes, keepdim=p.keepdims)
    return lower


TABLE["sum"] = _reduce(torch.sum)
TABLE["mean"] = _reduce(torch.mean)
TABLE["max"] = _reduce(torch.amax)
TABLE["min"] = _reduce(torch.amin)


@lowering("dot")
def _dot(ctx, node, p, ins):
    a, b = ins
    if ctx.rank(node, 0) != 2 or ctx.rank(node, 1) != 2:
        raise Unsupported("inputs that are not (known to be) 2-D")
    a = a.t() if p.transpose_a else a
    b = b.t() if p.transpose_b else b
    return torch.matmul(a, b)


@lowering("batch_dot")
def _batch_dot(ctx, node, p, ins):
    a, b = ins
    a = torch.transpose(a, -1, -2) if p.transpose_a else a
    b = torch.transpose(b, -1, -2) if p.transpose_b else b
    return torch.matmul(a, b)


# --- the fused RNN --------------------------------------------------------------------------------
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def rnn_input_size(p, total):
    """The data's feature size from the length of the flat parameter vector."""
    g, d, h = _GATES[p.mode], 2 if p.bidirectional else 1, p.state_size
    size = g * h * d
    rest = (p.num_layers - 1) * (h * d + h + 2) * size
    return total // size - rest // size - h - 2 if (total - rest) % size == 0 else None


def rnn_views(p, total, input_size):
    """(offset, shape) of each parameter, per layer and direction, in torch's order
    ``w_ih, w_hh, b_ih, b_hh`` (MXNet's flat layout: every weight, then every bias)."""
    g, d, h = _GATES[p.mode], 2 if p.bidirectional else 1, p.state_size
    pos, weights = 0, []
    for layer in range(p.num_layers):
        ni = input_size if layer == 0 else h * d
        for _ in range(d):
            weights.append([(pos, (g * h, ni)), (pos + g * h * ni, (g * h, h))])
            pos += g * h * ni + g * h * h
    for w in weights:
        w += [(pos, (g * h,)), (pos + g * h, (g * h,))]
        pos += 2 * g * h
    assert pos == total
    return weights


def check_rnn(p):
    if p.projection_size is not None:
        raise Unsupported("projection_size")
    if p.use_sequence_length:
        raise Unsupported("use_sequence_length=True")
    if p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None:
        raise Unsupported("lstm_state_clip_min/max")


@lowering("RNN")
def _rnn(ctx, node, p, ins):
    check_rnn(p)
    total = ctx.param_shape(node, 1)[0]
    n_in = rnn_input_size(p, total)
    if n_in is None:
        raise Unsupported(f"a parameter vector of {total} values")
    flat = ins[1]
    params = []
    for w in rnn_views(p, total, n_in):
        params += [flat[o:o + math.prod(s)].reshape(s) for o, s in w]
    fn = {"lstm": torch.lstm, "gru": torch.gru, "rnn_tanh": torch.rnn_tanh,
          "rnn_relu": torch.rnn_relu}[p.mode]
    hx = (ins[2], ins[3]) if p.mode == "lstm" else ins[2]
    res = fn(ins[0], hx, params, True, p.num_layers, float(p.p), ctx.training, p.bidirectional,
             False)
    n_out = (3 if p.mode == "lstm" else 2) if p.state_outputs else 1
    return [res[i] for i in range(n_out)]
