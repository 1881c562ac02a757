#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's layer operators.

Covers Convolution, Pooling, BatchNorm, Dropout, LeakyReLU and Embedding. Run it with the real
MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_layers.py

Paths are resolved relative to this file. Output goes to ``tests/golden/layers/``:

* ``layers.json`` + ``layers.npz``   single-operator (and one small graph) cases
* ``README.md``

Everything is deterministic: inputs come from ``np.random.RandomState`` seeded by the CRC32 of
the case id; nothing uses ``mx.random`` (Dropout's and RReLU's own draws differ from any other
generator, so their cases record properties, see ``random`` below). Only mxnet, numpy and the
stdlib are used.
"""
import json
import os
from collections import OrderedDict

# first: it sets MXNET_SUBGRAPH_VERBOSE before mxnet loads
from _oracle_common import (F32, SENTINEL, U, err_info, fresh_scopes, golden_dir, ints, jsonable,
                            rng_for, write_json)

import numpy as np
import mxnet as mx

OUT = golden_dir('layers')
GENERATOR = 'tools/make_golden_layers.py'


# ----------------------------------------------------------------------------- helpers

def arange(shape):
    return np.arange(int(np.prod(shape)), dtype=F32).reshape(shape)


def node_info(sym):
    """The head op node's attrs and its number of outputs (hidden ones included)."""
    js = json.loads(sym.tojson())
    ptr = js['node_row_ptr']
    return js['nodes'][-1].get('attrs', {}), ptr[-1] - ptr[-2]


# ----------------------------------------------------------------------------- cases

CASES = []
ARRAYS = OrderedDict()


def _bind(sym, inputs, aux, grad_req, grads=None):
    args = {n: mx.nd.array(inputs[n]) for n in sym.list_arguments()}
    aux_states = {n: mx.nd.array(aux[n]) for n in sym.list_auxiliary_states()}
    return sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req=grad_req,
                    aux_states=aux_states)


def run_case(cid, op, params, sym, gen, aux_gen=None, *, grad_req='write', train=True,
             backward=True, infer=False, random=False, notes='', code=None):
    """Record one case.

    ``train``: forward(is_train=True) (+ backward with random head grads when ``backward``);
    ``infer``: forward(is_train=False) on a fresh executor; ``random``: outputs depend on
    MXNet's RNG (record them for property checks only).
    """
    r = rng_for(cid)
    inputs = OrderedDict(gen(r))
    args = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    assert set(args) == set(inputs), (cid, args, list(inputs))
    aux = OrderedDict(aux_gen(rng_for(cid + '/aux')) if aux_gen else [])
    assert list(aux) == aux_names, (cid, aux_names, list(aux))
    hr = rng_for(cid + '/head')
    shapes = {n: inputs[n].shape for n in args}
    arg_shapes, out_shapes_inf, aux_shapes = sym.infer_shape(**shapes)
    attrs, nout = node_info(sym) if code is None else (None, None)
    case = OrderedDict([
        ('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', args),
        ('aux', aux_names), ('outputs', len(sym.list_outputs())),
        ('list_outputs', sym.list_outputs()), ('node_num_outputs', nout),
        ('attrs', attrs), ('grad_req', grad_req), ('train', train),
        ('backward', bool(train and backward)), ('infer', infer), ('random', random),
        ('infer_shape', OrderedDict([('args', jsonable(arg_shapes)),
                                     ('outs', jsonable(out_shapes_inf)),
                                     ('aux', jsonable(aux_shapes))])),
        ('notes', notes),
    ])
    for n in args:
        ARRAYS['%s/in/%s' % (cid, n)] = inputs[n]
    for n in aux_names:
        ARRAYS['%s/aux_init/%s' % (cid, n)] = aux[n]

    if train:
        ex = _bind(sym, inputs, aux, grad_req,
                   grads={n: mx.nd.zeros(inputs[n].shape) for n in args})
        outs = ex.forward(is_train=True)
        mx.nd.waitall()
        outputs = [o.asnumpy() for o in outs]
        for i, o in enumerate(outputs):
            ARRAYS['%s/out%d' % (cid, i)] = o
        for n in aux_names:
            ARRAYS['%s/aux_fwd/%s' % (cid, n)] = ex.aux_dict[n].asnumpy()
        changed = [n for n in args if not np.array_equal(ex.arg_dict[n].asnumpy(), inputs[n])]
        for n in changed:
            ARRAYS['%s/arg_fwd/%s' % (cid, n)] = ex.arg_dict[n].asnumpy()
        case['args_changed_by_forward'] = changed
        case['out_shapes'] = [list(o.shape) for o in outputs]
        heads = [U(hr, o.shape) for o in outputs]
        if backward:
            try:
                ex.backward([mx.nd.array(h) for h in heads])
                mx.nd.waitall()
            except mx.base.MXNetError as e:
                case['backward_error'] = err_info(e)
                case['backward'] = backward = False
        if backward:
            reqs = grad_req if isinstance(grad_req, dict) else {n: grad_req for n in args}
            gnames = [n for n in args if reqs.get(n, 'null') != 'null']
            for i, h in enumerate(heads):
                ARRAYS['%s/head%d' % (cid, i)] = h
            for n in gnames:
                ARRAYS['%s/grad/%s' % (cid, n)] = ex.grad_dict[n].asnumpy()
            for n in aux_names:
                ARRAYS['%s/aux_bwd/%s' % (cid, n)] = ex.aux_dict[n].asnumpy()
            case['grad_inputs'] = gnames
            if not random:
                case['grads_not_written'] = _not_written(sym, inputs, aux, gnames, heads,
                                                         reqs, cid)
    if infer:
        ex = _bind(sym, inputs, aux, 'null')
        outs = ex.forward(is_train=False)
        mx.nd.waitall()
        for i, o in enumerate(outs):
            ARRAYS['%s/infer_out%d' % (cid, i)] = o.asnumpy()
        for n in aux_names:
            ARRAYS['%s/infer_aux/%s' % (cid, n)] = ex.aux_dict[n].asnumpy()
        case['infer_out_shapes'] = [list(o.shape) for o in outs]
    if code is not None:
        case['code'] = code
        case['symbol_json'] = sym.tojson()
    CASES.append(case)


def _not_written(sym, inputs, aux, gnames, heads, reqs, cid):
    """Gradient arrays MXNet leaves untouched (bound sentinel-filled)."""
    grads = {n: mx.nd.full(inputs[n].shape, SENTINEL) for n in gnames}
    ex = _bind(sym, inputs, aux, {n: reqs[n] for n in gnames}, grads=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(h) for h in heads])
    mx.nd.waitall()
    return [n for n in gnames if np.all(grads[n].asnumpy() == SENTINEL)]


def op_case(cid, op, params, gen, aux_gen=None, **kw):
    """One op named 'op0' whose inputs are Variables named like the op's arguments."""
    names = [n for n, _ in gen(rng_for(cid))]
    aux_names = [n for n, _ in aux_gen(rng_for(cid))] if aux_gen else []
    variables = OrderedDict((n, mx.sym.Variable(n)) for n in names + aux_names)
    with fresh_scopes():
        sym = getattr(mx.sym, op)(name='op0', **variables, **params)
    run_case(cid, op, params, sym, gen, aux_gen, **kw)


def graph_case(cid, code, gen, aux_gen=None, **kw):
    ns = {'mx': mx}
    with fresh_scopes():
        exec(code, ns)
    run_case(cid, '_graph', {}, ns['sym'], gen, aux_gen, code=code, **kw)


# ----------------------------------------------------------------------------- op tables

def conv_gen(dshape, wshape, bias=True, data=None):
    def gen(r):
        out = [('data', U(r, dshape) if data is None else data), ('weight', U(r, wshape))]
        if bias:
            out.append(('bias', U(r, (wshape[0],))))
        return out
    return gen


def build_conv():
    op_case('conv2d_basic', 'Convolution', {'kernel': (3, 3), 'num_filter': 4},
            conv_gen((2, 3, 5, 5), (4, 3, 3, 3)))
    op_case('conv2d_stride_pad', 'Convolution',
            {'kernel': (3, 3), 'num_filter': 4, 'stride': (2, 2), 'pad': (1, 1)},
            conv_gen((2, 3, 6, 7), (4, 3, 3, 3)))
    op_case('conv2d_dilate', 'Convolution',
            {'kernel': (3, 3), 'num_filter': 3, 'dilate': (2, 2), 'pad': (2, 1)},
            conv_gen((1, 2, 7, 6), (3, 2, 3, 3)))
    op_case('conv2d_group', 'Convolution',
            {'kernel': (2, 3), 'num_filter': 6, 'num_group': 2, 'stride': (1, 2), 'pad': (1, 0)},
            conv_gen((2, 4, 5, 7), (6, 2, 2, 3)))
    op_case('conv2d_depthwise', 'Convolution',
            {'kernel': (3, 3), 'num_filter': 3, 'num_group': 3, 'pad': (1, 1)},
            conv_gen((2, 3, 4, 4), (3, 1, 3, 3)))
    op_case('conv2d_nobias', 'Convolution', {'kernel': (2, 2), 'num_filter': 5, 'no_bias': True},
            conv_gen((2, 3, 4, 5), (5, 3, 2, 2), bias=False))
    op_case('conv2d_rect_all', 'Convolution',
            {'kernel': (1, 3), 'num_filter': 4, 'stride': (2, 1), 'pad': (0, 1),
             'dilate': (1, 2), 'workspace': 512, 'cudnn_tune': 'fastest', 'cudnn_off': True},
            conv_gen((2, 2, 5, 6), (4, 2, 1, 3)),
            notes='workspace/cudnn_tune/cudnn_off are accepted and change nothing')
    op_case('conv2d_1x1_layout', 'Convolution',
            {'kernel': (1, 1), 'num_filter': 3, 'layout': 'NCHW'},
            conv_gen((3, 4, 2, 3), (3, 4, 1, 1)))
    op_case('conv1d', 'Convolution',
            {'kernel': (3,), 'num_filter': 4, 'stride': (2,), 'pad': (1,)},
            conv_gen((2, 3, 9), (4, 3, 3)))
    op_case('conv1d_dilate_group', 'Convolution',
            {'kernel': (2,), 'num_filter': 4, 'dilate': (3,), 'num_group': 2},
            conv_gen((2, 2, 8), (4, 1, 2)))
    op_case('conv3d', 'Convolution',
            {'kernel': (2, 3, 3), 'num_filter': 3, 'stride': (1, 2, 1), 'pad': (1, 0, 1)},
            conv_gen((1, 2, 4, 5, 5), (3, 2, 2, 3, 3)))
    op_case('conv3d_group_dilate_nobias', 'Convolution',
            {'kernel': (2, 2, 2), 'num_filter': 4, 'num_group': 2, 'dilate': (1, 2, 1),
             'no_bias': True},
            conv_gen((2, 4, 3, 5, 4), (4, 2, 2, 2, 2), bias=False))
    op_case('conv2d_grad_add', 'Convolution', {'kernel': (2, 2), 'num_filter': 2},
            conv_gen((1, 2, 3, 3), (2, 2, 2, 2)), grad_req='add',
            notes="grad_req='add' with zero-initialised grads: one backward")


def pool_gen(shape, kind='u'):
    def gen(r):
        if kind == 'arange':
            return [('data', arange(shape))]
        if kind == 'ties':
            return [('data', ints(r, shape, 0, 3))]
        if kind == 'neg':
            return [('data', U(r, shape, -3.0, -1.0))]
        if kind == 'pos':
            return [('data', U(r, shape, 0.1, 2.0))]
        if kind == 'nonfinite':  # NaN, -inf and +inf cells, and whole windows of -inf
            x = U(r, shape)
            flat = x.reshape(-1)
            flat[r.randint(0, flat.size, max(1, flat.size // 7))] = np.nan
            flat[r.randint(0, flat.size, max(1, flat.size // 7))] = -np.inf
            flat[r.randint(0, flat.size, max(1, flat.size // 29))] = np.inf
            x[..., :3, :3] = -np.inf
            return [('data', x)]
        return [('data', U(r, shape))]
    return gen


def build_pool():
    P = lambda cid, params, gen, **kw: op_case(cid, 'Pooling', params, gen, **kw)  # noqa: E731
    P('pool_max_k2s2', {'kernel': (2, 2), 'stride': (2, 2)}, pool_gen((2, 3, 4, 6)))
    P('pool_max_default_stride', {'kernel': (2, 2)}, pool_gen((1, 2, 4, 4)),
      notes='stride defaults to 1')
    P('pool_max_k3s2p1_neg', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1)},
      pool_gen((1, 2, 5, 5), 'neg'), notes='all inputs negative: pads never win')
    P('pool_max_k3s2p1_wide', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1)},
      pool_gen((2, 16, 9, 10)), notes="ResNet's stem pooling: 16 channels (neomx's "
                                       "channels-last kernel), pads within half a window")
    P('pool_max_nonfinite', {'kernel': (2, 2), 'stride': (2, 2)},
      pool_gen((1, 2, 6, 6), 'nonfinite'),
      notes='a NaN never wins a window; a window of -inf gives the lowest float32')
    P('pool_max_k3s2p1_nonfinite', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1)},
      pool_gen((1, 10, 7, 7), 'nonfinite'), backward=False,
      notes='a NaN never wins a window; a window of -inf or padding gives the lowest float32 '
            '(forward only: a window of -inf and padding sends its gradient to the padding in '
            "MXNet, to its first input cell in neomx's ATen kernel)")
    P('pool_max_ties', {'kernel': (3, 3), 'stride': (1, 1)}, pool_gen((2, 2, 5, 5), 'ties'),
      notes='integer data with ties: the gradient goes to the first max (row-major)')
    P('pool_max_ties_overlap_pad', {'kernel': (2, 3), 'stride': (1, 2), 'pad': (1, 1)},
      pool_gen((1, 2, 4, 5), 'ties'))
    P('pool_max_full', {'kernel': (3, 3), 'stride': (2, 2), 'pooling_convention': 'full'},
      pool_gen((1, 2, 6, 6)))
    P('pool_max_full_empty_window', {'kernel': (1, 1), 'stride': (2, 2),
                                     'pooling_convention': 'full'},
      pool_gen((1, 1, 4, 4), 'arange'),
      notes='the last window starts past the input: its max is the lowest float32')
    P('pool_avg_spec_k3s2p1', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1),
                               'pool_type': 'avg'},
      pool_gen((1, 1, 4, 4), 'arange'), notes='spec: [1.111, 2.667, 5.667, 10]')
    P('pool_avg_spec_k3s2p1_nocip', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1),
                                     'pool_type': 'avg', 'count_include_pad': False},
      pool_gen((1, 1, 4, 4), 'arange'), notes='spec: [2.5, 4, 8.5, 10]')
    P('pool_avg_spec_full_k3s2', {'kernel': (3, 3), 'stride': (2, 2), 'pool_type': 'avg',
                                  'pooling_convention': 'full'},
      pool_gen((1, 1, 4, 4), 'arange'), notes='spec: [5, 6.5, 11, 12.5]')
    P('pool_avg_full_pad', {'kernel': (3, 2), 'stride': (2, 3), 'pad': (1, 1), 'pool_type': 'avg',
                            'pooling_convention': 'full'}, pool_gen((2, 2, 6, 7)))
    P('pool_avg_full_pad_nocip', {'kernel': (3, 2), 'stride': (2, 3), 'pad': (1, 1),
                                  'pool_type': 'avg', 'pooling_convention': 'full',
                                  'count_include_pad': False}, pool_gen((2, 2, 6, 7)))
    P('pool_avg_full_empty_window', {'kernel': (1, 1), 'stride': (2, 2), 'pool_type': 'avg',
                                     'pooling_convention': 'full'},
      pool_gen((1, 1, 4, 4), 'arange'), notes='empty windows average to 0')
    P('pool_sum_k2s2', {'kernel': (2, 2), 'stride': (2, 2), 'pool_type': 'sum'},
      pool_gen((2, 2, 4, 4)))
    P('pool_sum_full_pad', {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'pool_type': 'sum',
                            'pooling_convention': 'full'}, pool_gen((1, 2, 5, 6)))
    P('pool_lp1', {'kernel': (2, 2), 'stride': (2, 2), 'pool_type': 'lp', 'p_value': 1},
      pool_gen((1, 2, 4, 4)))
    P('pool_lp2', {'kernel': (2, 2), 'stride': (1, 1), 'pool_type': 'lp', 'p_value': 2},
      pool_gen((1, 2, 4, 4)))
    P('pool_lp3_pos', {'kernel': (2, 2), 'stride': (2, 2), 'pool_type': 'lp', 'p_value': 3},
      pool_gen((1, 2, 4, 4), 'pos'))
    P('pool_lp2_pad', {'kernel': (2, 2), 'stride': (2, 2), 'pad': (1, 1), 'pool_type': 'lp',
                       'p_value': 2}, pool_gen((1, 1, 4, 4), 'pos'))
    P('pool_global_max', {'global_pool': True}, pool_gen((2, 3, 3, 4)),
      notes='global_pool without kernel')
    P('pool_global_max_kernel', {'global_pool': True, 'kernel': (1, 1), 'pad': (1, 1),
                                 'stride': (2, 2)},
      pool_gen((2, 3, 3, 4)), notes='kernel/pad/stride are ignored')
    P('pool_global_avg', {'global_pool': True, 'pool_type': 'avg', 'kernel': (2, 2)},
      pool_gen((2, 3, 3, 4)))
    P('pool_global_sum_1d', {'global_pool': True, 'pool_type': 'sum'}, pool_gen((2, 3, 5)))
    P('pool_global_avg_3d', {'global_pool': True, 'pool_type': 'avg'}, pool_gen((1, 2, 2, 3, 4)))
    P('pool1d_max', {'kernel': (3,), 'stride': (2,), 'pad': (1,)}, pool_gen((2, 3, 8)))
    P('pool1d_avg_full', {'kernel': (3,), 'stride': (2,), 'pool_type': 'avg',
                          'pooling_convention': 'full'}, pool_gen((2, 3, 8)))
    P('pool3d_max', {'kernel': (2, 2, 2), 'stride': (2, 1, 2)}, pool_gen((1, 2, 4, 3, 4)))
    P('pool3d_avg_pad', {'kernel': (2, 3, 2), 'stride': (1, 2, 2), 'pad': (1, 1, 0),
                         'pool_type': 'avg'}, pool_gen((1, 2, 3, 5, 4)))
    P('pool3d_avg_pad_nocip', {'kernel': (2, 3, 2), 'stride': (1, 2, 2), 'pad': (1, 1, 0),
                               'pool_type': 'avg', 'count_include_pad': False},
      pool_gen((1, 2, 3, 5, 4)))


def bn_gen(shape, axis=1, gamma=True):
    c = shape[axis]

    def gen(r):
        return [('data', U(r, shape, -2, 2)),
                ('gamma', U(r, (c,), 0.5, 2.0)), ('beta', U(r, (c,)))]

    def aux(r):
        return [('moving_mean', U(r, (c,), -0.5, 0.5)), ('moving_var', U(r, (c,), 0.5, 1.5))]
    return gen, aux


def build_bn():
    def B(cid, params, shape, axis=1, **kw):
        gen, aux = bn_gen(shape, axis)
        op_case(cid, 'BatchNorm', params, gen, aux, infer=True, **kw)

    B('bn_2d_default', {}, (4, 3),
      notes='fix_gamma=True: the gamma array is set to 1 and its grad is 0')
    B('bn_4d_default', {}, (2, 3, 2, 2))
    B('bn_2d_fix_gamma_false', {'fix_gamma': False}, (5, 3))
    B('bn_3d_fix_gamma_false', {'fix_gamma': False}, (2, 3, 5))
    B('bn_4d_fix_gamma_false', {'fix_gamma': False}, (2, 3, 2, 3))
    B('bn_use_global_stats', {'fix_gamma': False, 'use_global_stats': True}, (2, 3, 2, 2))
    B('bn_output_mean_var', {'fix_gamma': False, 'output_mean_var': True}, (4, 3, 2),
      notes='3 visible outputs: output, mean, 1/sqrt(var+eps); their head grads are ignored')
    B('bn_global_output_mean_var', {'fix_gamma': False, 'use_global_stats': True,
                                    'output_mean_var': True}, (3, 2, 2))
    B('bn_axis_last', {'fix_gamma': False, 'axis': -1}, (2, 3, 4), axis=2)
    B('bn_axis2', {'fix_gamma': False, 'axis': 2}, (2, 3, 4, 2), axis=2)
    B('bn_momentum_eps', {'fix_gamma': False, 'momentum': 0.5, 'eps': 1e-5}, (6, 2))


def build_dropout():
    ones = lambda shape: (lambda r: [('data', U(r, shape, 0.5, 1.5))])  # noqa: E731
    D = lambda cid, params, shape, **kw: op_case(cid, 'Dropout', params, ones(shape),  # noqa
                                                  infer=True, random=True, **kw)
    D('dropout_p05', {}, (40, 50))
    D('dropout_p03', {'p': 0.3}, (40, 50))
    D('dropout_axes', {'p': 0.4, 'axes': (1,)}, (6, 20, 8),
      notes='one mask entry per (n, w): broadcast along axis 1')
    D('dropout_always', {'p': 0.25, 'mode': 'always'}, (30, 40),
      notes="mode='always' drops in inference too")
    D('dropout_p0', {'p': 0.0}, (4, 5), notes='p=0: the identity')
    D('dropout_p1_always', {'p': 1.0, 'mode': 'always'}, (3, 4), backward=False,
      notes='p=1 gives nan (0 * 1/0)')


def build_leaky():
    def data(shape):
        def gen(r):
            x = U(r, shape, -2, 2)
            x.flat[0] = 0.0  # pin the behaviour at 0
            return [('data', x)]
        return gen

    def L(cid, params, shape, **kw):
        op_case(cid, 'LeakyReLU', params, data(shape), **kw)

    L('leaky_default', {}, (3, 4))
    L('leaky_slope', {'act_type': 'leaky', 'slope': 0.1}, (2, 3, 4))
    L('leaky_negative_slope', {'act_type': 'leaky', 'slope': -0.5}, (3, 4),
      notes='negative slope: the gradient branch follows the sign of the input')
    L('elu', {'act_type': 'elu'}, (3, 5))
    L('elu_slope', {'act_type': 'elu', 'slope': 0.7}, (2, 6))
    L('selu', {'act_type': 'selu'}, (3, 5),
      notes='the gradient for x <= 0 is lambda*(y + alpha) on the output y, not the true '
            'derivative y + lambda*alpha')
    L('gelu', {'act_type': 'gelu'}, (3, 5))
    L('rrelu_infer', {'act_type': 'rrelu', 'lower_bound': 0.2, 'upper_bound': 0.4}, (3, 5),
      train=False, infer=True,
      notes='inference slope = (lower+upper)/2; MXNet 1.9.1 crashes (segfault) on a '
            'training forward, so only inference is recorded. Both outputs are visible.')

    def prelu(shape, gshape):
        def gen(r):
            x = U(r, shape, -2, 2)
            x.flat[0] = 0.0
            return [('data', x), ('gamma', U(r, gshape, 0.1, 0.9))]
        return gen
    op_case('prelu_3d', 'LeakyReLU', {'act_type': 'prelu'}, prelu((2, 3, 4), (3,)))
    op_case('prelu_4d', 'LeakyReLU', {'act_type': 'prelu'}, prelu((2, 3, 2, 2), (3,)))
    op_case('prelu_2d', 'LeakyReLU', {'act_type': 'prelu'}, prelu((4, 3), (3,)))
    op_case('prelu_shared_gamma', 'LeakyReLU', {'act_type': 'prelu'}, prelu((2, 3, 4), (1,)),
            notes='a (1,) gamma is shared by every channel')


def build_embedding():
    def gen(dshape, idx, vocab, dim):
        def g(r):
            return [('data', np.array(idx, F32).reshape(dshape)), ('weight', U(r, (vocab, dim)))]
        return g
    req = {'data': 'null', 'weight': 'write'}
    op_case('embed_basic', 'Embedding', {'input_dim': 5, 'output_dim': 4},
            gen((2, 3), [0, 4, 2, 2, 1, 4], 5, 4), grad_req=req,
            notes="repeated indices accumulate; grad_req 'write' on data makes MXNet's backward "
                  "fail ('Embedding layer doesn't support calculate data gradient')")
    op_case('embed_clip_trunc', 'Embedding', {'input_dim': 4, 'output_dim': 3},
            gen((7,), [0, 1.7, -1, 3, 5, 2.5, -0.5], 4, 3), grad_req=req,
            notes='indices are truncated toward zero, then clipped to [0, input_dim)')
    op_case('embed_3d', 'Embedding', {'input_dim': 6, 'output_dim': 2},
            gen((2, 2, 2), [5, 0, 0, 3, 1, 1, 1, 2], 6, 2), grad_req=req)


LENET_CODE = """data = mx.sym.Variable('data')
c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='c1')
b = mx.sym.BatchNorm(c, fix_gamma=False, name='bn1')
a = mx.sym.LeakyReLU(b, act_type='prelu', name='act1')
p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type='max', name='p1')
e = mx.sym.LeakyReLU(p, act_type='elu', name='act2')
q = mx.sym.Pooling(e, kernel=(2, 2), stride=(1, 1), pool_type='avg', name='p2')
sym = mx.sym.FullyConnected(mx.sym.Flatten(q), num_hidden=3, name='fc')
"""


def build_graphs():
    def gen(r):
        return [('data', U(r, (2, 2, 6, 6))), ('c1_weight', U(r, (4, 2, 3, 3))),
                ('c1_bias', U(r, (4,))), ('bn1_gamma', U(r, (4,), 0.5, 1.5)),
                ('bn1_beta', U(r, (4,))), ('act1_gamma', U(r, (4,), 0.1, 0.5)),
                ('fc_weight', U(r, (3, 16))), ('fc_bias', U(r, (3,)))]

    def aux(r):
        return [('bn1_moving_mean', U(r, (4,), -0.2, 0.2)),
                ('bn1_moving_var', U(r, (4,), 0.8, 1.2))]
    graph_case('graph_conv_block', LENET_CODE, gen, aux, infer=True,
               notes="MXNet runs act1 (prelu) in place over bn1's output and then reads that "
                     "overwritten input for act1_gamma's gradient, which comes out multiplied "
                     "by gamma")


# ----------------------------------------------------------------------------- errors

ERROR_CODES = OrderedDict([
    ('conv_kernel_exceeds', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(7, 7), "
                            "num_filter=2).infer_shape(data=(2, 4, 5, 5))"),
    ('conv_group_in', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=6, "
                      "num_group=3).infer_shape(data=(2, 4, 5, 5))"),
    ('conv_group_out', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=5, "
                       "num_group=2).infer_shape(data=(2, 4, 5, 5))"),
    ('conv_data_ndim', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3,), "
                       "num_filter=2).infer_shape(data=(2, 4, 5, 5))"),
    ('conv_weight_shape', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), "
                          "num_filter=6, name='c').infer_shape(data=(2, 4, 5, 5), "
                          "c_weight=(6, 3, 3, 3))"),
    ('conv_stride_ndim', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), "
                         "num_filter=6, stride=(2,)).infer_shape(data=(2, 4, 5, 5))"),
    ('conv_no_num_filter', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3))"),
    ('pool_no_kernel', "mx.sym.Pooling(mx.sym.Variable('data')).infer_shape(data=(1, 1, 4, 4))"),
    ('pool_kernel_exceeds', "mx.sym.Pooling(mx.sym.Variable('data'), kernel=(5, 5))"
                            ".infer_shape(data=(1, 1, 4, 4))"),
    ('pool_data_ndim', "mx.sym.Pooling(mx.sym.Variable('data'), kernel=(3, 3))"
                       ".infer_shape(data=(2, 4, 5))"),
    ('pool_global_2d', "mx.sym.Pooling(mx.sym.Variable('data'), global_pool=True)"
                       ".infer_shape(data=(2, 4))"),
    ('pool_lp_no_p', "mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type='lp')"),
    ('pool_same_2d', "mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), "
                     "pooling_convention='same')"),
    ('pool_same_1d', "mx.sym.Pooling(mx.sym.Variable('data'), kernel=(2,), stride=(2,), "
                     "pooling_convention='same').infer_shape(data=(1, 1, 7))"),
    ('pool_bad_type', "mx.sym.Pooling(mx.sym.Variable('data'), kernel=(2, 2), pool_type='min')"),
    ('bn_axis_range', "mx.sym.BatchNorm(mx.sym.Variable('data'), axis=4)"
                      ".infer_shape(data=(2, 3))"),
    ('dropout_p_range', "mx.nd.Dropout(mx.nd.ones((2, 2)), p=1.5)"),
    ('leaky_bad_type', "mx.sym.LeakyReLU(mx.sym.Variable('data'), act_type='foo')"),
    ('embed_weight_shape', "mx.sym.Embedding(mx.sym.Variable('data'), input_dim=4, "
                           "output_dim=3, name='e').infer_shape(data=(2, 3), e_weight=(5, 3))"),
    ('embed_data_grad', "(lambda ex: (ex.forward(is_train=True), "
                        "ex.backward(mx.nd.ones((2, 3))), mx.nd.waitall()))("
                        "mx.sym.Embedding(mx.sym.Variable('data'), input_dim=4, output_dim=3)"
                        ".simple_bind(mx.cpu(), data=(2,)))"),
])

SHAPE_CODES = OrderedDict([
    ('conv_nhwc', "mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=6, "
                  "layout='NHWC').infer_shape(data=(2, 4, 5, 5))"),
    ('pool_nhwc', "mx.sym.Pooling(mx.sym.Variable('data'), kernel=(2, 2), stride=(2, 2), "
                  "layout='NHWC').infer_shape(data=(2, 4, 6, 3))"),
    ('bn_fp16', "mx.sym.BatchNorm(mx.sym.Variable('data')).infer_type(data='float16')"),
    ('embed_types', "mx.sym.Embedding(mx.sym.Variable('data'), input_dim=4, output_dim=3, "
                    "dtype='float16').infer_type(data='int32')"),
    ('prelu_shapes', "mx.sym.LeakyReLU(mx.sym.Variable('data'), act_type='prelu')"
                     ".infer_shape(data=(2, 3, 4))"),
    ('dropout_outputs', "mx.sym.Dropout(mx.sym.Variable('data')).list_outputs()"),
    ('bn_outputs', "mx.sym.BatchNorm(mx.sym.Variable('data'), output_mean_var=True)"
                   ".list_outputs()"),
    ('pool_max_pad_ge_kernel_nd', "mx.nd.Pooling(mx.nd.arange(9).reshape((1, 1, 3, 3)), "
                                  "kernel=(2, 2), pad=(2, 1)).asnumpy().tolist()"),
    ('rrelu_outputs', "mx.sym.LeakyReLU(mx.sym.Variable('data'), act_type='rrelu')"
                      ".list_outputs()"),
])


def _typename(v):
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, (list, tuple)):
        return [_typename(x) for x in v]
    return v


def build_errors():
    errors = []
    for cid, code in ERROR_CODES.items():
        rec = OrderedDict([('id', cid), ('code', code)])
        with fresh_scopes():
            try:
                eval(code, {'mx': mx})
                mx.nd.waitall()
                rec['result'] = 'ok'
            except Exception as e:  # noqa: BLE001 - every MXNet error is recorded
                rec.update(err_info(e))
        errors.append(rec)
    shapes = []
    for cid, code in SHAPE_CODES.items():
        with fresh_scopes():
            shapes.append(OrderedDict([('id', cid), ('code', code),
                                       ('result', jsonable(_typename(eval(code, {'mx': mx}))))]))
    return errors, shapes


README = """# MXNet 1.9.1 golden fixtures: layers

Reference results from the real Apache MXNet {version} (CPU build with oneDNN, numpy 1.23),
written by `tools/make_golden_layers.py`, for `tests/ops/test_layers.py`.

`layers.json` has `cases` (Convolution, Pooling, BatchNorm, Dropout, LeakyReLU, Embedding and
one small `_graph` built by the stored `code`), `errors` (MXNet's error text for bad
parameters/shapes: `error`, with timestamps masked, and the core `error_message`) and `shapes`
(a few infer_shape/infer_type/list_outputs results). Each op case is
`mx.sym.<op>(name='op0', **params, **variables)` with one Variable per argument and auxiliary
state named after it (`data`, `weight`, `bias`, `gamma`, `beta`, `moving_mean`, `moving_var`),
bound with `bind` on `cpu()` with the recorded `grad_req` and aux values. Per case the npz
holds (keys `<id>/...`):

* `in/<arg>`, `aux_init/<aux>`: the inputs and auxiliary states bound;
* `out<i>`: outputs of `forward(is_train=True)` (when `train`); `arg_fwd/<arg>`: arguments
  the forward changed (BatchNorm with fix_gamma writes 1 into gamma; listed in
  `args_changed_by_forward`); `aux_fwd/<aux>`: auxiliary states right after that forward;
* `head<i>`, `grad/<arg>`, `aux_bwd/<aux>`: head gradients given to `backward`, the resulting
  gradients (`grad_inputs`) and the auxiliary states after backward (when `backward`);
* `infer_out<i>`, `infer_aux/<aux>`: `forward(is_train=False)` on a fresh executor (when
  `infer`).

`grads_not_written` lists gradient buffers MXNet leaves untouched (sentinel-filled `bind`),
`node_num_outputs` the op node's output count in the JSON `node_row_ptr` (hidden outputs
included), `infer_shape` MXNet's shapes for the bound inputs. Cases with `random` (Dropout)
depend on MXNet's RNG: tests check properties (mask values, keep rate, gradient = head times
mask), not the values. Note: MXNet 1.9.1 updates BatchNorm's moving statistics in the
*backward* pass (`aux_fwd` equals `aux_init`); neomx does it in the training forward, so the
tests compare neomx after forward+backward with `aux_bwd`.

Inputs come from `np.random.RandomState` seeded by the CRC32 of the case id. To regenerate,
run `tools/mxnet-oracle tools/make_golden_layers.py` from the repository root.
"""


def main():
    print('mxnet', mx.__version__, 'numpy', np.__version__)
    os.makedirs(OUT, exist_ok=True)
    build_conv()
    build_pool()
    build_bn()
    build_dropout()
    build_leaky()
    build_embedding()
    build_graphs()
    errors, shapes = build_errors()
    write_json(os.path.join(OUT, 'layers.json'),
               OrderedDict([('generator', GENERATOR), ('mxnet_version', mx.__version__),
                            ('cases', CASES), ('errors', errors), ('shapes', shapes)]))
    np.savez_compressed(os.path.join(OUT, 'layers.npz'), **ARRAYS)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README.format(version=mx.__version__))
    print('%d cases, %d arrays, %d errors' % (len(CASES), len(ARRAYS), len(errors)))


if __name__ == '__main__':
    main()
