"""The executor's memory plan keeps results identical: steps computed in place over values nothing
else reads, forward values released by backward (and replayed by a second backward), versus the
plain plan that keeps everything."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx
from neomx.graph import plan as _plan


def convnet(act):
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="c1")
        net = mx.sym.Activation(net, act_type=act, name="a1")
        net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="p1")
        net = mx.sym.Convolution(net, kernel=(2, 2), num_filter=8, name="c2")
        net = mx.sym.Activation(net, act_type=act, name="a2")
        net = mx.sym.Flatten(net)
        net = mx.sym.FullyConnected(net, num_hidden=6, name="f1")
        net = mx.sym.Activation(net, act_type=act, name="a3")
        net = mx.sym.FullyConnected(net, num_hidden=3, name="f2")
        return mx.sym.SoftmaxOutput(net, name="out")


def run(sym, grad_req="write", backwards=1, seed=0):
    ex = sym.simple_bind(mx.cpu(), grad_req=grad_req, data=(4, 2, 9, 9))
    rng = np.random.RandomState(seed)
    for name, arr in ex.arg_dict.items():
        arr[:] = (np.arange(4) % 3).astype("f") if name == "out_label" else rng.uniform(-1, 1, arr.shape)
    for arr in ex.grad_dict.values():
        arr[:] = 0.5
    ex.forward(is_train=True)
    outs = [o.asnumpy() for o in ex.outputs]
    for _ in range(backwards):
        ex.backward()
    return ex, outs, {k: v.asnumpy() for k, v in ex.grad_dict.items()}


@pytest.fixture
def no_inplace(monkeypatch):
    monkeypatch.setitem(_plan.INPLACE, "enabled", False)


@pytest.mark.parametrize("act", ["tanh", "relu", "sigmoid", "softrelu"])
def test_inplace_steps_give_the_plain_results(act, monkeypatch):
    monkeypatch.setitem(_plan.FUSE, "enabled", False)  # (fusion: see test_fusion.py)
    ex, outs, grads = run(convnet(act))
    plan_text = ex.debug_str()
    if act != "softrelu":  # 3 forward activations, 2 backward ones (the third reads a Reshape)
        assert plan_text.count("in place") == 5, plan_text
    monkeypatch.setitem(_plan.INPLACE, "enabled", False)
    _, outs0, grads0 = run(convnet(act))
    for a, b in zip(outs, outs0):
        np.testing.assert_array_equal(a, b)
    for k in grads:
        np.testing.assert_array_equal(grads[k], grads0[k], err_msg=k)


def test_values_read_elsewhere_are_not_overwritten():
    """An activation over a variable, over a value read twice, or over a view (Reshape) runs
    out of place; the variable and the other reader see the original values."""
    with mx.name.NameManager():
        x = mx.sym.Variable("x")
        y = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
        a = mx.sym.Activation(y, act_type="relu", name="r1")  # y is also read below
        b = mx.sym.elemwise_add(a, y, name="sum")
        c = mx.sym.Activation(x, act_type="tanh", name="t1")  # over a variable
        r = mx.sym.Activation(mx.sym.Reshape(y, shape=(-1,)), act_type="sigmoid", name="s1")
        net = mx.sym.Group([b, c, r])
    ex = net.simple_bind(mx.cpu(), x=(3, 5), grad_req="null")
    assert "in place" not in ex.debug_str()
    xv = np.random.RandomState(0).uniform(-1, 1, (3, 5)).astype("f")
    ex.arg_dict["x"][:] = xv
    ex.arg_dict["fc_weight"][:] = np.random.RandomState(1).uniform(-1, 1, (4, 5))
    ex.arg_dict["fc_bias"][:] = 0.1
    out = [o.asnumpy() for o in ex.forward()]
    yv = xv @ ex.arg_dict["fc_weight"].asnumpy().T + 0.1
    np.testing.assert_allclose(out[0], np.maximum(yv, 0) + yv, rtol=1e-6)
    np.testing.assert_allclose(out[1], np.tanh(xv), rtol=1e-6)
    np.testing.assert_array_equal(ex.arg_dict["x"].asnumpy(), xv)


def test_monitor_sees_values_before_in_place_steps():
    seen = {}
    ex = convnet("tanh").simple_bind(mx.cpu(), data=(4, 2, 9, 9))
    ex.arg_dict["data"][:] = np.random.RandomState(0).uniform(-1, 1, (4, 2, 9, 9))
    ex.arg_dict["c1_weight"][:] = 0.1
    ex.set_monitor_callback(lambda name, arr: seen.setdefault(name.decode(), arr.asnumpy().copy()),
                            monitor_all=True)
    ex.forward(is_train=True)
    np.testing.assert_allclose(np.tanh(seen["c1_output"]), seen["a1_output"], rtol=1e-6)


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_second_backward_replays_the_released_forward(grad_req):
    sym = convnet("tanh")
    ex, _, once = run(sym, grad_req)
    assert ex._replayable
    _, _, twice = run(sym, grad_req, backwards=2)
    for k in once:
        if grad_req == "write":
            np.testing.assert_array_equal(twice[k], once[k], err_msg=k)
        else:  # 0.5 + 2 g
            np.testing.assert_allclose(twice[k] - 0.5, 2 * (once[k] - 0.5), rtol=1e-5, atol=1e-6,
                                       err_msg=k)


def _held(ex):
    """Values an executor holds besides references to its own arrays."""
    mx.nd.waitall()
    own = {id(a._data) for a in ex.arg_arrays + ex.aux_arrays}
    return [v for v in ex._vals if v is not None and id(v) not in own]


def test_backward_releases_forward_values():
    ex, _, _ = run(convnet("tanh"))
    assert _held(ex) == []


def test_graphs_with_random_or_stateful_ops_keep_forward_values():
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        drop = mx.sym.Dropout(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), p=0.5)
        bn = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc2"), name="bn")
    for sym in (drop, bn):
        ex = sym.simple_bind(mx.cpu(), data=(4, 5))
        assert not ex._replayable
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4, 3)))
        assert _held(ex)


def test_backward_before_forward_is_an_error():
    ex = convnet("tanh").simple_bind(mx.cpu(), data=(4, 2, 9, 9))
    with pytest.raises(mx.base.MXNetError, match="backward called before forward"):
        ex.backward()
        mx.nd.waitall()
