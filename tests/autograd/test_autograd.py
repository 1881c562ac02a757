"""mx.autograd: numeric gradients, grad vs backward, higher order, Function, contexts, threads,
the executor and the tape on the same graph, and the NDArray methods (attach_grad, detach...)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import neomx as mx
from neomx import autograd


def _numeric_vjp(fn, xs, direction, eps=1e-5):
    """<d, (f(x+eps*t) - f(x-eps*t)) / (2 eps)> for a random direction t per input, float64."""
    ts = [np.random.uniform(-1, 1, x.shape) for x in xs]

    def f(sign):
        args = [mx.nd.array(x + sign * eps * t, dtype="float64") for x, t in zip(xs, ts)]
        return (fn(*args).asnumpy() * direction).sum()
    return (f(1) - f(-1)) / (2 * eps), ts


COMPOSITES = {
    "poly": (lambda x, y: (x * x + 3 * y) / (y * y + 1), [(3, 4), (3, 4)]),
    "bcast": (lambda x, y: mx.nd.tanh(x * y) - x / (y * y + 2), [(3, 1), (1, 4)]),
    "mlp": (lambda x, w: mx.nd.sigmoid(mx.nd.FullyConnected(x, w, num_hidden=3, no_bias=True)),
            [(4, 5), (3, 5)]),
    "reduce": (lambda x, y: mx.nd.sum(mx.nd.exp(x) * y, axis=1) + x.max(axis=0).sum(),
               [(3, 4), (3, 4)]),
    "softmax": (lambda x, y: mx.nd.log_softmax(x * y, axis=1), [(2, 5), (2, 5)]),
    "index": (lambda x, y: x[1:3] * y[0] + x.T.reshape((4, 3))[1:].sum(), [(4, 3), (4, 3)]),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_numeric_gradient_random_direction(name, seed):
    fn, shapes = COMPOSITES[name]
    xs = [np.random.uniform(0.2, 1.0, s) for s in shapes]
    arrs = [mx.nd.array(x, dtype="float64") for x in xs]
    for a in arrs:
        a.attach_grad()
    with autograd.record():
        out = fn(*arrs)
    direction = np.random.uniform(-1, 1, out.shape)
    out.backward(mx.nd.array(direction, dtype="float64"))
    want, ts = _numeric_vjp(fn, xs, direction)
    got = sum((a.grad.asnumpy() * t).sum() for a, t in zip(arrs, ts))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_grad_equals_backward():
    x = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    w = mx.nd.array(np.random.uniform(-1, 1, (2, 4)))
    for a in (x, w):
        a.attach_grad()
    with autograd.record():
        y = mx.nd.tanh(mx.nd.FullyConnected(x, w, num_hidden=2, no_bias=True))
    gx, gw = autograd.grad(y, [x, w], retain_graph=True)
    assert not x.grad.asnumpy().any()  # grad() leaves the buffers alone
    y.backward()
    np.testing.assert_allclose(gx.asnumpy(), x.grad.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), w.grad.asnumpy(), rtol=1e-6)
    assert gx._ag is None  # not part of any graph without create_graph


def test_backward_of_several_heads_and_head_grads():
    x = mx.nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = x * x
        z = x + 1
    autograd.backward([y, z], head_grads=[mx.nd.array([1., 1.]), mx.nd.array([2., 2.])])
    assert x.grad.asnumpy().tolist() == [4., 6.]


def test_retain_graph_and_grad_req_add():
    x = mx.nd.array([1., 2.])
    x.attach_grad(grad_req="add")
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.asnumpy().tolist() == [4., 8.]
    x.attach_grad()  # a fresh (zero) buffer, write again
    assert x.grad.asnumpy().tolist() == [0., 0.]


def test_grad_req_write_overwrites_and_null_keeps():
    x = mx.nd.array([1., 2.])
    y0 = mx.nd.array([3., 4.])
    x.attach_grad()
    y0.attach_grad(grad_req="null")
    for _ in range(2):
        with autograd.record():
            out = x * y0
        out.backward()
    assert x.grad.asnumpy().tolist() == [3., 4.]
    assert not y0.grad.asnumpy().any()


def test_mark_variables_with_own_buffers():
    x = mx.nd.array([1., 2., 3.])
    g = mx.nd.zeros(3)
    autograd.mark_variables([x], [g], "write")
    with autograd.record():
        y = (x * 3).sum()
    y.backward()
    assert g.asnumpy().tolist() == [3., 3., 3.]
    assert x.grad is g


def test_detach_cuts_the_graph_and_shares_storage():
    x = mx.nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = x * x
        d = y.detach()
        z = d * x
    z.backward()
    assert x.grad.asnumpy().tolist() == [1., 4.]  # d counts as a constant
    assert d._data.data_ptr() == y._data.data_ptr()


def test_unmarked_array_has_no_grad():
    a = mx.nd.ones((2,))
    assert a.grad is None
    with autograd.record():
        b = a * 2
    assert b.grad is None


def test_inplace_outside_record_is_allowed():
    """MXNet: updating a variable outside a record section is fine (the SGD step)."""
    w = mx.nd.array([1., 2.])
    w.attach_grad()
    for _ in range(2):
        with autograd.record():
            loss = (w * w).sum()
        loss.backward()
        w -= 0.1 * w.grad
        w[:] = w * 1.0
    np.testing.assert_allclose(w.asnumpy(), [0.64, 1.28], rtol=1e-6)


def test_inplace_on_fresh_array_while_recording_is_recorded():
    x = mx.nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.zeros((2,))
        y += x * 3  # y was in no graph: allowed, and y joins the graph
        z = y * y
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [18., 36.])


# --- higher order -------------------------------------------------------------------------------
def test_third_derivative():
    x = mx.nd.array([0.5, 1.5])
    x.attach_grad()
    with autograd.record():
        y = x * x * x * x
        g1 = autograd.grad(y, [x], create_graph=True)[0]
        g2 = autograd.grad(g1, [x], create_graph=True)[0]
    g2.backward()
    xv = x.asnumpy()
    np.testing.assert_allclose(g1.asnumpy(), 4 * xv ** 3, rtol=1e-5)
    np.testing.assert_allclose(g2.asnumpy(), 12 * xv ** 2, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 24 * xv, rtol=1e-5)


def test_mixed_second_derivative():
    x = mx.nd.array([1., 2.])
    y = mx.nd.array([3., 4.])
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        f = x * x * y
        gx = autograd.grad(f, [x], create_graph=True)[0]  # 2xy
    gx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * y.asnumpy())
    np.testing.assert_allclose(y.grad.asnumpy(), 2 * x.asnumpy())


# --- Function -----------------------------------------------------------------------------------
class _Sigmoid(autograd.Function):
    def forward(self, x):
        y = 1 / (1 + mx.nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        y, = self.saved_tensors
        return dy * y * (1 - y)


class _MulAdd(autograd.Function):
    """Two inputs, two outputs."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b, a + b

    def backward(self, d_prod, d_sum):
        a, b = self.saved_tensors
        return d_prod * b + d_sum, d_prod * a + d_sum


def test_function_matches_builtin():
    x = mx.nd.array(np.random.uniform(-2, 2, (3, 4)))
    x.attach_grad()
    with autograd.record():
        y = _Sigmoid()(x) * 2
    y.backward()
    mine = x.grad.asnumpy().copy()
    with autograd.record():
        y2 = mx.nd.sigmoid(x) * 2
    y2.backward()
    np.testing.assert_allclose(mine, x.grad.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), y2.asnumpy(), rtol=1e-6)


def test_function_two_inputs_two_outputs():
    a = mx.nd.array([1., 2.])
    b = mx.nd.array([3., 5.])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        p, s = _MulAdd()(a, b)
        out = p * 2 + s
    out.backward()
    assert a.grad.asnumpy().tolist() == [7., 11.]
    assert b.grad.asnumpy().tolist() == [3., 5.]


def test_function_outside_record_just_runs():
    y = _Sigmoid()(mx.nd.zeros((2,)))
    assert y.asnumpy().tolist() == [0.5, 0.5]
    assert y._ag is None


# --- training mode follows record/pause -------------------------------------------------------
def test_dropout_follows_training_flag():
    x = mx.nd.ones((200,))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Dropout(x, p=0.5)
    vals = set(np.unique(y.asnumpy()).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), y.asnumpy())  # the mask, scaled
    with autograd.record(train_mode=False):
        y = mx.nd.Dropout(x, p=0.5)
    assert (y.asnumpy() == 1).all()
    with autograd.train_mode():
        y = mx.nd.Dropout(x, p=0.5)
    assert (y.asnumpy() != 1).any()


def test_batchnorm_uses_batch_statistics_in_training():
    x = mx.nd.array(np.random.uniform(-1, 1, (4, 3)))
    gamma, beta = mx.nd.ones(3), mx.nd.zeros(3)
    mean, var = mx.nd.zeros(3), mx.nd.ones(3)
    with autograd.record():
        y = mx.nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy().mean(axis=0), 0, atol=1e-5)
    assert mean.asnumpy().any()  # moving mean updated
    with autograd.predict_mode():
        y = mx.nd.BatchNorm(x, gamma, beta, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-3), rtol=1e-5)


# --- threads and contexts -----------------------------------------------------------------------
def test_flags_are_per_thread():
    seen = {}
    started, release = threading.Event(), threading.Event()

    def other():
        seen["start"] = (autograd.is_recording(), autograd.is_training())
        started.set()
        release.wait(5)
        seen["later"] = (autograd.is_recording(), autograd.is_training())

    with autograd.record():
        t = threading.Thread(target=other)
        t.start()
        started.wait(5)
        release.set()
        t.join()
        assert autograd.is_recording()
    assert seen == {"start": (False, False), "later": (False, False)}


def test_recording_in_a_worker_thread():
    res = {}

    def work():
        x = mx.nd.array([1., 2.])
        x.attach_grad()
        with autograd.record():
            y = x * x * 3
        y.backward()
        res["g"] = x.grad.asnumpy().tolist()
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert res["g"] == [6., 12.]
    assert not autograd.is_recording()


def test_multi_context_cpu0_cpu1():
    x0 = mx.nd.array([1., 2.], ctx=mx.cpu(0))
    w1 = mx.nd.array([3., 4.], ctx=mx.cpu(1))
    x0.attach_grad()
    w1.attach_grad()
    with autograd.record():
        x1 = x0.as_in_context(mx.cpu(1))
        y = (x1 * w1).sum()
        z = x0.copyto(mx.cpu(1)) * 2
        out = y + z.sum()
    assert out.context == mx.cpu(1)
    out.backward()
    assert x0.grad.context == mx.cpu(0) and w1.grad.context == mx.cpu(1)
    assert x0.grad.asnumpy().tolist() == [5., 6.]
    assert w1.grad.asnumpy().tolist() == [1., 2.]


@pytest.mark.parametrize("ctx_", [mx.cpu(0), mx.cpu(1)], ids=str)
def test_gradients_on_each_context(ctx_):
    x = mx.nd.array([[1., -2.], [3., 4.]], ctx=ctx_)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.relu(x) * x
    y.backward()
    assert x.grad.context == ctx_
    assert x.grad.asnumpy().tolist() == [[2., 0.], [6., 8.]]


# --- the executor and the tape: the same rules, the same gradients ----------------------------
def _mlp_symbol():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, name="fc1", num_hidden=6)
    h = mx.sym.Activation(h, act_type="tanh")
    h = mx.sym.FullyConnected(h, name="fc2", num_hidden=4)
    return mx.sym.SoftmaxOutput(h, name="out")


def test_executor_and_tape_agree():
    rs = np.random.RandomState(0)
    shapes = {"data": (5, 7), "fc1_weight": (6, 7), "fc1_bias": (6,), "fc2_weight": (4, 6),
              "fc2_bias": (4,), "out_label": (5,)}
    vals = {k: rs.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}
    vals["out_label"] = rs.randint(0, 4, (5,)).astype(np.float32)
    sym = _mlp_symbol()
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    grads = {k: mx.nd.zeros(s) for k, s in shapes.items() if k != "out_label"}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads,
                  grad_req={k: ("null" if k == "out_label" else "write") for k in shapes})
    ex.forward(is_train=True)
    ex.backward()

    arrs = {k: mx.nd.array(v) for k, v in vals.items()}
    for k in grads:
        arrs[k].attach_grad()
    with autograd.record():
        h = mx.nd.FullyConnected(arrs["data"], arrs["fc1_weight"], arrs["fc1_bias"], num_hidden=6)
        h = mx.nd.Activation(h, act_type="tanh")
        h = mx.nd.FullyConnected(h, arrs["fc2_weight"], arrs["fc2_bias"], num_hidden=4)
        out = mx.nd.SoftmaxOutput(h, arrs["out_label"])
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), ex.outputs[0].asnumpy(), rtol=1e-6)
    for k, g in grads.items():
        np.testing.assert_allclose(arrs[k].grad.asnumpy(), g.asnumpy(), rtol=1e-5, atol=1e-7,
                                   err_msg=k)


def test_get_symbol_binds_to_the_same_gradients():
    x = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    w = mx.nd.array(np.random.uniform(-1, 1, (2, 4)))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd.sigmoid(mx.nd.FullyConnected(x, w, num_hidden=2, no_bias=True)) * 3
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    gx, gw = mx.nd.zeros((3, 4)), mx.nd.zeros((2, 4))
    ex = sym.bind(mx.cpu(), args={"var0": x.copy(), "var1": w.copy()},
                  args_grad={"var0": gx, "var1": gw})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), y.asnumpy(), rtol=1e-6)
    ex.backward(mx.nd.ones((3, 2)))
    y.backward()
    np.testing.assert_allclose(gx.asnumpy(), x.grad.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), w.grad.asnumpy(), rtol=1e-6)


def test_graph_is_freed_with_its_arrays():
    import gc
    import weakref
    x = mx.nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = x * x
    node = weakref.ref(y._ag[0])
    del y
    gc.collect()
    assert node() is None


@pytest.mark.parametrize("kind", ["NaiveEngine", "ThreadedEngine"])
def test_tape_on_each_engine_with_work_in_flight(kind):
    """Recording and backward wait for asynchronous writes like any other operation."""
    from neomx import engine
    prev = engine.set_engine(getattr(engine, kind)())
    try:
        x = mx.nd.ones((3,))
        x.attach_grad()
        gate = threading.Event()
        t = x._data

        def fill():
            assert gate.wait(10)
            t.fill_(2.0)
        if kind == "NaiveEngine":  # (runs the fill at once)
            gate.set()
        engine.push(fill, writes=(x,), ctx=x.context, asynchronous=kind == "ThreadedEngine")
        timer = threading.Timer(0.05, gate.set)
        timer.start()
        for _ in range(2):  # the general path, then the cached plans
            with autograd.record():
                y = (x * x * 3).sum()
            y.backward()
            assert x.grad.asnumpy().tolist() == [12., 12., 12.]
        timer.join()
    finally:
        engine.set_engine(prev)


def test_rules_are_told_which_gradients_are_wanted(monkeypatch):
    # F.wanted lets a rule skip gradients nobody needs (FullyConnected's data gradient for an
    # input batch): the tape and the gradient pass both say which inputs need one
    from neomx.ops import registry
    fc = registry.get("FullyConnected")
    seen = []
    rule = fc.gradient

    def spy(F, p, ins, outs, ograds):
        seen.append(F.wanted)
        return rule(F, p, ins, outs, ograds)
    monkeypatch.setattr(fc, "gradient", spy)
    x = mx.nd.array(np.random.uniform(-1, 1, (4, 5)))
    w = mx.nd.array(np.random.uniform(-1, 1, (3, 5)))
    b = mx.nd.zeros((3,))
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=3)
    y.backward()
    assert seen == [(False, True, True)]
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((4, 3)).T @ x.asnumpy(), rtol=1e-5)
    sym = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc")
    ex = sym.simple_bind(mx.cpu(), x=(4, 5), grad_req={"fc_weight": "write", "fc_bias": "write"})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((4, 3)))
    assert seen[-1] == (False, True, True)
    assert "dot" in ex.debug_str() and ex.debug_str().count("= dot(") == 1  # no data gradient


@pytest.mark.parametrize("channels", [1, 3])  # (1: the single-channel kernel path)
def test_convolution_skips_the_data_gradient_nobody_wants(channels):
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (2, channels, 6, 6)))
    w = mx.nd.array(rng.uniform(-1, 1, (4, channels, 3, 3)))
    b = mx.nd.zeros((4,))
    grads = []
    for want_x in (True, False):
        for a in ([x, w, b] if want_x else [w, b]):
            a.attach_grad()
        with autograd.record():
            y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4)
        y.backward(mx.nd.ones(y.shape))
        grads.append((w.grad.asnumpy().copy(), b.grad.asnumpy().copy()))
        x._ag = None  # (detach x from the autograd bookkeeping for the second run)
    # (without the data gradient a small single-channel batch takes another kernel: the same
    # sums in another order)
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5)
    sym = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    ex = sym.simple_bind(mx.cpu(), x=x.shape, grad_req={"c_weight": "write", "c_bias": "write"})
    ex.arg_dict["x"][:] = x
    ex.arg_dict["c_weight"][:] = w
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(ex.outputs[0].shape))
    assert "need_data='False'" in ex.debug_str()
    np.testing.assert_allclose(ex.grad_dict["c_weight"].asnumpy(), grads[0][0], rtol=1e-5)
