"""Initializers against MXNet 1.9.1: dispatch rules, deterministic values, dumps/create, errors,
and the distributions of the random ones."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.initializer import (Bilinear, Constant, InitDesc, Initializer, Load, LSTMBias,
                               MSRAPrelu, Mixed, Normal, One, Orthogonal, Uniform, Xavier, Zero)

from ._golden import arrays, load_json, raises_like

GOLD = load_json("initializers.json")
ENV = {k: getattr(mx.init, k) for k in ("Uniform", "Normal", "Xavier", "MSRAPrelu", "Constant",
                                       "Zero", "One", "Orthogonal", "Bilinear", "LSTMBias",
                                       "Mixed", "Load", "InitDesc", "Initializer")}
ENV.update(mx=mx, np=np)


def test_exported_as_init_and_initializer():
    assert mx.init is mx.initializer
    assert mx.init.Uniform is Uniform and mx.init.InitDesc is InitDesc


@pytest.mark.parametrize("rec", GOLD["dumps"], ids=lambda r: r["code"])
def test_dumps(rec):
    assert eval(rec["code"], ENV).dumps() == rec["dumps"]


@pytest.mark.parametrize("rec", GOLD["create"], ids=lambda r: r["spec"])
def test_create(rec):
    init = mx.init.create(rec["spec"], **rec["kwargs"])
    assert type(init).__name__ == rec["cls"]
    assert init.dumps() == rec["dumps"]


def test_create_instance_and_dict():
    u = Uniform(0.3)
    assert mx.init.create(u) is u
    assert mx.init.create({"initializer": "normal", "sigma": 2.0}).sigma == 2.0
    assert Uniform(0.1) == mx.init.create('["uniform", {"scale": 0.1}]')
    assert Uniform(0.1) != Uniform(0.2) and Uniform(0.1) != Normal(0.1)


@pytest.mark.parametrize("rec", GOLD["apply"], ids=lambda r: r["id"])
def test_apply(rec):
    arr = mx.nd.full(tuple(rec["shape"]), -9.0)
    eval(rec["code"], ENV)(InitDesc(rec["name"], rec["attrs"]), arr)
    np.testing.assert_array_equal(arr.asnumpy(), arrays()["init/" + rec["id"]])


@pytest.mark.parametrize("rec", GOLD["legacy"], ids=lambda r: f"{r['code']}-{r['name']}")
def test_legacy_str_names(rec):
    arr = mx.nd.full(tuple(rec["shape"]), -9.0)
    with pytest.warns(DeprecationWarning):
        eval(rec["code"], ENV)(rec["name"], arr)
    np.testing.assert_allclose(arr.asnumpy(), arrays()[rec["key"]], rtol=1e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("rec", GOLD["errors"], ids=lambda r: r["id"])
def test_errors(rec):
    msg = raises_like(rec, lambda: eval(rec["code"], ENV))
    assert msg == rec["error"]


def test_initdesc_is_str_with_attrs():
    d = InitDesc("fc_weight", {"a": "1"})
    assert d == "fc_weight" and isinstance(d, str) and d.attrs == {"a": "1"}
    assert d.global_init is None
    init = One()
    init(d, mx.nd.zeros((2,)))
    assert d.global_init is init  # set on first use, as in MXNet
    assert InitDesc("x").attrs == {}


def test_register_custom_and_alias():
    @mx.init.register
    @mx.init.alias("halfinit_alias")
    class HalfInit(Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.5
    a = mx.nd.zeros((3,))
    mx.init.create("halfinit_alias")(InitDesc("x_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), 0.5)
    # usable through a Variable's __init__ attribute
    b = mx.nd.zeros((2,))
    Zero()(InitDesc("x_bias", {"__init__": HalfInit().dumps()}), b)
    np.testing.assert_array_equal(b.asnumpy(), 0.5)
    with pytest.raises(AssertionError, match="Can only register subclass"):
        mx.init.register(object)


def test_variable_init_attribute_roundtrip():
    w = mx.sym.Variable("w", init=mx.init.Constant(4.0))
    attrs = w.attr_dict()["w"]
    arr = mx.nd.zeros((2, 2))
    Uniform()(InitDesc("w", attrs), arr)
    np.testing.assert_array_equal(arr.asnumpy(), 4.0)


def test_batchnorm_aux_init_attrs():
    """BatchNorm's moving statistics carry __init__ attributes, so any initializer fills them."""
    net = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    attrs = net.attr_dict()
    mean, var = mx.nd.full((3,), 7.0), mx.nd.full((3,), 7.0)
    Uniform()(InitDesc("bn_moving_mean", attrs.get("bn_moving_mean")), mean)
    Uniform()(InitDesc("bn_moving_var", attrs.get("bn_moving_var")), var)
    np.testing.assert_array_equal(mean.asnumpy(), 0.0)
    np.testing.assert_array_equal(var.asnumpy(), 1.0)


def test_constant_ndarray_value_dumps():
    c = Constant(mx.nd.array([[1, 2], [3, 4]]))
    assert json.loads(c.dumps()) == ["constant", {"value": [[1.0, 2.0], [3.0, 4.0]]}]


def test_load_from_file(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"arg:fc_weight": mx.nd.array([1, 2]), "aux:bn_moving_mean": mx.nd.array([3.0])})
    init = Load(f, default_init=Zero())
    a, b, c = mx.nd.zeros((2,)), mx.nd.zeros((1,)), mx.nd.ones((2,))
    init("fc_weight", a)
    init("bn_moving_mean", b)
    init(InitDesc("fc_bias"), c)
    np.testing.assert_array_equal(a.asnumpy(), [1, 2])
    np.testing.assert_array_equal(b.asnumpy(), [3])
    np.testing.assert_array_equal(c.asnumpy(), [0, 0])


def test_verbose_logs(caplog):
    import logging
    init = One().set_verbosity(True)
    with caplog.at_level(logging.INFO):
        init(InitDesc("fc_weight"), mx.nd.zeros((4,)))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text


def test_quantized_patterns():
    a = mx.nd.full((3,), 5.0)
    Uniform()(InitDesc("fc_bias_quantize"), a)
    np.testing.assert_array_equal(a.asnumpy(), 0)
    w = mx.nd.zeros((50,))
    Uniform()(InitDesc("fc_weight_quantize"), w)
    assert np.all(np.abs(w.asnumpy()) <= 127) and np.all(w.asnumpy() == np.round(w.asnumpy()))


# --- random initializers: distributions ------------------------------------------------------
def _expected(code, shape):
    """(distribution, bound or sigma) of ``code`` on ``shape`` by MXNet's formulas."""
    init = eval(code, ENV)
    if isinstance(init, Uniform):
        return "uniform", init.scale
    if isinstance(init, Normal):
        return "normal", init.sigma
    hw = np.prod(shape[2:]) if len(shape) > 2 else 1.0
    fan_in, fan_out = shape[1] * hw, shape[0] * hw
    factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[init.factor_type]
    scale = math.sqrt(init.magnitude / factor)
    return ("uniform" if init.rnd_type == "uniform" else "normal"), scale


@pytest.mark.parametrize("rec", GOLD["random_stats"], ids=lambda r: r["id"])
def test_random_distribution(rec, seed):
    shape = tuple(rec["shape"])
    arr = mx.nd.zeros(shape)
    eval(rec["code"], ENV)(InitDesc("w_weight"), arr)
    a = arr.asnumpy().astype(np.float64)
    kind, s = _expected(rec["code"], shape)
    n = a.size
    sd = s / math.sqrt(3) if kind == "uniform" else s
    # mean, std against theory (5 standard errors) and against MXNet's sample
    assert abs(a.mean()) < 5 * sd / math.sqrt(n)
    assert abs(a.std() - sd) < 5 * sd / math.sqrt(2 * n) * (1.2 if kind == "uniform" else 1.0)
    assert abs(a.std() - rec["std"]) < 10 * sd / math.sqrt(2 * n)
    if kind == "uniform":
        assert a.min() >= -s - 1e-7 and a.max() <= s + 1e-7
        assert a.min() < -0.99 * s and a.max() > 0.99 * s
        np.testing.assert_allclose([a.min(), a.max()], [rec["min"], rec["max"]], rtol=0.01)
    else:
        # Gaussian tails: about 0.27% beyond 3 sigma
        frac = np.mean(np.abs(a) > 3 * s)
        assert 0.001 < frac < 0.006


def test_uniform_respects_dtype_and_context(seed):
    arr = mx.nd.zeros((100,), ctx=mx.cpu(1), dtype="float64")
    Uniform(2.0)(InitDesc("w_weight"), arr)
    assert arr.dtype == np.float64 and arr.context == mx.cpu(1)
    assert np.abs(arr.asnumpy()).max() <= 2.0 and np.abs(arr.asnumpy()).max() > 1.5


def test_seeded_initialization_is_repeatable():
    a, b = mx.nd.zeros((5, 5)), mx.nd.zeros((5, 5))
    mx.random.seed(3)
    Xavier()(InitDesc("w_weight"), a)
    mx.random.seed(3)
    Xavier()(InitDesc("w_weight"), b)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_orthogonal(seed):
    for rand_type in ("uniform", "normal"):
        arr = mx.nd.zeros((4, 6))
        Orthogonal(scale=2.0, rand_type=rand_type)(InitDesc("o_weight"), arr)
        a = arr.asnumpy()
        np.testing.assert_allclose(a @ a.T, GOLD["orthogonal_gram"], atol=1e-4)
    arr = mx.nd.zeros((6, 2, 2))  # more rows than columns: orthonormal columns
    Orthogonal(scale=1.0)(InitDesc("o_weight"), arr)
    a = arr.asnumpy().reshape(6, 4)
    np.testing.assert_allclose(a.T @ a, np.eye(4), atol=1e-5)


def test_msraprelu_is_gaussian_xavier():
    m = MSRAPrelu("in", 0.5)
    assert m.rnd_type == "gaussian" and m.factor_type == "in"
    assert m.magnitude == pytest.approx(2.0 / 1.25)


def test_mixed_and_load_accept_initdesc():
    init = Mixed([".*bias$", ".*"], [Constant(2.0), Load({"fc_weight": mx.nd.array([9.0])})])
    a, b = mx.nd.zeros((1,)), mx.nd.zeros((1,))
    init(InitDesc("fc_bias"), a)
    init(InitDesc("fc_weight"), b)
    assert a.asscalar() == 0.0  # Constant, like any initializer, leaves biases at 0
    assert b.asscalar() == 9.0


def test_bilinear_matches_loop():
    shape = (1, 2, 5, 6)
    arr = mx.nd.zeros(shape)
    Bilinear()(InitDesc("up_weight"), arr)
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    ref = np.zeros(int(np.prod(shape)), dtype=np.float32)
    for i in range(ref.size):
        x, y = i % shape[3], (i // shape[3]) % shape[2]
        ref[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    np.testing.assert_array_equal(arr.asnumpy(), ref.reshape(shape))


def test_lstmbias_through_variable():
    arr = mx.nd.ones((16,))
    Uniform()(InitDesc("lstm_bias", {"__init__": LSTMBias(forget_bias=3.0).dumps()}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), [0] * 4 + [3] * 4 + [0] * 8)


def test_module_style_call():
    """Module calls ``initializer(InitDesc(name, attr_dict.get(name)), arr)`` for every param."""
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
    net = mx.sym.BatchNorm(net, name="bn")
    attrs = net.attr_dict()
    shapes = dict(zip(net.list_arguments(), net.infer_shape(data=(2, 4))[0]))
    init = mx.init.Uniform(0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in sorted(set(net.list_arguments()) - {"data"}):
            arr = mx.nd.full(shapes[name], 9.0)
            init(InitDesc(name, attrs.get(name)), arr)
            a = arr.asnumpy()
            if name.endswith("weight"):
                assert np.abs(a).max() <= 0.01
            else:
                assert np.all(a == (1.0 if name.endswith("gamma") else 0.0)), name
