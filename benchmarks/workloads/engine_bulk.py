"""``engine-bulk``: ``mx.engine.bulk(size)`` (MXNet's bulk execution of consecutive imperative
operators) while an executor's forward is in flight.

Each iteration starts an inference forward of a bound FullyConnected graph (batch 256,
1024 -> 1024: asynchronous in neomx and MXNet, ~2 ms) and then issues ``OPS`` small in-place
updates on a 4x4 array the forward does not touch, inside ``with mx.engine.bulk(OPS)``; then it
waits. Metric: CPU seconds the calling thread spends issuing the updates (``time.thread_time``:
the engine's per-operation cost while work is in flight, which is what bulking cuts; the
forward runs on other threads meanwhile). Extras: the same without ``bulk``, the ratio (the
measured effect of bulking) and the wall time. PyTorch eager has no engine: the same updates
after its forward (the reference for the bare operations)."""
from __future__ import annotations

import time

import numpy as np

METRIC = ("time_s", "s", "issuing 32 small ops while an FC forward is in flight, bulk(32): CPU s")
OPS = 32
BATCH, IN, OUT = 256, 1024, 1024


def _iters(cfg):
    return (30, 5) if cfg["quick"] else (200, 20)


def run_mx(mx, cfg):
    n, warmup = _iters(cfg)
    rng = np.random.RandomState(cfg["seed"])
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=OUT, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(BATCH, IN), grad_req="null")
    for name, arr in zip(net.list_arguments(), ex.arg_arrays):
        arr[:] = rng.uniform(-0.1, 0.1, arr.shape).astype(np.float32)
    x = mx.nd.zeros((4, 4))

    def loop(k, bulk):
        nonlocal x
        cpu = 0.0
        for _ in range(k):
            ex.forward(is_train=False)
            t0 = time.thread_time()
            if bulk:
                with mx.engine.bulk(OPS):
                    for _ in range(OPS):
                        x += 1.0
            else:
                for _ in range(OPS):
                    x += 1.0
            cpu += time.thread_time() - t0
        mx.nd.waitall()
        return cpu

    cpu, wall = {}, {}
    for bulk in (True, False, True, False):  # interleaved: the best of two of each
        loop(warmup, bulk)
        t0 = time.perf_counter()
        c = loop(n, bulk)
        dt = time.perf_counter() - t0
        cpu[bulk] = min(c, cpu.get(bulk, float("inf")))
        wall[bulk] = min(dt, wall.get(bulk, float("inf")))
    expect = 2 * (warmup + n) * OPS * 2
    assert float(x.asnumpy()[0, 0]) == expect, (float(x.asnumpy()[0, 0]), expect)
    return {"value": cpu[True],
            "extra": {"no_bulk_s": cpu[False], "bulk_over_no_bulk": cpu[True] / cpu[False],
                      "wall_bulk_s": wall[True], "wall_no_bulk_s": wall[False],
                      "iterations": n, "ops_per_iteration": OPS}}


def run_torch(torch, cfg):
    n, warmup = _iters(cfg)
    rng = np.random.RandomState(cfg["seed"])
    w = torch.from_numpy(rng.uniform(-0.1, 0.1, (OUT, IN)).astype(np.float32))
    b = torch.from_numpy(rng.uniform(-0.1, 0.1, (OUT,)).astype(np.float32))
    d = torch.from_numpy(rng.uniform(-0.1, 0.1, (BATCH, IN)).astype(np.float32))
    x = torch.zeros(4, 4)

    def loop(k):
        cpu = 0.0
        for _ in range(k):
            torch.nn.functional.linear(d, w, b)
            t0 = time.thread_time()
            for _ in range(OPS):
                x.add_(1.0)
            cpu += time.thread_time() - t0
        return cpu
    loop(warmup)
    t0 = time.perf_counter()
    cpu = loop(n)
    dt = time.perf_counter() - t0
    return {"value": cpu, "extra": {"wall_s": dt, "iterations": n, "ops_per_iteration": OPS}}
