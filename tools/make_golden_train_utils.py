#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's initializers, optimizers, lr schedulers and
metrics. Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_train_utils.py

Output goes to ``tests/golden/train_utils/`` (see the README written there). Inputs come from
``np.random.RandomState`` seeded by the CRC32 of the case id and are stored with the results,
so tests replay exactly what MXNet saw. Nothing depends on MXNet's random generator except the
``random_stats`` of random initializers (sample statistics of large draws). Only mxnet, numpy
and the stdlib are used.
"""
import os
import warnings
from collections import OrderedDict

from _oracle_common import golden_dir, jsonable, mask_timestamps, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('train_utils')
GENERATOR = 'tools/make_golden_train_utils.py'
ARRAYS = OrderedDict()
warnings.simplefilter('ignore')


def err_info(e):
    return OrderedDict([('error_type', type(e).__name__), ('error', mask_timestamps(str(e)))])


def capture(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return err_info(e)
    raise AssertionError('expected an error')


# ============================================================================ initializers

INIT_DUMPS = [
    ('Uniform()', lambda: mx.init.Uniform()),
    ('Uniform(0.1)', lambda: mx.init.Uniform(0.1)),
    ('Normal(0.5)', lambda: mx.init.Normal(0.5)),
    ('Xavier()', lambda: mx.init.Xavier()),
    ("Xavier(rnd_type='gaussian', factor_type='in', magnitude=2.34)",
     lambda: mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2.34)),
    ('MSRAPrelu()', lambda: mx.init.MSRAPrelu()),
    ("MSRAPrelu('out', 0.1)", lambda: mx.init.MSRAPrelu('out', 0.1)),
    ('Constant(2.5)', lambda: mx.init.Constant(2.5)),
    ('Constant(np.array([[1, 2], [3, 4]]))', lambda: mx.init.Constant(np.array([[1, 2], [3, 4]]))),
    ('Zero()', lambda: mx.init.Zero()),
    ('One()', lambda: mx.init.One()),
    ('Orthogonal()', lambda: mx.init.Orthogonal()),
    ('Bilinear()', lambda: mx.init.Bilinear()),
    ('LSTMBias(2.0)', lambda: mx.init.LSTMBias(2.0)),
]

# deterministic initializers applied by name: (case id, initializer code, name, attrs, shape)
INIT_APPLY = [
    ('const_weight', 'Constant(3.0)', 'fc1_weight', None, (2, 3)),
    ('const_bias', 'Constant(3.0)', 'fc1_bias', None, (3,)),
    ('const_gamma', 'Constant(3.0)', 'bn_gamma', None, (3,)),
    ('const_beta', 'Constant(3.0)', 'bn_beta', None, (3,)),
    ('const_min', 'Constant(3.0)', 'q_min', None, (2,)),
    ('const_max', 'Constant(3.0)', 'q_max', None, (2,)),
    ('const_array', 'Constant(np.array([[1, 2, 3], [4, 5, 6]]))', 'fc1_weight', None, (2, 3)),
    ('one_weight', 'One()', 'fc1_weight', None, (2, 2)),
    ('one_bias', 'One()', 'fc1_bias', None, (2,)),
    ('zero_gamma', 'Zero()', 'bn_gamma', None, (2,)),
    ('attr_init_bias', 'Zero()', 'fc1_bias', {'__init__': '["constant", {"value": 5.0}]'}, (3,)),
    ('attr_init_anyname', 'Zero()', 'foo', {'__init__': '["one", {}]'}, (3,)),
    ('attr_init_moving_mean', 'One()', 'bn_moving_mean', {'__init__': '["zero", {}]'}, (3,)),
    ('attr_init_moving_var', 'Zero()', 'bn_moving_var', {'__init__': '["one", {}]'}, (3,)),
    ('attr_init_lstmbias', 'Zero()', 'lstm_i2h_bias', {'__init__': mx.init.LSTMBias(1.5).dumps()}, (8,)),
    ('bilinear_2x1x4x4', 'Bilinear()', 'up_weight', None, (2, 1, 4, 4)),
    ('bilinear_1x1x3x5', 'Bilinear()', 'up_weight', None, (1, 1, 3, 5)),
    ('lstmbias_weight', 'LSTMBias(forget_bias=2.0)', 'x_weight', None, (12,)),
    ('mixed_bias', "Mixed(['bias', '.*'], [Zero(), One()])", 'fc_bias', None, (3,)),
    ('mixed_other', "Mixed(['bias', '.*'], [Zero(), One()])", 'fc_weight', None, (3,)),
    ('mixed_first_match', "Mixed(['fc', '.*'], [Constant(7.0), One()])", 'fc_bias', None, (2,)),
    ('load_prefixed', "Load({'arg:fc_weight': mx.nd.array([1, 2, 3.0])}, default_init=One())",
     'fc_weight', None, (3,)),
    ('load_default', "Load({'arg:fc_weight': mx.nd.array([1, 2, 3.0])}, default_init=Constant(4.0))",
     'fc_bias', None, (3,)),
]

# legacy init(str, arr) names, with One() and Constant(2.0)
LEGACY_NAMES = ['fc_weight', 'fc_bias', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var',
                'bn_moving_inv_var', 'bn_moving_avg', 'q_min', 'q_max', 'stn_loc_weight',
                'stn_loc_bias', 'upsampling0_weight']

INIT_ERRORS = [
    ('unknown_pattern', "Uniform()(InitDesc('foo'), mx.nd.zeros((2,)))"),
    ('unknown_moving_mean', "Uniform()(InitDesc('bn_moving_mean'), mx.nd.zeros((2,)))"),
    ('xavier_vector', "Xavier()(InitDesc('fc_weight'), mx.nd.zeros((4,)))"),
    ('xavier_factor', "Xavier(factor_type='bad')(InitDesc('fc_weight'), mx.nd.zeros((4, 4)))"),
    ('xavier_rnd', "Xavier(rnd_type='bad')(InitDesc('fc_weight'), mx.nd.zeros((4, 4)))"),
    ('create_unknown', "mx.init.create('nosuchinit')"),
    ('create_instance_args', "mx.init.create(One(), 3)"),
    ('mixed_no_match', "Mixed(['bias'], [Zero()])(InitDesc('fc_weight'), mx.nd.zeros((2,)))"),
    ('load_missing', "Load({'a_weight': mx.nd.zeros((2,))})('b_weight', mx.nd.zeros((2,)))"),
    ('load_shape', "Load({'a_weight': mx.nd.zeros((2,))})('a_weight', mx.nd.zeros((3,)))"),
    ('base_weight', "Initializer()(InitDesc('fc_weight'), mx.nd.zeros((2,)))"),
    ('legacy_not_str', "Uniform()._legacy_init(3, mx.nd.zeros((2,)))"),
]

# random initializers: sample statistics of one large draw (shape, init code)
INIT_RANDOM = [
    ('uniform_default', 'Uniform()', (200, 300)),
    ('uniform_0.5', 'Uniform(0.5)', (200, 300)),
    ('normal_0.5', 'Normal(0.5)', (200, 300)),
    ('xavier_avg', 'Xavier()', (64, 32, 3, 3)),
    ('xavier_in_gauss', "Xavier(rnd_type='gaussian', factor_type='in', magnitude=2)", (64, 32, 3, 3)),
    ('xavier_out', "Xavier(factor_type='out', magnitude=6)", (300, 200)),
    ('msraprelu', 'MSRAPrelu()', (64, 32, 3, 3)),
    ('msraprelu_in', "MSRAPrelu('in', 0.0)", (256, 512)),
]


def init_env():
    env = {k: getattr(mx.init, k) for k in ('Uniform', 'Normal', 'Xavier', 'MSRAPrelu', 'Constant',
                                           'Zero', 'One', 'Orthogonal', 'Bilinear', 'LSTMBias',
                                           'Mixed', 'Load', 'InitDesc', 'Initializer')}
    env.update(mx=mx, np=np)
    return env


def make_initializers():
    env = init_env()
    out = OrderedDict(generator=GENERATOR, mxnet=mx.__version__)
    out['dumps'] = [OrderedDict(code=c, dumps=f().dumps()) for c, f in INIT_DUMPS]
    created = []
    for spec in ['zeros', 'ones', 'Zero', 'uniform', 'xavier', 'msraprelu', 'constant',
                 '["normal", {"sigma": 0.5}]', '{"initializer": "uniform", "scale": 0.2}',
                 mx.init.Xavier(magnitude=2).dumps()]:
        kw = {'value': 1.5} if spec == 'constant' else {}
        init = mx.init.create(spec, **kw)
        created.append(OrderedDict(spec=spec, kwargs=kw, cls=type(init).__name__, dumps=init.dumps()))
    out['create'] = created
    apply = []
    for cid, code, name, attrs, shape in INIT_APPLY:
        init = eval(code, env)
        arr = mx.nd.full(shape, -9.0)
        desc = mx.init.InitDesc(name, attrs)
        init(desc, arr)
        ARRAYS['init/' + cid] = arr.asnumpy()
        apply.append(OrderedDict(id=cid, code=code, name=name, attrs=attrs, shape=list(shape)))
    out['apply'] = apply
    legacy = []
    for code in ('One()', 'Constant(2.0)'):
        for name in LEGACY_NAMES:
            shape = (6,) if name == 'stn_loc_bias' else ((1, 1, 4, 4) if 'upsampling' in name else (3,))
            arr = mx.nd.full(shape, -9.0)
            eval(code, env)(name, arr)
            key = f'legacy/{code}/{name}'
            ARRAYS[key] = arr.asnumpy()
            legacy.append(OrderedDict(code=code, name=name, shape=list(shape), key=key))
    out['legacy'] = legacy
    out['errors'] = [OrderedDict(id=cid, code=code, **capture(lambda: eval(code, env)))
                     for cid, code in INIT_ERRORS]
    stats = []
    mx.random.seed(0)
    for cid, code, shape in INIT_RANDOM:
        arr = mx.nd.zeros(shape)
        eval(code, env)(mx.init.InitDesc('w_weight'), arr)
        a = arr.asnumpy().astype(np.float64)
        stats.append(OrderedDict(id=cid, code=code, shape=list(shape), mean=a.mean(), std=a.std(),
                                 min=a.min(), max=a.max()))
    out['random_stats'] = stats
    # Orthogonal: rows (or columns) orthonormal times scale
    arr = mx.nd.zeros((4, 6))
    mx.init.Orthogonal(scale=2.0)(mx.init.InitDesc('o_weight'), arr)
    a = arr.asnumpy()
    out['orthogonal_gram'] = (a @ a.T).round(4).tolist()
    return out


# ============================================================================ lr schedulers

SCHEDULERS = [
    ('factor', 'FactorScheduler', dict(step=3, factor=0.5, base_lr=1.0), list(range(0, 21))),
    ('factor_stop', 'FactorScheduler', dict(step=2, factor=0.1, stop_factor_lr=1e-3, base_lr=1.0),
     list(range(0, 13))),
    ('factor_jumps', 'FactorScheduler', dict(step=4, factor=0.5, base_lr=0.8), [1, 10, 10, 35, 36, 3]),
    ('factor_warmup_linear', 'FactorScheduler',
     dict(step=3, factor=0.5, base_lr=1.0, warmup_steps=5, warmup_begin_lr=0.1), list(range(0, 16))),
    ('factor_warmup_constant', 'FactorScheduler',
     dict(step=3, factor=0.5, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2,
          warmup_mode='constant'), list(range(0, 12))),
    ('multifactor', 'MultiFactorScheduler', dict(step=[3, 7, 10], factor=0.5, base_lr=1.0),
     list(range(0, 16))),
    ('multifactor_warmup', 'MultiFactorScheduler',
     dict(step=[5, 8], factor=0.1, base_lr=2.0, warmup_steps=3, warmup_begin_lr=0.5),
     list(range(0, 12))),
    ('multifactor_jump', 'MultiFactorScheduler', dict(step=[2, 4, 6], factor=0.5), [1, 20, 3]),
    ('poly', 'PolyScheduler', dict(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1),
     list(range(0, 15))),
    ('poly_warmup', 'PolyScheduler',
     dict(max_update=12, base_lr=0.5, pwr=1, warmup_steps=3, warmup_begin_lr=0.1), list(range(0, 16))),
    ('cosine', 'CosineScheduler', dict(max_update=10, base_lr=1.0, final_lr=0.1), list(range(0, 15))),
    ('cosine_warmup', 'CosineScheduler',
     dict(max_update=10, base_lr=1.0, warmup_steps=2, warmup_begin_lr=0.0), list(range(0, 13))),
]

SCHED_ERRORS = [
    ('factor_step0', "FactorScheduler(step=0)"),
    ('factor_gt1', "FactorScheduler(step=2, factor=1.5)"),
    ('multi_not_increasing', "MultiFactorScheduler(step=[3, 3])"),
    ('multi_step0', "MultiFactorScheduler(step=[0, 2])"),
    ('multi_gt1', "MultiFactorScheduler(step=[2], factor=2)"),
    ('multi_not_list', "MultiFactorScheduler(step=(2, 3))"),
    ('poly_max0', "PolyScheduler(max_update=0)"),
    ('cosine_max0', "CosineScheduler(max_update=0)"),
    ('warmup_begin_gt_base', "FactorScheduler(step=2, base_lr=0.1, warmup_begin_lr=0.5)"),
    ('warmup_negative', "FactorScheduler(step=2, warmup_steps=-1)"),
    ('warmup_mode', "FactorScheduler(step=2, warmup_mode='exp')"),
    ('warmup_not_int', "FactorScheduler(step=2, warmup_steps=2.0)"),
    ('base_call', "LRScheduler()(3)"),
]


def make_schedulers():
    env = {k: getattr(mx.lr_scheduler, k) for k in ('LRScheduler', 'FactorScheduler',
                                                   'MultiFactorScheduler', 'PolyScheduler',
                                                   'CosineScheduler')}
    cases = []
    for cid, cls, kw, calls in SCHEDULERS:
        s = getattr(mx.lr_scheduler, cls)(**kw)
        lrs = [s(n) for n in calls]
        cases.append(OrderedDict(id=cid, cls=cls, kwargs=kw, calls=calls, lrs=lrs,
                                 base_lr_after=s.base_lr))
    errors = [OrderedDict(id=cid, code=code, **capture(lambda: eval(code, env)))
              for cid, code in SCHED_ERRORS]
    return OrderedDict(generator=GENERATOR, mxnet=mx.__version__, cases=cases, errors=errors)


# ============================================================================ optimizers

NAMES5 = ['fc1_weight', 'fc1_bias', 'bn_gamma', 'bn_beta', 'fc2_weight']
F32, F16 = 'float32', 'float16'

# id, optimizer, kwargs, scheduler (cls, kwargs) or None, params [(shape, dtype)], steps, mode,
# idx2name (list of names or None)
OPT_CASES = [
    ('sgd_plain', 'sgd', dict(learning_rate=0.1), None, [((3, 4), F32), ((4,), F32)], 3,
     'updater_list', None),
    ('sgd_mom_all', 'sgd', dict(learning_rate=0.05, momentum=0.9, wd=0.01, clip_gradient=0.5,
                                rescale_grad=0.25), None,
     [((3, 4), F32), ((3,), F32), ((3,), F32), ((3,), F32), ((2, 3), F32)], 4, 'updater_list',
     NAMES5),
    ('sgd_mom_factor', 'sgd', dict(learning_rate=0.2, momentum=0.5),
     ('FactorScheduler', dict(step=2, factor=0.5, base_lr=0.1)), [((5,), F32), ((2, 2), F32)], 6,
     'updater', None),
    ('sgd_direct_multifactor', 'sgd', dict(momentum=0.9, wd=0.001, begin_num_update=3),
     ('MultiFactorScheduler', dict(step=[4, 6], factor=0.1, base_lr=0.5)), [((4,), F32)], 5,
     'direct', None),
    ('sgd_cosine_override', 'sgd', dict(learning_rate=0.5),
     ('CosineScheduler', dict(max_update=6, base_lr=0.1, warmup_steps=2, warmup_begin_lr=0.01)),
     [((3,), F32), ((3,), F32)], 8, 'updater_list', None),
    ('sgd_clip_zero', 'sgd', dict(learning_rate=0.1, clip_gradient=0), None, [((4,), F32)], 2,
     'updater', None),
    ('sgd_negative_momentum', 'sgd', dict(learning_rate=0.1, momentum=-0.5), None, [((4,), F32)], 2,
     'updater', None),
    ('sgd_mp_mom', 'sgd', dict(learning_rate=0.1, momentum=0.9, wd=0.01, multi_precision=True),
     None, [((3, 4), F16), ((4,), F16), ((2,), F32)], 3, 'updater_list', None),
    ('sgd_mp_nomom', 'sgd', dict(learning_rate=0.1, multi_precision=True, clip_gradient=1.0),
     None, [((6,), F16)], 3, 'updater', None),
    ('sgd_f16_nomp', 'sgd', dict(learning_rate=0.1, momentum=0.9), None, [((6,), F16)], 2,
     'updater', None),
    ('ccsgd', 'ccsgd', dict(learning_rate=0.1, momentum=0.9), None, [((4,), F32)], 2, 'updater', None),
    ('nag_mom', 'nag', dict(learning_rate=0.1, momentum=0.9, wd=0.01, clip_gradient=0.8,
                            rescale_grad=0.5), None, [((3, 4), F32), ((4,), F32)], 4, 'updater',
     None),
    ('nag_nomom', 'nag', dict(learning_rate=0.1, wd=0.01), None, [((5,), F32)], 3, 'updater', None),
    ('nag_mp', 'nag', dict(learning_rate=0.1, momentum=0.9, multi_precision=True), None,
     [((5,), F16)], 3, 'updater', None),
    ('signum', 'signum', dict(learning_rate=0.05, momentum=0.9, wd=0.01, wd_lh=0.02,
                              clip_gradient=0.3, rescale_grad=2.0), None, [((3, 4), F32)], 4,
     'updater', None),
    ('signsgd', 'signum', dict(learning_rate=0.05, momentum=0.0, wd=0.1), None, [((6,), F32)], 3,
     'updater', None),
    ('adam_default', 'adam', dict(), None, [((3, 4), F32), ((4,), F32)], 4, 'updater', None),
    ('adam_all', 'adam', dict(learning_rate=0.01, beta1=0.8, beta2=0.99, epsilon=1e-6, wd=0.1,
                              clip_gradient=0.5, rescale_grad=0.5),
     ('PolyScheduler', dict(max_update=5, base_lr=0.01, pwr=2)),
     [((3, 4), F32), ((3,), F32), ((3,), F32), ((3,), F32), ((2, 3), F32)], 6, 'updater_list',
     NAMES5),
    ('adam_mp', 'adam', dict(learning_rate=0.01, multi_precision=True), None,
     [((6,), F16), ((2,), F32)], 3, 'updater_list', None),
    ('adam_direct', 'adam', dict(learning_rate=0.02, wd=0.01), None, [((4,), F32)], 3, 'direct', None),
    ('adagrad', 'adagrad', dict(learning_rate=0.1, wd=0.01, eps=1e-6, clip_gradient=1.0,
                                rescale_grad=0.5), None, [((3, 4), F32), ((4,), F32)], 4, 'updater',
     None),
    ('adagrad_default', 'adagrad', dict(), None, [((5,), F32)], 3, 'updater', None),
    ('rmsprop', 'rmsprop', dict(learning_rate=0.01, gamma1=0.8, epsilon=1e-4, wd=0.01,
                                clip_gradient=1.0, rescale_grad=0.5), None, [((3, 4), F32)], 4,
     'updater', None),
    ('rmsprop_clipw', 'rmsprop', dict(learning_rate=0.1, clip_weights=0.3), None, [((6,), F32)], 3,
     'updater', None),
    ('rmsprop_centered', 'rmsprop', dict(learning_rate=0.01, gamma1=0.9, gamma2=0.8, centered=True,
                                         epsilon=1e-4, wd=0.01, clip_gradient=0.8,
                                         clip_weights=2.0), None, [((3, 4), F32), ((3,), F32)], 4,
     'updater', None),
    ('adadelta', 'adadelta', dict(rho=0.8, epsilon=1e-4, wd=0.01, rescale_grad=0.5,
                                  clip_gradient=0.6), None, [((3, 4), F32)], 4, 'updater', None),
    ('adadelta_default', 'adadelta', dict(), None, [((5,), F32)], 3, 'updater', None),
    ('ftrl', 'ftrl', dict(lamda1=0.05, learning_rate=0.2, beta=0.5, wd=0.01, clip_gradient=1.0,
                          rescale_grad=0.5), None, [((3, 4), F32)], 4, 'updater', None),
    ('ftrl_default', 'ftrl', dict(), None, [((6,), F32)], 3, 'updater', None),
    ('ftrl_scheduler', 'ftrl', dict(), ('FactorScheduler', dict(step=1, factor=0.5, base_lr=0.3)),
     [((6,), F32)], 3, 'updater', None),
    ('ftml', 'ftml', dict(learning_rate=0.01, beta1=0.6, beta2=0.99, wd=0.01, clip_gradient=1.0),
     None, [((3, 4), F32)], 4, 'updater', None),
    ('adamax', 'adamax', dict(learning_rate=0.01, wd=0.01, clip_gradient=1.0, rescale_grad=0.5),
     None, [((3, 4), F32)], 4, 'updater', None),
    ('nadam', 'nadam', dict(learning_rate=0.01, wd=0.01, clip_gradient=1.0), None,
     [((3, 4), F32), ((3,), F32)], 4, 'updater', None),
    ('dcasgd', 'dcasgd', dict(learning_rate=0.1, lamda=0.1, wd=0.01, clip_gradient=1.0), None,
     [((3, 4), F32)], 4, 'updater', None),
    ('test', 'test', dict(rescale_grad=0.5), None, [((4,), F32)], 2, 'updater', None),
]


def _opt_arrays(cid, params, steps):
    r = rng_for(cid)
    w0 = [r.uniform(-1, 1, shape).astype(dt) for shape, dt in params]
    grads = [[(r.randn(*shape) * 1.5).astype(dt) for shape, dt in params] for _ in range(steps)]
    return w0, grads


def _state_struct(state, key, arrays):
    """JSON structure of a state (None / array key / list), storing arrays under ``key``."""
    if state is None:
        return None
    if isinstance(state, mx.nd.NDArray):
        arrays[key] = state.asnumpy()
        return key
    return [_state_struct(s, f'{key}.{i}', arrays) for i, s in enumerate(state)]


def _make_opt(name, kw, sched, idx2name):
    kw = dict(kw)
    if sched is not None:
        kw['lr_scheduler'] = getattr(mx.lr_scheduler, sched[0])(**sched[1])
    if idx2name is not None:
        kw['param_idx2name'] = dict(enumerate(idx2name))
    return mx.optimizer.create(name, **kw)


def make_optimizers():
    cases = []
    for cid, name, kw, sched, params, steps, mode, idx2name in OPT_CASES:
        w0, grads = _opt_arrays(cid, params, steps)
        for i, w in enumerate(w0):
            ARRAYS[f'opt/{cid}/w0/{i}'] = w
        opt = _make_opt(name, kw, sched, idx2name)
        weights = [mx.nd.array(w, dtype=w.dtype) for w in w0]
        updater = mx.optimizer.get_updater(opt)
        states = {}
        lrs, num_updates = [], []
        for s in range(steps):
            gs = [mx.nd.array(g, dtype=g.dtype) for g in grads[s]]
            for i, g in enumerate(grads[s]):
                ARRAYS[f'opt/{cid}/g/{s}/{i}'] = g
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
            for i, (g, w) in enumerate(zip(gs, weights)):
                ARRAYS[f'opt/{cid}/w/{s}/{i}'] = w.asnumpy()
                ARRAYS[f'opt/{cid}/gafter/{s}/{i}'] = g.asnumpy()
            lrs.append(opt.learning_rate)
            num_updates.append(opt.num_update)
        final_states = updater.states if mode != 'direct' else states
        struct = {str(i): _state_struct(st, f'opt/{cid}/state/{i}', ARRAYS)
                  for i, st in final_states.items()}
        cases.append(OrderedDict(
            id=cid, optimizer=name, kwargs=kw, scheduler=sched,
            params=[[list(shape), dt] for shape, dt in params], steps=steps, mode=mode,
            idx2name=idx2name, lrs=lrs, num_updates=num_updates, states=struct,
            index_update_count={str(k): v for k, v in opt._index_update_count.items()},
            lr_mult={str(k): v for k, v in opt.lr_mult.items()},
            wd_mult={str(k): v for k, v in opt.wd_mult.items()}))
    return cases


def make_opt_misc():
    out = OrderedDict()
    # multipliers: idx2name rule, symbol attributes, explicit multipliers
    data = mx.sym.Variable('data')
    w = mx.sym.Variable('fc1_weight', lr_mult=2.0)
    b = mx.sym.Variable('fc1_bias', wd_mult=0.5)
    fc = mx.sym.FullyConnected(data, weight=w, bias=b, num_hidden=4, name='fc1')
    g = mx.sym.Variable('bn_gamma', lr_mult=0.1, wd_mult=3.0)
    net = mx.sym.BatchNorm(fc, gamma=g, name='bn')
    names = ['fc1_weight', 'fc1_bias', 'bn_gamma', 'bn_beta', 'other']
    mults = []
    for cid, kw, lr_m, wd_m in [
            ('idx2name', dict(param_idx2name=dict(enumerate(names)), wd=0.1, learning_rate=0.5),
             None, None),
            ('sym', dict(sym=net, param_idx2name=dict(enumerate(names)), wd=0.1, learning_rate=0.5),
             None, None),
            ('sym_no_idx2name', dict(sym=net, wd=0.1, learning_rate=0.5), None, None),
            ('explicit', dict(sym=net, param_idx2name=dict(enumerate(names)), wd=0.1,
                              learning_rate=0.5), {'fc1_weight': 3.0, 1: 4.0},
             {'bn_beta': 2.0, 0: 5.0}),
            ('plain', dict(wd=0.1, learning_rate=0.5), {0: 2.0}, {1: 0.0})]:
        opt = mx.optimizer.create('sgd', **kw)
        if lr_m is not None:
            opt.set_lr_mult(lr_m)
        if wd_m is not None:
            opt.set_wd_mult(wd_m)
        mults.append(OrderedDict(
            id=cid, with_sym='sym' in kw, idx2name='param_idx2name' in kw,
            set_lr_mult=None if lr_m is None else [[k, v] for k, v in lr_m.items()],
            set_wd_mult=None if wd_m is None else [[k, v] for k, v in wd_m.items()],
            lr_mult=[[k, v] for k, v in opt.lr_mult.items()],
            wd_mult=[[k, v] for k, v in opt.wd_mult.items()],
            lrs=[opt._get_lr(i) for i in range(6)], wds=[opt._get_wd(i) for i in range(6)]))
    out['mults'] = mults
    out['names'] = names
    # update counting: per device, begin_num_update
    opt = mx.optimizer.create('sgd', begin_num_update=5)
    upd = mx.optimizer.get_updater(opt)
    a0, a1 = mx.nd.zeros((2,), ctx=mx.cpu(0)), mx.nd.zeros((2,), ctx=mx.cpu(1))
    upd(0, mx.nd.ones((2,)), a0)
    upd(1, mx.nd.ones((2,), ctx=mx.cpu(1)), a1)
    upd(0, mx.nd.ones((2,)), a0)
    upd(0, mx.nd.ones((2,), ctx=mx.cpu(1)), a1)
    out['counts'] = OrderedDict(
        num_update=opt.num_update,
        all_counts={str(k): {str(i): c for i, c in v.items()}
                    for k, v in opt._all_index_update_counts.items()},
        a0=a0.asnumpy().tolist(), a1=a1.asnumpy().tolist())
    # the learning_rate property, defaults and errors
    defaults = OrderedDict()
    for n in ['sgd', 'nag', 'signum', 'adam', 'adamax', 'nadam', 'adagrad', 'rmsprop', 'adadelta',
              'ftrl', 'ftml', 'dcasgd', 'sgld', 'ccsgd', 'test']:
        o = mx.optimizer.create(n)
        defaults[n] = OrderedDict(lr=o.lr, learning_rate=o.learning_rate, wd=o.wd,
                                  rescale_grad=o.rescale_grad, clip_gradient=o.clip_gradient,
                                  aggregate_num=o.aggregate_num, cls=type(o).__name__)
    out['defaults'] = defaults
    out['registry'] = sorted(mx.optimizer.Optimizer.opt_registry)
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    o = mx.optimizer.create('sgd', lr_scheduler=sched)
    o.num_update = 5
    out['scheduler_lr'] = OrderedDict(no_override=o.learning_rate, lr=o.lr)
    env = dict(mx=mx)
    out['errors'] = [OrderedDict(id=cid, code=code, **capture(lambda: exec(code, env)))
                     for cid, code in [
        ('create_unknown', "mx.optimizer.create('nosuchopt')"),
        ('set_lr_with_scheduler',
         "o = mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(2)); "
         "o.set_learning_rate(0.1)"),
        ('set_lr_scale', "mx.optimizer.SGD().set_lr_scale({})"),
        ('idx2name_not_dict', "mx.optimizer.SGD(param_idx2name=[1])"),
        ('base_update', "mx.optimizer.Optimizer().update(0, mx.nd.ones((1,)), mx.nd.ones((1,)), None)"),
        ('dcasgd_momentum',
         "o = mx.optimizer.DCASGD(momentum=0.9); w = mx.nd.ones((3,)); "
         "o.update(0, w, mx.nd.ones((3,)), o.create_state(0, w))"),
    ]]
    o = mx.optimizer.SGD(learning_rate=0.3)
    o.set_learning_rate(0.7)
    out['set_learning_rate'] = o.learning_rate
    return out


# ============================================================================ metrics

def _cls_probs(r, n, c):
    p = r.uniform(0.05, 1.0, (n, c)).astype(np.float32)
    return p / p.sum(axis=1, keepdims=True)


def _labels(r, n, c):
    return r.randint(0, c, (n,)).astype(np.float32)


def _bin(r, n):
    # ensure both classes appear in labels
    lab = r.randint(0, 2, (n,)).astype(np.float32)
    lab[0], lab[1] = 0, 1
    return lab


# id, create spec (json), kwargs, generator of a list of updates [(labels, preds)]
def _acc_updates(r):
    return [([_labels(r, 6, 3)], [_cls_probs(r, 6, 3)]),
            ([_labels(r, 4, 3), _labels(r, 5, 3)], [_cls_probs(r, 4, 3), _cls_probs(r, 5, 3)])]


METRIC_CASES = [
    ('acc', 'acc', {}, _acc_updates),
    ('accuracy_same_shape', 'accuracy', {},
     lambda r: [([_labels(r, 8, 3)], [_labels(r, 8, 3)]),
                ([r.randint(0, 3, (2, 4)).astype(np.float32)], [r.randint(0, 3, (2, 4)).astype(np.float32)])]),
    ('acc_axis0', 'acc', {'axis': 0},
     lambda r: [([_labels(r, 3, 5)], [_cls_probs(r, 5, 3)])]),
    ('acc_float_labels', 'acc', {},
     lambda r: [([np.array([0.9, 1.7, 2.2, 0.0], np.float32)], [_cls_probs(r, 4, 3)])]),
    ('top_k_3', 'top_k_accuracy', {'top_k': 3},
     lambda r: [([_labels(r, 10, 6)], [r.permutation(60).reshape(10, 6).astype(np.float32)]),
                ([_labels(r, 7, 6)], [r.permutation(42).reshape(7, 6).astype(np.float32)])]),
    ('top_k_acc_all_classes', 'top_k_acc', {'top_k': 3},
     lambda r: [([_labels(r, 6, 3)], [r.permutation(18).reshape(6, 3).astype(np.float32)])]),
    ('top_k_1d', 'top_k_accuracy', {'top_k': 2},
     lambda r: [([np.array([2, 0, 1, 2], np.float32)], [np.array([0.1, 0.9, 0.3, 0.5], np.float32)])]),
    ('f1_macro', 'f1', {},
     lambda r: [([_bin(r, 10)], [_cls_probs(r, 10, 2)]), ([_bin(r, 7)], [_cls_probs(r, 7, 2)]),
                ([np.zeros(4, np.float32)], [_cls_probs(r, 4, 2)])]),
    ('f1_micro', 'f1', {'average': 'micro'},
     lambda r: [([_bin(r, 10)], [_cls_probs(r, 10, 2)]), ([_bin(r, 7)], [_cls_probs(r, 7, 2)])]),
    ('mcc_macro', 'mcc', {},
     lambda r: [([_bin(r, 12)], [_cls_probs(r, 12, 2)]), ([_bin(r, 9)], [_cls_probs(r, 9, 2)])]),
    ('mcc_micro', 'mcc', {'average': 'micro'},
     lambda r: [([_bin(r, 12)], [_cls_probs(r, 12, 2)]), ([_bin(r, 9)], [_cls_probs(r, 9, 2)])]),
    ('perplexity_none', 'perplexity', {'ignore_label': None},
     lambda r: [([_labels(r, 8, 4)], [_cls_probs(r, 8, 4)]),
                ([_labels(r, 5, 4), _labels(r, 3, 4)], [_cls_probs(r, 5, 4), _cls_probs(r, 3, 4)])]),
    ('perplexity_ignore', 'perplexity', {'ignore_label': 0},
     lambda r: [([_labels(r, 10, 4)], [_cls_probs(r, 10, 4)]),
                ([_labels(r, 6, 4)], [_cls_probs(r, 6, 4)])]),
    ('perplexity_tiny_prob', 'perplexity', {'ignore_label': -1},
     lambda r: [([np.array([0, 1, -1], np.float32)],
                 [np.array([[0.0, 1.0], [0.5, 0.5], [0.3, 0.7]], np.float32)])]),
    ('mae', 'mae', {},
     lambda r: [([r.randn(6).astype(np.float32)], [r.randn(6).astype(np.float32)]),
                ([r.randn(4, 3).astype(np.float32)], [r.randn(4, 3).astype(np.float32)])]),
    ('mse', 'mse', {},
     lambda r: [([r.randn(6).astype(np.float32)], [r.randn(6, 1).astype(np.float32)]),
                ([r.randn(3).astype(np.float32), r.randn(5).astype(np.float32)],
                 [r.randn(3).astype(np.float32), r.randn(5).astype(np.float32)])]),
    ('mse_broadcast', 'mse', {},
     lambda r: [([r.randn(4).astype(np.float32)], [r.randn(4, 3).astype(np.float32)])]),
    ('rmse', 'rmse', {},
     lambda r: [([r.randn(6).astype(np.float32)], [r.randn(6).astype(np.float32)]),
                ([r.randn(4, 2).astype(np.float32)], [r.randn(4, 2).astype(np.float32)])]),
    ('ce', 'ce', {},
     lambda r: [([_labels(r, 6, 4)], [_cls_probs(r, 6, 4)]),
                ([_labels(r, 3, 4).reshape(3, 1)], [_cls_probs(r, 3, 4)])]),
    ('ce_zero_prob', 'crossentropy', {'eps': 1e-8},
     lambda r: [([np.array([0, 1], np.float32)], [np.array([[0.0, 1.0], [0.4, 0.6]], np.float32)])]),
    ('nll', 'nll_loss', {},
     lambda r: [([_labels(r, 6, 4)], [_cls_probs(r, 6, 4)]), ([_labels(r, 2, 4)], [_cls_probs(r, 2, 4)])]),
    ('pearsonr_macro', 'pearsonr', {},
     lambda r: [([r.randn(10).astype(np.float32)], [r.randn(10).astype(np.float32)]),
                ([r.randn(3, 4).astype(np.float32)], [r.randn(3, 4).astype(np.float32)])]),
    ('pearsonr_micro', 'pearsonr', {'average': 'micro'},
     lambda r: [([r.randn(10).astype(np.float32)], [r.randn(10).astype(np.float32)]),
                ([r.randn(3, 4).astype(np.float32)], [r.randn(3, 4).astype(np.float32)])]),
    ('pcc', 'pcc', {},
     lambda r: [([_labels(r, 12, 3)], [_cls_probs(r, 12, 3)]),
                ([_labels(r, 9, 5)], [_labels(r, 9, 5)])]),
    ('loss', 'loss', {},
     lambda r: [([], [r.randn(4).astype(np.float32)]),
                ([], [r.randn(2, 3).astype(np.float32), r.randn(5).astype(np.float32)])]),
    ('torch', 'torch', {}, lambda r: [([], [r.randn(4).astype(np.float32)])]),
    ('caffe', 'caffe', {}, lambda r: [([], [r.randn(4).astype(np.float32)])]),
    ('composite', ['acc', 'ce', 'mse'], {}, _acc_updates),
    ('composite_alias', 'composite', {'metrics': ['acc', 'nll_loss']}, _acc_updates),
]


def _metric_state(m):
    return OrderedDict(get=jsonable(m.get()), get_global=jsonable(m.get_global()),
                       name_value=jsonable(m.get_name_value()),
                       global_name_value=jsonable(m.get_global_name_value()),
                       num_inst=jsonable(getattr(m, 'num_inst', None)),
                       global_num_inst=jsonable(getattr(m, 'global_num_inst', None)))


def make_metrics():
    cases = []
    for cid, spec, kw, gen in METRIC_CASES:
        r = rng_for(cid)
        updates = gen(r)
        m = mx.metric.create(spec, **kw)
        after = []
        for u, (labels, preds) in enumerate(updates):
            for i, a in enumerate(labels):
                ARRAYS[f'metric/{cid}/{u}/label/{i}'] = a
            for i, a in enumerate(preds):
                ARRAYS[f'metric/{cid}/{u}/pred/{i}'] = a
            m.update([mx.nd.array(a) for a in labels], [mx.nd.array(a) for a in preds])
            after.append(_metric_state(m))
        m.reset_local()
        after_reset_local = _metric_state(m)
        m.reset()
        after_reset = _metric_state(m)
        config = None
        try:
            config = jsonable(m.get_config())
        except Exception as e:  # noqa: BLE001
            config = err_info(e)
        cases.append(OrderedDict(
            id=cid, spec=spec, kwargs=kw, cls=type(m).__name__, name=m.name,
            updates=[[len(lab), len(pred)] for lab, pred in updates], after=after,
            after_reset_local=after_reset_local, after_reset=after_reset, config=config))
    return cases


def make_metric_misc():
    out = OrderedDict()
    # custom metrics
    def tuple_feval(label, pred):
        return float(np.abs(label - pred).sum()), label.size

    def scalar_feval(label, pred):
        return float(np.abs(label - pred).mean())

    lab = [mx.nd.array([1, 2, 3]), mx.nd.array([0, 1])]
    pred = [mx.nd.array([1, 4, 4]), mx.nd.array([1, 1])]
    custom = OrderedDict()
    for cid, m in [('tuple', mx.metric.create(tuple_feval)),
                   ('scalar', mx.metric.CustomMetric(scalar_feval)),
                   ('named', mx.metric.CustomMetric(scalar_feval, name='mine')),
                   ('lambda', mx.metric.create(lambda l, p: float((l == p).mean()))),
                   ('np', mx.metric.np(scalar_feval)),
                   ('extra', mx.metric.CustomMetric(scalar_feval, allow_extra_outputs=True))]:
        if cid == 'extra':
            m.update(lab[:1], pred)
        else:
            m.update(lab, pred)
        custom[cid] = OrderedDict(name=m.name, get=jsonable(m.get()), num_inst=m.num_inst)
    out['custom'] = custom
    # create / names
    names = OrderedDict()
    for spec in ['acc', 'accuracy', 'ce', 'crossentropy', 'mse', 'MSE', 'rmse',
                 'mae', 'f1', 'mcc', 'top_k_accuracy', 'top_k_acc', 'nll_loss',
                 'negativeloglikelihood', 'pearsonr', 'pearsoncorrelation', 'pcc', 'loss',
                 'perplexity', 'composite', 'compositeevalmetric', 'torch', 'caffe']:
        kw = {'top_k': 2} if spec.startswith('top_k') else ({'ignore_label': None}
                                                             if spec == 'perplexity' else {})
        m = mx.metric.create(spec, **kw)
        names[spec] = OrderedDict(cls=type(m).__name__, name=m.name)
    out['names'] = names
    comp = mx.metric.create(['acc', 'mse', mx.metric.F1()])
    out['composite_list'] = [type(c).__name__ for c in comp.metrics]
    out['composite_get_metric_oob'] = repr(comp.get_metric(7))
    out['str_empty'] = str(mx.metric.Accuracy())
    env = dict(mx=mx, np=np)
    out['errors'] = [OrderedDict(id=cid, code=code, **capture(lambda: exec(code, env)))
                     for cid, code in [
        ('label_count', "mx.metric.Accuracy().update([mx.nd.array([1])], [mx.nd.array([1]), mx.nd.array([1])])"),
        ('acc_size', "mx.metric.Accuracy().update([mx.nd.array([1, 0, 1])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8]])])"),
        ('f1_multiclass', "mx.metric.F1().update([mx.nd.array([0, 1, 2])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8], [0.5, 0.5]])])"),
        ('topk_1', "mx.metric.TopKAccuracy(top_k=1)"),
        ('topk_gt_classes', "mx.metric.TopKAccuracy(top_k=5).update([mx.nd.array([0, 1])], [mx.nd.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])])"),
        ('topk_3d', "mx.metric.TopKAccuracy(top_k=2).update([mx.nd.array([0])], [mx.nd.ones((1, 2, 3))])"),
        ('create_unknown', "mx.metric.create('nosuchmetric')"),
        ('create_display_name', "mx.metric.create('cross-entropy')"),
        ('custom_config', "mx.metric.CustomMetric(lambda l, p: 0.0).get_config()"),
        ('pearson_shape', "mx.metric.PearsonCorrelation().update([mx.nd.array([1, 2])], [mx.nd.array([1, 2, 3])])"),
        ('ce_count', "mx.metric.CrossEntropy().update([mx.nd.array([1, 0, 1])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8]])])"),
    ]]
    return out


# ============================================================================ main

README = """# MXNet 1.9.1 golden fixtures: initializers, optimizers, lr schedulers, metrics

Reference results from the real Apache MXNet 1.9.1 (numpy 1.23), written by
`tools/make_golden_train_utils.py`, for `tests/train_utils/`. To regenerate, run
`tools/mxnet-oracle tools/make_golden_train_utils.py` from the repository root.

* `initializers.json`: `dumps` strings, `create` results, `apply` (deterministic initializers
  called as `init(InitDesc(name, attrs), arr)` on an array filled with -9; result in the npz
  under `init/<id>`), `legacy` (`init(str, arr)`, npz `legacy/<code>/<name>`), `errors`
  (type and text), `random_stats` (mean/std/min/max of one large draw of each random
  initializer: MXNet's generator differs from neomx's, so tests compare statistics with a
  tolerance), `orthogonal_gram` (`W W^T` of Orthogonal(scale=2) on (4, 6)).
* `lr_schedulers.json`: each scheduler's learning rates for the recorded `calls` sequence of
  `num_update` values (schedulers are stateful), and constructor errors.
* `optimizers.json`: each case creates `mx.optimizer.create(optimizer, **kwargs)` (plus the
  `scheduler` and `param_idx2name = dict(enumerate(idx2name))`), then runs `steps` steps:
  `updater_list` calls `get_updater(opt)(list(range(n)), grads, weights)` once per step,
  `updater` calls it per index, `direct` calls `create_state_multi_precision` once and
  `update_multi_precision` per step. The npz holds `opt/<id>/w0/<i>` (initial weights),
  `opt/<id>/g/<step>/<i>` (gradients), `opt/<id>/w/<step>/<i>` (weights after the step),
  `opt/<id>/gafter/<step>/<i>` (gradients after the step: AdaDelta rescales them in place) and
  the final states `opt/<id>/state/<i>[.<k>...]` (`states` gives the nesting, null for None).
  `lrs`/`num_updates` are `opt.learning_rate`/`opt.num_update` after each step.
  `misc` has lr/wd multipliers (idx2name rule, symbol `__lr_mult__`/`__wd_mult__`, explicit
  `set_*_mult`), per-device update counts, defaults and errors.
* `metrics.json`: each case creates `mx.metric.create(spec, **kwargs)`, applies the updates
  (npz `metric/<id>/<update>/label|pred/<i>`; `updates` gives the list lengths) and records
  `get`, `get_global`, name-value lists and instance counts after each update, after
  `reset_local()` and after `reset()`; `misc` has CustomMetric results, registry names and
  errors. NaN is written as JSON `NaN`.
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    files = OrderedDict([
        ('initializers.json', make_initializers()),
        ('lr_schedulers.json', make_schedulers()),
        ('optimizers.json', OrderedDict(generator=GENERATOR, mxnet=mx.__version__,
                                        cases=make_optimizers(), misc=make_opt_misc())),
        ('metrics.json', OrderedDict(generator=GENERATOR, mxnet=mx.__version__,
                                     cases=make_metrics(), misc=make_metric_misc())),
    ])
    for fname, content in files.items():
        write_json(os.path.join(OUT, fname), jsonable(content))
    np.savez_compressed(os.path.join(OUT, 'train_utils.npz'), **ARRAYS)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README)
    print(f'wrote {len(ARRAYS)} arrays to {OUT}')


if __name__ == '__main__':
    main()
