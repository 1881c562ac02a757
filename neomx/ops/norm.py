"""Normalisation, regularisation and embedding layers: BatchNorm, Dropout, LeakyReLU, Embedding.

Parameter names, defaults and outputs follow MXNet 1.9.1 (``src/operator/nn/batch_norm.cc``,
``dropout.cc``, ``leaky_relu.cc``, ``tensor/indexing_op.cc``). Random draws (Dropout masks,
RReLU slopes) use torch's generators, so they differ from MXNet's; their laws do not.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from ..base import bfloat16, dtype_np
from .registry import OpDef, Param, ShapeError, TypeInferError, merge_shape, register, _sh

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _tshape(s) -> str:
    return "(" + ",".join(str(int(d)) for d in s) + ")"


def _check_given(ins, i, want):
    if ins[i] is not None and merge_shape(ins[i], want) is None:  # 0 dims: unknown
        raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[i])}, "
                         f"inferred shape={_tshape(want)}")


def _bcast_shape(ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return shape


# --- BatchNorm -----------------------------------------------------------------------------------
_BN_PARAMS = (
    Param("eps", "float", 1e-3, "Epsilon to prevent div 0. Must be no less than "
                                "CUDNN_BN_MIN_EPSILON defined in cudnn.h when using cudnn "
                                "(usually 1e-5)."),
    Param("momentum", "float", 0.9, "Momentum for moving average."),
    Param("fix_gamma", "bool", True, "Fix gamma while training."),
    Param("use_global_stats", "bool", False, "Whether use global moving statistics instead of "
                                             "local batch-norm. This will force change batch-norm "
                                             "into a scale shift operator."),
    Param("output_mean_var", "bool", False, "Output the mean and inverse std."),
    Param("axis", "int", 1, "Specify which shape axis the channel is specified."),
    Param("cudnn_off", "bool", False, "Do not select CUDNN operator, if available (ignored)."),
    Param("min_calib_range", "float", None, "The minimum scalar value in the form of float32 "
                                            "obtained through calibration (ignored).",
          optional=True),
    Param("max_calib_range", "float", None, "The maximum scalar value in the form of float32 "
                                            "obtained through calibration (ignored).",
          optional=True),
)


def _bn_axis(p, ndim):
    axis = p.axis + ndim if p.axis < 0 else p.axis
    if not 0 <= axis < ndim:
        raise ShapeError(f"Check failed: channelAxis < dshape.ndim() ({p.axis} vs. {ndim}) : "
                         f"Channel axis out of range: {p.axis}")
    return axis


def _bn_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0] if ins[0] is not None else outs[0]
    if data is None:
        return ins, outs
    data = tuple(data)
    c = data[_bn_axis(p, len(data))]
    for i in range(1, 5):
        _check_given(ins, i, (c,))
        ins[i] = (c,)
    ins[0] = data
    return ins, [data, (c,), (c,)]


def _bn_param_type(t):
    return np.float32 if np.dtype(t) in (np.dtype(np.float16), bfloat16) else t


def _bn_infer_type(p, ins, outs):
    """float16/bfloat16 data keeps float32 parameters and statistics (MXNet's BatchNormType)."""
    t = ins[0] if ins[0] is not None else outs[0]
    if t is None:
        return ins, outs
    pt = _bn_param_type(t)
    for i, have in enumerate(ins[1:], start=1):
        if have is not None and np.dtype(have) != np.dtype(pt):
            raise TypeInferError(f"at {i}-th input: expected {np.dtype(pt).name}, "
                                 f"got {np.dtype(have).name}")
    return [t] + [pt] * 4, [t, pt, pt]


def _bn_forward(p, ins, oc):
    """Returns (output, mean, 1/sqrt(var + eps)); batch statistics when training (then the
    moving statistics are updated in place with the biased variance), else the moving ones."""
    x, gamma, beta, mm, mv = ins
    axis = _bn_axis(p, x.dim())
    if p.fix_gamma:
        gamma.fill_(1)  # MXNet writes 1 into the gamma array itself
    xc = x.float() if x.dtype in _LOW_PRECISION else x
    shape = _bcast_shape(x.dim(), axis)
    fused = axis == 1 and xc is x and x.dim() >= 2 and gamma.dtype == x.dtype
    n = x.numel() // max(1, x.shape[axis])
    if oc.is_train and not p.use_global_stats and fused and n > 1:
        # ATen's training kernel: statistics and output in its own passes (var_mean over the
        # non-channel axes was the slowest part). Scratch running statistics with momentum 1
        # receive the batch mean and the unbiased variance, from which MXNet's biased one.
        rm, rv = torch.zeros_like(mm), torch.zeros_like(mv)
        y, mean, invstd = torch.ops.aten.native_batch_norm(x, gamma, beta, rm, rv, True, 1.0,
                                                           p.eps)
        var = rv.mul_((n - 1) / n)
        m = p.momentum
        mm.mul_(m).add_(mean.to(mm.dtype), alpha=1 - m)
        mv.mul_(m).add_(var.to(mv.dtype), alpha=1 - m)
        return y, mean.to(mm.dtype), invstd.to(mv.dtype)
    if oc.is_train and not p.use_global_stats:
        red = tuple(d for d in range(x.dim()) if d != axis)
        var, mean = torch.var_mean(xc, dim=red, correction=0)
        m = p.momentum
        mm.mul_(m).add_(mean.to(mm.dtype), alpha=1 - m)
        mv.mul_(m).add_(var.to(mv.dtype), alpha=1 - m)
    else:
        mean, var = mm.clone(), mv
    invstd = torch.rsqrt(var + p.eps)
    if fused:
        # one fused pass (ATen's inference kernel with these statistics; gamma is 1 when fixed)
        y = torch.batch_norm(x, gamma, beta, mean, var, False, 0.0, p.eps, True)
        return y, mean.to(mm.dtype), invstd.to(mv.dtype)
    scale = invstd if p.fix_gamma else invstd * gamma
    y = (xc - mean.reshape(shape)) * scale.reshape(shape) + beta.reshape(shape)
    return y.to(x.dtype), mean.to(mm.dtype), invstd.to(mv.dtype)


def _bn_backward(p, ins, oc):
    """(d data, d gamma, d beta) from the saved mean and inverse std."""
    g, x, gamma, mean, invstd = ins
    axis = _bn_axis(p, x.dim())
    if (oc.is_train and not p.use_global_stats and axis == 1 and x.dim() >= 2
            and x.dtype not in _LOW_PRECISION and g.dtype == x.dtype == gamma.dtype):
        # ATen's fused batch-norm backward from the saved mean and inverse std (the same sums)
        dx, dgamma, dbeta = torch.ops.aten.native_batch_norm_backward(
            g, x, gamma, None, None, mean, invstd, True, p.eps, [True, True, True])
        if p.fix_gamma:
            dgamma = torch.zeros_like(dgamma)
        return dx, dgamma, dbeta
    shape = _bcast_shape(x.dim(), axis)
    red = tuple(d for d in range(x.dim()) if d != axis)
    gc = g.float() if g.dtype in _LOW_PRECISION else g
    xc = x.float() if x.dtype in _LOW_PRECISION else x
    xhat = (xc - mean.reshape(shape)) * invstd.reshape(shape)
    dbeta = gc.sum(dim=red)
    dgamma = (gc * xhat).sum(dim=red)
    scale = invstd if p.fix_gamma else invstd * gamma
    if oc.is_train and not p.use_global_stats:
        n = x.numel() // x.shape[axis]
        dx = (gc - (dbeta / n).reshape(shape) - xhat * (dgamma / n).reshape(shape))
        dx = dx * scale.reshape(shape)
    else:
        dx = gc * scale.reshape(shape)
    if p.fix_gamma:
        dgamma = torch.zeros_like(dgamma)
    return dx.to(x.dtype), dgamma.to(gamma.dtype), dbeta.to(gamma.dtype)


def _bn_gradient(F, p, ins, outs, ograds):
    dx, dgamma, dbeta = F._backward_BatchNorm(ograds[0], ins[0], ins[1], outs[1], outs[2], **p)
    return [dx, dgamma, dbeta]


register(OpDef(
    "BatchNorm", _bn_forward, _bn_infer_shape, params=_BN_PARAMS,
    inputs=("data", "gamma", "beta"), aux=("moving_mean", "moving_var"),
    outputs=lambda p: ("output", "mean", "var") if p.output_mean_var else ("output",),
    num_hidden_outputs=lambda p: 0 if p.output_mean_var else 2, infer_type=_bn_infer_type,
    mutates_aux=True, gradient=_bn_gradient,
    doc="Batch normalization.\n\n"
        "Normalizes a data batch by mean and variance over every axis but ``axis``, and applies a\n"
        "scale ``gamma`` (fixed to 1 with ``fix_gamma``; the gamma array is set to 1) and offset\n"
        "``beta``: ``y = (x - mean) / sqrt(var + eps) * gamma + beta``. Training uses the batch\n"
        "statistics (biased variance) and updates ``moving_mean``/``moving_var`` with\n"
        "``momentum``; inference or ``use_global_stats`` uses the moving statistics. The extra\n"
        "outputs are the mean and ``1/sqrt(var + eps)``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.ones((2, 3))\n"
        ">>> c = mx.nd.ones((3,))\n"
        ">>> mx.nd.BatchNorm(x, c, c * 0, c * 0, c).shape\n"
        "(2, 3)"))
register(OpDef(
    "_backward_BatchNorm", _bn_backward,
    lambda p, ins, outs: (ins, [ins[1], ins[2], ins[2]]), params=_BN_PARAMS,
    inputs=("out_grad", "data", "gamma", "mean", "var"), outputs=("data", "gamma", "beta"),
    infer_type=lambda p, ins, outs: (ins, [ins[1], ins[2], ins[2]]), public=False,
    doc="Gradient of BatchNorm."))


# --- Dropout -------------------------------------------------------------------------------------
_DROPOUT_PARAMS = (
    Param("p", "float", 0.5, "Fraction of the input that gets dropped out during training time."),
    Param("mode", "str", "training", "Whether to only turn on dropout during training or to also "
                                     "turn on for inference.", choices=("always", "training")),
    Param("axes", "shape", (), "Axes for variational dropout kernel."),
    Param("cudnn_off", "bool", False, "Whether to turn off cudnn in dropout operator (ignored).",
          optional=True),
)


def _dropout_mask_shape(p, shape):
    shape = list(shape)
    for a in p.axes:
        shape[a] = 1
    return tuple(shape)


def _dropout_infer_shape(p, ins, outs):
    if not 0.0 <= p.p <= 1.0:
        raise ShapeError(f"value {p.p:g} for Parameter p exceed bound [0,1]")
    data = ins[0] if ins[0] is not None else outs[0]
    if data is None:
        return ins, outs
    data = tuple(data)
    for a in p.axes:
        if not -len(data) <= a < len(data):
            raise ShapeError(f"Dropout: axis {a} is out of range for {len(data)}-D data")
    return [data], [data, _dropout_mask_shape(p, data)]


def _dropout_forward(p, ins, oc):
    """Returns (output, mask) with mask in {0, 1/(1-p)} (broadcast over ``axes``); the mask is
    all ones when dropout is off."""
    x = ins[0]
    shape = _dropout_mask_shape(p, x.shape)
    if not (oc.is_train or p.mode == "always") or p.p == 0:
        return x.clone(), torch.ones(shape, dtype=x.dtype, device=x.device)
    keep = 1.0 - p.p
    mask = torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(keep)
    mask = mask / keep  # p == 1 gives 0/0 = nan, as in MXNet
    return x * mask, mask


register(OpDef(
    "Dropout", _dropout_forward, _dropout_infer_shape, params=_DROPOUT_PARAMS, deterministic=False,
    num_hidden_outputs=1,
    gradient=lambda F, p, ins, outs, ograds: [F._backward_Dropout(ograds[0], outs[1])],
    doc="Applies dropout operation to input array.\n\n"
        "During training (or always with ``mode='always'``) each element (or each slice along\n"
        "the non-``axes`` dims) is zeroed with probability ``p`` and the rest are scaled by\n"
        "``1/(1-p)``; the backward pass reuses the same mask. Otherwise it is the identity.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.Dropout(mx.nd.ones((2, 2)), p=0.5).asnumpy().tolist()\n"
        "[[1.0, 1.0], [1.0, 1.0]]"))
register(OpDef(
    "_backward_Dropout", lambda p, ins, oc: ins[0] * ins[1],
    lambda p, ins, outs: (ins, [ins[0]]), inputs=("out_grad", "mask"), public=False,
    doc="Gradient of Dropout: the head gradient times the saved mask."))


# --- LeakyReLU -----------------------------------------------------------------------------------
_SELU_LAMBDA = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717

_LEAKY_PARAMS = (
    Param("act_type", "str", "leaky", "Activation function to be applied.",
          choices=("elu", "gelu", "leaky", "prelu", "rrelu", "selu")),
    Param("slope", "float", 0.25, "Init slope for the activation. (For leaky and elu only)"),
    Param("lower_bound", "float", 0.125, "Lower bound of random slope. (For rrelu only)"),
    Param("upper_bound", "float", 0.334, "Upper bound of random slope. (For rrelu only)"),
)


def _leaky_inputs(p):
    return ("data", "gamma") if p.act_type == "prelu" else ("data",)


def _leaky_outputs(p):
    return ("output", "mask") if p.act_type == "rrelu" else ("output",)


def _leaky_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0] if ins[0] is not None else outs[0]
    if data is None:
        return ins, outs
    data = tuple(data)
    ins[0] = data
    if p.act_type == "prelu":
        if len(data) < 2:
            raise ShapeError(f"LeakyReLU: prelu needs data with a channel axis (axis 1), got "
                             f"{_sh(data)}")
        if ins[1] is None:
            ins[1] = (data[1],)
        elif tuple(ins[1]) not in ((data[1],), (1,)):
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[1])}, inferred shape="
                             f"{_tshape((data[1],))}")
    return ins, [data] * len(_leaky_outputs(p))


def _channel_view(gamma, ndim):
    """prelu's gamma (C,) or (1,) shaped to broadcast over axis 1."""
    return gamma.reshape([1, -1] + [1] * (ndim - 2)) if gamma.numel() > 1 else gamma


def _leaky_forward(p, ins, oc):
    x = ins[0]
    t = p.act_type
    if t == "leaky":
        return torch.where(x > 0, x, x * p.slope)
    if t == "prelu":
        return torch.where(x > 0, x, x * _channel_view(ins[1], x.dim()))
    if t == "elu":
        return torch.where(x > 0, x, torch.expm1(x) * p.slope)
    if t == "selu":
        return _SELU_LAMBDA * torch.where(x > 0, x, torch.expm1(x) * _SELU_ALPHA)
    if t == "gelu":
        return 0.5 * x * (1 + torch.erf(x * (1 / math.sqrt(2))))
    # rrelu: a random slope per element when training, their mean otherwise
    if oc.is_train:
        mask = torch.empty_like(x).uniform_(p.lower_bound, p.upper_bound)
    else:
        mask = torch.full_like(x, (p.lower_bound + p.upper_bound) / 2)
    return torch.where(x > 0, x, x * mask), mask


def _leaky_backward(p, ins, oc):
    """d data (and d gamma for prelu), MXNet's formulas: the branch follows the sign of the
    input (also for a negative slope); elu/selu read their value off the output."""
    g, x, y = ins[0], ins[1], ins[2]
    t = p.act_type
    if t == "leaky":
        return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, p.slope))
    if t == "prelu":
        gamma = ins[3]
        gb = _channel_view(gamma, x.dim())
        dx = g * torch.where(x > 0, torch.ones_like(x), gb.expand_as(x))
        contrib = g * torch.where(x > 0, torch.zeros_like(x), x)
        if gamma.numel() > 1:
            dgamma = contrib.sum(dim=tuple(d for d in range(x.dim()) if d != 1))
        else:
            dgamma = contrib.sum().reshape(gamma.shape)
        return dx, dgamma
    if t == "elu":
        return g * torch.where(x > 0, torch.ones_like(y), y + p.slope)
    if t == "selu":
        # MXNet 1.9.1 applies lambda*(a + alpha) to the (already lambda-scaled) output, not the
        # true derivative y + lambda*alpha; kept so training matches MXNet.
        return g * torch.where(x > 0, torch.full_like(y, _SELU_LAMBDA),
                               _SELU_LAMBDA * (y + _SELU_ALPHA))
    if t == "gelu":
        cdf = 0.5 * (1 + torch.erf(x * (1 / math.sqrt(2))))
        pdf = torch.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return g * (cdf + x * pdf)
    return g * torch.where(x > 0, torch.ones_like(x), ins[3])  # rrelu: the saved slopes


def _leaky_backward_inputs(p):
    extra = {"prelu": ("gamma",), "rrelu": ("mask",)}.get(p.act_type, ())
    return ("out_grad", "data", "output") + extra


def _leaky_gradient(F, p, ins, outs, ograds):
    extra = (ins[1],) if p.act_type == "prelu" else (outs[1],) if p.act_type == "rrelu" else ()
    res = F._backward_LeakyReLU(ograds[0], ins[0], outs[0], *extra, **p)
    return list(res) if p.act_type == "prelu" else [res]


register(OpDef(
    "LeakyReLU", _leaky_forward, _leaky_infer_shape, params=_LEAKY_PARAMS, inputs=_leaky_inputs,
    deterministic=lambda p: p.act_type != "rrelu",
    input_init=lambda p: {"gamma": '["Constant", {"value": 0.25}]'} if p.act_type == "prelu" else {},
    outputs=_leaky_outputs, gradient=_leaky_gradient,
    doc="Applies Leaky rectified linear unit activation element-wise to the input.\n\n"
        "leaky: ``x if x > 0 else slope*x``; prelu: ``x if x > 0 else gamma*x`` with a learned\n"
        "``gamma`` per channel (axis 1); rrelu: a random slope in ``[lower_bound, upper_bound)``\n"
        "when training, their mean otherwise (second output: the slopes); elu:\n"
        "``slope*(exp(x)-1)`` for x <= 0; selu: scaled elu with SELU's constants; gelu:\n"
        "``x*Phi(x)`` (erf form).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.LeakyReLU(mx.nd.array([-2, 3]), slope=0.5).asnumpy().tolist()\n"
        "[-1.0, 3.0]"))
register(OpDef(
    "_backward_LeakyReLU", _leaky_backward,
    lambda p, ins, outs: (ins, [ins[1]] + ([ins[3]] if p.act_type == "prelu" else [])),
    params=_LEAKY_PARAMS, inputs=_leaky_backward_inputs,
    outputs=lambda p: ("data", "gamma") if p.act_type == "prelu" else ("data",),
    public=False, doc="Gradient of LeakyReLU."))


# --- Embedding -----------------------------------------------------------------------------------
_EMBED_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")
_EMBED_PARAMS = (
    Param("input_dim", "int", doc="Vocabulary size of the input indices."),
    Param("output_dim", "int", doc="Dimension of the embedding vectors."),
    Param("dtype", "dtype", "float32", "Data type of weight."),
    Param("sparse_grad", "bool", False, "Compute row sparse gradient in the backward calculation "
                                        "(neomx computes a dense one)."),
)


def _embed_infer_shape(p, ins, outs):
    ins = list(ins)
    want = (p.input_dim, p.output_dim)
    _check_given(ins, 1, want)
    ins[1] = want
    if ins[0] is None:
        return ins, outs
    return ins, [tuple(ins[0]) + (p.output_dim,)]


def _embed_infer_type(p, ins, outs):
    w = ins[1] if ins[1] is not None else (outs[0] if outs[0] is not None else dtype_np(p.dtype))
    return [ins[0] if ins[0] is not None else np.float32, w], [w]


def _embed_indices(data, input_dim):
    """Indices as MXNet reads them: truncated toward zero, then clipped to [0, input_dim)."""
    return data.to(torch.int64).clamp_(0, input_dim - 1)


def _embed_forward(p, ins, oc):
    data, weight = ins
    return TF.embedding(_embed_indices(data, p.input_dim), weight)


def _embed_backward(p, ins, oc):
    g, data = ins
    idx = _embed_indices(data, p.input_dim).reshape(-1)
    gw = torch.zeros((p.input_dim, p.output_dim), dtype=g.dtype, device=g.device)
    return gw.index_add_(0, idx, g.reshape(-1, p.output_dim))


register(OpDef(
    "Embedding", _embed_forward, _embed_infer_shape, params=_EMBED_PARAMS,
    inputs=("data", "weight"), infer_type=_embed_infer_type,
    gradient=lambda F, p, ins, outs, ograds: [
        None, F._backward_Embedding(ograds[0], ins[0], **p)],
    doc="Maps integer indices to vector representations (embeddings).\n\n"
        "``data`` holds indices (any dtype; truncated and clipped to ``[0, input_dim)``);\n"
        "``weight`` is ``(input_dim, output_dim)``; the output has shape\n"
        "``data.shape + (output_dim,)``. The weight gradient sums the head gradient rows per\n"
        "index; ``data`` gets no gradient (MXNet refuses to compute one).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> w = mx.nd.array([[0, 1], [2, 3], [4, 5]])\n"
        ">>> y = mx.nd.Embedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2)\n"
        ">>> y.asnumpy().tolist()\n"
        "[[4.0, 5.0], [0.0, 1.0]]"))
register(OpDef(
    "_backward_Embedding", _embed_backward,
    lambda p, ins, outs: (ins, [(p.input_dim, p.output_dim)]), params=_EMBED_PARAMS,
    inputs=("out_grad", "data"),
    infer_type=lambda p, ins, outs: (ins, [ins[0]]), public=False,
    doc="Gradient of Embedding with respect to its weight."))
