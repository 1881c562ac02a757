"""Control flow: ``mx.nd.contrib.foreach/while_loop/cond`` (Python loops under autograd) and
``mx.sym.contrib.foreach/while_loop/cond`` (``_foreach``/``_while_loop``/``_cond`` nodes holding
subgraphs, neomx/ops/control_flow.py) against MXNet 1.9.1's values, gradients and symbol JSON
(tests/golden/control_flow, from tools/make_golden_control_flow.py), float64 numeric gradients of
the executor's reverse sweep, and nd/sym parity.
"""
from __future__ import annotations

import copy
import doctest
import json
import pickle
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "control_flow"
ARR = np.load(GOLDEN / "control_flow.npz")
CASES = json.loads((GOLDEN / "control_flow.json").read_text())["cases"]


# --- the bodies (the same as tools/make_golden_control_flow.py's; F is mx.nd or mx.sym) -------
def rnn_body(F, w, u):
    def body(x, states):
        h = states[0]
        h2 = F.tanh(F.dot(x, w) + F.dot(h, u))
        return [h2 * 2.0, F.sum(h2, axis=1)], [h2]
    return body


def while_parts(F, max_iterations):
    def cond(i, s):
        return i < 3

    def func(i, s):
        return [s * 2.0, F.sin(s)], [i + 1, s + F.sin(s)]
    return cond, func


def cond_parts(F, a, b):
    def then_func():
        return [a * b, F.exp(a)]

    def else_func():
        return [a - b, F.cos(b)]
    return then_func, else_func


NAMES = {"foreach": ["x", "h0", "w", "u"], "while_loop": ["i", "s"],
         "cond_then": ["p", "a", "b"], "cond_else": ["p", "a", "b"]}
STEPS = {"while_loop": 3}  # rows of the padded while_loop outputs that are defined


def build(F, cid, v):
    if cid == "foreach":
        outs, states = F.contrib.foreach(rnn_body(F, v["w"], v["u"]), v["x"], [v["h0"]])
        return list(outs) + list(states)
    if cid == "while_loop":
        c, f = while_parts(F, 5)
        outs, lv = F.contrib.while_loop(c, f, [v["i"], v["s"]], max_iterations=5)
        return list(outs) + list(lv)
    t, e = cond_parts(F, v["a"], v["b"])
    return list(F.contrib.cond(v["p"] > 0.5, t, e))


def inputs(cid, dtype=np.float32):
    return OrderedDict((n, ARR[f"{cid}/in/{n}"].astype(dtype)) for n in NAMES[cid])


def heads(cid, dtype=np.float32):
    return [ARR[f"{cid}/head{k}"].astype(dtype) for k in range(CASES[cid]["n_out"])]


def defined(cid, k, a):
    """The rows MXNet defines (padded while_loop step outputs: the iterations run)."""
    if cid in STEPS and k < 2:
        return a[:STEPS[cid]]
    return a


def make_symbol(cid):
    with mx.name.NameManager(), mx.AttrScope():
        return mx.sym.Group(build(mx.sym, cid, OrderedDict((n, mx.sym.var(n))
                                                           for n in NAMES[cid])))


def run_executor(sym, vals, hs):
    args = {n: mx.nd.array(a, dtype=a.dtype) for n, a in vals.items()}
    grads = {n: mx.nd.zeros(a.shape, dtype=a.dtype) for n, a in vals.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    ex.forward(is_train=True)
    outs = [o.asnumpy() for o in ex.outputs]
    ex.backward([mx.nd.array(h, dtype=h.dtype) for h in hs])
    return outs, {n: ex.grad_dict[n].asnumpy() for n in vals}


# --- golden values ---------------------------------------------------------------------------
@pytest.mark.parametrize("cid", list(CASES))
def test_nd_golden(cid):
    vals = OrderedDict((n, mx.nd.array(a)) for n, a in inputs(cid).items())
    for a in vals.values():
        a.attach_grad()
    with mx.autograd.record():
        outs = build(mx.nd, cid, vals)
    assert len(outs) == CASES[cid]["n_out"]
    mx.autograd.backward(outs, [mx.nd.array(h) for h in heads(cid)])
    for k, o in enumerate(outs):
        ref = ARR[f"{cid}/nd_out{k}"]
        assert o.shape == ref.shape
        np.testing.assert_allclose(defined(cid, k, o.asnumpy()), defined(cid, k, ref),
                                   rtol=1e-5, atol=1e-5)
    for n, a in vals.items():
        np.testing.assert_allclose(a.grad.asnumpy(), ARR[f"{cid}/nd_grad/{n}"], rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("cid", list(CASES))
def test_sym_golden(cid):
    sym = make_symbol(cid)
    assert sym.list_outputs() == CASES[cid]["outputs"]
    assert sym.list_arguments() == CASES[cid]["arguments"]
    outs, grads = run_executor(sym, inputs(cid), heads(cid))
    for k, o in enumerate(outs):
        ref = ARR[f"{cid}/sym_out{k}"]
        assert o.shape == ref.shape
        np.testing.assert_allclose(defined(cid, k, o), defined(cid, k, ref), rtol=1e-5, atol=1e-5)
    for n, g in grads.items():
        np.testing.assert_allclose(g, ARR[f"{cid}/sym_grad/{n}"], rtol=1e-5, atol=1e-5)


def test_json_matches_mxnet():
    """Byte-identical JSON (the subgraph counters run as in the generator's one process)."""
    mx.sym.contrib._subgraph_names.clear()
    for cid in CASES:
        assert make_symbol(cid).tojson() == CASES[cid]["json"], cid


@pytest.mark.parametrize("cid", list(CASES))
def test_json_load_runs(cid):
    sym = mx.sym.load_json(CASES[cid]["json"])
    assert sym.tojson() == CASES[cid]["json"]
    outs, grads = run_executor(sym, inputs(cid), heads(cid))
    for k, o in enumerate(outs):
        np.testing.assert_allclose(defined(cid, k, o), defined(cid, k, ARR[f"{cid}/sym_out{k}"]),
                                   rtol=1e-5, atol=1e-5)
    for n, g in grads.items():
        np.testing.assert_allclose(g, ARR[f"{cid}/sym_grad/{n}"], rtol=1e-5, atol=1e-5)


def test_copy_and_pickle_keep_subgraphs():
    sym = make_symbol("foreach")
    for other in (copy.deepcopy(sym), pickle.loads(pickle.dumps(sym))):
        assert other.tojson() == sym.tojson()


def test_foreach_infer_shape():
    sym = make_symbol("foreach")
    shapes = {n: a.shape for n, a in inputs("foreach").items()}
    _, out_shapes, _ = sym.infer_shape(**shapes)
    assert [list(s) for s in out_shapes] == CASES["foreach"]["shapes"]
    # unknown weights (dot cannot infer them): partial inference leaves the outputs unknown
    _, out_shapes, _ = sym.infer_shape_partial(x=(4, 2, 3), h0=(2, 5))
    assert out_shapes[0] in ((), None)


@pytest.mark.parametrize("cid", ["while_loop", "cond_then"])
def test_simple_bind(cid):
    """(MXNet 1.9.1 cannot infer these outputs' shapes and needs ``bind``; neomx infers them
    through the subgraphs, so simple_bind works too.)"""
    sym = make_symbol(cid)
    vals = inputs(cid)
    ex = sym.simple_bind(mx.cpu(), **{n: a.shape for n, a in vals.items()})
    for n, a in vals.items():
        ex.arg_dict[n][:] = a
    ex.forward()
    for k, o in enumerate(ex.outputs):
        np.testing.assert_allclose(defined(cid, k, o.asnumpy()),
                                   defined(cid, k, ARR[f"{cid}/sym_out{k}"]), rtol=1e-5, atol=1e-5)


# --- numeric gradients (float64, random direction) -------------------------------------------
@pytest.mark.parametrize("cid", list(CASES))
def test_sym_numeric_gradient(cid):
    sym = make_symbol(cid)
    rng = np.random.RandomState(0)
    vals = inputs(cid, np.float64)
    hs = heads(cid, np.float64)
    if cid in STEPS:  # the padding rows are undefined: no gradient flows from them
        for k in range(2):
            hs[k][STEPS[cid]:] = 0
    _, grads = run_executor(sym, vals, hs)

    def f(v):
        outs, _ = run_executor(sym, v, hs)
        return sum(float((defined(cid, k, o) * defined(cid, k, h)).sum())
                   for k, (o, h) in enumerate(zip(outs, hs)))

    eps = 1e-6
    for n in vals:
        if n in ("i", "p"):  # counters and predicates: piecewise constant
            continue
        t = rng.normal(size=vals[n].shape)
        plus, minus = dict(vals), dict(vals)
        plus[n], minus[n] = vals[n] + eps * t, vals[n] - eps * t
        num = (f(plus) - f(minus)) / (2 * eps)
        np.testing.assert_allclose((grads[n] * t).sum(), num, rtol=1e-6, atol=1e-8)


# --- parity and semantics --------------------------------------------------------------------
def test_nested_foreach_nd_sym_parity():
    """A while_loop inside a foreach body: nested subgraphs (``foreach0$while_loop_cond0``)."""
    def body(F):
        def step(x, states):
            outs, lv = F.contrib.while_loop(lambda j, s: j < 2,
                                            lambda j, s: ([s * x], [j + 1, s * x]),
                                            [states[0], states[1]], max_iterations=2)
            return [F.sum(outs[0], axis=0)], [lv[0] * 0, lv[1]]
        return step

    rng = np.random.RandomState(1)
    x, s = rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2,))
    j = np.zeros((1,))
    nd_in = [mx.nd.array(a, dtype="float64") for a in (x, j, s)]
    for a in nd_in:
        a.attach_grad()
    with mx.autograd.record():
        o, st = mx.nd.contrib.foreach(body(mx.nd), nd_in[0], [nd_in[1], nd_in[2]])
        loss = (o[0] * 3).sum() + st[1].sum()
    loss.backward()
    with mx.name.NameManager():
        sx, sj, ss = (mx.sym.var(n) for n in ("x", "j", "s"))
        so, sst = mx.sym.contrib.foreach(body(mx.sym), sx, [sj, ss])
        sym = mx.sym.Group([so[0], sst[1]])
    assert "$while_loop_cond" in sym.tojson()
    outs, grads = run_executor(sym, OrderedDict([("x", x), ("j", j), ("s", s)]),
                               [np.full((3, 2), 3.0), np.ones((2,))])
    np.testing.assert_allclose(outs[0], o[0].asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(outs[1], st[1].asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(grads["x"], nd_in[0].grad.asnumpy(), rtol=1e-10)
    np.testing.assert_allclose(grads["s"], nd_in[2].grad.asnumpy(), rtol=1e-10)
    again = mx.sym.load_json(sym.tojson())
    outs2, _ = run_executor(again, OrderedDict([("x", x), ("j", j), ("s", s)]),
                            [np.full((3, 2), 3.0), np.ones((2,))])
    np.testing.assert_allclose(outs2[0], outs[0])


def test_hybridized_block_uses_subgraph_nodes():
    """A Gluon HybridBlock calling F.contrib.foreach differentiates the same hybridized."""
    class Cell(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, h):
            def step(xt, states):
                h2 = F.tanh(xt + states[0])
                return h2, [h2]
            out, states = F.contrib.foreach(step, x, [h])
            return F.broadcast_add(out, states[0].expand_dims(0))

    rng = np.random.RandomState(2)
    x, h = mx.nd.array(rng.uniform(-1, 1, (3, 2, 4))), mx.nd.array(rng.uniform(-1, 1, (2, 4)))
    res = []
    for hybrid in (False, True):
        net = Cell()
        if hybrid:
            net.hybridize()
        xs, hs = x.copy(), h.copy()
        xs.attach_grad()
        hs.attach_grad()
        with mx.autograd.record():
            y = net(xs, hs)
        y.backward(mx.nd.ones_like(y) * 0.5)
        res.append((y.asnumpy(), xs.grad.asnumpy(), hs.grad.asnumpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_while_loop_zero_iterations_and_errors():
    i = mx.nd.array([5.0])
    outs, lv = mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i * 2], [i + 1]), [i],
                                        max_iterations=4)
    assert outs == [] and lv[0].asscalar() == 5.0
    with pytest.raises(ValueError, match="max_iterations should be specified"):
        mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i], [i]), [i])
    with pytest.raises(ValueError, match="loop_vars should contain at least one element"):
        mx.nd.contrib.while_loop(lambda: True, lambda: ([], []), [], max_iterations=2)
    # symbolic: no iteration gives the loop variables and zero-padded step outputs
    sym_i = mx.sym.var("i")
    so, sl = mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([i * 2], [i + 1]), [sym_i],
                                       max_iterations=4)
    ex = mx.sym.Group([so[0], sl[0]]).bind(mx.cpu(), {"i": i})
    ex.forward()
    assert ex.outputs[0].shape == (4, 1) and ex.outputs[1].asscalar() == 5.0


def test_cond_with_python_predicate_and_scalar_check():
    assert mx.nd.contrib.cond(True, lambda: 1, lambda: 2) == 1
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: 1, lambda: 2) == 2
    p = mx.sym.var("p")
    out = mx.sym.contrib.cond(p, lambda: p + 1, lambda: p - 1)
    ex = out.bind(mx.cpu(), {"p": mx.nd.array([1, 2])})
    with pytest.raises(mx.base.MXNetError, match="scalar"):
        ex.forward()
        ex.outputs[0].asnumpy()


@pytest.mark.parametrize("fn", ["foreach", "while_loop", "cond"])
def test_nd_docstring_examples(fn):
    f = getattr(mx.nd.contrib, fn)
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(doctest.DocTestParser().get_doctest(f.__doc__, {}, fn, None, 0))
    assert runner.summarize(verbose=False).failed == 0


def test_foreach_infers_body_weights_and_backward_twice():
    """Shapes flow into the body's free variables (FullyConnected's weight), and a second
    backward after one forward gives the same gradients."""
    x, h, w = mx.sym.var("x"), mx.sym.var("h"), mx.sym.var("w")
    o, s = mx.sym.contrib.foreach(
        lambda xt, st: (mx.sym.FullyConnected(xt, w, num_hidden=4, no_bias=True) + st[0],
                        [st[0] * 2]), x, [h])
    g = mx.sym.Group([o, s[0]])
    args, outs, _ = g.infer_shape(x=(3, 2, 5), h=(2, 4))
    assert args == [(3, 2, 5), (2, 4), (4, 5)] and outs == [(3, 2, 4), (2, 4)]
    ex = g.simple_bind(mx.cpu(), x=(3, 2, 5), h=(2, 4))
    ex.arg_dict["x"][:] = mx.nd.ones((3, 2, 5))
    ex.forward(is_train=True)
    heads = [mx.nd.ones((3, 2, 4)), mx.nd.ones((2, 4))]
    ex.backward(heads)
    first = ex.grad_dict["w"].asnumpy().copy()
    ex.backward(heads)
    np.testing.assert_array_equal(ex.grad_dict["w"].asnumpy(), first)
    np.testing.assert_allclose(first, np.full((4, 5), 6.0))  # 3 steps x 2 rows of ones
    np.testing.assert_allclose(ex.grad_dict["h"].asnumpy(), np.full((2, 4), 1 + 2 + 4 + 8.0))
