#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for the later ``mx.nd.contrib`` / ``mx.sym`` operators:
``khatri_rao``, ``boolean_mask``, ``hawkesll``, ``multi_mp_lamb_update``, and the detection
layers ``Proposal``, ``MultiProposal``, ``PSROIPooling``, ``DeformableConvolution``,
``ModulatedDeformableConvolution``, ``DeformablePSROIPooling``. Run it with the real MXNet, from the
repository root::

    tools/mxnet-oracle tools/make_golden_contrib_extra.py

Output: ``tests/golden/contrib_extra/contrib_extra.npz`` (keys ``<case>/in<i>``, ``out<i>``,
``head<i>``, ``grad<i>``) and ``contrib_extra.json`` (per case: the function, its parameters,
which inputs got gradients, the symbolic output shapes MXNet infers). Each case calls
``mx.nd.<fn>`` under ``autograd.record`` and differentiates the listed inputs with seeded head
gradients. Only mxnet, numpy and the stdlib are used.
"""
import os
from collections import OrderedDict

from _oracle_common import F32, U, golden_dir, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('contrib_extra')
ARRAYS = OrderedDict()
CASES = OrderedDict()


def _fn(name):
    obj = mx.nd
    for part in name.split('.'):
        obj = getattr(obj, part)
    return obj


def case(cid, fn, inputs, params, grads=(), sym_infer=True):
    """``inputs``: list of numpy arrays (positional); ``grads``: positions to differentiate."""
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for k in grads:
        nd_in[k].attach_grad()
    with mx.autograd.record():
        out = _fn(fn)(*nd_in, **params)
    outs = out if isinstance(out, (list, tuple)) else [out]
    r = rng_for(cid + '/heads')
    heads = [U(r, o.shape).astype(o.dtype) for o in outs]
    grad_error = None
    if grads:
        try:
            mx.autograd.backward(outs, [mx.nd.array(h, dtype=h.dtype) for h in heads])
        except mx.base.MXNetError as e:
            grad_error = str(e).splitlines()[-1]
            grads = ()
    for k, a in enumerate(inputs):
        ARRAYS[f'{cid}/in{k}'] = a
    for k, o in enumerate(outs):
        ARRAYS[f'{cid}/out{k}'] = o.asnumpy()
        ARRAYS[f'{cid}/head{k}'] = heads[k]
    for k in grads:
        ARRAYS[f'{cid}/grad{k}'] = nd_in[k].grad.asnumpy()
    rec = {'fn': fn, 'params': params, 'grads': list(grads), 'n_in': len(inputs),
           'n_out': len(outs), 'grad_error': grad_error}
    if sym_infer:
        sfn = mx.sym
        for part in fn.split('.'):
            sfn = getattr(sfn, part)
        vs = [mx.sym.var(f'x{k}') for k in range(len(inputs))]
        s = sfn(*vs, **params)
        _, oshapes, _ = s.infer_shape_partial(**{f'x{k}': a.shape for k, a in enumerate(inputs)})
        rec['sym_shapes'] = [list(o) if o is not None else None for o in oshapes]
    CASES[cid] = rec


def main():
    os.makedirs(OUT, exist_ok=True)
    r = rng_for('khatri_rao')
    case('khatri_rao', 'khatri_rao', [U(r, (2, 3)), U(r, (4, 3)), U(r, (3, 3))], {},
         grads=(0, 1, 2))
    r = rng_for('boolean_mask')
    case('boolean_mask', 'contrib.boolean_mask',
         [U(r, (5, 3)), np.array([1, 0, 1, 1, 0], F32)], {}, grads=(0,))
    # (axis=1: "Check failed: axis == 0 (1 vs. 0) : Not supported yet")
    # hawkesll: N=2 sequences, K=3 marks, T=4 steps
    r = rng_for('hawkesll')
    lda = r.uniform(0.5, 1.5, (2, 3)).astype(F32)
    alpha = r.uniform(0.1, 0.5, (3,)).astype(F32)
    beta = r.uniform(0.5, 2.0, (3,)).astype(F32)
    state = r.uniform(0.0, 1.0, (2, 3)).astype(F32)
    lags = r.uniform(0.1, 1.0, (2, 4)).astype(F32)
    marks = np.array([[0, 1, 2, 1], [2, 2, 0, 1]], np.int32)
    valid = np.array([4, 3], F32)
    max_time = np.array([5.0, 4.0], F32)
    case('hawkesll', 'contrib.hawkesll', [lda, alpha, beta, state, lags, marks, valid, max_time],
         {}, grads=(0, 1, 2))
    # multi_mp_lamb_update: two float16 weights with float32 masters
    r = rng_for('multi_mp_lamb')
    ws32 = [U(r, (3, 4)), U(r, (5,))]
    ws = [w.astype(np.float16) for w in ws32]
    gs = [U(r, w.shape).astype(np.float16) for w in ws]
    ms = [U(r, w.shape, 0, 0.1) for w in ws]
    vs = [U(r, w.shape, 0, 0.1) for w in ws]
    nd = lambda a: mx.nd.array(a, dtype=a.dtype)  # noqa: E731
    W, G, M, V, W32 = [[nd(a) for a in x] for x in (ws, gs, ms, vs, ws32)]
    out = mx.nd.contrib.multi_mp_lamb_update(W, G, M, V, W32, step_count=[1, 3],
                                             lrs=[0.1, 0.05], wds=[0.01, 0.0], out=W,
                                             clip_gradient=0.5, rescale_grad=0.9)
    for k in range(2):
        for name, a in (('w', ws), ('g', gs), ('m', ms), ('v', vs), ('w32', ws32)):
            ARRAYS[f'multi_mp_lamb/in_{name}{k}'] = a[k]
        ARRAYS[f'multi_mp_lamb/out_w{k}'] = W[k].asnumpy()
        ARRAYS[f'multi_mp_lamb/out_m{k}'] = M[k].asnumpy()
        ARRAYS[f'multi_mp_lamb/out_v{k}'] = V[k].asnumpy()
        ARRAYS[f'multi_mp_lamb/out_w32{k}'] = W32[k].asnumpy()
    CASES['multi_mp_lamb'] = {'fn': 'contrib.multi_mp_lamb_update', 'n_out': len(out),
                              'params': {'step_count': [1, 3], 'lrs': [0.1, 0.05],
                                         'wds': [0.01, 0.0], 'clip_gradient': 0.5,
                                         'rescale_grad': 0.9}}
    detection()
    np.savez_compressed(os.path.join(OUT, 'contrib_extra.npz'), **ARRAYS)
    write_json(os.path.join(OUT, 'contrib_extra.json'),
               {'generator': 'tools/make_golden_contrib_extra.py', 'mxnet': mx.__version__,
                'cases': CASES})


def detection():
    # Proposal: A = 3 scales x 1 ratio anchors on a 4x5 feature map, stride 4
    r = rng_for('proposal')
    A, H, W = 3, 4, 5
    cls = r.uniform(0, 1, (1, 2 * A, H, W)).astype(F32)
    bbox = U(r, (1, 4 * A, H, W), -0.3, 0.3)
    im_info = np.array([[16.0, 20.0, 1.0]], F32)
    pp = {'scales': (2, 4, 8), 'ratios': (1,), 'feature_stride': 4, 'rpn_pre_nms_top_n': 40,
          'rpn_post_nms_top_n': 10, 'threshold': 0.7, 'rpn_min_size': 2}
    case('proposal', 'contrib.Proposal', [cls, bbox, im_info], dict(pp, output_score=True))
    case('proposal_plain', 'contrib.Proposal', [cls, bbox, im_info], pp)
    cls2 = r.uniform(0, 1, (2, 2 * A, H, W)).astype(F32)
    bbox2 = U(r, (2, 4 * A, H, W), -0.3, 0.3)
    im_info2 = np.array([[16.0, 20.0, 1.0], [12.0, 18.0, 1.0]], F32)
    case('multiproposal', 'contrib.MultiProposal', [cls2, bbox2, im_info2],
         dict(pp, output_score=True))
    # PSROIPooling: output_dim 2, group/pooled 2 -> 8 channels
    r = rng_for('psroipooling')
    data = U(r, (1, 8, 6, 7))
    rois = np.array([[0, 0.5, 1.0, 5.0, 4.5], [0, 2.0, 0.0, 6.5, 5.5], [0, 1, 1, 2, 2]], F32)
    case('psroipooling', 'contrib.PSROIPooling', [data, rois],
         {'spatial_scale': 1.0, 'output_dim': 2, 'pooled_size': 2, 'group_size': 2}, grads=(0,))
    case('psroipooling_s', 'contrib.PSROIPooling', [data, rois * 2],
         {'spatial_scale': 0.5, 'output_dim': 2, 'pooled_size': 2}, grads=(0,))
    # DeformableConvolution
    r = rng_for('deformconv')
    x = U(r, (2, 4, 5, 6))
    w = U(r, (6, 2, 3, 3))
    b = U(r, (6,))
    off = U(r, (2, 2 * 2 * 9, 3, 3), -1.5, 1.5)  # 2 deformable groups, stride 2, pad 1
    pd = {'kernel': (3, 3), 'num_filter': 6, 'stride': (2, 2), 'pad': (1, 1),
          'num_group': 2, 'num_deformable_group': 2}
    case('deformconv', 'contrib.DeformableConvolution', [x, off, w, b], pd, grads=(0, 1, 2, 3))
    off1 = U(r, (2, 18, 3, 4), -1.0, 1.0)
    w1 = U(r, (3, 4, 3, 3))
    case('deformconv_dil', 'contrib.DeformableConvolution', [x, off1, w1],
         {'kernel': (3, 3), 'num_filter': 3, 'dilate': (2, 1), 'pad': (1, 0), 'no_bias': True},
         grads=(0, 1, 2))
    mask = r.uniform(0, 1, (2, 2 * 9, 3, 3)).astype(F32)
    # (MXNet 1.9.1's CPU backward of ModulatedDeformableConvolution: "only implemented in GPU")
    case('mdeformconv', 'contrib.ModulatedDeformableConvolution', [x, off, mask, w, b], pd)
    # DeformablePSROIPooling: output_dim 2, group 2, pooled 2
    r = rng_for('dpsroi')
    data = U(r, (1, 8, 6, 7))
    trans = U(r, (3, 4, 2, 2), -1, 1)  # 2 * num_classes(=2) channels, part_size 2
    dp = {'spatial_scale': 1.0, 'output_dim': 2, 'group_size': 2, 'pooled_size': 2,
          'part_size': 2, 'sample_per_part': 2, 'trans_std': 0.1}
    case('dpsroi', 'contrib.DeformablePSROIPooling', [data, rois, trans], dp, grads=(0, 2))
    case('dpsroi_notrans', 'contrib.DeformablePSROIPooling', [data, rois],
         dict(dp, no_trans=True), grads=(0,))


if __name__ == '__main__':
    main()
