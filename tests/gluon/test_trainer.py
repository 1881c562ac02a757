"""gluon.Trainer against MXNet 1.9.1 (fixtures from tools/make_golden_gluon_trainer.py): three
steps of each optimizer on a small Dense net, data parallelism over cpu(0)/cpu(1), the
kvstore/update_on_kvstore rules, save_states/load_states (MXNet-written files too) and errors."""
import json
import os
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.parameter import GluonAssertionError

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "gluon_trainer")
with open(os.path.join(GOLDEN, "gluon_trainer.json")) as f:
    SPEC = json.load(f)
ARR = np.load(os.path.join(GOLDEN, "gluon_trainer.npz"))
CASES = {c["id"]: c for c in SPEC["cases"]}
ERRORS = {e["id"]: e for e in SPEC["errors"]}
BATCH = SPEC["batch"]
STEPS = 3


def _ctx(name):
    return mx.cpu(int(name[4:-1]))


def make_net(ctx, hybridize=False):
    net = mx.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation="tanh", in_units=3))
        net.add(mx.gluon.nn.Dense(2, in_units=4))
    net.initialize(ctx=ctx)
    for name, p in net.collect_params().items():
        p.set_data(mx.nd.array(ARR[f"init/{name}"]))
    if hybridize:
        net.hybridize()
    return net


def make_trainer(case, net):
    prm = dict(case["optimizer_params"])
    if case.get("scheduler"):
        prm["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(*case["scheduler"])
    kw = dict(case["trainer_kwargs"])
    if kw.get("kvstore") == "instance:local":
        kw["kvstore"] = mx.kv.create("local")
    params = net.collect_params()
    for name, (lr_mult, wd_mult) in case["mults"].items():
        params[name].lr_mult = lr_mult
        params[name].wd_mult = wd_mult
    if case["optimizer"] is None:  # an instance (only adam_instance)
        return mx.gluon.Trainer(params, mx.optimizer.Adam(learning_rate=0.02, beta1=0.8), **kw)
    return mx.gluon.Trainer(params, case["optimizer"], prm, **kw)


def train_step(net, trainer, ctx, k):
    loss_fn = mx.gluon.loss.L2Loss()
    xs = mx.gluon.utils.split_and_load(mx.nd.array(ARR[f"x{k}"]), ctx)
    ys = mx.gluon.utils.split_and_load(mx.nd.array(ARR[f"y{k}"]), ctx)
    with mx.autograd.record():
        losses = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
    mx.autograd.backward(losses)
    trainer.step(BATCH)


def check_params(net, ctx, want_prefix, rtol=1e-5, atol=1e-6):
    for name, p in net.collect_params().items():
        for c in ctx:
            np.testing.assert_allclose(p.data(c).asnumpy(), ARR[f"{want_prefix}/{name}"],
                                       rtol=rtol, atol=atol, err_msg=f"{name} on {c}")


def run_case(case, hybridize=None):
    ctx = [_ctx(c) for c in case["ctx"]]
    net = make_net(ctx, case["hybridize"] if hybridize is None else hybridize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = make_trainer(case, net)
    return net, trainer, ctx


@pytest.mark.parametrize("cid", sorted(CASES))
def test_three_steps(cid):
    case = CASES[cid]
    net, trainer, ctx = run_case(case)
    for k in range(STEPS):
        train_step(net, trainer, ctx, k)
        assert trainer.learning_rate == pytest.approx(case["learning_rates"][k])
        # without a kvstore each copy steps on its own half batch: MXNet's values are cpu(1)'s
        check_params(net, ctx if case["kvstore_type"] else ctx[-1:], f"{cid}/step{k}")
    assert (trainer._kvstore.type if trainer._kvstore else None) == case["kvstore_type"]
    assert trainer._update_on_kvstore == case["update_on_kvstore"]


@pytest.mark.parametrize("cid", ["sgd_momentum_wd", "rmsprop_centered"])
def test_hybridized_same_steps(cid):
    case = CASES[cid]
    net, trainer, ctx = run_case(case, hybridize=True)
    for k in range(STEPS):
        train_step(net, trainer, ctx, k)
    check_params(net, ctx, f"{cid}/step{STEPS - 1}")


@pytest.mark.parametrize("multi,single", [("multi_device", "sgd_momentum_wd"),
                                          ("multi_local", "sgd_momentum_wd"),
                                          ("multi_no_update_on_kv", "adam"),
                                          ("multi_on_kv_adam", "adam")])
def test_two_devices_equal_one_device_full_batch(multi, single):
    """Data parallelism: the gradients of the two half batches, summed through the kvstore,
    give the single-context full-batch step, and both copies stay equal."""
    net, trainer, ctx = run_case(CASES[multi])
    for k in range(STEPS):
        train_step(net, trainer, ctx, k)
        check_params(net, ctx, f"{single}/step{k}", rtol=1e-4, atol=1e-5)


def _trained_to(case, steps, hybridize=False):
    net, trainer, ctx = run_case(case, hybridize)
    for k in range(steps):
        train_step(net, trainer, ctx, k)
    return net, trainer, ctx


def _fresh_at_step(case, k):
    """A new net whose parameters are MXNet's after step ``k``, and its Trainer."""
    net, trainer, ctx = run_case(case)
    for name, p in net.collect_params().items():
        p.set_data(mx.nd.array(ARR[f"{case['id']}/step{k}/{name}"]))
    return net, trainer, ctx


STATE_CASES = sorted(c["id"] for c in SPEC["cases"] if c["states_after"] is not None)


@pytest.mark.parametrize("cid", STATE_CASES)
def test_save_load_states_round_trip(cid, tmp_path):
    case = CASES[cid]
    net, trainer, _ = _trained_to(case, 2)
    fname = str(tmp_path / "t.states")
    trainer.save_states(fname)
    net2, trainer2, ctx = _fresh_at_step(case, 1)
    trainer2.load_states(fname)
    assert trainer2.optimizer.param_dict[0] is trainer2._params[0]
    train_step(net2, trainer2, ctx, 2)
    check_params(net2, ctx, f"{cid}/step2")


@pytest.mark.parametrize("cid", STATE_CASES)
def test_load_states_written_by_mxnet(cid):
    """A states file written by MXNet 1.9.1's Trainer.save_states after two steps: loaded,
    the third step gives MXNet's third step."""
    case = CASES[cid]
    net, trainer, ctx = _fresh_at_step(case, 1)
    trainer.load_states(os.path.join(GOLDEN, f"{cid}.states"))
    assert isinstance(trainer.optimizer, mx.optimizer.Optimizer)
    train_step(net, trainer, ctx, 2)
    check_params(net, ctx, f"{cid}/step2")


def test_load_states_restores_the_optimizer(tmp_path):
    case = CASES["sgd_momentum_wd"]
    _, trainer, _ = _trained_to(case, 1)
    fname = str(tmp_path / "t.states")
    trainer.save_states(fname)
    _, trainer2, _ = run_case(CASES["sgd"])
    trainer2.load_states(fname)
    assert trainer2.optimizer.momentum == 0.9 and trainer2.optimizer.wd == 0.01
    assert trainer2._updaters[0].optimizer is trainer2.optimizer


def test_learning_rate():
    net, trainer, _ = run_case(CASES["sgd"])
    assert trainer.learning_rate == 0.1
    trainer.set_learning_rate(0.5)
    assert trainer.learning_rate == 0.5 and trainer.optimizer.lr == 0.5


def test_params_forms():
    net = make_net([mx.cpu()])
    params = net.collect_params()
    by_dict = mx.gluon.Trainer(dict(params.items()), "sgd")
    by_list = mx.gluon.Trainer(list(params.values()), "sgd")
    by_pdict = mx.gluon.Trainer(params, "sgd")
    assert [p.name for p in by_dict._params] == sorted(params.keys())
    assert [p.name for p in by_pdict._params] == sorted(params.keys())
    assert [p.name for p in by_list._params] == list(params.keys())


def test_ignore_stale_grad_skips_unused():
    """A layer left out of the forward keeps its weights with ignore_stale_grad=True."""
    net = make_net([mx.cpu()])
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net[0](mx.nd.array(ARR["x0"])).sum()
    loss.backward()
    trainer.step(1, ignore_stale_grad=True)
    w1 = net[1].weight.data().asnumpy()
    np.testing.assert_array_equal(w1, ARR["init/net_dense1_weight"])
    assert not np.array_equal(net[0].weight.data().asnumpy(), ARR["init/net_dense0_weight"])


def test_allreduce_then_update_equals_step():
    case = CASES["multi_no_update_on_kv"]
    net, trainer, ctx = run_case(case)
    loss_fn = mx.gluon.loss.L2Loss()
    for k in range(STEPS):
        xs = mx.gluon.utils.split_and_load(mx.nd.array(ARR[f"x{k}"]), ctx)
        ys = mx.gluon.utils.split_and_load(mx.nd.array(ARR[f"y{k}"]), ctx)
        with mx.autograd.record():
            losses = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
        mx.autograd.backward(losses)
        trainer.allreduce_grads()
        g0, g1 = (g.asnumpy() for g in net[0].weight.list_grad())
        np.testing.assert_array_equal(g0, g1)
        trainer.update(BATCH)
    check_params(net, ctx, f"{case['id']}/step{STEPS - 1}")


def test_set_data_resets_kvstore():
    """set_data while the store holds the weights: the next step starts from the new value."""
    case = CASES["multi_device"]
    net, trainer, ctx = _trained_to(case, 1)
    assert trainer._kv_initialized
    net[0].weight.set_data(mx.nd.zeros((4, 3)))
    assert not trainer._kv_initialized
    train_step(net, trainer, ctx, 1)
    assert np.abs(net[0].weight.data(ctx[1]).asnumpy()).max() < 0.1


def _msg(eid):
    return ERRORS[eid]["error_message"]


def _match(eid):
    import re
    return re.escape(_msg(eid))


def _net_trainer(ctx=(mx.cpu(),), **kw):
    net = make_net(list(ctx))
    return net, mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, **kw)


def _backward(net, ctx=(mx.cpu(),)):
    for c in ctx:
        with mx.autograd.record():
            loss = net(mx.nd.array(ARR["x0"], ctx=c)).sum()
        loss.backward()


TWO = (mx.cpu(0), mx.cpu(1))


def test_stale_grad_errors():
    net, tr = _net_trainer()
    _backward(net)
    tr.step(1)
    with pytest.raises(UserWarning, match=_match("stale_grad")):
        tr.step(1)
    net, tr = _net_trainer()
    with mx.autograd.record():
        loss = net[0](mx.nd.array(ARR["x0"])).sum()
    loss.backward()
    with pytest.raises(UserWarning, match=_match("stale_grad_unused_layer")):
        tr.step(1)


def test_update_on_kvstore_errors():
    net, tr = _net_trainer(TWO)
    _backward(net, TWO)
    with pytest.raises(GluonAssertionError, match=_match("update_on_kvstore_update")):
        tr.update(1)
    with pytest.raises(AssertionError, match=_match("update_on_kvstore_allreduce")):
        tr.allreduce_grads()
    net, tr = _net_trainer(kvstore=None, update_on_kvstore=True)
    _backward(net)
    with pytest.raises(AttributeError, match=_match("kvstore_none_update_on_kvstore")):
        tr.step(1)
    net, tr = _net_trainer(kvstore=3)
    _backward(net)
    with pytest.raises(TypeError, match=_match("kvstore_bad_type")):
        tr.step(1)
    net, tr = _net_trainer(TWO, kvstore="local", compression_params={"type": "2bit",
                                                                     "threshold": 0.5})
    _backward(net, TWO)
    with pytest.raises(Exception, match=_match("compression_local_kvstore")):
        tr.step(1)


def test_learning_rate_with_scheduler_error():
    net = make_net([mx.cpu()])
    tr = mx.gluon.Trainer(net.collect_params(), "sgd",
                          {"lr_scheduler": mx.lr_scheduler.FactorScheduler(1, 0.5)})
    with pytest.raises(UserWarning, match=_match("set_learning_rate_scheduler")):
        tr.set_learning_rate(0.1)


def test_constructor_errors():
    net = make_net([mx.cpu()])
    with pytest.raises(AssertionError, match=_match("optimizer_instance_with_params")):
        mx.gluon.Trainer(net.collect_params(), mx.optimizer.SGD(), {"learning_rate": 0.1})
    with pytest.raises(ValueError, match=_match("params_not_parameters")):
        mx.gluon.Trainer([1, 2], "sgd")
    with pytest.raises(ValueError, match="First argument must be a list or dict of Parameters, "
                                         "got <class 'neomx.gluon.parameter.Parameter'>."):
        mx.gluon.Trainer(mx.gluon.Parameter("w", shape=(2,)), "sgd")
    a = mx.gluon.Parameter("a", shape=(2,))
    b = mx.gluon.Parameter("b", shape=(2,))
    a.initialize(ctx=mx.cpu(0))
    b.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(AssertionError, match=_match("params_mixed_contexts")):
        mx.gluon.Trainer([a, b], "sgd")
    with pytest.raises(RuntimeError, match=_match("params_uninitialized")):
        mx.gluon.Trainer([mx.gluon.Parameter("u", shape=(2,))], "sgd")
    with pytest.raises(ValueError, match=_match("unknown_optimizer")):
        mx.gluon.Trainer(net.collect_params(), "nosuchopt")


def test_states_file_is_mxnet_pickle(tmp_path):
    """save_states writes MXNet 1.9.1's pickle: mxnet class names, NDArrays as raw bytes
    (checked in the oracle: MXNet's Trainer.load_states reads it and steps on)."""
    import pickletools
    _, trainer, _ = _trained_to(CASES["adam"], 1)
    fname = str(tmp_path / "t.states")
    trainer.save_states(fname)
    data = open(fname, "rb").read()
    strings = {arg for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)}
    assert {"mxnet.ndarray.ndarray", "NDArray", "mxnet.optimizer.optimizer", "Adam",
            "handle"} <= strings
    assert not any("neomx" in s for s in strings)



DIST_WORKER = """
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["TEST_DIR"])
import test_trainer as t
import neomx as mx

rank = int(os.environ["RANK"])
half = t.BATCH // 2
loss_fn = mx.gluon.loss.L2Loss()
for cid, on_kv in t.DIST_RUNS:
    case = dict(t.CASES[cid], ctx=["cpu(0)"])
    case["trainer_kwargs"] = {"kvstore": "dist_sync", "update_on_kvstore": on_kv}
    net, trainer, ctx = t.run_case(case)
    for k in range(t.STEPS):
        x = mx.nd.array(t.ARR[f"x{k}"][rank * half:(rank + 1) * half])
        y = mx.nd.array(t.ARR[f"y{k}"][rank * half:(rank + 1) * half])
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(t.BATCH)  # the global batch: gradients are summed over the workers
    try:
        trainer.step(half)  # (raises before any communication)
        batch_change = None
    except UserWarning as e:
        batch_change = str(e)
    np.savez(os.path.join(sys.argv[1], f"{cid}-rank{rank}.npz"),
             **{n: p.data().asnumpy() for n, p in net.collect_params().items()})
    with open(os.path.join(sys.argv[1], f"{cid}-rank{rank}.json"), "w") as f:
        json.dump({"type": trainer._kvstore.type, "distributed": trainer._distributed,
                   "update_on_kvstore": trainer._update_on_kvstore,
                   "batch_change": batch_change}, f)
"""
DIST_RUNS = [("sgd_momentum_wd", True), ("adam", False)]


def test_dist_sync_two_workers_equal_one_process(tmp_path):
    """kvstore='dist_sync' on 2 workers, each with half of every batch: MXNet's one-process
    full-batch steps, updating on the store (sgd) or allreducing then updating on each
    worker (adam)."""
    import sys

    from neomx.launch import launch_local
    script = tmp_path / "worker.py"
    script.write_text(DIST_WORKER)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {"PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
           "TEST_DIR": os.path.dirname(os.path.abspath(__file__)), "OMP_NUM_THREADS": "1",
           "MXNET_KVSTORE_TIMEOUT": "30"}
    rc = launch_local([sys.executable, str(script), str(tmp_path)], 2, extra_env=env,
                      kill_grace=10.0, timeout=120.0)
    assert rc == 0
    for cid, on_kv in DIST_RUNS:
        for r in range(2):
            info = json.loads((tmp_path / f"{cid}-rank{r}.json").read_text())
            change = info.pop("batch_change")
            assert info == {"type": "dist_sync", "distributed": True, "update_on_kvstore": on_kv}
            # the store's optimizer cannot follow a new batch size (MXNet's error)
            assert (change or "").startswith("Possible change in the `batch_size`") == on_kv
            got = np.load(tmp_path / f"{cid}-rank{r}.npz")
            for name in got.files:
                np.testing.assert_allclose(got[name], ARR[f"{cid}/step{STEPS - 1}/{name}"],
                                           rtol=1e-5, atol=1e-6, err_msg=f"{name} on rank {r}")


@pytest.mark.parametrize("ctx", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]], ids=["one", "two"])
def test_deferred_initialization(ctx):
    """A Trainer made before the first forward (shapes unknown) works from the first step;
    on two contexts both copies start from the same value and stay equal."""
    net = mx.gluon.nn.Dense(2)
    net.initialize(mx.init.One(), ctx=ctx)
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    xs = mx.gluon.utils.split_and_load(mx.nd.ones((4, 3)), ctx)
    with mx.autograd.record():
        losses = [net(x).sum() for x in xs]
    mx.autograd.backward(losses)
    tr.step(4)
    for w in net.weight.list_data():
        np.testing.assert_allclose(w.asnumpy(), np.full((2, 3), 0.9), rtol=1e-6)


@pytest.mark.parametrize("env,arg,want", [("1", None, True), ("0", None, False),
                                          ("0", True, True), ("1", False, False)])
def test_update_on_kvstore_choice(monkeypatch, env, arg, want):
    """MXNET_UPDATE_ON_KVSTORE decides unless the argument is given (two contexts)."""
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", env)
    net, tr = _net_trainer(TWO, update_on_kvstore=arg)
    _backward(net, TWO)
    tr.step(1)
    assert tr._update_on_kvstore is want and tr._kvstore.type == "device"
