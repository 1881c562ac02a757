"""``lenet``: the tutorial's ``train(lenet(), [1024, 1, 28, 28], ..., [cpu()], [1])`` on one
device, 50 iterations. Metric: seconds for the 50 iterations (bind, init and warm-up excluded);
the extras give GFLOP/s (analytic conv/fc FLOPs, see ``common.lenet_flops_per_sample``)."""
from __future__ import annotations

import time

import common
import seed_code

METRIC = ("time_s", "s", "50 iterations, batch 1024, one device")
BATCH = 1024
SHAPE = [BATCH, 1, 28, 28]


def iters(cfg):
    return (5, 1) if cfg["quick"] else (50, 2)


def devices(mx):
    return [mx.cpu(0)], [1]


def _result(r, n_iters, warmup):
    flops = common.lenet_flops_per_sample() * BATCH * n_iters
    return {"value": r["loop_s"], "extra": {
        "iterations": n_iters, "warmup": warmup, "ms_per_iter": 1e3 * r["loop_s"] / n_iters,
        "gflops": flops / r["loop_s"] / 1e9, "setup_s": r["setup_s"], "warmup_s": r["warmup_s"],
        "seed_total_s": r["setup_s"] + r["warmup_s"] + r["loop_s"], "last_acc": r["acc"]}}


def run_mx(mx, cfg, devices=devices):
    n, warmup = iters(cfg)
    data = common.cycling(common.mnist_like_batches(4, BATCH, seed=cfg["seed"]))
    devs, power = devices(mx)
    r = seed_code.train(mx, seed_code.lenet(mx), SHAPE, data, devs, power, iterations=n, warmup=warmup)
    return _result(r, n, warmup)


def torch_train(torch, data, n_replicas, iterations, warmup):
    """The tutorial's ``train`` in PyTorch eager: ``n_replicas`` model copies each take an equal
    share of the batch (sequentially: eager PyTorch has a single CPU device), gradients are
    summed into replica 0, which is updated and copied back to the others."""
    from workloads import torch_models as tm
    t0 = time.perf_counter()
    models = [tm.lenet(torch) for _ in range(n_replicas)]
    tm.init_params(torch, models[0])
    opt = torch.optim.SGD(models[0].parameters(), lr=0.1 / BATCH)
    share = BATCH // n_replicas
    t1 = time.perf_counter()
    marks, acc = [], 0.0
    for i in range(warmup + iterations):
        if i == warmup:
            marks.append(time.perf_counter())
        x, y = data()
        monitor = (i - warmup if i >= warmup else i) % 10 == 0
        if n_replicas == 1:
            a = tm.train_step(torch, models[0], opt, x, y, (-1, 1, 28, 28), monitor)
            acc = a if a is not None else acc
            continue
        with torch.no_grad():
            for m in models[1:]:
                for p, p0 in zip(m.parameters(), models[0].parameters()):
                    p.copy_(p0)
        preds = []
        for j, m in enumerate(models):
            xt = torch.from_numpy(x[j*share:(j+1)*share]).float().reshape(-1, 1, 28, 28)
            yt = torch.from_numpy(y[j*share:(j+1)*share]).long()
            m.zero_grad()
            out = m(xt)
            torch.nn.functional.cross_entropy(out, yt, reduction="sum").backward()
            if monitor:
                preds.append(out.argmax(1).numpy())
        with torch.no_grad():
            for m in models[1:]:
                for p0, p in zip(models[0].parameters(), m.parameters()):
                    p0.grad += p.grad
        opt.step()
        if monitor:
            import numpy as np
            acc = float((np.concatenate(preds) == y).sum()) / BATCH
    t2 = time.perf_counter()
    if not marks:
        marks.append(t2)
    return {"setup_s": t1 - t0, "warmup_s": marks[0] - t1, "loop_s": t2 - marks[0], "acc": acc}


def run_torch(torch, cfg, n_replicas=1):
    n, warmup = iters(cfg)
    data = common.cycling(common.mnist_like_batches(4, BATCH, seed=cfg["seed"]))
    return _result(torch_train(torch, data, n_replicas, n, warmup), n, warmup)
