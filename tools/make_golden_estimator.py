#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.gluon.contrib.estimator``. Run it with the real
MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_estimator.py

Output goes to ``tests/golden/estimator/``: ``estimator.json`` (per case: the Estimator's log
lines with timings masked, the files of the checkpoint folder, the metrics after training) and
``estimator.npz`` (the data, ``init/<param>`` initial values, ``<case>/final/<param>`` the
parameters after training and ``<case>/file/<checkpoint file>/<key>`` the arrays of every
``.params`` file left in the checkpoint folder).

The net is ``net_`` = HybridSequential(Dense(4, tanh, in_units=3), Dense(3, in_units=4)) with
parameters ``init/<name>`` (seeded uniform), SoftmaxCrossEntropyLoss (so the default metrics
are accuracy and the loss), SGD (learning rate 0.1, momentum 0.9), 12 training samples and 8
validation samples in batches of 4 (no shuffling). Cases (``tests/gluon/test_estimator.py``
runs the same with neomx):

- ``epochs``: hybridized; fit(train, val, epochs=3) with LoggingHandler(log_interval=2) and
  CheckpointHandler(max_checkpoints=2, save_best on validation accuracy, verbose=1), then
  ``evaluate(val)``.
- ``batches``: fit(train, batches=5) with CheckpointHandler(batch_period=2, epoch_period=None),
  then a fresh net/trainer/estimator resumed from that folder for batches=7.
- ``early``: fit(train, epochs=5) with EarlyStoppingHandler(training loss, mode='max').

It also writes ``cnn_layers.json``/``cnn_layers.npz`` for ``gluon.contrib.cnn`` (the
deformable convolution layers): per case the parameter names and shapes before and after the
first forward, ``repr`` and, with parameters ``<case>/init/<name>`` (seeded uniform, offsets
included so the sampling grid really moves) on input ``<case>/x``, the hybridized and
imperative outputs ``<case>/y`` and the gradients ``<case>/grad/x`` and
``<case>/grad/<param>`` of ``sum(y * <case>/head)``. MXNet's CPU build has no backward for
ModulatedDeformableConvolution ("only implemented in GPU"): those cases record that error
(``grad_error``) instead of gradients.

Only mxnet, numpy and the stdlib are used.
"""
import io
import logging
import os
import re
import shutil
import tempfile
import warnings
from collections import OrderedDict

from _oracle_common import golden_dir, ints, rng_for, U, write_json

import mxnet as mx
from mxnet.gluon.contrib import estimator as E

OUT = golden_dir('estimator')
ARRAYS = OrderedDict()
CASES = OrderedDict()

R = rng_for('estimator/data')
ARRAYS['x_train'] = U(R, (12, 3))
ARRAYS['y_train'] = ints(R, (12,), 0, 3)
ARRAYS['x_val'] = U(R, (8, 3))
ARRAYS['y_val'] = ints(R, (8,), 0, 3)


def loaders():
    gd = mx.gluon.data
    train = gd.DataLoader(gd.ArrayDataset(mx.nd.array(ARRAYS['x_train']),
                                          mx.nd.array(ARRAYS['y_train'])), batch_size=4)
    val = gd.DataLoader(gd.ArrayDataset(mx.nd.array(ARRAYS['x_val']),
                                        mx.nd.array(ARRAYS['y_val'])), batch_size=4)
    return train, val


def make_estimator(hybridize=False):
    net = mx.gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation='tanh', in_units=3))
        net.add(mx.gluon.nn.Dense(3, in_units=4))
    net.initialize(ctx=mx.cpu())
    r = rng_for('estimator/init')
    for name in sorted(net.collect_params().keys()):
        p = net.collect_params()[name]
        v = U(r, p.shape, -0.5, 0.5)
        ARRAYS.setdefault(f'init/{name}', v)
        p.set_data(mx.nd.array(v))
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                               {'learning_rate': 0.1, 'momentum': 0.9})
    est = E.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                      context=mx.cpu())
    log = io.StringIO()
    est.logger.addHandler(logging.StreamHandler(log))
    return est, log


def masked_lines(text, folder):
    """Log lines with timings and the checkpoint folder masked."""
    if folder:
        text = text.replace(folder, '<dir>')
    text = re.sub(r'\d+\.\d{3}s', 'T.TTTs', text)
    text = re.sub(r'total \d+s', 'total Ts', text)
    return text.splitlines()


def record(cid, est, logs, folder):
    files = sorted(os.listdir(folder)) if folder else []
    for fname in files:
        if fname.endswith('.params'):
            for key, v in mx.nd.load(os.path.join(folder, fname)).items():
                ARRAYS[f'{cid}/file/{fname}/{key}'] = v.asnumpy()
    for name, p in est.net.collect_params().items():
        ARRAYS[f'{cid}/final/{name}'] = p.data().asnumpy()
    symbol = None
    if folder and 'model-symbol.json' in files:
        with open(os.path.join(folder, 'model-symbol.json')) as f:
            symbol = f.read()
    CASES[cid] = OrderedDict([
        ('logs', [line for text in logs for line in masked_lines(text, folder or '')]),
        ('files', files),
        ('symbol', symbol),
        ('train_metrics', [list(m.get()) for m in est.train_metrics]),
        ('val_metrics', [list(m.get()) for m in est.val_metrics]),
    ])


def case_epochs(tmp):
    folder = os.path.join(tmp, 'epochs')
    est, log = make_estimator(hybridize=True)
    train, val = loaders()
    handlers = [E.LoggingHandler(log_interval=2, metrics=est.train_metrics),
                E.CheckpointHandler(folder, model_prefix='model', monitor=est.val_metrics[0],
                                    verbose=1, save_best=True, max_checkpoints=2)]
    est.fit(train, val_data=val, epochs=3, event_handlers=handlers)
    est.evaluate(val)
    record('epochs', est, [log.getvalue()], folder)


def case_batches(tmp):
    folder = os.path.join(tmp, 'batches')
    est, log = make_estimator()
    train, _ = loaders()
    est.fit(train, batches=5, event_handlers=[
        E.CheckpointHandler(folder, batch_period=2, epoch_period=None)])
    first = log.getvalue()
    est, log = make_estimator()
    est.fit(train, batches=7, event_handlers=[
        E.CheckpointHandler(folder, batch_period=2, epoch_period=None,
                            resume_from_checkpoint=True)])
    record('batches', est, [first, log.getvalue()], folder)


def case_early():
    est, log = make_estimator()
    train, _ = loaders()
    est.fit(train, epochs=5, event_handlers=[
        E.EarlyStoppingHandler(est.train_metrics[1], mode='max')])
    record('early', est, [log.getvalue()], None)


CNN_CASES = [
    ('deform', 'DeformableConvolution', dict(channels=4, kernel_size=3, padding=1)),
    ('deform_groups', 'DeformableConvolution',
     dict(channels=4, kernel_size=(3, 2), strides=2, num_deformable_group=2, use_bias=False,
          activation='relu', in_channels=4)),
    ('modulated', 'ModulatedDeformableConvolution', dict(channels=3, kernel_size=3, padding=1)),
    ('modulated_nobias', 'ModulatedDeformableConvolution',
     dict(channels=2, kernel_size=2, dilation=2, offset_use_bias=False, in_channels=4,
          activation='tanh')),
]


def cnn_cases():
    from mxnet.gluon.contrib import cnn
    cases, arrays = OrderedDict(), OrderedDict()
    for cid, cls, kwargs in CNN_CASES:
        r = rng_for('estimator/cnn/' + cid)
        layer = getattr(cnn, cls)(prefix=cid + '_', **kwargs)
        before = [[n, list(p.shape)] for n, p in layer.collect_params().items()]
        text = repr(layer)
        x = U(r, (2, 4, 6, 5))
        layer.initialize()
        layer(mx.nd.array(x))
        for name, p in sorted(layer.collect_params().items()):
            v = U(r, p.shape, -0.5, 0.5)
            arrays[f'{cid}/init/{name}'] = v
            p.set_data(mx.nd.array(v))
        arrays[f'{cid}/x'] = x
        results = []
        grad_error = None
        for hybridize in (False, True):
            layer.hybridize(hybridize)
            xin = mx.nd.array(x)
            xin.attach_grad()
            with mx.autograd.record():
                y = layer(xin)
                head = U(rng_for('estimator/cnn/head/' + cid), y.shape)
                loss = (y * mx.nd.array(head)).sum()
            results.append(y.asnumpy())
            if hybridize:
                continue
            arrays[f'{cid}/head'] = head
            arrays[f'{cid}/y'] = results[0]
            try:
                loss.backward()
                grads = {'x': xin.grad.asnumpy()}
                for name, p in layer.collect_params().items():
                    grads[name] = p.grad().asnumpy()
            except mx.base.MXNetError as e:
                # MXNet 1.9.1's CPU build has no backward for the modulated layer
                grad_error = str(e).strip().splitlines()[-1]
                continue
            for name, v in grads.items():
                arrays[f'{cid}/grad/{name}'] = v
        cases[cid] = OrderedDict([
            ('cls', cls), ('kwargs', kwargs), ('params_before', before),
            ('params_after', [[n, list(p.shape)] for n, p in layer.collect_params().items()]),
            ('repr', text),
            ('hybrid_max_diff', float(abs(results[0] - results[1]).max())),
            ('grad_error', grad_error)])
    return cases, arrays


def main():
    warnings.simplefilter('ignore')
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='golden_estimator_')
    try:
        case_epochs(tmp)
        case_batches(tmp)
        case_early()
    finally:
        shutil.rmtree(tmp)
    import numpy as np
    np.savez(os.path.join(OUT, 'estimator.npz'), **ARRAYS)
    cases, arrays = cnn_cases()
    np.savez(os.path.join(OUT, 'cnn_layers.npz'), **arrays)
    write_json(os.path.join(OUT, 'cnn_layers.json'),
               OrderedDict([('mxnet', mx.__version__), ('script', 'tools/make_golden_estimator.py'),
                            ('cases', cases)]))
    write_json(os.path.join(OUT, 'estimator.json'),
               OrderedDict([('mxnet', mx.__version__), ('script', 'tools/make_golden_estimator.py'),
                            ('cases', CASES)]))


if __name__ == '__main__':
    main()
