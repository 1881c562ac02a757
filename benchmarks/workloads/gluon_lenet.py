"""``gluon-lenet``: the tutorial's LeNet written in Gluon, hybridized (``static_alloc``,
``static_shape``), trained with ``gluon.Trainer('sgd')`` and ``SoftmaxCrossEntropyLoss``:
batch 256, 50 steps on one device. PyTorch eager runs the same network with
``cross_entropy`` (mean) and ``torch.optim.SGD``. Metric: seconds for the steps after a
warm-up. ``gluon-lenet-imperative`` is the same without hybridize (see that module)."""
from __future__ import annotations

import time

import common

METRIC = ("time_s", "s", "50 steps, batch 256, hybridized (static_alloc)")
BATCH = 256
LR = 0.1


def iters(cfg):
    return (5, 1) if cfg["quick"] else (50, 3)


def net_mx(mx):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(20, kernel_size=5, activation="tanh"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(50, kernel_size=5, activation="tanh"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Flatten(),
                nn.Dense(500, activation="tanh"),
                nn.Dense(10))
    return net


def train_mx(mx, cfg, hybridize):
    steps, warmup = iters(cfg)
    batches = common.mnist_like_batches(4, BATCH, seed=cfg["seed"])
    data = [(mx.nd.array(x.reshape(-1, 1, 28, 28)), mx.nd.array(y)) for x, y in batches]
    net = net_mx(mx)
    net.initialize(mx.init.Uniform(0.1))
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})

    def loop(n):
        acc = None
        for i in range(n):
            x, y = data[i % len(data)]
            with mx.autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(BATCH)
            if i % 10 == 0:
                acc = float((out.asnumpy().argmax(axis=1) == y.asnumpy()).mean())
        return acc
    loop(warmup)
    mx.nd.waitall()
    t0 = time.perf_counter()
    acc = loop(steps)
    mx.nd.waitall()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "warmup": warmup,
                                   "ms_per_step": 1e3 * dt / steps, "last_acc": acc}}


def run_mx(mx, cfg):
    return train_mx(mx, cfg, hybridize=True)


def run_torch(torch, cfg):
    from workloads import torch_models as tm
    steps, warmup = iters(cfg)
    batches = common.mnist_like_batches(4, BATCH, seed=cfg["seed"])
    data = [(torch.from_numpy(x).float().reshape(-1, 1, 28, 28), torch.from_numpy(y).long())
            for x, y in batches]
    model = tm.lenet(torch)
    tm.init_params(torch, model)
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def loop(n):
        acc = None
        for i in range(n):
            x, y = data[i % len(data)]
            opt.zero_grad()
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            if i % 10 == 0:
                acc = float((out.argmax(1) == y).float().mean())
        return acc
    loop(warmup)
    t0 = time.perf_counter()
    acc = loop(steps)
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "warmup": warmup,
                                   "ms_per_step": 1e3 * dt / steps, "last_acc": acc}}
