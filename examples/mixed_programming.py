"""The seed tutorial "Mixed Programming" (MXNet 1.x), run with neomx.

Every code cell of the tutorial runs as written, with ``import neomx as mx`` and the Python 3 fixes
the tutorial itself needs (integer division, ``list(zip(...))`` in prints).

    python examples/mixed_programming.py [--iterations 100] [--out-dir out]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import neomx as mx


# --- The tutorial's toy data -----------------------------------------------------------------
class ToyData:
    def __init__(self, num_classes, num_features):
        self.num_classes = num_classes
        self.num_features = num_features
        self.mu = np.random.rand(num_classes, num_features)
        self.sigma = np.ones((num_classes, num_features)) * 0.1

    def get(self, num_samples):
        num_cls_samples = num_samples // self.num_classes  # Python 3: integer division
        x = np.zeros((num_samples, self.num_features))
        y = np.zeros((num_samples, ))
        for i in range(self.num_classes):
            cls_samples = np.random.normal(self.mu[i, :], self.sigma[i, :], (num_cls_samples, self.num_features))
            x[i*num_cls_samples:(i+1)*num_cls_samples] = cls_samples
            y[i*num_cls_samples:(i+1)*num_cls_samples] = i
        return x, y

    def plot(self, x, y, fname=None):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        colors = ['r', 'b', 'g', 'c', 'y']
        plt.figure()
        for i in range(self.num_classes):
            cls_x = x[y == i]
            plt.scatter(cls_x[:, 0], cls_x[:, 1], color=colors[i % 5], s=1)
        if fname:
            plt.savefig(fname)
        plt.close()


def build_mlp(num_classes=10):
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=num_classes)
    net = mx.sym.SoftmaxOutput(data=net, name='out')
    return net


def train_mlp(iterations=100, ctx=None, out_dir=None, verbose=True):
    """The tutorial's first section: simple_bind, random init, hand-written SGD on NDArrays."""
    ctx = ctx or mx.cpu()
    num_classes = 10
    net = build_mlp(num_classes)
    if verbose:
        print(net.list_arguments())

    num_features = 100
    batch_size = 100
    ex = net.simple_bind(ctx=ctx, data=(batch_size, num_features))
    args = dict(zip(net.list_arguments(), ex.arg_arrays))
    if verbose:
        for name in args:
            print(name, args[name].shape)

    for name in args:
        data = args[name]
        if 'weight' in name:
            data[:] = mx.random.uniform(-0.1, 0.1, data.shape)
        if 'bias' in name:
            data[:] = 0

    toy_data = ToyData(num_classes, num_features)
    x, y = toy_data.get(1000)
    if out_dir:
        toy_data.plot(x, y, os.path.join(out_dir, "toy_data.png"))

    learning_rate = 0.1
    final_acc = 0
    for i in range(iterations):
        x, y = toy_data.get(batch_size)
        args['data'][:] = x
        args['out_label'][:] = y
        ex.forward(is_train=True)
        ex.backward()
        for weight, grad in zip(ex.arg_arrays, ex.grad_arrays):
            weight[:] -= learning_rate * (grad / batch_size)
        if i % 10 == 0:
            acc = (mx.nd.argmax_channel(ex.outputs[0]).asnumpy() == y).sum()
            final_acc = acc
            if verbose:
                print('iteration %d, accuracy %f' % (i, float(acc)/y.shape[0]))
    assert final_acc > 0.95, "Low training accuracy."
    return net, toy_data, float(final_acc) / batch_size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=100, help="perceptron iterations (default 100)")
    parser.add_argument("--out-dir", default="out", help="where plots are written")
    parser.add_argument("--seed", type=int, default=None, help="numpy/neomx seed")
    opts = parser.parse_args(argv)
    os.makedirs(opts.out_dir, exist_ok=True)
    if opts.seed is not None:
        np.random.seed(opts.seed)
        mx.random.seed(opts.seed)
    print("== Training a multilayer perceptron ==")
    tic = time.time()
    train_mlp(opts.iterations, out_dir=opts.out_dir)
    print("perceptron: %.2f s" % (time.time() - tic))
    return 0


if __name__ == "__main__":
    sys.exit(main())
