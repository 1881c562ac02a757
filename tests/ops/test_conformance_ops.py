"""Operator behaviours checked against MXNet 1.9.1 (``tools/make_golden_conformance_ops.py``):
mod by zero gives 0, mod takes the divisor's sign, and ``dot`` differentiates transposed N-D
operands (imperatively and in the executor)."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "conformance" / "ops.json")
                    .read_text())


@pytest.mark.parametrize("rec", GOLDEN["mod"], ids=[r["id"] for r in GOLDEN["mod"]])
def test_mod_as_mxnet(rec):
    a = mx.nd.array(rec["lhs"], dtype=rec["dtype"])
    rhs = rec["rhs"]
    if isinstance(rhs, list):
        b = mx.nd.array(rhs, dtype=rec["dtype"])
        res = a % b if b.shape == a.shape else mx.nd.broadcast_mod(a, b)
        sym = mx.sym.broadcast_mod(mx.sym.var("a"), mx.sym.var("b"))
        sres = sym.eval(mx.cpu(), a=a, b=b)[0]
        np.testing.assert_array_equal(sres.asnumpy(), rec["result"])
    else:
        res = a % rhs
    assert res.dtype == np.dtype(rec["dtype"])
    np.testing.assert_array_equal(res.asnumpy(), rec["result"])


@pytest.mark.parametrize("rec", GOLDEN["dot"], ids=[r["id"] for r in GOLDEN["dot"]])
def test_dot_gradients_with_transposes(rec):
    a, b = mx.nd.array(rec["a"]), mx.nd.array(rec["b"])
    kw = {"transpose_a": rec["transpose_a"], "transpose_b": rec["transpose_b"]}
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(a, b, **kw)
    y.backward(mx.nd.array(rec["head_grad"]))
    np.testing.assert_allclose(y.asnumpy(), rec["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.grad.asnumpy(), rec["grad_a"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), rec["grad_b"], rtol=1e-5, atol=1e-6)
    # the executor runs the same rule
    sym = mx.sym.dot(mx.sym.var("a"), mx.sym.var("b"), **kw)
    ex = sym.bind(mx.cpu(), {"a": a, "b": b}, args_grad={"a": mx.nd.zeros(a.shape),
                                                        "b": mx.nd.zeros(b.shape)})
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(rec["head_grad"]))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), rec["grad_a"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), rec["grad_b"], rtol=1e-5, atol=1e-6)
