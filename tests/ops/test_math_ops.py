"""The elementwise math operators (``neomx/ops/math.py``, plus rounding ops of elemwise.py)
against MXNet 1.9.1 (``tools/make_golden_math.py``): forward values for float32, float64,
float16, edge values and integer arrays; gradients; symbol JSON; errors; a float64 numerical
gradient check of every differentiable op; nd-vs-sym parity."""
from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "math" / "math.json")
                    .read_text())
CASES = GOLDEN["cases"]
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12), "float16": (1e-3, 1e-3)}


def _nd(op):
    return getattr(mx.nd, op, None) or getattr(mx.nd._internal, op)


def _sym(op):
    if op.startswith("_contrib_"):  # as mx.sym.contrib.<name> will call it (auto-name hint)
        from neomx.symbol import register
        return register.make_function(mx.ops.get(op), op[len("_contrib_"):])
    return getattr(mx.sym, op, None) or getattr(mx.sym._internal, op)


def _inputs(case):
    return [mx.nd.array(np.array(x, dtype=case["dtype"]), dtype=case["dtype"])
            for x in case["inputs"]]


def _close(have, want, dtype, scale=1.0, signed_zeros=False):
    want = np.array(want, dtype=np.float64)
    if dtype.startswith("int"):
        np.testing.assert_array_equal(have, want.astype(dtype))
        return
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.asarray(have, dtype=np.float64), want, rtol=rtol * scale,
                               atol=atol * scale, equal_nan=True)
    if signed_zeros:  # (forward values: -0.0 where MXNet gives it)
        np.testing.assert_array_equal(np.signbit(np.asarray(have))[want == 0], np.signbit(want)[want == 0])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_forward_as_mxnet(case):
    xs = _inputs(case)
    if "error" in case:
        with pytest.raises(mx.base.MXNetError, match=re.escape(case["error"])):
            _nd(case["op"])(*xs, **case["params"]).asnumpy()
        return
    y = _nd(case["op"])(*xs, **case["params"])
    assert np.dtype(y.dtype) == np.dtype(case["dtype"])
    _close(y.asnumpy(), case["out"], case["dtype"], signed_zeros=True)
    if case["dtype"] in ("float32", "int32"):  # the executor computes the same
        names = ["a", "b"][:len(xs)]
        s = _sym(case["op"])(*[mx.sym.var(n) for n in names], **case["params"])
        sy = s.eval(mx.cpu(), **dict(zip(names, xs)))[0]
        np.testing.assert_array_equal(sy.asnumpy(), y.asnumpy())


GRAD_CASES = [c for c in CASES if "head_grad" in c]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["id"] for c in GRAD_CASES])
def test_backward_as_mxnet(case):
    xs = _inputs(case)
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = _nd(case["op"])(*xs, **case["params"])
    y.backward(mx.nd.array(case["head_grad"], dtype=case["dtype"]))
    # (MXNet's float64 backward kernels use single-precision constants: erf, gamma, ...)
    scale = 1e4 if case["dtype"] == "float64" else 10.0
    for x, want in zip(xs, case["grads"]):
        _close(x.grad.asnumpy(), want, case["dtype"], scale=scale)


# --- numerical gradients (float64, random direction and per element) -----------------------------
STRAIGHT_THROUGH = ("_contrib_round_ste", "_contrib_sign_ste")  # gradient is not the derivative
NUMERIC = [c for c in GRAD_CASES if c["dtype"] == "float64" and c["op"] not in STRAIGHT_THROUGH
           and not all(np.all(np.array(g) == 0) for g in c["grads"])]


def _f(case, arrays):
    return _nd(case["op"])(*[mx.nd.array(a, dtype="float64") for a in arrays],
                           **case["params"]).asnumpy()


@pytest.mark.parametrize("case", NUMERIC, ids=[c["id"] for c in NUMERIC])
def test_numeric_gradient(case):
    ins = [np.array(x, dtype=np.float64) for x in case["inputs"]]
    xs = [mx.nd.array(a, dtype="float64") for a in ins]
    for x in xs:
        x.attach_grad()
    r = np.random.RandomState(0)
    with mx.autograd.record():
        y = _nd(case["op"])(*xs, **case["params"])
    c = r.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(c, dtype="float64"))
    eps = 1e-6
    for i, x in enumerate(xs):  # per element
        num = np.zeros_like(ins[i])
        for j in np.ndindex(ins[i].shape):
            hi = [a.copy() for a in ins]
            lo = [a.copy() for a in ins]
            hi[i][j] += eps
            lo[i][j] -= eps
            num[j] = np.sum(c * (_f(case, hi) - _f(case, lo))) / (2 * eps)
        np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-7)
    t = [r.uniform(-1, 1, a.shape) for a in ins]  # random direction (JAX check_vjp)
    fd = (_f(case, [a + eps * d for a, d in zip(ins, t)])
          - _f(case, [a - eps * d for a, d in zip(ins, t)])) / (2 * eps)
    lhs = sum(np.sum(d * x.grad.asnumpy()) for d, x in zip(t, xs))
    assert abs(lhs - np.sum(c * fd)) <= 1e-6 * max(1.0, abs(lhs))


# --- gradients in the executor (the same rules as backward nodes) --------------------------------
EXEC = [c for c in GRAD_CASES if c["dtype"] == "float32"]


@pytest.mark.parametrize("case", EXEC, ids=[c["id"] for c in EXEC])
def test_executor_backward_as_mxnet(case):
    xs = _inputs(case)
    names = ["a", "b"][:len(xs)]
    s = _sym(case["op"])(*[mx.sym.var(n) for n in names], **case["params"])
    ex = s.bind(mx.cpu(), dict(zip(names, xs)),
                args_grad={n: mx.nd.zeros(x.shape) for n, x in zip(names, xs)})
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(case["head_grad"]))
    for n, want in zip(names, case["grads"]):
        _close(ex.grad_dict[n].asnumpy(), want, "float32", scale=10.0)


# --- symbols and errors --------------------------------------------------------------------------
JSON = list(GOLDEN["json"].values())


@pytest.mark.parametrize("rec", JSON, ids=[r["op"] + str(i) for i, r in enumerate(JSON)])
def test_symbol_json_as_mxnet(rec):
    with mx.name.NameManager():
        if rec["params"] is None:
            s = _sym(rec["op"])(mx.sym.var("a"), mx.sym.var("b"))
        else:
            s = _sym(rec["op"])(mx.sym.var("x"), **rec["params"])
    assert s.tojson() == rec["json"]


ERRORS = [e for e in GOLDEN["errors"] if e["error"]]


@pytest.mark.parametrize("rec", ERRORS, ids=[e["code"][:40] for e in ERRORS])
def test_errors_as_mxnet(rec):
    want = re.sub(r"^Check failed: [^:]*: ", "", rec["error"])
    with pytest.raises(mx.base.MXNetError, match=re.escape(want)):
        eval(rec["code"], {"mx": mx}).asnumpy()


def test_fluent_methods():
    x = mx.nd.array([0.25, -0.5, 2.0])
    for name in ("sin", "arctan", "expm1", "rsqrt", "cbrt", "rint", "fix", "degrees"):
        np.testing.assert_array_equal(getattr(x, name)().asnumpy(), _nd(name)(x).asnumpy())
    s = mx.sym.var("x").sin()
    np.testing.assert_array_equal(s.eval(mx.cpu(), x=x)[0].asnumpy(), x.sin().asnumpy())
