"""mx.autograd against MXNet 1.9.1 (tests/golden/autograd, written by
tools/make_golden_autograd.py): gradients of composite functions, autograd.grad, second
derivatives, flags, get_symbol's structure and MXNet's errors."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx import autograd

from .._golden import assert_error_matches

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "autograd"
RECORD = json.loads((GOLDEN / "autograd.json").read_text())
ARRAYS = np.load(GOLDEN / "autograd.npz")
CASES = RECORD["cases"]


def _inputs(case):
    return {k: mx.nd.array(ARRAYS[f"{case['id']}/in_{k}"]) for k in case["inputs"]}


def _close(got, key, rtol=1e-4, atol=1e-5):
    want = ARRAYS[key]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol, err_msg=key)


def _run(case):
    """Run one case in neomx the way the generator ran it in MXNet; returns (out, grads)."""
    arrs = _inputs(case)
    diff = [k for k in arrs if k not in case["ints"]]
    env = dict(arrs, mx=mx, autograd=autograd, np=np)
    head = None
    if case["head"] is not None:
        head = mx.nd.array(ARRAYS[f"{case['id']}/head"])
    kind = case["kind"]
    if kind == "backward":
        for k in diff:
            arrs[k].attach_grad(case["grad_req"])
        for _ in range(case["repeat"]):
            with autograd.record():
                exec(case["code"], env)
            env["out"].backward(head)
        return env["out"], {k: arrs[k].grad for k in diff}
    if kind == "grad":
        for k in diff:
            arrs[k].attach_grad()
        with autograd.record():
            exec(case["code"], env)
        gs = autograd.grad(env["out"], [arrs[k] for k in diff], head_grads=head)
        for k in diff:  # autograd.grad leaves the .grad buffers alone
            assert not arrs[k].grad.asnumpy().any()
        return env["out"], dict(zip(diff, gs))
    raise ValueError(kind)


FIRST = [c for c in CASES if c["kind"] in ("backward", "grad")]
SECOND = [c for c in CASES if c["kind"] == "grad2"]


@pytest.mark.parametrize("case", FIRST, ids=[c["id"] for c in FIRST])
def test_gradients_match_mxnet(case):
    out, grads = _run(case)
    _close(out, f"{case['id']}/out")
    for k, g in grads.items():
        key = f"{case['id']}/grad_{k}"
        if key in ARRAYS:
            assert g is not None, key
            _close(g, key)


def _second_derivative_numeric(code, x, eps=1e-3):
    """d/dx of sum(dy/dx) by central differences of the first derivative, in float64."""
    def first(v):
        a = mx.nd.array(v, dtype="float64")
        a.attach_grad()
        with autograd.record():
            env = {"x": a, "mx": mx}
            exec(code, env)
        env["out"].backward()
        return a.grad.asnumpy()
    x = x.astype(np.float64)
    res = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        # only the diagonal of the Hessian: these functions act elementwise
        res[i] = (first(xp)[i] - first(xm)[i]) / (2 * eps)
    return res


@pytest.mark.parametrize("case", SECOND, ids=[c["id"] for c in SECOND])
def test_second_derivatives(case):
    x = _inputs(case)["x"]
    x.attach_grad()
    with autograd.record():
        env = {"x": x, "mx": mx}
        exec(case["code"], env)
        g = autograd.grad(env["out"], [x], create_graph=True)[0]
    assert g._ag is not None  # the backward was recorded
    g.backward()
    _close(env["out"], f"{case['id']}/out")
    _close(g, f"{case['id']}/grad1")
    if "mxnet_error" in case:  # MXNet 1.9.1 has no second-order rule here; neomx has
        want = _second_derivative_numeric(case["code"], ARRAYS[f"{case['id']}/in_x"])
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-3, atol=1e-3)
    else:
        _close(x.grad, f"{case['id']}/grad_x")


def test_flags_match_mxnet():
    want = RECORD["flags"]
    got = {"default": [autograd.is_recording(), autograd.is_training()]}
    with autograd.record():
        got["record"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.pause():
            got["record_pause"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.pause(train_mode=True):
            got["record_pause_train"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.predict_mode():
            got["record_predict"] = [autograd.is_recording(), autograd.is_training()]
    with autograd.record(train_mode=False):
        got["record_predict_arg"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.train_mode():
            got["record_false_train"] = [autograd.is_recording(), autograd.is_training()]
    got["setters"] = [autograd.set_recording(True), autograd.set_recording(False),
                      autograd.set_training(True), autograd.set_training(False)]
    got["after"] = [autograd.is_recording(), autograd.is_training()]
    assert got == want


def test_get_symbol_structure_matches_mxnet():
    a = mx.nd.array([[1., 2.]])
    a.attach_grad()
    w = mx.nd.array([[3., 4.]])
    w.attach_grad()
    with autograd.record():
        y = mx.nd.FullyConnected(a, w, num_hidden=1, no_bias=True) * 2 + a.sum()
    js = json.loads(autograd.get_symbol(y).tojson())
    got = [[n["op"], n.get("attrs", {}), [i[:2] for i in n["inputs"]]] for n in js["nodes"]]
    want = RECORD["symbols"]["fc"]
    assert [(op, ins) for op, _, ins in got] == [(op, ins) for op, _, ins in want]
    assert [attrs for _, attrs, _ in got] == [attrs for _, attrs, _ in want]
    assert js["arg_nodes"] == RECORD["symbols"]["fc_arg_nodes"]


# --- errors -------------------------------------------------------------------------------------
def _marked():
    a = mx.nd.array([1., 2.])
    a.attach_grad()
    return a


def _twice():
    a = _marked()
    with autograd.record():
        y = a * a
    y.backward()
    y.backward()


def _unrecorded():
    a = _marked()
    (a * a).backward()


def _shared_freed():
    a = _marked()
    with autograd.record():
        y = a * a
        z = y + 1
    z.backward()
    y.backward()


def _inplace_var():
    a = _marked()
    with autograd.record():
        a += 1


def _inplace_needed():
    a = _marked()
    with autograd.record():
        y = a * 2
        z = y * y  # noqa: F841
        y *= 3


def _setitem_in_graph():
    a = _marked()
    with autograd.record():
        y = a * 2
        y[:] = 1


def _out_in_graph():
    a = _marked()
    with autograd.record():
        y = a * 2
        mx.nd.relu(a, out=y)


def _no_grad_inputs():
    a = mx.nd.array([1., 2.])
    a.attach_grad(grad_req="null")
    with autograd.record():
        y = a * a
    y.backward()


def _grad_unmarked():
    a = _marked()
    b = mx.nd.array([1., 2.])
    with autograd.record():
        y = a * b
    autograd.grad(y, [a, b])


def _grad_unreachable():
    a, b = _marked(), _marked()
    with autograd.record():
        y = a * a
    autograd.grad(y, [a, b])


def _grad_frees_graph():
    a = _marked()
    with autograd.record():
        y = a * a
    autograd.grad(y, [a])
    y.backward()


def _symbol_unrecorded():
    autograd.get_symbol(mx.nd.array([1., 2.]) * 2)


def _function_twice():
    class Double(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2
    f = Double()
    a = _marked()
    with autograd.record():
        f(a)
        f(a)


def _non_differentiable():
    a = _marked()
    with autograd.record():
        y = mx.nd.sgd_update(a, a, lr=0.1)
    y.backward()


ERRORS = {
    "backward_twice": _twice, "backward_unrecorded": _unrecorded,
    "backward_shared_freed": _shared_freed, "inplace_variable": _inplace_var,
    "inplace_needed": _inplace_needed, "setitem_in_graph": _setitem_in_graph,
    "out_in_graph": _out_in_graph, "no_inputs_require_grad": _no_grad_inputs,
    "grad_not_variable": _grad_unmarked, "grad_unreachable": _grad_unreachable,
    "grad_frees_graph": _grad_frees_graph, "get_symbol_unrecorded": _symbol_unrecorded,
    "function_called_twice": _function_twice, "non_differentiable": _non_differentiable,
}


@pytest.mark.parametrize("name", sorted(RECORD["errors"]))
def test_errors_match_mxnet(name):
    rec = RECORD["errors"][name]
    with pytest.raises(Exception) as ei:
        ERRORS[name]()
    # the text after MXNet's "Check failed: <expression>: " (expressions here contain ':')
    core = re.split(r"\) ?: ?(?=[A-Z])", rec["error_message"])[-1]
    assert_error_matches(ei.value, rec, [core])
