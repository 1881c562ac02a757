"""Golden records for neomx's INT8 quantization (tests/contrib/test_quantization*.py).

Run from the repository root::

    tools/mxnet-oracle tools/make_golden_quantization.py

Writes ``tests/golden/quantization/``:

* ``ops.json`` + ``ops.npz``: the quantized operators (quantize, quantize_v2, dequantize,
  requantize, quantized_conv/fully_connected/pooling/act/flatten/concat/elemwise_add/
  elemwise_mul/batch_norm/embedding, calibrate_entropy) on small fixed inputs: every output
  with its dtype. The oracle is a CPU build with MKLDNN, so these are oneDNN's kernels.
* ``graphs.json``: ``quantize_model``/``quantize_graph`` on a LeNet-like and an MLP symbol
  (quantized_dtype, quantize_mode, excluded names/ops, naive calibration), as MXNet's JSON.

Calibration runs with ``MXNET_SUBGRAPH_BACKEND=NONE``: with the default MKLDNN backend the
calibration executor fuses conv+relu (``sg_mkldnn_conv_act_0``) so its monitor never sees the
layer names ``quantize_model`` asks for and only the data's quantize node gets thresholds.

The models and the way they are quantized and run live in tests/contrib/_quantization_cases.py,
written against the ``mx`` they are given; this script runs them in MXNet.
"""
import os
import sys

os.environ.setdefault('MXNET_SUBGRAPH_BACKEND', 'NONE')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _oracle_common import ROOT, golden_dir, rng_for, write_json  # noqa: E402

import json  # noqa: E402
import numpy as np  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet.contrib import quantization as q  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, 'tests', 'contrib'))
import _quantization_cases as cases  # noqa: E402

OUT = golden_dir('quantization')
nd = mx.nd
CASES = []
ARRAYS = {}


def arr(a, dtype='float32'):
    return nd.array(np.asarray(a), dtype=dtype)


def case(name, op, inputs, params, symbolic=False):
    """Run ``mx.nd.contrib.<op>`` (or a bound symbol) and record inputs and outputs."""
    ins = [arr(a, dt) for a, dt in inputs]
    if symbolic:
        names = ['in%d' % i for i in range(len(ins))]
        s = getattr(mx.sym.contrib, op)(*[mx.sym.var(n) for n in names], **params)
        ex = s.bind(mx.cpu(), dict(zip(names, ins)))
        outs = ex.forward()
    else:
        outs = getattr(nd.contrib, op)(*ins, **params)
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    for i, (a, dt) in enumerate(inputs):
        ARRAYS['%s__in%d' % (name, i)] = np.asarray(a, dtype=dt)
    out_types = []
    for i, o in enumerate(outs):
        v = o.asnumpy()
        ARRAYS['%s__out%d' % (name, i)] = v
        out_types.append(str(v.dtype))
    CASES.append(dict(name=name, op=op, params={k: str(v) for k, v in params.items()},
                      n_in=len(inputs), in_types=[dt for _, dt in inputs], out_types=out_types,
                      symbolic=symbolic))


def rng(k):
    return rng_for('quantization/' + k)


def ops():
    r = rng('x')
    x = np.concatenate([r.uniform(-1, 1, 300), np.arange(-127, 128) / 127.0,
                        (np.arange(0, 255) + 0.5) / 255.0, [-1.0, 1.0]]).astype('f')
    xp = np.abs(x)
    F = 'float32'
    for tag, lo, hi in (('a', -1.0, 1.0), ('b', -0.5, 0.8)):
        for ot in ('uint8', 'int8'):
            case('quantize_%s_%s' % (ot, tag), 'quantize', [(x, F), ([lo], F), ([hi], F)],
                 dict(out_type=ot))
    case('quantize_v2_int8', 'quantize_v2', [(x, F)], {})
    case('quantize_v2_uint8', 'quantize_v2', [(xp, F)], dict(out_type='uint8'))
    case('quantize_v2_uint8_neg', 'quantize_v2', [(x, F)], dict(out_type='uint8'))
    case('quantize_v2_auto_pos', 'quantize_v2', [(xp * 3, F)], dict(out_type='auto'))
    case('quantize_v2_auto_neg', 'quantize_v2', [(x * 2, F)], dict(out_type='auto'))
    case('quantize_v2_int8_calib', 'quantize_v2', [(x, F)],
         dict(min_calib_range=-0.5, max_calib_range=0.8))
    case('quantize_v2_uint8_calib', 'quantize_v2', [(xp, F)],
         dict(out_type='uint8', min_calib_range=0.0, max_calib_range=0.8))
    case('quantize_v2_auto_calib_pos', 'quantize_v2', [(xp, F)],
         dict(out_type='auto', min_calib_range=0.0, max_calib_range=0.7))
    case('quantize_v2_auto_calib_neg', 'quantize_v2', [(x, F)],
         dict(out_type='auto', min_calib_range=-0.1, max_calib_range=0.8))
    q8 = np.array([-128, -3, 0, 5, 127]).astype('int8')
    qu = np.array([0, 5, 127, 128, 255]).astype('uint8')
    case('quantize_v2_passthrough_int8', 'quantize_v2', [(q8, 'int8')], {})
    case('quantize_v2_passthrough_uint8', 'quantize_v2', [(qu, 'uint8')], {})
    case('quantize_v2_passthrough_calib', 'quantize_v2', [(q8, 'int8')],
         dict(min_calib_range=-3.0, max_calib_range=4.0))
    i8 = np.arange(-128, 128).astype('int8')
    u8 = np.arange(0, 256).astype('uint8')
    case('dequantize_int8', 'dequantize', [(i8, 'int8'), ([-2.0], F), ([1.5], F)], {})
    case('dequantize_uint8', 'dequantize', [(u8, 'uint8'), ([0.0], F), ([3.0], F)], {})
    r = rng('req')
    i32 = np.concatenate([r.randint(-2 ** 31 + 1, 2 ** 31 - 1, 200),
                          r.randint(-3 * 10 ** 7, 3 * 10 ** 7, 200)]).astype('int32')
    for tag, ot, lo, hi in (('int8', 'int8', -50.0, 60.0), ('uint8', 'uint8', 0.0, 60.0),
                            ('auto_pos', 'auto', 0.0, 7.0), ('auto_neg', 'auto', -1.0, 9.0)):
        case('requantize_' + tag, 'requantize', [(i32, 'int32'), ([-100.0], F), ([100.0], F)],
             dict(out_type=ot, min_calib_range=lo, max_calib_range=hi))
    # fully connected: int8 / uint8 data, with and without bias, flatten
    r = rng('fc')
    d8 = r.randint(-127, 128, (3, 2, 5)).astype('int8')
    du = r.randint(0, 256, (3, 2, 5)).astype('uint8')
    w8 = r.randint(-127, 128, (4, 10)).astype('int8')
    wnf = r.randint(-127, 128, (4, 5)).astype('int8')
    b8 = r.randint(-127, 128, (4,)).astype('int8')
    rng6 = [([-1.0], F), ([1.5], F), ([-0.5], F), ([0.4], F), ([-2.0], F), ([1.0], F)]
    case('fc_int8', 'quantized_fully_connected',
         [(d8, 'int8'), (w8, 'int8'), (b8, 'int8')] + rng6, dict(num_hidden=4))
    case('fc_uint8', 'quantized_fully_connected',
         [(du, 'uint8'), (w8, 'int8'), (b8, 'int8'), ([0.0], F)] + rng6[1:], dict(num_hidden=4))
    case('fc_nobias', 'quantized_fully_connected',
         [(d8, 'int8'), (w8, 'int8')] + rng6[:4], dict(num_hidden=4, no_bias=True))
    case('fc_noflatten', 'quantized_fully_connected',
         [(d8, 'int8'), (wnf, 'int8'), (b8, 'int8')] + rng6, dict(num_hidden=4, flatten=False))
    # convolution: oneDNN's quantized convolution takes uint8 data only
    r = rng('conv')
    dc = r.randint(0, 256, (2, 3, 6, 6)).astype('uint8')
    wc = r.randint(-127, 128, (4, 3, 3, 3)).astype('int8')
    bc = r.randint(-127, 128, (4,)).astype('int8')
    case('conv', 'quantized_conv',
         [(dc, 'uint8'), (wc, 'int8'), (bc, 'int8'), ([0.0], F)] + rng6[1:],
         dict(kernel=(3, 3), num_filter=4))
    case('conv_nobias_pad_stride', 'quantized_conv',
         [(dc, 'uint8'), (wc, 'int8'), ([0.0], F), ([2.0], F), ([-0.3], F), ([0.25], F)],
         dict(kernel=(3, 3), num_filter=4, no_bias=True, pad=(1, 1), stride=(2, 2)))
    case('conv_bias_ranges', 'quantized_conv',
         [(dc, 'uint8'), (wc, 'int8'), (bc, 'int8'), ([0.0], F), ([0.7], F), ([-0.9], F),
          ([0.3], F), ([-0.05], F), ([0.1], F)], dict(kernel=(3, 3), num_filter=4, stride=(2, 2)))
    r = rng('pool')
    p8 = r.randint(-128, 128, (2, 3, 5, 5)).astype('int8')
    pu = r.randint(0, 256, (2, 3, 5, 5)).astype('uint8')
    pr = [([-1.0], F), ([1.5], F)]
    case('pool_max', 'quantized_pooling', [(p8, 'int8')] + pr, dict(kernel=(2, 2), stride=(2, 2)))
    case('pool_avg', 'quantized_pooling', [(p8, 'int8')] + pr,
         dict(kernel=(2, 2), stride=(2, 2), pool_type='avg'))
    case('pool_avg_uint8_pad', 'quantized_pooling', [(pu, 'uint8'), ([0.0], F), ([1.5], F)],
         dict(kernel=(3, 3), pad=(1, 1), pool_type='avg'))
    case('pool_max_uint8_full', 'quantized_pooling', [(pu, 'uint8'), ([0.0], F), ([1.5], F)],
         dict(kernel=(2, 2), stride=(2, 2), pooling_convention='full'))
    case('pool_global_avg', 'quantized_pooling', [(p8, 'int8')] + pr,
         dict(kernel=(2, 2), global_pool=True, pool_type='avg'))
    case('act_relu', 'quantized_act', [(p8, 'int8')] + pr, dict(act_type='relu'))
    case('flatten', 'quantized_flatten', [(p8, 'int8')] + pr, {})
    r = rng('concat')
    c1 = r.randint(-127, 128, (2, 3)).astype('int8')
    c2 = r.randint(-127, 128, (2, 2)).astype('int8')
    c3 = r.randint(0, 256, (2, 3)).astype('uint8')
    case('concat', 'quantized_concat', [(c1, 'int8'), (c2, 'int8'), ([-1.0], F), ([0.5], F),
                                        ([-0.2], F), ([2.0], F)], dict(num_args=2, dim=1))
    case('concat_mixed', 'quantized_concat', [(c1, 'int8'), (c3, 'uint8'), ([-1.0], F),
                                              ([0.5], F), ([0.0], F), ([0.8], F)],
         dict(num_args=2, dim=0))
    case('concat_uint8', 'quantized_concat', [(c3, 'uint8'), (c3, 'uint8'), ([0.0], F),
                                              ([0.5], F), ([0.0], F), ([0.8], F)],
         dict(num_args=2, dim=0))
    r = rng('add')
    a1 = r.randint(-127, 128, (3, 4)).astype('int8')
    a2 = r.randint(-127, 128, (3, 4)).astype('int8')
    ar = [([-1.0], F), ([1.5], F), ([-0.5], F), ([0.4], F)]
    case('add', 'quantized_elemwise_add', [(a1, 'int8'), (a2, 'int8')] + ar, {})
    case('add_calib', 'quantized_elemwise_add', [(a1, 'int8'), (a2, 'int8')] + ar,
         dict(min_calib_range=-1.2, max_calib_range=1.0))
    case('mul', 'quantized_elemwise_mul', [(a1, 'int8'), (a2, 'int8')] + ar, {}, symbolic=True)
    r = rng('bn')
    bd = r.randint(-127, 128, (2, 3, 2, 2)).astype('int8')
    bnp = [([1.0, 2.0, 0.5], F), ([0.1, -0.2, 0.3], F), ([0.5, -1.0, 0.2], F),
           ([1.0, 4.0, 0.25], F), ([-1.0], F), ([1.5], F)]
    case('batch_norm', 'quantized_batch_norm', [(bd, 'int8')] + bnp,
         dict(min_calib_range=-3.0, max_calib_range=3.0, fix_gamma=False))
    bu = r.randint(0, 256, (2, 3, 2, 2)).astype('uint8')
    case('batch_norm_uint8', 'quantized_batch_norm', [(bu, 'uint8')] + [bnp[0], bnp[1], bnp[2],
                                                                          bnp[3], ([0.0], F),
                                                                          ([1.5], F)],
         dict(min_calib_range=-3.0, max_calib_range=3.0, fix_gamma=False))
    r = rng('emb')
    idx = np.array([[0, 2, 4], [3, 1, 0]], 'f')
    we = r.randint(-127, 128, (5, 3)).astype('int8')
    case('embedding', 'quantized_embedding', [(idx, F), (we, 'int8'), ([-1.0], F), ([0.6], F)],
         dict(input_dim=5, output_dim=3))
    r = rng('entropy')
    for tag, nb, nq, shift in (('a', 101, 11, 0), ('b', 201, 15, 40), ('c', 41, 5, 0)):
        decay = np.exp(-np.abs(np.arange(nb) - nb // 2 - shift) / 20.0)
        h = np.round(np.abs(r.standard_normal(nb)) * 50 * decay)
        h[nb // 2 + 7] = 0
        edges = np.linspace(-3.0, 3.0, nb + 1)
        case('entropy_' + tag, 'calibrate_entropy', [(h, F), (edges, F)],
             dict(num_quantized_bins=nq))
    # a layer-sized histogram (MXNet's collector uses 8001 bins), ReLU-like (uint8: 511 bins)
    samples = np.abs(r.standard_normal(20000)) ** 1.5
    h, edges = np.histogram(samples, bins=8001, range=(-samples.max(), samples.max()))
    case('entropy_layer', 'calibrate_entropy', [(h, F), (edges, F)], dict(num_quantized_bins=511))


def graph_json(s):
    return json.loads(s.tojson())


def params_for(sym, shapes, key):
    r = rng(key)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {n: nd.array(r.uniform(-0.3, 0.3, s)) for n, s in zip(sym.list_arguments(), arg_shapes)
            if n not in shapes and not n.endswith('label')}
    auxs = {n: nd.array(r.uniform(0.5, 1.5, s)) for n, s in
            zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, auxs


def graphs():
    out = {}
    shapes_of = {'lenet': dict(data=(4, 1, 28, 28)), 'mlp': dict(data=(4, 12)),
                 'tail': dict(data=(2, 1, 12, 12)), 'bn': dict(data=(4, 2, 6, 6))}
    for net, shapes in shapes_of.items():
        sym = cases.NETS[net](mx)
        args, auxs = params_for(sym, shapes, net)
        variants = [('int8_smart', dict(quantized_dtype='int8')),
                    ('uint8_full', dict(quantized_dtype='uint8', quantize_mode='full')),
                    ('auto_full', dict(quantized_dtype='auto', quantize_mode='full')),
                    ('full', dict(quantize_mode='full')),
                    ('excl_sym', dict(excluded_sym_names=['fc1', 'conv1'])),
                    ('excl_op', dict(excluded_op_names=['Pooling', 'Activation']))]
        for tag, kw in variants:
            qsym, qarg, _ = cases.quantize(mx, sym, args, auxs, **kw)
            out['%s/%s' % (net, tag)] = dict(kwargs=kw, json=graph_json(qsym),
                                            params=sorted(qarg))
        qsym, calib = q._quantize_symbol(sym, mx.cpu(), offline_params=list(args))
        out['%s/calib_layers' % net] = calib
        # naive calibration: thresholds stored on the quantize/requantize nodes
        r = rng('calib/' + net)
        data = r.uniform(0, 1, (8,) + shapes['data'][1:]).astype('f')
        qsym, qarg, qaux = cases.quantize(mx, sym, args, auxs, 'naive', data)
        ARRAYS['graph_%s__calib_data' % net] = data
        for k, v in args.items():
            ARRAYS['graph_%s__arg__%s' % (net, k)] = v.asnumpy()
        for k, v in auxs.items():
            ARRAYS['graph_%s__aux__%s' % (net, k)] = v.asnumpy()
        out['%s/naive_auto' % net] = dict(json=graph_json(qsym), params=sorted(qarg))
        if net in ('mlp', 'bn'):  # entropy calibration (8001-bin histograms, KL thresholds)
            esym, earg, _ = cases.quantize(mx, sym, args, auxs, 'entropy', data)
            out['%s/entropy_auto' % net] = dict(json=graph_json(esym), params=sorted(earg))
        # the calibrated INT8 model's forward on the calibration data (oneDNN's quantized
        # convolution rejects int8 data, so LeNet's second convolution cannot run unfused)
        try:
            ARRAYS['graph_%s__int8_out' % net] = cases.int8_forward(mx, qsym, qarg, qaux, data)
        except mx.base.MXNetError:
            pass
        for k in qarg:
            ARRAYS['graph_%s__qarg__%s' % (net, k)] = qarg[k].asnumpy()
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    ops()
    g = graphs()
    write_json(os.path.join(OUT, 'ops.json'), CASES)
    write_json(os.path.join(OUT, 'graphs.json'), g)
    tmp = os.path.join(OUT, 'ops.tmp.npz')
    np.savez_compressed(tmp, **ARRAYS)
    os.replace(tmp, os.path.join(OUT, 'ops.npz'))
    print('wrote %d op cases, %d graphs to %s' % (len(CASES), len(g), OUT))


if __name__ == '__main__':
    main()
