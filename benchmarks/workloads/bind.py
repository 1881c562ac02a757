"""``bind``: start-up cost: build the LeNet symbol, ``simple_bind`` it for batch 1024, initialise
it and run the first training iteration (as the tutorial's ``train`` does), in a fresh process
after the imports. Metric: seconds. Extras: the bind alone and the import time."""
from __future__ import annotations

import time

import common
import seed_code
from workloads import lenet

METRIC = ("time_s", "s", "LeNet symbol + simple_bind + init + 1st iteration")


def run_mx(mx, cfg):
    data = common.cycling(common.mnist_like_batches(1, lenet.BATCH, seed=cfg["seed"]))
    t0 = time.perf_counter()
    net = seed_code.lenet(mx)
    t1 = time.perf_counter()
    r = seed_code.train(mx, net, lenet.SHAPE, data, [mx.cpu()], [1], iterations=1, warmup=0)
    total = (t1 - t0) + r["setup_s"] + r["loop_s"]
    return {"value": total, "extra": {"symbol_s": t1 - t0, "bind_init_s": r["setup_s"],
                                      "first_iter_s": r["loop_s"]}}


def run_torch(torch, cfg):
    data = common.cycling(common.mnist_like_batches(1, lenet.BATCH, seed=cfg["seed"]))
    r = lenet.torch_train(torch, data, 1, 1, 0)
    total = r["setup_s"] + r["loop_s"]
    return {"value": total, "extra": {"symbol_s": 0.0, "bind_init_s": r["setup_s"],
                                      "first_iter_s": r["loop_s"]}}
