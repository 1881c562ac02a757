#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.gluon.Trainer``. Run it with the real MXNet, from
the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_trainer.py

Output goes to ``tests/golden/gluon_trainer/``: ``gluon_trainer.json`` (cases, learning rates,
errors), ``gluon_trainer.npz`` and ``<id>.states`` files (``Trainer.save_states`` after two
steps). The network is ``net_`` = HybridSequential(Dense(4, tanh, in_units=3),
Dense(2, in_units=4)) with parameters ``init/<name>`` (seeded uniform), trained with L2Loss on
the batches ``x<k>``/``y<k>`` (6 samples each; batch k for step k, k = 0, 1, 2) by
``Trainer(net.collect_params(), optimizer, optimizer_params, **trainer_kwargs)``; ``step(6)``
after each backward. Per case the npz holds ``<id>/step<k>/<param name>`` (the values after
step k) and, for multi-context cases, the batch split evenly over ``cpu(0)``/``cpu(1)``
(``split_and_load``), with the parameters read back from ``cpu(1)``. Only mxnet, numpy and the
stdlib are used.
"""
import os
from collections import OrderedDict

from _oracle_common import F32, U, err_info, golden_dir, jsonable, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('gluon_trainer')
CASES = []
ERRORS = []
ARRAYS = OrderedDict()
BATCH = 6
STEPS = 3

R = rng_for('gluon_trainer/data')
DATA = [(U(R, (BATCH, 3)), U(R, (BATCH, 2))) for _ in range(STEPS)]
for k, (x, y) in enumerate(DATA):
    ARRAYS[f'x{k}'] = x
    ARRAYS[f'y{k}'] = y


def make_net(ctx):
    net = mx.gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation='tanh', in_units=3))
        net.add(mx.gluon.nn.Dense(2, in_units=4))
    net.initialize(ctx=ctx)
    r = rng_for('gluon_trainer/init')
    for name in sorted(net.collect_params().keys()):
        p = net.collect_params()[name]
        v = U(r, p.shape, -0.5, 0.5)
        ARRAYS.setdefault(f'init/{name}', v)
        p.set_data(mx.nd.array(v))
    return net


def run(cid, optimizer, opt_params, ctx=(mx.cpu(),), trainer_kwargs=None, mults=None,
        states_after=None, hybridize=False, scheduler=None):
    """``scheduler``: (step, factor) of a FactorScheduler given as ``lr_scheduler``."""
    ctx = list(ctx)
    trainer_kwargs = dict(trainer_kwargs or {})
    kv_instance = trainer_kwargs.get('kvstore') == 'instance:local'
    if kv_instance:
        trainer_kwargs['kvstore'] = mx.kv.create('local')
    if scheduler is not None:
        opt_params = dict(opt_params, lr_scheduler=mx.lr_scheduler.FactorScheduler(*scheduler))
    net = make_net(ctx)
    if hybridize:
        net.hybridize()
    params = net.collect_params()
    for name, (lr_mult, wd_mult) in (mults or {}).items():
        params[name].lr_mult = lr_mult
        params[name].wd_mult = wd_mult
    if isinstance(optimizer, str):
        trainer = mx.gluon.Trainer(params, optimizer, dict(opt_params), **(trainer_kwargs or {}))
    else:
        trainer = mx.gluon.Trainer(params, optimizer, **(trainer_kwargs or {}))
    loss_fn = mx.gluon.loss.L2Loss()
    lrs = []
    for k, (x, y) in enumerate(DATA):
        xs = mx.gluon.utils.split_and_load(mx.nd.array(x), ctx)
        ys = mx.gluon.utils.split_and_load(mx.nd.array(y), ctx)
        with mx.autograd.record():
            losses = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
        mx.autograd.backward(losses)
        trainer.step(BATCH)
        lrs.append(trainer.learning_rate)
        for name in sorted(params.keys()):
            ARRAYS[f'{cid}/step{k}/{name}'] = params[name].data(ctx[-1]).asnumpy()
        if states_after == k:
            trainer.save_states(os.path.join(OUT, f'{cid}.states'))
    CASES.append(OrderedDict([
        ('id', cid), ('optimizer', optimizer if isinstance(optimizer, str) else None),
        ('optimizer_params', jsonable({k: v for k, v in opt_params.items()
                                       if k != 'lr_scheduler'})),
        ('scheduler', scheduler), ('ctx', [str(c) for c in ctx]),
        ('trainer_kwargs', jsonable(dict(trainer_kwargs, kvstore='instance:local')
                                    if kv_instance else trainer_kwargs)), ('mults', jsonable(mults or {})),
        ('states_after', states_after), ('hybridize', hybridize), ('learning_rates', lrs),
        ('kvstore_type', trainer._kvstore.type if trainer._kvstore else None),
        ('update_on_kvstore', trainer._update_on_kvstore)]))


OPTIMIZERS = [
    ('sgd', 'sgd', {'learning_rate': 0.1}),
    ('sgd_momentum_wd', 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}),
    ('sgd_clip', 'sgd', {'learning_rate': 0.5, 'clip_gradient': 0.02, 'rescale_grad': 2.0}),
    ('nag', 'nag', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}),
    ('signum', 'signum', {'learning_rate': 0.01, 'momentum': 0.9, 'wd_lh': 0.01}),
    ('signsgd', 'signum', {'learning_rate': 0.01, 'momentum': 0.0}),
    ('adam', 'adam', {'learning_rate': 0.01, 'wd': 0.01}),
    ('adamax', 'adamax', {'learning_rate': 0.01}),
    ('nadam', 'nadam', {'learning_rate': 0.01}),
    ('adagrad', 'adagrad', {'learning_rate': 0.1, 'wd': 0.01}),
    ('adadelta', 'adadelta', {'rho': 0.9, 'epsilon': 1e-5}),
    ('rmsprop', 'rmsprop', {'learning_rate': 0.01}),
    ('rmsprop_centered', 'rmsprop', {'learning_rate': 0.01, 'centered': True,
                                     'clip_weights': 0.3}),
    ('ftrl', 'ftrl', {'learning_rate': 0.1, 'lamda1': 0.01, 'beta': 1.0}),
    ('ftml', 'ftml', {'learning_rate': 0.01}),
    ('dcasgd', 'dcasgd', {'learning_rate': 0.1, 'lamda': 0.04}),
]


def cases():
    for cid, name, prm in OPTIMIZERS:
        run(cid, name, prm, states_after=1 if cid in ('sgd_momentum_wd', 'adam', 'rmsprop_centered')
            else None)
    run('sgd_mults', 'sgd', {'learning_rate': 0.1, 'wd': 0.1},
        mults={'net_dense0_weight': (0.5, 0.0), 'net_dense1_bias': (2.0, 1.0)})
    run('sgd_scheduler', 'sgd', {'learning_rate': 0.2, 'momentum': 0.5}, scheduler=(1, 0.5))
    run('adam_instance', mx.optimizer.Adam(learning_rate=0.02, beta1=0.8), {})
    run('adam_hybridized', 'adam', {'learning_rate': 0.01, 'wd': 0.01}, hybridize=True)
    two = (mx.cpu(0), mx.cpu(1))
    run('multi_device', 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}, two,
        states_after=1)
    run('multi_local', 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}, two,
        {'kvstore': 'local'})
    run('multi_no_update_on_kv', 'adam', {'learning_rate': 0.01, 'wd': 0.01}, two,
        {'update_on_kvstore': False}, states_after=1)
    run('multi_on_kv_adam', 'adam', {'learning_rate': 0.01, 'wd': 0.01}, two, states_after=1)
    run('multi_no_kvstore', 'sgd', {'learning_rate': 0.1}, two, {'kvstore': None})
    run('one_ctx_local_kv', 'adam', {'learning_rate': 0.01}, (mx.cpu(),),
        {'kvstore': 'instance:local'})


def error(eid, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        ERRORS.append(OrderedDict([('id', eid)] + list(err_info(e, (
            AssertionError, ValueError, UserWarning, RuntimeError, TypeError, AttributeError,
            mx.base.MXNetError)).items())))
    else:
        raise AssertionError(f'{eid}: no error')


def _trained(ctx=(mx.cpu(),), **kw):
    net = make_net(list(ctx))
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, **kw)
    return net, trainer


def _backward(net, ctx=(mx.cpu(),)):
    for c in ctx:
        with mx.autograd.record():
            loss = net(mx.nd.array(DATA[0][0], ctx=c)).sum()
        loss.backward()


def errors():
    def stale():
        net, tr = _trained()
        _backward(net)
        tr.step(1)
        tr.step(1)
    error('stale_grad', stale)

    def stale_partial():
        net, tr = _trained()
        with mx.autograd.record():
            loss = net[0](mx.nd.array(DATA[0][0])).sum()
        loss.backward()
        tr.step(1)
    error('stale_grad_unused_layer', stale_partial)

    two = (mx.cpu(0), mx.cpu(1))

    def upd_on_kv():
        net, tr = _trained(two)
        _backward(net, two)
        tr.update(1)
    error('update_on_kvstore_update', upd_on_kv)

    def allreduce_on_kv():
        net, tr = _trained(two)
        _backward(net, two)
        tr.allreduce_grads()
    error('update_on_kvstore_allreduce', allreduce_on_kv)

    def lr_sched():
        net = make_net([mx.cpu()])
        tr = mx.gluon.Trainer(net.collect_params(), 'sgd',
                              {'lr_scheduler': mx.lr_scheduler.FactorScheduler(1, 0.5)})
        tr.set_learning_rate(0.1)
    error('set_learning_rate_scheduler', lr_sched)

    def kv_none_update_on_kv():
        net, tr = _trained(kvstore=None, update_on_kvstore=True)
        _backward(net)
        tr.step(1)
    error('kvstore_none_update_on_kvstore', kv_none_update_on_kv)

    def instance_with_params():
        net = make_net([mx.cpu()])
        mx.gluon.Trainer(net.collect_params(), mx.optimizer.SGD(), {'learning_rate': 0.1})
    error('optimizer_instance_with_params', instance_with_params)

    def not_params():
        mx.gluon.Trainer([1, 2], 'sgd')
    error('params_not_parameters', not_params)

    def not_list():
        mx.gluon.Trainer(mx.gluon.Parameter('w', shape=(2,)), 'sgd')
    error('params_not_list', not_list)

    def mixed_ctx():
        a = mx.gluon.Parameter('a', shape=(2,))
        b = mx.gluon.Parameter('b', shape=(2,))
        a.initialize(ctx=mx.cpu(0))
        b.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
        mx.gluon.Trainer([a, b], 'sgd')
    error('params_mixed_contexts', mixed_ctx)

    def uninitialized():
        mx.gluon.Trainer([mx.gluon.Parameter('u', shape=(2,))], 'sgd')
    error('params_uninitialized', uninitialized)

    def bad_kvstore():
        net, tr = _trained(kvstore=3)
        _backward(net)
        tr.step(1)
    error('kvstore_bad_type', bad_kvstore)

    def unknown_optimizer():
        net = make_net([mx.cpu()])
        mx.gluon.Trainer(net.collect_params(), 'nosuchopt')
    error('unknown_optimizer', unknown_optimizer)

    def compression_local():
        net, tr = _trained(two, kvstore='local', compression_params={'type': '2bit',
                                                                     'threshold': 0.5})
        _backward(net, two)
        tr.step(1)
    error('compression_local_kvstore', compression_local)


def main():
    os.makedirs(OUT, exist_ok=True)
    cases()
    errors()
    write_json(os.path.join(OUT, 'gluon_trainer.json'),
               OrderedDict([('mxnet_version', mx.__version__), ('batch', BATCH),
                            ('cases', CASES), ('errors', ERRORS)]))
    np.savez_compressed(os.path.join(OUT, 'gluon_trainer.npz'), **ARRAYS)
    print(f'{len(CASES)} cases, {len(ERRORS)} errors, {len(ARRAYS)} arrays -> {OUT}')


if __name__ == '__main__':
    main()
