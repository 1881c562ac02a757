"""The compiled backward of recorded tapes (neomx/executor/tape_plan.py): from the second
backward of a tape structure on, the graph's gradient pass runs as an executor plan. Its
gradients must be the eager rules' ones, and tapes it does not take must still be right."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx
from neomx.executor import tape_plan as TC


def _grads(params):
    return [p.grad.asnumpy().copy() for p in params]


def _compare(step, params, runs=3, compiled=True):
    """Run ``step`` eagerly, then ``runs`` times with the compiled path on; the gradients of
    every run equal the eager ones. Returns how many backward passes ran compiled."""
    TC.ENABLED["enabled"] = False
    try:
        step()
        want = _grads(params)
    finally:
        TC.ENABLED["enabled"] = True
    before = TC.STATS["runs"]
    for _ in range(runs):
        step()
        for g, w in zip(_grads(params), want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    ran = TC.STATS["runs"] - before
    if compiled:
        assert ran >= runs - 1, "the compiled backward did not run"
    else:
        assert ran == 0, "this tape must take the eager path"
    return ran


def _params(rng, *shapes):
    out = []
    for s in shapes:
        p = mx.nd.array(rng.uniform(-0.5, 0.5, s))
        p.attach_grad()
        out.append(p)
    return out


def test_mlp_with_a_loss_head():
    rng = np.random.RandomState(0)
    w1, b1, w2, b2 = _params(rng, (16, 8), (16,), (4, 16), (4,))
    x = mx.nd.array(rng.uniform(-1, 1, (5, 8)))
    y = mx.nd.array([0, 1, 2, 3, 1])

    def step():
        with mx.autograd.record():
            h = mx.nd.Activation(mx.nd.FullyConnected(x, w1, b1, num_hidden=16), act_type="tanh")
            out = mx.nd.FullyConnected(h, w2, b2, num_hidden=4)
            loss = mx.nd.SoftmaxOutput(out, y)
        loss.backward()
    _compare(step, [w1, b1, w2, b2])


def test_convnet_with_head_gradient_and_constants():
    rng = np.random.RandomState(1)
    cw, cb, fw = _params(rng, (4, 2, 3, 3), (4,), (3, 36))
    x = mx.nd.array(rng.uniform(-1, 1, (2, 2, 8, 8)))  # a constant: no gradient
    hg = mx.nd.array(rng.uniform(-1, 1, (2, 3)))

    def step():
        with mx.autograd.record():
            c = mx.nd.Convolution(x, cw, cb, kernel=(3, 3), num_filter=4)
            p = mx.nd.Pooling(mx.nd.relu(c), kernel=(2, 2), stride=(2, 2), pool_type="max")
            out = mx.nd.FullyConnected(mx.nd.flatten(p), fw, no_bias=True, num_hidden=3)
            out = out * 2.0 + 1.0
        out.backward(hg)
    _compare(step, [cw, cb, fw])


def test_a_variable_used_twice_and_several_heads():
    rng = np.random.RandomState(2)
    (w,) = _params(rng, (3, 3))
    a = mx.nd.array(rng.uniform(-1, 1, (3, 3)))
    g1 = mx.nd.array(rng.uniform(-1, 1, (3, 3)))
    g2 = mx.nd.array(rng.uniform(-1, 1, (3, 3)))

    def step():
        with mx.autograd.record():
            y1 = mx.nd.dot(w, a) * w
            y2 = mx.nd.sigmoid(mx.nd.dot(a, w, transpose_b=True))
        mx.autograd.backward([y1, y2], [g1, g2])
    _compare(step, [w])


def test_grad_req_add_accumulates():
    rng = np.random.RandomState(3)
    w = mx.nd.array(rng.uniform(-1, 1, (4, 4)))
    w.attach_grad(grad_req="add")
    x = mx.nd.array(rng.uniform(-1, 1, (2, 4)))

    def step():
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.square(mx.nd.dot(x, w)))
        loss.backward()
    TC.ENABLED["enabled"] = False
    step()
    once = w.grad.asnumpy().copy()
    TC.ENABLED["enabled"] = True
    before = TC.STATS["runs"]
    for _ in range(3):
        step()
    assert TC.STATS["runs"] - before >= 2
    np.testing.assert_allclose(w.grad.asnumpy(), 4 * once, rtol=1e-5)


def test_retain_graph_runs_twice():
    rng = np.random.RandomState(4)
    (w,) = _params(rng, (3, 5))
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3)))
    for _ in range(2):  # (the structure is met once, then compiled)
        with mx.autograd.record():
            y = mx.nd.tanh(mx.nd.dot(x, w))
        y.backward(retain_graph=True)
    want = w.grad.asnumpy().copy()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-6)
    with pytest.raises(mx.base.MXNetError):
        y.backward()


def test_dropout_masks_of_each_step():
    """Dropout draws a new mask each step; the compiled backward reads the recorded one."""
    x = mx.nd.ones((50, 40))
    x.attach_grad()
    before = TC.STATS["runs"]
    for _ in range(3):
        with mx.autograd.record():
            y = mx.nd.Dropout(x, p=0.5)
        y.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), y.asnumpy())  # (scale 2 where kept)
    assert TC.STATS["runs"] - before >= 2


def test_batchnorm_moving_statistics_update_once_per_forward():
    rng = np.random.RandomState(5)
    g, b = _params(rng, (3,), (3,))
    mean, var = mx.nd.zeros((3,)), mx.nd.ones((3,))
    x = mx.nd.array(rng.uniform(-1, 1, (4, 3)))
    stats = []

    def bn_step():
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.BatchNorm(x, g, b, mean, var, fix_gamma=False) * x)
        loss.backward()
        stats.append(mean.asnumpy().copy())
    _compare(bn_step, [g, b])
    # one momentum step per forward: m_k = 0.9^k * 0 + (1 - 0.9^k) * batch mean
    bm = x.asnumpy().mean(axis=0)
    for k, m in enumerate(stats, 1):
        np.testing.assert_allclose(m, (1 - 0.9 ** k) * bm, rtol=1e-5, atol=1e-7)


def test_tapes_on_two_contexts_stay_eager():
    rng = np.random.RandomState(5)
    (w,) = _params(rng, (3, 3))
    a1 = mx.nd.array(rng.uniform(-1, 1, (3, 3)), ctx=mx.cpu(1))

    def two_ctx_step():
        with mx.autograd.record():
            loss = mx.nd.sum(mx.nd.dot(w.as_in_context(mx.cpu(1)), a1))
        loss.backward()
    _compare(two_ctx_step, [w], compiled=False)


def _gluon_training(compiled, steps=4):
    """A few imperative Gluon steps (Conv2D, BatchNorm, Dropout, Dense; Trainer SGD) from fixed
    parameters and random-number state; returns every parameter after them."""
    TC.ENABLED["enabled"] = compiled
    try:
        mx.random.seed(7)
        net = mx.gluon.nn.Sequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Conv2D(4, 3), mx.gluon.nn.BatchNorm(),
                    mx.gluon.nn.Activation("relu"), mx.gluon.nn.Dropout(0.3),
                    mx.gluon.nn.Dense(3))
        net.initialize(mx.init.Xavier())
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                                   {"learning_rate": 0.1, "momentum": 0.9})
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        rng = np.random.RandomState(8)
        x = mx.nd.array(rng.uniform(-1, 1, (6, 2, 7, 7)))
        y = mx.nd.array(rng.randint(0, 3, 6))
        for _ in range(steps):
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(6)
        return {k.split("_", 1)[1]: v.data().asnumpy() for k, v in net.collect_params().items()}
    finally:
        TC.ENABLED["enabled"] = True


def test_gluon_imperative_training_is_the_same_compiled():
    want = _gluon_training(False)
    before = TC.STATS["runs"]
    got = _gluon_training(True)
    assert TC.STATS["runs"] - before >= 3
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_autograd_grad_and_create_graph_stay_eager():
    """autograd.grad (returned gradients, a recorded backward) runs the eager rules; the
    backward of the recorded backward is an ordinary tape again (compiled from its second
    meeting) and gives the second derivative."""
    x = mx.nd.array([0.5, -1.0, 2.0])
    x.attach_grad()
    xv = x.asnumpy()
    for _ in range(3):
        with mx.autograd.record():
            y = mx.nd.sin(x) * x
        before = TC.STATS["runs"]
        (dx,) = mx.autograd.grad(y, [x], create_graph=True)
        assert TC.STATS["runs"] == before
        np.testing.assert_allclose(dx.asnumpy(), np.cos(xv) * xv + np.sin(xv), rtol=1e-5)
        dx.backward()
        # d/dx (cos x * x + sin x) = -sin x * x + 2 cos x
        np.testing.assert_allclose(x.grad.asnumpy(), -np.sin(xv) * xv + 2 * np.cos(xv),
                                   rtol=1e-5)


def test_switched_off_everything_is_eager():
    rng = np.random.RandomState(6)
    (w,) = _params(rng, (2, 2))
    TC.ENABLED["enabled"] = False
    try:
        before = TC.STATS["runs"]
        for _ in range(3):
            with mx.autograd.record():
                loss = mx.nd.sum(mx.nd.dot(w, w))
            loss.backward()
        assert TC.STATS["runs"] == before
    finally:
        TC.ENABLED["enabled"] = True
