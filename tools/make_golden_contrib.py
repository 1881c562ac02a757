#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's ``mx.nd.contrib`` / ``mx.sym.contrib`` operators.

Covers the bounding-box family (box_iou, box_nms, bipartite_matching, box_encode, box_decode),
the SSD heads (MultiBoxPrior, MultiBoxTarget, MultiBoxDetection), ROIAlign and the smaller
contrib operators (see the functions below). Run it with the real MXNet, from the repository
root::

    tools/mxnet-oracle tools/make_golden_contrib.py

Output goes to ``tests/golden/contrib/``: ``contrib.json`` (cases, errors) and ``contrib.npz``
(arrays, keys ``<id>/...``). Each case is ``mx.sym.contrib.<op>(*variables, name='op0',
**params)`` with one Variable per argument (named after MXNet's argument names), bound on cpu;
``forward(is_train=True)`` then ``backward`` with seeded random head gradients, the gradients
of the inputs listed in ``grad_inputs`` (grad_req 'write', the others 'null'). Per case the npz
holds ``in/<arg>``, ``out<i>`` (visible outputs), ``head<i>``, ``grad/<arg>`` and ``nd_out<i>``
(the same call through ``mx.nd.contrib``). Inputs come from ``np.random.RandomState`` seeded by
the CRC32 of the case id. Only mxnet, numpy and the stdlib are used.
"""
import json
import os
from collections import OrderedDict

from _oracle_common import F32, U, err_info, fresh_scopes, golden_dir, jsonable, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('contrib')
CASES = []
ERRORS = []
ARRAYS = OrderedDict()


def _fn(ns, op):
    """``mx.<ns>.contrib.<op>``, or ``mx.<ns>.<op>`` for ops named with a leading 'nd.'."""
    mod = getattr(mx, ns)
    return getattr(mod.contrib, op, None) or getattr(mod, op)


def _sym(op, names, params):
    variables = [mx.sym.Variable(n) for n in names]
    with fresh_scopes():
        return _fn('sym', op)(*variables, name='op0', **params)


def case(cid, op, params, inputs, grads=None, backward=True, nd=True):
    """``inputs``: list of (name, array); ``grads``: names to differentiate (default: all)."""
    names = [n for n, _ in inputs]
    sym = _sym(op, names, params)
    assert sym.list_arguments() == names, (cid, sym.list_arguments(), names)
    if grads is None:
        grads = names
    if not backward:
        grads = []
    shapes = {n: a.shape for n, a in inputs}
    arg_s, out_s, aux_s = sym.infer_shape(**shapes)
    js = json.loads(sym.tojson())
    ptr = js['node_row_ptr']
    rec = OrderedDict([
        ('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', names),
        ('grad_inputs', list(grads)), ('list_outputs', sym.list_outputs()),
        ('attrs', js['nodes'][-1].get('attrs', {})), ('node_num_outputs', ptr[-1] - ptr[-2]),
        ('infer_shape', [jsonable(arg_s), jsonable(out_s), jsonable(aux_s)]),
        ('dtypes', {n: a.dtype.name for n, a in inputs}),
    ])
    for n, a in inputs:
        ARRAYS['%s/in/%s' % (cid, n)] = a
    args = {n: mx.nd.array(a, dtype=a.dtype) for n, a in inputs}
    gbuf = {n: mx.nd.zeros(shapes[n], dtype=dict(inputs)[n].dtype) for n in grads}
    req = {n: ('write' if n in grads else 'null') for n in names}
    ex = sym.bind(mx.cpu(), args=args, args_grad=gbuf, grad_req=req)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    for i, o in enumerate(outs):
        ARRAYS['%s/out%d' % (cid, i)] = o
    rec['out_shapes'] = [list(o.shape) for o in outs]
    rec['out_dtypes'] = [o.dtype.name for o in outs]
    if grads:
        hr = rng_for(cid + '/head')
        heads = [U(hr, o.shape).astype(o.dtype) for o in outs]
        ex.backward([mx.nd.array(h, dtype=h.dtype) for h in heads])
        for i, h in enumerate(heads):
            ARRAYS['%s/head%d' % (cid, i)] = h
        for n in grads:
            ARRAYS['%s/grad/%s' % (cid, n)] = ex.grad_dict[n].asnumpy()
    if nd:
        res = _fn('nd', op)(*[mx.nd.array(a, dtype=a.dtype) for _, a in inputs], **params)
        res = res if isinstance(res, (list, tuple)) else [res]
        for i, o in enumerate(res):
            ARRAYS['%s/nd_out%d' % (cid, i)] = o.asnumpy()
        rec['nd_outputs'] = len(res)
    else:
        rec['nd_outputs'] = 0
    CASES.append(rec)


def error(cid, op, params, shapes, dtypes=None):
    """MXNet's error for infer_shape (and infer_type with ``dtypes``) of ``op`` on ``shapes``
    (list of (name, shape))."""
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('shapes', jsonable(shapes)), ('dtypes', dtypes)])
    try:
        sym = _sym(op, [n for n, _ in shapes], params)
        if dtypes:
            sym.infer_type(**dtypes)
        sym.infer_shape(**dict(shapes))
        rec['error'] = None
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    ERRORS.append(rec)


def nd_error(cid, op, params, inputs):
    """MXNet's error for the imperative call ``mx.nd.contrib.<op>(*inputs, **params)``."""
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('inputs', [n for n, _ in inputs])])
    for n, a in inputs:
        ARRAYS['%s/in/%s' % (cid, n)] = a
    try:
        _fn('nd', op)(*[mx.nd.array(a, dtype=a.dtype) for _, a in inputs], **params).wait_to_read()
        rec['error'] = None
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    ERRORS.append(rec)


# ----------------------------------------------------------------------------- boxes
def _boxes(r, n, lo=0.0, hi=1.0, minsize=0.05):
    xy = r.uniform(lo, hi - minsize, (n, 2))
    wh = r.uniform(minsize, (hi - lo) / 2, (n, 2))
    return np.concatenate([xy, np.minimum(xy + wh, hi)], axis=1).astype(F32)


def boxes():
    r = rng_for
    a = _boxes(r('iou_a'), 6).reshape(2, 3, 4)
    b = _boxes(r('iou_b'), 5)
    b[0] = [0.6, 0.6, 0.5, 0.5]  # inverted box: zero area
    b[1] = a[0, 1]
    case('box_iou_corner', 'box_iou', {}, [('lhs', a), ('rhs', b)])
    c = U(r('iou_c'), (3, 4), 0.1, 1.0)
    d = U(r('iou_d'), (2, 2, 4), 0.1, 1.0)
    case('box_iou_center', 'box_iou', {'format': 'center'}, [('lhs', c), ('rhs', d)])
    error('e_box_iou_last', 'box_iou', {}, [('lhs', (2, 5)), ('rhs', (3, 4))])
    error('e_box_iou_ndim', 'box_iou', {}, [('lhs', (2, 4)), ('rhs', (4,))])

    # box_nms: [id, score, x1, y1, x2, y2]
    def dets(key, n, ids=3, extra=0):
        rr = r(key)
        bx = _boxes(rr, n, 0, 1, 0.2)
        out = np.concatenate([rr.randint(0, ids, (n, 1)).astype(F32),
                              rr.uniform(0, 1, (n, 1)).astype(F32), bx], axis=1)
        if extra:
            out = np.concatenate([out, rr.uniform(-1, 1, (n, extra)).astype(F32)], axis=1)
        return out
    x = dets('nms1', 12)
    x[3, 1] = x[7, 1]  # a tie
    case('box_nms_default', 'box_nms', {}, [('data', x)])
    case('box_nms_id_force', 'box_nms', {'overlap_thresh': 0.3, 'id_index': 0,
                                         'force_suppress': True}, [('data', x)])
    case('box_nms_classes', 'box_nms', {'overlap_thresh': 0.2, 'id_index': 0,
                                        'valid_thresh': 0.2, 'topk': 6},
         [('data', x)])
    case('box_nms_background', 'box_nms', {'overlap_thresh': 0.4, 'id_index': 0,
                                           'background_id': 1}, [('data', x)])
    xb = np.stack([dets('nms2', 8, extra=1), dets('nms3', 8, extra=1)])
    xb = np.stack([xb, xb[::-1] * np.float32(0.9)])  # (2, 2, 8, 7)
    case('box_nms_batch_extra', 'box_nms', {'overlap_thresh': 0.25}, [('data', xb)])
    xc = np.concatenate([U(r('nms4'), (10, 1), 0, 1), U(r('nms5'), (10, 2), 0.2, 0.8),
                         U(r('nms6'), (10, 2), 0.1, 0.4), U(r('nms7'), (10, 1), 0, 3)], axis=1)
    case('box_nms_center', 'box_nms', {'coord_start': 1, 'score_index': 0, 'id_index': 5,
                                       'in_format': 'center', 'out_format': 'corner',
                                       'overlap_thresh': 0.3}, [('data', xc)])
    case('box_nms_out_center', 'box_nms', {'out_format': 'center', 'overlap_thresh': 0.35},
         [('data', dets('nms8', 9))])
    case('box_nms_alias', 'box_non_maximum_suppression', {'overlap_thresh': 0.3},
         [('data', dets('nms9', 5))])
    error('e_box_nms_width', 'box_nms', {}, [('data', (3, 4))])
    error('e_box_nms_width_id', 'box_nms', {'id_index': 0}, [('data', (3, 5))])
    error('e_box_nms_ndim', 'box_nms', {}, [('data', (6,))])
    error('e_box_nms_coord', 'box_nms', {'coord_start': 3}, [('data', (3, 6))])
    error('e_box_nms_score', 'box_nms', {'score_index': 3}, [('data', (3, 6))])

    s = U(r('bm1'), (2, 4, 3), 0, 1)
    s[0, 1, 2] = s[0, 2, 0]
    case('bipartite_desc', 'bipartite_matching', {'threshold': 0.2}, [('data', s)])
    case('bipartite_asc', 'bipartite_matching', {'threshold': 0.7, 'is_ascend': True},
         [('data', s)])
    case('bipartite_topk', 'bipartite_matching', {'threshold': 0.05, 'topk': 2},
         [('data', U(r('bm2'), (3, 5), 0, 1))])
    case('bipartite_3d_batch', 'bipartite_matching', {'threshold': 0.5},
         [('data', U(r('bm3'), (2, 2, 3, 4), 0, 1))])
    case('bipartite_topk1_ties', 'bipartite_matching', {'threshold': 2.0, 'topk': 1},
         [('data', np.array([[3, 2, 3, 1], [2, 3, 1, 2], [1, 2, 2, 3]], F32))])
    case('bipartite_asc_ties', 'bipartite_matching', {'threshold': 2.0, 'is_ascend': True},
         [('data', np.array([[3, 2, 3, 1], [2, 3, 1, 2], [1, 2, 2, 3]], F32))])
    error('e_bipartite_ndim', 'bipartite_matching', {'threshold': 0.1}, [('data', (4,))])

    B, N, M = 2, 5, 3
    samples = np.array([[1, -1, 0, 1, 1], [0, 1, 1, -1, 1]], F32)
    matches = np.array([[0, -1, 2, 2, 1], [1, 0, 2, 0, 1]], F32)
    anchors = _boxes(r('enc1'), B * N).reshape(B, N, 4)
    refs = _boxes(r('enc2'), B * M).reshape(B, M, 4)
    case('box_encode', 'box_encode', {},
         [('samples', samples), ('matches', matches), ('anchors', anchors), ('refs', refs),
          ('means', np.array([0, 0.1, -0.1, 0.05], F32)),
          ('stds', np.array([0.1, 0.1, 0.2, 0.25], F32))])
    error('e_box_encode_anchors', 'box_encode', {},
          [('samples', (2, 5)), ('matches', (2, 5)), ('anchors', (2, 5, 3)), ('refs', (2, 3, 4)),
           ('means', (4,)), ('stds', (4,))])
    error('e_box_encode_samples', 'box_encode', {},
          [('samples', (2, 4)), ('matches', (2, 5)), ('anchors', (2, 5, 4)), ('refs', (2, 3, 4)),
           ('means', (4,)), ('stds', (4,))])
    error('e_box_encode_refs', 'box_encode', {},
          [('samples', (2, 5)), ('matches', (2, 5)), ('anchors', (2, 5, 4)), ('refs', (2, 3, 5)),
           ('means', (4,)), ('stds', (4,))])
    error('e_box_encode_means', 'box_encode', {},
          [('samples', (2, 5)), ('matches', (2, 5)), ('anchors', (2, 5, 4)), ('refs', (2, 3, 4)),
           ('means', (3,)), ('stds', (4,))])
    pred = U(r('dec1'), (2, 4, 4), -1, 1)
    case('box_decode_center', 'box_decode', {},
         [('data', pred), ('anchors', U(r('dec2'), (1, 4, 4), 0.2, 0.6))])
    case('box_decode_corner_clip', 'box_decode', {'format': 'corner', 'std0': 0.1, 'std1': 0.2,
                                                  'std2': 0.3, 'std3': 0.4, 'clip': 0.05},
         [('data', pred), ('anchors', _boxes(r('dec3'), 4).reshape(1, 4, 4))])
    error('e_box_decode_anchor', 'box_decode', {}, [('data', (2, 4, 4)), ('anchors', (1, 3, 4))])
    error('e_box_decode_data', 'box_decode', {}, [('data', (2, 4, 5)), ('anchors', (1, 4, 4))])


def multibox():
    r = rng_for
    case('mbprior_default', 'MultiBoxPrior', {}, [('data', U(r('mp1'), (1, 2, 3, 4)))])
    case('mbprior_sizes_ratios', 'MultiBoxPrior',
         {'sizes': (0.5, 0.25, 0.1), 'ratios': (1, 2, 0.5), 'clip': True},
         [('data', U(r('mp2'), (2, 1, 4, 3)))])
    case('mbprior_steps_offsets', 'MultiBoxPrior',
         {'sizes': (0.3,), 'ratios': (1, 3), 'steps': (0.2, 0.25), 'offsets': (0.2, 0.7)},
         [('data', U(r('mp3'), (1, 1, 2, 5)))])
    case('mbprior_ratio0', 'MultiBoxPrior', {'sizes': (0.4, 0.2), 'ratios': (2, 1, 0.25)},
         [('data', U(r('mp4'), (1, 1, 3, 2)))])
    error('e_mbprior_f64', 'MultiBoxPrior', {}, [('data', (1, 2, 3, 3))], {'data': 'float64'})
    error('e_mbprior_3d', 'MultiBoxPrior', {}, [('data', (1, 2, 3))])
    A = 16
    anchor = _boxes(r('mt1'), A).reshape(1, A, 4)
    label = np.full((2, 4, 5), -1, F32)
    label[0, :3, 0] = [0, 2, 1]
    label[0, :3, 1:] = anchor[0, [2, 7, 11]] + U(r('mt2'), (3, 4), -0.03, 0.03)
    label[1, :2, 0] = [1, 1]
    label[1, :2, 1:] = _boxes(r('mt3'), 2)
    cls_pred = U(r('mt4'), (2, 4, A), -2, 2)
    ins = [('anchor', anchor), ('label', label), ('cls_pred', cls_pred)]
    case('mbtarget_default', 'MultiBoxTarget', {}, ins)
    case('mbtarget_mining', 'MultiBoxTarget',
         {'overlap_threshold': 0.3, 'negative_mining_ratio': 2, 'negative_mining_thresh': 0.4,
          'minimum_negative_samples': 3, 'ignore_label': -2, 'variances': (0.1, 0.2, 0.3, 0.4)},
         ins)
    label2 = label.copy()
    label2[1] = -1  # an image without objects
    case('mbtarget_empty', 'MultiBoxTarget', {'negative_mining_ratio': 3},
         [('anchor', anchor), ('label', label2), ('cls_pred', cls_pred)])
    error('e_mbtarget_label', 'MultiBoxTarget', {},
          [('anchor', (1, 16, 4)), ('label', (2, 4)), ('cls_pred', (2, 4, 16))])
    cls_prob = r('md1').dirichlet(np.ones(4), (2, A)).transpose(0, 2, 1).astype(F32)
    loc = U(r('md2'), (2, A * 4), -0.5, 0.5)
    anchor2 = anchor.copy()
    anchor2[0, 5] = anchor2[0, 4] + 0.01
    anchor2[0, 9] = anchor2[0, 4] - 0.01
    ins = [('cls_prob', cls_prob), ('loc_pred', loc), ('anchor', anchor2)]
    case('mbdet_default', 'MultiBoxDetection', {}, ins)
    case('mbdet_force_noclip', 'MultiBoxDetection',
         {'force_suppress': True, 'clip': False, 'threshold': 0.3, 'nms_threshold': 0.2,
          'variances': (0.2, 0.2, 0.1, 0.1)}, ins)
    case('mbdet_topk_bg', 'MultiBoxDetection',
         {'nms_topk': 5, 'background_id': 1, 'nms_threshold': 0.3}, ins)
    case('mbdet_no_nms', 'MultiBoxDetection', {'nms_threshold': 0, 'threshold': 0.25}, ins)
    error('e_mbtarget_anchor', 'MultiBoxTarget', {},
          [('anchor', (1, 16, 3)), ('label', (2, 4, 5)), ('cls_pred', (2, 4, 16))])
    error('e_mbtarget_cls', 'MultiBoxTarget', {},
          [('anchor', (1, 16, 4)), ('label', (2, 4, 5)), ('cls_pred', (2, 4, 15))])
    error('e_mbtarget_width', 'MultiBoxTarget', {},
          [('anchor', (1, 16, 4)), ('label', (2, 4, 4)), ('cls_pred', (2, 4, 16))])
    error('e_mbdet_anchor', 'MultiBoxDetection', {},
          [('cls_prob', (2, 4, 16)), ('loc_pred', (2, 64)), ('anchor', (1, 15, 4))])
    error('e_mbdet_cls', 'MultiBoxDetection', {},
          [('cls_prob', (2, 16)), ('loc_pred', (2, 64)), ('anchor', (1, 16, 4))])
    error('e_mbdet_loc', 'MultiBoxDetection', {},
          [('cls_prob', (2, 4, 16)), ('loc_pred', (2, 60)), ('anchor', (1, 16, 4))])


def roi_align():
    r = rng_for
    fm = U(r('ra1'), (2, 3, 6, 7))
    rois = np.array([[0, 0.3, 0.2, 4.1, 3.7], [1, 1.2, 0.6, 6.4, 5.3], [0, 2, 2, 2.5, 2.4],
                     [1, -1.5, 3, 8, 7.5], [1, 5.5, 4.5, 6.5, 8]], F32)
    # (a row with a negative batch index is left out: MXNet 1.9.1's CPU kernel then writes 0 to
    # element n of the whole output (top_data[n] = 0) and leaves the roi's own output unset)
    case('roialign', 'ROIAlign', {'pooled_size': (2, 3), 'spatial_scale': 1.0}, [
        ('data', fm), ('rois', rois)])
    case('roialign_ratio2_scale', 'ROIAlign', {'pooled_size': (3, 2), 'spatial_scale': 0.5,
                                               'sample_ratio': 2},
         [('data', fm), ('rois', rois * np.array([1, 2, 2, 2, 2], F32))])
    case('roialign_aligned', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0,
                                          'aligned': True},
         [('data', fm), ('rois', rois)])
    case('roialign_ps', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0,
                                     'position_sensitive': True, 'sample_ratio': 1},
         [('data', U(r('ra2'), (2, 8, 5, 5))), ('rois', rois[:3])])
    error('e_roialign_rois', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
          [('data', (1, 2, 4, 4)), ('rois', (3, 4))])
    error('e_roialign_ps', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0,
                                        'position_sensitive': True},
          [('data', (1, 6, 4, 4)), ('rois', (3, 5))])
    error('e_roialign_rois_ndim', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
          [('data', (1, 2, 4, 4)), ('rois', (3, 5, 1))])
    error('e_roialign_data', 'ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 1.0},
          [('data', (2, 4, 4)), ('rois', (3, 5))])


def misc():
    r = rng_for
    x = U(r('al1'), (3, 4))
    case('arange_like', 'arange_like', {}, [('data', x)])
    case('arange_like_axis', 'arange_like', {'start': 1.5, 'step': 0.5, 'repeat': 2, 'axis': -1},
         [('data', U(r('al2'), (2, 3, 5)))])
    case('arange_like_int', 'arange_like', {'start': 2, 'step': 3},
         [('data', np.zeros((2, 2), np.int32))], backward=False)
    old, new = U(r('ic1'), (5, 3)), U(r('ic2'), (3, 3))
    case('index_copy', 'index_copy', {},
         [('old_tensor', old), ('index_vector', np.array([0, 4, 2], F32)), ('new_tensor', new)])
    case('index_copy_3d', 'index_copy', {},
         [('old_tensor', U(r('ic3'), (4, 2, 2))), ('index_vector', np.array([3, 1], np.int64)),
          ('new_tensor', U(r('ic4'), (2, 2, 2)))], grads=['old_tensor', 'new_tensor'])
    error('e_index_copy_index', 'index_copy', {},
          [('old_tensor', (5, 3)), ('index_vector', (3, 1)), ('new_tensor', (3, 3))])
    error('e_index_copy_rows', 'index_copy', {},
          [('old_tensor', (5, 3)), ('index_vector', (2,)), ('new_tensor', (3, 3))])
    error('e_index_copy_cols', 'index_copy', {},
          [('old_tensor', (5, 3)), ('index_vector', (3,)), ('new_tensor', (3, 4))])
    case('index_array', 'index_array', {}, [('data', U(r('ia1'), (2, 3)))])
    case('index_array_axes', 'index_array', {'axes': (-1, 0)}, [('data', U(r('ia2'), (2, 1, 3)))])
    error('e_index_array_axes', 'index_array', {'axes': (3,)}, [('data', (2, 3))])
    case('allclose_true', 'allclose', {},
         [('a', np.array([1e10, 1e-8], F32)), ('b', np.array([1.00001e10, 1e-9], F32))],
         backward=False)
    case('allclose_false', 'allclose', {'rtol': 1e-3, 'atol': 0.0},
         [('a', np.array([[1, 2], [3, 4.01]], F32)), ('b', np.array([[1, 2], [3, 4]], F32))],
         backward=False)
    case('allclose_nan', 'allclose', {'equal_nan': False},
         [('a', np.array([1, np.nan], F32)), ('b', np.array([1, np.nan], F32))], backward=False)
    case('gradmult', 'gradientmultiplier', {'scalar': -0.5}, [('data', U(r('gm1'), (2, 3)))])
    case('gradmult_default', 'gradientmultiplier', {}, [('data', U(r('gm2'), (4,)))])
    img = U(r('br1'), (2, 2, 3, 4))
    case('resize_size', 'BilinearResize2D', {'height': 5, 'width': 7}, [('data', img)])
    case('resize_size_noalign', 'BilinearResize2D', {'height': 5, 'width': 3,
                                                     'align_corners': False}, [('data', img)])
    case('resize_scale', 'BilinearResize2D', {'scale_height': 2.0, 'scale_width': 0.5},
         [('data', img)])
    case('resize_odd_scale', 'BilinearResize2D', {'scale_height': 2.0, 'scale_width': 1.5,
                                                  'mode': 'odd_scale'}, [('data', img)])
    case('resize_like', 'BilinearResize2D', {'mode': 'like'},
         [('data', img), ('like', U(r('br2'), (1, 1, 6, 2)))], backward=False)
    # (no backward: MXNet 1.9.1's BilinearResize2D backward in mode 'like' corrupts the heap)
    for mode in ('to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up'):
        case('resize_' + mode, 'BilinearResize2D', {'mode': mode},
             [('data', U(r('br_' + mode), (1, 2, 3, 4)))])
    error('e_resize_3d', 'BilinearResize2D', {'height': 2, 'width': 2}, [('data', (2, 3, 4))])
    case('adaptive_avg_1', 'AdaptiveAvgPooling2D', {}, [('data', U(r('aa1'), (2, 3, 5, 4)))])
    case('adaptive_avg_int', 'AdaptiveAvgPooling2D', {'output_size': 3},
         [('data', U(r('aa2'), (1, 2, 7, 5)))])
    case('adaptive_avg_hw', 'AdaptiveAvgPooling2D', {'output_size': (2, 4)},
         [('data', U(r('aa3'), (1, 2, 5, 6)))])
    error('e_adaptive_3d', 'AdaptiveAvgPooling2D', {}, [('data', (2, 3, 4))])
    L, B, H, D = 3, 2, 2, 4
    qkv = U(r('im1'), (L, B, H * D * 3))
    case('selfatt_qk', 'interleaved_matmul_selfatt_qk', {'heads': H}, [('queries_keys_values', qkv)])
    att = U(r('im2'), (B * H, L, L))
    case('selfatt_valatt', 'interleaved_matmul_selfatt_valatt', {'heads': H},
         [('queries_keys_values', qkv), ('attention', att)])
    q = U(r('im3'), (2, B, H * D))
    kv = U(r('im4'), (L, B, H * D * 2))
    case('encdec_qk', 'interleaved_matmul_encdec_qk', {'heads': H},
         [('queries', q), ('keys_values', kv)])
    case('encdec_valatt', 'interleaved_matmul_encdec_valatt', {'heads': H},
         [('keys_values', kv), ('attention', U(r('im5'), (B * H, 2, L)))])
    error('e_selfatt_qk_heads', 'interleaved_matmul_selfatt_qk', {'heads': 5},
          [('queries_keys_values', (3, 2, 24))])
    error('e_encdec_qk_batch', 'interleaved_matmul_encdec_qk', {'heads': 2},
          [('queries', (2, 3, 8)), ('keys_values', (3, 2, 16))])


GROUPS = {'boxes': boxes, 'multibox': multibox, 'roi_align': roi_align, 'misc': misc}


def main():
    for fn in GROUPS.values():
        fn()
    mx.nd.waitall()
    os.makedirs(OUT, exist_ok=True)
    write_json(os.path.join(OUT, 'contrib.json'),
               OrderedDict([('generator', 'tools/make_golden_contrib.py'),
                            ('mxnet', mx.__version__), ('cases', CASES), ('errors', ERRORS)]))
    np.savez_compressed(os.path.join(OUT, 'contrib.npz'), **ARRAYS)
    print('%d cases, %d errors, %d arrays' % (len(CASES), len(ERRORS), len(ARRAYS)))


if __name__ == '__main__':
    main()
