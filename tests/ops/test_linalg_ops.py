"""The linear-algebra operators (``neomx/ops/linalg.py``) against MXNet 1.9.1
(``tools/make_golden_linalg.py``): forward values (float32, float64, batches, transposes,
``axis``, offsets), gradients for every visible output's head gradient, the executor's
gradients, symbol JSON and output names, errors, a float64 numerical gradient check of every
differentiable op, and nd-vs-sym parity."""
from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "linalg" / "linalg.json")
                    .read_text())
# (the ops are registered one by one: cases of ops neomx does not have yet are left out)
CASES = [c for c in GOLDEN["cases"] if mx.ops.find(c["op"]) is not None]
TOL = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}
NAMES = ["a", "b", "c"]


def _nd(op):  # mx.nd.linalg_gemm; syevd is only mx.nd.linalg.syevd (as in MXNet)
    return getattr(mx.nd, op[1:], None) or getattr(mx.nd.linalg, op[len("_linalg_"):])


def _sym(op):
    return getattr(mx.sym, op[1:], None) or getattr(mx.sym.linalg, op[len("_linalg_"):])


def _params(case):
    return dict(case["params"])


def _inputs(case):
    return [mx.nd.array(np.array(x, dtype=case["dtype"]), dtype=case["dtype"]) for x in case["inputs"]]


def _list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def _close(have, want, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    want = np.array(want, dtype=np.float64)
    have = np.asarray(have, dtype=np.float64)
    assert have.shape == want.shape, (have.shape, want.shape)
    np.testing.assert_allclose(have, want, rtol=rtol * scale, atol=atol * scale)


def _ids(cases):
    return [c["id"] for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_forward_as_mxnet(case):
    xs = _inputs(case)
    ys = _list(_nd(case["op"])(*xs, **_params(case)))
    assert len(ys) == len(case["outs"])
    for y, want, dt in zip(ys, case["outs"], case["out_dtypes"]):
        assert np.dtype(y.dtype) == np.dtype(dt)
        _close(y.asnumpy(), want, case["dtype"])


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_nd_sym_parity(case):
    xs = _inputs(case)
    ys = _list(_nd(case["op"])(*xs, **_params(case)))
    names = NAMES[:len(xs)]
    s = _sym(case["op"])(*[mx.sym.var(n) for n in names], **_params(case))
    arg_shapes, out_shapes, _ = s.infer_shape(**{n: x.shape for n, x in zip(names, xs)})
    _, out_types, _ = s.infer_type(**{n: x.dtype for n, x in zip(names, xs)})
    outs = s.eval(mx.cpu(), **dict(zip(names, xs)))
    assert len(outs) == len(ys)
    for y, sy, shp, t in zip(ys, outs, out_shapes, out_types):
        assert tuple(shp) == y.shape and np.dtype(t) == np.dtype(y.dtype)
        np.testing.assert_allclose(sy.asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-7)


GRAD_CASES = [c for c in CASES if "grads" in c]


@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids(GRAD_CASES))
def test_backward_as_mxnet(case):
    xs = _inputs(case)
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = _list(_nd(case["op"])(*xs, **_params(case)))
    mx.autograd.backward(ys, [mx.nd.array(h, dtype=case["dtype"]) for h in case["head_grads"]])
    for x, want in zip(xs, case["grads"]):
        _close(x.grad.asnumpy(), want, case["dtype"], scale=5.0)


EXEC = [c for c in GRAD_CASES if c["dtype"] == "float32"]


@pytest.mark.parametrize("case", EXEC, ids=_ids(EXEC))
def test_executor_backward_as_mxnet(case):
    xs = _inputs(case)
    names = NAMES[:len(xs)]
    s = _sym(case["op"])(*[mx.sym.var(n) for n in names], **_params(case))
    ex = s.bind(mx.cpu(), dict(zip(names, xs)),
                args_grad={n: mx.nd.zeros(x.shape) for n, x in zip(names, xs)})
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(h) for h in case["head_grads"]])
    for n, want in zip(names, case["grads"]):
        _close(ex.grad_dict[n].asnumpy(), want, "float32", scale=5.0)


# --- numerical gradients (float64) ---------------------------------------------------------------
# Inputs read through one triangle, or assumed symmetric: perturb them only in those directions.
def _direction(op, params, i, shape, r):
    d = r.uniform(-1, 1, shape)
    if i == 0 and op in ("_linalg_potrf", "_linalg_syevd"):
        return d + np.swapaxes(d, -1, -2)
    if i == 0 and op in ("_linalg_potri", "_linalg_trsm", "_linalg_trmm"):
        return np.tril(d) if params.get("lower", True) else np.triu(d)
    return d


NUMERIC = [c for c in GRAD_CASES if c["dtype"] == "float64"]


@pytest.mark.parametrize("case", NUMERIC, ids=_ids(NUMERIC))
def test_numeric_gradient(case):
    op, params = case["op"], _params(case)
    ins = [np.array(x, dtype=np.float64) for x in case["inputs"]]
    xs = [mx.nd.array(a, dtype="float64") for a in ins]
    for x in xs:
        x.attach_grad()
    r = np.random.RandomState(0)
    with mx.autograd.record():
        ys = _list(_nd(op)(*xs, **params))
    # (slogdet's sign is piecewise constant: no head gradient on it)
    cs = [np.zeros(y.shape) if (op == "_linalg_slogdet" and k == 0) else r.uniform(-1, 1, y.shape)
          for k, y in enumerate(ys)]
    mx.autograd.backward(ys, [mx.nd.array(c, dtype="float64") for c in cs])

    def f(arrays):
        outs = _list(_nd(op)(*[mx.nd.array(a, dtype="float64") for a in arrays], **params))
        return sum(np.sum(c * o.asnumpy()) for c, o in zip(cs, outs))

    eps = 1e-6
    for _ in range(3):  # random directions (JAX check_vjp)
        t = [_direction(op, params, i, a.shape, r) for i, a in enumerate(ins)]
        fd = (f([a + eps * d for a, d in zip(ins, t)]) - f([a - eps * d for a, d in zip(ins, t)])) / (2 * eps)
        lhs = sum(np.sum(d * x.grad.asnumpy()) for d, x in zip(t, xs))
        assert abs(lhs - fd) <= 1e-6 * max(1.0, abs(lhs)), (lhs, fd)


# --- symbols and errors --------------------------------------------------------------------------
SYMBOLS = [s for s in GOLDEN["symbols"] if mx.ops.find(s["op"]) is not None]


@pytest.mark.parametrize("rec", SYMBOLS, ids=[s["op"] for s in SYMBOLS])
def test_symbol_as_mxnet(rec):
    with mx.name.NameManager():
        s = _sym(rec["op"])(*[mx.sym.var(n) for n in rec["inputs"]], **rec["params"])
    assert s.tojson() == rec["json"]
    assert s.list_outputs() == rec["outputs"]
    assert _nd(rec["op"]) is not None
    assert hasattr(mx.nd, rec["op"][1:]) == (rec["op"] != "_linalg_syevd")


def _error_op(code):
    return "_linalg_" + re.match(r"mx\.nd\.linalg[_.](\w+)", code).group(1)


ERRORS = [e for e in GOLDEN["errors"] if e["error"] and mx.ops.find(_error_op(e["code"]))]


@pytest.mark.parametrize("rec", ERRORS, ids=[e["code"][:60] for e in ERRORS])
def test_errors_as_mxnet(rec):
    want = rec["error"].split("\n")[0]
    with pytest.raises(mx.base.MXNetError, match=re.escape(want)):
        for y in _list(eval(rec["code"], {"mx": mx})):
            y.asnumpy()
