"""``memory``: peak memory of training LeNet at batch 1024 (the tutorial's ``train``, one device),
each peer in its own process. Metric: MiB of peak RSS above the RSS reached after the imports and
the synthetic data generation (the kernel's VmHWM, reset just before binding)."""
from __future__ import annotations

import common
import seed_code
from workloads import lenet

METRIC = ("peak_mib", "MiB", "peak RSS above baseline, LeNet batch 1024")


def _iters(cfg):
    return 3 if cfg["quick"] else 10


def _measure(fn):
    base = common.rss_bytes()
    exact = common.reset_peak_rss()
    fn()
    peak = common.peak_rss_bytes()
    return {"value": (peak - base) / 2**20,
            "extra": {"baseline_mib": base / 2**20, "peak_abs_mib": peak / 2**20,
                      "method": "VmHWM reset via /proc/self/clear_refs" if exact
                      else "ru_maxrss (process lifetime peak)"}}


def run_mx(mx, cfg):
    data = common.cycling(common.mnist_like_batches(2, lenet.BATCH, seed=cfg["seed"]))
    n = _iters(cfg)
    return _measure(lambda: seed_code.train(mx, seed_code.lenet(mx), lenet.SHAPE, data, [mx.cpu()], [1],
                                            iterations=n, warmup=0))


def run_torch(torch, cfg):
    data = common.cycling(common.mnist_like_batches(2, lenet.BATCH, seed=cfg["seed"]))
    n = _iters(cfg)
    return _measure(lambda: lenet.torch_train(torch, data, 1, n, 0))
