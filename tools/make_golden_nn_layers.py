#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's extra layers, losses and sequence operators.

Covers LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN, Deconvolution, UpSampling,
SequenceMask/Last/Reverse, SoftmaxActivation, softmax_cross_entropy, SVMOutput,
IdentityAttachKLSparseReg, BilinearSampler, GridGenerator, SpatialTransformer, ROIPooling,
Correlation and CTCLoss. Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_nn_layers.py

Output goes to ``tests/golden/nn_layers/``: ``nn_layers.json`` (cases, errors) and
``nn_layers.npz`` (arrays, keys ``<id>/...``). Each case is ``mx.sym.<op>(*variables,
name='op0', **params)`` with one Variable per argument and auxiliary state (named after MXNet's
argument names), bound on cpu; ``forward(is_train=True)`` then ``backward`` with seeded random
head gradients, the gradients of the inputs listed in ``grad_inputs`` (grad_req 'write', the
others 'null'). Per case the npz holds ``in/<arg>``, ``aux_init/<aux>``, ``out<i>`` (visible
outputs), ``head<i>``, ``grad/<arg>``, ``aux_bwd/<aux>``, and ``nd_out<i>`` (the same call
through ``mx.nd`` in train mode). Inputs come from ``np.random.RandomState`` seeded by the
CRC32 of the case id. Only mxnet, numpy and the stdlib are used.
"""
import json
import os
from collections import OrderedDict

from _oracle_common import (F32, SENTINEL, U, err_info, fresh_scopes, golden_dir, jsonable, rng_for,
                            write_json)

import numpy as np
import mxnet as mx

OUT = golden_dir('nn_layers')
CASES = []
ERRORS = []
ARRAYS = OrderedDict()


def _sym(op, names, aux_names, params):
    variables = [mx.sym.Variable(n) for n in names]
    auxv = {n: mx.sym.Variable(n) for n in aux_names}
    with fresh_scopes():
        return getattr(mx.sym, op)(*variables, name='op0', **auxv, **params)


def case(cid, op, params, inputs, grads=None, aux=None, backward=True):
    """``inputs``: list of (name, array); ``grads``: names to differentiate (default: all
    float inputs named data/gamma/beta/weight/bias/grid/loc/arg*)."""
    names = [n for n, _ in inputs]
    aux = aux or []
    aux_names = [n for n, _ in aux]
    sym = _sym(op, names, aux_names, params)
    assert sym.list_arguments() == names, (cid, sym.list_arguments(), names)
    assert sym.list_auxiliary_states() == aux_names, (cid, sym.list_auxiliary_states())
    if grads is None:
        grads = names
    shapes = {n: a.shape for n, a in inputs}
    arg_s, out_s, aux_s = sym.infer_shape(**shapes)
    js = json.loads(sym.tojson())
    ptr = js['node_row_ptr']
    rec = OrderedDict([
        ('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', names),
        ('aux', aux_names), ('grad_inputs', list(grads) if backward else []),
        ('list_outputs', sym.list_outputs()), ('attrs', js['nodes'][-1].get('attrs', {})),
        ('node_num_outputs', ptr[-1] - ptr[-2]),
        ('infer_shape', [jsonable(arg_s), jsonable(out_s), jsonable(aux_s)]),
    ])
    for n, a in inputs:
        ARRAYS['%s/in/%s' % (cid, n)] = a
    for n, a in aux:
        ARRAYS['%s/aux_init/%s' % (cid, n)] = a
    args = {n: mx.nd.array(a, dtype=a.dtype) for n, a in inputs}
    auxd = {n: mx.nd.array(a, dtype=a.dtype) for n, a in aux}
    gbuf = {n: mx.nd.zeros(shapes[n]) for n in grads}
    req = {n: ('write' if n in grads else 'null') for n in names}
    ex = sym.bind(mx.cpu(), args=args, args_grad=gbuf, grad_req=req, aux_states=auxd)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    for i, o in enumerate(outs):
        ARRAYS['%s/out%d' % (cid, i)] = o
    rec['out_shapes'] = [list(o.shape) for o in outs]
    if backward:
        hr = rng_for(cid + '/head')
        heads = [U(hr, o.shape) for o in outs]
        ex.backward([mx.nd.array(h) for h in heads])
        for i, h in enumerate(heads):
            ARRAYS['%s/head%d' % (cid, i)] = h
        for n in grads:
            ARRAYS['%s/grad/%s' % (cid, n)] = ex.grad_dict[n].asnumpy()
        for n in aux_names:
            ARRAYS['%s/aux_bwd/%s' % (cid, n)] = ex.aux_dict[n].asnumpy()
    others = [n for n in names if n not in grads]
    if backward and others:
        rec['other_grads'] = _other_grads(sym, inputs, aux, heads)
    if aux:  # MXNet's generated mx.nd function of a legacy op takes no auxiliary states
        rec['nd_outputs'] = 0
        CASES.append(rec)
        return
    with mx.autograd.train_mode():
        res = getattr(mx.nd, op)(*[mx.nd.array(a, dtype=a.dtype) for _, a in inputs], **params)
    res = res if isinstance(res, list) else [res]
    for i, o in enumerate(res):
        ARRAYS['%s/nd_out%d' % (cid, i)] = o.asnumpy()
    rec['nd_outputs'] = len(res)
    CASES.append(rec)


SHAPES = []


def shape_case(cid, op, params, shapes):
    """infer_shape_partial of ``op`` from the given input shapes (list of (name, shape)); the
    named inputs are given by keyword (UpSampling's positionally), the others left to the op."""
    if op == 'UpSampling':
        sym = _sym(op, [n for n, _ in shapes], [], params)
    else:
        with fresh_scopes():
            sym = getattr(mx.sym, op)(name='op0', **{n: mx.sym.Variable(n) for n, _ in shapes},
                                      **params)
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('shapes', jsonable(shapes)), ('arguments', sym.list_arguments())])
    try:
        rec['infer_shape'] = jsonable(sym.infer_shape_partial(**dict(shapes)))
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    SHAPES.append(rec)


TYPES = []


def type_case(cid, op, params, names, types):
    """infer_type of ``op`` (inputs ``names``) from ``types`` (dict name -> dtype name)."""
    sym = _sym(op, names, [], params)
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', names),
                       ('types', types)])
    try:
        res = sym.infer_type(**types)
        rec['infer_type'] = [[None if t is None else np.dtype(t).name for t in part]
                             if part is not None else None for part in res]
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    TYPES.append(rec)


def _other_grads(sym, inputs, aux, heads):
    """What MXNet does to the gradient of inputs not differentiated above (labels, lengths,
    rois) when asked with grad_req 'write': 'untouched', 'zeros', or its error message."""
    names = [n for n, _ in inputs]
    gbuf = {n: mx.nd.full(a.shape, SENTINEL) for n, a in inputs}
    ex = sym.bind(mx.cpu(), args={n: mx.nd.array(a, dtype=a.dtype) for n, a in inputs},
                  args_grad=gbuf, grad_req='write',
                  aux_states={n: mx.nd.array(a) for n, a in aux})
    try:
        ex.forward(is_train=True)
        ex.backward([mx.nd.array(h) for h in heads])
        mx.nd.waitall()
    except mx.base.MXNetError as e:
        return err_info(e)['error_message']
    out = OrderedDict()
    for n in names:
        g = gbuf[n].asnumpy()
        out[n] = 'untouched' if np.all(g == SENTINEL) else 'zeros' if not g.any() else 'values'
    return out


def error(cid, op, params, shapes, nd=False):
    """MXNet's error for infer_shape of ``op`` on ``shapes`` (list of (name, shape))."""
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('shapes', jsonable(shapes))])
    try:
        sym = _sym(op, [n for n, _ in shapes], [], params)
        sym.infer_shape(**dict(shapes))
        rec['error'] = None
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    ERRORS.append(rec)


# ----------------------------------------------------------------------------- cases
def norms():
    r = rng_for
    x = U(r('ln'), (2, 3, 4))
    case('layernorm_last', 'LayerNorm', {}, [('data', x), ('gamma', U(r('g'), (4,))),
                                            ('beta', U(r('b'), (4,)))])
    case('layernorm_axis1_mv', 'LayerNorm', {'axis': 1, 'eps': 1e-3, 'output_mean_var': True},
         [('data', x), ('gamma', U(r('g'), (3,))), ('beta', U(r('b'), (3,)))])
    case('layernorm_2d', 'LayerNorm', {'axis': -2},
         [('data', U(r('ln2'), (5, 3))), ('gamma', U(r('g2'), (5,))), ('beta', U(r('b2'), (5,)))])
    xi = U(r('in'), (2, 3, 4, 5))
    case('instancenorm', 'InstanceNorm', {}, [('data', xi), ('gamma', U(r('g'), (3,))),
                                             ('beta', U(r('b'), (3,)))])
    case('instancenorm_3d', 'InstanceNorm', {'eps': 0.1},
         [('data', U(r('in3'), (3, 2, 6))), ('gamma', U(r('g'), (2,))), ('beta', U(r('b'), (2,)))])
    xg = U(r('gn'), (2, 6, 3, 2))
    case('groupnorm', 'GroupNorm', {'num_groups': 3},
         [('data', xg), ('gamma', U(r('g'), (3,))), ('beta', U(r('b'), (3,)))])
    case('groupnorm_mv', 'GroupNorm', {'num_groups': 2, 'eps': 1e-2, 'output_mean_var': True},
         [('data', U(r('gn2'), (3, 4, 5))), ('gamma', U(r('g'), (2,))), ('beta', U(r('b'), (2,)))])
    case('groupnorm_1', 'GroupNorm', {},
         [('data', U(r('gn3'), (2, 4, 3))), ('gamma', U(r('g'), (1,))), ('beta', U(r('b'), (1,)))])
    for mode in ('instance', 'channel', 'spatial'):
        case('l2norm_' + mode, 'L2Normalization', {'mode': mode},
             [('data', U(r('l2' + mode), (2, 3, 4, 2)))])
    case('l2norm_2d', 'L2Normalization', {'eps': 0.5}, [('data', U(r('l22'), (3, 4)))])
    case('lrn', 'LRN', {'nsize': 3}, [('data', U(r('lrn'), (2, 5, 3, 3)))])
    case('lrn_params', 'LRN', {'nsize': 5, 'alpha': 0.01, 'beta': 0.5, 'knorm': 1.5},
         [('data', U(r('lrn2'), (1, 7, 2, 3)))])
    error('e_layernorm_axis', 'LayerNorm', {'axis': 3}, [('data', (2, 3))])
    error('e_groupnorm_div', 'GroupNorm', {'num_groups': 4}, [('data', (2, 6, 3))])
    error('e_l2norm_channel_2d', 'L2Normalization', {'mode': 'channel'}, [('data', (2, 3))])
    error('e_lrn_nsize', 'LRN', {}, [('data', (2, 3, 4, 4))])
    error('e_instancenorm_gamma', 'InstanceNorm', {},
          [('data', (2, 3, 4)), ('gamma', (4,)), ('beta', (3,))])


def deconv():
    r = rng_for

    def ins(cid, dshape, wshape, bias):
        out = [('data', U(r(cid + 'd'), dshape)), ('weight', U(r(cid + 'w'), wshape))]
        return out + ([('bias', U(r(cid + 'b'), (wshape[1],)))] if bias else [])
    case('deconv_basic', 'Deconvolution', {'kernel': (3, 3), 'num_filter': 4},
         ins('a', (2, 3, 4, 4), (3, 4, 3, 3), False))
    case('deconv_stride_pad_adj', 'Deconvolution',
         {'kernel': (3, 3), 'num_filter': 2, 'stride': (2, 2), 'pad': (1, 1), 'adj': (1, 1),
          'no_bias': False}, ins('b', (1, 3, 3, 4), (3, 2, 3, 3), True))
    case('deconv_group_dilate', 'Deconvolution',
         {'kernel': (2, 3), 'num_filter': 4, 'num_group': 2, 'dilate': (2, 1), 'stride': (1, 2)},
         [('data', U(r('cd'), (2, 4, 3, 3))), ('weight', U(r('cw'), (4, 2, 2, 3)))])
    # oneDNN refuses target_shape's implied pad/adj ("could not create a descriptor"):
    # shapes only
    shape_case('deconv_target', 'Deconvolution',
               {'kernel': (4, 4), 'num_filter': 3, 'stride': (2, 2), 'target_shape': (7, 8)},
               [('data', (1, 2, 4, 4))])
    case('deconv_1d', 'Deconvolution', {'kernel': (3,), 'num_filter': 2, 'stride': (2,),
                                        'no_bias': False},
         ins('e', (2, 3, 5), (3, 2, 3), True))
    error('e_deconv_group', 'Deconvolution', {'kernel': (3, 3), 'num_filter': 3, 'num_group': 2},
          [('data', (1, 4, 3, 3))])
    error('e_deconv_ndim', 'Deconvolution', {'kernel': (3, 3), 'num_filter': 3},
          [('data', (1, 4, 3))])
    error('e_deconv_target', 'Deconvolution', {'kernel': (3, 3), 'num_filter': 3,
                                               'target_shape': (20, 20)},
          [('data', (1, 4, 3, 3))])


def upsampling():
    r = rng_for
    case('up_nearest', 'UpSampling', {'scale': 2, 'sample_type': 'nearest'},
         [('arg0', U(r('u1'), (2, 3, 2, 3)))])
    case('up_nearest_concat', 'UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 2},
         [('arg0', U(r('u2'), (1, 2, 2, 2))), ('arg1', U(r('u3'), (1, 3, 4, 4)))])
    case('up_nearest_sum', 'UpSampling', {'scale': 3, 'sample_type': 'nearest', 'num_args': 2,
                                          'multi_input_mode': 'sum'},
         [('arg0', U(r('u4'), (1, 2, 2, 2))), ('arg1', U(r('u5'), (1, 2, 1, 1)))])
    case('up_bilinear', 'UpSampling', {'scale': 2, 'sample_type': 'bilinear', 'num_filter': 3},
         [('data', U(r('u6'), (1, 3, 3, 3))), ('weight', U(r('u7'), (3, 1, 4, 4)))])
    case('up_bilinear3', 'UpSampling', {'scale': 3, 'sample_type': 'bilinear', 'num_filter': 2},
         [('data', U(r('u8'), (2, 2, 2, 2))), ('weight', U(r('u9'), (2, 1, 5, 5)))])
    error('e_up_nearest_div', 'UpSampling', {'scale': 2, 'sample_type': 'nearest',
                                             'num_args': 2},
          [('arg0', (1, 2, 4, 4)), ('arg1', (1, 2, 3, 3))])
    error('e_up_sum_channels', 'UpSampling', {'scale': 2, 'sample_type': 'nearest',
                                              'num_args': 2, 'multi_input_mode': 'sum'},
          [('arg0', (1, 2, 4, 4)), ('arg1', (1, 3, 4, 4))])


def sequences():
    r = rng_for
    x = U(r('s'), (4, 3, 2))
    lens = np.array([2, 4, 1], dtype=F32)
    case('seqmask_nolen', 'SequenceMask', {}, [('data', x)])
    case('seqmask', 'SequenceMask', {'use_sequence_length': True, 'value': -1.5},
         [('data', x), ('sequence_length', lens)], grads=['data'])
    case('seqmask_axis1', 'SequenceMask', {'use_sequence_length': True, 'axis': 1},
         [('data', U(r('s1'), (3, 4, 2))), ('sequence_length', lens)], grads=['data'])
    case('seqlast_nolen', 'SequenceLast', {}, [('data', x)])
    case('seqlast', 'SequenceLast', {'use_sequence_length': True},
         [('data', x), ('sequence_length', lens)], grads=['data'])
    case('seqlast_axis1', 'SequenceLast', {'use_sequence_length': True, 'axis': 1},
         [('data', U(r('s2'), (3, 4))), ('sequence_length', lens)], grads=['data'])
    case('seqrev_nolen', 'SequenceReverse', {}, [('data', x)])
    case('seqrev', 'SequenceReverse', {'use_sequence_length': True},
         [('data', x), ('sequence_length', lens)], grads=['data'])
    error('e_seqmask_len', 'SequenceMask', {'use_sequence_length': True},
          [('data', (4, 3, 2)), ('sequence_length', (4,))])
    error('e_seqrev_axis', 'SequenceReverse', {'axis': 1}, [('data', (4, 3, 2))])


def losses():
    r = rng_for
    case('softmaxact', 'SoftmaxActivation', {}, [('data', U(r('sa'), (2, 3, 2)))])
    case('softmaxact_channel', 'SoftmaxActivation', {'mode': 'channel'},
         [('data', U(r('sc'), (2, 3, 2, 2)))])
    case('softmax_ce', 'softmax_cross_entropy', {},
         [('data', U(r('ce'), (3, 4), -2, 2)), ('label', np.array([0, 3, 1], F32))],
         grads=['data'])
    case('svm_l2', 'SVMOutput', {},
         [('data', U(r('sv'), (4, 3), -2, 2)), ('label', np.array([0, 2, 1, 1], F32))],
         grads=['data'])
    case('svm_l1', 'SVMOutput', {'use_linear': True, 'margin': 0.5,
                                 'regularization_coefficient': 2.0},
         [('data', U(r('sv1'), (4, 3), -2, 2)), ('label', np.array([1, 0, 2, 2], F32))],
         grads=['data'])
    case('klsparse', 'IdentityAttachKLSparseReg', {'penalty': 0.1},
         [('data', U(r('kl'), (4, 3), 0.05, 0.95))],
         aux=[('moving_avg', U(r('kla'), (3,), 0.2, 0.8))])
    # CTC: (T, N, C) activations, labels padded with 0 (blank first) or -1 (blank last)
    data = U(r('ctc'), (6, 2, 4), -1, 1)
    case('ctc', 'CTCLoss', {}, [('data', data), ('label', np.array([[1, 2, 0], [3, 3, 1]], F32))],
         grads=['data'])
    case('ctc_last_lengths', 'ctc_loss',
         {'use_data_lengths': True, 'use_label_lengths': True, 'blank_label': 'last'},
         [('data', data), ('label', np.array([[0, 1, 2], [2, -1, -1]], F32)),
          ('data_lengths', np.array([6, 4], F32)), ('label_lengths', np.array([2, 1], F32))],
         grads=['data'])
    error('e_ctc_label', 'CTCLoss', {}, [('data', (6, 2, 4)), ('label', (3, 3))])


def spatial():
    r = rng_for
    data = U(r('bs'), (2, 3, 4, 5))
    grid = U(r('bg'), (2, 2, 3, 3), -1.1, 1.1)
    case('bilinear_sampler', 'BilinearSampler', {}, [('data', data), ('grid', grid)])
    theta = np.array([[0.9, 0.1, 0.05, -0.2, 1.1, 0.1], [1.2, -0.3, -0.1, 0.2, 0.7, 0.0]], F32)
    case('gridgen_affine', 'GridGenerator', {'transform_type': 'affine', 'target_shape': (3, 4)},
         [('data', theta)])
    case('gridgen_warp', 'GridGenerator', {'transform_type': 'warp'},
         [('data', U(r('gw'), (2, 2, 3, 4), -1.5, 1.5))])
    case('spatial_transformer', 'SpatialTransformer',
         {'target_shape': (3, 3), 'transform_type': 'affine', 'sampler_type': 'bilinear'},
         [('data', data), ('loc', theta)])
    fm = U(r('roi'), (2, 3, 6, 7))
    rois = np.array([[0, 0, 0, 4, 3], [1, 1.2, 0.6, 6.4, 5.3], [0, 2, 2, 2, 2],
                     [1, -1, 3, 12, 14]], F32)
    case('roipool', 'ROIPooling', {'pooled_size': (2, 3), 'spatial_scale': 1.0},
         [('data', fm), ('rois', rois)], grads=['data'])
    case('roipool_scale', 'ROIPooling', {'pooled_size': (3, 2), 'spatial_scale': 0.5},
         [('data', fm), ('rois', rois * np.array([1, 2, 2, 2, 2], F32))], grads=['data'])
    a, b = U(r('c1'), (1, 2, 5, 6)), U(r('c2'), (1, 2, 5, 6))
    case('correlation', 'Correlation', {'max_displacement': 1},
         [('data1', a), ('data2', b)])
    case('correlation_k3', 'Correlation', {'kernel_size': 3, 'max_displacement': 2, 'stride2': 2,
                                           'pad_size': 2, 'stride1': 2},
         [('data1', a), ('data2', b)])
    case('correlation_sub', 'Correlation', {'max_displacement': 1, 'is_multiply': False,
                                            'pad_size': 1},
         [('data1', a), ('data2', b)])
    error('e_gridgen_affine', 'GridGenerator', {'transform_type': 'affine'}, [('data', (2, 6))])
    error('e_bilinear_grid', 'BilinearSampler', {}, [('data', (2, 3, 4, 5)),
                                                     ('grid', (2, 3, 3, 3))])
    error('e_roipool_rois', 'ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
          [('data', (1, 2, 4, 4)), ('rois', (3, 4))])
    error('e_correlation_fit', 'Correlation', {'max_displacement': 4},
          [('data1', (1, 2, 5, 6)), ('data2', (1, 2, 5, 6))])


def types_and_partial_shapes():
    seq = {'use_sequence_length': True}
    for op in ('SequenceMask', 'SequenceLast', 'SequenceReverse'):
        type_case('t_' + op, op, seq, ['data', 'sequence_length'],
                  {'data': 'float32', 'sequence_length': 'int32'})
    type_case('t_seqmask_f64', 'SequenceMask', seq, ['data', 'sequence_length'],
              {'data': 'float64'})
    type_case('t_ctc_int_label', 'CTCLoss', {}, ['data', 'label'],
              {'data': 'float32', 'label': 'int32'})
    type_case('t_ctc_unknown_label', 'CTCLoss', {}, ['data', 'label'], {'data': 'float64'})
    type_case('t_sce_int_label', 'softmax_cross_entropy', {}, ['data', 'label'],
              {'data': 'float32', 'label': 'int32'})
    type_case('t_sce_f64', 'softmax_cross_entropy', {}, ['data', 'label'], {'data': 'float64'})
    type_case('t_svm_int_label', 'SVMOutput', {}, ['data', 'label'],
              {'data': 'float32', 'label': 'int32'})
    type_case('t_layernorm_f64', 'LayerNorm', {}, ['data', 'gamma', 'beta'], {'data': 'float64'})
    type_case('t_deconv_f64', 'Deconvolution', {'kernel': (2, 2), 'num_filter': 2},
              ['data', 'weight'], {'data': 'float64'})
    type_case('t_bilinear_f64', 'BilinearSampler', {}, ['data', 'grid'], {'data': 'float64'})
    for cid, op, params, shapes in (
            ('p_layernorm_batch', 'LayerNorm', {}, [('data', (0, 3))]),
            ('p_layernorm_gamma', 'LayerNorm', {}, [('gamma', (4,))]),
            ('p_deconv_batch', 'Deconvolution', {'kernel': (3, 3), 'num_filter': 2},
             [('data', (0, 3, 4, 4))]),
            ('p_instancenorm', 'InstanceNorm', {}, [('data', (0, 3, 4))]),
            ('p_groupnorm', 'GroupNorm', {'num_groups': 2}, [('data', (0, 4, 3))]),
            ('p_seqmask', 'SequenceMask', seq, [('data', (5, 0, 2))]),
            ('p_upsampling', 'UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 1},
             [('arg0', (0, 3, 2, 2))]),
            ('p_l2norm', 'L2Normalization', {}, [('data', (0, 3))]),
            ('p_svm', 'SVMOutput', {}, [('data', (0, 3))]),
            ('p_sce', 'softmax_cross_entropy', {}, [('data', (4, 3))]),
            ('p_correlation', 'Correlation', {}, [('data1', (1, 2, 5, 6))]),
            ('p_ctc', 'CTCLoss', {}, [('data', (6, 2, 4))]),
            ('p_roipool', 'ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
             [('data', (1, 3, 5, 5))]),
            ('p_spatial', 'SpatialTransformer', {'target_shape': (3, 3),
                                                 'transform_type': 'affine',
                                                 'sampler_type': 'bilinear'},
             [('data', (2, 3, 4, 4))])):
        shape_case(cid, op, params, shapes)


def variants():
    """More parameter combinations (added after the first set; own seeds, so earlier cases keep
    their values)."""
    r = rng_for
    case('v_deconv_adj_nopad', 'Deconvolution',
         {'kernel': (3, 3), 'num_filter': 2, 'stride': (2, 2), 'adj': (1, 1)},
         [('data', U(r('v1'), (1, 2, 3, 3))), ('weight', U(r('v2'), (2, 2, 3, 3)))])
    case('v_deconv_3d', 'Deconvolution',
         {'kernel': (2, 2, 2), 'num_filter': 2, 'stride': (2, 1, 1), 'pad': (0, 1, 0),
          'no_bias': False},
         [('data', U(r('v3'), (1, 2, 2, 3, 3))), ('weight', U(r('v4'), (2, 2, 2, 2, 2))),
          ('bias', U(r('v5'), (2,)))])
    case('v_lrn_even', 'LRN', {'nsize': 4, 'alpha': 0.1}, [('data', U(r('v6'), (1, 6, 2, 2)))])
    case('v_l2norm_channel_3d', 'L2Normalization', {'mode': 'channel', 'eps': 1e-3},
         [('data', U(r('v7'), (2, 3, 5)))])
    case('v_seqmask_4d', 'SequenceMask', {'use_sequence_length': True, 'value': 2.0},
         [('data', U(r('v8'), (3, 2, 2, 2))), ('sequence_length', np.array([0, 3], F32))],
         grads=['data'])
    case('v_seqlast_axis1_nolen', 'SequenceLast', {'axis': 1}, [('data', U(r('v9'), (2, 3, 2)))])
    case('v_seqrev_short', 'SequenceReverse', {'use_sequence_length': True},
         [('data', U(r('v10'), (4, 2))), ('sequence_length', np.array([3, 1], F32))],
         grads=['data'])
    case('v_ctc_data_lengths', 'CTCLoss', {'use_data_lengths': True},
         [('data', U(r('v11'), (5, 3, 5))),
          ('label', np.array([[1, 2, 2], [4, 0, 0], [3, 1, 0]], F32)),
          ('data_lengths', np.array([5, 2, 4], F32))], grads=['data'])
    case('v_layernorm_4d_axis2', 'LayerNorm', {'axis': 2, 'eps': 0.1},
         [('data', U(r('v12'), (2, 2, 3, 2))), ('gamma', U(r('v13'), (3,))),
          ('beta', U(r('v14'), (3,)))])
    case('v_groupnorm_4', 'GroupNorm', {'num_groups': 4},
         [('data', U(r('v15'), (1, 8, 2, 2))), ('gamma', U(r('v16'), (4,))),
          ('beta', U(r('v17'), (4,)))])
    case('v_up_nearest_3inputs', 'UpSampling', {'scale': 2, 'sample_type': 'nearest',
                                                'num_args': 3},
         [('arg0', U(r('v18'), (1, 1, 2, 2))), ('arg1', U(r('v19'), (1, 2, 1, 1))),
          ('arg2', U(r('v20'), (1, 1, 4, 4)))])
    case('v_gridgen_warp_sampler', 'BilinearSampler', {},
         [('data', U(r('v21'), (1, 2, 3, 3))), ('grid', U(r('v22'), (1, 2, 4, 2), -0.9, 0.9))])
    case('v_roipool_1x1', 'ROIPooling', {'pooled_size': (1, 1), 'spatial_scale': 0.25},
         [('data', U(r('v23'), (1, 2, 4, 4))),
          ('rois', np.array([[0, 0, 0, 15, 15], [0, 6, 6, 9, 9]], F32))], grads=['data'])
    case('v_roipool_edges', 'ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
         [('data', U(r('v30'), (1, 2, 6, 7))),
          ('rois', np.array([[0, 5, 5, 9, 9], [0, 20, 20, 30, 30], [0, -3, -3, 1, 2]], F32))],
         grads=['data'])
    case('v_correlation_k3_nopad', 'Correlation', {'kernel_size': 3, 'max_displacement': 1},
         [('data1', U(r('v24'), (2, 3, 5, 5))), ('data2', U(r('v25'), (2, 3, 5, 5)))])
    case('v_sce_ignores_head', 'softmax_cross_entropy', {},
         [('data', U(r('v26'), (2, 5), -3, 3)), ('label', np.array([4, 0], F32))],
         grads=['data'])
    case('v_instancenorm_5d', 'InstanceNorm', {},
         [('data', U(r('v27'), (1, 2, 2, 2, 3))), ('gamma', U(r('v28'), (2,))),
          ('beta', U(r('v29'), (2,)))])


def more_errors():
    error('e_instancenorm_2d', 'InstanceNorm', {}, [('data', (2, 3))])
    error('e_lrn_2d', 'LRN', {'nsize': 3}, [('data', (2, 3))])
    error('e_gridgen_warp_shape', 'GridGenerator', {'transform_type': 'warp'},
          [('data', (2, 3, 4, 4))])
    error('e_gridgen_affine_data', 'GridGenerator', {'transform_type': 'affine',
                                                     'target_shape': (2, 2)}, [('data', (2, 5))])
    error('e_spatial_target', 'SpatialTransformer', {'transform_type': 'affine',
                                                     'sampler_type': 'bilinear'},
          [('data', (1, 2, 3, 3)), ('loc', (1, 6))])
    error('e_spatial_loc', 'SpatialTransformer', {'transform_type': 'affine',
                                                  'sampler_type': 'bilinear',
                                                  'target_shape': (2, 2)},
          [('data', (1, 2, 3, 3)), ('loc', (1, 5))])
    error('e_deconv_kernel4d', 'Deconvolution', {'kernel': (1, 1, 1, 1), 'num_filter': 2},
          [('data', (1, 2, 3, 3, 3, 3))])
    error('e_deconv_in_group', 'Deconvolution', {'kernel': (2, 2), 'num_filter': 4,
                                                 'num_group': 2}, [('data', (1, 3, 3, 3))])
    error('e_seqmask_1d', 'SequenceMask', {}, [('data', (4,))])
    error('e_seqmask_axis2', 'SequenceMask', {'axis': 2}, [('data', (4, 3, 2))])
    error('e_ctc_data_2d', 'CTCLoss', {}, [('data', (6, 4)), ('label', (6, 3))])
    error('e_ctc_label_3d', 'CTCLoss', {}, [('data', (6, 2, 4)), ('label', (2, 3, 1))])
    error('e_bilinear_batch', 'BilinearSampler', {}, [('data', (2, 3, 4, 5)),
                                                      ('grid', (3, 2, 3, 3))])
    error('e_bilinear_3d', 'BilinearSampler', {}, [('data', (2, 3, 4)), ('grid', (2, 2, 3, 3))])
    error('e_up_bilinear_3d', 'UpSampling', {'scale': 2, 'sample_type': 'bilinear',
                                             'num_filter': 2},
          [('data', (1, 2, 3)), ('weight', (2, 1, 4, 4))])
    error('e_up_nearest_3d', 'UpSampling', {'scale': 2, 'sample_type': 'nearest'},
          [('arg0', (1, 2, 3))])
    error('e_roipool_data_3d', 'ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
          [('data', (2, 4, 4)), ('rois', (3, 5))])
    error('e_correlation_shapes', 'Correlation', {}, [('data1', (1, 2, 5, 6)),
                                                      ('data2', (1, 2, 5, 7))])
    error('e_sce_data_3d', 'softmax_cross_entropy', {}, [('data', (2, 3, 4)), ('label', (2,))])
    error('e_sce_label', 'softmax_cross_entropy', {}, [('data', (2, 3)), ('label', (3,))])
    error('e_svm_label', 'SVMOutput', {}, [('data', (2, 3)), ('label', (3,))])
    error('e_groupnorm_gamma', 'GroupNorm', {'num_groups': 2},
          [('data', (2, 4, 3)), ('gamma', (4,)), ('beta', (2,))])
    error('e_layernorm_gamma', 'LayerNorm', {}, [('data', (2, 4)), ('gamma', (3,))])
    error('e_l2norm_spatial_2d', 'L2Normalization', {'mode': 'spatial'}, [('data', (2, 3))])
    error('e_kl_aux', 'IdentityAttachKLSparseReg', {}, [('data', (2, 3, 4))])


JSONS = []
JSON_CODE = [
    "mx.sym.UpSampling(d, scale=2, sample_type='bilinear', num_filter=3, name='up')",
    "mx.sym.UpSampling(d, d, scale=2, sample_type='nearest', multi_input_mode='sum', name='up')",
    "mx.sym.Deconvolution(d, kernel=(2, 2), num_filter=2, stride=(2, 2), name='dc')",
    "mx.sym.Deconvolution(d, kernel=(3,), num_filter=2, no_bias=False, adj=(1,), name='dc')",
    "mx.sym.LayerNorm(d, name='ln', eps=1e-3, output_mean_var=True)",
    "mx.sym.GroupNorm(d, num_groups=2, name='gn')",
    "mx.sym.CTCLoss(d, mx.sym.Variable('l'), blank_label='last', name='ctc')",
    "mx.sym.ctc_loss(d, mx.sym.Variable('l'), use_data_lengths=True)",
    "mx.sym.ROIPooling(d, mx.sym.Variable('r'), pooled_size=(2, 2), spatial_scale=0.5)",
    "mx.sym.IdentityAttachKLSparseReg(d, name='kl')",
    "mx.sym.SequenceMask(d, mx.sym.Variable('sl'), use_sequence_length=True, value=1.5)",
    "mx.sym.SpatialTransformer(d, target_shape=(2, 2), transform_type='affine', "
    "sampler_type='bilinear')",
    "mx.sym.SVMOutput(d, margin=0.5)",
]


def json_cases():
    """Symbol JSON of a few calls (variables the op makes, their __init__, attrs)."""
    for code in JSON_CODE:
        with fresh_scopes():
            sym = eval(code, {'mx': mx, 'd': mx.sym.Variable('data')})
        JSONS.append(OrderedDict([('code', code), ('json', sym.tojson())]))


def main():
    json_cases()
    more_errors()
    types_and_partial_shapes()
    variants()
    norms()
    deconv()
    upsampling()
    sequences()
    losses()
    spatial()
    os.makedirs(OUT, exist_ok=True)
    write_json(os.path.join(OUT, 'nn_layers.json'),
               OrderedDict([('generator', 'tools/make_golden_nn_layers.py'),
                            ('mxnet', mx.__version__), ('cases', CASES), ('errors', ERRORS),
                            ('shapes', SHAPES), ('types', TYPES),
                            ('json', JSONS)]))
    np.savez_compressed(os.path.join(OUT, 'nn_layers.npz'), **ARRAYS)
    print('%d cases, %d errors, %d arrays' % (len(CASES), len(ERRORS), len(ARRAYS)))


if __name__ == '__main__':
    main()
