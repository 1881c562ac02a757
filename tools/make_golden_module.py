#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's Module (``mx.mod.Module.fit``, checkpoints).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_module.py

Output goes to ``tests/golden/module/``:

* ``module.npz``   the inputs (``x_train``, ``y_train``, ``x_test``, ``y_test``), the initial
                   parameters (``init:<name>``) and, per case, the final parameters
                   (``<case>:arg:<name>``) and the predictions on ``x_test``
                   (``<case>:pred``)
* ``<case>-symbol.json``, ``<case>-0001.params``   ``Module.save_checkpoint(prefix, 1)`` after
                   training
* ``module.json``  per case: contexts, kvstore, optimizer settings, batch size, the logged
                   ``Train-accuracy`` of the epoch and ``score`` on the test set
* ``README.md``

The network is a tiny MLP (``fc1`` 8 relu -> ``fc2`` 3 -> SoftmaxOutput ``softmax``) on 36
deterministic examples of 6 features, trained for one epoch with batch size 8 (so the last
batch is padded with 4 examples from the start, which MXNet trains on), SGD with momentum and
weight decay, starting from fixed parameters passed as ``arg_params`` (no RNG involved).
Cases: ``one_ctx`` (cpu(0): no kvstore, per-device updater) and ``two_ctx`` (cpu(0), cpu(1):
kvstore 'local', update on the kvstore). Only mxnet, numpy and the stdlib are used.
"""
import json
import logging
import os

from _oracle_common import golden_dir

import numpy as np
import mxnet as mx

OUT = golden_dir('module')
GENERATOR = 'tools/make_golden_module.py'

BATCH_SIZE = 8
OPTIMIZER_PARAMS = {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.001}
CASES = {
    'one_ctx': {'contexts': ['cpu(0)'], 'kvstore': 'local'},
    'two_ctx': {'contexts': ['cpu(0)', 'cpu(1)'], 'kvstore': 'local'},
}


def mlp():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, name='fc1', num_hidden=8)
    act = mx.sym.Activation(fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(act, name='fc2', num_hidden=3)
    return mx.sym.SoftmaxOutput(fc2, name='softmax')


def make_data():
    """Deterministic, learnable data: class = argmax of three fixed projections."""
    n_train, n_test, d = 36, 13, 6
    idx = np.arange((n_train + n_test) * d, dtype=np.float64).reshape(-1, d)
    x = np.sin(idx * 0.37) + 0.5 * np.cos(idx * 0.11)
    proj = np.array([[1, -1, 0.5, 0, 0.2, -0.3], [-0.5, 1, 0, 1, -0.2, 0.1],
                     [0.3, 0.2, -1, -0.5, 1, 0.4]])
    y = np.argmax(x @ proj.T, axis=1)
    x = x.astype(np.float32)
    y = y.astype(np.float32)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def init_params(sym, data_shape):
    arg_shapes, _, _ = sym.infer_shape(data=data_shape)
    params = {}
    for k, (name, shape) in enumerate(zip(sym.list_arguments(), arg_shapes)):
        if name in ('data', 'softmax_label'):
            continue
        n = int(np.prod(shape))
        vals = np.cos(np.arange(n, dtype=np.float64) * (0.7 + 0.1 * k)) * 0.3
        params[name] = vals.reshape(shape).astype(np.float32)
    return params


def ctx_of(text):
    kind, rest = text.split('(')
    return mx.Context(kind, int(rest.rstrip(')')))


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def run_case(name, spec, x_train, y_train, x_test, y_test, init, arrays, meta):
    sym = mlp()
    train = mx.io.NDArrayIter(x_train, y_train, BATCH_SIZE, shuffle=False)
    test = mx.io.NDArrayIter(x_test, y_test, BATCH_SIZE, shuffle=False)
    mod = mx.mod.Module(sym, context=[ctx_of(c) for c in spec['contexts']])
    cap = _Capture()
    logging.getLogger().addHandler(cap)
    logging.getLogger().setLevel(logging.INFO)
    mod.fit(train, kvstore=spec['kvstore'], optimizer='sgd',
            optimizer_params=dict(OPTIMIZER_PARAMS),
            arg_params={k: mx.nd.array(v) for k, v in init.items()}, num_epoch=1)
    logging.getLogger().removeHandler(cap)
    prefix = os.path.join(OUT, name)
    mod.save_checkpoint(prefix, 1)
    arg_params, _ = mod.get_params()
    for k, v in arg_params.items():
        arrays['%s:arg:%s' % (name, k)] = v.asnumpy()
    arrays['%s:pred' % name] = mod.predict(test).asnumpy()
    meta[name] = dict(spec, batch_size=BATCH_SIZE, optimizer='sgd',
                      optimizer_params=OPTIMIZER_PARAMS, num_epoch=1,
                      log=[l for l in cap.lines if l.startswith('Epoch[0] Train')],
                      score=mod.score(test, 'acc'))


def main():
    os.makedirs(OUT, exist_ok=True)
    x_train, y_train, x_test, y_test = make_data()
    init = init_params(mlp(), (BATCH_SIZE, x_train.shape[1]))
    arrays = {'x_train': x_train, 'y_train': y_train, 'x_test': x_test, 'y_test': y_test}
    arrays.update({'init:' + k: v for k, v in init.items()})
    meta = {'generator': GENERATOR, 'mxnet_version': mx.__version__}
    for name, spec in CASES.items():
        run_case(name, spec, x_train, y_train, x_test, y_test, init, arrays, meta)
    np.savez(os.path.join(OUT, 'module.npz'), **arrays)
    with open(os.path.join(OUT, 'module.json'), 'w') as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write("# Module golden files\n\nWritten by `%s` with MXNet %s (run it with "
                "`tools/mxnet-oracle %s`); see that script's docstring for the "
                "contents.\n" % (GENERATOR, mx.__version__, GENERATOR))
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
