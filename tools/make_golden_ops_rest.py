#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for the rest of the operator table (issue 10): ``nanprod``,
the ``random_pdf_*`` densities (with ``is_log``), ``contrib.BatchNormWithReLU``,
``contrib.SyncBatchNorm``, ``contrib.RROIAlign``, and what MXNet's CPU build says for the
GPU-only ``contrib.fft``/``ifft``/``count_sketch``. Run it with the real MXNet, from the
repository root::

    tools/mxnet-oracle tools/make_golden_ops_rest.py

Output: ``tests/golden/ops_rest/ops_rest.npz`` (keys ``<case>/in<i>``, ``out<i>``, ``head<i>``,
``grad<i>``, ``aux<i>`` = auxiliary states after the call) and ``ops_rest.json`` (per case: the
function, its parameters, which inputs got gradients, train mode, the symbolic output shapes MXNet
infers; plus ``errors``: MXNet's messages for bad calls, and ``infer``: symbolic shape inference
results). Each case calls ``mx.nd.<fn>`` under ``autograd.record`` and differentiates the listed
inputs with seeded head gradients. Only mxnet, numpy and the stdlib are used.
"""
import os
from collections import OrderedDict

from _oracle_common import F32, U, err_info, golden_dir, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('ops_rest')
ARRAYS = OrderedDict()
CASES = OrderedDict()
ERRORS = OrderedDict()
INFER = OrderedDict()


def _fn(ns, name):
    obj = ns
    for part in name.split('.'):
        obj = getattr(obj, part)
    return obj


def case(cid, fn, inputs, params, grads=(), n_aux=0, train=True):
    """``inputs``: numpy arrays (positional; the last ``n_aux`` are auxiliary states);
    ``grads``: positions to differentiate."""
    for k, a in enumerate(inputs):
        ARRAYS[f'{cid}/in{k}'] = a
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for k in grads:
        nd_in[k].attach_grad()
    with mx.autograd.record(train_mode=train):
        out = _fn(mx.nd, fn)(*nd_in, **params)
    outs = out if isinstance(out, (list, tuple)) else [out]
    r = rng_for(cid + '/heads')
    heads = [U(r, o.shape).astype(o.dtype) for o in outs]
    if grads:
        mx.autograd.backward(outs, [mx.nd.array(h, dtype=h.dtype) for h in heads])
    for k, o in enumerate(outs):
        ARRAYS[f'{cid}/out{k}'] = o.asnumpy()
        ARRAYS[f'{cid}/head{k}'] = heads[k]
    for k in grads:
        ARRAYS[f'{cid}/grad{k}'] = nd_in[k].grad.asnumpy()
    for j in range(n_aux):
        ARRAYS[f'{cid}/aux{j}'] = nd_in[len(inputs) - n_aux + j].asnumpy()
    vs = [mx.sym.var(f'x{k}') for k in range(len(inputs))]
    s = _fn(mx.sym, fn)(*vs, **params)
    _, oshapes, _ = s.infer_shape_partial(**{f'x{k}': a.shape for k, a in enumerate(inputs)})
    CASES[cid] = {'fn': fn, 'params': params, 'grads': list(grads), 'n_in': len(inputs),
                  'n_aux': n_aux, 'n_out': len(outs), 'train': train,
                  'sym_shapes': [list(o) if o is not None else None for o in oshapes]}


def error(eid, thunk):
    try:
        r = thunk()
        if isinstance(r, mx.nd.NDArray):
            r.asnumpy()
    except mx.base.MXNetError as e:
        ERRORS[eid] = err_info(e)['error_message'].splitlines()[-1]
        return
    raise AssertionError(f'{eid}: no error')


def infer(iid, fn, shapes, params=None, dtype=None):
    vs = [mx.sym.var(f'x{k}') for k in range(len(shapes))]
    s = _fn(mx.sym, fn)(*vs, **(params or {}))
    rec = {'fn': fn, 'shapes': [list(x) for x in shapes], 'params': params or {}}
    try:
        _, o, _ = s.infer_shape_partial(**{f'x{k}': x for k, x in enumerate(shapes)})
        rec['out'] = [list(x) if x is not None else None for x in o]
    except mx.base.MXNetError as e:
        rec['error'] = err_info(e)['error_message'].splitlines()[-1]
    if dtype is not None:
        _, t, _ = s.infer_type(**{f'x{k}': dtype for k in range(len(shapes))})
        rec['dtype'] = np.dtype(t[0]).name
    INFER[iid] = rec


def pdf_cases():
    r = rng_for('pdf')
    pos = lambda shape, lo=0.5, hi=2.0: r.uniform(lo, hi, shape).astype(F32)  # noqa: E731
    specs = [
        ('uniform', [U(r, (2, 3), 0.2, 0.8), pos((2,), -1.0, 0.0), pos((2,), 1.0, 2.0)]),
        ('normal', [U(r, (2, 3), -2, 2), U(r, (2,)), pos((2,))]),
        ('gamma', [pos((2, 3)), pos((2,), 1.5, 3.0), pos((2,))]),
        ('exponential', [pos((2, 3)), pos((2,))]),
        ('poisson', [r.randint(0, 5, (2, 3)).astype(F32), pos((2,), 0.5, 4.0)]),
        ('negative_binomial', [r.randint(0, 5, (2, 3)).astype(F32), pos((2,), 1.0, 3.0),
                               pos((2,), 0.2, 0.8)]),
        ('generalized_negative_binomial', [r.randint(0, 5, (2, 3)).astype(F32),
                                           pos((2,), 0.5, 3.0), pos((2,), 0.2, 1.5)]),
    ]
    for name, ins in specs:
        for is_log in (False, True):
            cid = f'pdf_{name}' + ('_log' if is_log else '')
            case(cid, f'random_pdf_{name}', ins, {'is_log': is_log},
                 grads=tuple(range(len(ins))))
    # parameters of shape (2, 2) for samples (2, 2, 3): one distribution per leading index
    case('pdf_normal_2d', 'random_pdf_normal', [U(r, (2, 2, 3), -2, 2), U(r, (2, 2)),
                                                pos((2, 2))], {}, grads=(0, 1, 2))
    case('pdf_normal_same', 'random_pdf_normal', [U(r, (3,), -2, 2), U(r, (3,)), pos((3,))],
         {'is_log': True}, grads=(0, 1, 2))
    # Dirichlet: vector parameters (2, 3) for samples (2, 4, 3) on the simplex
    x = r.uniform(0.1, 1.0, (2, 4, 3)).astype(F32)
    x /= x.sum(-1, keepdims=True)
    alpha = pos((2, 3), 0.5, 3.0)
    for is_log in (False, True):
        case('pdf_dirichlet' + ('_log' if is_log else ''), 'random_pdf_dirichlet', [x, alpha],
             {'is_log': is_log}, grads=(0, 1))
    x1 = r.uniform(0.1, 1.0, (5, 3)).astype(F32)
    x1 /= x1.sum(-1, keepdims=True)
    case('pdf_dirichlet_shared', 'random_pdf_dirichlet', [x1, pos((3,), 0.5, 3.0)],
         {'is_log': True}, grads=(0, 1))
    # uniform has no support check; float64
    case('pdf_uniform_outside', 'random_pdf_uniform',
         [np.array([[5.0, -1.0, 0.5]], F32), np.array([0.0], F32), np.array([2.0], F32)], {})
    case('pdf_gamma_f64', 'random_pdf_gamma',
         [pos((2, 3)).astype(np.float64), pos((2,), 1.5, 3.0).astype(np.float64),
          pos((2,)).astype(np.float64)], {'is_log': True}, grads=(0, 1, 2))
    one = lambda *s: mx.nd.ones(s)  # noqa: E731
    error('pdf_param_mismatch', lambda: mx.nd.random_pdf_normal(one(2, 3), one(2), one(3)))
    error('pdf_sample_mismatch', lambda: mx.nd.random_pdf_normal(one(2, 3), one(3), one(3)))
    error('pdf_ndim', lambda: mx.nd.random_pdf_normal(one(2), one(2, 3), one(2, 3)))
    error('pdf_dirichlet_mismatch', lambda: mx.nd.random_pdf_dirichlet(one(2, 3), one(4)))
    error('pdf_dtype', lambda: mx.nd.random_pdf_normal(mx.nd.ones((2, 3), dtype='float64'),
                                                        one(2), one(2)))
    infer('pdf_normal', 'random_pdf_normal', [(4, 2, 5), (4, 2), (4, 2)])
    infer('pdf_dirichlet', 'random_pdf_dirichlet', [(4, 2, 5, 3), (4, 3)])
    infer('pdf_partial', 'random_pdf_exponential', [(4, 5), ()])


def nanprod_cases():
    r = rng_for('nanprod')
    x = U(r, (3, 4), 0.5, 1.5)
    x[0, 1] = np.nan
    x[2, :] = np.nan
    case('nanprod_axis1', 'nanprod', [x], {'axis': 1}, grads=(0,))
    case('nanprod_all', 'nanprod', [x], {}, grads=(0,))
    case('nanprod_keep_exclude', 'nanprod', [x], {'axis': 1, 'keepdims': True, 'exclude': True},
         grads=(0,))
    x3 = U(r, (2, 3, 2), 0.5, 1.5)
    x3[1, 0, 1] = np.nan
    case('nanprod_axes', 'nanprod', [x3], {'axis': (0, 2)}, grads=(0,))


def bn_cases():
    r = rng_for('bn')
    data = U(r, (2, 3, 4, 5), -2, 2)
    gamma, beta = U(r, (3,), 0.5, 1.5), U(r, (3,))
    mm, mv = U(r, (3,)), U(r, (3,), 0.5, 1.5)
    for fn, extra in (('contrib.BatchNormWithReLU', {}), ('contrib.SyncBatchNorm', {'key': 'bn0'})):
        short = 'bnrelu' if 'ReLU' in fn else 'syncbn'
        case(short, fn, [data, gamma, beta, mm.copy(), mv.copy()], dict(extra), grads=(0, 1, 2),
             n_aux=2)
        case(short + '_gamma', fn, [data, gamma, beta, mm.copy(), mv.copy()],
             dict(extra, fix_gamma=False, momentum=0.8, eps=1e-4), grads=(0, 1, 2), n_aux=2)
        # (no gradients in inference mode: MXNet 1.9.1's oneDNN BatchNormWithReLU backward then
        # reads a ReLU workspace its forward never wrote, values changing from run to run, and
        # SyncBatchNorm's gives NaN: neither defines one)
        case(short + '_infer', fn, [data, gamma, beta, mm.copy(), mv.copy()],
             dict(extra, fix_gamma=False), grads=(),
             n_aux=2, train=False)
        case(short + '_global', fn, [data, gamma, beta, mm.copy(), mv.copy()],
             dict(extra, fix_gamma=False, use_global_stats=True), grads=(0, 1, 2), n_aux=2)
        case(short + '_meanvar', fn, [data, gamma, beta, mm.copy(), mv.copy()],
             dict(extra, fix_gamma=False, output_mean_var=True), grads=(0, 1, 2), n_aux=2)
    d2 = U(r, (4, 3), -2, 2)
    # (MXNet 1.9.1's CPU kernel is oneDNN's: 4-D float32 data, channel axis 1, nothing else)
    c3 = mx.nd.ones(3)
    error('bnrelu_2d', lambda: mx.nd.contrib.BatchNormWithReLU(mx.nd.array(d2), c3, c3, c3, c3))
    error('bnrelu_axis', lambda: mx.nd.contrib.BatchNormWithReLU(
        mx.nd.ones((2, 4, 5, 3)), c3, c3, c3, c3, axis=3))
    error('bnrelu_f64', lambda: mx.nd.contrib.BatchNormWithReLU(
        mx.nd.ones((2, 3, 4, 5), dtype='float64'), *[mx.nd.ones(3, dtype='float64')] * 4))
    case('syncbn_ndev', 'contrib.SyncBatchNorm', [d2, gamma, beta, mm.copy(), mv.copy()],
         {'fix_gamma': False, 'key': 'k1', 'ndev': 1}, grads=(0, 1, 2), n_aux=2)
    error('syncbn_nokey', lambda: mx.nd.contrib.SyncBatchNorm(
        mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.ones(3), mx.nd.ones(3), mx.nd.ones(3)))


def rroi_cases():
    r = rng_for('rroi')
    data = U(r, (2, 3, 8, 9))
    rois = np.array([[0, 4.0, 4.0, 4.0, 3.0, 30.0], [1, 3.5, 4.5, 6.0, 2.0, -45.0],
                     [0, 2.0, 3.0, 3.0, 3.0, 0.0], [1, 5.0, 3.0, 5.0, 4.0, 90.0],
                     [0, 8.5, 1.0, 4.0, 2.0, 120.0]], F32)
    case('rroialign', 'contrib.RROIAlign', [data, rois],
         {'pooled_size': (2, 3), 'spatial_scale': 1.0})
    case('rroialign_scale', 'contrib.RROIAlign', [data, rois * np.array([1, 2, 2, 2, 2, 1], F32)],
         {'pooled_size': (3, 3), 'spatial_scale': 0.5, 'sampling_ratio': 2})
    x = mx.nd.ones((1, 1, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.RROIAlign(x, mx.nd.array([[0, 2, 2, 2, 2, 0]]), pooled_size=(1, 1),
                                    spatial_scale=1.0)
    error('rroialign_backward', lambda: y.backward())


def gpu_only_cases():
    one = lambda *s: mx.nd.ones(s)  # noqa: E731
    error('fft_cpu', lambda: mx.nd.contrib.fft(one(2, 4)))
    error('ifft_cpu', lambda: mx.nd.contrib.ifft(one(2, 4)))
    error('count_sketch_cpu', lambda: mx.nd.contrib.count_sketch(
        one(2, 3), mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]), out_dim=5))
    infer('fft_2d', 'contrib.fft', [(2, 3)], dtype='float32')
    infer('fft_4d', 'contrib.fft', [(2, 3, 4, 5)])
    infer('fft_3d', 'contrib.fft', [(2, 3, 4)])
    infer('ifft_2d', 'contrib.ifft', [(2, 6)], dtype='float32')
    infer('ifft_4d_odd', 'contrib.ifft', [(2, 3, 4, 5)])
    infer('count_sketch', 'contrib.count_sketch', [(2, 3), (1, 3), (1, 3)], {'out_dim': 5})


def main():
    os.makedirs(OUT, exist_ok=True)
    nanprod_cases()
    pdf_cases()
    bn_cases()
    rroi_cases()
    gpu_only_cases()
    np.savez_compressed(os.path.join(OUT, 'ops_rest.npz'), **ARRAYS)
    write_json(os.path.join(OUT, 'ops_rest.json'),
               {'generator': 'tools/make_golden_ops_rest.py', 'mxnet': mx.__version__,
                'cases': CASES, 'errors': ERRORS, 'infer': INFER})


if __name__ == '__main__':
    main()
