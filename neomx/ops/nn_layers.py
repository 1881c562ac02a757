"""More neural-network layers: LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN,
Deconvolution, UpSampling, SoftmaxActivation and the sequence operators.

Parameter names, defaults, outputs (hidden ones included) and check messages follow MXNet 1.9.1
(``src/operator/nn/layer_norm.cc``, ``instance_norm.cc``, ``nn/group_norm.cc``,
``l2_normalization.cc``, ``nn/lrn.cc``, ``nn/deconvolution.cc``, ``nn/upsampling.cc``,
``sequence_*.cc``, ``nn/softmax_activation.cc``). Most gradients are the true derivatives of
the forward: their ``_backward_<op>`` replays the forward under torch autograd (see
:func:`replay_op`), as Pooling's general backward does.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from .registry import OpDef, Param, ShapeError, TypeInferError, register, _sh
from .replay import replay_vjp


def _tshape(s) -> str:
    """MXNet's TShape text: ``(2,3)``, ``(3,)``."""
    return "(" + ",".join(str(int(d)) for d in s) + ("," if len(s) == 1 else "") + ")"


def _known(s) -> bool:
    return s is not None and len(s) > 0 and all(d > 0 for d in s)


def set_shape(ins, i, want, brackets=False):
    """``ins[i] = want`` unless a different shape was given (MXNet's SHAPE_ASSIGN_CHECK; some
    of MXNet's operators print the inferred shape as ``[4]``, others as ``(4,)``)."""
    have = ins[i]
    if have is not None and len(have) and tuple(have) != tuple(want):
        if len(have) != len(want) or any(a and b and a != b for a, b in zip(have, want)):
            shown = _sh(want) if brackets else _tshape(want)
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(have)}, inferred shape={shown}")
    ins[i] = tuple(want)


def data_typed(*own):
    """Type rule: every input but the positions ``own`` (labels, lengths: any type, by default
    the data's) and every output take the first input's type."""
    def infer(p, ins, outs):
        t = ins[0] if ins[0] is not None else outs[0]
        if t is None:
            return ins, outs
        res = [(x if x is not None else t) if i in own else t for i, x in enumerate(ins)]
        for i, x in enumerate(ins):
            if x is not None and i not in own and np.dtype(x) != np.dtype(t):
                raise TypeInferError(f"Check failed: assign(&dattr, vec.at(i)): Incompatible attr "
                                     f"in node {{node}} at {i}-th input: expected "
                                     f"{np.dtype(t).name}, got {np.dtype(x).name}")
        return res, [t] * len(outs)
    return infer


# --- gradients by replaying the forward under autograd -------------------------------------------
def _replay_backward(compute, no_grad):
    """The kernel of ``_backward_<op>``: ins = (out_grad, *op inputs); returns d(op input) for
    every input (zeros for ``no_grad`` positions and non-float inputs)."""
    def backward(p, ins, oc):
        g, xs = ins[0], ins[1:]
        skip = no_grad(p) if callable(no_grad) else no_grad
        res = replay_vjp(lambda leaves: compute(p, leaves), xs, (g,),
                         [i not in skip and x.is_floating_point() for i, x in enumerate(xs)])
        return res[0] if len(res) == 1 else tuple(res)
    return backward


def replay_op(name, compute, forward, infer_shape, *, params, inputs=("data",), no_grad=(),
              zero_grad=False, infer_type=None, doc="", **kw):
    """Register ``name`` (forward returns its outputs, hidden ones included; ``compute(p, ins)``
    its first output, differentiably) and ``_backward_<name>`` (autograd over ``compute``).
    ``no_grad``: input positions (or fn(p) -> positions) that get no gradient: left unwritten,
    or zeros with ``zero_grad`` (as MXNet writes for some ops)."""
    bname = "_backward_" + name
    in_names = inputs if callable(inputs) else (lambda p, _v=tuple(inputs): _v)

    def gradient(F, p, ins, outs, ograds):
        n = len(in_names(p))
        res = getattr(F, bname)(ograds[0], *ins[:n], **p)
        res = [res] if n == 1 else list(res)
        skip = () if zero_grad else no_grad(p) if callable(no_grad) else no_grad
        return [None if i in skip else r for i, r in enumerate(res)]

    extra = {"infer_type": infer_type} if infer_type else {}
    register(OpDef(name, forward, infer_shape, params=params, inputs=inputs, gradient=gradient,
                   doc=doc, **extra, **kw))
    register(OpDef(
        bname, _replay_backward(compute, no_grad),
        lambda p, ins, outs: (ins, list(ins[1:])), params=params,
        inputs=lambda p: ("out_grad",) + tuple(in_names(p)), outputs=lambda p: tuple(in_names(p)),
        infer_type=lambda p, ins, outs: (ins, list(ins[1:])), public=False,
        doc=f"Gradient of {name}."))


# --- LayerNorm -----------------------------------------------------------------------------------
_LN_PARAMS = (
    Param("axis", "int", -1, "The axis to perform layer normalization. Usually, this should be "
                             "be axis of the channel dimension. Negative values means indexing "
                             "from right to left."),
    Param("eps", "float", 1e-5, "An `epsilon` parameter to prevent division by 0."),
    Param("output_mean_var", "bool", False, "Output the mean and std calculated along the given "
                                            "axis."),
)


def _ln_axis(p, ndim):
    axis = p.axis + ndim if p.axis < 0 else p.axis
    if not 0 <= axis < ndim:
        raise ShapeError(f"Check failed: axis >= 0 && axis < dshape.ndim(): Channel axis out of "
                         f"range: axis={p.axis}")
    return axis


def _ln_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if not data:
        return ins, outs
    data = tuple(data)
    axis = _ln_axis(p, len(data))
    c = data[axis]
    if not c:
        return ins, outs
    set_shape(ins, 1, (c,), brackets=True)
    set_shape(ins, 2, (c,), brackets=True)
    stat = data[:axis] + (1,) + data[axis + 1:]
    return ins, [data, stat, stat]


def _ln_stats(p, x):
    axis = _ln_axis(p, x.dim())
    var, mean = torch.var_mean(x, dim=axis, keepdim=True, correction=0)
    return axis, mean, torch.sqrt(var + p.eps)


def _ln_compute(p, ins):
    x, gamma, beta = ins
    axis = _ln_axis(p, x.dim())
    xm = x.movedim(axis, -1)
    return TF.layer_norm(xm, (xm.shape[-1],), gamma, beta, p.eps).movedim(-1, axis)


def _ln_forward(p, ins, oc):
    """One ATen pass for the output and the statistics (torch.var_mean over the last axis was
    ~7x slower than the whole normalization on CPU): ``std = 1 / rstd = sqrt(var + eps)``."""
    x, gamma, beta = ins
    axis = _ln_axis(p, x.dim())
    if x.dtype not in (torch.float16, torch.bfloat16) and gamma.dtype == beta.dtype == x.dtype:
        xm = x.movedim(axis, -1)
        y, mean, rstd = torch.ops.aten.native_layer_norm(xm, [xm.shape[-1]], gamma, beta, p.eps)
        return y.movedim(-1, axis), mean.movedim(-1, axis), torch.reciprocal(rstd).movedim(-1, axis)
    _, mean, std = _ln_stats(p, x)
    return _ln_compute(p, ins), mean, std


_MV_OUTPUTS = lambda p: ("output", "mean", "std") if p.output_mean_var else ("output",)  # noqa
_MV_HIDDEN = lambda p: 0 if p.output_mean_var else 2  # noqa: E731

replay_op(
    "LayerNorm", _ln_compute, _ln_forward, _ln_infer_shape, params=_LN_PARAMS,
    inputs=("data", "gamma", "beta"), outputs=_MV_OUTPUTS, num_hidden_outputs=_MV_HIDDEN,
    doc="Layer normalization.\n\n"
        "Normalizes ``data`` over ``axis`` (mean and biased variance) and applies a scale\n"
        "``gamma`` and offset ``beta`` of shape ``(data.shape[axis],)``:\n"
        "``out = (x - mean) / sqrt(var + eps) * gamma + beta``. The extra outputs (visible with\n"
        "``output_mean_var``) are the mean and ``sqrt(var + eps)``, with ``axis`` kept as 1.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([[1, 3]])\n"
        ">>> mx.nd.LayerNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), eps=0).asnumpy().tolist()\n"
        "[[-1.0, 1.0]]")


# --- InstanceNorm --------------------------------------------------------------------------------
_IN_PARAMS = (Param("eps", "float", 1e-3, "An `epsilon` parameter to prevent division by 0."),)


def _in_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if not data:
        return ins, outs
    data = tuple(data)
    if len(data) < 2:
        raise ShapeError(f"InstanceNorm: data must have a channel axis, got {_sh(data)}")
    ins[1] = ins[2] = (data[1],)  # MXNet assigns them without a check
    return ins, [data, data[:2], data[:2]]


def _in_stats(p, x):
    """Mean and biased variance per (sample, channel), shaped to broadcast against x."""
    var, mean = torch.var_mean(x.reshape(x.shape[0], x.shape[1], -1), dim=2, correction=0)
    shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)
    return mean.reshape(shape), var.reshape(shape)


def _in_compute(p, ins):
    x, gamma, beta = ins
    if x.dim() >= 3:
        return TF.instance_norm(x, weight=gamma, bias=beta, eps=p.eps)
    mean, var = _in_stats(p, x)
    shape = [1, -1] + [1] * (x.dim() - 2)
    return (x - mean) / torch.sqrt(var + p.eps) * gamma.reshape(shape) + beta.reshape(shape)


def _in_forward(p, ins, oc):
    x = ins[0]
    mean, var = _in_stats(p, x)
    return _in_compute(p, ins), mean.reshape(x.shape[:2]), var.reshape(x.shape[:2])


replay_op(
    "InstanceNorm", _in_compute, _in_forward, _in_infer_shape, params=_IN_PARAMS,
    inputs=("data", "gamma", "beta"), num_hidden_outputs=2,
    doc="Applies instance normalization to the n-dimensional input array.\n\n"
        "Each (sample, channel) slice is normalized over its spatial dims:\n"
        "``out = (x - mean) / sqrt(var + eps) * gamma + beta`` with ``gamma``/``beta`` of shape\n"
        "``(channels,)``.")


# --- GroupNorm -----------------------------------------------------------------------------------
_GN_PARAMS = (
    Param("num_groups", "int", 1, "Total number of groups."),
    Param("eps", "float", 1e-5, "An `epsilon` parameter to prevent division by 0."),
    Param("output_mean_var", "bool", False, "Output the mean and std calculated along the given "
                                            "axis."),
)


def _gn_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if not data:
        return ins, outs
    data = tuple(data)
    g = p.num_groups
    if len(data) < 2:
        raise ShapeError(f"GroupNorm: data must have a channel axis, got {_sh(data)}")
    if data[1] % g:
        raise ShapeError(f"Check failed: dshape[1] % num_groups == 0 ({data[1] % g} vs. 0) : "
                         "# of channels must be divisible by # of groups")
    ins[1] = ins[2] = (g,)  # MXNet assigns them without a check
    return ins, [data, (data[0], g), (data[0], g)]


def _gn_stats(p, x):
    xg = x.reshape(x.shape[0], p.num_groups, -1)
    var, mean = torch.var_mean(xg, dim=2, keepdim=True, correction=0)
    return xg, mean, torch.sqrt(var + p.eps)


def _gn_compute(p, ins):
    x, gamma, beta = ins
    xhat = TF.group_norm(x.reshape(x.shape[0], x.shape[1], -1), p.num_groups, eps=p.eps)
    y = xhat.reshape(x.shape[0], p.num_groups, -1) * gamma.reshape(1, -1, 1) \
        + beta.reshape(1, -1, 1)
    return y.reshape(x.shape)


def _gn_forward(p, ins, oc):
    x = ins[0]
    _, mean, std = _gn_stats(p, x)
    n = x.shape[0]
    return _gn_compute(p, ins), mean.reshape(n, -1), std.reshape(n, -1)


replay_op(
    "GroupNorm", _gn_compute, _gn_forward, _gn_infer_shape, params=_GN_PARAMS,
    inputs=("data", "gamma", "beta"), outputs=_MV_OUTPUTS, num_hidden_outputs=_MV_HIDDEN,
    doc="Group normalization.\n\n"
        "The channels (axis 1) are split into ``num_groups`` groups; each (sample, group) is\n"
        "normalized over its channels and spatial dims, then scaled by ``gamma`` and shifted by\n"
        "``beta``, both of shape ``(num_groups,)`` in MXNet 1.x (one value per group). The extra\n"
        "outputs are the mean and ``sqrt(var + eps)``, of shape ``(batch, num_groups)``.")


# --- L2Normalization -----------------------------------------------------------------------------
_L2_PARAMS = (
    Param("eps", "float", 1e-10, "A small constant for numerical stability."),
    Param("mode", "str", "instance", "Specify the dimension along which to compute L2 norm.",
          choices=("channel", "instance", "spatial")),
)


def _l2_infer_shape(p, ins, outs):
    data = ins[0]
    if not data:
        return ins, outs
    data = tuple(data)
    if p.mode == "instance":
        norm = (data[0],)
    else:
        if len(data) < 3:
            raise ShapeError(f"Check failed: dshape.ndim() >= 3 ({len(data)} vs. 3) : At lease 3 "
                             f"dimensions required in {p.mode} mode")
        norm = (data[0], 1) + data[2:] if p.mode == "channel" else data[:2]
    return [data], [data, norm]


def _l2_norm(p, x):
    """The norm, broadcastable against x."""
    if p.mode == "instance":
        dims = tuple(range(1, x.dim()))
    elif p.mode == "channel":
        dims = (1,)
    else:
        dims = tuple(range(2, x.dim()))
    return torch.sqrt((x * x).sum(dim=dims, keepdim=True) + p.eps)


def _l2_forward(p, ins, oc):
    x = ins[0]
    norm = _l2_norm(p, x)
    shape = {"instance": x.shape[:1], "spatial": x.shape[:2]}.get(p.mode, norm.shape)
    return x / norm, norm.reshape(shape)


replay_op(
    "L2Normalization", lambda p, ins: ins[0] / _l2_norm(p, ins[0]), _l2_forward, _l2_infer_shape,
    params=_L2_PARAMS, num_hidden_outputs=1,
    doc="Normalize the input array using the L2 norm.\n\n"
        "``out = x / sqrt(sum(x**2) + eps)`` with the sum over every axis but the first\n"
        "(instance), over axis 1 (channel) or over the spatial axes 2.. (spatial).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> y = mx.nd.L2Normalization(mx.nd.array([[3, 4]]))\n"
        ">>> [round(float(v), 4) for v in y[0].asnumpy()]\n"
        "[0.6, 0.8]")


# --- LRN -----------------------------------------------------------------------------------------
_LRN_PARAMS = (
    Param("alpha", "float", 1e-4, "The variance scaling parameter :math:`\\alpha` in the LRN "
                                  "expression."),
    Param("beta", "float", 0.75, "The power parameter :math:`\\beta` in the LRN expression."),
    Param("knorm", "float", 2.0, "The parameter :math:`k` in the LRN expression."),
    Param("nsize", "int", doc="normalization window width in elements."),
)


def _lrn_norm(p, x):
    """knorm + alpha/nsize * (sum of x**2 over channels c - (nsize-1)//2 .. c + (nsize-1)//2);
    an even nsize sums nsize - 1 channels but still divides by nsize, as MXNet (oneDNN)."""
    sq = (x * x).unsqueeze(1)
    half = (p.nsize - 1) // 2
    sq = TF.pad(sq, [0, 0] * (x.dim() - 2) + [half, half])
    win = sq.unfold(2, 2 * half + 1, 1).sum(-1).squeeze(1)
    return p.knorm + (p.alpha / p.nsize) * win


def _lrn_compute(p, ins):
    x = ins[0]
    return x * _lrn_norm(p, x).pow(-p.beta)


def _lrn_infer_shape(p, ins, outs):
    data = ins[0]
    if not data:
        return ins, outs
    return [tuple(data)], [tuple(data)] * 2


replay_op(
    "LRN", _lrn_compute,
    lambda p, ins, oc: (_lrn_compute(p, ins), _lrn_norm(p, ins[0])), _lrn_infer_shape,
    params=_LRN_PARAMS, num_hidden_outputs=1,
    doc="Applies local response normalization to the input.\n\n"
        "``out[c] = x[c] * (knorm + alpha / nsize * sum(x[c']**2))**(-beta)`` with the sum over\n"
        "the channels ``c'`` within ``(nsize-1)//2`` of ``c``.")


# --- SoftmaxActivation ---------------------------------------------------------------------------
_SA_PARAMS = (Param("mode", "str", "instance", "Specifies how to compute the softmax.",
                    choices=("channel", "instance")),)


def _same_infer(p, ins, outs):
    data = ins[0] if ins[0] else outs[0]
    return ([tuple(data)], [tuple(data)]) if data else (ins, outs)


def _sa_forward(p, ins, oc):
    return torch.softmax(ins[0], dim=1 if p.mode == "channel" else -1)


def _sa_backward(p, ins, oc):
    """MXNet 1.9.1 differentiates along axis 1 in both modes (for instance mode on more than
    two dims that is not the forward's last axis; kept so gradients match MXNet's)."""
    g, y = ins
    return y * (g - (g * y).sum(dim=1, keepdim=True))


register(OpDef(
    "SoftmaxActivation", _sa_forward, _same_infer, params=_SA_PARAMS,
    gradient=lambda F, p, ins, outs, ograds: [F._backward_SoftmaxActivation(ograds[0], outs[0],
                                                                            **p)],
    doc="Applies softmax activation to input.\n\n"
        "``instance``: softmax over the last axis; ``channel``: over axis 1. The gradient is\n"
        "MXNet 1.9.1's: the softmax Jacobian along axis 1 in both modes (for instance mode on\n"
        "data of more than two dims this is not the derivative of the forward).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.SoftmaxActivation(mx.nd.array([[0, 0]])).asnumpy().tolist()\n"
        "[[0.5, 0.5]]"))
register(OpDef("_backward_SoftmaxActivation", _sa_backward, lambda p, ins, outs: (ins, [ins[0]]),
               params=_SA_PARAMS, inputs=("out_grad", "output"), public=False,
               doc="Gradient of SoftmaxActivation (MXNet's, along axis 1)."))


# --- Deconvolution -------------------------------------------------------------------------------
_DECONV_PARAMS = (
    Param("kernel", "shape", doc="Deconvolution kernel size: (w,), (h, w) or (d, h, w)."),
    Param("stride", "shape", (), "The stride used for the corresponding convolution: (w,), "
                                 "(h, w) or (d, h, w). Defaults to 1 for each dimension."),
    Param("dilate", "shape", (), "Dilation factor for each dimension of the input: (w,), (h, w) "
                                 "or (d, h, w). Defaults to 1 for each dimension."),
    Param("pad", "shape", (), "The amount of implicit zero padding added during convolution for "
                              "each dimension of the input."),
    Param("adj", "shape", (), "Adjustment for output shape: (w,), (h, w) or (d, h, w). If "
                              "`target_shape` is set, `adj` will be ignored and computed "
                              "accordingly."),
    Param("target_shape", "shape", (), "Shape of the output tensor: (w,), (h, w) or (d, h, w)."),
    Param("num_filter", "int", doc="Number of output filters."),
    Param("num_group", "int", 1, "Number of groups partition."),
    Param("workspace", "int", 512, "Maximum temporary workspace allowed (MB) (ignored)."),
    Param("no_bias", "bool", True, "Whether to disable bias parameter."),
    Param("cudnn_tune", "str", None, "Whether to pick convolution algorithm by running "
                                     "performance test (ignored).",
          choices=("fastest", "limited_workspace", "off"), optional=True),
    Param("cudnn_off", "bool", False, "Turns off the cuDNN library (ignored)."),
    Param("layout", "str", None, "Set layout for input, output and weight. Empty for default "
                                 "layout, NCW for 1d, NCHW for 2d and NCDHW for 3d.",
          choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC"), optional=True),
)
_DECONV_DIMS = {1: "3D in batch-num_filter-x", 2: "4D in batch-num_filter-y-x",
                3: "5D in batch-num_filter-depth-y-x"}


def _per_dim(p, name, nsp, default):
    v = tuple(p[name])
    return v if v else (default,) * nsp


def _deconv_geometry(p, sp):
    """(stride, dilate, pad, adj, out) for spatial input sizes ``sp`` (0 = unknown)."""
    nsp = len(p.kernel)
    stride, dilate = _per_dim(p, "stride", nsp, 1), _per_dim(p, "dilate", nsp, 1)
    pad, adj = list(_per_dim(p, "pad", nsp, 0)), list(_per_dim(p, "adj", nsp, 0))
    target = tuple(p.target_shape)
    out = []
    for i in range(nsp):
        dk = dilate[i] * (p.kernel[i] - 1) + 1
        if not sp[i]:
            out.append(0)
            continue
        full = stride[i] * (sp[i] - 1) + dk
        if target and any(target):
            if full < target[i]:
                raise ShapeError(f"Check failed: o_pad[i] >= target_shape[i] ({full} vs. "
                                 f"{target[i]}) : too big target shape")
            total = full - target[i]
            pad[i], adj[i] = (total + 1) // 2, total % 2
        out.append(full - 2 * pad[i] + adj[i])
    return stride, dilate, pad, adj, tuple(out)


def _deconv_inputs(p):
    return ("data", "weight") if p.no_bias else ("data", "weight", "bias")


def _deconv_infer_shape(p, ins, outs):
    ins = list(ins)
    nsp = len(p.kernel)
    if nsp > 3:
        raise ShapeError(f"Check failed: param_.kernel.ndim() == 3U ({nsp} vs. 3) : {nsp}D "
                         "deconvolution not supported")
    if nsp == 0:
        raise ShapeError("Deconvolution: kernel must be 1-D, 2-D or 3-D, got []")
    if p.layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise ShapeError(f"Deconvolution: layout {p.layout} is not supported (channel-first only)")
    data = ins[0]
    if not data:
        return ins, outs
    data = tuple(data)
    if len(data) != nsp + 2:
        raise ShapeError(f"Check failed: dshape.ndim() == {nsp + 2}U ({len(data)} vs. {nsp + 2})"
                         f" : Input data should be {_DECONV_DIMS[nsp]}")
    g, f, c = p.num_group, p.num_filter, data[1]
    if c % g:
        raise ShapeError(f"Check failed: dshape_nchw[1] % param_.num_group == 0U ({c % g} vs. 0)"
                         " : input num_filter must divide group size")
    if f % g:
        raise ShapeError(f"Check failed: param_.num_filter % param_.num_group == 0U ({f % g} vs. "
                         "0) : output num_filter must divide group size")
    set_shape(ins, 1, (c, f // g) + tuple(p.kernel))
    if not p.no_bias:
        set_shape(ins, 2, (f,))
    out = _deconv_geometry(p, data[2:])[-1]
    return ins, [(data[0], f) + out]


_CONVT = {1: TF.conv_transpose1d, 2: TF.conv_transpose2d, 3: TF.conv_transpose3d}


def deconv(x, w, b, stride, dilate, pad, out, groups):
    """Transposed convolution with MXNet's output window: the full result cropped at ``pad``
    (zero-filled past its end when ``adj`` asks for more)."""
    nsp = x.dim() - 2
    full = [s * (h - 1) + d * (k - 1) + 1 for s, h, d, k in
            zip(stride, x.shape[2:], dilate, w.shape[2:])]
    adj = [o - f + 2 * pd for o, f, pd in zip(out, full, pad)]
    if all(0 <= a < max(s, d) for a, s, d in zip(adj, stride, dilate)):
        # torch's output_padding covers it: one kernel call, no crop
        return _CONVT[nsp](x, w, b, stride, pad, adj, groups, dilate)
    y = _CONVT[nsp](x, w, None, stride, 0, 0, groups, dilate)
    idx = [slice(None), slice(None)]
    grow = []
    for d in range(nsp):
        full = y.shape[2 + d]
        idx.append(slice(pad[d], min(pad[d] + out[d], full)))
        grow = [0, max(pad[d] + out[d] - full, 0)] + grow
    y = y[tuple(idx)]
    if any(grow):
        y = TF.pad(y, grow)
    if b is not None:
        y = y + b.reshape([1, -1] + [1] * nsp)
    return y


def _deconv_compute(p, ins):
    x, w = ins[0], ins[1]
    stride, dilate, pad, _, out = _deconv_geometry(p, tuple(x.shape[2:]))
    return deconv(x, w, None if p.no_bias else ins[2], stride, dilate, pad, out, p.num_group)


replay_op(
    "Deconvolution", _deconv_compute, lambda p, ins, oc: _deconv_compute(p, ins),
    _deconv_infer_shape, params=_DECONV_PARAMS, inputs=_deconv_inputs,
    doc="Computes 1D, 2D or 3D transposed convolution (aka fractionally strided convolution)\n"
        "of the input tensor.\n\n"
        "The weight has shape ``(channels, num_filter/num_group, *kernel)``; each output size is\n"
        "``stride*(x-1) + dilate*(kernel-1) + 1 - 2*pad + adj``, or ``target_shape`` (then pad\n"
        "and adj are derived from it). ``no_bias`` defaults to True.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.ones((1, 1, 2, 2))\n"
        ">>> mx.nd.Deconvolution(x, mx.nd.ones((1, 1, 2, 2)), kernel=(2, 2), num_filter=1).shape\n"
        "(1, 1, 3, 3)")


# --- UpSampling ----------------------------------------------------------------------------------
_UP_PARAMS = (
    Param("scale", "int", doc="Up sampling scale"),
    Param("num_filter", "int", 0, "Input filter. Only used by bilinear sample_type.Since "
                                  "bilinear upsampling uses deconvolution, num_filters is set "
                                  "to the number of channels."),
    Param("sample_type", "str", doc="upsampling method", choices=("bilinear", "nearest")),
    Param("multi_input_mode", "str", "concat", "How to handle multiple input. concat means "
                                               "concatenate upsampled images along the channel "
                                               "dimension. sum means add all images together, "
                                               "only available for nearest neighbor upsampling.",
          choices=("concat", "sum")),
    Param("num_args", "int", doc="Number of inputs to be upsampled. For nearest neighbor "
                                 "upsampling, this can be 1-N; the size of output will "
                                 "be(scale*h_0,scale*w_0) and all other inputs will be upsampled"
                                 "to thesame size. For bilinear upsampling this must be 2; 1 "
                                 "input and 1 weight."),
    Param("workspace", "int", 512, "Tmp workspace for deconvolution (MB) (ignored)."),
)


def _up_inputs(p):
    if p.sample_type == "nearest":
        return tuple(f"arg{i}" for i in range(p.num_args))
    return ("data", "weight")


def _up_bilinear_geometry(scale):
    kernel = 2 * scale - scale % 2
    return kernel, int(math.ceil((scale - 1) / 2.0))


def _up_infer_shape(p, ins, outs):
    ins = list(ins)
    if p.sample_type == "bilinear":
        data = ins[0]
        if not data:
            return ins, outs
        data = tuple(data)
        if len(data) != 4:
            raise ShapeError(f"Check failed: dshape.ndim() == 4U ({len(data)} vs. 4) : "
                             "UpSamplingBilinear: Input data should be 4D in (batch, channel, "
                             "y, x)")
        k, _ = _up_bilinear_geometry(p.scale)
        set_shape(ins, 1, (data[1], 1, k, k))
        return ins, [(data[0], data[1], data[2] * p.scale, data[3] * p.scale)]
    if not ins[0]:
        return ins, outs
    first = tuple(ins[0])
    for s in ins:
        if s and len(s) != 4:
            raise ShapeError(f"Check failed: shape.ndim() == 4U ({len(s)} vs. 4) : "
                             "UpSamplingNearest: Input data should be 4D in (batch, channel, y, x)")
    oh, ow = first[2] * p.scale, first[3] * p.scale
    chans = 0
    for s in ins:
        if not s:
            return ins, outs
        if oh % s[2]:
            raise ShapeError(f"Check failed: oh%shape[2] == 0U ({oh % s[2]} vs. 0) : "
                             f"UpSamplingNearest: input height of {s[2]}does not divide output "
                             f"height of {oh}")
        if ow % s[3]:
            raise ShapeError(f"Check failed: ow%shape[3] == 0U ({ow % s[3]} vs. 0) : "
                             f"UpSamplingNearest: input width of {s[3]}does not divide output "
                             f"width of {ow}")
        if p.multi_input_mode == "sum":
            if chans and chans != s[1]:
                raise ShapeError("Check failed: oshape[1] == 0 || oshape[1] == shape[1]: Number "
                                 "of channels must be the same when multi_input_mode==sum")
            chans = s[1]
        else:
            chans += s[1]
    return [tuple(s) for s in ins], [(first[0], chans, oh, ow)]


def _up_compute(p, ins):
    if p.sample_type == "bilinear":
        x, w = ins
        k, pad = _up_bilinear_geometry(p.scale)
        out = (x.shape[2] * p.scale, x.shape[3] * p.scale)
        return deconv(x, w, None, (p.scale,) * 2, (1, 1), (pad, pad), out, x.shape[1])
    oh, ow = ins[0].shape[2] * p.scale, ins[0].shape[3] * p.scale
    ups = [x.repeat_interleave(oh // x.shape[2], dim=2).repeat_interleave(ow // x.shape[3], dim=3)
           for x in ins]
    if len(ups) == 1:
        return ups[0]
    return torch.cat(ups, dim=1) if p.multi_input_mode == "concat" else sum(ups[1:], ups[0])


replay_op(
    "UpSampling", _up_compute, lambda p, ins, oc: _up_compute(p, ins), _up_infer_shape,
    params=_UP_PARAMS, inputs=_up_inputs, key_var_num_args="num_args",
    input_init=lambda p: {"weight": '["bilinear", {}]'} if p.sample_type == "bilinear" else {},
    doc="Upsamples the given input data.\n\n"
        "``nearest``: every input (``num_args`` of them) is repeated up to\n"
        "``(scale*h_0, scale*w_0)``, the first input's size times ``scale``, and the results are\n"
        "concatenated along the channels (``multi_input_mode='concat'``) or summed. ``bilinear``:\n"
        "a depthwise Deconvolution of ``data`` with ``weight`` of shape ``(channels, 1, 2*scale -\n"
        "scale%2, same)``, stride ``scale`` and pad ``ceil((scale-1)/2)``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([[[[1, 2]]]])\n"
        ">>> mx.nd.UpSampling(x, scale=2, sample_type='nearest').asnumpy().tolist()\n"
        "[[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]")


# --- sequence operators --------------------------------------------------------------------------
def _seq_params(value=False):
    out = [Param("use_sequence_length", "bool", False,
                 "If set to true, this layer takes in an extra input parameter "
                 "`sequence_length` to specify variable length sequence")]
    if value:
        out.append(Param("value", "float", 0.0, "The value to be used as a mask."))
    out.append(Param("axis", "int", 0, "The sequence axis. Only values of 0 and 1 are currently "
                                       "supported."))
    return tuple(out)


def _seq_inputs(p):
    return ("data", "sequence_length") if p.use_sequence_length else ("data",)


def _seq_infer(drop_axis, axis0_only=False):
    def infer(p, ins, outs):
        ins = list(ins)
        if axis0_only and p.axis != 0:
            raise ShapeError(f"Check failed: param_.axis == 0 ({p.axis} vs. 0) : Current "
                             "implementation expects axis to be 0.")
        if p.axis not in (0, 1):
            raise ShapeError("Check failed: (param_.axis == 0) || (param_.axis == 1): Current "
                             "implementation expects axis to be 0 or 1.")
        data = ins[0]
        if not data:
            return ins, outs
        data = tuple(data)
        if len(data) < 2:
            raise ShapeError(f"Check failed: dshape.ndim() > 1U ({len(data)} vs. 1) : The data "
                             "array must be of rank 2 or greater.")
        if p.use_sequence_length:
            set_shape(ins, 1, (data[1 - p.axis],))
        out = data[:p.axis] + data[p.axis + 1:] if drop_axis else data
        return ins, [out]
    return infer


def _seq_lengths(p, ins, x):
    """Per-batch lengths as int64 (MXNet truncates float lengths), or the full length."""
    t, b = x.shape[p.axis], x.shape[1 - p.axis]
    if p.use_sequence_length:
        return ins[1].to(torch.int64)
    return torch.full((b,), t, dtype=torch.int64, device=x.device)


def _time_major(p, x):
    return x if p.axis == 0 else x.transpose(0, 1)


def _seqmask_compute(p, ins):
    x = ins[0]
    if not p.use_sequence_length:
        return x * 1
    xt = _time_major(p, x)
    keep = torch.arange(xt.shape[0], device=x.device)[:, None] < _seq_lengths(p, ins, x)[None, :]
    keep = keep.reshape(keep.shape + (1,) * (x.dim() - 2))
    y = torch.where(keep, xt, torch.full_like(xt, p.value))
    return y if p.axis == 0 else y.transpose(0, 1)


def _seqlast_compute(p, ins):
    x = ins[0]
    xt = _time_major(p, x)
    idx = (_seq_lengths(p, ins, x) - 1).clamp_(0, xt.shape[0] - 1)
    return xt[idx, torch.arange(xt.shape[1], device=x.device)]


def _seqrev_compute(p, ins):
    x = ins[0]
    t = x.shape[0]
    lens = _seq_lengths(p, ins, x).clamp(0, t)
    steps = torch.arange(t, device=x.device)[:, None]
    src = torch.where(steps < lens[None, :], lens[None, :] - 1 - steps, steps)  # (T, B)
    src = src.reshape(src.shape + (1,) * (x.dim() - 2)).expand_as(x)
    return torch.gather(x, 0, src)


_SEQ_NO_GRAD = (1,)
for _name, _compute, _params, _infer, _doc in (
        ("SequenceMask", _seqmask_compute, _seq_params(value=True), _seq_infer(False),
         "Sets all elements outside the sequence to a constant value.\n\n"
         "``data`` is ``(max_len, batch, ...)`` (``axis=0``) or ``(batch, max_len, ...)``\n"
         "(``axis=1``); with ``use_sequence_length`` the steps at or after\n"
         "``sequence_length[b]`` become ``value``, else the input is returned.\n\n"
         "Examples\n--------\n"
         ">>> import neomx as mx\n"
         ">>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])\n"
         ">>> y = mx.nd.SequenceMask(x, mx.nd.array([1, 3]), use_sequence_length=True)\n"
         ">>> y.asnumpy().tolist()\n"
         "[[1.0, 2.0], [0.0, 4.0], [0.0, 6.0]]"),
        ("SequenceLast", _seqlast_compute, _seq_params(), _seq_infer(True),
         "Takes the last element of a sequence.\n\n"
         "Returns ``data[sequence_length[b] - 1, b]`` (``axis=0``) for every batch entry, or\n"
         "the last step when ``use_sequence_length`` is off; the sequence axis is dropped.\n\n"
         "Examples\n--------\n"
         ">>> import neomx as mx\n"
         ">>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])\n"
         ">>> y = mx.nd.SequenceLast(x, mx.nd.array([1, 3]), use_sequence_length=True)\n"
         ">>> y.asnumpy().tolist()\n"
         "[1.0, 6.0]"),
        ("SequenceReverse", _seqrev_compute, _seq_params(), _seq_infer(False, axis0_only=True),
         "Reverses the elements of each sequence.\n\n"
         "``data`` is ``(max_len, batch, ...)``; the first ``sequence_length[b]`` steps of each\n"
         "batch entry are reversed and the rest kept (all of them without\n"
         "``use_sequence_length``).\n\n"
         "Examples\n--------\n"
         ">>> import neomx as mx\n"
         ">>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])\n"
         ">>> y = mx.nd.SequenceReverse(x, mx.nd.array([2, 3]), use_sequence_length=True)\n"
         ">>> y.asnumpy().tolist()\n"
         "[[3.0, 6.0], [1.0, 4.0], [5.0, 2.0]]"),
):
    replay_op(_name, _compute, (lambda c: lambda p, ins, oc: c(p, ins))(_compute), _infer,
              params=_params, inputs=_seq_inputs, no_grad=_SEQ_NO_GRAD, infer_type=data_typed(1),
              no_grad_inputs=("sequence_length",), doc=_doc)

