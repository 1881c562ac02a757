"""MXNet 1.9.1 golden runs of ``mx.contrib.svrg_optimization`` -> ``tests/golden/svrg/``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_svrg.py

A tiny linear regression (FullyConnected(num_hidden=1) + LinearRegressionOutput) on 22
examples of 3 features, in unshuffled batches of 5 (the last one padded by 3), starts from
fixed ``arg_params`` and is fitted by ``SVRGModule`` in these cases (``svrg.npz``, keys
``<case>/...``):

* ``plain``: one device, SGD lr 0.05, ``update_freq=2``, 4 epochs (full gradients at
  epochs 0 and 2, the second pass added to the first's average as MXNet does).
* ``momentum``: one device, SGD lr 0.05 momentum 0.9 wd 0.01, ``update_freq=1``, 3 epochs.
* ``twodev``: ``cpu(0)`` and ``cpu(1)`` with kvstore 'local' (updates in the store, the
  ``<param>_full`` keys), SGD lr 0.05, ``update_freq=2``, 3 epochs.
* ``fullgrad``: bind/init_params/init_optimizer then one ``update_full_grads``: the averaged
  full gradients.

Each fit case records the trained parameters, ``_param_dict`` (device 0) and the training
MSE after every batch (``mse``).
"""
import warnings

import numpy as np

from _oracle_common import golden_dir, rng_for
import mxnet as mx
from mxnet.contrib.svrg_optimization.svrg_module import SVRGModule

OUT = golden_dir('svrg')


def network():
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('lin_reg_label')
    fc = mx.sym.FullyConnected(data, num_hidden=1, name='fc1')
    return mx.sym.LinearRegressionOutput(fc, label, name='lro')


def make_iter(X, y):
    return mx.io.NDArrayIter(X, y, batch_size=5, shuffle=False, last_batch_handle='pad',
                             label_name='lin_reg_label')


def module(ctx, update_freq):
    return SVRGModule(network(), data_names=['data'], label_names=['lin_reg_label'],
                      context=ctx, update_freq=update_freq)


def fit_case(arrays, name, X, y, init, ctx, update_freq, num_epoch, opt_params, kvstore='local'):
    mod = module(ctx, update_freq)
    mses = []
    mod.fit(make_iter(X, y), eval_metric='mse', optimizer='sgd', optimizer_params=opt_params,
            num_epoch=num_epoch, kvstore=kvstore,
            arg_params={k: mx.nd.array(v) for k, v in init.items()},
            batch_end_callback=lambda p: mses.append(p.eval_metric.get()[1]))
    arg, _ = mod.get_params()
    arrays.update({f'{name}/trained/{k}': v.asnumpy() for k, v in arg.items()})
    arrays.update({f'{name}/full/{k}': v.asnumpy() for k, v in mod._param_dict[0].items()})
    arrays[f'{name}/mse'] = np.array(mses, dtype=np.float64)


def main():
    warnings.simplefilter('ignore', DeprecationWarning)
    import os
    os.makedirs(OUT, exist_ok=True)
    r = rng_for('svrg')
    X = r.uniform(-1, 1, (22, 3)).astype(np.float32)
    y = (X @ np.array([1.5, -2.0, 0.5], np.float32) + 0.3
         + 0.05 * r.randn(22)).astype(np.float32)
    init = {'fc1_weight': r.uniform(-0.5, 0.5, (1, 3)).astype(np.float32),
            'fc1_bias': np.zeros((1,), np.float32)}
    arrays = {'X': X, 'y': y}
    arrays.update({'init/' + k: v for k, v in init.items()})
    fit_case(arrays, 'plain', X, y, init, mx.cpu(), 2, 4, (('learning_rate', 0.05),))
    fit_case(arrays, 'momentum', X, y, init, mx.cpu(), 1, 3,
             (('learning_rate', 0.05), ('momentum', 0.9), ('wd', 0.01)))
    fit_case(arrays, 'twodev', X, y, init, [mx.cpu(0), mx.cpu(1)], 2, 3,
             (('learning_rate', 0.05),))

    mod = module(mx.cpu(), 1)
    di = make_iter(X, y)
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in init.items()})
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.05),))
    mod.update_full_grads(di)
    arrays.update({f'fullgrad/{k}': v.asnumpy() for k, v in mod._param_dict[0].items()})

    np.savez(os.path.join(OUT, 'svrg.npz'), **arrays)
    print('wrote', os.path.join(OUT, 'svrg.npz'), len(arrays), 'arrays')


if __name__ == '__main__':
    main()
