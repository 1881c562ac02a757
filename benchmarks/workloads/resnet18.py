"""``resnet18``: a ResNet-18 (the model zoo's ``resnet18_v1``) forward+backward+SGD step,
batch 32, 224x224, hybridized (``static_alloc``) with ``SoftmaxCrossEntropyLoss`` and
``gluon.Trainer('sgd')``; PyTorch eager runs torchvision's layout of the same network written
out here (torchvision is not a dependency). Metric: seconds for the steps after a warm-up."""
from __future__ import annotations

import time

import numpy as np

METRIC = ("time_s", "s", "ResNet-18 train steps, batch 32, 224x224, hybridized")
BATCH, SIZE, CLASSES, LR = 32, 224, 1000, 0.01


def iters(cfg):
    return (1, 1) if cfg["quick"] else (5, 2)


def _data(cfg, batch):
    rng = np.random.RandomState(cfg["seed"])
    x = rng.uniform(-1, 1, (batch, 3, SIZE, SIZE)).astype(np.float32)
    y = rng.randint(0, CLASSES, batch).astype(np.float32)
    return x, y


def run_mx(mx, cfg):
    steps, warmup = iters(cfg)
    batch = 8 if cfg["quick"] else BATCH
    x, y = _data(cfg, batch)
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=CLASSES)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR, "momentum": 0.9})
    xn, yn = mx.nd.array(x), mx.nd.array(y)

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(xn), yn)
        loss.backward()
        trainer.step(batch)
    for _ in range(warmup):
        step()
    mx.nd.waitall()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    mx.nd.waitall()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "batch": batch, "s_per_step": dt / steps}}


def _torch_resnet18(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(self.b2(self.c2(y)) + r)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, CLASSES)]
    return nn.Sequential(*layers)


def run_torch(torch, cfg):
    steps, warmup = iters(cfg)
    batch = 8 if cfg["quick"] else BATCH
    x, y = _data(cfg, batch)
    model = _torch_resnet18(torch)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
    for _ in range(warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "batch": batch, "s_per_step": dt / steps}}
