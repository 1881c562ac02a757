"""Optimizers and the Updater against MXNet 1.9.1: multi-step golden runs (wd, clipping,
rescaling, momentum, schedules, multi-precision, aggregated updates), multipliers, update
counting, state pickling and errors."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.optimizer import Optimizer, get_updater

from ._golden import arrays, load_json, raises_like

GOLD = load_json("optimizers.json")
CASES = GOLD["cases"]
MISC = GOLD["misc"]


def _tol(dtype):
    return dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=2e-3, atol=2e-3)


def _make(rec):
    kw = dict(rec["kwargs"])
    if rec["scheduler"] is not None:
        cls, skw = rec["scheduler"]
        kw["lr_scheduler"] = getattr(mx.lr_scheduler, cls)(**skw)
    if rec["idx2name"] is not None:
        kw["param_idx2name"] = dict(enumerate(rec["idx2name"]))
    return mx.optimizer.create(rec["optimizer"], **kw)


def _check_state(struct, state, tol_dtype):
    if struct is None:
        assert state is None
    elif isinstance(struct, str):
        assert isinstance(state, mx.nd.NDArray), struct
        ref = arrays()[struct]
        assert state.dtype == ref.dtype, struct
        np.testing.assert_allclose(state.asnumpy(), ref, err_msg=struct, **_tol(tol_dtype))
    else:
        assert isinstance(state, (tuple, list)) and len(state) == len(struct), struct
        for s, st in zip(struct, state):
            _check_state(s, st, tol_dtype)


@pytest.mark.filterwarnings("ignore:Accumulating with float16")
@pytest.mark.parametrize("rec", CASES, ids=lambda r: r["id"])
def test_golden_run(rec, capsys):
    cid, A = rec["id"], arrays()
    opt = _make(rec)
    n = len(rec["params"])
    dtypes = [dt for _, dt in rec["params"]]
    weights = [mx.nd.array(A[f"opt/{cid}/w0/{i}"], dtype=dtypes[i]) for i in range(n)]
    updater = get_updater(opt)
    states = {}
    for s in range(rec["steps"]):
        grads = [mx.nd.array(A[f"opt/{cid}/g/{s}/{i}"], dtype=dtypes[i]) for i in range(n)]
        if rec["mode"] == "updater_list":
            updater(list(range(n)), grads, weights)
        elif rec["mode"] == "updater":
            for i in range(n):
                updater(i, grads[i], weights[i])
        else:
            for i in range(n):
                if i not in states:
                    states[i] = opt.create_state_multi_precision(i, weights[i])
                opt.update_multi_precision(i, weights[i], grads[i], states[i])
        for i in range(n):
            assert weights[i].dtype == np.dtype(dtypes[i])
            np.testing.assert_allclose(weights[i].asnumpy(), A[f"opt/{cid}/w/{s}/{i}"],
                                       err_msg=f"{cid} step {s} weight {i}", **_tol(dtypes[i]))
            np.testing.assert_allclose(grads[i].asnumpy(), A[f"opt/{cid}/gafter/{s}/{i}"],
                                       err_msg=f"{cid} step {s} grad {i}", **_tol(dtypes[i]))
        assert opt.learning_rate == pytest.approx(rec["lrs"][s], rel=1e-12)
        assert opt.num_update == rec["num_updates"][s]
    final = updater.states if rec["mode"] != "direct" else states
    assert sorted(map(str, final)) == sorted(rec["states"])
    for i, struct in rec["states"].items():
        _check_state(struct, final[int(i)], dtypes[int(i)])
    assert {str(k): v for k, v in opt._index_update_count.items()} == rec["index_update_count"]
    assert {str(k): v for k, v in opt.lr_mult.items()} == rec["lr_mult"]
    assert {str(k): v for k, v in opt.wd_mult.items()} == rec["wd_mult"]


def _mults_net():
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("fc1_weight", lr_mult=2.0)
    b = mx.sym.Variable("fc1_bias", wd_mult=0.5)
    fc = mx.sym.FullyConnected(data, weight=w, bias=b, num_hidden=4, name="fc1")
    g = mx.sym.Variable("bn_gamma", lr_mult=0.1, wd_mult=3.0)
    return mx.sym.BatchNorm(fc, gamma=g, name="bn")


@pytest.mark.parametrize("rec", MISC["mults"], ids=lambda r: r["id"])
def test_lr_wd_multipliers(rec):
    kw = dict(wd=0.1, learning_rate=0.5)
    if rec["with_sym"]:
        kw["sym"] = _mults_net()
    if rec["idx2name"]:
        kw["param_idx2name"] = dict(enumerate(MISC["names"]))
    opt = mx.optimizer.create("sgd", **kw)
    if rec["set_lr_mult"] is not None:
        opt.set_lr_mult(dict(map(tuple, rec["set_lr_mult"])))
    if rec["set_wd_mult"] is not None:
        opt.set_wd_mult(dict(map(tuple, rec["set_wd_mult"])))
    assert list(map(list, opt.lr_mult.items())) == rec["lr_mult"]
    assert list(map(list, opt.wd_mult.items())) == rec["wd_mult"]
    assert [opt._get_lr(i) for i in range(6)] == pytest.approx(rec["lrs"])
    assert [opt._get_wd(i) for i in range(6)] == pytest.approx(rec["wds"])


def test_param_dict_multipliers_take_precedence():
    class P:
        lr_mult, wd_mult = 3.0, 0.0
    opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.2, param_dict={0: P()},
                           param_idx2name={0: "a_weight"})
    assert opt._get_lr(0) == pytest.approx(0.3) and opt._get_wd(0) == 0.0
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_dict == {}  # not pickled, as in MXNet
    assert clone._get_lr(0) == pytest.approx(0.1)


def test_update_counts_per_device():
    rec = MISC["counts"]
    opt = mx.optimizer.create("sgd", begin_num_update=5)
    upd = get_updater(opt)
    a0, a1 = mx.nd.zeros((2,), ctx=mx.cpu(0)), mx.nd.zeros((2,), ctx=mx.cpu(1))
    upd(0, mx.nd.ones((2,)), a0)
    upd(1, mx.nd.ones((2,), ctx=mx.cpu(1)), a1)
    upd(0, mx.nd.ones((2,)), a0)
    upd(0, mx.nd.ones((2,), ctx=mx.cpu(1)), a1)
    assert opt.num_update == rec["num_update"]
    assert {str(k): {str(i): c for i, c in v.items()}
            for k, v in opt._all_index_update_counts.items()} == rec["all_counts"]
    np.testing.assert_allclose(a0.asnumpy(), rec["a0"])
    np.testing.assert_allclose(a1.asnumpy(), rec["a1"])


@pytest.mark.parametrize("name", sorted(MISC["defaults"]))
def test_defaults(name):
    rec = MISC["defaults"][name]
    o = mx.optimizer.create(name)
    assert type(o).__name__ == rec["cls"]
    for k in ("lr", "learning_rate", "wd", "rescale_grad", "clip_gradient", "aggregate_num"):
        assert getattr(o, k) == rec[k], k


def test_registry_and_create():
    missing = set(MISC["registry"]) - set(Optimizer.opt_registry)
    assert missing <= {"groupadagrad", "lamb", "lars", "lbsgd"}  # not implemented in neomx
    assert mx.optimizer.create("SGD").__class__ is mx.optimizer.SGD
    assert mx.optimizer.register is Optimizer.register
    assert mx.optimizer.create is Optimizer.create_optimizer

    @mx.optimizer.register
    class MyOpt(Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = 42
    o = mx.optimizer.create("myopt")
    w = mx.nd.zeros((2,))
    get_updater(o)(0, mx.nd.zeros((2,)), w)
    np.testing.assert_array_equal(w.asnumpy(), 42)
    with pytest.warns(UserWarning, match="overriding existing optimizer"):
        mx.optimizer.register(MyOpt)
    del Optimizer.opt_registry["myopt"]


def test_scheduler_learning_rate():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    o = mx.optimizer.create("sgd", lr_scheduler=sched)
    o.num_update = 5
    assert o.learning_rate == pytest.approx(MISC["scheduler_lr"]["no_override"])
    assert o.lr == MISC["scheduler_lr"]["lr"]
    o = mx.optimizer.SGD(learning_rate=0.3)
    o.set_learning_rate(0.7)
    assert o.learning_rate == MISC["set_learning_rate"]


@pytest.mark.parametrize("rec", MISC["errors"], ids=lambda r: r["id"])
def test_errors(rec):
    msg = raises_like(rec, lambda: exec(rec["code"], {"mx": mx}))
    assert msg == rec["error"]


def test_updater_states_roundtrip():
    """get_states/set_states (pickled, optionally with the optimizer) resume exactly."""
    r = np.random.RandomState(0)
    w0 = r.randn(3, 4).astype(np.float32)
    grads = [r.randn(3, 4).astype(np.float32) for _ in range(4)]

    def run(updater, w, gs):
        for g in gs:
            updater(0, mx.nd.array(g), w)

    ref_w = mx.nd.array(w0)
    ref = get_updater(mx.optimizer.Adam(learning_rate=0.1, wd=0.01))
    run(ref, ref_w, grads)

    w = mx.nd.array(w0)
    first = get_updater(mx.optimizer.Adam(learning_rate=0.1, wd=0.01))
    run(first, w, grads[:2])
    blob = first.get_states(dump_optimizer=True)
    resumed = get_updater(mx.optimizer.SGD())
    resumed.set_states(blob)
    assert isinstance(resumed.optimizer, mx.optimizer.Adam)
    assert resumed.states_synced == {0: False}
    run(resumed, w, grads[2:])
    assert resumed.states_synced == {0: True}
    np.testing.assert_allclose(w.asnumpy(), ref_w.asnumpy(), rtol=1e-6)
    # states only
    only = get_updater(mx.optimizer.Adam())
    only.set_states(first.get_states())
    assert set(only.states) == {0} and isinstance(only.states[0], tuple)


def test_sync_state_context():
    upd = get_updater(mx.optimizer.SGD(momentum=0.9))
    state = (mx.nd.ones((2,)), [mx.nd.zeros((1,)), None])
    moved = upd.sync_state_context(state, mx.cpu(1))
    assert isinstance(moved, tuple) and isinstance(moved[1], list)
    assert moved[0].context == mx.cpu(1) and moved[1][0].context == mx.cpu(1)
    assert moved[1][1] is None


def test_updater_accepts_bytes_and_str_keys():
    upd = get_updater(mx.optimizer.SGD(learning_rate=1.0))
    w = mx.nd.ones((2,))
    upd(b"w", mx.nd.ones((2,)), w)
    upd("w", mx.nd.ones((2,)), w)
    assert list(upd.states) == ["w"]
    np.testing.assert_array_equal(w.asnumpy(), [-1, -1])


def test_aggregated_sgd_groups_by_dtype():
    """SGD updates lists in dtype groups of aggregate_num (4), with multi-precision states."""
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.5, multi_precision=True)
    calls = []
    orig = opt.update_multi_precision

    def spy(index, weight, grad, state):
        calls.append(tuple(index))
        return orig(index, weight, grad, state)
    opt.update_multi_precision = spy
    upd = get_updater(opt)
    ws = [mx.nd.ones((2,), dtype="float16" if i % 3 == 0 else "float32") for i in range(7)]
    upd(list(range(7)), [mx.nd.ones((2,), dtype=w.dtype) for w in ws], ws)
    assert calls == [(0, 3, 6), (1, 2, 4, 5)]
    for w in ws:
        np.testing.assert_allclose(w.asnumpy(), 0.5)
    assert isinstance(upd.states[0], tuple) and upd.states[0][1].dtype == np.float32


def test_float16_warning_without_multi_precision():
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.SGD(momentum=0.9).create_state_multi_precision(
            0, mx.nd.ones((2,), dtype="float16"))
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.Adam().create_state_multi_precision(0, mx.nd.ones((2,), dtype="float16"))


def test_updates_run_on_the_weight_context(ctx):
    opt = mx.optimizer.Adam(learning_rate=0.1, wd=0.1, clip_gradient=0.5)
    w = mx.nd.array([[1.0, -2.0], [0.5, 3.0]], ctx=ctx)
    g = mx.nd.array([[0.3, -1.0], [2.0, 0.1]], ctx=ctx)
    state = opt.create_state(0, w)
    assert all(s.context == ctx for s in state)
    opt.update(0, w, g, state)
    ref = mx.optimizer.Adam(learning_rate=0.1, wd=0.1, clip_gradient=0.5)
    wr, gr = mx.nd.array(w.asnumpy() * 0 + [[1.0, -2.0], [0.5, 3.0]]), mx.nd.array(g.asnumpy())
    ref.update(0, wr, gr, ref.create_state(0, wr))
    assert w.context == ctx
    np.testing.assert_allclose(w.asnumpy(), wr.asnumpy(), rtol=1e-6)


def test_updates_are_ordered_through_the_engine():
    """An update pushed after pending writes sees them (reads and writes are tracked)."""
    opt = mx.optimizer.SGD(learning_rate=1.0)
    w, g = mx.nd.zeros((1000,)), mx.nd.zeros((1000,))
    for k in range(5):
        g[:] = k
        opt.update(0, w, g, None)
    np.testing.assert_allclose(w.asnumpy(), -10.0)


def test_sgld_noise_statistics(seed):
    opt = mx.optimizer.SGLD(learning_rate=0.04)
    w = mx.nd.zeros((20000,))
    opt.update(0, w, mx.nd.zeros((20000,)), opt.create_state(0, w))
    a = w.asnumpy()
    assert abs(a.mean()) < 5 * 0.2 / np.sqrt(a.size)
    assert abs(a.std() - 0.2) < 0.01


def test_module_style_usage():
    """What Module/KVStore do: create by name with sym/idx2name, one updater, list calls."""
    net = _mults_net()
    names = ["fc1_weight", "fc1_bias"]
    opt = mx.optimizer.create("sgd", sym=net, param_idx2name=dict(enumerate(names)),
                              learning_rate=0.1, wd=0.5, rescale_grad=0.5)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((4, 3)), mx.nd.ones((4,))]
    gs = [mx.nd.ones((4, 3)), mx.nd.ones((4,))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        upd([0, 1], gs, ws)
    # weight: lr 0.2 (lr_mult 2), wd 0.5 -> 1 - 0.2*0.5 - 0.2*0.5 = 0.8
    np.testing.assert_allclose(ws[0].asnumpy(), 0.8, rtol=1e-6)
    # bias: idx2name rule gives wd_mult 0 but its __wd_mult__ (0.5) overrides: 1 - 0.1*0.25 - 0.05
    np.testing.assert_allclose(ws[1].asnumpy(), 1 - 0.1 * 0.5 * 0.5 - 0.05, rtol=1e-6)
