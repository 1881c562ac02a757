"""Operator namespaces built from name prefixes, as MXNet 1.9.1's: ``_contrib_X`` ->
``mx.nd.contrib.X`` / ``mx.sym.contrib.X`` (likewise ``_linalg_``, ``_image_``), ``_random_X_like``
-> ``random.X_like`` next to the Python samplers of ``mx.nd.random`` / ``mx.sym.random``.
Auto-names checked against the oracle: ``quadratic0``, ``_random_uniform0``, ``_sample_uniform0``,
``uniform_like0``, ``_random_randint0``, ``_sample_multinomial0``, ``_shuffle0``."""
from __future__ import annotations

import types

import numpy as np
import pytest

import neomx as mx
from neomx.ops import registry


@pytest.mark.parametrize("ns", ["contrib", "linalg", "image", "random"])
def test_namespaces_are_modules(ns):
    assert isinstance(getattr(mx.nd, ns), types.ModuleType)
    assert isinstance(getattr(mx.sym, ns), types.ModuleType)


@pytest.mark.parametrize("prefix,ns", [("_contrib_", "contrib"), ("_linalg_", "linalg"),
                                       ("_image_", "image")])
def test_every_prefixed_op_is_in_its_namespace(prefix, ns):
    for name in registry.all_ops():
        if name.startswith(prefix):
            short = name[len(prefix):]
            assert callable(getattr(getattr(mx.nd, ns), short)), name
            assert callable(getattr(getattr(mx.sym, ns), short)), name


def test_contrib_nd_and_sym():
    x = mx.nd.array([1.0, 2.0])
    y = mx.nd.contrib.quadratic(x, a=1, b=2, c=3)
    np.testing.assert_allclose(y.asnumpy(), [6.0, 11.0])
    s = mx.sym.contrib.quadratic(mx.sym.var("x"), a=1)
    assert s.name == "quadratic0" or s.name.startswith("quadratic")
    assert s.list_arguments() == ["x"]


def test_contrib_auto_name_is_the_short_name():
    with mx.name.NameManager():
        assert mx.sym.contrib.quadratic(mx.sym.var("x")).name == "quadratic0"
        assert mx.sym.contrib.div_sqrt_dim(mx.sym.var("x")).name == "div_sqrt_dim0"


def test_random_auto_names():
    with mx.name.NameManager():
        assert mx.sym.random.uniform().name == "_random_uniform0"
        assert mx.sym.random.normal(shape=(2,)).name == "_random_normal0"
        assert mx.sym.random.randn(2, 3).name == "_random_normal1"


def test_ops_registered_later_appear(monkeypatch):
    op = registry.OpDef("_contrib_neomx_test_identity", lambda p, ins, oc: ins[0].clone(),
                        registry.same_shape)
    monkeypatch.setitem(registry._REGISTRY, op.name, op)
    try:
        y = mx.nd.contrib.neomx_test_identity(mx.nd.array([3.0]))
        assert y.asnumpy().tolist() == [3.0]
        with mx.name.NameManager():
            assert mx.sym.contrib.neomx_test_identity(mx.sym.var("x")).name == "neomx_test_identity0"
    finally:
        for m in (mx.nd.contrib, mx.sym.contrib):
            m.__dict__.pop("neomx_test_identity", None)
    assert not hasattr(mx.nd.linalg, "no_such_op")


def test_random_namespace_keeps_uniform_normal():
    a = mx.nd.random.uniform(-1, 1, shape=(3, 4))
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert mx.nd.random.uniform().shape == (1,)
    b = mx.nd.random.normal(0, 1, shape=(2,), dtype="float64")
    assert b.dtype == np.float64
    out = mx.nd.zeros((2, 3))
    assert mx.nd.random.normal(out=out) is out
    mx.random.seed(7)
    u1 = mx.random.uniform(0, 1, shape=(5,)).asnumpy()
    mx.random.seed(7)
    u2 = mx.nd.random.uniform(0, 1, shape=(5,)).asnumpy()
    np.testing.assert_array_equal(u1, u2)


def test_random_rejects_mixed_parameter_types():
    with pytest.raises(AssertionError):
        mx.nd.random.uniform(0, mx.nd.ones((2,)))
    with pytest.raises(ValueError):
        mx.nd.random.uniform("a", 1)


def test_contrib_python_functions():
    """MXNet 1.9.1's Python functions of mxnet.ndarray.contrib (values from the oracle)."""
    c = mx.nd.contrib
    x = mx.nd.array([1, float("inf"), float("nan"), -float("inf")])
    np.testing.assert_array_equal(c.isinf(x).asnumpy(), [0, 1, 0, 1])
    np.testing.assert_array_equal(c.isfinite(x).asnumpy(), [1, 0, 0, 0])
    np.testing.assert_array_equal(c.isnan(x).asnumpy(), [0, 0, 1, 0])
    assert c.isnan(x).dtype == np.float32
    w, g, m, v = mx.nd.ones((3,)), mx.nd.ones((3,)) * 0.5, mx.nd.zeros((3,)), mx.nd.zeros((3,))
    c.adamw_update(w, g, m, v, 1.0, lr=0.1, eta=1.0, out=w)
    np.testing.assert_allclose(w.asnumpy(), [0.6837703] * 3, rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.05000001] * 3, rtol=1e-6)

    def fresh(fill):
        return [fill((2,)), fill((3,))]
    ws, gs, ms, vs = fresh(mx.nd.ones), fresh(mx.nd.ones), fresh(mx.nd.zeros), fresh(mx.nd.zeros)
    c.multi_adamw_update(ws, gs, ms, vs, 1.0, lrs=[0.1, 0.1], wds=[0, 0], etas=[1, 1], out=ws)
    for a in ws:
        np.testing.assert_allclose(a.asnumpy(), 0.68377024, rtol=1e-6)
    c.multi_lamb_update(ws, gs, ms, vs, step_count=[1, 1], lrs=[0.1, 0.1], wds=[0, 0], out=ws)
    for a in ws:
        np.testing.assert_allclose(a.asnumpy(), 0.6153932, rtol=1e-6)


def test_rand_zipfian():
    """contrib.rand_zipfian (expected counts from the oracle: [0.36646725, 0.14289824])."""
    s, et, es = mx.nd.contrib.rand_zipfian(mx.nd.array([3, 10]), 5, 20)
    assert s.dtype == np.int64 and s.shape == (5,) and ((s.asnumpy() >= 0) & (s.asnumpy() < 20)).all()
    assert et.dtype == np.float64 and es.dtype == np.float64 and es.shape == (5,)
    np.testing.assert_allclose(et.asnumpy(), [0.36646725, 0.14289824], rtol=1e-6)
    sc = s.asnumpy().astype(np.float64)
    np.testing.assert_allclose(es.asnumpy(), np.log((sc + 2) / (sc + 1)) / np.log(21) * 5, rtol=1e-6)
    a, b, c = mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 5, 20)
    out = mx.sym.Group([a, b, c]).bind(mx.cpu(), {"t": mx.nd.array([3, 10])}).forward()
    assert [o.dtype for o in out] == [np.int64, np.float64, np.float64]
    np.testing.assert_allclose(out[1].asnumpy(), [0.36646725, 0.14289824], rtol=1e-6)
