#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's fused ``RNN`` operator.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_rnn.py

Output goes to ``tests/golden/rnn/``: ``rnn.json`` (cases, shape inference, errors) and
``rnn.npz`` (arrays, keys ``<id>/...``).

* ``cases`` with ``source`` 'fused': ``mx.sym.RNN(data, parameters, state[, state_cell],
  name='rnn0', **params)`` bound on cpu, ``forward(is_train=True)`` then ``backward`` with
  seeded random head gradients for every output; the gradients of every input (``train``
  false: with dropout, ``forward(is_train=False)`` only). ``nd_out<i>``
  is the same call through ``mx.nd`` (predict mode).
* ``cases`` with ``source`` 'cells': ``use_sequence_length``, and LSTM projections (MXNet's
  CPU kernel has no training mode for them; its predict-mode forward is checked to agree).
  For ``use_sequence_length``, MXNet 1.9.1's CPU kernel ignores
  ``sequence_length`` (only its cuDNN kernel honours it), so the reference is MXNet's own
  Gluon cells (``LSTMCell``/``LSTMPCell``/``GRUCell``/``RNNCell`` in ``BidirectionalCell`` and
  ``SequentialRNNCell``) unrolled with ``valid_length`` under ``mx.autograd``, with the weights
  sliced out of the same flat vector; the fused layout is checked against these cells on the
  full-length case first (``check_cells`` below).
* ``infer``: ``infer_shape_partial`` from the data shape only (the parameter vector's length).
* ``errors``: MXNet's errors for bad shapes, types and parameters.

Per case the npz holds ``in/<arg>``, ``out<i>``, ``head<i>``, ``grad/<arg>`` and ``nd_out<i>``.
Inputs come from ``np.random.RandomState`` seeded by the CRC32 of the case id. Only mxnet,
numpy and the stdlib are used.
"""
import json
import os
from collections import OrderedDict

from _oracle_common import (U, err_info, fresh_scopes, golden_dir, jsonable, rng_for, write_json)

import numpy as np
import mxnet as mx

OUT = golden_dir('rnn')
CASES, INFER, ERRORS = [], [], []
ARRAYS = OrderedDict()
GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def arg_names(params):
    names = ['data', 'parameters', 'state']
    if params['mode'] == 'lstm':
        names.append('state_cell')
    if params.get('use_sequence_length'):
        names.append('sequence_length')
    return names


def make_sym(params):
    with fresh_scopes():
        return mx.sym.RNN(name='rnn0', **{n: mx.sym.Variable(n) for n in arg_names(params)},
                          **params)


def inputs_for(cid, params, T, N, C):
    sym = make_sym(params)
    arg_s, _, _ = sym.infer_shape(data=(T, N, C))
    r = rng_for(cid)
    ins = OrderedDict()
    for n, s in zip(sym.list_arguments(), arg_s):
        ins[n] = U(r, s, -0.6, 0.6) if n == 'parameters' else U(r, s)
    if params.get('use_sequence_length'):
        ins['sequence_length'] = r.randint(1, T + 1, (N,)).astype(np.float32)
        ins['sequence_length'][0] = T
    return sym, ins


def fused_case(cid, params, T=4, N=3, C=5):
    sym, ins = inputs_for(cid, params, T, N, C)
    names = list(ins)
    args = {n: mx.nd.array(a) for n, a in ins.items()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in ins.items()}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req='write')
    train = not params.get('p')  # with dropout: predict mode only (training draws masks)
    outs = [o.asnumpy() for o in ex.forward(is_train=train)]
    hr = rng_for(cid + '/head')
    heads = [U(hr, o.shape) for o in outs]
    if train:
        ex.backward([mx.nd.array(h) for h in heads])
    rec = OrderedDict([('id', cid), ('source', 'fused'), ('train', train),
                       ('params', jsonable(params)),
                       ('inputs', names), ('list_arguments', sym.list_arguments()),
                       ('list_outputs', sym.list_outputs()),
                       ('attrs', json.loads(sym.tojson())['nodes'][-1].get('attrs', {})),
                       ('out_shapes', [list(o.shape) for o in outs])])
    for n, a in ins.items():
        ARRAYS['%s/in/%s' % (cid, n)] = a
        if train:
            ARRAYS['%s/grad/%s' % (cid, n)] = ex.grad_dict[n].asnumpy()
    for i, (o, h) in enumerate(zip(outs, heads)):
        ARRAYS['%s/out%d' % (cid, i)] = o
        ARRAYS['%s/head%d' % (cid, i)] = h
    res = mx.nd.RNN(**{n: mx.nd.array(ins[n]) for n in names}, **params)
    res = res if isinstance(res, list) else [res]
    for i, o in enumerate(res):
        ARRAYS['%s/nd_out%d' % (cid, i)] = o.asnumpy()
    CASES.append(rec)
    return ins, outs, heads, [ex.grad_dict[n].asnumpy() for n in names]


# ----------------------------------------------------------------------------- Gluon cells
def unpack(params, flat, C):
    """Per layer and direction (layer-major): dict of i2h/h2h[/h2r] weights and biases."""
    g, d, h = GATES[params['mode']], 2 if params.get('bidirectional') else 1, params['state_size']
    proj = params.get('projection_size')
    p = proj or h
    pos = [0]

    def take(*shape):
        n = int(np.prod(shape))
        v = flat[pos[0]:pos[0] + n].reshape(shape)
        pos[0] += n
        return v

    res = []
    for layer in range(params['num_layers']):
        ni = C if layer == 0 else p * d
        for _ in range(d):
            w = OrderedDict([('i2h_weight', take(g * h, ni)), ('h2h_weight', take(g * h, p))])
            if proj:
                w['h2r_weight'] = take(p, h)
            res.append(w)
    for w in res:
        w['i2h_bias'] = take(g * h)
        w['h2h_bias'] = take(g * h)
    assert pos[0] == flat.size
    return res


def make_cell(params, ni, prefix):
    mode, h = params['mode'], params['state_size']
    if mode == 'lstm' and params.get('projection_size'):
        return mx.gluon.contrib.rnn.LSTMPCell(h, params['projection_size'], input_size=ni,
                                              prefix=prefix)
    if mode == 'lstm':
        return mx.gluon.rnn.LSTMCell(h, input_size=ni, prefix=prefix)
    if mode == 'gru':
        return mx.gluon.rnn.GRUCell(h, input_size=ni, prefix=prefix)
    return mx.gluon.rnn.RNNCell(h, activation=mode[4:], input_size=ni, prefix=prefix)


def cells_run(params, ins, heads, C):
    """(outputs, grads) of the Gluon-cell stack: outputs [out, hy(, cy)], grads per input."""
    d = 2 if params.get('bidirectional') else 1
    p = params.get('projection_size') or params['state_size']
    lstm = params['mode'] == 'lstm'
    weights = unpack(params, ins['parameters'], C)
    stack = mx.gluon.rnn.SequentialRNNCell()
    cells = []
    for layer in range(params['num_layers']):
        ni = C if layer == 0 else p * d
        pair = [make_cell(params, ni, 'l%d%s_' % (layer, 'lr'[k])) for k in range(d)]
        cells += pair
        stack.add(mx.gluon.rnn.BidirectionalCell(*pair) if d == 2 else pair[0])
    stack.initialize()
    for cell, w in zip(cells, weights):
        for k, v in w.items():
            getattr(cell, k).set_data(mx.nd.array(v))
    x = mx.nd.array(ins['data'])
    h0, c0 = mx.nd.array(ins['state']), mx.nd.array(ins['state_cell']) if lstm else None
    for a in (x, h0, c0):
        if a is not None:
            a.attach_grad()
    lens = mx.nd.array(ins['sequence_length']) if 'sequence_length' in ins else None
    T = ins['data'].shape[0]
    with mx.autograd.record():
        begin = []
        for k in range(len(cells)):
            begin += [h0[k], c0[k]] if lstm else [h0[k]]
        out, states = stack.unroll(T, x, begin_state=begin, layout='TNC', merge_outputs=True,
                                   valid_length=lens)
        per = 2 if lstm else 1
        outs = [out, mx.nd.stack(*states[0::per])]
        if lstm:
            outs.append(mx.nd.stack(*states[1::per]))
    mx.autograd.backward(outs[:len(heads)], [mx.nd.array(h) for h in heads])
    flat_grad = []
    gw = [OrderedDict((k, getattr(c, k).grad().asnumpy()) for k in w)
          for c, w in zip(cells, weights)]
    for w in gw:
        flat_grad += [w[k].ravel() for k in w if k.endswith('weight')]
    for w in gw:
        flat_grad += [w['i2h_bias'], w['h2h_bias']]
    grads = OrderedDict([('data', x.grad.asnumpy()), ('parameters', np.concatenate(flat_grad)),
                         ('state', h0.grad.asnumpy())])
    if lstm:
        grads['state_cell'] = c0.grad.asnumpy()
    if lens is not None:
        grads['sequence_length'] = np.zeros(lens.shape, np.float32)
    return [o.asnumpy() for o in outs], grads


def check_cells(cid, params, T=4, N=3, C=5):
    """The fused operator and the Gluon cells agree at full length (the layout is right)."""
    ins, outs, heads, grads = fused_case(cid, params, T, N, C)
    c_outs, c_grads = cells_run(params, ins, heads, C)
    for a, b in zip(outs, c_outs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for a, b in zip(grads, c_grads.values()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def cells_case(cid, params, T=5, N=4, C=3, seqlen=True):
    """Golden values from the Gluon cells (with ``seqlen``: random valid lengths; without:
    full length, where MXNet's fused kernel gives the forward in predict mode only, as for
    projections, and must agree)."""
    params = dict(params, use_sequence_length=seqlen, state_outputs=True)
    sym, ins = inputs_for(cid, params, T, N, C)
    out_shapes = sym.infer_shape(data=(T, N, C))[1]
    hr = rng_for(cid + '/head')
    heads = [U(hr, s) for s in out_shapes]
    outs, grads = cells_run(params, ins, heads, C)
    if not seqlen:
        fused = mx.nd.RNN(**{n: mx.nd.array(a) for n, a in ins.items()}, **params)
        for a, b in zip(fused, outs):
            np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)
    CASES.append(OrderedDict([('id', cid), ('source', 'cells'), ('params', jsonable(params)),
                              ('inputs', list(ins)), ('list_arguments', sym.list_arguments()),
                              ('list_outputs', sym.list_outputs()),
                              ('out_shapes', [list(o.shape) for o in outs])]))
    for n, a in ins.items():
        ARRAYS['%s/in/%s' % (cid, n)] = a
        ARRAYS['%s/grad/%s' % (cid, n)] = grads[n]
    for i, (o, h) in enumerate(zip(outs, heads)):
        ARRAYS['%s/out%d' % (cid, i)] = o
        ARRAYS['%s/head%d' % (cid, i)] = h


# ----------------------------------------------------------------------------- shapes, errors
def infer_case(params, shapes):
    with fresh_scopes():
        sym = mx.sym.RNN(mx.sym.Variable('data'), name='rnn0', **params)
    rec = OrderedDict([('params', jsonable(params)), ('shapes', jsonable(shapes)),
                       ('arguments', sym.list_arguments())])
    try:
        rec['infer_shape'] = jsonable(sym.infer_shape_partial(**shapes))
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    INFER.append(rec)


def error_case(eid, fn):
    rec = OrderedDict([('id', eid)])
    try:
        fn()
        rec['error'] = None
    except mx.base.MXNetError as e:
        rec.update(err_info(e))
    ERRORS.append(rec)


def sym_for(**kw):
    def build():
        with fresh_scopes():
            return mx.sym.RNN(mx.sym.Variable('data'), name='rnn0', **kw)
    return build


def main():
    os.makedirs(OUT, exist_ok=True)
    for mode in ('rnn_relu', 'rnn_tanh', 'lstm', 'gru'):
        for layers in (1, 2):
            for bidir in (False, True):
                params = dict(state_size=6, num_layers=layers, bidirectional=bidir, mode=mode,
                              state_outputs=(layers + bidir) % 2 == 1)
                cid = '%s_l%d_%s_%s' % (mode, layers, 'bi' if bidir else 'uni',
                                        'so' if params['state_outputs'] else 'out')
                if mode in ('lstm', 'gru') and layers == 2 and bidir:
                    check_cells(cid, params)
                else:
                    fused_case(cid, params)
    # MXNet's CPU kernel runs projections in predict mode only ("No training support for LSTM
    # with projection on CPU currently"): gradients from the cells, forward checked against it.
    cells_case('lstm_proj_l1_uni', dict(state_size=6, num_layers=1, mode='lstm',
                                        projection_size=3), seqlen=False)
    cells_case('lstm_proj_l2_bi', dict(state_size=5, num_layers=2, mode='lstm', bidirectional=True,
                                       projection_size=2), seqlen=False)
    fused_case('gru_l2_uni_p0.5_predict', dict(state_size=4, num_layers=2, mode='gru', p=0.5))
    fused_case('lstm_l1_uni_T1', dict(state_size=3, num_layers=1, mode='lstm', state_outputs=True),
               T=1, N=1, C=2)
    for mode in ('lstm', 'gru', 'rnn_tanh', 'rnn_relu'):
        for layers, bidir in ((1, False), (2, True)):
            cells_case('seqlen_%s_l%d_%s' % (mode, layers, 'bi' if bidir else 'uni'),
                       dict(state_size=4, num_layers=layers, bidirectional=bidir, mode=mode))
    cells_case('seqlen_lstm_proj_l2_bi', dict(state_size=4, num_layers=2, bidirectional=True,
                                              mode='lstm', projection_size=3))

    for params, shapes in (
            (dict(state_size=4, num_layers=2, mode='lstm', bidirectional=True),
             {'data': (5, 3, 6)}),
            (dict(state_size=7, num_layers=3, mode='gru'), {'data': (2, 1, 9)}),
            (dict(state_size=3, num_layers=1, mode='rnn_relu', state_outputs=True),
             {'data': (4, 2, 1)}),
            (dict(state_size=5, num_layers=2, mode='rnn_tanh', bidirectional=True,
                  state_outputs=True, use_sequence_length=True), {'data': (4, 2, 3)}),
            (dict(state_size=4, num_layers=2, mode='lstm', projection_size=2, state_outputs=True),
             {'data': (5, 3, 6)}),
            (dict(state_size=4, num_layers=3, mode='lstm', projection_size=3, bidirectional=True),
             {'data': (5, 3, 6)}),
            (dict(state_size=3, num_layers=1, mode='gru'), {'data': (2, 0, 4)}),
            (dict(state_size=3, num_layers=1, mode='gru'), {'rnn0_state': (1, 3, 3)}),
            (dict(state_size=3, num_layers=1, mode='gru'), {}),
    ):
        infer_case(params, shapes)

    error_case('data_ndim', lambda: sym_for(state_size=3, num_layers=1, mode='gru')()
               .infer_shape(data=(2, 3, 4, 5)))
    error_case('params_shape', lambda: sym_for(state_size=3, num_layers=1, mode='gru')()
               .infer_shape(data=(2, 3, 4), rnn0_parameters=(7,)))
    error_case('state_shape', lambda: sym_for(state_size=3, num_layers=1, mode='gru')()
               .infer_shape(data=(2, 3, 4), rnn0_state=(1, 2, 3)))
    error_case('state_cell_shape', lambda: sym_for(state_size=3, num_layers=2, mode='lstm')()
               .infer_shape(data=(2, 3, 4), rnn0_state_cell=(2, 3, 4)))
    error_case('seqlen_shape', lambda: sym_for(state_size=3, num_layers=1, mode='gru',
                                               use_sequence_length=True)()
               .infer_shape(data=(2, 3, 4), rnn0_sequence_length=(2,)))
    error_case('params_type', lambda: sym_for(state_size=3, num_layers=1, mode='gru')()
               .infer_type(data='float32', rnn0_parameters='float64'))
    error_case('p_bound', sym_for(state_size=3, num_layers=1, mode='gru', p=1.5))
    error_case('bad_mode', sym_for(state_size=3, num_layers=1, mode='foo'))
    error_case('no_num_layers', sym_for(state_size=3, mode='gru'))
    error_case('nd_missing_state', lambda: mx.nd.RNN(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((81,)),
                                                     state_size=3, num_layers=1, mode='gru'))

    np.savez_compressed(os.path.join(OUT, 'rnn.npz'), **ARRAYS)
    write_json(os.path.join(OUT, 'rnn.json'),
               OrderedDict([('mxnet_version', mx.__version__), ('cases', CASES),
                            ('infer', INFER), ('errors', ERRORS)]))
    print('wrote %d cases, %d infer, %d errors, %d arrays' % (len(CASES), len(INFER), len(ERRORS),
                                                            len(ARRAYS)))


if __name__ == '__main__':
    main()
