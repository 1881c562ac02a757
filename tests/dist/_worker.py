"""One worker of the distributed tests (started by ``neomx.launch`` with RANK etc. set).

    PYTHONPATH=<repository root> python -m tests.dist._worker SCENARIO OUT_DIR [ARGS...]

Scenarios: ``ops`` (store operations), ``train NETWORK`` (Module.fit with dist_sync on this
worker's shard), ``die``/``hang`` (rank 1 is killed / stops answering at step 3). Each writes
``OUT_DIR/rank<r>.npz`` and/or ``OUT_DIR/rank<r>.json``; the tests read them.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

import neomx as mx
from tests.dist._data import BATCH, EPOCHS, OPT_PARAMS, initial_params, network, train_data

RANK = int(os.environ["RANK"])


def _vals(seed, shapes, dtype=np.float32):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def _raises(fn, match):
    try:
        fn()
    except mx.MXNetError as e:
        assert match in str(e), str(e)
        return str(e)
    raise AssertionError(f"no MXNetError (expected {match!r})")


def scenario_ops(out: Path):
    kv = mx.kv.create("dist_sync")
    n, r = kv.num_workers, kv.rank
    assert (kv.type, r, n) == ("dist_sync", RANK, int(os.environ["WORLD_SIZE"]))
    assert kv.is_capable("optimizer")
    res, msgs = {}, {}

    # init: rank 0's value wins; push without updater stores the sum over workers (int keys,
    # several buckets: a 2 KiB bucket limit splits the 1000-element key off)
    kv2 = mx.kv.DistKVStore("dist_sync", bucket_mb=2 / 1024)
    shapes = [(3, 4), (1000,), (7,), (2, 2, 2)]
    keys = [3, 5, 7, 9]
    kv2.init(keys, [mx.nd.array(v) for v in _vals(100 + r, shapes)])
    outs = [mx.nd.zeros(s) for s in shapes]
    kv2.pull(keys, out=outs)
    for k, o, v in zip(keys, outs, _vals(100, shapes)):
        np.testing.assert_array_equal(o.asnumpy(), v)
    pushed = [_vals(200 + w, shapes) for w in range(n)]
    kv2.push(keys, [mx.nd.array(v) for v in pushed[r]])
    kv2.pull(keys, out=outs)
    for i, o in enumerate(outs):
        want = sum(p[i] for p in pushed)
        np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-6, atol=1e-6)
        res[f"sum{i}"] = o.asnumpy()
    assert kv2.comm_stats["buckets"] >= 2, kv2.comm_stats

    # pushpull of two devices' values per key, mixed dtypes, out=None writes back
    vals = [[mx.nd.array(v, ctx=mx.cpu(d), dtype=dt) for d in (0, 1)]
            for v, dt in zip(_vals(300 + r, [(5,), (2, 3)]), ("float64", "float16"))]
    kv.init(["a", "b"], [mx.nd.zeros((5,), dtype="float64"), mx.nd.zeros((2, 3), dtype="float16")])
    kv.pushpull(["a", "b"], vals)
    for i, dt in enumerate((np.float64, np.float16)):
        want = sum(2 * _vals(300 + w, [(5,), (2, 3)])[i].astype(dt).astype(np.float64)
                   for w in range(n))
        for v in vals[i]:
            assert v.dtype == dt
            np.testing.assert_allclose(v.asnumpy(), want, rtol=1e-12 if dt == np.float64 else 0,
                                       atol=1e-12 if dt == np.float64 else 1e-2)
        res[f"mixed{i}"] = vals[i][1].asnumpy()

    # optimizer on the store: the same SGD step everywhere, equal to a one-process store fed
    # the summed gradient
    kv.init("w", mx.nd.array(_vals(400 + r, [(4, 3)])[0]))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    ref = mx.kv.create("local")
    ref.init("w", mx.nd.array(_vals(400, [(4, 3)])[0]))
    ref.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    w, w_ref = mx.nd.zeros((4, 3)), mx.nd.zeros((4, 3))
    for step in range(3):
        grads = [_vals(1000 * step + w_, [(4, 3)])[0] for w_ in range(n)]
        kv.pushpull("w", mx.nd.array(grads[r]), out=w)
        ref.pushpull("w", mx.nd.array(sum(grads)), out=w_ref)
    np.testing.assert_allclose(w.asnumpy(), w_ref.asnumpy(), rtol=1e-6, atol=1e-7)
    res["sgd"] = w.asnumpy()
    states = out / f"rank{r}.states"
    kv.save_optimizer_states(str(states))
    kv.load_optimizer_states(str(states))
    kv.pushpull("w", mx.nd.ones((4, 3)), out=w)
    res["sgd_after_load"] = w.asnumpy()

    # a dist_device_sync store (on CPU contexts here) and the barrier
    kvd = mx.kv.create("dist_device_sync")
    kvd.init(0, mx.nd.zeros((2,)))
    got = mx.nd.zeros((2,))
    kvd.pushpull(0, [mx.nd.ones((2,), ctx=mx.cpu(1)) * (r + 1)], out=got)
    np.testing.assert_array_equal(got.asnumpy(), np.full(2, n * (n + 1) / 2))
    kv.barrier()

    # metric totals: sums and counts over the workers
    acc = mx.metric.Accuracy()
    acc.update([mx.nd.array([0] * (r + 1))], [mx.nd.array([[1, 0]] * (r + 1))])  # r+1 right
    acc.update([mx.nd.array([1])], [mx.nd.array([[1, 0]])])  # one wrong
    total = kv.total_metric(mx.metric.create(["acc", acc]))
    res["total_acc"] = np.array([v for _, v in total])

    # different optimizers on different workers: refused everywhere
    kv3 = mx.kv.create("dist_sync")
    msgs["optimizer"] = _raises(
        lambda: kv3.set_optimizer(mx.optimizer.SGD(learning_rate=0.1 * (1 + (r == 1)))),
        "set a different optimizer")

    # different keys in one step: a clear error on every worker, then the store refuses
    kv4 = mx.kv.create("dist_sync")
    kv4.init(["p", "q"], [mx.nd.zeros((3,)), mx.nd.zeros((3,))])
    msgs["keys"] = _raises(lambda: kv4.push("p" if r == 0 else "q", mx.nd.ones((3,))),
                           "pushed different keys")
    msgs["after"] = _raises(lambda: kv4.push("p", mx.nd.ones((3,))), "refused")
    np.savez(out / f"rank{r}.npz", **res)
    (out / f"rank{r}.json").write_text(json.dumps(msgs))


def scenario_train(out: Path, name: str):
    logging.basicConfig(filename=str(out / f"rank{RANK}.log"), level=logging.INFO,
                        format="%(message)s")
    kv = mx.kv.create("dist_sync")
    x, y = train_data(name)
    it = mx.io.NDArrayIter(x, y, batch_size=BATCH // kv.num_workers, label_name="out_label",
                           num_parts=kv.num_workers, part_index=kv.rank)
    mod = mx.mod.Module(network(name), label_names=("out_label",), context=mx.cpu())
    # each worker starts from its own random parameters: the store broadcasts rank 0's
    args = {k: v + kv.rank for k, v in initial_params(name).items()} if kv.rank else \
        initial_params(name)
    val = mx.io.NDArrayIter(x[:BATCH], y[:BATCH], batch_size=BATCH // kv.num_workers,
                            label_name="out_label", num_parts=kv.num_workers, part_index=kv.rank)
    mod.fit(it, eval_data=val, num_epoch=EPOCHS, kvstore="dist_sync", optimizer="sgd",
            optimizer_params=OPT_PARAMS, eval_metric="acc",
            arg_params={k: mx.nd.array(v) for k, v in args.items()})
    arg, _ = mod.get_params()
    np.savez(out / f"rank{kv.rank}.npz", **{k: v.asnumpy() for k, v in arg.items()})
    (out / f"rank{kv.rank}.json").write_text(json.dumps(
        {"update_on_kvstore": mod._update_on_kvstore}))


def scenario_fault(out: Path, mode: str):
    kv = mx.kv.create("dist_sync")
    kv.init("g", mx.nd.zeros((1000,)))
    g = mx.nd.ones((1000,))
    t0 = None
    try:
        for step in range(20):
            if step == 3 and kv.rank == 1:
                if mode == "die":
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(120)  # hang: alive, silent
            t0 = time.monotonic()
            kv.pushpull("g", g)
    except mx.MXNetError as e:
        (out / f"rank{kv.rank}.json").write_text(json.dumps(
            {"error": str(e), "elapsed": time.monotonic() - t0, "step": step}))
        sys.exit(3)
    (out / f"rank{kv.rank}.json").write_text(json.dumps({"error": None}))


if __name__ == "__main__":
    scenario, out_dir = sys.argv[1], Path(sys.argv[2])
    if scenario == "ops":
        scenario_ops(out_dir)
    elif scenario == "train":
        scenario_train(out_dir, sys.argv[3])
    else:
        scenario_fault(out_dir, scenario)
