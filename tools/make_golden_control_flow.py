#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for the control-flow operators ``mx.nd.contrib.foreach``,
``while_loop`` and ``cond`` and their ``mx.sym.contrib`` forms (``_foreach``, ``_while_loop``,
``_cond`` nodes with subgraphs). Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_control_flow.py

Output: ``tests/golden/control_flow/control_flow.npz`` (arrays, keys ``<case>/...``) and
``control_flow.json`` (per case: the symbol JSON, output names). Each case runs imperatively under
``autograd.record`` (outputs, then gradients of every input for seeded head gradients) and
symbolically (``simple_bind``, ``forward(is_train=True)``, ``backward`` with the same head
gradients). The bodies are the functions of the same names in tests/ops/test_control_flow.py.
Only mxnet, numpy and the stdlib are used.
"""
import os
from collections import OrderedDict

from _oracle_common import F32, U, fresh_scopes, golden_dir, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('control_flow')
ARRAYS = OrderedDict()
CASES = OrderedDict()


# --- the bodies (F is mx.nd or mx.sym) ---------------------------------------------------------
def rnn_body(F, w, u):
    def body(x, states):
        h = states[0]
        h2 = F.tanh(F.dot(x, w) + F.dot(h, u))
        return [h2 * 2.0, F.sum(h2, axis=1)], [h2]
    return body


def while_parts(F, max_iterations):
    def cond(i, s):
        return i < 3
    def func(i, s):
        return [s * 2.0, F.sin(s)], [i + 1, s + F.sin(s)]
    return cond, func


def cond_parts(F, a, b):
    def then_func():
        return [a * b, F.exp(a)]
    def else_func():
        return [a - b, F.cos(b)]
    return then_func, else_func


INPUTS = {
    'foreach': [('x', (4, 2, 3)), ('h0', (2, 5)), ('w', (3, 5)), ('u', (5, 5))],
    'while_loop': [('i', (1,)), ('s', (2, 3))],
    'cond_then': [('p', (1,)), ('a', (2, 3)), ('b', (2, 3))],
    'cond_else': [('p', (1,)), ('a', (2, 3)), ('b', (2, 3))],
}


def make_inputs(cid):
    r = rng_for(cid)
    vals = OrderedDict()
    for n, s in INPUTS[cid]:
        vals[n] = U(r, s)
    if cid == 'while_loop':
        vals['i'] = np.array([0.0], F32)
    if cid == 'cond_then':
        vals['p'] = np.array([1.0], F32)
    if cid == 'cond_else':
        vals['p'] = np.array([0.0], F32)
    return vals


def build(F, cid, v):
    """The outputs (flat list) of case ``cid`` over inputs ``v`` (dict of F objects)."""
    if cid == 'foreach':
        outs, states = F.contrib.foreach(rnn_body(F, v['w'], v['u']), v['x'], [v['h0']])
        return list(outs) + list(states)
    if cid == 'while_loop':
        c, f = while_parts(F, 5)
        outs, lv = F.contrib.while_loop(c, f, [v['i'], v['s']], max_iterations=5)
        return list(outs) + list(lv)
    t, e = cond_parts(F, v['a'], v['b'])
    res = F.contrib.cond(v['p'] > 0.5, t, e)
    return list(res)


def run_case(cid):
    vals = make_inputs(cid)
    r = rng_for(cid + '/heads')
    for n, a in vals.items():
        ARRAYS[f'{cid}/in/{n}'] = a
    # imperative
    nd_in = OrderedDict((n, mx.nd.array(a)) for n, a in vals.items())
    for a in nd_in.values():
        a.attach_grad()
    with mx.autograd.record():
        outs = build(mx.nd, cid, nd_in)
    heads = [U(r, o.shape) for o in outs]
    mx.autograd.backward(outs, [mx.nd.array(h) for h in heads])
    for k, (o, h) in enumerate(zip(outs, heads)):
        ARRAYS[f'{cid}/nd_out{k}'] = o.asnumpy()
        ARRAYS[f'{cid}/head{k}'] = h
    for n, a in nd_in.items():
        ARRAYS[f'{cid}/nd_grad/{n}'] = a.grad.asnumpy()
    # symbolic
    with fresh_scopes():
        sv = OrderedDict((n, mx.sym.var(n)) for n in vals)
        sym = mx.sym.Group(build(mx.sym, cid, sv))
    # (bind, not simple_bind: MXNet cannot infer the shapes of _while_loop's outputs)
    args = {n: mx.nd.array(a) for n, a in vals.items()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in vals.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(h) for h in heads])
    for k, o in enumerate(ex.outputs):
        ARRAYS[f'{cid}/sym_out{k}'] = o.asnumpy()
    for n in vals:
        ARRAYS[f'{cid}/sym_grad/{n}'] = ex.grad_dict[n].asnumpy()
    CASES[cid] = {'json': sym.tojson(), 'outputs': sym.list_outputs(),
                  'arguments': sym.list_arguments(), 'n_out': len(outs),
                  'shapes': [None if s is None else list(s) for s in sym.infer_shape_partial(
                      **{n: a.shape for n, a in vals.items()})[1]]}


def main():
    os.makedirs(OUT, exist_ok=True)
    for cid in INPUTS:
        run_case(cid)
    np.savez_compressed(os.path.join(OUT, 'control_flow.npz'), **ARRAYS)
    write_json(os.path.join(OUT, 'control_flow.json'),
               {'generator': 'tools/make_golden_control_flow.py', 'mxnet': mx.__version__,
                'cases': CASES})


if __name__ == '__main__':
    main()
