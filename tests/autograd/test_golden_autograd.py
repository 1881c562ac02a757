"""mx.autograd against MXNet 1.9.1 running the same scenarios (tests/autograd/_autograd_cases.py;
golden tests/golden/autograd, written by tools/make_golden_autograd.py): gradients of composite
functions, autograd.grad, second derivatives, flags, get_symbol's structure and MXNet's
errors."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx import autograd

from .._golden import assert_error_matches
from . import _autograd_cases as cases

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
    head = None
    if case["head"] is not None:
        head = mx.nd.array(ARRAYS[f"{case['id']}/head"])
    out, grads = cases.run_first_order(mx, case, arrs, head)
    if case["kind"] == "grad":
        for k in grads:  # autograd.grad leaves the .grad buffers alone
            assert not arrs[k].grad.asnumpy().any()
    return out, grads


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
    out, g = cases.record_second_order(mx, case["code"], x)
    assert g._ag is not None  # the backward was recorded
    g.backward()
    _close(out, f"{case['id']}/out")
    _close(g, f"{case['id']}/grad1")
    if "mxnet_error" in case:  # MXNet 1.9.1 has no second-order rule here; neomx has
        want = _second_derivative_numeric(case["code"], ARRAYS[f"{case['id']}/in_x"])
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-3, atol=1e-3)
    else:
        _close(x.grad, f"{case['id']}/grad_x")


def test_flags_match_mxnet():
    assert cases.flags(mx) == RECORD["flags"]


def test_get_symbol_structure_matches_mxnet():
    got = cases.symbols(mx)
    want = RECORD["symbols"]["fc"]
    assert [(op, ins) for op, _, ins in got["fc"]] == [(op, ins) for op, _, ins in want]
    assert [attrs for _, attrs, _ in got["fc"]] == [attrs for _, attrs, _ in want]
    assert got["fc_arg_nodes"] == RECORD["symbols"]["fc_arg_nodes"]


# --- errors -------------------------------------------------------------------------------------
ERRORS = cases.error_scenarios(mx)


@pytest.mark.parametrize("name", sorted(RECORD["errors"]))
def test_errors_match_mxnet(name):
    rec = RECORD["errors"][name]
    with pytest.raises(Exception) as ei:
        ERRORS[name]()
    # the text after MXNet's "Check failed: <expression>: " (expressions here contain ':')
    core = re.split(r"\) ?: ?(?=[A-Z])", rec["error_message"])[-1]
    assert_error_matches(ei.value, rec, [core])
