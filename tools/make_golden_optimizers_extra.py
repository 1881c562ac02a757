"""MXNet 1.9.1 golden steps of LARS, LBSGD, LAMB and contrib.GroupAdaGrad, and MXNet-written
Updater states files -> ``tests/golden/optimizers_extra/``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_optimizers_extra.py

Each case creates ``mx.optimizer.create(optimizer, **kwargs)`` (plus an lr scheduler and
``param_idx2name`` when given), starts from seeded weights and applies ``steps`` seeded
gradients, either through ``get_updater(opt)`` with the list of all indices at once
(``updater_list``: MXNet's aggregated path), one index at a time (``updater``), or through
``create_state_multi_precision``/``update_multi_precision`` (``direct``). Recorded: the
weights after every step, the learning rate, ``num_update`` and the final states
(``optimizers_extra.json`` + ``optimizers_extra.npz``). ``<case>.states`` holds
``updater.get_states(dump_optimizer=True)`` after the last step, the pickle MXNet's
``Module.save_optimizer_states`` / ``KVStore.save_optimizer_states`` write.
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import golden_dir, rng_for, write_json
import mxnet as mx

OUT = golden_dir('optimizers_extra')
ARRAYS = {}
F32, F16 = 'float32', 'float16'
NAMES = ['fc_weight', 'fc_bias', 'bn_gamma', 'bn_beta', 'out_weight']

# id, optimizer, kwargs, scheduler (cls, kwargs) or None, params [(shape, dtype)], steps, mode,
# idx2name (list of names or None)
CASES = [
    ('lars_names', 'lars', dict(learning_rate=0.1, momentum=0.9, eta=0.01, wd=1e-3,
                                rescale_grad=0.5, clip_gradient=0.8), None,
     [((3, 4), F32), ((3,), F32), ((3,), F32), ((3,), F32), ((2, 3), F32)], 3, 'updater_list',
     NAMES),
    ('lars_scheduler', 'lars', dict(momentum=0.9, eta=0.1, eps=1e-3),
     ('FactorScheduler', dict(step=1, factor=0.5, base_lr=0.2)),
     [((4, 2), F32), ((5,), F32)], 4, 'updater_list', None),
    ('lars_no_correction', 'lars', dict(momentum=0.9, eta=0.1, momentum_correction=False),
     ('FactorScheduler', dict(step=1, factor=0.5, base_lr=0.2)), [((4, 2), F32)], 3,
     'updater', None),
    ('lars_nomom', 'lars', dict(learning_rate=0.05, eta=0.02, wd=0.01), None,
     [((3, 3), F32), ((2,), F32)], 3, 'direct', None),
    ('lars_mp', 'lars', dict(learning_rate=0.1, momentum=0.9, eta=0.05, multi_precision=True),
     None, [((3, 4), F16), ((4,), F16)], 3, 'updater_list', None),
    ('lars_mp_nomom', 'lars', dict(learning_rate=0.1, eta=0.05, multi_precision=True), None,
     [((6,), F16)], 2, 'updater', None),
    ('lbsgd_default', 'lbsgd', dict(learning_rate=0.1, momentum=0.9, wd=0.01), None,
     [((3, 4), F32), ((4,), F32)], 3, 'updater', None),
    ('lbsgd_linear', 'lbsgd', dict(learning_rate=0.1, momentum=0.9, batch_scale=2,
                                   warmup_epochs=2, updates_per_epoch=2, clip_gradient=1.0),
     None, [((3, 4), F32)], 6, 'updater', None),
    ('lbsgd_power2', 'lbsgd', dict(learning_rate=0.1, batch_scale=3, warmup_epochs=2,
                                   updates_per_epoch=3, warmup_strategy='power2',
                                   rescale_grad=0.5), None, [((5,), F32)], 6, 'direct', None),
    ('lbsgd_sqrt_begin', 'lbsgd', dict(learning_rate=0.1, batch_scale=2, warmup_epochs=3,
                                       updates_per_epoch=2, warmup_strategy='sqrt',
                                       begin_epoch=1), None, [((5,), F32)], 5, 'updater', None),
    ('lbsgd_lars', 'lbsgd', dict(learning_rate=0.1, momentum=0.5, wd=0.01,
                                 warmup_strategy='lars'), None, [((3, 4), F32), ((4,), F32)], 3,
     'updater', None),
    ('lbsgd_mp', 'lbsgd', dict(learning_rate=0.1, momentum=0.9, multi_precision=True), None,
     [((6,), F16)], 3, 'updater', None),
    ('lamb_list', 'lamb', dict(learning_rate=0.01, wd=0.01), None,
     [((3, 4), F32), ((4,), F32), ((2, 2), F32)], 3, 'updater_list', None),
    ('lamb_list_bounds', 'lamb', dict(learning_rate=0.02, beta1=0.8, beta2=0.99, epsilon=1e-4,
                                      lower_bound=0.5, upper_bound=1.2, clip_gradient=0.7,
                                      rescale_grad=0.5, bias_correction=False), None,
     [((3, 4), F32), ((4,), F32)], 3, 'updater_list', None),
    ('lamb_direct', 'lamb', dict(learning_rate=0.02, wd=0.05, lower_bound=0.5, upper_bound=1.2,
                                 clip_gradient=0.7), None, [((3, 4), F32), ((4,), F32)], 3,
     'direct', None),
    ('lamb_mp_direct', 'lamb', dict(learning_rate=0.02, wd=0.01, multi_precision=True), None,
     [((3, 4), F16)], 3, 'direct', None),
    ('lamb_mp_list', 'lamb', dict(learning_rate=0.02, wd=0.01, multi_precision=True), None,
     [((3, 4), F16), ((5,), F16)], 3, 'updater_list', None),
    ('lamb_scheduler', 'lamb', dict(), ('PolyScheduler', dict(max_update=4, base_lr=0.05, pwr=2)),
     [((3, 4), F32)], 3, 'updater', None),
    ('groupadagrad', 'groupadagrad', dict(learning_rate=0.1, rescale_grad=0.5,
                                          clip_gradient=0.3), None, [((3, 4), F32)], 3,
     'updater', None),
    ('groupadagrad_default', 'groupadagrad', dict(), None, [((2, 5), F32)], 3, 'direct', None),
]
STATE_FILES = ('lars_names', 'lamb_list', 'lbsgd_default', 'groupadagrad')


def _state_struct(state, key):
    """JSON structure of a state (None / array key / list), storing arrays under ``key``."""
    if state is None:
        return None
    if isinstance(state, mx.nd.NDArray):
        ARRAYS[key] = state.asnumpy()
        return key
    return [_state_struct(s, '%s.%d' % (key, i)) for i, s in enumerate(state)]


def _make_opt(name, kw, sched, idx2name):
    kw = dict(kw)
    if sched is not None:
        kw['lr_scheduler'] = getattr(mx.lr_scheduler, sched[0])(**sched[1])
    if idx2name is not None:
        kw['param_idx2name'] = dict(enumerate(idx2name))
    return mx.optimizer.create(name, **kw)


def run_case(cid, name, kw, sched, params, steps, mode, idx2name):
    r = rng_for(cid)
    w0 = [r.uniform(-1, 1, shape).astype(dt) for shape, dt in params]
    grads = [[(r.randn(*shape) * 1.5).astype(dt) for shape, dt in params] for _ in range(steps)]
    for i, w in enumerate(w0):
        ARRAYS['%s/w0/%d' % (cid, i)] = w
    opt = _make_opt(name, kw, sched, idx2name)
    weights = [mx.nd.array(w, dtype=w.dtype) for w in w0]
    updater = mx.optimizer.get_updater(opt)
    states, lrs, num_updates = {}, [], []
    for s in range(steps):
        gs = [mx.nd.array(g, dtype=g.dtype) for g in grads[s]]
        for i, g in enumerate(grads[s]):
            ARRAYS['%s/g/%d/%d' % (cid, s, i)] = g
        if mode == 'updater_list':
            updater(list(range(len(weights))), gs, weights)
        elif mode == 'updater':
            for i, (g, w) in enumerate(zip(gs, weights)):
                updater(i, g, w)
        else:
            for i, (g, w) in enumerate(zip(gs, weights)):
                if i not in states:
                    states[i] = opt.create_state_multi_precision(i, w)
                opt.update_multi_precision(i, w, g, states[i])
        for i, w in enumerate(weights):
            ARRAYS['%s/w/%d/%d' % (cid, s, i)] = w.asnumpy()
        lrs.append(opt.learning_rate)
        num_updates.append(opt.num_update)
    final = updater.states if mode != 'direct' else states
    if cid in STATE_FILES:
        with open(os.path.join(OUT, cid + '.states'), 'wb') as f:
            f.write(updater.get_states(dump_optimizer=True))
    return OrderedDict(
        id=cid, optimizer=name, kwargs=kw, scheduler=sched,
        params=[[list(shape), dt] for shape, dt in params], steps=steps, mode=mode,
        idx2name=idx2name, lrs=lrs, num_updates=num_updates,
        states={str(i): _state_struct(st, '%s/state/%d' % (cid, i)) for i, st in final.items()},
        wd_mult={str(k): v for k, v in opt.wd_mult.items()})


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [run_case(*case) for case in CASES]
    opt = mx.optimizer.LBSGD()
    misc = OrderedDict(
        lbmult={s: [mx.optimizer.LBSGD(batch_scale=4, warmup_epochs=2, updates_per_epoch=2,
                                       warmup_strategy=s)._get_lbmult(n) for n in range(6)]
                for s in ('linear', 'power2', 'sqrt', 'lars', 'other')},
        lbsgd_attrs=[opt.momentum, opt.warmup_strategy, opt.warmup_epochs, opt.batch_scale,
                     opt.updates_per_epoch, opt.init_updates, opt.num_epochs, opt.lr],
        lamb_attrs=[mx.optimizer.LAMB().aggregate_num, mx.optimizer.LAMB().lr,
                    mx.optimizer.LAMB().epsilon],
        lars_attrs=[mx.optimizer.LARS().aggregate_num, mx.optimizer.LARS().eta,
                    mx.optimizer.LARS().eps, mx.optimizer.LARS().momentum_correction],
        registry=sorted(mx.optimizer.Optimizer.opt_registry),
    )
    try:  # GroupAdaGrad rejects weight decay at the update
        o = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
        w = mx.nd.ones((2, 2))
        o.update(0, w, mx.nd.ones((2, 2)), o.create_state(0, w))
    except AssertionError as e:
        misc['groupadagrad_wd_error'] = ['AssertionError', str(e)]
    try:
        mx.optimizer.contrib.GroupAdaGrad().create_state(0, mx.nd.ones((2,)))
    except AssertionError as e:
        misc['groupadagrad_1d_error'] = ['AssertionError', str(e)]
    write_json(os.path.join(OUT, 'optimizers_extra.json'),
               OrderedDict(generator='tools/make_golden_optimizers_extra.py',
                           mxnet=mx.__version__, cases=cases, misc=misc))
    np.savez_compressed(os.path.join(OUT, 'optimizers_extra.npz'), **ARRAYS)
    print('wrote %s (%d cases, %d arrays)' % (OUT, len(cases), len(ARRAYS)))


if __name__ == '__main__':
    main()
