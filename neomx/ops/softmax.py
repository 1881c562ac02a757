"""softmax, log_softmax and softmin along one axis (``src/operator/nn/softmax-inl.h``).

``softmax`` can mask its input with a per-row ``length`` (``use_length=True``): positions at or
beyond the length get probability 0 (a row of length 0 is all zeros). Gradients go through the
internal ``_backward_softmax`` / ``_backward_log_softmax`` ops, which read only the output.
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import dtype_np, dtype_torch
from .registry import OpDef, Param, ShapeError, TypeInferError, register, _sh


def _axis(p, ndim):
    if not -ndim <= p.axis < ndim:
        raise ShapeError(f"axis {p.axis} exceeds the input dimension of {ndim}")
    return p.axis % ndim


def _temperature(p):
    return 1.0 if p.temperature is None else p.temperature


def _length_shape(p, data):
    ax = _axis(p, len(data))
    return tuple(data[:ax]) + tuple(data[ax + 1:])


def _softmax_infer_shape(p, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    if data is None:
        return ins, outs
    ins = list(ins)
    ins[0] = data
    if len(ins) > 1:
        want = _length_shape(p, data)
        if ins[1] is not None and tuple(ins[1]) != want:
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[1])}, inferred shape="
                             f"{_sh(want)}")
        ins[1] = want
    return ins, [data]


def _softmax_infer_type(p, ins, outs):
    t = ins[0]
    if t is None:
        return ins, outs
    if len(ins) > 1 and ins[1] is not None and np.dtype(ins[1]).kind not in "iu":
        raise TypeInferError(f"at 1-th input: the length input must have an integer type, got "
                             f"{np.dtype(ins[1]).name}")
    return ins, [p.dtype if p.dtype is not None else t]


def _length_mask(length, x, ax):
    """Boolean mask, True where the position along ``ax`` is below the row's length."""
    pos = torch.arange(x.shape[ax], device=x.device)
    lens = length.to(torch.int64).unsqueeze(ax)
    shape = [1] * x.dim()
    shape[ax] = x.shape[ax]
    return pos.reshape(shape) < lens


def _softmax_kernel(kind):
    def forward(p, ins, oc):
        x = ins[0]
        ax = _axis(p, x.dim())
        out_dt = dtype_torch(p.dtype) if p.dtype is not None else x.dtype
        z = x.to(out_dt) if out_dt != x.dtype else x
        t = _temperature(p)
        if t != 1.0:
            z = z / t
        if kind == "softmin":
            z = -z
        if len(ins) > 1:
            mask = _length_mask(ins[1], z, ax)
            z = z.masked_fill(~mask, float("-inf"))
            out = torch.softmax(z, dim=ax)
            return torch.where(mask, out, torch.zeros((), dtype=out.dtype, device=out.device))
        if kind == "log_softmax":
            return torch.log_softmax(z, dim=ax)
        return torch.softmax(z, dim=ax)
    return forward


def _backward_softmax(p, ins, oc):
    """dx = y * (g - sum(g * y)) / t, computed from the output y only."""
    g, y = ins[0], ins[1]
    ax = _axis(p, y.dim())
    g = g.to(y.dtype)
    if y.dtype in (torch.float32, torch.float64) and g.shape == y.shape:
        # ATen's fused kernel: one pass instead of four (product, sum, difference, product)
        dx = torch._softmax_backward_data(g.contiguous(), y.contiguous(), ax, y.dtype)
    else:
        dx = y * (g - (g * y).sum(dim=ax, keepdim=True))
    t = _temperature(p)
    return dx / t if t != 1.0 else dx


def _backward_log_softmax(p, ins, oc):
    """dx = (g - exp(y) * sum(g)) / t for y = log_softmax(x / t)."""
    g, y = ins[0], ins[1]
    ax = _axis(p, y.dim())
    g = g.to(y.dtype)
    if y.dtype in (torch.float32, torch.float64) and g.shape == y.shape:
        dx = torch._log_softmax_backward_data(g.contiguous(), y.contiguous(), ax, y.dtype)
    else:
        dx = g - torch.exp(y) * g.sum(dim=ax, keepdim=True)
    t = _temperature(p)
    return dx / t if t != 1.0 else dx


def _gradient(kind):
    def gradient(F, p, ins, outs, ograds):
        x, y, g = ins[0], outs[0], ograds[0]
        bp = {k: v for k, v in p.items() if k in ("axis", "temperature")}
        if kind == "log_softmax":
            dx = F._backward_log_softmax(g, y, **bp)
        else:
            dx = F._backward_softmax(g, y, **bp)
            if kind == "softmin":
                dx = F.negative(dx)
        if np.dtype(dx.dtype) != np.dtype(x.dtype):
            dx = F.Cast(dx, dtype=x.dtype)
        grads = [dx]
        if len(ins) > 1:
            grads.append(F.zeros_like(ins[1]))
        return grads
    return gradient


def _params(doc_axis="The axis along which to compute softmax."):
    return (Param("axis", "int", -1, doc_axis),
            Param("temperature", "float", None, "Temperature parameter in softmax", optional=True),
            Param("dtype", "dtype", None, "DType of the output in case this can't be inferred. "
                                          "Defaults to the same as input's dtype if not defined "
                                          "(dtype=None).", optional=True,
                  choices=(dtype_np("float16"), dtype_np("float32"), dtype_np("float64"))),
            Param("use_length", "bool", False, "Whether to use the length input as a mask over "
                                               "the data input.", optional=True))


_DOCS = {
    "softmax": "Applies the softmax function along ``axis``: ``exp(x/t) / sum(exp(x/t))``.\n\n"
               "With ``use_length=True`` a second input ``length`` (integer, the data shape\n"
               "without ``axis``) masks positions at or beyond each row's length to 0.",
    "log_softmax": "Computes the log softmax of the input along ``axis`` (softmax, then log).",
    "softmin": "Applies the softmin function along ``axis``: softmax of ``-x/t``.",
}

for _kind in ("softmax", "log_softmax", "softmin"):
    register(OpDef(
        _kind, _softmax_kernel(_kind), _softmax_infer_shape, params=_params(),
        # only softmax takes the length input in MXNet 1.9.1 (log_softmax/softmin accept the
        # parameter but list just `data`)
        inputs=((lambda p: ("data", "length") if p.use_length else ("data",))
                if _kind == "softmax" else ("data",)),
        infer_type=_softmax_infer_type, gradient=_gradient(_kind), doc=_DOCS[_kind]))

_BACKWARD_PARAMS = (Param("axis", "int", -1, "softmax axis"),
                    Param("temperature", "float", None, "softmax temperature", optional=True))
register(OpDef("_backward_softmax", _backward_softmax,
               lambda p, ins, outs: (ins, [ins[1]]), params=_BACKWARD_PARAMS,
               inputs=("out_grad", "output"),
               infer_type=lambda p, ins, outs: (ins, [ins[1]]), public=False,
               doc="Gradient of softmax from its output."))
register(OpDef("_backward_log_softmax", _backward_log_softmax,
               lambda p, ins, outs: (ins, [ins[1]]), params=_BACKWARD_PARAMS,
               inputs=("out_grad", "output"),
               infer_type=lambda p, ins, outs: (ins, [ins[1]]), public=False,
               doc="Gradient of log_softmax from its output."))
