"""Every optimizer with row_sparse gradients (lazy updates where MXNet 1.9.1 has them, its dense
fallback elsewhere), the sparse update operators called directly, and a KVStore with a
row_sparse weight, against MXNet 1.9.1 (tests/golden/sparse_opt/cases.json, written by
tools/make_golden_sparse_opt.py)."""
from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "sparse_opt"
                     / "cases.json").read_text())
OPT = GOLDEN["optimizers"]
W0 = np.array(OPT["inputs"]["w0"], np.float32)
STEPS = [(np.array(d, np.float32), rows) for d, rows in OPT["inputs"]["steps"]]

# (the configurations of tools/make_golden_sparse_opt.py)
CONFIGS = {
    "sgd_mom_lazy": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "sgd_mom_std": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "sgd_mom_clip": ("sgd", dict(learning_rate=0.1, momentum=0.5, rescale_grad=2.0,
                                 clip_gradient=0.4)),
    "nag": ("nag", dict(learning_rate=0.1, wd=0.01)),
    "nag_mom": ("nag", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "signum": ("signum", dict(learning_rate=0.1, wd=0.01)),
    "signsgd": ("signum", dict(learning_rate=0.1, momentum=0.0, wd=0.01)),
    "rmsprop": ("rmsprop", dict(learning_rate=0.01, wd=0.01)),
    "rmsprop_centered": ("rmsprop", dict(learning_rate=0.01, centered=True, clip_weights=0.5)),
    "adadelta": ("adadelta", dict(wd=0.01)),
    "ftml": ("ftml", dict(learning_rate=0.05, wd=0.01)),
    "dcasgd": ("dcasgd", dict(learning_rate=0.1, wd=0.01)),
    "adamax": ("adamax", dict(wd=0.01)),
    "nadam": ("nadam", dict(wd=0.01)),
    "lars": ("lars", dict(learning_rate=0.1, wd=0.01)),
    "lars_mom": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "lars_mom_std": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "lbsgd": ("lbsgd", dict(learning_rate=0.1, momentum=0.9)),
    "lamb": ("lamb", dict(learning_rate=0.01, wd=0.01)),
    "adagrad_eps": ("adagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                    clip_gradient=0.7)),
    "groupadagrad": ("groupadagrad", dict(learning_rate=0.1)),
    "groupadagrad_eps": ("groupadagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                              clip_gradient=0.7)),
    "groupadagrad_wd": ("groupadagrad", dict(learning_rate=0.1, wd=0.01)),
    "test": ("test", dict(rescale_grad=0.5)),
}


def _rsp(data, rows):
    return mx.nd.sparse.row_sparse_array((data, rows), shape=(5, 3))


def _arrays(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _arrays(s)]
    return [state]


def test_every_golden_config_is_run():
    assert set(CONFIGS) == set(OPT) - {"inputs"}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_optimizer_with_row_sparse_gradients(name):
    opt_name, kw = CONFIGS[name]
    rec = OPT[name]
    upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
    w = mx.nd.array(W0)
    if "error_type" in rec:
        with pytest.raises(getattr(builtins, rec["error_type"], None)
                           or getattr(mx.base, rec["error_type"]),
                           match=rec["error_message"].split("\n")[0][:40]):
            for data, rows in STEPS:
                upd(0, _rsp(data, rows), w)
            w.wait_to_read()
        return
    for data, rows in STEPS:
        upd(0, _rsp(data, rows), w)
    np.testing.assert_allclose(w.asnumpy(), np.array(rec["weight"], np.float32), rtol=1e-5,
                               atol=1e-6, equal_nan=True)
    states = _arrays(upd.states[0])
    assert len(states) == len(rec["states"])
    for s, (stype, value) in zip(states, rec["states"]):
        assert s.stype == stype
        np.testing.assert_allclose(s.asnumpy(), np.array(value, np.float32), rtol=1e-5,
                                   atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(n for n in CONFIGS if "error_type" not in OPT[n]))
def test_direct_update_calls_with_row_sparse_gradients(name):
    """``opt.update(index, weight, row_sparse grad, state)`` without an Updater: the same
    numbers (lazy kernels, or MXNet's dense fallback), never a raw torch error."""
    opt_name, kw = CONFIGS[name]
    opt = mx.optimizer.create(opt_name, **kw)
    w = mx.nd.array(W0)
    state = opt.create_state_multi_precision(0, w)
    for data, rows in STEPS:
        opt.update_multi_precision(0, w, _rsp(data, rows), state)
    np.testing.assert_allclose(w.asnumpy(), np.array(OPT[name]["weight"], np.float32),
                               rtol=1e-5, atol=1e-6, equal_nan=True)


def test_lazy_updates_leave_rows_without_gradient_untouched():
    """Row 2 never has a gradient: lazy rules (weight decay included) leave it as it was."""
    for name in ("sgd_mom_lazy", "nag", "lars_mom", "groupadagrad", "adagrad_eps"):
        opt_name, kw = CONFIGS[name]
        upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
        w = mx.nd.array(W0)
        for data, rows in STEPS:
            upd(0, _rsp(data, rows), w)
        np.testing.assert_array_equal(w.asnumpy()[2], W0[2], err_msg=name)
    # the standard update decays it
    opt_name, kw = CONFIGS["sgd_mom_std"]
    upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
    w = mx.nd.array(W0)
    for data, rows in STEPS:
        upd(0, _rsp(data, rows), w)
    assert not np.allclose(w.asnumpy()[2], W0[2])


def test_sgld_with_row_sparse_gradients():
    """SGLD (random noise on every row) follows mx.random.seed and moves every row."""
    def run():
        mx.random.seed(7)
        upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=0.01))
        w = mx.nd.array(W0)
        for data, rows in STEPS:
            upd(0, _rsp(data, rows), w)
        return w.asnumpy()
    a, b = run(), run()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a[2], W0[2])


OPS = GOLDEN["update_ops"]


def _call_op(name, w, s, g):
    calls = {
        "sparse.adagrad_update": lambda: mx.nd.sparse.adagrad_update(
            w, g, s[0], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
        "sparse.adagrad_update_wd": lambda: mx.nd.sparse.adagrad_update(
            w, g, s[0], out=w, lr=0.1, wd=0.1),
        "contrib.group_adagrad_update": lambda: mx.nd.contrib.group_adagrad_update(
            w, g, s[1], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
        "contrib.group_adagrad_update_dense": lambda: mx.nd.contrib.group_adagrad_update(
            w, g.tostype("default"), s[1], out=w, lr=0.1),
        "sgd_update_lazy": lambda: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1),
        "sgd_update_std": lambda: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1,
                                                   lazy_update=False),
        "sgd_mom_update_lazy": lambda: mx.nd.sparse.sgd_mom_update(
            w, g, s[0], out=w, lr=0.1, wd=0.1, momentum=0.9),
        "adam_update_std": lambda: mx.nd.adam_update(
            w, g, s[0], s[2], out=w, lr=0.1, wd=0.1, lazy_update=False),
    }
    calls[name]()
    w.wait_to_read()


@pytest.mark.parametrize("name", sorted(OPS))
def test_update_operators_with_row_sparse_gradients(name):
    rec = OPS[name]
    w = mx.nd.array(W0)
    s = [mx.nd.ones((5, 3)) * 0.5, mx.nd.ones((5, 1)) * 0.25, mx.nd.ones((5, 3)) * 0.1]
    g = _rsp(*STEPS[0])
    if "error_type" in rec:
        frag = rec["error_message"].split("\n")[0]
        frag = frag.split("Check failed: infer_stype_success: ")[-1][:45]
        with pytest.raises(mx.base.MXNetError, match=frag.replace("(", r"\(")):
            _call_op(name, w, s, g)
        return
    _call_op(name, w, s, g)
    np.testing.assert_allclose(w.asnumpy(), np.array(rec["weight"], np.float32), rtol=1e-5,
                               atol=1e-6)
    for a, v in zip(s, rec["states"]):
        np.testing.assert_allclose(a.asnumpy(), np.array(v, np.float32), rtol=1e-5, atol=1e-6)


def test_group_adagrad_update_symbol():
    """The operator also builds and runs as a symbol (history is a mutated state)."""
    w, g, h = mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("h")
    s = mx.sym.contrib.group_adagrad_update(w, g, h, lr=0.1, epsilon=0.01, rescale_grad=2.0,
                                            clip_gradient=0.7)
    assert s.list_arguments() == ["w", "g"]
    assert s.list_auxiliary_states() == ["h"]
    _, out_shapes, aux_shapes = s.infer_shape(w=(5, 3), g=(5, 3))
    assert out_shapes == [(5, 3)] and aux_shapes == [(5, 1)]


KV = GOLDEN["kvstore_rsp_weight"]


KV_CONFIGS = {
    "sgd_mom": ("sgd", dict(learning_rate=0.1, momentum=0.9)),
    "adam": ("adam", dict(learning_rate=0.1)),
    "groupadagrad": ("groupadagrad", dict(learning_rate=0.1)),
    "sgd_std": ("sgd", dict(learning_rate=0.1, lazy_update=False, momentum=0.9, wd=0.1)),
    "nag_mom": ("nag", dict(learning_rate=0.1, momentum=0.9)),
    "nag": ("nag", dict(learning_rate=0.1)),
    "signum": ("signum", dict(learning_rate=0.1)),
    "rmsprop": ("rmsprop", dict(learning_rate=0.1)),
    "adagrad": ("adagrad", dict(learning_rate=0.1)),
    "ftrl": ("ftrl", dict(learning_rate=0.1)),
    "adam_std": ("adam", dict(learning_rate=0.1, lazy_update=False)),
    "lars_mom": ("lars", dict(learning_rate=0.1, momentum=0.9)),
    "ftml": ("ftml", dict(learning_rate=0.1)),
    "dcasgd": ("dcasgd", dict(learning_rate=0.1)),
    "adadelta": ("adadelta", dict(learning_rate=0.1)),
    "nadam": ("nadam", dict(learning_rate=0.1)),
    "lamb": ("lamb", dict(learning_rate=0.1)),
    "lbsgd": ("lbsgd", dict(learning_rate=0.1)),
}


def test_every_kvstore_config_is_run():
    assert set(KV_CONFIGS) == set(KV)


@pytest.mark.parametrize("name", sorted(KV_CONFIGS))
def test_kvstore_row_sparse_weight_updates(name):
    """A KVStore holding a row_sparse weight (what a dist_sync store updates) with every
    optimizer: lazy kernels keep their rows, the others MXNet's dense fallback."""
    opt_name, kw = KV_CONFIGS[name]
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(opt_name, **kw))
    kv.init("w", mx.nd.array(W0).tostype("row_sparse"))
    for data, rows in STEPS:
        kv.push("w", _rsp(data, rows))
    res = mx.nd.sparse.zeros("row_sparse", (5, 3))
    kv.row_sparse_pull("w", out=res, row_ids=mx.nd.arange(5))
    assert res.indices.asnumpy().tolist() == KV[name]["indices"]
    np.testing.assert_allclose(res.asnumpy(), np.array(KV[name]["weight"], np.float32),
                               rtol=1e-5, atol=1e-5, equal_nan=True)  # (float32 order)


RSP_OPS = GOLDEN["update_ops_rsp"]


def _rsp_case(name):
    w0 = W0
    g = _rsp(*STEPS[0])
    rsp = lambda a: a.tostype("row_sparse")  # noqa: E731
    cases = {
        "ftrl_dense": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1,
                                mx.nd.ones((5, 3)) * 0.2],
                       lambda a: mx.nd.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                   wd=0.1)),
        "ftrl_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1),
                              rsp(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_mom_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1)],
                        lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1,
                                                              wd=0.1, momentum=0.9)),
        "sgd_mom_rsp_empty_state": (
            lambda: [rsp(mx.nd.array(w0)), mx.nd.sparse.zeros("row_sparse", (5, 3))],
            lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                  momentum=0.9)),
        "adam_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1),
                              rsp(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.adam_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_rsp_w": (lambda: [rsp(mx.nd.array(w0))],
                      lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1)),
        "sgd_rsp_w_std": (lambda: [rsp(mx.nd.array(w0))],
                          lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1,
                                                            lazy_update=False)),
        "sgd_mom_std": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1],
                        lambda a: mx.nd.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                       momentum=0.9, lazy_update=False)),
        "group_adagrad_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 1)) * 0.1)],
                              lambda a: mx.nd.contrib.group_adagrad_update(
                                  a[0], g, a[1], out=a[0], lr=0.1)),
    }
    return cases[name]


@pytest.mark.parametrize("name", sorted(RSP_OPS))
def test_update_operators_with_row_sparse_weights_and_states(name):
    """Row_sparse weights and states: lazy kernels update the gradient's rows of each (a state
    without stored rows is filled first, as MXNet does); standard updates every row."""
    make, call = _rsp_case(name)
    arrs = make()
    call(arrs)
    for a, (stype, value) in zip(arrs, RSP_OPS[name]):
        assert a.stype == stype
        np.testing.assert_allclose(a.asnumpy(), np.array(value, np.float32), rtol=1e-5,
                                   atol=1e-6)


def test_update_operator_outputs_other_than_the_weight():
    """Only out=weight updates the weight in place; another out (or none) leaves it as it was."""
    g = _rsp(*STEPS[0])
    expect = np.array(OPS["sgd_update_lazy"]["weight"], np.float32)
    w = mx.nd.array(W0)
    other = mx.nd.zeros((5, 3))
    mx.nd.sgd_update(w, g, out=other, lr=0.1, wd=0.1)
    np.testing.assert_allclose(other.asnumpy(), expect, rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), W0)
    res = mx.nd.sgd_update(w, g, lr=0.1, wd=0.1)
    np.testing.assert_allclose(res.asnumpy(), expect, rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), W0)
    mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1)
    np.testing.assert_allclose(w.asnumpy(), expect, rtol=1e-6)


@pytest.mark.parametrize("name, kwargs", [("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {}),
                                          ("sgd", {"lazy_update": False})])
def test_row_sparse_weight_with_a_dense_gradient_falls_back_to_the_dense_rule(name, kwargs):
    """MXNet 1.9.1 (storage fallback): a row_sparse weight updated with a dense gradient is the
    dense rule over every row, and every row is stored afterwards (neomx raised)."""
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    w = mx.nd.sparse.row_sparse_array((rows, [0, 2, 4]), shape=(5, 2))
    dense_w = w.tostype("default")
    g = mx.nd.array(np.linspace(-1, 1, 10, dtype=np.float32).reshape(5, 2))
    for weight in (w, dense_w):
        opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
        state = opt.create_state(0, weight)
        for _ in range(2):
            opt.update(0, weight, g, state)
    assert w.stype == "row_sparse"
    assert w.indices.asnumpy().tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(w.asnumpy(), dense_w.asnumpy())
