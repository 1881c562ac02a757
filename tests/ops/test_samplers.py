"""Samplers of MXNet 1.9.1 (neomx/ops/samplers.py): ``_random_<dist>``, ``_random_<dist>_like``,
``_sample_<dist>``, ``_random_randint``, ``_sample_multinomial`` and ``_shuffle``, through
``mx.nd.random`` / ``mx.sym.random`` and the op names.

Values are random (torch's generators, not MXNet's), so these check what MXNet fixes: parameters,
dtypes and shapes (checked in the oracle: ``_sample_*`` prepend the parameter shape and give
float32 whatever the parameters' dtype; ``randint`` int32 unless int64; multinomial int32 and
log-probabilities of ``data``'s dtype, its gradient 1/p at the sampled category times the head
gradient, e.g. ``[[15, 3.333, 12]]`` for p=[.2,.3,.5], draws [1,2,0,2] and head [1,2,3,4]),
repeatability under ``mx.random.seed``, and moments / chi-square fits on large draws.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import verify_generator

R = mx.nd.random
N = 200_000

# name, wrapper keywords, mean, variance (MXNet's parametrisations)
DISTS = [
    ("uniform", dict(low=-1.0, high=3.0), 1.0, 16 / 12),
    ("normal", dict(loc=2.0, scale=0.5), 2.0, 0.25),
    ("exponential", dict(scale=2.0), 2.0, 4.0),
    ("gamma", dict(alpha=2.0, beta=3.0), 6.0, 18.0),
    ("poisson", dict(lam=4.0), 4.0, 4.0),
    ("negative_binomial", dict(k=3, p=0.4), 4.5, 11.25),
    ("generalized_negative_binomial", dict(mu=2.0, alpha=0.5), 2.0, 4.0),
]


def _check_moments(x, mean, var):
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n) + 1e-6, (x.mean(), mean)
    assert abs(x.var() - var) < 0.05 * var, (x.var(), var)


@pytest.mark.parametrize("name,kw,mean,var", DISTS)
def test_scalar_parameters_moments(name, kw, mean, var):
    x = getattr(R, name)(shape=(N,), **kw)
    assert x.shape == (N,) and x.dtype == np.float32
    _check_moments(x.asnumpy(), mean, var)


@pytest.mark.parametrize("name,kw,mean,var", DISTS)
def test_array_parameters_prepend_their_shape(name, kw, mean, var):
    arrays = {k: mx.nd.full((2, 3), v, dtype="float64") for k, v in kw.items()}
    x = getattr(R, name)(shape=(N // 6,), **arrays)
    assert x.shape == (2, 3, N // 6) and x.dtype == np.float32  # float32 whatever the params
    _check_moments(x.asnumpy(), mean, var)
    assert getattr(R, name)(dtype="float64", **arrays).dtype == np.float64
    assert getattr(R, name)(**arrays).shape == (2, 3)


def test_array_parameters_per_element():
    low = mx.nd.array([0.0, 10.0, 100.0])
    high = mx.nd.array([1.0, 11.0, 101.0])
    x = R.uniform(low, high, shape=(2, 50)).asnumpy()
    assert x.shape == (3, 2, 50)
    for i, lo in enumerate([0.0, 10.0, 100.0]):
        assert (x[i] >= lo).all() and (x[i] < lo + 1).all()
    lam = mx.nd.array([1.0, 50.0])
    p = mx.nd.random.poisson(lam, shape=(20000,)).asnumpy()
    np.testing.assert_allclose(p.mean(axis=1), [1.0, 50.0], rtol=0.03)


@pytest.mark.parametrize("name,kw,mean,var", DISTS)
def test_like_forms(name, kw, mean, var):
    data = mx.nd.zeros((4, N // 4), dtype="float64")
    y = getattr(R, name + "_like")(data, **{("lam" if name in ("exponential",) else k):
                                           (1.0 / v if name == "exponential" else v)
                                           for k, v in kw.items()})
    assert y.shape == data.shape and y.dtype == np.float64
    _check_moments(y.asnumpy(), mean, var)
    assert getattr(mx.nd._internal, "_random_" + name + "_like") is getattr(R, name + "_like")


@pytest.mark.parametrize("name", ["exponential", "gamma", "poisson", "negative_binomial",
                                  "generalized_negative_binomial", "randint"])
def test_random_ops_parameters_dtype_ctx(name):
    op = getattr(mx.nd._internal, "_random_" + name)
    kw = dict(low=0, high=7) if name == "randint" else {}
    x = op(shape=(2, 5), ctx=mx.cpu(), **kw)
    assert x.shape == (2, 5) and x.context == mx.cpu()
    if name == "randint":
        assert x.dtype == np.int32
        assert op(shape=(3,), dtype="int64", **kw).dtype == np.int64
        v = op(shape=(10000,), **kw).asnumpy()
        assert v.min() == 0 and v.max() == 6
        with pytest.raises(mx.MXNetError):
            op(shape=(3,), dtype="float32", **kw)
    else:
        assert x.dtype == np.float32
        assert op(shape=(3,), dtype="float64").dtype == np.float64
        assert op(shape=(3,), dtype="float16").dtype == np.float16
    assert callable(getattr(mx.nd, "random_" + name))


def test_wrappers_defaults_and_out():
    assert R.exponential().shape == (1,)
    assert R.randint(0, 5).shape == (1,) and R.randint(0, 5).dtype == np.int32
    assert R.randn(2, 3).shape == (2, 3)
    assert R.randn(2, 3, loc=5, dtype="float64").dtype == np.float64
    out = mx.nd.zeros((3, 4))
    assert R.gamma(2, 2, out=out) is out
    assert (out.asnumpy() > 0).all()
    with pytest.raises(AssertionError):
        R.gamma(mx.nd.ones((2,)), 1.0)


def test_seed_makes_draws_repeatable():
    def draw():
        return [R.gamma(2, 3, shape=(5,)).asnumpy(), R.poisson(mx.nd.array([1.0, 2.0]), shape=3).asnumpy(),
                R.multinomial(mx.nd.array([[0.1, 0.9]]), shape=6).asnumpy(),
                R.shuffle(mx.nd.arange(8)).asnumpy(), R.randint(0, 100, shape=(4,)).asnumpy(),
                R.normal_like(mx.nd.zeros((3,))).asnumpy()]
    mx.random.seed(42)
    a = draw()
    mx.random.seed(42)
    b = draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_multinomial_shapes_and_dtypes():
    p1 = mx.nd.array([0.2, 0.8])
    assert R.multinomial(p1).shape == (1,)
    assert R.multinomial(p1, shape=(2, 3)).shape == (2, 3)
    p2 = mx.nd.array([[0.2, 0.8], [0.5, 0.5], [1.0, 0.0]])
    s = R.multinomial(p2)
    assert s.shape == (3,) and s.dtype == np.int32
    assert s.asnumpy()[2] == 0
    assert R.multinomial(p2, shape=4).shape == (3, 4)
    for dt in ("float16", "float64", "uint8"):
        assert R.multinomial(p2, dtype=dt).dtype == np.dtype(dt)
    with pytest.raises(mx.MXNetError):
        R.multinomial(p2, dtype="int64")
    s, lp = R.multinomial(p2.astype("float64"), shape=5, get_prob=True)
    assert lp.shape == (3, 5) and lp.dtype == np.float64
    probs = p2.asnumpy()
    np.testing.assert_allclose(lp.asnumpy(), np.log(np.take_along_axis(probs, s.asnumpy().astype(int), 1)),
                               rtol=1e-6)


def test_multinomial_frequencies():
    probs = [0.1, 0.2, 0.3, 0.4]
    p = mx.nd.array(probs)
    verify_generator(lambda n: R.multinomial(p, shape=n).asnumpy(), buckets=[0, 1, 2, 3],
                     probs=probs, nsamples=100000, nrepeat=3)


def test_continuous_fit():
    buckets = [(i / 5.0, (i + 1) / 5.0) for i in range(5)]
    verify_generator(lambda n: R.uniform(mx.nd.array([0.0]), mx.nd.array([1.0]), shape=n).asnumpy()[0],
                     buckets=buckets, probs=[0.2] * 5, nsamples=100000, nrepeat=3)


def test_multinomial_gradient():
    p = mx.nd.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    p.attach_grad()
    head = mx.nd.array([[1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 1.5, 2.0]])
    with mx.autograd.record():
        s, lp = R.multinomial(p, shape=4, get_prob=True)
    lp.backward(head)
    s, probs, h = s.asnumpy().astype(int), p.asnumpy(), head.asnumpy()
    want = np.zeros_like(probs)
    for i in range(2):
        for j in range(4):
            want[i, s[i, j]] += h[i, j] / probs[i, s[i, j]]
    np.testing.assert_allclose(p.grad.asnumpy(), want, rtol=1e-5)


def test_multinomial_gradient_1d_symbolic():
    data = mx.sym.var("p")
    out = mx.sym.random.multinomial(data, shape=3)  # get_prob=True in mx.sym, as MXNet's
    assert len(out.list_outputs()) == 2
    loss = mx.sym.MakeLoss(mx.sym.sum(out[1]))
    probs = np.array([0.25, 0.75], dtype=np.float32)
    ex = loss.simple_bind(mx.cpu(), p=(2,))
    ex.arg_dict["p"][:] = probs
    ex.forward(is_train=True)
    ex.backward()
    g = ex.grad_dict["p"].asnumpy()
    # each draw adds 1/p at its category: g[0]*0.25 + g[1]*0.75 = 3 draws
    np.testing.assert_allclose(g[0] * 0.25 + g[1] * 0.75, 3.0, rtol=1e-5)


def test_shuffle():
    x = mx.nd.arange(20).reshape((10, 2))
    y = R.shuffle(x).asnumpy()
    assert y.shape == (10, 2)
    np.testing.assert_array_equal(np.sort(y[:, 0]), np.arange(0, 20, 2))
    np.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)  # rows move whole
    assert np.array_equal(x.asnumpy(), np.arange(20).reshape((10, 2)))  # input untouched
    assert mx.nd.shuffle(mx.nd.ones((1, 3))).shape == (1, 3)


def test_symbolic_samplers():
    with mx.name.NameManager():
        u = mx.sym.random.uniform(low=mx.sym.var("a"), high=mx.sym.var("b"), shape=(4,))
        assert u.name == "_sample_uniform0"
        assert mx.sym.random.uniform_like(mx.sym.var("x")).name == "uniform_like0"
        assert mx.sym.random.randint(0, 5).name == "_random_randint0"
        assert mx.sym.random.shuffle(mx.sym.var("x")).name == "_shuffle0"
    ex = u.bind(mx.cpu(), {"a": mx.nd.zeros((2,)), "b": mx.nd.ones((2,))})
    y = ex.forward()[0]
    assert y.shape == (2, 4) and (y.asnumpy() < 1).all()
    g = mx.sym.random.gamma(2, 3, shape=(50000,))
    v = g.bind(mx.cpu(), {}).forward()[0].asnumpy()
    _check_moments(v, 6.0, 18.0)
    e = mx.sym.random.exponential(mx.sym.var("s"), shape=(3,))
    assert e.infer_shape(s=(2,))[1] == [(2, 3)]


def test_like_forms_keep_integer_dtypes():
    y = R.poisson_like(mx.nd.ones((1000,), dtype="int32"), lam=3.0)
    assert y.dtype == np.int32 and y.shape == (1000,)
    assert 2.5 < y.asnumpy().mean() < 3.5


def test_unknown_shapes_fail_as_mxnet():
    with pytest.raises(mx.MXNetError):
        R.randn()
    with pytest.raises(mx.MXNetError):
        R.uniform(shape=())
    with pytest.raises(mx.MXNetError):
        R.shuffle(mx.nd.ones((1,)).reshape(()))
    with pytest.raises(mx.MXNetError):
        R.uniform(mx.nd.ones((2,)), mx.nd.ones((3,)))


def test_multinomial_symbol_outputs():
    with mx.name.NameManager():
        s = mx.sym.random.multinomial(mx.sym.var("p"))
        assert s.list_outputs() == ["_sample_multinomial0_output0", "_sample_multinomial0_output1"]
        s = mx.sym.random.multinomial(mx.sym.var("p"), get_prob=False)
        assert s.list_outputs() == ["_sample_multinomial1_output"]
