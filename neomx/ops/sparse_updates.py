"""Update operators with row_sparse gradients, as MXNet 1.9.1 runs them (its ``FComputeEx``
kernels of the optimizer operators), and the two operators that exist for row_sparse gradients
only: ``_sparse_adagrad_update`` (``mx.nd.sparse.adagrad_update``) and
``_contrib_group_adagrad_update`` (``mx.nd.contrib.group_adagrad_update``).

With a row_sparse ``grad`` and a dense or row_sparse ``weight``:

* a *lazy* update (``lazy_update=True``, the default of ``sgd_update``, ``sgd_mom_update`` and
  ``adam_update``; always for the two AdaGrad operators) runs the dense rule on the rows the
  gradient stores only: the other rows of the weight and of every state are left as they are,
  weight decay included;
* a *standard* update (``lazy_update=False``) is the dense rule with zeros in the gradient's
  missing rows.

A row_sparse weight comes back row_sparse, with its stored rows plus the gradient's. Other
storage combinations run the dense rule on dense copies (MXNet's storage fallback).
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError
from . import registry as _reg
from .optimizer_ops import _params
from .registry import OpDef, Param, ShapeError, register
from .sparse import Sparse, storage_rule as _storage_rule, to_dense


def storage_rule(names, infer, forward):
    """``ops.sparse.storage_rule``, the kernel marked ``off_tape`` (these operators have no
    gradient, so mx.nd runs their sparse kernels while autograd records too) and
    ``inplace_weight`` (with ``out=weight``, mx.nd lets it update a dense weight in place)."""
    def kernel(p, ins, out_stypes, oc):
        return forward(p, ins, out_stypes, oc)
    kernel.off_tape = True
    kernel.inplace_weight = True
    kernel.multi_output = getattr(forward, "multi_output", False)
    _storage_rule(names, infer, kernel)

_F = np.float32


def _stype(x):
    return x.stype if isinstance(x, Sparse) else "default"


def _rows_infer(p, stypes, shapes=None):
    """weight default/row_sparse, grad row_sparse, states dense (or row_sparse with a
    row_sparse weight): the weight's storage type."""
    states_ok = ("default", "row_sparse") if stypes[0] == "row_sparse" else ("default",)
    if stypes[1] == "row_sparse" and stypes[0] in ("default", "row_sparse") \
            and all(s in states_ok for s in stypes[2:]):
        return [stypes[0]]
    return None


def _state_tensor(s):
    """A state's dense tensor, updated in place: a row_sparse state has every row stored (mx.nd
    fills them first, as MXNet does), so its data is the dense layout."""
    if not isinstance(s, Sparse):
        return s
    if s.data.shape[0] != s.shape[0]:
        raise MXNetError("row_sparse optimizer states must store every row")
    return s.data


def run_rows(rule, p, ins, lazy, oc=None):
    """``rule(p, [weight, grad, *states])`` (states updated in place, the new weight returned)
    with a row_sparse grad: on its rows only (``lazy``) or on every row with zeros elsewhere.
    With ``oc.inplace_weight`` (mx.nd's ``out=weight`` on a dense weight) the weight itself is
    updated and None returned."""
    w, g, states = ins[0], ins[1], [_state_tensor(s) for s in ins[2:]]
    wt = to_dense(w)
    inplace = getattr(oc, "inplace_weight", False) and not isinstance(w, Sparse)
    if lazy:
        rows = g.aux[0].to(wt.device)
        # (index_select / index_copy_: ``wt[rows] = ...`` cost ms on a 1M-row weight)
        sub = [s.index_select(0, rows) for s in states]
        new_rows = rule(p, [wt.index_select(0, rows), g.data, *sub])
        out = wt if inplace else wt.clone()
        out.index_copy_(0, rows, new_rows.to(out.dtype))
        for s, t in zip(states, sub):
            s.index_copy_(0, rows, t.to(s.dtype))
    else:
        out = rule(p, [wt, to_dense(g), *states])
        if inplace:
            wt.copy_(out)
            out = wt
    if inplace:
        return None
    if isinstance(w, Sparse):
        keep = torch.unique(torch.cat([w.aux[0], g.aux[0]]))
        return Sparse("row_sparse", out[keep].contiguous(), (keep,), w.shape)
    return out


def _lazy_param_forward(name):
    op = _reg.get(name)

    def forward(p, ins, out_stypes, oc):
        return run_rows(lambda q, xs: op.forward(q, xs, oc), p, ins, bool(p.lazy_update), oc)
    return forward


for _name in ("sgd_update", "sgd_mom_update", "adam_update"):
    storage_rule([_name], _rows_infer, _lazy_param_forward(_name))


def _ftrl_infer(p, stypes, shapes=None):
    """ftrl_update is lazy with everything row_sparse (else MXNet's dense fallback)."""
    return ["row_sparse"] if all(s == "row_sparse" for s in stypes) else None


_FTRL = _reg.get("ftrl_update")
storage_rule(["ftrl_update"], _ftrl_infer,
             lambda p, ins, st, oc: run_rows(lambda q, xs: _FTRL.forward(q, xs, oc), p, ins, True,
                                             oc))


def _not_implemented(name, stypes):
    return MXNetError("Check failed: infer_stype_success: Operator not implemented: "
                      f"operator = {name}\ninput storage types = ["
                      + "".join(f"{s}, " for s in stypes) + "]")


def _clip(g, c):
    return g.clamp(-float(_F(c)), float(_F(c))) if c >= 0 else g


# --- _sparse_adagrad_update ----------------------------------------------------------------------
def _adagrad_rule(p, ins):
    """history += g^2; w -= lr * g / sqrt(history + epsilon), g = clip(rescale_grad * g)."""
    w, g, h = ins
    g = _clip(g.to(w.dtype) * float(_F(p.rescale_grad)), p.clip_gradient)
    h.add_(g.square())
    return w - g / (h + float(_F(p.epsilon))).sqrt() * float(_F(p.lr))


def _adagrad_dense(p, ins, oc):
    raise _not_implemented("_sparse_adagrad_update", ["default"] * 3)


def _adagrad_infer(p, stypes, shapes=None):
    if p.wd != 0 or stypes[1] != "row_sparse" or stypes[0] != "default" or stypes[2] != "default":
        raise _not_implemented("_sparse_adagrad_update", stypes)
    return ["default"]


register(OpDef(
    "_sparse_adagrad_update", _adagrad_dense, _reg.same_shape,
    params=_params(Param("epsilon", "float", 1e-7, "epsilon"), lazy=False),
    inputs=("weight", "grad"), aux=("history",), mutates_aux=True, hint="adagrad_update",
    doc="AdaGrad with a row_sparse gradient (lazy: the gradient's rows only)::\n\n"
        "    grad = clip(grad * rescale_grad, clip_gradient)\n"
        "    history += square(grad)\n"
        "    weight -= lr * grad / sqrt(history + epsilon)\n\n"
        "Only row_sparse gradients with dense weight and history, and ``wd == 0``."))
storage_rule(["_sparse_adagrad_update"], _adagrad_infer,
             lambda p, ins, st, oc: run_rows(_adagrad_rule, p, ins, True, oc))


# --- _contrib_group_adagrad_update -------------------------------------------------------------
def _group_rule(p, ins):
    """history += mean(g^2, axis=1); w -= lr * g / sqrt(history + epsilon)."""
    w, g, h = ins
    g = _clip(g.to(w.dtype) * float(_F(p.rescale_grad)), p.clip_gradient)
    g2 = g.reshape(g.shape[0], -1)
    h.add_(g2.square().mean(1, keepdim=True).reshape(h.shape))
    div = g2 / (h.reshape(h.shape[0], 1) + float(_F(p.epsilon))).sqrt()
    return w - div.reshape(w.shape) * float(_F(p.lr))


def _group_dense(p, ins, oc):
    raise MXNetError("Operator _contrib_group_adagrad_update is not implemented for CPU.")


def _group_shape(p, ins, outs):
    w = ins[0] if ins[0] is not None else (ins[1] if ins[1] is not None else outs[0])
    if w is None:
        return ins, outs
    if len(w) != 2:
        raise ShapeError(f"group_adagrad_update: weight must be 2-D, got {_reg._sh(w)}")
    for i, s in enumerate(ins[:2]):
        if s is not None and tuple(s) != tuple(w):
            raise ShapeError(f"Incompatible attr in node {{node}} at {i}-th input: expected "
                             f"{_reg._sh(w)}, got {_reg._sh(s)}")
    hist = (w[0], 1)
    if ins[2] is not None and tuple(ins[2]) != hist:
        raise ShapeError(f"Incompatible attr in node {{node}} at 2-th input: expected "
                         f"{_reg._sh(hist)}, got {_reg._sh(ins[2])}")
    return [w, w, hist], [w]


def _group_infer(p, stypes, shapes=None):
    """A row_sparse grad with a dense weight and history, or a row_sparse weight (whose history
    is row_sparse in MXNet; neomx's updaters keep dense states, also accepted)."""
    w, g, h = stypes
    if g == "row_sparse" and (w, h) in (("default", "default"), ("row_sparse", "row_sparse"),
                                        ("row_sparse", "default")):
        return [w]
    if g == "default" and w == "default" and h == "default":
        return None  # (the dense forward: MXNet's "not implemented for CPU")
    raise _not_implemented("_contrib_group_adagrad_update", stypes)


register(OpDef(
    "_contrib_group_adagrad_update", _group_dense, _group_shape,
    params=(Param("lr", "float", doc="Learning rate"),
            Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = rescale_grad*grad."),
            Param("clip_gradient", "float", -1.0, "Clip gradient to the range of "
                  "[-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is "
                  "turned off. grad = max(min(grad, clip_gradient), -clip_gradient)."),
            Param("epsilon", "float", 1e-5, "Epsilon for numerical stability")),
    inputs=("weight", "grad"), aux=("history",), mutates_aux=True, hint="group_adagrad_update",
    doc="Update function for Group AdaGrad optimizer (one learning rate per row)::\n\n"
        "    grad = clip(grad * rescale_grad, clip_gradient)\n"
        "    history += mean(square(grad), axis=1, keepdims=True)\n"
        "    div = grad / sqrt(history + float_stable_eps)\n"
        "    weight -= div * lr\n\n"
        "Weights are updated lazily (the gradient's rows only); the gradient must be "
        "row_sparse, as in MXNet 1.9.1 on CPU."))


def _group_forward(p, ins, out_stypes, oc):
    return run_rows(_group_rule, p, ins, True, oc)


storage_rule(["_contrib_group_adagrad_update"], _group_infer, _group_forward)
