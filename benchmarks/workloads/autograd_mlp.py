"""``autograd-mlp``: imperative MLP training with ``autograd`` (batch 64, 300 steps).

Each step records the forward (FullyConnected 100->128, Activation relu, FullyConnected 128->10,
SoftmaxOutput) under ``autograd.record()``, calls ``backward()`` and applies an NDArray SGD update
(``w -= lr / batch * w.grad``) to the four parameters; every 50 steps it reads the batch accuracy
(a synchronisation point, as a training script's logging is). PyTorch eager runs the same network
with its autograd and ``torch.optim.SGD`` (cross-entropy summed over the batch: SoftmaxOutput's
gradient). Metric: seconds for the steps, after a warm-up."""
from __future__ import annotations

import time

import numpy as np

import common

METRIC = ("time_s", "s", "300 steps, batch 64: record, backward, SGD")
BATCH, FEATURES, HIDDEN, CLASSES = 64, 100, 128, 10
LR = 0.1


def _iters(cfg):
    return (60, 5) if cfg["quick"] else (300, 20)   # (timed steps, warm-up steps)


def _data(cfg):
    batches = common.toy_batches(8, 70, FEATURES, CLASSES, seed=cfg["seed"])
    rng = np.random.RandomState(cfg["seed"])
    data = [(x[:BATCH].astype(np.float32), y[:BATCH].astype(np.float32)) for x, y in batches]
    params = [rng.uniform(-0.1, 0.1, (HIDDEN, FEATURES)), np.zeros(HIDDEN),
              rng.uniform(-0.1, 0.1, (CLASSES, HIDDEN)), np.zeros(CLASSES)]
    return data, [p.astype(np.float32) for p in params]


def run_mx(mx, cfg):
    steps, warmup = _iters(cfg)
    data, init = _data(cfg)
    batches = [(mx.nd.array(x), mx.nd.array(y)) for x, y in data]
    params = [mx.nd.array(p) for p in init]
    for p in params:
        p.attach_grad()
    w1, b1, w2, b2 = params

    def loop(n):
        acc = None
        for i in range(n):
            x, y = batches[i % len(batches)]
            with mx.autograd.record():
                h = mx.nd.FullyConnected(x, w1, b1, num_hidden=HIDDEN)
                h = mx.nd.Activation(h, act_type='relu')
                out = mx.nd.FullyConnected(h, w2, b2, num_hidden=CLASSES)
                loss = mx.nd.SoftmaxOutput(out, y)
            loss.backward()
            for p in params:
                p -= (LR / BATCH) * p.grad
            if i % 50 == 0:
                acc = float((loss.asnumpy().argmax(axis=1) == y.asnumpy()).mean())
        return acc
    loop(warmup)
    mx.nd.waitall()
    t0 = time.perf_counter()
    acc = loop(steps)
    mx.nd.waitall()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "warmup": warmup, "ms_per_step": 1e3 * dt / steps,
                                   "last_acc": acc}}


def run_torch(torch, cfg):
    steps, warmup = _iters(cfg)
    data, init = _data(cfg)
    batches = [(torch.from_numpy(x), torch.from_numpy(y).long()) for x, y in data]
    nn = torch.nn
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))
    with torch.no_grad():
        for p, v in zip(model.parameters(), init):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR / BATCH)

    def loop(n):
        acc = None
        for i in range(n):
            x, y = batches[i % len(batches)]
            opt.zero_grad()
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y, reduction="sum")
            loss.backward()
            opt.step()
            if i % 50 == 0:
                acc = float((out.argmax(1) == y).float().mean())
        return acc
    loop(warmup)
    t0 = time.perf_counter()
    acc = loop(steps)
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "warmup": warmup, "ms_per_step": 1e3 * dt / steps,
                                   "last_acc": acc}}
