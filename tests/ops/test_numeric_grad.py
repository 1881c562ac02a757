"""Numerical gradient checks in float64 for every differentiable golden case.

The analytic gradient comes from neomx's executor (simple_bind with float64 arguments,
backward with a random cotangent ``c``). Two checks, as in STYLE.md (d):

* per element (MXNet ``check_numeric_gradient`` style): d<c, f(x)>/dx_i by central differences;
* random direction (JAX ``check_vjp``): <t, vjp(c)> == <c, (f(x+eps*t) - f(x-eps*t)) / (2*eps)>.

Loss heads (SoftmaxOutput) are not differentiated numerically: their gradient is by definition
not the derivative of their forward. Instead their gradient is checked against the closed form
(softmax - onehot(label)) with MXNet's scaling, and, where that closed form is the derivative of
a scaled cross-entropy, against the numerical gradient of that cross-entropy.
"""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

from . import _helpers as H

F64 = np.float64
EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-7          # numeric vs analytic, float64 (central-difference error ~1e-10)

ALL = H.cases()
DIFF_CASES = [c for c in ALL if H.grad_enabled(c) and not H.is_loss_case(c)]
LOSS_CASES = [c for c in ALL if c["op"] == "SoftmaxOutput"]


def _numeric_inputs(case):
    """Golden inputs in float64. Integer-valued inputs (comparison and tie cases) sit on the
    ops' discontinuities/kinks, so they are replaced by seeded continuous values."""
    ins = H.case_inputs(case, F64)
    r = H.rng_for(case["id"] + "/numeric")
    regen = False
    for n, a in ins.items():
        if a.size and np.all(a == np.round(a)):
            ins[n] = r.uniform(-1.5, 1.5, a.shape)
            regen = True
    return ins, regen


class _Fn:
    """f(inputs) -> outputs through a float64 executor, plus its vjp."""

    def __init__(self, sym, inputs, wrt):
        self.names = list(inputs)
        reqs = {n: ("write" if n in wrt else "null") for n in self.names}
        self.ex = H.simple_bind(sym, inputs, grad_req=reqs, dtype=F64)
        self.base = {n: a.copy() for n, a in inputs.items()}

    def __call__(self, values):
        for n in self.names:
            self.ex.arg_dict[n][:] = values[n]
        outs = self.ex.forward(is_train=True)
        res = [o.asnumpy().astype(F64, copy=True) for o in outs]
        for o in outs:
            assert np.dtype(o.dtype) == F64, "float64 inputs gave a %s output" % o.dtype
        return res

    def vjp(self, values, cot):
        self(values)
        self.ex.backward([mx.nd.array(c, dtype=F64) for c in cot])
        return {n: g.asnumpy().astype(F64, copy=True) for n, g in self.ex.grad_dict.items()
                if g is not None}


def _dot(a, b):
    return float(sum(np.sum(x * y) for x, y in zip(a, b)))


def _setup(case):
    sym = H.build_symbol(case)
    inputs, regen = _numeric_inputs(case)
    wrt = [n for n in case["inputs"] if n not in case["grads_not_written"]]
    fn = _Fn(sym, inputs, wrt)
    outs = fn(inputs)
    r = H.rng_for(case["id"] + "/cotangent")
    cot = [r.normal(size=o.shape) for o in outs]
    return fn, inputs, wrt, outs, cot, regen


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in DIFF_CASES
                                  if not _numeric_inputs(c)[1]])
def test_float64_forward_close_to_mxnet(case):
    """The float64 path computes the same function (golden values are float32; cases whose
    inputs are regenerated for the numeric checks are left out)."""
    fn, inputs, _, outs, _, regen = _setup(case)
    for i, (o, w) in enumerate(zip(outs, H.case_outputs(case))):
        H.assert_close(o, w.astype(F64), 1e-4, 1e-5, "%s float64 output %d" % (case["id"], i))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in DIFF_CASES])
def test_numeric_grad_per_element(case):
    fn, inputs, wrt, _, cot, _ = _setup(case)
    analytic = fn.vjp(inputs, cot)
    for n in wrt:
        x = inputs[n]
        num = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            vals = dict(inputs)
            xp = x.copy()
            xp[idx] += EPS
            vals[n] = xp
            fp = _dot(cot, fn(vals))
            xm = x.copy()
            xm[idx] -= EPS
            vals[n] = xm
            fm = _dot(cot, fn(vals))
            num[idx] = (fp - fm) / (2 * EPS)
        H.assert_close(analytic[n], num, RTOL, ATOL,
                       "%s d<c,f>/d%s analytic vs numeric" % (case["id"], n))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in DIFF_CASES])
def test_numeric_grad_random_direction(case):
    fn, inputs, wrt, _, cot, _ = _setup(case)
    analytic = fn.vjp(inputs, cot)
    r = H.rng_for(case["id"] + "/tangent")
    t = {n: r.normal(size=inputs[n].shape) for n in wrt}
    lhs = sum(float(np.sum(t[n] * analytic[n])) for n in wrt)
    plus = {n: (inputs[n] + EPS * t[n] if n in t else inputs[n]) for n in inputs}
    minus = {n: (inputs[n] - EPS * t[n] if n in t else inputs[n]) for n in inputs}
    fp, fm = fn(plus), fn(minus)
    rhs = _dot(cot, [(a - b) / (2 * EPS) for a, b in zip(fp, fm)])
    scale = sum(float(np.sum(np.abs(t[n] * analytic[n]))) for n in wrt) + 1e-12
    assert abs(lhs - rhs) <= RTOL * scale + ATOL, (
        "%s: <t, vjp(c)> = %.12g but <c, jvp(t)> = %.12g" % (case["id"], lhs, rhs))


# ----------------------------------------------------------------------------- loss heads
@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in LOSS_CASES])
def test_softmax_output_grad_closed_form(case):
    """float64: output == softmax and data gradient == (softmax - onehot(label)) scaled as MXNet
    does (grad_scale, normalization, ignore, smoothing, multi_output); head gradient ignored."""
    sym = H.build_symbol(case)
    inputs = H.case_inputs(case, F64)
    ex = H.simple_bind(sym, inputs, grad_req={"data": "write", "label": "null"}, dtype=F64)
    out = ex.forward(is_train=True)[0].asnumpy()
    want_out, want_grad = H.softmax_output_ref(case["params"], inputs["data"], inputs["label"])
    H.assert_close(out, want_out, 1e-10, 1e-12, "%s float64 softmax" % case["id"])
    r = H.rng_for(case["id"] + "/head64")
    head = r.uniform(-1, 1, out.shape)
    ex.backward([mx.nd.array(head, dtype=F64)])
    H.assert_close(ex.grad_dict["data"].asnumpy(), want_grad, 1e-9, 1e-12,
                   "%s float64 grad vs softmax - onehot" % case["id"])


# MXNet's scale of the SoftmaxOutput gradient where it equals scale * d(cross-entropy)/d(data)
# (grad_scale / batch / valid count / spatial size for multi_output, as the golden shows).
CE_SCALE = {
    "smo_default": 1.0, "smo_grad_scale": 2.5, "smo_norm_batch": 1 / 4,
    "smo_ignore_label_no_use": 1.0, "smo_norm_valid": 1 / 4, "smo_norm_valid_noignore": 1 / 2,
    "smo_use_ignore": 1.0, "smo_norm_valid_ignore": 1 / 2,
    "smo_multi_output": 1 / 3, "smo_multi_output_batch": 1 / 6,
    "smo_multi_output_valid_ignore": 1 / 4, "smo_multi_output_4d": 1 / 4,
    "smo_preserve_shape": 1.0, "smo_prob_label": 1.0, "smo_smooth_alpha": 1.0,
    "graph_mlp": 1.0,
}


def _ce_target(params, out_shape, label):
    """Target T (shaped like the output) with grad = scale * (p - T) and sum(T) = 1 per row
    (0 for ignored rows)."""
    label = np.asarray(label, F64)
    multi = bool(params.get("multi_output", False))
    preserve = bool(params.get("preserve_shape", False))
    use_ignore = bool(params.get("use_ignore", False))
    ignore = int(params.get("ignore_label", -1))
    alpha = float(params.get("smooth_alpha", 0.0))
    if label.size == int(np.prod(out_shape)) and not multi:
        return label.reshape(out_shape)
    if multi:
        k = out_shape[1]
        lab = label.reshape(out_shape[0], -1)
        rows = lab.reshape(-1)
    else:
        k = out_shape[-1] if preserve else int(np.prod(out_shape[1:]))
        rows = label.reshape(-1)
    T = np.zeros((rows.size, k))
    for i, c in enumerate(rows.astype(np.int64)):
        if use_ignore and c == ignore:
            continue
        if alpha:
            T[i] = alpha / (k - 1)
            T[i, c] = 1 - alpha
        else:
            T[i, c] = 1.0
    if multi:
        n = out_shape[0]
        return T.reshape(n, -1, k).transpose(0, 2, 1).reshape(out_shape)
    return T.reshape(out_shape)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ALL
                                  if c["id"] in CE_SCALE])
def test_softmax_output_grad_is_scaled_cross_entropy_gradient(case):
    """Per element: analytic gradient == numeric gradient of -scale * sum(T * log(out))."""
    sym = H.build_symbol(case)
    inputs = H.case_inputs(case, F64)
    label_name = case["grads_not_written"][0]
    wrt = [n for n in case["inputs"] if n != label_name]
    fn = _Fn(sym, inputs, wrt)
    params = case["params"] if case["op"] == "SoftmaxOutput" else {}
    out0 = fn(inputs)[0]
    T = _ce_target(params, out0.shape, inputs[label_name])
    scale = CE_SCALE[case["id"]]

    def loss(vals):
        return -scale * float(np.sum(T * np.log(fn(vals)[0])))

    r = H.rng_for(case["id"] + "/head64")
    analytic = fn.vjp(inputs, [r.uniform(-1, 1, out0.shape)])
    for n in wrt:
        x = inputs[n]
        num = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            vals = dict(inputs)
            xp = x.copy()
            xp[idx] += EPS
            vals[n] = xp
            lp = loss(vals)
            xm = x.copy()
            xm[idx] -= EPS
            vals[n] = xm
            num[idx] = (lp - loss(vals)) / (2 * EPS)
        H.assert_close(analytic[n], num, RTOL, ATOL,
                       "%s d(scaled CE)/d%s analytic vs numeric" % (case["id"], n))
