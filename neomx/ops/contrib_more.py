"""Later ``mx.nd`` / ``mx.nd.contrib`` operators: ``khatri_rao``, ``_contrib_boolean_mask``,
``_contrib_hawkesll`` and ``_multi_mp_lamb_update``.

Semantics, parameters and check messages follow MXNet 1.9.1 (``src/operator/contrib/krprod.cc``,
``boolean_mask.cc``, ``hawkes_ll-inl.h``, ``multi_lamb.cc``). ``boolean_mask``'s output shape
depends on the mask's values: imperative calls compute it, and symbolic inference leaves it
unknown, as MXNet's does.
"""
from __future__ import annotations

import numpy as np
import torch

from .nn_layers import replay_op
from .optimizer_ops import (_floats, _lamb1_step, _lamb2_step, _multi_shape, _multi_type)
from .registry import OpDef, Param, Params, ShapeError, TypeInferError, get, register


def _check(cond, text):
    if not cond:
        raise ShapeError("Check failed: " + text)


# --- khatri_rao ----------------------------------------------------------------------------------
def _khatri_rao_shape(p, ins, outs):
    if any(s is None for s in ins):
        return ins, outs
    for s in ins:
        _check(len(s) == 2, f"ndim == 2 ({len(s)} vs. 2) : Only 2-D matrices are supported")
    cols = ins[0][1]
    rows = 1
    for s in ins:
        _check(s[1] == cols, f"col_dim == shape[1] ({cols} vs. {s[1]}) : All input matrices "
                             "must have the same number of columns")
        rows *= s[0]
    return ins, [(rows, cols)]


def _khatri_rao(p, ins, oc):
    out = ins[0]
    for m in ins[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return out.clone() if out is ins[0] else out


register(OpDef(
    "khatri_rao", _khatri_rao, _khatri_rao_shape,
    params=(Param("num_args", "int", doc="Number of input matrices."),),
    inputs=lambda p: [f"arg{i}" for i in range(p.num_args)], key_var_num_args="num_args",
    doc="Compute the Khatri-Rao product of the input matrices (the column-wise Kronecker "
        "product): for matrices of shapes ``(M_i, N)`` the result is ``(prod M_i, N)``, column "
        "``j`` being ``kron(A_1[:, j], ..., A_k[:, j])``. Not differentiable (as MXNet's).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> A = mx.nd.array([[1, -1], [2, -3]])\n"
        ">>> B = mx.nd.array([[1, 4], [2, 5], [3, 6]])\n"
        ">>> mx.nd.khatri_rao(A, B).asnumpy().tolist()\n"
        "[[1.0, -4.0], [2.0, -5.0], [3.0, -6.0], [2.0, -12.0], [4.0, -15.0], [6.0, -18.0]]"))


# --- boolean_mask --------------------------------------------------------------------------------
def _boolean_mask_shape(p, ins, outs):
    data, index = ins
    if index is not None:
        _check(len(index) == 1, f"idx_shape.ndim() == 1U ({len(index)} vs. 1) ")
    if data is not None and index is not None and 0 not in data:
        _check(p.axis == 0, f"axis == 0 ({p.axis} vs. 0) : Not supported yet")
        _check(data[p.axis] == index[0], f"input_shape[axis] == idx_shape[0] ({data[p.axis]} vs. "
                                         f"{index[0]}) ")
    return ins, outs  # the output's first dimension depends on the values


def _boolean_mask_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    return [t, ins[1]], [t]


def _boolean_mask(p, ins, oc):
    data, index = ins
    _check(p.axis == 0, f"axis == 0 ({p.axis} vs. 0) : Not supported yet")
    _check(index.dim() == 1, f"idx_shape.ndim() == 1U ({index.dim()} vs. 1) ")
    _check(data.shape[0] == index.shape[0], f"input_shape[axis] == idx_shape[0] ({data.shape[0]} "
                                            f"vs. {index.shape[0]}) ")
    return data[index != 0]


def _boolean_mask_grad(F, p, ins, outs, ograds):
    return [F._backward_contrib_boolean_mask(ograds[0], ins[0], ins[1], axis=p.axis), None]


def _boolean_mask_backward(p, ins, oc):
    g, data, index = ins
    out = torch.zeros_like(data)
    out[index != 0] = g
    return out


_AXIS = Param("axis", "int", 0, "An integer that represents the axis in NDArray to mask from.")

register(OpDef(
    "_contrib_boolean_mask", _boolean_mask, _boolean_mask_shape, infer_type=_boolean_mask_type,
    params=(_AXIS,), inputs=("data", "index"), gradient=_boolean_mask_grad, hint="boolean_mask",
    no_grad_inputs=("index",),
    doc="Keep the entries of ``data`` along ``axis`` (only 0 is supported, as in MXNet) where "
        "``index`` is non-zero; the output's length along ``axis`` is the number of non-zero "
        "entries, so symbolic shape inference leaves it unknown.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])\n"
        ">>> mx.nd.contrib.boolean_mask(data, mx.nd.array([0, 1, 1])).asnumpy().tolist()\n"
        "[[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]"))

register(OpDef(
    "_backward_contrib_boolean_mask", _boolean_mask_backward,
    lambda p, ins, outs: (ins, [ins[1]]), params=(_AXIS,), inputs=("ograd", "data", "index"),
    infer_type=lambda p, ins, outs: (ins, [ins[1]]), public=False,
    doc="Gradient of boolean_mask: the output gradient scattered back to the kept rows."))


# --- hawkesll ------------------------------------------------------------------------------------
_HAWKES_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _hawkes_shape(p, ins, outs):
    ins = list(ins)
    lda, lags = ins[0], ins[4]
    if lda is None or lags is None:
        return ins, outs
    _check(len(lda) == 2, "lda must be 2-D (N, K)")
    n, k = lda
    t = lags[1]
    for i, want in ((1, (k,)), (2, (k,)), (3, (n, k)), (4, (n, t)), (5, (n, t)), (6, (n,)),
                    (7, (n,))):
        if ins[i] is not None and tuple(ins[i]) != want:
            raise ShapeError(f"Check failed: shape of {_HAWKES_INPUTS[i]} is {list(ins[i])}, "
                             f"expected {list(want)}")
        ins[i] = want
    return ins, [(n,), (n, k)]


def _hawkes_type(p, ins, outs):
    t = ins[0]
    if t is None:
        return ins, outs
    res = list(ins)
    for i in (1, 2, 3, 4, 6, 7):
        if res[i] is not None and np.dtype(res[i]) != np.dtype(t):
            raise TypeInferError(f"Incompatible attr in node {{node}} at {i}-th input: expected "
                                 f"{np.dtype(t).name}, got {np.dtype(res[i]).name}")
        res[i] = t
    res[5] = res[5] if res[5] is not None else np.dtype(np.int32)
    return res, [t, t]


def _hawkes_compute(p, ins, with_state=False):
    """Log-likelihood per sequence (and the final states): MXNet's per-point recursion,
    vectorised over the N sequences (steps past a sequence's valid length are masked)."""
    mu, alpha, beta, state, lags, marks, valid, max_time = ins
    n, k = mu.shape
    marks = marks.long()
    rows = torch.arange(n, device=mu.device)
    st = state.clone()
    last = torch.zeros_like(mu)
    t = torch.zeros(n, dtype=mu.dtype, device=mu.device)
    ll = torch.zeros(n, dtype=mu.dtype, device=mu.device)
    for j in range(lags.shape[1]):
        on = (valid > j)
        ci = marks[:, j].clamp(0, k - 1)
        t = torch.where(on, t + lags[:, j], t)
        d = t - last[rows, ci]
        a, b = alpha[ci], beta[ci]
        s = st[rows, ci]
        ed = torch.exp(-b * d)
        lda = mu[rows, ci] + a * b * s * ed
        comp = mu[rows, ci] * d + a * s * (1 - ed)
        ll = ll + torch.where(on, torch.log(lda) - comp, torch.zeros_like(ll))
        onehot = torch.nn.functional.one_hot(ci, k).to(mu.dtype) * on[:, None].to(mu.dtype)
        st = st + onehot * ((1 + s * ed) - s)[:, None]
        last = last + onehot * (t - last[rows, ci])[:, None]
    d = max_time[:, None] - last
    ed = torch.exp(-beta[None, :] * d)
    ll = ll - (mu * d + alpha[None, :] * st * (1 - ed)).sum(1)
    return (ll, st * ed) if with_state else ll


replay_op(
    "_contrib_hawkesll", lambda p, ins: _hawkes_compute(p, ins),
    lambda p, ins, oc: _hawkes_compute(p, ins, with_state=True), _hawkes_shape, params=(),
    inputs=_HAWKES_INPUTS, no_grad=(3, 4, 5, 6, 7), zero_grad=True, infer_type=_hawkes_type,
    outputs=("output", "out_state"), hint="hawkesll",
    doc="Log likelihood of a marked self-exciting (Hawkes) process with exponential kernels: "
        "``lda`` (N, K) background intensities, ``alpha``/``beta`` (K,) branching ratios and "
        "decays, ``state`` (N, K) initial kernel states, ``lags`` (N, T) inter-arrival times, "
        "``marks`` (N, T) int32 mark types, ``valid_length`` (N,) and ``max_time`` (N,); returns "
        "the log likelihoods (N,) and the final states (N, K). Gradients flow to ``lda``, "
        "``alpha`` and ``beta``.")


# --- _multi_mp_lamb_update -----------------------------------------------------------------------
_MP_KINDS = ("weight", "grad", "mean", "var", "weight32")


def _multi_mp_lamb(p, ins, oc):
    n, res = p.num_tensors, []
    lrs, wds = _floats(p.learning_rates, "learning_rates"), _floats(p.wds, "wds")
    for i in range(n):
        w, g, mean, var, w32 = ins[i * 5:(i + 1) * 5]
        q = Params(p, wd=wds[i], t=p.step_count[i], lr=lrs[i])
        d = _lamb1_step(w32, g.float(), mean, var, q)
        r1 = torch.linalg.vector_norm(w.float()).reshape(1)  # (MXNet: the stored weight's norm)
        r2 = torch.linalg.vector_norm(d).reshape(1)
        new = _lamb2_step(w32, d, r1, r2, q)
        w32.copy_(new)
        res.append(new.to(w.dtype))
    return res[0] if n == 1 else tuple(res)


def _mp_lamb_names(p):
    return [f"{k}_{i}" for i in range(p.num_tensors) for k in _MP_KINDS]


def _mp_lamb_shape(p, ins, outs):
    return _multi_shape(_MP_KINDS, False)(Params(p, num_weights=p.num_tensors), ins, outs)


def _mp_lamb_type(p, ins, outs):
    return _multi_type(_MP_KINDS, False, True)(Params(p, num_weights=p.num_tensors), ins, outs)


_LAMB = get("_multi_lamb_update")

register(OpDef(
    "_multi_mp_lamb_update", _multi_mp_lamb, _mp_lamb_shape, infer_type=_mp_lamb_type,
    params=tuple(_LAMB.params), inputs=(), aux=_mp_lamb_names,
    outputs=lambda p: ["output"] if p.num_tensors == 1 else [f"output{i}"
                                                              for i in range(p.num_tensors)],
    mutates_aux=True,
    doc="Mixed-precision LAMB of ``num_tensors`` weights in one call: inputs (weight_i, grad_i, "
        "mean_i, var_i, weight32_i) per weight, every one declared a state; the update runs in "
        "float32 on ``weight32_i`` (updated in place with ``mean_i``/``var_i``) and the outputs "
        "are the new weights in their own dtype."))
