"""``imperative``: a loop of small (16x16 float32) NDArray operations: per-op dispatch overhead.

One iteration is ``OPS_PER_ITER`` operations, each one statement of the forms the tutorial's
code uses (arithmetic with arrays and scalars, activations, a reduction, a dot, and the SGD
update ``w[:] -= t``). Metric: microseconds per operation, after a warm-up, ending with
``waitall()`` for the asynchronous engines."""
from __future__ import annotations

import time

import numpy as np

METRIC = ("us_per_op", "us", "small NDArray ops (16x16)")
SHAPE = (16, 16)
OPS_PER_ITER = 10


def _iters(cfg):
    return (300, 50) if cfg["quick"] else (3000, 300)


def _arrays(cfg):
    rng = np.random.RandomState(cfg["seed"])
    return [rng.rand(*SHAPE).astype(np.float32) for _ in range(4)]


def run_mx(mx, cfg):
    n, warmup = _iters(cfg)
    a, b, g, w = (mx.nd.array(x) for x in _arrays(cfg))

    def loop(k):
        for _ in range(k):
            c = a + b
            c = c * b
            c = c - 1.0
            c = mx.nd.relu(c)
            c = mx.nd.tanh(c)
            s = mx.nd.sum(c)
            d = mx.nd.dot(a, b)
            t = g / 100.0
            t = 0.1 * t
            w[:] -= t
        return s, d
    loop(warmup)
    mx.nd.waitall()
    t0 = time.perf_counter()
    loop(n)
    mx.nd.waitall()
    dt = time.perf_counter() - t0
    return {"value": 1e6 * dt / (n * OPS_PER_ITER),
            "extra": {"loop_s": dt, "iterations": n, "ops": n * OPS_PER_ITER}}


def run_torch(torch, cfg):
    n, warmup = _iters(cfg)
    a, b, g, w = (torch.from_numpy(x) for x in _arrays(cfg))

    def loop(k):
        for _ in range(k):
            c = a + b
            c = c * b
            c = c - 1.0
            c = torch.relu(c)
            c = torch.tanh(c)
            s = torch.sum(c)
            d = a @ b
            t = g / 100.0
            t = 0.1 * t
            w.sub_(t)
        return s, d
    loop(warmup)
    t0 = time.perf_counter()
    loop(n)
    dt = time.perf_counter() - t0
    return {"value": 1e6 * dt / (n * OPS_PER_ITER),
            "extra": {"loop_s": dt, "iterations": n, "ops": n * OPS_PER_ITER}}
