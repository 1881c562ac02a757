"""The tutorial's networks in plain PyTorch eager, written the way a PyTorch user would.

SoftmaxOutput's gradient is ``softmax - one_hot`` per sample, unnormalised: the same as
``cross_entropy(..., reduction="sum")``; the tutorial's ``w -= lr * grad / batch`` update is
``SGD(lr=lr / batch)``.
"""
from __future__ import annotations


def mlp(torch, num_features=100, num_classes=10):
    nn = torch.nn
    return nn.Sequential(nn.Linear(num_features, 128), nn.ReLU(), nn.Linear(128, num_classes))


def lenet(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(800, 500), nn.Tanh(),
        nn.Linear(500, 10))


def init_params(torch, model):
    """The tutorial's initialisation: uniform(-0.1, 0.1) weights, zero biases."""
    for name, p in model.named_parameters():
        if name.endswith("weight"):
            torch.nn.init.uniform_(p, -0.1, 0.1)
        else:
            torch.nn.init.zeros_(p)


def train_step(torch, model, opt, x, y, shape, monitor):
    """One step; returns the batch accuracy when ``monitor`` (like the tutorial's every-10 check)."""
    xt = torch.from_numpy(x).float().reshape(shape)
    yt = torch.from_numpy(y).long()
    opt.zero_grad()
    out = model(xt)
    loss = torch.nn.functional.cross_entropy(out, yt, reduction="sum")
    loss.backward()
    opt.step()
    if monitor:
        return float((out.argmax(1).numpy() == y).sum()) / len(y)
    return None
