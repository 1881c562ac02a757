"""``gemm`` (internal, PyTorch only): the GEMM ceiling LeNet's GFLOP/s is compared with: a large
float32 matrix product (n x n by n x n) on the same threads. Metric: best GFLOP/s."""
from __future__ import annotations

import time

METRIC = ("gflops", "GFLOP/s", "float32 GEMM ceiling")


def run_torch(torch, cfg):
    n = 1024 if cfg["quick"] else 2048
    reps = 3 if cfg["quick"] else 8
    a = torch.rand(n, n)
    b = torch.rand(n, n)
    c = torch.empty(n, n)
    for _ in range(2):
        torch.mm(a, b, out=c)
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        rates.append(2.0 * n ** 3 / (time.perf_counter() - t0) / 1e9)
    return {"value": max(rates), "extra": {"n": n, "samples": rates}}
