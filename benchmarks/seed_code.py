"""The seed tutorial's code ("Mixed Programming", MXNet 1.x), parametrised by the ``mx`` module.

The same functions run with ``mx = neomx`` (project venv) and ``mx = mxnet`` (MXNet 1.9.1, the
oracle venv), so both peers execute exactly the tutorial's statements. Differences from the
tutorial, identical for both peers:

* data come from pre-generated synthetic batches (``data()`` just returns the next one), so data
  generation is never timed and nothing depends on the MNIST files;
* the loops take ``warmup`` extra iterations that run before the timed ``iterations`` (the first
  iteration of a fresh executor pays one-off costs, measured separately by the ``bind`` workload);
* ``train`` returns timings instead of printing, and ends every timed region with
  ``mx.nd.waitall()`` (both engines are asynchronous: without it the clock would stop while work
  is still queued).

This module must import nothing but numpy: it runs in both venvs.
"""
from __future__ import annotations

import time

import numpy as np


def build_mlp(mx, num_classes=10):
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=num_classes)
    net = mx.sym.SoftmaxOutput(data=net, name='out')
    return net


def lenet(mx):
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


def init_params(mx, args):
    """The tutorial's initialisation: uniform(-0.1, 0.1) weights, zero biases."""
    for name in args:
        data = args[name]
        if 'weight' in name:
            data[:] = mx.random.uniform(-0.1, 0.1, data.shape)
        if 'bias' in name:
            data[:] = 0


def mlp_loop(mx, ex, args, batches, iterations, batch_size=100, learning_rate=0.1):
    """The tutorial's perceptron loop body, over pre-generated ``batches`` (cycled)."""
    acc = 0
    for i in range(iterations):
        x, y = batches[i % len(batches)]
        args['data'][:] = x
        args['out_label'][:] = y
        ex.forward(is_train=True)
        ex.backward()
        for weight, grad in zip(ex.arg_arrays, ex.grad_arrays):
            weight[:] -= learning_rate * (grad / batch_size)
        if i % 10 == 0:
            acc = (mx.nd.argmax_channel(ex.outputs[0]).asnumpy() == y).sum()
    return acc


def train(mx, network, data_shape, data, devs, devs_power, iterations=50, warmup=0):
    """The tutorial's ``train`` (multi-device data parallelism), returning timings.

    Returns ``dict(setup_s, warmup_s, loop_s, acc)``: ``setup_s`` covers partitioning,
    ``simple_bind`` and initialisation, ``loop_s`` the ``iterations`` timed iterations that follow
    the ``warmup`` ones.
    """
    t0 = time.perf_counter()
    # partition the batch into each device
    batch_size = float(data_shape[0])
    workloads = [int(round(batch_size/sum(devs_power)*p)) for p in devs_power]
    # create an executor for each device
    exs = [network.simple_bind(ctx=d, data=tuple([p]+data_shape[1:])) for d, p in zip(devs, workloads)]
    args = [dict(zip(network.list_arguments(), ex.arg_arrays)) for ex in exs]
    # initialize weight on dev 0
    init_params(mx, args[0])
    mx.nd.waitall()
    t1 = time.perf_counter()
    learning_rate = 0.1
    acc = 0
    marks = []
    for i in range(warmup + iterations):
        if i == warmup:
            mx.nd.waitall()
            marks.append(time.perf_counter())
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
        # monitor (every 10th iteration, counted from the first timed one)
        if (i - warmup if i >= warmup else i) % 10 == 0:
            pred = np.concatenate([mx.nd.argmax_channel(ex.outputs[0]).asnumpy() for ex in exs])
            acc = (pred == y).sum() / batch_size
    mx.nd.waitall()
    t2 = time.perf_counter()
    if not marks:
        marks.append(t2)
    return {"setup_s": t1 - t0, "warmup_s": marks[0] - t1, "loop_s": t2 - marks[0], "acc": float(acc)}
