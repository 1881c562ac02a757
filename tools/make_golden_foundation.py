#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's foundation tests.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_foundation.py

Paths are resolved relative to this file. Output goes to ``tests/golden/foundation/``:

* ``ops.json`` + ``ops.npz``   single-operator (and a few small graph) forward/backward cases
* ``symbols.json``             Symbol introspection, JSON, inference and error texts
* ``seed_mlp-symbol.json``     the seed tutorial MLP as written by ``Symbol.save``
* ``legacy-symbol.json``       a hand-written pre-1.0 JSON (``param``/``attr`` keys), checked
                               to load in MXNet; its upgraded form is in ``symbols.json``
* ``ndarray.json``             NDArray expression results and error texts
* ``README.md``

Everything is deterministic: inputs come from ``np.random.RandomState`` seeded by the
CRC32 of the case id; nothing uses ``mx.random``. Only mxnet, numpy and the stdlib are used.
"""
import contextlib
import io
import os
import warnings
from collections import OrderedDict

# first: it sets MXNET_SUBGRAPH_VERBOSE before mxnet loads
from _oracle_common import (F32, ROOT, SENTINEL, U, fresh_scopes, golden_dir, ints, jsonable,
                            node_attrs, resolve_op, rng_for, write_json)
from _oracle_common import err_info as _err_info

import numpy as np
import mxnet as mx

OUT = golden_dir('foundation')
GENERATOR = 'tools/make_golden_foundation.py'
ERROR_BASES = (ValueError, TypeError, RuntimeError, KeyError, IndexError, AttributeError,
               NotImplementedError)


# ----------------------------------------------------------------------------- helpers

def away(r, shape, lo=0.2, hi=1.5):
    """Random values with |x| in [lo, hi): keeps away from 0 (relu, abs, division)."""
    sign = np.where(r.uniform(size=shape) < 0.5, -1.0, 1.0)
    return (sign * r.uniform(lo, hi, shape)).astype(F32)


def dtype_name(t):
    return None if t is None else np.dtype(t).name


def err_info(e):
    """Error record (see ``_oracle_common.err_info``) with 'error_is': the Python built-in
    exception classes among ``ERROR_BASES`` that ``e`` is an instance of."""
    return _err_info(e, ERROR_BASES)


@contextlib.contextmanager
def capture():
    """Collect stdout text and warning messages raised inside the block."""
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with contextlib.redirect_stdout(buf):
            box = {}
            yield box
    box['stdout'] = buf.getvalue()
    # numpy/scipy deprecation noise triggered inside mxnet is not MXNet behaviour
    box['warnings'] = [str(w.message) for w in caught if 'scipy' not in str(w.message)]


# ----------------------------------------------------------------------------- ops

CASES = []
ARRAYS = OrderedDict()


def run_case(cid, op, params, sym, gen, *, loss=False, notes='', grad_req='write', runs=1,
             grad_init=False, backward=True, code=None):
    r = rng_for(cid)
    inputs = OrderedDict(gen(r))
    args = sym.list_arguments()
    aux = sym.list_auxiliary_states()
    assert set(args) == set(inputs), (cid, args, list(inputs))
    assert not aux, cid
    hr = rng_for(cid + '/head')
    shapes = {n: inputs[n].shape for n in args}
    bind_error = None
    try:
        ex = sym.simple_bind(ctx=mx.cpu(), grad_req=grad_req, **shapes)
    except RuntimeError as e:  # e.g. a non-differentiable op bound with grad_req='write'
        bind_error = err_info(e)
        grad_req, backward = 'null', False
        ex = sym.simple_bind(ctx=mx.cpu(), grad_req=grad_req, **shapes)
    for n in args:
        ex.arg_dict[n][:] = inputs[n]
    inits = {}
    if grad_init:
        for n in args:
            inits[n] = U(hr, inputs[n].shape)
            ex.grad_dict[n][:] = inits[n]
    heads, backward_error = None, None
    for _ in range(runs):
        outs = ex.forward(is_train=True)
        if backward and backward_error is None:
            if heads is None:
                heads = [U(hr, o.shape) for o in outs]
            try:
                ex.backward([mx.nd.array(h) for h in heads])
                mx.nd.waitall()
            except mx.base.MXNetError as e:
                backward_error = err_info(e)
    outputs = [o.asnumpy() for o in ex.outputs]
    grads = {}
    if backward and backward_error is None:
        grads = {n: ex.grad_dict[n].asnumpy() for n in args}

    # Which grad arrays does MXNet leave untouched? Bind sentinel-filled grads and look.
    not_written = []
    if grads and grad_req == 'write':
        ex2 = sym.bind(mx.cpu(), args={n: mx.nd.array(inputs[n]) for n in args},
                       args_grad={n: mx.nd.full(inputs[n].shape, SENTINEL) for n in args},
                       grad_req='write')
        ex2.forward(is_train=True)
        ex2.backward([mx.nd.array(h) for h in heads])
        for n in args:
            g2 = ex2.grad_dict[n].asnumpy()
            if np.all(g2 == SENTINEL):
                not_written.append(n)
            else:
                assert np.allclose(g2, grads[n], rtol=1e-5, atol=1e-6), (cid, n)

    case = OrderedDict([
        ('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', args),
        ('aux', aux), ('outputs', len(outputs)), ('loss', loss),
        ('grad_inputs', list(grads)), ('grad_req', grad_req), ('backward_runs', runs),
        ('grad_init', bool(inits)), ('grads_not_written', not_written),
        ('attrs', node_attrs(sym) if code is None else None),
        ('out_shapes', [list(o.shape) for o in outputs]),
        ('notes', notes),
    ])
    if bind_error is not None:
        case['bind_error_with_grad'] = bind_error
    if backward_error is not None:
        case['backward_error'] = backward_error
    if code is not None:
        case['code'] = code
        case['symbol_json'] = sym.tojson()
    CASES.append(case)
    for n in args:
        ARRAYS['%s/in/%s' % (cid, n)] = inputs[n]
    for i, o in enumerate(outputs):
        ARRAYS['%s/out%d' % (cid, i)] = o
    if grads:
        for i, h in enumerate(heads):
            ARRAYS['%s/head%d' % (cid, i)] = h
        for n in args:
            ARRAYS['%s/grad/%s' % (cid, n)] = grads[n]
    for n, g in inits.items():
        ARRAYS['%s/grad_init/%s' % (cid, n)] = g


def op_case(cid, op, params, gen, **kw):
    """One op named 'op0' whose inputs are Variables named like the op's arguments."""
    names = [n for n, _ in gen(rng_for(cid))]
    variables = OrderedDict((n, mx.sym.Variable(n)) for n in names)
    with fresh_scopes():
        sym = resolve_op(op)(name='op0', **variables, **params)
    run_case(cid, op, params, sym, gen, **kw)


def graph_case(cid, code, gen, **kw):
    """A small graph built by ``code`` (which must set ``sym``); op is '_graph'."""
    ns = {'mx': mx}
    with fresh_scopes():
        exec(code, ns)
    run_case(cid, '_graph', {}, ns['sym'], gen, code=code, **kw)


def build_op_cases():
    # --- FullyConnected
    op_case('fc_2d', 'FullyConnected', {'num_hidden': 4},
            lambda r: [('data', U(r, (3, 5))), ('weight', U(r, (4, 5))), ('bias', U(r, (4,)))])
    op_case('fc_4d_flatten', 'FullyConnected', {'num_hidden': 4, 'flatten': True},
            lambda r: [('data', U(r, (2, 3, 2, 2))), ('weight', U(r, (4, 12))),
                       ('bias', U(r, (4,)))], notes='data reshaped to (2, 12)')
    op_case('fc_3d_noflatten', 'FullyConnected', {'num_hidden': 5, 'flatten': False},
            lambda r: [('data', U(r, (2, 3, 4))), ('weight', U(r, (5, 4))), ('bias', U(r, (5,)))],
            notes='acts on the last axis: (2,3,4) -> (2,3,5)')
    op_case('fc_nobias', 'FullyConnected', {'num_hidden': 4, 'no_bias': True},
            lambda r: [('data', U(r, (3, 5))), ('weight', U(r, (4, 5)))])
    op_case('fc_1d', 'FullyConnected', {'num_hidden': 5},
            lambda r: [('data', U(r, (7,))), ('weight', U(r, (5, 1))), ('bias', U(r, (5,)))],
            notes='1-D (7,) input is treated as (7, 1): weight (5, 1), output (7, 5)')
    op_case('fc_1d_noflatten', 'FullyConnected', {'num_hidden': 5, 'flatten': False},
            lambda r: [('data', U(r, (7,))), ('weight', U(r, (5, 7))), ('bias', U(r, (5,)))],
            notes='1-D input with flatten=False: weight (5, 7), output (5,)')
    op_case('fc_2d_grad_add', 'FullyConnected', {'num_hidden': 3},
            lambda r: [('data', U(r, (2, 4))), ('weight', U(r, (3, 4))), ('bias', U(r, (3,)))],
            grad_req='add', runs=2, grad_init=True,
            notes="grad_req='add'; grads start at grad_init; forward+backward run twice with "
                  "the same head, so grad = grad_init + 2*g")

    # --- Activation
    for act in ['relu', 'sigmoid', 'tanh', 'softrelu', 'softsign']:
        op_case('act_' + act, 'Activation', {'act_type': act},
                lambda r: [('data', away(r, (3, 4), 0.1, 2.0))])

    # --- SoftmaxOutput (data (4,5) unless noted; labels are class ids stored as float32)
    def smo(cid, params, gen, notes=''):
        op_case(cid, 'SoftmaxOutput', params, gen, loss=True,
                notes=('loss head: the (random) head grad is ignored by MXNet. ' + notes).strip())

    lab_std = lambda r: [('data', U(r, (4, 5), -2, 2)), ('label', np.array([0, 3, 1, 4], F32))]
    lab_ign = lambda r: [('data', U(r, (4, 5), -2, 2)), ('label', np.array([1, 3, 1, 0], F32))]
    smo('smo_default', {}, lab_std)
    smo('smo_grad_scale', {'grad_scale': 2.5}, lab_std)
    smo('smo_use_ignore', {'use_ignore': True, 'ignore_label': 1}, lab_ign,
        notes='rows whose label == 1 get zero grad')
    smo('smo_ignore_label_no_use', {'ignore_label': 1}, lab_ign,
        notes='ignore_label set but use_ignore False: nothing ignored')
    smo('smo_norm_batch', {'normalization': 'batch'}, lab_std, notes='grad / N')
    smo('smo_norm_valid', {'normalization': 'valid'}, lab_ign,
        notes='default ignore_label -1, no label is -1: grad / 4')
    smo('smo_norm_valid_noignore', {'normalization': 'valid', 'ignore_label': 1}, lab_ign,
        notes='use_ignore False, ignore_label 1: valid count still excludes label==1 rows '
              '(divides by 2) but those rows keep their grads')
    smo('smo_norm_valid_ignore', {'normalization': 'valid', 'use_ignore': True,
                                  'ignore_label': 1}, lab_ign,
        notes='ignored rows zeroed and grad / #valid (2)')
    smo('smo_multi_output', {'multi_output': True},
        lambda r: [('data', U(r, (2, 4, 3), -2, 2)),
                   ('label', np.array([[0, 3, 2], [1, 1, 3]], F32))],
        notes='softmax over axis 1 of (N,C,L); label (N,L)')
    smo('smo_multi_output_batch', {'multi_output': True, 'normalization': 'batch'},
        lambda r: [('data', U(r, (2, 4, 3), -2, 2)),
                   ('label', np.array([[0, 3, 2], [1, 1, 3]], F32))])
    smo('smo_multi_output_valid_ignore', {'multi_output': True, 'normalization': 'valid',
                                          'use_ignore': True, 'ignore_label': 1},
        lambda r: [('data', U(r, (2, 4, 3), -2, 2)),
                   ('label', np.array([[0, 3, 2], [1, 1, 3]], F32))])
    smo('smo_multi_output_4d', {'multi_output': True},
        lambda r: [('data', U(r, (2, 3, 2, 2), -2, 2)),
                   ('label', ints(r, (2, 2, 2), 0, 3))],
        notes='multi_output on (N,C,H,W) with label (N,H,W)')
    smo('smo_preserve_shape', {'preserve_shape': True},
        lambda r: [('data', U(r, (2, 3, 4), -2, 2)),
                   ('label', np.array([[0, 3, 1], [2, 2, 0]], F32))],
        notes='softmax over the last axis of (N,A,C); label (N,A)')
    smo('smo_prob_label', {},
        lambda r: [('data', U(r, (3, 4), -2, 2)),
                   ('label', (lambda p: (p / p.sum(1, keepdims=True)).astype(F32))(
                       r.uniform(0.1, 1.0, (3, 4))))],
        notes='label shaped like data is a probability target: grad = p - label')
    smo('smo_label_out_of_range', {},
        lambda r: [('data', U(r, (4, 5), -2, 2)), ('label', np.array([5, 7, 2, -3], F32))],
        notes='labels outside [0,5) add no one-hot term')
    smo('smo_3d_default', {},
        lambda r: [('data', U(r, (2, 3, 4), -2, 2)), ('label', ints(r, (2, 3), 0, 12))],
        notes='no multi_output/preserve_shape on 3-D data: infer_shape gives label (2,3) '
              '(data.shape[:-1]) while the softmax runs over the flattened (2,12)')
    smo('smo_smooth_alpha', {'smooth_alpha': 0.1}, lab_std)
    smo('smo_out_grad', {'out_grad': True}, lab_std,
        notes='out_grad=True: see what MXNet does with the head grad')

    # --- elementwise binary (same shapes)
    pair = lambda r: [('lhs', U(r, (2, 3))), ('rhs', U(r, (2, 3)))]
    op_case('elemwise_add', 'elemwise_add', {}, pair)
    op_case('elemwise_sub', 'elemwise_sub', {}, pair)
    op_case('elemwise_mul', 'elemwise_mul', {}, pair)
    op_case('elemwise_div', 'elemwise_div', {},
            lambda r: [('lhs', U(r, (2, 3))), ('rhs', away(r, (2, 3), 0.5, 2.0))])
    op_case('power', '_power', {},
            lambda r: [('lhs', U(r, (2, 3), 0.5, 2.0)), ('rhs', U(r, (2, 3), -1.0, 2.5))])
    op_case('maximum', '_maximum', {}, pair)
    op_case('minimum', '_minimum', {}, pair)
    op_case('mod', '_mod', {},
            lambda r: [('lhs', U(r, (2, 3), -3, 3)), ('rhs', U(r, (2, 3), 0.7, 1.9))])
    cmp_pair = lambda r: [('lhs', ints(r, (3, 4), 0, 3)), ('rhs', ints(r, (3, 4), 0, 3))]
    for op in ['_equal', '_not_equal', '_greater', '_greater_equal', '_lesser', '_lesser_equal']:
        op_case(op.lstrip('_'), op, {}, cmp_pair, notes='comparison: grads are zero')

    # --- broadcast binary
    shapes_a = lambda r: [('lhs', U(r, (2, 3))), ('rhs', U(r, (1, 3)))]
    shapes_b = lambda r: [('lhs', U(r, (2, 1, 4))), ('rhs', U(r, (3, 1)))]
    pos_a = lambda r: [('lhs', U(r, (2, 3), 0.5, 2)), ('rhs', U(r, (1, 3), -1, 2))]
    pos_b = lambda r: [('lhs', U(r, (2, 1, 4), 0.5, 2)), ('rhs', U(r, (3, 1), -1, 2))]
    div_a = lambda r: [('lhs', U(r, (2, 3))), ('rhs', away(r, (1, 3), 0.5, 2))]
    div_b = lambda r: [('lhs', U(r, (2, 1, 4))), ('rhs', away(r, (3, 1), 0.5, 2))]
    for name, ga, gb in [('add', shapes_a, shapes_b), ('sub', shapes_a, shapes_b),
                         ('mul', shapes_a, shapes_b), ('div', div_a, div_b),
                         ('power', pos_a, pos_b), ('maximum', shapes_a, shapes_b),
                         ('minimum', shapes_a, shapes_b)]:
        op_case('broadcast_%s_2x3_1x3' % name, 'broadcast_' + name, {}, ga)
        op_case('broadcast_%s_2x1x4_3x1' % name, 'broadcast_' + name, {}, gb,
                notes='output (2,3,4)')
    bcmp = lambda r: [('lhs', ints(r, (2, 3), 0, 3)), ('rhs', ints(r, (1, 3), 0, 3))]
    for name in ['equal', 'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal']:
        op_case('broadcast_' + name, 'broadcast_' + name, {}, bcmp,
                notes='comparison: grads are zero')

    # --- scalar ops
    data = lambda r: [('data', U(r, (2, 3), -2, 2))]
    pos = lambda r: [('data', U(r, (2, 3), 0.5, 2))]
    nz = lambda r: [('data', away(r, (2, 3), 0.5, 2))]
    small_ints = lambda r: [('data', ints(r, (3, 4), -2, 3))]
    scalar_cases = [
        ('_plus_scalar', 2.5, data), ('_minus_scalar', 2.5, data), ('_rminus_scalar', 2.5, data),
        ('_mul_scalar', -1.5, data), ('_div_scalar', 4.0, data), ('_rdiv_scalar', 3.0, nz),
        ('_power_scalar', 3.0, pos), ('_power_scalar', 0.5, pos), ('_rpower_scalar', 2.0, data),
        ('_mod_scalar', 1.5, lambda r: [('data', U(r, (2, 3), -3, 3))]),
        ('_rmod_scalar', 2.5, lambda r: [('data', U(r, (2, 3), 0.6, 1.9))]),
        ('_maximum_scalar', 0.25, data), ('_minimum_scalar', 0.25, data),
        ('_greater_scalar', 0.0, small_ints), ('_greater_equal_scalar', 0.0, small_ints),
        ('_lesser_scalar', 0.0, small_ints), ('_lesser_equal_scalar', 0.0, small_ints),
        ('_equal_scalar', 1.0, small_ints), ('_not_equal_scalar', 1.0, small_ints),
    ]
    for op, s, gen in scalar_cases:
        cid = '%s_%s' % (op.lstrip('_'), str(s).replace('.', 'p').replace('-', 'm'))
        op_case(cid, op, {'scalar': s}, gen)
    op_case('plus_scalar_int', '_plus_scalar', {'scalar': 2}, data,
            notes='scalar given as a python int')

    # --- unary
    op_case('negative', 'negative', {}, data)
    op_case('abs', 'abs', {}, lambda r: [('data', away(r, (2, 3), 0.2, 2))])
    op_case('exp', 'exp', {}, data)
    op_case('log', 'log', {}, pos)
    op_case('sqrt', 'sqrt', {}, pos)
    op_case('square', 'square', {}, data)
    op_case('reciprocal', 'reciprocal', {}, nz)

    # --- reductions on (2,3,4)
    x234 = lambda r: [('data', U(r, (2, 3, 4)))]
    red_params = [('axis_none', {}), ('axis1', {'axis': 1}), ('axis02', {'axis': (0, 2)}),
                  ('axis1_keepdims', {'axis': 1, 'keepdims': True}),
                  ('axis1_exclude', {'axis': 1, 'exclude': True}),
                  ('axis_none_keepdims', {'keepdims': True}),
                  ('axis_neg1', {'axis': -1})]
    for op in ['sum', 'mean']:
        for suffix, p in red_params:
            op_case('%s_%s' % (op, suffix), op, p, x234)
    for op in ['max', 'min']:
        op_case(op + '_axis1', op, {'axis': 1}, x234)
        op_case(op + '_axis_none', op, {}, x234)
        op_case(op + '_axis1_ties', op, {'axis': 1},
                lambda r: [('data', ints(r, (2, 3, 4), 0, 2))],
                notes='ties in the reduced axis: see how MXNet splits the grad')
    ties = lambda r: [('data', ints(r, (3, 4), 0, 3))]
    op_case('argmax_axis1', 'argmax', {'axis': 1}, x234)
    op_case('argmax_axis1_keepdims', 'argmax', {'axis': 1, 'keepdims': True}, x234)
    op_case('argmax_axis_none', 'argmax', {}, x234, notes='argmax over the flattened array')
    op_case('argmax_ties', 'argmax', {'axis': 1}, ties, notes='first max wins')
    op_case('argmin_axis1', 'argmin', {'axis': 1}, x234)
    op_case('argmax_channel', 'argmax_channel', {}, ties,
            notes="forward only: simple_bind with grad_req='write' fails (see "
                  "bind_error_with_grad), so the case is bound with grad_req='null'")

    # --- dot
    op_case('dot_2d', 'dot', {}, lambda r: [('lhs', U(r, (3, 4))), ('rhs', U(r, (4, 5)))])
    op_case('dot_transpose_a', 'dot', {'transpose_a': True},
            lambda r: [('lhs', U(r, (4, 3))), ('rhs', U(r, (4, 5)))])
    op_case('dot_transpose_b', 'dot', {'transpose_b': True},
            lambda r: [('lhs', U(r, (3, 4))), ('rhs', U(r, (5, 4)))])
    op_case('dot_transpose_ab', 'dot', {'transpose_a': True, 'transpose_b': True},
            lambda r: [('lhs', U(r, (4, 3))), ('rhs', U(r, (5, 4)))])
    op_case('dot_3d_2d', 'dot', {}, lambda r: [('lhs', U(r, (2, 3, 4))), ('rhs', U(r, (4, 5)))])
    op_case('dot_1d_1d', 'dot', {}, lambda r: [('lhs', U(r, (4,))), ('rhs', U(r, (4,)))],
            notes='output shape (1,)')
    op_case('dot_2d_1d', 'dot', {}, lambda r: [('lhs', U(r, (3, 4))), ('rhs', U(r, (4,)))])
    op_case('batch_dot', 'batch_dot', {},
            lambda r: [('lhs', U(r, (2, 3, 4))), ('rhs', U(r, (2, 4, 5)))])
    op_case('batch_dot_transpose_b', 'batch_dot', {'transpose_b': True},
            lambda r: [('lhs', U(r, (2, 3, 4))), ('rhs', U(r, (2, 5, 4)))])

    # --- Reshape / Flatten on (2,3,4)
    for tag, p in [('0_m1', {'shape': (0, -1)}), ('4_0_2', {'shape': (4, 0, 2)}),
                   ('2_m2', {'shape': (2, -2)}), ('m3_4', {'shape': (-3, 4)}),
                   ('m4_1_2_m2', {'shape': (-4, 1, 2, -2)}),
                   ('2_m4_m1_3_4', {'shape': (2, -4, -1, 3, 4)}),
                   ('4_m1_reverse', {'shape': (4, -1), 'reverse': True}),
                   ('m1', {'shape': (-1,)}), ('6_4', {'shape': (6, 4)})]:
        op_case('reshape_' + tag, 'Reshape', p, x234)
    op_case('flatten_3d', 'Flatten', {}, x234)
    op_case('flatten_1d', 'Flatten', {}, lambda r: [('data', U(r, (4,)))], notes='(N,) -> (N,1)')

    # --- small graphs
    graph_case('graph_x_mul_x_plus_x', (
        "x = mx.sym.Variable('x')\n"
        "sym = mx.sym.elemwise_add(mx.sym.elemwise_mul(x, x, name='sq'), x, name='out')\n"),
        lambda r: [('x', U(r, (2, 3)))], notes='x used three times: grad = head*(2x+1)')
    graph_case('graph_x_mul_x_plus_x_add', (
        "x = mx.sym.Variable('x')\n"
        "sym = mx.sym.elemwise_add(mx.sym.elemwise_mul(x, x, name='sq'), x, name='out')\n"),
        lambda r: [('x', U(r, (2, 3)))], grad_req='add', runs=2, grad_init=True,
        notes="grad_req='add' run twice: grad = grad_init + 2*head*(2x+1)")
    graph_case('graph_reshape_sum', (
        "x = mx.sym.Variable('x')\n"
        "y = mx.sym.Reshape(x, shape=(0, -1), name='r1')\n"
        "y = mx.sym.Reshape(y, shape=(-1, 4), name='r2')\n"
        "sym = mx.sym.sum(y, axis=0, name='s')\n"),
        lambda r: [('x', U(r, (2, 3, 4)))])
    graph_case('graph_sym_arith', (
        "a = mx.sym.Variable('a')\n"
        "b = mx.sym.Variable('b')\n"
        "sym = (a * b + a / 2 - 1) ** 2 + 3 * b\n"),
        lambda r: [('a', U(r, (2, 3))), ('b', U(r, (2, 3)))],
        notes='Symbol operator sugar (_mul, _div_scalar, _minus_scalar, _power_scalar, ...)')
    graph_case('graph_group_two_heads', (
        "x = mx.sym.Variable('x')\n"
        "w = mx.sym.Variable('w')\n"
        "fc = mx.sym.FullyConnected(x, weight=w, num_hidden=3, no_bias=True, name='fc')\n"
        "act = mx.sym.Activation(fc, act_type='tanh', name='act')\n"
        "sym = mx.sym.Group([fc, act])\n"),
        lambda r: [('x', U(r, (2, 4))), ('w', U(r, (3, 4)))],
        notes='two heads; fc receives head0 + the grad through act')
    graph_case('graph_mlp', (
        "data = mx.sym.Variable('data')\n"
        "net = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=6)\n"
        "net = mx.sym.Activation(data=net, name='relu1', act_type='relu')\n"
        "net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=3)\n"
        "sym = mx.sym.SoftmaxOutput(data=net, name='out')\n"),
        lambda r: [('data', U(r, (4, 5))), ('fc1_weight', U(r, (6, 5))),
                   ('fc1_bias', U(r, (6,), -0.1, 0.1)), ('fc2_weight', U(r, (3, 6))),
                   ('fc2_bias', U(r, (3,), -0.1, 0.1)),
                   ('out_label', np.array([0, 2, 1, 2], F32))],
        loss=True, notes='the seed MLP, shrunk; head grad ignored')


# ----------------------------------------------------------------------------- symbols

MLP_CODE = (
    "data = mx.sym.Variable('data')\n"
    "net = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)\n"
    "net = mx.sym.Activation(data=net, name='relu1', act_type='relu')\n"
    "net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=10)\n"
    "net = mx.sym.SoftmaxOutput(data=net, name='out')\n"
)
MLP_NONAME = (
    "def mlp():\n"
    "    net = mx.sym.Variable('data')\n"
    "    net = mx.sym.FullyConnected(data=net, num_hidden=128)\n"
    "    net = mx.sym.Activation(data=net, act_type='relu')\n"
    "    net = mx.sym.FullyConnected(data=net, num_hidden=10)\n"
    "    return mx.sym.SoftmaxOutput(data=net)\n"
)


def infer(method, kwargs=None, args=None):
    return OrderedDict([('method', method), ('args', args or []), ('kwargs', kwargs or {})])


def symbol_specs():
    ab = "a = mx.sym.Variable('a')\nb = mx.sym.Variable('b')\n"
    ab_infer = [infer('infer_shape', {'a': (2, 3), 'b': (2, 3)}),
                infer('infer_type', {'a': 'float32', 'b': 'float32'})]
    a_infer = [infer('infer_shape', {'a': (2, 3)}), infer('infer_type', {'a': 'float32'})]
    specs = [
        ('seed_mlp', MLP_CODE + "sym = net\n", [
            infer('infer_shape', {'data': (100, 100)}),
            infer('infer_shape', {'data': (100, 100), 'out_label': (100,)}),
            infer('infer_shape', {'out_label': (100,)}),
            infer('infer_shape', {}),
            infer('infer_shape', args=[(100, 100)]),
            infer('infer_shape', args=[(100, 100), None, None, None, None, None]),
            infer('infer_type', args=['float32']),
            infer('infer_shape_partial', {'fc1_weight': (128, 100)}),
            infer('infer_shape_partial', {}),
            infer('infer_shape_partial', {'data': (100, 100)}),
            infer('infer_shape', {'data': (100, 100), 'out_label': (50,)}),
            infer('infer_shape', {'data': (100, 100), 'foo': (1,)}),
            infer('infer_shape', {'data': 100}),
            infer('infer_shape', {'data': (0, 100)}),
            infer('infer_shape_partial', {'data': (0, 100)}),
            infer('infer_type', {'data': 'float32'}),
            infer('infer_type', {'data': 'float16'}),
            infer('infer_type', {'data': 'float16', 'fc1_weight': 'float32'}),
            infer('infer_type', {}),
            infer('infer_type', {'foo': 'float32'}),
        ]),
        ('mlp_auto_first', "with mx.name.NameManager():\n" + "".join(
            "    " + l + "\n" for l in MLP_NONAME.splitlines()) +
         "    first = mlp()\n    second = mlp()\nsym = first\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('mlp_auto_second', "with mx.name.NameManager():\n" + "".join(
            "    " + l + "\n" for l in MLP_NONAME.splitlines()) +
         "    first = mlp()\n    second = mlp()\nsym = second\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('mlp_prefix', MLP_NONAME + "with mx.name.Prefix('p_'):\n    sym = mlp()\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('mlp_prefix_named', "with mx.name.Prefix('p_'):\n" + "".join(
            "    " + l + "\n" for l in MLP_CODE.splitlines()) + "sym = net\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('var_attrs', (
            "sym = mx.sym.Variable('w', shape=(3, 4), lr_mult=2.0, wd_mult=0.5, "
            "dtype='float16', init=mx.init.Uniform(0.1))\n"),
         [infer('infer_shape', {}), infer('infer_type', {})]),
        ('var_attrs_fc', (
            "w = mx.sym.Variable('w', shape=(3, 4), lr_mult=2.0, wd_mult=0.5, "
            "dtype='float16', init=mx.init.Uniform(0.1))\n"
            "data = mx.sym.Variable('data')\n"
            "sym = mx.sym.FullyConnected(data=data, weight=w, num_hidden=3, name='fc')\n"),
         [infer('infer_shape', {'data': (2, 4)}), infer('infer_shape', {}),
          infer('infer_shape_partial', {}),
          infer('infer_type', {}), infer('infer_type', {'data': 'float16'}),
          infer('infer_type', {'data': 'float32'})]),
        ('var_custom_attr', (
            "sym = mx.sym.Variable('v', attr={'mood': 'happy', '__hidden__': 'x'}, "
            "shape=(2, 0))\n"), [infer('infer_shape_partial', {})]),
        ('var_plain', "sym = mx.sym.Variable('x')\n", [infer('infer_shape', {'x': (2, 3)})]),
    ]
    arith = [('add', 'a + b'), ('sub', 'a - b'), ('mul', 'a * b'), ('div', 'a / b'),
             ('pow', 'a ** b'), ('mod', 'a % b'), ('add_scalar', 'a + 1'),
             ('radd_scalar', '1 + a'), ('rsub_scalar', '1 - a'), ('sub_scalar', 'a - 1'),
             ('rmul_scalar', '2 * a'), ('div_scalar', 'a / 2'), ('rdiv_scalar', '2 / a'),
             ('pow_scalar', 'a ** 2'), ('rpow_scalar', '2 ** a'), ('neg', '-a'),
             ('gt', 'a > b'), ('ge', 'a >= b'), ('lt', 'a < b'), ('le', 'a <= b'),
             ('eq', 'a == b'), ('ne', 'a != b'), ('gt_scalar', 'a > 1'),
             ('lt_scalar', 'a < 1'), ('eq_scalar', 'a == 1'), ('mod_scalar', 'a % 3'),
             ('rmod_scalar', '3 % a'), ('float_scalar', 'a * 0.1'), ('abs', 'abs(a)')]
    for tag, expr in arith:
        infers = list(ab_infer if 'b' in expr else a_infer)
        if tag == 'add':
            infers.append(infer('infer_shape', {'a': (2, 3), 'b': (1, 3)}))
        specs.append(('arith_' + tag, ab + "sym = %s\n" % expr, infers))
    specs[-1][2].append(infer('infer_shape', {'a': (2, 3), 'b': (2, 3)}))  # extra kwarg 'b'
    specs.append(('arith_chain', ab + "sym = (a + b) * (a - b) / 2 + a ** 2 - 1\n", ab_infer))
    specs += [
        ('internals', MLP_CODE + "sym = net.get_internals()\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('internals_fc1', MLP_CODE + "sym = net.get_internals()['fc1_output']\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('internals_index', MLP_CODE + "sym = net.get_internals()[3]\n", []),
        ('group_fc1_out', MLP_CODE + (
            "fc1 = net.get_internals()['fc1_output']\n"
            "sym = mx.sym.Group([fc1, net])\n"),
         [infer('infer_shape', {'data': (100, 100)}), infer('infer_type', {'data': 'float32'})]),
        ('group_index1', MLP_CODE + (
            "fc1 = net.get_internals()['fc1_output']\n"
            "sym = mx.sym.Group([fc1, net])[1]\n"), []),
        ('compose_net', MLP_CODE + (
            "x = mx.sym.Variable('x')\n"
            "pre = mx.sym.Activation(x, act_type='tanh', name='pre')\n"
            "sym = net(data=pre)\n"), [infer('infer_shape', {'x': (100, 100)})]),
        ('compose_net_named', MLP_CODE + (
            "x = mx.sym.Variable('x')\n"
            "sym = net(data=x, name='net2')\n"), [infer('infer_shape', {'x': (100, 100)})]),
        ('compose_fc_nodata', (
            "fc = mx.sym.FullyConnected(name='fc', num_hidden=3)\n"
            "sym = fc(fc_data=mx.sym.Variable('x'))\n"), [infer('infer_shape', {'x': (2, 5)})]),
        ('fc_nodata', "sym = mx.sym.FullyConnected(name='fc', num_hidden=3)\n",
         [infer('infer_shape', {'fc_data': (2, 5)})]),
        ('compose_fc_data_kw', (
            "fc = mx.sym.FullyConnected(name='fc', num_hidden=3)\n"
            "sym = fc(data=mx.sym.Variable('x'))\n"), []),
        ('attr_scope', (
            "with mx.AttrScope(ctx_group='dev1', lr_mult='0.1'):\n"
            "    data = mx.sym.Variable('data')\n"
            "    fc = mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1')\n"
            "sym = mx.sym.Activation(fc, act_type='relu', name='act')\n"), []),
        ('attr_scope_head', (
            "with mx.AttrScope(ctx_group='dev1', lr_mult='0.1'):\n"
            "    data = mx.sym.Variable('data')\n"
            "    sym = mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1')\n"), []),
        ('attr_direct', (
            "data = mx.sym.Variable('data')\n"
            "sym = mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1', "
            "attr={'ctx_group': 'dev1', 'lr_mult': '0.1'})\n"), []),
        ('attr_direct_dunder', (
            "data = mx.sym.Variable('data')\n"
            "sym = mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1', "
            "attr={'__mood__': 'x'})\n"), []),
        ('attr_nested_scopes', (
            "with mx.AttrScope(ctx_group='outer', __mood__='a'):\n"
            "    with mx.AttrScope(ctx_group='inner'):\n"
            "        data = mx.sym.Variable('data', attr={'mood': 'b'})\n"
            "        sym = mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1')\n"), []),
        ('params_str', (
            "data = mx.sym.Variable('data')\n"
            "x = mx.sym.Reshape(data, shape=(0, -1), name='r')\n"
            "x = mx.sym.sum(x, axis=(0, 1), keepdims=True, name='s')\n"
            "x = mx.sym.Activation(x, act_type='relu', name='a')\n"
            "x = mx.sym.SoftmaxOutput(x, grad_scale=2.5, use_ignore=True, multi_output=False, "
            "normalization='valid', name='o')\n"
            "sym = x\n"), []),
        ('legacy_load', "sym = mx.sym.load(os.path.join(GOLDEN_DIR, 'legacy-symbol.json'))\n",
         [infer('infer_shape', {'data': (100, 100)})]),
        ('seed_mlp_load', "sym = mx.sym.load(os.path.join(GOLDEN_DIR, 'seed_mlp-symbol.json'))\n",
         [infer('infer_shape', {'data': (100, 100)})]),
    ]
    return specs


ATTR_KEYS = ['ctx_group', '__ctx_group__', 'lr_mult', '__lr_mult__', 'wd_mult', '__shape__',
             '__dtype__', '__init__', 'num_hidden', 'mood', '__mood__', 'nope']

SYMBOL_ERRORS = [
    ('activation_bad_type', "mx.sym.Activation(data=mx.sym.Variable('x'), act_type='foo')"),
    ('activation_bad_type_named',
     "mx.sym.Activation(data=mx.sym.Variable('x'), act_type='foo', name='act')"),
    ('fc_missing_num_hidden', "mx.sym.FullyConnected(data=mx.sym.Variable('x'))"),
    ('fc_bogus_param', "mx.sym.FullyConnected(data=mx.sym.Variable('x'), num_hidden=10, bogus=1)"),
    ('fc_bad_num_hidden', "mx.sym.FullyConnected(data=mx.sym.Variable('x'), num_hidden='abc')"),
    ('variable_non_str', "mx.sym.Variable(1)"),
    ('internals_unknown', MLP_CODE + "net.get_internals()['nope']"),
    ('internals_index_oob', MLP_CODE + "net.get_internals()[100]"),
    ('compose_positional', MLP_CODE + "net(mx.sym.Variable('x'))"),
    ('compose_unknown_kw', MLP_CODE + "net(zzz=mx.sym.Variable('x'))"),
    ('simple_bind_bad_label', MLP_CODE +
     "net.simple_bind(mx.cpu(), data=(100, 100), out_label=(50,))"),
    ('symbol_add_shape_mismatch',
     "a = mx.sym.Variable('a')\nb = mx.sym.Variable('b')\n(a + b).infer_shape(a=(2, 3), b=(1, 3))"),
    ('group_list_attr', MLP_CODE + "mx.sym.Group([net, net]).list_attr()"),
    ('variable_bad_shape_type', "mx.sym.Variable('w', shape=3).list_attr()"),
    ('attr_scope_custom_key_on_op', (
        "with mx.AttrScope(mood='a'):\n"
        "    data = mx.sym.Variable('data')\n"
        "    mx.sym.FullyConnected(data=data, num_hidden=4, name='fc1')")),
    ('attr_custom_key_on_op',
     "mx.sym.FullyConnected(data=mx.sym.Variable('data'), num_hidden=4, attr={'mood': 'a'})"),
    ('infer_shape_args_and_kwargs', MLP_CODE + "net.infer_shape((100, 100), out_label=(100,))"),
    ('variable_attr_non_str', "mx.sym.Variable('v', attr={'mood': 1})"),
    ('simple_bind_only_unknown_name', MLP_CODE + "net.simple_bind(mx.cpu(), foo=(1, 2))"),
    ('simple_bind_extra_unknown_name', MLP_CODE +
     "[a.shape for a in net.simple_bind(mx.cpu(), data=(4, 100), foo=(1, 2)).arg_arrays]"),
    ('forward_unknown_arg', MLP_CODE +
     "ex = net.simple_bind(mx.cpu(), data=(4, 100))\n"
     "ex.forward(is_train=False, zzz=mx.nd.ones((4, 100)))"),
    ('forward_bad_shape', MLP_CODE +
     "ex = net.simple_bind(mx.cpu(), data=(4, 100))\nex.forward(data=mx.nd.ones((3, 100)))"),
    ('bind_missing_arg', MLP_CODE +
     "net.bind(mx.cpu(), args={'data': mx.nd.ones((4, 100))})"),
]


def run_code(code, extra_ns=None):
    """Exec ``code`` in fresh name/attr scopes; returns namespace and captured stdout."""
    ns = {'mx': mx, 'np': np, 'os': os, 'GOLDEN_DIR': OUT}
    ns.update(extra_ns or {})
    with fresh_scopes():
        exec(code, ns)
    return ns


def guarded(fn):
    with capture() as box:
        try:
            value = fn()
            res = OrderedDict([('value', value)])
        except Exception as e:  # noqa: BLE001 - we record every error text
            res = err_info(e)
    if box.get('stdout'):
        res['stdout'] = box['stdout']
    if box.get('warnings'):
        res['warnings'] = box['warnings']
    return res


def infer_result(method, out):
    if method == 'infer_type':
        return [None if x is None else [dtype_name(t) for t in x] for x in out]
    return [None if x is None else [list(s) for s in x] for x in out]


def describe_symbol(sym, infers):
    d = OrderedDict()
    queries = [
        ('name', lambda: sym.name), ('repr', lambda: repr(sym)), ('len', lambda: len(sym)),
        ('list_arguments', sym.list_arguments), ('list_outputs', sym.list_outputs),
        ('list_auxiliary_states', sym.list_auxiliary_states), ('list_inputs', sym.list_inputs),
        ('internals', lambda: sym.get_internals().list_outputs()),
        ('children', lambda: None if sym.get_children() is None
         else sym.get_children().list_outputs()),
        ('tojson', sym.tojson), ('attr_dict', sym.attr_dict), ('list_attr', sym.list_attr),
        ('attr', lambda: OrderedDict((k, sym.attr(k)) for k in ATTR_KEYS)),
    ]
    for key, fn in queries:
        d[key] = guarded(lambda fn=fn: jsonable(fn()))
    calls = []
    for spec in infers:
        method = spec['method']
        f = getattr(sym, method)
        kwargs = spec['kwargs']
        args = spec['args']
        res = guarded(lambda: infer_result(method, f(*args, **kwargs)))
        calls.append(OrderedDict([('method', method), ('args', jsonable(args)),
                                  ('kwargs', jsonable(kwargs))] + list(res.items())))
    d['infer'] = calls
    return d


LEGACY_JSON = """{
  "nodes": [
    {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1", "lr_mult": "0.2"}},
    {"op": "null", "param": {}, "name": "fc1_weight", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1", "wd_mult": "0.3"}},
    {"op": "null", "param": {}, "name": "fc1_bias", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1"}},
    {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "128"},
     "name": "fc1", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
     "attr": {"ctx_group": "stage1"}},
    {"op": "Activation", "param": {"act_type": "relu"}, "name": "relu1",
     "inputs": [[3, 0]], "backward_source_id": -1, "attr": {"ctx_group": "stage1"}},
    {"op": "null", "param": {}, "name": "fc2_weight", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage2", "lr_mult": "0.01"}},
    {"op": "null", "param": {}, "name": "fc2_bias", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage2"}},
    {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "10"},
     "name": "fc2", "inputs": [[4, 0], [5, 0], [6, 0]], "backward_source_id": -1,
     "attr": {"ctx_group": "stage2"}},
    {"op": "null", "param": {}, "name": "out_label", "inputs": [], "backward_source_id": -1,
     "attr": {"ctx_group": "stage2"}},
    {"op": "SoftmaxOutput",
     "param": {"grad_scale": "1", "ignore_label": "-1", "multi_output": "False",
               "normalization": "null", "out_grad": "False", "preserve_shape": "False",
               "use_ignore": "False"},
     "name": "out", "inputs": [[7, 0], [8, 0]], "backward_source_id": -1,
     "attr": {"ctx_group": "stage2"}}
  ],
  "arg_nodes": [0, 1, 2, 5, 6, 8],
  "heads": [[9, 0]]
}
"""


def build_symbols():
    # Files written by MXNet itself (loaded back by the *_load specs below).
    seed = run_code(MLP_CODE)['net']
    seed.save(os.path.join(OUT, 'seed_mlp-symbol.json'))
    with open(os.path.join(OUT, 'legacy-symbol.json'), 'w') as f:
        f.write(LEGACY_JSON)

    entries = []
    for sid, code, infers in symbol_specs():
        entry = OrderedDict([('id', sid), ('code', code)])
        try:
            with capture() as box:
                ns = run_code(code)
            entry.update(describe_symbol(ns['sym'], infers))
            if box['stdout'] or box['warnings']:
                entry['build_output'] = {'stdout': box['stdout'], 'warnings': box['warnings']}
        except Exception as e:  # noqa: BLE001
            entry['build_error'] = err_info(e)
        entries.append(entry)

    errors = []
    for eid, code in SYMBOL_ERRORS:
        lines = code.rstrip('\n').split('\n')
        last = lines[-1]
        indent = len(last) - len(last.lstrip())
        body = '\n'.join(lines[:-1] + [last[:indent] + '__result__ = ' + last[indent:]])
        with capture() as box:
            try:
                ns = run_code(body)
                res = OrderedDict([('no_error', True)])
                val = ns['__result__']
                res['value'] = repr(val) if isinstance(val, (mx.sym.Symbol, mx.executor.Executor)) \
                    else jsonable(val)
            except Exception as e:  # noqa: BLE001
                res = err_info(e)
        res['stdout'] = box['stdout']
        res['warnings'] = box['warnings']
        errors.append(OrderedDict([('id', eid), ('code', code)] + list(res.items())))

    return OrderedDict([
        ('generator', GENERATOR), ('mxnet_version', mx.__version__),
        ('notes', "Each 'code' is exec'd with globals {mx, np, os, GOLDEN_DIR} inside a fresh "
                  "mx.name.NameManager() and an empty mx.AttrScope(); the result is the "
                  "variable 'sym'. Queries hold {'value': ...} or an error record "
                  "{'error_type', 'error_is', 'error', 'error_message'}, plus 'stdout' / "
                  "'warnings' when MXNet printed or warned. Shapes are lists, dtypes numpy "
                  "names, tuples in kwargs are lists. In 'errors', the last line of 'code' "
                  "is the expression that raises."),
        ('symbols', entries), ('errors', errors),
    ])


# ----------------------------------------------------------------------------- ndarray

NDARRAY_EXPRS = [
    # reshape codes on (2,3,4)
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((0, -1))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((4, 0, 2))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((2, -2))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((-3, 4))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((-4, 1, 2, -2))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((2, -4, -1, 3, 4))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((4, -1), reverse=True)"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape(0, -1)"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape(shape=(6, -1))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((5, 5))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((5,))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((-1, -1))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))", 'expr': "a.reshape((7, -1))"},
    {'setup': "a = nd.arange(24).reshape((2, 3, 4))\nb = a.reshape((6, 4))\nb[0] = 100",
     'expr': "a", 'notes': 'reshape returns a view'},
    # reductions and friends
    {'expr': "nd.sum(nd.ones((2, 3)))"},
    {'expr': "nd.sum(nd.ones((2, 3)), axis=1)"},
    {'expr': "nd.ones((2, 3)).sum(axis=0, keepdims=True)"},
    {'expr': "nd.mean(nd.arange(6).reshape((2, 3)))"},
    {'expr': "nd.max(nd.arange(6).reshape((2, 3)), axis=1)"},
    {'expr': "nd.argmax(nd.array([[1, 3, 3], [2, 0, 2]]), axis=1)"},
    {'expr': "nd.argmax_channel(nd.array([[1, 3, 3], [2, 0, 2]]))"},
    {'expr': "nd.dot(nd.ones((2, 3)), nd.ones((3, 4)))"},
    {'expr': "nd.dot(nd.array([1, 2, 3]), nd.array([4, 5, 6]))"},
    {'expr': "nd.dot(nd.ones((2, 3, 4)), nd.ones((4, 5))).shape"},
    # creation and dtypes
    {'expr': "nd.array([1, 2, 3])"},
    {'expr': "nd.array(np.array([1, 2, 3], dtype=np.int32))"},
    {'expr': "nd.array(np.array([1, 2, 3], dtype=np.float64))"},
    {'expr': "nd.array([1, 2, 3], dtype='int32')"},
    {'expr': "nd.array(nd.array([1, 2, 3], dtype='int32'))"},
    {'expr': "nd.array(5)"},
    {'expr': "nd.arange(0, 5, 1.5)"},
    {'expr': "nd.arange(3, repeat=2)"},
    {'expr': "nd.arange(5, dtype='int32')"},
    {'expr': "nd.arange(2, 8, 2)"},
    {'expr': "nd.full((2, 2), 7)"},
    {'expr': "nd.full((2, 2), 7.5, dtype='int32')"},
    {'expr': "nd.zeros((2, 3))"},
    {'expr': "nd.ones(3, dtype='int32')"},
    {'expr': "nd.zeros((2, 3)).dtype"},
    {'expr': "nd.ones((2, 3)).size"},
    {'expr': "nd.ones((2, 3)).ndim"},
    {'expr': "len(nd.ones((2, 3)))"},
    {'expr': "nd.arange(6).reshape((2, 3)).T"},
    {'expr': "nd.ones((2, 3)).stype"},
    {'expr': "repr(nd.ones((2, 3)))"},
    {'expr': "repr(nd.array([1, 2], dtype='int32'))"},
    {'expr': "str(nd.ones((2, 3)).context)"},
    {'expr': "nd.array([7.0]).asscalar()"},
    {'expr': "type(nd.array([7.0]).asscalar()).__name__"},
    # int32 arithmetic with scalars (no promotion)
    {'expr': "nd.array([1, 2, 3], dtype='int32') / 2"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') * 1.5"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') + 1.7"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') - 0.5"},
    {'expr': "7 / nd.array([1, 2, 3], dtype='int32')"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') ** 2"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') % 2"},
    {'expr': "-nd.array([1, 2, 3], dtype='int32')"},
    {'expr': "nd.array([5, -7, 9], dtype='int32') / nd.array([2, 2, -4], dtype='int32')"},
    {'expr': "nd.array([5.5, -7.5, 9]) % 2"},
    {'expr': "nd.array([5.5, -7.5, 9]) % nd.array([2, 2, -4])"},
    # comparisons
    {'expr': "nd.array([1, 2, 3]) > 2"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') == 2"},
    {'expr': "nd.array([1, 2, 3]) >= nd.array([3, 2, 1])"},
    {'expr': "nd.array([1, 2, 3], dtype='int32') < nd.array([3, 2, 1], dtype='int32')"},
    {'expr': "2 < nd.array([1, 2, 3])"},
    # broadcasting
    {'expr': "nd.ones((2, 3)) + nd.arange(3).reshape((1, 3))"},
    {'expr': "nd.ones((2, 3)) * nd.arange(3)"},
    {'expr': "nd.ones((2, 1, 4)) - nd.ones((3, 1))"},
    # indexing
    {'expr': "nd.array([1, 2, 3])[1]"},
    {'expr': "nd.array([[1, 2], [3, 4]])[1]"},
    {'expr': "nd.array([[1, 2], [3, 4]])[1, 0]"},
    {'expr': "nd.arange(6).reshape((2, 3))[:, 1]"},
    {'expr': "nd.arange(6)[1:4]"},
    {'setup': "a = nd.zeros((2, 3))\nb = a[1]\nb[:] = 5", 'expr': "a"},
    {'setup': "a = nd.zeros((2, 3))\na[:, 1] = 3", 'expr': "a"},
    {'setup': "a = nd.zeros((2, 3))\na[1:2] = nd.ones((1, 3)) * 2", 'expr': "a"},
    {'setup': "a = nd.zeros((2, 3))\na[0] = [1, 2, 3]", 'expr': "a"},
    {'setup': "a = nd.zeros((2, 3))\na[:] = np.arange(3)", 'expr': "a"},
    {'setup': "a = nd.zeros((2, 3))\na += 2\na *= 3", 'expr': "a"},
    # copies
    {'setup': "a = nd.ones((2, 3))\nb = nd.zeros((2, 3), dtype='int32')\nr = a.copyto(b)",
     'expr': "(r is b, b)"},
    {'expr': "nd.array([1.7, 2.2]).astype('int32')"},
    # errors
    {'expr': "nd.ones((2, 3)) + nd.ones((3, 2))"},
    {'expr': "nd.ones((2, 3), dtype='int32') + nd.ones((2, 3))"},
    {'expr': "nd.dot(nd.ones((2, 3)), nd.ones((2, 3)))"},
    {'expr': "nd.ones((2, 3)).reshape((5, 5))"},
    {'expr': "nd.ones((2, 3)).reshape((5,))"},
    {'expr': "nd.ones((2, 3)).asscalar()"},
    {'expr': "nd.ones((2, 3)).copyto(nd.zeros((3, 2)))"},
    {'expr': "float(nd.ones((1,)))"},
    {'expr': "bool(nd.ones((2,)))"},
    {'expr': "nd.ones((2, 3))[5]"},
    {'setup': "a = nd.zeros((2, 3))", 'expr': "a.__setitem__(0, nd.ones((4,)))"},
    {'expr': "nd.ones((2, 3)).copyto('cpu')"},
]


def nd_value(v):
    if isinstance(v, mx.nd.NDArray):
        return OrderedDict([('type', 'NDArray'), ('value', v.asnumpy().tolist()),
                            ('shape', list(v.shape)), ('dtype', dtype_name(v.dtype))])
    if isinstance(v, type):
        return OrderedDict([('type', 'type'), ('value', dtype_name(v))])
    if isinstance(v, tuple):
        return OrderedDict([('type', 'tuple'), ('value', [nd_value(x) for x in v])])
    return OrderedDict([('type', type(v).__name__), ('value', jsonable(v))])


def build_ndarray():
    out = []
    for spec in NDARRAY_EXPRS:
        ns = {'mx': mx, 'nd': mx.nd, 'np': np}
        entry = OrderedDict([('setup', spec.get('setup', '')), ('expr', spec['expr'])])
        with capture() as box:
            try:
                exec(entry['setup'], ns)
                entry.update(nd_value(eval(spec['expr'], ns)))
            except Exception as e:  # noqa: BLE001
                entry.update(err_info(e))
        if box['warnings']:
            entry['warnings'] = box['warnings']
        if spec.get('notes'):
            entry['notes'] = spec['notes']
        out.append(entry)
    return OrderedDict([
        ('generator', GENERATOR), ('mxnet_version', mx.__version__),
        ('notes', "Each entry: exec 'setup' then eval 'expr' with globals {mx, nd=mx.nd, np}. "
                  "NDArray results give value (nested lists), shape and dtype name; other "
                  "results give 'type' and 'value'; failures give error_type/error_is/error/"
                  "error_message. Reading the result (asnumpy) happens inside the try, so "
                  "asynchronous errors are caught too."),
        ('cases', out),
    ])


# ----------------------------------------------------------------------------- main

README = """# MXNet 1.9.1 golden fixtures: foundation

These files hold reference results produced by the real Apache MXNet {version} (CPU build,
numpy 1.23) with `tools/make_golden_foundation.py`, for neomx's tests to compare against:
`ops.json` + `ops.npz` are single-operator cases (FullyConnected, Activation, SoftmaxOutput,
elementwise/broadcast/scalar/comparison ops, unary ops, reductions, argmax, dot, Reshape,
Flatten) built as `mx.sym.<op>(name='op0', **params, **variables)` (`_`-ops from
`mx.sym._internal`), one Variable per input named after the op's argument (`data`,
`weight`, `bias`, `label`, `lhs`, `rhs`), plus
a few small graphs (op `_graph`, built by the stored `code`, with MXNet's `symbol_json`), each
bound with `simple_bind` on `cpu()`, run with
`forward(is_train=True)` and `backward(head grads)` (npz keys `<id>/in/<name>`, `<id>/out<i>`,
`<id>/head<i>`, `<id>/grad/<name>`, `<id>/grad_init/<name>`; tuples in `params` are stored as
lists; `grads_not_written` lists the arguments whose gradient buffer MXNet left untouched,
found by binding sentinel-filled grads); `symbols.json` records Symbol introspection
(`list_arguments`, outputs, internals, exact `tojson`, `attr_dict`, `list_attr`, `attr`),
`infer_shape`/`infer_type`/`infer_shape_partial` results and error texts for symbols built by
the stored code snippets (errors keep MXNet's full text in `error`, log timestamps replaced
by `[HH:MM:SS]`, and the core text in `error_message`); `seed_mlp-symbol.json` is the seed
tutorial MLP written by MXNet's
`Symbol.save`; `legacy-symbol.json` is a hand-written pre-1.0 style file (`param`/`attr`
keys, 2-element inputs, no version) modelled on MXNet's `save_000800.json` test and checked to
load in MXNet (its upgraded form is the `legacy_load` entry of `symbols.json`); and
`ndarray.json` holds NDArray expression results and error messages. Inputs come from
`np.random.RandomState` seeded per case id, so the output is deterministic. To regenerate,
run `tools/mxnet-oracle tools/make_golden_foundation.py` from the repository root
(the script resolves its output paths relative to its own location).
"""


def main():
    print('mxnet', mx.__version__, 'numpy', np.__version__)
    os.makedirs(OUT, exist_ok=True)

    build_op_cases()
    write_json(os.path.join(OUT, 'ops.json'),
               OrderedDict([('generator', GENERATOR), ('mxnet_version', mx.__version__),
                            ('cases', CASES)]))
    np.savez_compressed(os.path.join(OUT, 'ops.npz'), **ARRAYS)

    symbols = build_symbols()
    write_json(os.path.join(OUT, 'symbols.json'), symbols)
    write_json(os.path.join(OUT, 'ndarray.json'), build_ndarray())

    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README.format(version=mx.__version__))

    print('wrote %d op cases (%d arrays), %d symbols, %d symbol errors, %d ndarray cases to %s'
          % (len(CASES), len(ARRAYS), len(symbols['symbols']), len(symbols['errors']),
             len(NDARRAY_EXPRS), os.path.relpath(OUT, ROOT)))


if __name__ == '__main__':
    main()
