"""Loss heads: Linear/Logistic/MAE RegressionOutput, MakeLoss and make_loss.

Loss heads ignore the head gradient (``is_loss``). The regression heads follow
``src/operator/regression_output-inl.h``: ``grad = grad_scale / M * f(out - label)`` with
``M = label.size / label.shape[0]`` and ``f`` the identity (linear, logistic) or sign (MAE; -1
at equality, as MXNet's ``minus_sign``).
"""
from __future__ import annotations

import math

import torch

from .registry import OpDef, Param, ShapeError, register, same_shape, _sh


# --- regression outputs --------------------------------------------------------------------------
def _regression_infer_shape(p, ins, outs):
    data, label = ins
    if data is None:
        data = outs[0]
    if data is None or 0 in data:  # MXNet decides nothing from a partly known data shape
        return ins, outs
    if label is None:
        # a (N, 1) output takes a 1-D label by default
        label = (data[0],) if len(data) == 2 and data[1] == 1 else tuple(data)
    elif label[0] != data[0] or math.prod(label) != math.prod(data):
        raise ShapeError(f"Shape inconsistent, Provided={_sh(label)}, inferred shape={_sh(data)}")
    return [data, label], [data]


def _regression_backward(transform):
    def backward(p, ins, oc):
        out, label = ins
        n_out = label.numel() // label.shape[0] if label.dim() else 1
        diff = transform(out - label.reshape(out.shape).to(out.dtype))
        return diff * (p.grad_scale / n_out)
    return backward


_GRAD_SCALE = (Param("grad_scale", "float", 1.0, "Scale the gradient by a float factor"),)


def _minus_sign(d):
    """MXNet's ``minus_sign``: 1 where ``d > 0``, else -1 (at equality too: MAE's gradient of
    a prediction equal to its label is -grad_scale / M, not 0)."""
    return torch.where(d > 0, torch.ones_like(d), -torch.ones_like(d))

for _name, _bwd, _fwd, _f, _doc in (
        ("LinearRegressionOutput", "_backward_linear_reg_out", lambda x: x, lambda d: d,
         "Computes and optimizes for squared loss during backward propagation.\n\n"
         "Forward is the identity; grad = grad_scale / M * (out - label)."),
        ("LogisticRegressionOutput", "_backward_logistic_reg_out", torch.sigmoid, lambda d: d,
         "Applies a logistic function to the input; backward gives the log-loss gradient\n"
         "grad_scale / M * (sigmoid(x) - label)."),
        ("MAERegressionOutput", "_backward_mae_reg_out", lambda x: x, _minus_sign,
         "Computes mean absolute error of the input.\n\n"
         "Forward is the identity; grad = grad_scale / M * sign(out - label), with -1 where\n"
         "out == label (MXNet's)."),
):
    register(OpDef(
        _name, (lambda fn: lambda p, ins, oc: fn(ins[0]))(_fwd), _regression_infer_shape,
        params=_GRAD_SCALE, inputs=("data", "label"), is_loss=True, no_grad_inputs=("label",),
        gradient=(lambda b: lambda F, p, ins, outs, ograds: [
            getattr(F, b)(outs[0], ins[1], grad_scale=p.grad_scale), None])(_bwd),
        doc=_doc + "\n\n``M = label.size / label.shape[0]``. The label has the data's shape; a\n"
                   "``(N, 1)`` output takes a label of shape ``(N,)``. The head gradient is\n"
                   "ignored."))
    register(OpDef(_bwd, _regression_backward(_f), lambda p, ins, outs: (ins, [ins[0]]),
                   params=_GRAD_SCALE, inputs=("output", "label"), public=False,
                   doc=f"Gradient of {_name}."))


# --- MakeLoss ------------------------------------------------------------------------------------
_MAKELOSS_PARAMS = (
    Param("grad_scale", "float", 1.0, "Gradient scale as a supplement to unary and binary "
                                      "operators"),
    Param("valid_thresh", "float", 0.0, "clip each element in the array to 0 when it is less "
                                        "than ``valid_thresh``. This is used when "
                                        "``normalization`` is set to ``'valid'``."),
    Param("normalization", "str", "null", "If this is set to null, the output gradient will not "
                                          "be normalized. If this is set to batch, the output "
                                          "gradient will be divided by the batch size. If this "
                                          "is set to valid, the output gradient will be divided "
                                          "by the number of valid input elements.",
          choices=("batch", "null", "valid")))


def _backward_makeloss(p, ins, oc):
    out = ins[0]
    scale = p.grad_scale
    if p.normalization == "batch":
        scale /= out.shape[0]
    elif p.normalization == "valid":
        scale /= max(1.0, float((out > p.valid_thresh).sum()))
    return torch.full_like(out, scale)


register(OpDef(
    "MakeLoss", lambda p, ins, oc: ins[0], same_shape, params=_MAKELOSS_PARAMS, is_loss=True,
    gradient=lambda F, p, ins, outs, ograds: [F._backward_MakeLoss(outs[0], **p)],
    doc="Makes the input a loss: forward is the identity; the gradient is the constant\n"
        "``grad_scale`` (null), ``grad_scale / N`` (batch) or ``grad_scale / max(1, #(x >\n"
        "valid_thresh))`` (valid); the head gradient is ignored."))
register(OpDef("_backward_MakeLoss", _backward_makeloss, same_shape, params=_MAKELOSS_PARAMS,
               inputs=("output",), public=False, doc="Gradient of MakeLoss."))

register(OpDef(
    "make_loss", lambda p, ins, oc: ins[0], same_shape, outputs=("loss",), is_loss=True,
    gradient=lambda F, p, ins, outs, ograds: [F.ones_like(ins[0])],
    doc="Makes the input a loss: forward is the identity and the gradient is 1 everywhere\n"
        "(the head gradient is ignored). Unlike ``MakeLoss`` it takes no parameters."))
