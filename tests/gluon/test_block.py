"""Gluon Block behaviour that needs no MXNet records: deferred initialization, hybridized ==
imperative under changing shapes, grad_req, several contexts, retained graphs, hooks, summary,
save/load, sharing, casting, CachedOp."""
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon import nn


def mlp(units=(8, 3), **kw):
    net = nn.HybridSequential(**kw)
    with net.name_scope():
        for i, u in enumerate(units):
            net.add(nn.Dense(u, activation="tanh" if i < len(units) - 1 else None))
    return net


def grads_of(net):
    return {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}


def fwd_bwd(net, x):
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    return y.asnumpy(), x.grad.asnumpy(), grads_of(net)


def test_deferred_init_fills_shapes_on_first_forward():
    net = mlp()
    net.initialize()
    w = net[0].weight
    assert w.shape == (8, 0)
    with pytest.raises(gluon.DeferredInitializationError):
        w.data()
    net(mx.nd.ones((2, 5)))
    assert w.shape == (8, 5) and w.data().shape == (8, 5)
    assert w.grad().shape == (8, 5)


@pytest.mark.parametrize("static", [False, True])
def test_hybridized_equals_imperative_across_shapes(static):
    net = mlp((6, 4, 2))
    net.initialize(mx.init.Xavier())
    for batch in (3, 5, 3):
        x = mx.nd.random.uniform(shape=(batch, 7))
        net.hybridize(False)
        want = fwd_bwd(net, x)
        net.hybridize(static_alloc=static, static_shape=static)
        got = fwd_bwd(net, x)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
        for k in want[2]:
            np.testing.assert_allclose(got[2][k], want[2][k], rtol=1e-5, atol=1e-6)


def test_cached_op_compiles_once_per_signature():
    net = mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((2, 5))
    net(x)
    op = net._cached_op
    net(x)
    net(mx.nd.ones((2, 5)))
    assert len(op._programs) == 1
    net(mx.nd.ones((4, 5)))
    assert len(op._programs) == 2
    with autograd.record():
        net(x)
    assert len(op._programs) == 3  # (recording compiles the program with its backward)


@pytest.mark.parametrize("hybrid", [False, True])
def test_grad_req_add_accumulates_and_zero_grad(hybrid):
    net = mlp()
    net.initialize()
    if hybrid:
        net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 5))
    net(x)
    _, _, once = fwd_bwd(net, x)
    net.collect_params().setattr("grad_req", "add")
    net.zero_grad()
    fwd_bwd(net, x)
    _, _, twice = fwd_bwd(net, x)
    for k in once:
        np.testing.assert_allclose(twice[k], 2 * once[k], rtol=1e-5, atol=1e-6)
    net.zero_grad()
    assert all(not g.any() for g in grads_of(net).values())


@pytest.mark.parametrize("hybrid", [False, True])
def test_data_parallel_contexts(hybrid):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net = mlp()
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    if hybrid:
        net.hybridize()
    x = mx.nd.random.uniform(shape=(4, 5))
    parts = gluon.utils.split_and_load(x, ctxs)
    assert [p.context for p in parts] == ctxs
    with autograd.record():
        losses = [(net(p) ** 2).sum() for p in parts]
    autograd.backward(losses)
    w = net[0].weight
    assert [d.context for d in w.list_data()] == ctxs
    total = sum(g.asnumpy() for g in w.list_grad())
    ref = mlp(prefix=net.prefix)
    ref.initialize()
    ref(x)
    for name, p in ref.collect_params().items():
        p.set_data(net.collect_params()[name].data(mx.cpu(0)))
    _, _, g = fwd_bwd(ref, x)
    np.testing.assert_allclose(total, g[w.name], rtol=1e-5, atol=1e-6)


def test_hybridized_backward_retain_graph():
    net = mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 5))
    net(x)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward(retain_graph=True)
    first = grads_of(net)
    loss.backward()
    for k, g in grads_of(net).items():
        np.testing.assert_array_equal(g, first[k])
    with pytest.raises(mx.base.MXNetError):
        loss.backward()


def test_hybridized_input_gradient_only_when_wanted():
    net = mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 5))
    with autograd.record():
        y = net(x)
    y.backward(mx.nd.ones_like(y))
    assert x.grad is None
    assert net[0].weight.grad().abs().sum().asscalar() > 0


def test_inference_outside_record_keeps_no_graph():
    net = mlp()
    net.initialize()
    net.hybridize()
    y = net(mx.nd.ones((2, 5)))
    with pytest.raises(mx.base.MXNetError):
        y.backward()


def test_hooks_and_summary(capsys):
    net = mlp()
    net.initialize()
    seen = []
    h1 = net.register_forward_pre_hook(lambda b, a: seen.append(("pre", b.name)))
    h2 = net[0].register_forward_hook(lambda b, a, o: seen.append(("post", b.name, o.shape)))
    net(mx.nd.ones((2, 5)))
    assert seen == [("pre", net.name), ("post", net[0].name, (2, 8))]
    h1.detach()
    h2.detach()
    seen.clear()
    net(mx.nd.ones((2, 5)))
    assert seen == []
    net.summary(mx.nd.ones((2, 5)))
    out = capsys.readouterr().out
    # (as MXNet 1.9.1 prints it: hooks fire as blocks finish, the activation inside Dense first)
    rows = [line.split() for line in out.splitlines() if line.startswith(" ")]
    assert [r[0] for r in rows[1:5]] == ["Input", "Activation-1", "Dense-2", "Dense-3"]
    assert rows[3][1:] == ["(2,", "8)", "48"]
    assert "Total params: 75" in out  # 8*5+8 + 3*8+3
    net.hybridize()
    with pytest.raises(AssertionError):
        net.summary(mx.nd.ones((2, 5)))


def test_block_save_load_structure(tmp_path):
    net = mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 5))
    y = net(x).asnumpy()
    net.save(str(tmp_path / "m"))
    other = mlp()
    other.load(str(tmp_path / "m"))
    np.testing.assert_allclose(other(x).asnumpy(), y, rtol=1e-6)


def test_share_parameters_and_params_argument():
    a = mlp()
    b = mlp(params=a.collect_params())
    a.initialize()
    x = mx.nd.ones((2, 5))
    np.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())
    c = mlp()
    c.share_parameters(a._collect_params_with_prefix())
    np.testing.assert_array_equal(c(x).asnumpy(), a(x).asnumpy())


def test_cast_and_reset_ctx():
    net = mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((2, 5))
    y32 = net(x).asnumpy()
    net.cast("float64")
    y64 = net(x.astype("float64"))
    assert y64.dtype == np.float64
    np.testing.assert_allclose(y64.asnumpy(), y32, rtol=1e-5, atol=1e-6)
    net.reset_ctx(mx.cpu(1))
    assert net[0].weight.data().context == mx.cpu(1)


def test_constant_and_parameter_var():
    class WithConst(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.c = self.params.get_constant("c", [[1.0, 2.0]])

        def hybrid_forward(self, F, x, c):
            return F.broadcast_add(x, c)

    blk = WithConst()
    blk.initialize()
    assert blk.c.grad_req == "null"
    for hybrid in (False, True):
        blk.hybridize(hybrid)
        np.testing.assert_array_equal(blk(mx.nd.zeros((2, 2))).asnumpy(), [[1, 2], [1, 2]])
    v = gluon.Parameter("w", shape=(2, 3), lr_mult=2.0).var()
    assert v.attr("__shape__") == "(2, 3)" and v.attr("__lr_mult__") == "2.0"


def test_parameter_dict_save_load_roundtrip(tmp_path):
    net = mlp()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    params = net.collect_params()
    params.save(str(tmp_path / "p"), strip_prefix=net.prefix)
    other = mlp(prefix=net.prefix)
    other.collect_params().load(str(tmp_path / "p"), restore_prefix=net.prefix)
    for k, p in other.collect_params().items():
        np.testing.assert_array_equal(p.data().asnumpy(), params[k].data().asnumpy())


def test_register_op_hook_sees_every_node():
    net = mlp()
    net.initialize()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)))
    net(mx.nd.ones((2, 5)))
    assert (f"{net.prefix}dense0_fwd_output", "FullyConnected", (2, 8)) in seen


def test_inplace_write_to_recorded_output_raises():
    net = mlp()
    net.initialize()
    net.hybridize()
    with autograd.record():
        y = net(mx.nd.ones((2, 5)))
        with pytest.raises(mx.base.MXNetError):
            y += 1


def test_cached_op_direct():
    data = mx.sym.var("data")
    w = mx.sym.var("w")
    out = mx.sym.FullyConnected(data, w, no_bias=True, num_hidden=3) * 2
    op = mx.nd.CachedOp(out)
    x = mx.nd.random.uniform(shape=(2, 4))
    wv = mx.nd.random.uniform(shape=(3, 4))
    np.testing.assert_allclose(op(x, wv).asnumpy(), 2 * np.dot(x.asnumpy(), wv.asnumpy().T),
                               rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="expected 2 inputs"):
        op(x)
    with pytest.raises(mx.base.MXNetError, match="unknown flag"):
        mx.nd.CachedOp(out, [("nope", 1)])


def test_identity_graph_output_is_a_new_array():
    class Ident(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x

    blk = Ident()
    blk.hybridize()
    x = mx.nd.ones((2,))
    y = blk(x)
    y[:] = 5
    assert x.asnumpy().tolist() == [1, 1]


def test_unregistered_container_warns():
    class Bad(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(2)]

        def forward(self, x):
            return self.layers[0](x)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Bad().collect_params()
    assert any("unregistered container" in str(i.message) for i in w)


def test_nested_outputs_and_none_inputs_hybridized():
    class Two(gluon.HybridBlock):
        def hybrid_forward(self, F, x, y=None):
            return [x + 1, (x * 2, x - 1)] if y is None else x + y

    blk = Two()
    blk.hybridize()
    a, (b, c) = blk(mx.nd.ones((2,)))
    assert a.asnumpy().tolist() == [2, 2] and b.asnumpy().tolist() == [2, 2]
    assert c.asnumpy().tolist() == [0, 0]


def test_symbol_input_and_infer():
    net = mlp()
    out = net(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == ["data"] + [f"{net.prefix}dense{i}_{w}" for i in (0, 1)
                                               for w in ("weight", "bias")]
    net.infer_shape(mx.nd.ones((2, 5)))
    assert net[0].weight.shape == (8, 5) and net[1].weight.shape == (3, 8)
    net.infer_type(mx.nd.ones((2, 5)))
    assert net[0].weight.dtype == np.float32
