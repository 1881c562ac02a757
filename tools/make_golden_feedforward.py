"""MXNet 1.9.1 golden run of ``mx.model.FeedForward`` -> ``tests/golden/feedforward/``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_feedforward.py

A two-layer net (FullyConnected-relu-FullyConnected-SoftmaxOutput) starts from fixed seeded
``arg_params`` and is fitted by ``FeedForward`` for 3 epochs with SGD (momentum, wd) on an
unshuffled ``NDArrayIter`` of 20 examples in batches of 8 (padded last batch). Recorded in
``feedforward.npz``: the data, the initial and the trained parameters, ``predict`` on the
data, ``predict(return_data=True)``'s data and labels and ``score`` (accuracy). ``ff-symbol.json``
and ``ff-0003.params`` are the checkpoint ``FeedForward.save`` wrote (for
``FeedForward.load``).
"""
import json
import os
import warnings

import numpy as np

from _oracle_common import golden_dir, rng_for
import mxnet as mx

OUT = golden_dir('feedforward')


def network():
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=6, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def main():
    warnings.simplefilter('ignore', DeprecationWarning)
    os.makedirs(OUT, exist_ok=True)
    r = rng_for('feedforward')
    X = r.uniform(-1, 1, (20, 5)).astype(np.float32)
    y = r.randint(0, 3, (20,)).astype(np.float32)
    shapes = {'fc1_weight': (6, 5), 'fc1_bias': (6,), 'fc2_weight': (3, 6), 'fc2_bias': (3,)}
    init = {k: r.uniform(-0.5, 0.5, s).astype(np.float32) for k, s in shapes.items()}
    arrays = {'X': X, 'y': y}
    arrays.update({'init/' + k: v for k, v in init.items()})
    model = mx.model.FeedForward(network(), num_epoch=3, optimizer='sgd', learning_rate=0.1,
                                 momentum=0.9, wd=0.01,
                                 arg_params={k: mx.nd.array(v) for k, v in init.items()})
    train = mx.io.NDArrayIter(X, y, batch_size=8, shuffle=False)
    model.fit(train)
    arrays.update({'trained/' + k: v.asnumpy() for k, v in model.arg_params.items()})
    test = mx.io.NDArrayIter(X, y, batch_size=8, shuffle=False)
    arrays['predict'] = model.predict(test)
    out, data, label = model.predict(test, return_data=True)
    arrays['predict_data'], arrays['predict_label'] = data, label
    arrays['predict_numpy'] = model.predict(X)  # numpy input: batches of min(20, 128)
    arrays['predict_2batches'] = model.predict(test, num_batch=2)
    score = model.score(test)
    model.save(os.path.join(OUT, 'ff'))
    np.savez_compressed(os.path.join(OUT, 'feedforward.npz'), **arrays)
    with open(os.path.join(OUT, 'feedforward.json'), 'w') as f:
        json.dump({'generator': 'tools/make_golden_feedforward.py', 'mxnet': mx.__version__,
                   'score': score, 'begin_epoch_after_load': 3}, f, indent=1)
        f.write('\n')
    print('wrote', OUT, 'score', score)


if __name__ == '__main__':
    main()
