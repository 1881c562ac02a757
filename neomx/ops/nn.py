"""Neural-network layers of the seed perceptron: FullyConnected, Activation, SoftmaxOutput."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as TF

from .gemm_kernels import linear
from .registry import OpDef, Param, ShapeError, assign_shape, merge_shape, register, same_shape, _sh


def _prod(shape):
    return math.prod(shape)


# --- FullyConnected ------------------------------------------------------------------------------
def _fc_inputs(p):
    return ("data", "weight") if p.no_bias else ("data", "weight", "bias")


def _fc_infer_shape(p, ins, outs):
    data = ins[0]
    ins = list(ins)
    if data is None:
        return ins, outs
    out_given = outs[0]
    if out_given is not None and len(out_given) >= 1 and len(data) >= 1:
        # the output's leading dimension(s) complete the data's (MXNet infers them backwards)
        lead = 1 if p.flatten else len(data) - 1
        if len(out_given) == (2 if p.flatten else len(data)):
            data = tuple(o if not d else d for d, o in zip(data[:lead], out_given[:lead])) + tuple(data[lead:])
            ins[0] = data
    if p.flatten:
        k = _prod(data[1:]) if len(data) > 1 else 1
        out = (data[0], p.num_hidden)
    else:
        k = data[-1]
        out = tuple(data[:-1]) + (p.num_hidden,)
    assign_shape(ins, 1, (p.num_hidden, k))
    if not p.no_bias:
        assign_shape(ins, 2, (p.num_hidden,))
    return ins, [out]


def _fc_forward(p, ins, oc):
    x, w = ins[0], ins[1]
    b = None if p.no_bias else ins[2]
    if p.flatten:
        if x.dim() != 2:
            x = x.reshape(x.shape[0], -1) if x.dim() > 1 else x.reshape(x.shape[0], 1)
        return linear(x, w, b)
    return linear(x, w, b)


def _fc_gradient(F, p, ins, outs, ograds):
    x, w = ins[0], ins[1]
    dy = ograds[0]
    n_hidden, k = tuple(w.shape)
    x2 = x if x.ndim == 2 else F.Reshape(x, shape=(-1, k))
    dy2 = dy if dy.ndim == 2 else F.Reshape(dy, shape=(-1, n_hidden))
    wanted = F.wanted
    dx = None
    if wanted is None or wanted[0]:  # (often not: the input batch of the first layer)
        dx = F.dot(dy2, w)
        if tuple(dx.shape) != tuple(x.shape):
            dx = F.Reshape(dx, shape=tuple(x.shape))
    dw = F.dot(dy2, x2, transpose_a=True)
    grads = [dx, dw]
    if not p.no_bias:
        grads.append(F.sum(dy2, axis=0))
    return grads


register(OpDef(
    "FullyConnected", _fc_forward, _fc_infer_shape,
    params=(Param("num_hidden", "int", doc="Number of hidden nodes of the output."),
            Param("no_bias", "bool", False, "Whether to disable bias parameter."),
            Param("flatten", "bool", True, "Whether to collapse all but the first axis of the input data tensor.")),
    inputs=_fc_inputs, gradient=_fc_gradient, fresh_output=True,
    doc="Applies a linear transformation: :math:`Y = XW^T + b`.\n\n"
        "With ``flatten=True`` the input is reshaped to ``(N, prod(rest))``; otherwise the\n"
        "transformation applies to the last axis."))


# --- Activation ----------------------------------------------------------------------------------
_ACT = {
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "softrelu": TF.softplus,
    "softsign": TF.softsign,
}


# relu, sigmoid and tanh differentiate from their output, softrelu and softsign from their input:
# the backward node reads only that one, so the other can be freed after forward.
_ACT_FROM_OUTPUT = ("relu", "sigmoid", "tanh")


def _act_backward(p, ins, oc):
    g, src = ins
    x = y = src
    t = p.act_type
    # ATen's fused backward kernels: one pass instead of three or four elementwise ones.
    if t == "relu":
        return torch.ops.aten.threshold_backward(g, y, 0)
    if t == "sigmoid":
        return torch.ops.aten.sigmoid_backward(g, y)
    if t == "tanh":
        return torch.ops.aten.tanh_backward(g, y)
    if t == "softrelu":
        return g * torch.sigmoid(x)
    return g / torch.square(1 + torch.abs(x))  # softsign


_ACT_INPLACE = {"relu": torch.relu_, "sigmoid": torch.sigmoid_, "tanh": torch.tanh_}


def _act_forward_inplace(p, ins, oc):
    fn = _ACT_INPLACE.get(p.act_type)
    return fn(ins[0]) if fn is not None else _ACT[p.act_type](ins[0])


def _act_backward_inplace(p, ins, oc):
    """The gradient written over ``out_grad`` (the same ATen kernels, with ``out=``)."""
    g, y = ins
    t = p.act_type
    if t == "relu":
        return torch.ops.aten.threshold_backward.grad_input(g, y, 0, grad_input=g)
    if t == "sigmoid":
        return torch.ops.aten.sigmoid_backward.grad_input(g, y, grad_input=g)
    if t == "tanh":
        return torch.ops.aten.tanh_backward.grad_input(g, y, grad_input=g)
    return _act_backward(p, ins, oc)


_ACT_PARAMS = (Param("act_type", "str", doc="Activation function to be applied.",
                     choices=("relu", "sigmoid", "softrelu", "softsign", "tanh")),)

register(OpDef(
    "Activation", lambda p, ins, oc: _ACT[p.act_type](ins[0]), same_shape, params=_ACT_PARAMS,
    inplace_forward=_act_forward_inplace, fresh_output=True,
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_Activation(ograds[0], outs[0] if p.act_type in _ACT_FROM_OUTPUT else ins[0],
                               act_type=p.act_type)],
    doc="Applies an activation function element-wise to the input.\n\n"
        "relu: max(x, 0); sigmoid: 1/(1+exp(-x)); tanh; softrelu: log(1+exp(x));\n"
        "softsign: x/(1+|x|)."))
register(OpDef("_backward_Activation", _act_backward, same_shape, params=_ACT_PARAMS,
               inplace_forward=_act_backward_inplace, fresh_output=True,
               inputs=("out_grad", "src"), public=False,
               doc="Gradient of Activation."))


# --- SoftmaxOutput -------------------------------------------------------------------------------
_SOFTMAX_PARAMS = (
    Param("grad_scale", "float", 1.0, "Scales the gradient by a float factor."),
    Param("ignore_label", "float", -1.0, "The instances whose labels == ignore_label will be ignored "
                                          "during backward, if use_ignore is set to true)."),
    Param("multi_output", "bool", False, "Softmax over axis 1 of (n, k, x_1, ..., x_n)."),
    Param("use_ignore", "bool", False, "If set to true, the ignore_label value will not contribute to the backward gradient."),
    Param("preserve_shape", "bool", False, "If set to true, softmax is applied on the last axis."),
    Param("normalization", "str", "null", "Normalizes the gradient.", choices=("batch", "null", "valid")),
    Param("out_grad", "bool", False, "Multiplies gradient with output gradient element-wise."),
    Param("smooth_alpha", "float", 0.0, "Label smoothing: targets 1-alpha and alpha/(k-1)."),
)


def _softmax_label_shape(p, data):
    if p.multi_output:
        return (data[0],) + tuple(data[2:])
    return tuple(data[:-1])


def _softmax_infer_shape(p, ins, outs):
    data, label = ins
    if data is None:
        data = outs[0]
    if data is None:
        return ins, outs
    want = _softmax_label_shape(p, data)
    if label is not None and merge_shape(label, want) is None and tuple(label) != tuple(data):
        ok = p.multi_output and (tuple(label) in ((data[0], _prod(data[2:])), (data[0], 1) + tuple(data[2:])))
        if not ok:
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(label)}, inferred shape={_sh(want)}")
        want = tuple(label)
    elif label is not None and tuple(label) == tuple(data):
        want = tuple(label)
    return [data, merge_shape(label, want) or want], [data]


def _softmax_infer_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    if t is None:
        return ins, outs
    return [t, ins[1] if ins[1] is not None else t], [t]


def _softmax_forward(p, ins, oc):
    x = ins[0]
    if p.multi_output:
        return torch.softmax(x, dim=1)
    if p.preserve_shape:
        return torch.softmax(x, dim=-1)
    n = x.shape[0]
    return torch.softmax(x.reshape(n, -1), dim=1).reshape(x.shape)


_COLUMNS: dict = {}  # (k, device) -> arange(k) as int64, shared read-only
_SMALL_ONE_HOT = 4096  # SoftmaxOutput's backward: up to this many values, the comparison


def _columns(k, device):
    c = _COLUMNS.get((k, device))
    if c is None:
        if len(_COLUMNS) > 64:
            _COLUMNS.clear()
        c = _COLUMNS[(k, device)] = torch.arange(k, device=device)
    return c


def _softmax_backward(p, ins, oc):
    """(softmax - target) * grad_scale / normaliser, with MXNet's ignore/normalisation rules."""
    out, label = ins
    if p.multi_output:
        prob = out.movedim(1, -1)                           # (N, *sp, K)
        k = prob.shape[-1]
        spatial = _prod(out.shape[2:])
        prob = prob.reshape(-1, k)
    elif p.preserve_shape:
        k = out.shape[-1]
        prob = out.reshape(-1, k)
        spatial = 1
    else:
        n = out.shape[0]
        prob = out.reshape(n, -1)
        k = prob.shape[1]
        spatial = 1
    if tuple(label.shape) == tuple(out.shape) and not (p.multi_output and label.dim() == 2 and out.dim() == 2):
        target = label.movedim(1, -1).reshape(-1, k) if p.multi_output else label.reshape(-1, k)
        grad = (prob - target.to(prob.dtype)) * p.grad_scale
        return _unflatten_like(grad, out, p)
    lab_f = label.reshape(-1)
    if lab_f.numel() > prob.shape[0]:  # N-D data flattened to (N, K): row i reads label.flat[i]
        lab_f = lab_f[:prob.shape[0]]
    if (not p.smooth_alpha and prob.numel() <= _SMALL_ONE_HOT and lab_f.is_floating_point()
            and prob.is_floating_point()):
        # the small case in two kernels: the one-hot of the truncated labels (MXNet's int cast)
        # written as prob's dtype by the comparison itself, then prob minus it (the same bits:
        # x - 1 and x - 0); out-of-range and NaN labels match no column
        grad = torch.empty_like(prob)
        torch.eq(lab_f.trunc().unsqueeze(1), _columns(k, lab_f.device), out=grad)
        grad = torch.sub(prob, grad, out=grad)
        return _finish_softmax_grad(grad, prob, out, lab_f, spatial, p)
    lab = lab_f.to(torch.int64)
    if p.smooth_alpha:
        grad = prob.clone()
        valid_onehot = (lab >= 0) & (lab < k)
        rows = torch.nonzero(valid_onehot, as_tuple=True)[0]
        off = p.smooth_alpha / (k - 1)
        grad[valid_onehot] -= off
        grad[rows, lab[rows]] -= (1.0 - p.smooth_alpha) - off
    else:
        # minus one at each row's (integer) label; labels out of range change nothing. No
        # torch.nonzero (it waits for the device on GPUs). Small: one comparison with a cached
        # arange (fewest kernel launches); large: one copy and a scatter of -1 (-0.0 for rows
        # out of range, at a clamped column): one pass over the (N, K) values, not three.
        # Both give the same bits: x - 1 == x + -1, x - 0.0 == x + -0.0 == x.
        if prob.numel() <= _SMALL_ONE_HOT:
            grad = prob - (lab.unsqueeze(1) == _columns(k, lab.device)).to(prob.dtype)
        else:
            col = lab.clamp(0, k - 1)
            minus_one = (col == lab).to(prob.dtype).neg_()
            grad = prob.scatter_add(1, col.unsqueeze(1), minus_one.unsqueeze(1))
    return _finish_softmax_grad(grad, prob, out, lab_f, spatial, p)


def _finish_softmax_grad(grad, prob, out, lab_f, spatial, p):
    """SoftmaxOutput's gradient after the one-hot step: ignored rows, normalisation, scale."""
    if p.use_ignore:
        grad[lab_f == p.ignore_label] = 0
    scale = p.grad_scale
    if p.normalization == "valid":
        scale /= max(1.0, float((lab_f != p.ignore_label).sum()))
    elif p.normalization == "batch":
        scale /= out.shape[0]
        if p.multi_output:
            scale /= spatial
    elif p.multi_output:
        scale /= spatial
    if scale != 1.0:  # (a product with 1.0 changes no value: skipped)
        grad = grad * scale
    if p.out_grad:
        grad = grad * prob
    return _unflatten_like(grad, out, p)


def _unflatten_like(grad, out, p):
    if p.multi_output:
        shape = (out.shape[0],) + tuple(out.shape[2:]) + (out.shape[1],)
        return grad.reshape(shape).movedim(-1, 1).contiguous()
    return grad.reshape(out.shape)


register(OpDef(
    "SoftmaxOutput", _softmax_forward, _softmax_infer_shape, params=_SOFTMAX_PARAMS,
    inputs=("data", "label"), infer_type=_softmax_infer_type, is_loss=True,
    aliases=("Softmax",), no_grad_inputs=("label",),
    gradient=lambda F, p, ins, outs, ograds: [F._backward_SoftmaxOutput(outs[0], ins[1], **p), None],
    doc="Computes the gradient of cross entropy loss with respect to softmax output.\n\n"
        "The forward pass is a softmax; backward ignores the head gradient and yields\n"
        "``(softmax - onehot(label)) * grad_scale`` (normalised per ``normalization``)."))
register(OpDef("_backward_SoftmaxOutput", _softmax_backward,
               lambda p, ins, outs: (ins, [ins[0]]), params=_SOFTMAX_PARAMS,
               inputs=("output", "label"), infer_type=_softmax_infer_type, public=False,
               doc="Gradient of SoftmaxOutput."))
