"""Networks, data and settings shared by the dist training workers and the tests' reference
run (imported by both)."""
from __future__ import annotations

import numpy as np
import torch

import neomx as mx
from examples import mixed_programming

BATCH = 40          # the whole batch; each of W workers takes BATCH // W rows of it
EPOCHS = 2
OPT_PARAMS = (("learning_rate", 0.1), ("momentum", 0.9), ("wd", 1e-4))
SIZES = {"mlp": 400, "lenet": 160}


def network(name):
    """The seed tutorial's MLP or LeNet, with fresh automatic names."""
    with mx.name.NameManager():
        return mixed_programming.build_mlp() if name == "mlp" else mixed_programming.lenet()


def train_data(name):
    """``(x, y)``: the whole training set (every worker builds the same one)."""
    n = SIZES[name]
    if name == "mlp":  # the tutorial's ToyData clusters
        rng = np.random.RandomState(0)
        mu = rng.rand(10, 100)
        y = np.repeat(np.arange(10), n // 10).astype(np.float32)
        x = (mu[y.astype(int)] + 0.1 * rng.randn(n, 100)).astype(np.float32)
        p = rng.permutation(n)
        return x[p], y[p]
    mnist = mx.test_utils.get_mnist()
    return mnist["train_data"][:n], mnist["train_label"][:n].astype(np.float32)


def initial_params(name):
    """Deterministic starting parameters: U(-0.1, 0.1) weights, zero biases."""
    sym = network(name)
    shape = (BATCH, 100) if name == "mlp" else (BATCH, 1, 28, 28)
    arg_shapes, _, _ = sym.infer_shape(data=shape)
    rng = np.random.RandomState(1)
    out = {}
    for arg, s in zip(sym.list_arguments(), arg_shapes):
        if arg.endswith("_weight"):
            out[arg] = rng.uniform(-0.1, 0.1, s).astype(np.float32)
        elif arg.endswith("_bias"):
            out[arg] = np.zeros(s, np.float32)
    return out


def interleave(a, workers, batch=BATCH):
    """Reorder rows so that whole batch i is [shard_0 batch i, shard_1 batch i, ...] where
    shard_w is the w-th contiguous part (what NDArrayIter(num_parts=workers) gives worker w)."""
    n = a.shape[0]
    per = batch // workers
    return a.reshape(workers, n // (workers * per), per, *a.shape[1:]).swapaxes(0, 1) \
        .reshape(a.shape)


def reference(name, workers):
    """One process, whole batches, no KVStore: the parameters dist_sync must reproduce.

    Runs on one thread, as the workers do (OMP_NUM_THREADS=1): LeNet's convolutions sum in
    another order on several threads, which two epochs of SGD grow past the tests' tolerance.
    """
    x, y = train_data(name)
    it = mx.io.NDArrayIter(interleave(x, workers), interleave(y, workers), batch_size=BATCH,
                           label_name="out_label")
    mod = mx.mod.Module(network(name), label_names=("out_label",), context=mx.cpu())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        mod.fit(it, num_epoch=EPOCHS, kvstore="local", optimizer="sgd",
                optimizer_params=OPT_PARAMS,
                arg_params={k: mx.nd.array(v) for k, v in initial_params(name).items()},
                eval_metric="acc")
        arg, _ = mod.get_params()
        return {k: v.asnumpy() for k, v in arg.items()}
    finally:
        torch.set_num_threads(threads)
