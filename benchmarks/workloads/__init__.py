"""One module per workload. Each defines ``run_mx(mx, cfg)`` (neomx and MXNet 1.9.1 run the same
tutorial code; ``mx`` is the imported module) and ``run_torch(torch, cfg)`` (plain PyTorch eager
written the natural way), both returning ``{"value": float, "extra": {...}}`` where ``value`` is
the workload's metric (see ``METRIC``). ``cfg`` holds ``quick`` (bool), ``threads`` and ``seed``.
"""
NAMES = ("mlp", "lenet", "lenet-2dev", "imperative", "bind", "memory", "dist", "autograd-mlp",
         "gluon-lenet", "gluon-lenet-imperative", "resnet18", "image-record-iter",
         "lstm-lm", "engine-bulk", "op-bench", "sparse")


def load(name):
    import importlib
    return importlib.import_module("workloads." + name.replace("-", "_"))
