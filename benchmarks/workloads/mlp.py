"""``mlp``: the tutorial's perceptron loop (batch 100, 100 iterations: set data, forward,
backward, NDArray SGD update, accuracy check every 10 iterations). Metric: seconds for the loop."""
from __future__ import annotations

import time

import common
import seed_code

METRIC = ("time_s", "s", "100 iterations, batch 100")
BATCH, FEATURES, CLASSES = 100, 100, 10


def _iters(cfg):
    return (20, 2) if cfg["quick"] else (100, 5)   # (timed iterations, warm-up iterations)


def run_mx(mx, cfg):
    iters, warmup = _iters(cfg)
    batches = common.toy_batches(10, BATCH, FEATURES, CLASSES, seed=cfg["seed"])
    net = seed_code.build_mlp(mx, CLASSES)
    ex = net.simple_bind(ctx=mx.cpu(), data=(BATCH, FEATURES))
    args = dict(zip(net.list_arguments(), ex.arg_arrays))
    seed_code.init_params(mx, args)
    seed_code.mlp_loop(mx, ex, args, batches, warmup, BATCH)
    mx.nd.waitall()
    t0 = time.perf_counter()
    acc = seed_code.mlp_loop(mx, ex, args, batches, iters, BATCH)
    mx.nd.waitall()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"iterations": iters, "warmup": warmup, "ms_per_iter": 1e3 * dt / iters,
                                   "last_acc": float(acc) / BATCH}}


def run_torch(torch, cfg):
    from workloads import torch_models as tm
    iters, warmup = _iters(cfg)
    batches = common.toy_batches(10, BATCH, FEATURES, CLASSES, seed=cfg["seed"])
    model = tm.mlp(torch, FEATURES, CLASSES)
    tm.init_params(torch, model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 / BATCH)

    def loop(n):
        acc = None
        for i in range(n):
            x, y = batches[i % len(batches)]
            a = tm.train_step(torch, model, opt, x, y, (-1, FEATURES), i % 10 == 0)
            acc = a if a is not None else acc
        return acc
    loop(warmup)
    t0 = time.perf_counter()
    acc = loop(iters)
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"iterations": iters, "warmup": warmup, "ms_per_iter": 1e3 * dt / iters,
                                   "last_acc": acc}}
