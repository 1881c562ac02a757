"""Every optimizer with row_sparse gradients (lazy updates where MXNet 1.9.1 has them, its dense
fallback elsewhere), the sparse update operators called directly, and a KVStore with a
row_sparse weight, against MXNet 1.9.1 running the same scenarios
(tests/sparse/_sparse_opt_cases.py; golden tests/golden/sparse_opt/cases.json, written by
tools/make_golden_sparse_opt.py)."""
from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

from . import _sparse_opt_cases as cases

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "sparse_opt"
                     / "cases.json").read_text())
OPT = GOLDEN["optimizers"]
W0 = np.array(OPT["inputs"]["w0"], np.float32)
STEPS = [(np.array(d, np.float32), rows) for d, rows in OPT["inputs"]["steps"]]

CONFIGS = cases.OPTIMIZERS


def _rsp(data, rows):
    return cases.rsp(mx, data, rows)


def test_every_golden_config_is_run():
    assert set(CONFIGS) == set(OPT) - {"inputs"}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_optimizer_with_row_sparse_gradients(name):
    rec = OPT[name]
    if "error_type" in rec:
        with pytest.raises(getattr(builtins, rec["error_type"], None)
                           or getattr(mx.base, rec["error_type"]),
                           match=rec["error_message"].split("\n")[0][:40]):
            cases.run_updater(mx, name, W0, STEPS)
        return
    w, states = cases.run_updater(mx, name, W0, STEPS)
    np.testing.assert_allclose(w.asnumpy(), np.array(rec["weight"], np.float32), rtol=1e-5,
                               atol=1e-6, equal_nan=True)
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
        w, _ = cases.run_updater(mx, name, W0, STEPS)
        np.testing.assert_array_equal(w.asnumpy()[2], W0[2], err_msg=name)
    # the standard update decays it
    w, _ = cases.run_updater(mx, "sgd_mom_std", W0, STEPS)
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


@pytest.mark.parametrize("name", sorted(OPS))
def test_update_operators_with_row_sparse_gradients(name):
    rec = OPS[name]
    w = mx.nd.array(W0)
    s = cases.update_op_states(mx)
    g = _rsp(*STEPS[0])
    if "error_type" in rec:
        frag = rec["error_message"].split("\n")[0]
        frag = frag.split("Check failed: infer_stype_success: ")[-1][:45]
        with pytest.raises(mx.base.MXNetError, match=frag.replace("(", r"\(")):
            cases.run_update_op(mx, name, w, s, g)
        return
    cases.run_update_op(mx, name, w, s, g)
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

KV_CONFIGS = cases.KV_OPTIMIZERS


def test_every_kvstore_config_is_run():
    assert set(KV_CONFIGS) == set(KV)


@pytest.mark.parametrize("name", sorted(KV_CONFIGS))
def test_kvstore_row_sparse_weight_updates(name):
    """A KVStore holding a row_sparse weight (what a dist_sync store updates) with every
    optimizer: lazy kernels keep their rows, the others MXNet's dense fallback."""
    res = cases.run_kvstore(mx, name, W0, STEPS)
    assert res.indices.asnumpy().tolist() == KV[name]["indices"]
    np.testing.assert_allclose(res.asnumpy(), np.array(KV[name]["weight"], np.float32),
                               rtol=1e-5, atol=1e-5, equal_nan=True)  # (float32 order)


RSP_OPS = GOLDEN["update_ops_rsp"]


@pytest.mark.parametrize("name", sorted(RSP_OPS))
def test_update_operators_with_row_sparse_weights_and_states(name):
    """Row_sparse weights and states: lazy kernels update the gradient's rows of each (a state
    without stored rows is filled first, as MXNet does); standard updates every row."""
    make, call = cases.rsp_update_cases(mx, W0, _rsp(*STEPS[0]))[name]
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
