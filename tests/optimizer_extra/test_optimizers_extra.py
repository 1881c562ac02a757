"""LARS, LBSGD, LAMB, contrib.GroupAdaGrad against MXNet 1.9.1 (multi-step golden runs through
the Updater, aggregated lists and direct calls, multi-precision, schedulers), MXNet-written
states files read by ``Updater.set_states``, SGLD's noise (seeded properties) and the
``mx.optimizer`` names."""
from __future__ import annotations

import functools
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.optimizer import get_updater

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "optimizers_extra"


@functools.lru_cache(maxsize=None)
def gold():
    with open(GOLDEN / "optimizers_extra.json", encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def arrays():
    with np.load(GOLDEN / "optimizers_extra.npz") as z:
        return {k: z[k] for k in z.files}


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=2e-3, atol=2e-3)


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
        ref = arrays()[struct]
        assert isinstance(state, mx.nd.NDArray) and state.dtype == ref.dtype, struct
        np.testing.assert_allclose(state.asnumpy(), ref, err_msg=struct, **_tol(tol_dtype))
    else:
        assert isinstance(state, (tuple, list)) and len(state) == len(struct), struct
        for s, st in zip(struct, state):
            _check_state(s, st, tol_dtype)


CASES = gold()["cases"]


@pytest.mark.filterwarnings("ignore:Accumulating with float16")
@pytest.mark.parametrize("rec", CASES, ids=lambda r: r["id"])
def test_golden_run(rec):
    cid, A = rec["id"], arrays()
    opt = _make(rec)
    n = len(rec["params"])
    dtypes = [dt for _, dt in rec["params"]]
    weights = [mx.nd.array(A[f"{cid}/w0/{i}"], dtype=dtypes[i]) for i in range(n)]
    updater = get_updater(opt)
    states = {}
    for s in range(rec["steps"]):
        grads = [mx.nd.array(A[f"{cid}/g/{s}/{i}"], dtype=dtypes[i]) for i in range(n)]
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
            np.testing.assert_allclose(weights[i].asnumpy(), A[f"{cid}/w/{s}/{i}"],
                                       err_msg=f"{cid} step {s} weight {i}", **_tol(dtypes[i]))
        assert opt.learning_rate == pytest.approx(rec["lrs"][s], rel=1e-12)
        assert opt.num_update == rec["num_updates"][s]
    final = updater.states if rec["mode"] != "direct" else states
    assert sorted(map(str, final)) == sorted(rec["states"])
    for i, struct in rec["states"].items():
        _check_state(struct, final[int(i)], dtypes[int(i)])
    assert {str(k): v for k, v in opt.wd_mult.items()} == rec["wd_mult"]


@pytest.mark.parametrize("cid", ["lars_names", "lamb_list", "lbsgd_default", "groupadagrad"])
def test_mxnet_states_file_loads(cid):
    """MXNet's ``updater.get_states(dump_optimizer=True)`` (the ``.states`` file of Module and
    KVStore) is read by ``Updater.set_states``: same optimizer settings, same states, and the
    next step continues as MXNet's run did."""
    rec = next(r for r in CASES if r["id"] == cid)
    updater = get_updater(mx.optimizer.SGD())
    updater.set_states((GOLDEN / f"{cid}.states").read_bytes())
    opt = updater.optimizer
    assert type(opt).__name__.lower() == rec["optimizer"]
    assert type(opt).__module__.startswith("neomx.optimizer")
    for key, value in rec["kwargs"].items():
        attr = {"learning_rate": "lr", "eps": "eps" if cid.startswith("lars") else
                "float_stable_eps"}.get(key, key)
        assert getattr(opt, attr) == value, key
    assert opt.num_update == rec["num_updates"][-1]
    for i, struct in rec["states"].items():
        _check_state(struct, updater.states[int(i)], rec["params"][int(i)][1])
    # the restored updater continues: a neomx-pickled round trip keeps everything
    again = get_updater(mx.optimizer.SGD())
    again.set_states(updater.get_states(dump_optimizer=True))
    assert type(again.optimizer) is type(opt) and again.optimizer.num_update == opt.num_update


def test_lbsgd_warmup_multipliers():
    misc = gold()["misc"]
    for strategy, values in misc["lbmult"].items():
        opt = mx.optimizer.LBSGD(batch_scale=4, warmup_epochs=2, updates_per_epoch=2,
                                 warmup_strategy=strategy)
        assert [opt._get_lbmult(n) for n in range(6)] == pytest.approx(values, rel=1e-12)


def test_defaults_and_registry():
    misc = gold()["misc"]
    o = mx.optimizer.LBSGD()
    assert [o.momentum, o.warmup_strategy, o.warmup_epochs, o.batch_scale,
            o.updates_per_epoch, o.init_updates, o.num_epochs, o.lr] == misc["lbsgd_attrs"]
    o = mx.optimizer.LAMB()
    assert [o.aggregate_num, o.lr, o.epsilon] == misc["lamb_attrs"]
    o = mx.optimizer.LARS()
    assert [o.aggregate_num, o.eta, o.eps, o.momentum_correction] == misc["lars_attrs"]
    # (contrib.svrg_optimization registers two more when imported, in MXNet too)
    svrg = {"_svrgoptimizer", "_assignmentoptimizer"}
    assert sorted(set(mx.optimizer.Optimizer.opt_registry) - svrg) == misc["registry"]
    for cls in (mx.optimizer.LARS, mx.optimizer.LBSGD, mx.optimizer.LAMB):
        assert cls.__module__ == "neomx.optimizer.optimizer"
        assert getattr(mx.optimizer.optimizer, cls.__name__) is cls
        assert pickle.loads(pickle.dumps(cls())).__class__ is cls
    assert mx.optimizer.optimizer.Updater is mx.optimizer.Updater
    assert mx.optimizer.NDabs is mx.nd.abs
    assert mx.optimizer.create("GroupAdaGrad").__class__ is mx.optimizer.contrib.GroupAdaGrad


def test_groupadagrad_errors():
    misc = gold()["misc"]
    o = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
    w = mx.nd.ones((2, 2))
    with pytest.raises(AssertionError, match=misc["groupadagrad_wd_error"][1]):
        o.update(0, w, mx.nd.ones((2, 2)), o.create_state(0, w))
    with pytest.raises(AssertionError):
        mx.optimizer.contrib.GroupAdaGrad().create_state(0, mx.nd.ones((2,)))


def test_sgld_noise_properties():
    """SGLD: ``w += -lr/2 * (grad + wd*w) + N(0, sqrt(lr))``; seeded runs repeat exactly."""
    lr, wd = 0.04, 0.1
    w0 = np.full((200, 100), 0.5, np.float32)
    g = np.full_like(w0, 2.0)

    def step(seed):
        mx.random.seed(seed)
        opt = mx.optimizer.SGLD(learning_rate=lr, wd=wd)
        w = mx.nd.array(w0)
        opt.update(0, w, mx.nd.array(g), opt.create_state(0, w))
        return w.asnumpy()

    a, b, c = step(7), step(7), step(8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    noise = a - (w0 - lr / 2 * (g + wd * w0))
    assert abs(noise.mean()) < 4 * np.sqrt(lr) / np.sqrt(noise.size)
    assert noise.std() == pytest.approx(np.sqrt(lr), rel=0.03)
