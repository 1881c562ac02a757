#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's matrix / softmax / loss-head operators and the
Python-level ``nd``/``sym`` dispatch functions.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_matrix.py

Paths are resolved relative to this file. Output goes to ``tests/golden/matrix/``:

* ``ops.json`` + ``ops.npz``   single-operator forward/backward cases (format of
                               ``tests/golden/foundation/ops.json``, plus ``variadic``,
                               ``input_dtypes``, ``output_dtypes`` and ``output_names``)
* ``infer.json``               infer_shape / infer_type results and error texts for small
                               symbols built by stored code snippets
* ``functions.json`` + ``functions.npz``  ``mx.nd.<fn>`` / ``mx.sym.<fn>`` dispatch results
* ``README.md``

Everything is deterministic: inputs come from ``np.random.RandomState`` seeded by the CRC32 of
the case id. Only mxnet, numpy and the stdlib are used.
"""
import json
import os
from collections import OrderedDict

# first: it sets MXNET_SUBGRAPH_VERBOSE before mxnet loads
from _oracle_common import (F32, ROOT, SENTINEL, U, err_info, fresh_scopes, golden_dir, ints,
                            jsonable, node_attrs, resolve_op, rng_for, write_json)

import numpy as np
import mxnet as mx

OUT = golden_dir('matrix')
GENERATOR = 'tools/make_golden_matrix.py'


# ----------------------------------------------------------------------------- helpers

def distinct(r, shape):
    """A permutation of evenly spaced values: no ties (topk order is then unambiguous)."""
    n = int(np.prod(shape))
    return (r.permutation(n).reshape(shape) * 0.25 - n * 0.1).astype(F32)


def head_like(r, o):
    """A random head gradient in the output's dtype (small ints for integer outputs)."""
    if np.issubdtype(o.dtype, np.integer):
        return r.randint(-3, 4, o.shape).astype(o.dtype)
    return r.uniform(-1, 1, o.shape).astype(o.dtype)


# ----------------------------------------------------------------------------- op cases

CASES = []
ARRAYS = OrderedDict()


def run_case(cid, op, params, sym, inputs, *, loss=False, notes='', variadic=False):
    args = sym.list_arguments()
    assert args == list(inputs), (cid, args, list(inputs))
    assert not sym.list_auxiliary_states(), cid
    hr = rng_for(cid + '/head')
    shapes = {n: inputs[n].shape for n in args}
    types = {n: inputs[n].dtype for n in args}
    bind_error, backward, grad_req = None, True, 'write'
    try:
        ex = sym.simple_bind(ctx=mx.cpu(), grad_req='write', type_dict=types, **shapes)
    except RuntimeError as e:
        bind_error = err_info(e)
        grad_req, backward = 'null', False
        ex = sym.simple_bind(ctx=mx.cpu(), grad_req='null', type_dict=types, **shapes)
    for n in args:
        ex.arg_dict[n][:] = inputs[n]
    outs = ex.forward(is_train=True)
    heads, backward_error = None, None
    if backward:
        heads = [head_like(hr, o.asnumpy()) for o in outs]
        try:
            ex.backward([mx.nd.array(h, dtype=h.dtype) for h in heads])
            mx.nd.waitall()
        except mx.base.MXNetError as e:
            backward_error = err_info(e)
    outputs = [o.asnumpy() for o in ex.outputs]
    grads = {}
    if backward and backward_error is None:
        grads = {n: ex.grad_dict[n].asnumpy() for n in args}

    not_written = []
    if grads:
        ex2 = sym.bind(mx.cpu(),
                       args={n: mx.nd.array(inputs[n], dtype=inputs[n].dtype) for n in args},
                       args_grad={n: mx.nd.full(inputs[n].shape, SENTINEL,
                                                dtype=grads[n].dtype) for n in args},
                       grad_req='write')
        ex2.forward(is_train=True)
        ex2.backward([mx.nd.array(h, dtype=h.dtype) for h in heads])
        for n in args:
            g2 = ex2.grad_dict[n].asnumpy()
            if np.all(g2 == SENTINEL):
                not_written.append(n)
            else:
                assert np.allclose(g2, grads[n], rtol=1e-5, atol=1e-6), (cid, n)

    case = OrderedDict([
        ('id', cid), ('op', op), ('params', jsonable(params)), ('inputs', args),
        ('variadic', variadic), ('aux', []), ('outputs', len(outputs)),
        ('output_names', sym.list_outputs()), ('loss', loss),
        ('input_dtypes', [np.dtype(inputs[n].dtype).name for n in args]),
        ('output_dtypes', [o.dtype.name for o in outputs]),
        ('grad_inputs', list(grads)), ('grad_req', grad_req), ('backward_runs', 1),
        ('grad_init', False), ('grads_not_written', not_written),
        ('attrs', node_attrs(sym)), ('out_shapes', [list(o.shape) for o in outputs]),
        ('notes', notes),
    ])
    if bind_error is not None:
        case['bind_error_with_grad'] = bind_error
    if backward_error is not None:
        case['backward_error'] = backward_error
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


def op_case(cid, op, params, gen, **kw):
    """One op named 'op0' on Variables named like the op's arguments (keyword inputs)."""
    inputs = OrderedDict(gen(rng_for(cid)))
    variables = OrderedDict((n, mx.sym.Variable(n)) for n in inputs)
    with fresh_scopes():
        sym = resolve_op(op)(name='op0', **variables, **params)
    run_case(cid, op, params, sym, inputs, **kw)


def var_case(cid, op, params, gen, **kw):
    """A variadic op (Concat, stack) on positional Variables arg0, arg1, ..."""
    inputs = OrderedDict(('arg%d' % i, a) for i, a in enumerate(gen(rng_for(cid))))
    with fresh_scopes():
        sym = resolve_op(op)(*[mx.sym.Variable(n) for n in inputs], name='op0', **params)
    run_case(cid, op, params, sym, inputs, variadic=True, **kw)


def build_op_cases():
    x23 = lambda r: [('data', U(r, (2, 3)))]
    x234 = lambda r: [('data', U(r, (2, 3, 4)))]

    # --- Concat / stack
    var_case('concat_dim1', 'Concat', {'dim': 1}, lambda r: [U(r, (2, 3)), U(r, (2, 4))])
    var_case('concat_dim0_three', 'Concat', {'dim': 0},
             lambda r: [U(r, (1, 3)), U(r, (2, 3)), U(r, (3, 3))])
    var_case('concat_dim_neg1', 'Concat', {'dim': -1},
             lambda r: [U(r, (2, 3, 2)), U(r, (2, 3, 1))])
    var_case('concat_default_dim', 'Concat', {}, lambda r: [U(r, (2, 1, 2)), U(r, (2, 2, 2))],
             notes='dim defaults to 1')
    var_case('concat_one_input', 'Concat', {'dim': 0}, lambda r: [U(r, (2, 3))])
    var_case('concat_alias', 'concat', {'dim': 1}, lambda r: [U(r, (2, 2)), U(r, (2, 1))])
    var_case('stack_axis0', 'stack', {}, lambda r: [U(r, (2, 3)), U(r, (2, 3))])
    var_case('stack_axis1_three', 'stack', {'axis': 1},
             lambda r: [U(r, (2, 3)), U(r, (2, 3)), U(r, (2, 3))])
    var_case('stack_axis_neg1', 'stack', {'axis': -1}, lambda r: [U(r, (2, 3)), U(r, (2, 3))])

    # --- SliceChannel / split
    op_case('split_axis1', 'SliceChannel', {'num_outputs': 2}, lambda r: [('data', U(r, (2, 4)))])
    op_case('split_alias_axis0', 'split', {'num_outputs': 3, 'axis': 0},
            lambda r: [('data', U(r, (3, 2)))])
    op_case('split_squeeze', 'SliceChannel', {'num_outputs': 3, 'axis': 0, 'squeeze_axis': True},
            lambda r: [('data', U(r, (3, 2)))])
    op_case('split_axis_neg1', 'SliceChannel', {'num_outputs': 2, 'axis': -1}, x234)
    op_case('split_one', 'SliceChannel', {'num_outputs': 1}, x23,
            notes='one output, named output0')

    # --- transpose / expand_dims / squeeze
    op_case('transpose_default', 'transpose', {}, x234, notes='axes=() reverses')
    op_case('transpose_axes', 'transpose', {'axes': (1, 0, 2)}, x234)
    op_case('transpose_axes_201', 'transpose', {'axes': (2, 0, 1)}, x234)
    op_case('transpose_2d', 'transpose', {}, x23)
    op_case('expand_dims_0', 'expand_dims', {'axis': 0}, x23)
    op_case('expand_dims_2', 'expand_dims', {'axis': 2}, x23)
    op_case('expand_dims_neg1', 'expand_dims', {'axis': -1}, x23)
    op_case('expand_dims_neg3', 'expand_dims', {'axis': -3}, x23, notes='-ndim-1 is allowed')
    x131 = lambda r: [('data', U(r, (1, 3, 1)))]
    op_case('squeeze_all', 'squeeze', {}, x131)
    op_case('squeeze_axis0', 'squeeze', {'axis': 0}, x131)
    op_case('squeeze_axis_02', 'squeeze', {'axis': (0, 2)}, x131)
    op_case('squeeze_axis_neg1', 'squeeze', {'axis': -1}, x131)
    op_case('squeeze_to_1', 'squeeze', {}, lambda r: [('data', U(r, (1, 1)))],
            notes='squeezing every axis gives shape (1,)')

    # --- slice_axis / slice
    x45 = lambda r: [('data', U(r, (4, 5)))]
    op_case('slice_axis_1', 'slice_axis', {'axis': 1, 'begin': 1, 'end': 3}, x45)
    op_case('slice_axis_end_none', 'slice_axis', {'axis': 1, 'begin': -2, 'end': None}, x45)
    op_case('slice_axis_neg', 'slice_axis', {'axis': -2, 'begin': -3, 'end': -1}, x45)
    op_case('slice_axis_0', 'slice_axis', {'axis': 0, 'begin': 0, 'end': 1}, x234)
    op_case('slice_basic', 'slice', {'begin': (1, 0), 'end': (3, 4)}, x45)
    op_case('slice_none', 'slice', {'begin': (None, 2), 'end': (None, None)}, x45)
    op_case('slice_step', 'slice', {'begin': (0, 0), 'end': (4, 5), 'step': (2, 2)}, x45)
    op_case('slice_neg_step', 'slice', {'begin': (None, 4), 'end': (None, 0),
                                         'step': (None, -2)}, x45)
    op_case('slice_neg_step_full', 'slice', {'begin': (3,), 'end': (None,), 'step': (-1,)}, x45)
    op_case('slice_prefix_axes', 'slice', {'begin': (1,), 'end': (2,)}, x234,
            notes='axes beyond len(begin) are kept whole')
    op_case('slice_negative_idx', 'slice', {'begin': (-3, -4), 'end': (-1, -1)}, x45)
    op_case('crop_alias', 'crop', {'begin': (0, 1), 'end': (2, 3)}, x45)

    # --- tile / repeat
    op_case('tile_2d', 'tile', {'reps': (2, 3)}, x23)
    op_case('tile_short_reps', 'tile', {'reps': (2,)}, x23, notes='reps padded with leading 1s')
    op_case('tile_long_reps', 'tile', {'reps': (2, 1, 2)}, x23,
            notes='the input shape is padded with leading 1s')
    op_case('repeat_flat', 'repeat', {'repeats': 2}, x23, notes='axis=None flattens')
    op_case('repeat_axis0', 'repeat', {'repeats': 3, 'axis': 0}, x23)
    op_case('repeat_axis_neg1', 'repeat', {'repeats': 2, 'axis': -1}, x234)

    # --- clip (some values exactly on the bounds)
    def clip_data(r):
        d = U(r, (3, 4))
        d.flat[[0, 5]] = -0.5
        d.flat[[3, 9]] = 0.5
        return [('data', d)]
    op_case('clip', 'clip', {'a_min': -0.5, 'a_max': 0.5}, clip_data,
            notes='entries 0,5 == a_min and 3,9 == a_max: the gradient passes at the bounds')
    op_case('clip_wide', 'clip', {'a_min': -2.0, 'a_max': 2.0}, x23)

    # --- where
    op_case('where_same_shape', 'where', {},
            lambda r: [('condition', ints(r, (3, 4), -1, 2)), ('x', U(r, (3, 4))),
                       ('y', U(r, (3, 4)))], notes='condition in {-1,0,1}: non-zero picks x')
    op_case('where_1d_cond', 'where', {},
            lambda r: [('condition', np.array([1, 0, 2.5], F32)), ('x', U(r, (3, 2, 2))),
                       ('y', U(r, (3, 2, 2)))], notes='1-D condition selects whole rows')

    # --- one_hot
    op_case('one_hot', 'one_hot', {'depth': 4},
            lambda r: [('indices', np.array([[0, 1.7, 3], [-1, 4, 2.2]], F32))],
            notes='1.7 -> 1 (truncation); -1 and 4 are out of range: a row of off_value')
    op_case('one_hot_values', 'one_hot', {'depth': 3, 'on_value': 5.0, 'off_value': -1.0},
            lambda r: [('indices', np.array([2, 0, 1, 1], F32))])
    op_case('one_hot_int32_out', 'one_hot', {'depth': 3, 'dtype': 'int32'},
            lambda r: [('indices', np.array([2, 0, 1], F32))])
    op_case('one_hot_int_indices', 'one_hot', {'depth': 5, 'dtype': 'float64'},
            lambda r: [('indices', np.array([[4, 0], [1, 3]], np.int32))])

    # --- topk (distinct values unless noted)
    d35 = lambda r: [('data', distinct(r, (3, 5)))]
    op_case('topk_default', 'topk', {}, d35, notes='ret_typ indices, k=1, axis=-1')
    op_case('topk_value_k2', 'topk', {'k': 2, 'ret_typ': 'value'}, d35,
            notes='value: one visible output (output0) plus a hidden indices output')
    op_case('topk_both', 'topk', {'k': 3, 'ret_typ': 'both'}, d35)
    op_case('topk_both_int32', 'topk', {'k': 2, 'ret_typ': 'both', 'dtype': 'int32'}, d35)
    op_case('topk_mask', 'topk', {'k': 2, 'ret_typ': 'mask'}, d35)
    op_case('topk_ascend', 'topk', {'k': 2, 'ret_typ': 'value', 'is_ascend': True}, d35)
    op_case('topk_axis0', 'topk', {'k': 2, 'axis': 0, 'ret_typ': 'both'}, d35)
    op_case('topk_axis_none', 'topk', {'k': 4, 'axis': None, 'ret_typ': 'both'}, d35,
            notes='axis=None works on the flattened array')
    op_case('topk_axis_none_mask', 'topk', {'k': 4, 'axis': None, 'ret_typ': 'mask'}, d35)
    op_case('topk_k0', 'topk', {'k': 0, 'ret_typ': 'value'}, d35, notes='k < 1 sorts everything')
    op_case('topk_3d', 'topk', {'k': 2, 'axis': 1, 'ret_typ': 'value'},
            lambda r: [('data', distinct(r, (2, 4, 3)))])
    ties = lambda r: [('data', np.array([[3, 1, 3, 2, 3], [1, 1, 0, 0, 5]], F32))]
    op_case('topk_ties', 'topk', {'k': 3, 'ret_typ': 'both'}, ties,
            notes='ties: the lower index comes first')
    op_case('topk_ties_ascend', 'topk', {'k': 3, 'ret_typ': 'both', 'is_ascend': True}, ties)

    # --- Cast
    op_case('cast_f64', 'Cast', {'dtype': 'float64'}, x23)
    op_case('cast_f16', 'Cast', {'dtype': 'float16'}, x23)
    op_case('cast_int32', 'Cast', {'dtype': 'int32'},
            lambda r: [('data', np.array([[1.7, -1.7, 0.2], [2.5, -2.5, 9.99]], F32))],
            notes='float -> int truncates toward zero')
    op_case('cast_alias_from_int', 'cast', {'dtype': 'float32'},
            lambda r: [('data', ints(r, (2, 3), -5, 5, np.int32))])

    # --- softmax family
    x25 = lambda r: [('data', U(r, (2, 5), -2, 2))]
    op_case('softmax_default', 'softmax', {}, x25)
    op_case('softmax_axis0', 'softmax', {'axis': 0}, x25)
    op_case('softmax_temperature', 'softmax', {'temperature': 2.0}, x25)
    op_case('softmax_3d_axis1', 'softmax', {'axis': 1}, lambda r: [('data', U(r, (2, 3, 4), -2, 2))])
    op_case('softmax_dtype_f64', 'softmax', {'dtype': 'float64'}, x25,
            notes='output float64, input gradient float32')
    op_case('softmax_length', 'softmax', {'use_length': True},
            lambda r: [('data', U(r, (3, 4), -2, 2)), ('length', np.array([2, 4, 0], np.int32))],
            notes='positions >= length get 0; a length-0 row is all zeros')
    op_case('softmax_length_axis0', 'softmax', {'use_length': True, 'axis': 0},
            lambda r: [('data', U(r, (3, 4), -2, 2)),
                       ('length', np.array([1, 3, 2, 3], np.int32))])
    op_case('log_softmax_default', 'log_softmax', {}, x25)
    op_case('log_softmax_axis0', 'log_softmax', {'axis': 0}, x25)
    op_case('log_softmax_temperature', 'log_softmax', {'temperature': 0.5}, x25)
    op_case('softmin_default', 'softmin', {}, x25)
    op_case('softmin_temperature', 'softmin', {'temperature': 2.0, 'axis': 0}, x25)

    # --- regression heads (loss: the head gradient is ignored)
    def reg(cid, op, params, gen, notes=''):
        op_case(cid, op, params, gen, loss=True,
                notes=('loss head: the (random) head grad is ignored. ' + notes).strip())

    d43 = lambda r: [('data', U(r, (4, 3))), ('label', U(r, (4, 3)))]
    d41 = lambda r: [('data', U(r, (4, 1))), ('label', U(r, (4,)))]
    reg('linreg', 'LinearRegressionOutput', {}, d43, notes='grad = (out - label) / 3')
    reg('linreg_scale', 'LinearRegressionOutput', {'grad_scale': 2.0}, d43)
    reg('linreg_n1', 'LinearRegressionOutput', {}, d41, notes='(N,1) data, (N,) label')
    reg('linreg_label_3d', 'LinearRegressionOutput', {},
        lambda r: [('data', U(r, (4, 3))), ('label', U(r, (4, 3, 1)))],
        notes='a label of the same batch size and total size is accepted')
    reg('logreg', 'LogisticRegressionOutput', {},
        lambda r: [('data', U(r, (4, 3), -2, 2)), ('label', ints(r, (4, 3), 0, 2))])
    reg('logreg_n1', 'LogisticRegressionOutput', {'grad_scale': 3.0},
        lambda r: [('data', U(r, (4, 1), -2, 2)), ('label', ints(r, (4,), 0, 2))])
    reg('maereg', 'MAERegressionOutput', {}, d43)
    reg('maereg_ties', 'MAERegressionOutput', {},
        lambda r: [('data', ints(r, (4, 3), 0, 3)), ('label', ints(r, (4, 3), 0, 3))],
        notes='integer values, many equal to their label: there the gradient is -1/M')
    reg('maereg_scale', 'MAERegressionOutput', {'grad_scale': 0.5},
        lambda r: [('data', U(r, (2, 2, 3))), ('label', U(r, (2, 2, 3)))], notes='M = 6')

    d23v = lambda r: [('data', np.array([[-1, 0.5, 2], [0.1, 0.2, 3]], F32))]
    reg('makeloss_null', 'MakeLoss', {}, d23v)
    reg('makeloss_scale', 'MakeLoss', {'grad_scale': 2.5}, d23v)
    reg('makeloss_batch', 'MakeLoss', {'normalization': 'batch'}, d23v)
    reg('makeloss_valid', 'MakeLoss', {'normalization': 'valid', 'valid_thresh': 0.2,
                                       'grad_scale': 3.0}, d23v,
        notes='3 entries > 0.2 (0.2 itself is not valid): grad = 3/3')
    reg('makeloss_valid_none', 'MakeLoss', {'normalization': 'valid', 'valid_thresh': 5.0}, d23v,
        notes='no valid entry: divides by max(1, 0)')
    reg('make_loss', 'make_loss', {}, d23v, notes='separate op: output named loss; grad = 1')


# ----------------------------------------------------------------------------- inference

INFER_SPECS = [
    # (id, code that sets sym, method, kwargs)
    ('concat_shapes', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'), dim=1)",
     'infer_shape', {'a': (2, 3), 'b': (2, 4)}),
    ('concat_backward_infer', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'), dim=0)",
     'infer_shape_partial', {'a': (2, 3)}),
    ('concat_bad', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'), dim=1)",
     'infer_shape', {'a': (2, 5), 'b': (3, 5)}),
    ('concat_bad_ndim', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'), dim=1)",
     'infer_shape', {'a': (2, 5), 'b': (2, 5, 1)}),
    ('concat_bad_axis', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'), dim=2)",
     'infer_shape', {'a': (2, 3), 'b': (2, 4)}),
    ('concat_types', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'))",
     'infer_type', {'a': 'float64'}),
    ('stack_shapes', "sym = mx.sym.stack(mx.sym.var('a'), mx.sym.var('b'), axis=-1)",
     'infer_shape', {'a': (2, 5)}),
    ('stack_bad_axis', "sym = mx.sym.stack(mx.sym.var('a'), mx.sym.var('b'), axis=3)",
     'infer_shape', {'a': (2, 3), 'b': (2, 3)}),
    ('split_shapes', "sym = mx.sym.split(mx.sym.var('x'), num_outputs=2, axis=-1)",
     'infer_shape', {'x': (2, 3, 4)}),
    ('split_uneven', "sym = mx.sym.split(mx.sym.var('x'), num_outputs=2)",
     'infer_shape', {'x': (2, 5)}),
    ('split_squeeze_1d', "sym = mx.sym.split(mx.sym.var('x'), num_outputs=1, axis=0, "
                         "squeeze_axis=True)", 'infer_shape', {'x': (1,)}),
    ('transpose_bad_len', "sym = mx.sym.transpose(mx.sym.var('x'), axes=(0,))",
     'infer_shape', {'x': (2, 5)}),
    ('expand_dims_bad', "sym = mx.sym.expand_dims(mx.sym.var('x'), axis=3)",
     'infer_shape', {'x': (2, 5)}),
    ('expand_dims_bad_neg', "sym = mx.sym.expand_dims(mx.sym.var('x'), axis=-4)",
     'infer_shape', {'x': (2, 5)}),
    ('squeeze_bad', "sym = mx.sym.squeeze(mx.sym.var('x'), axis=1)",
     'infer_shape', {'x': (1, 3, 1)}),
    ('slice_axis_bad_range', "sym = mx.sym.slice_axis(mx.sym.var('x'), axis=1, begin=3, end=2)",
     'infer_shape', {'x': (2, 5)}),
    ('slice_axis_bad_end', "sym = mx.sym.slice_axis(mx.sym.var('x'), axis=1, begin=0, end=4)",
     'infer_shape', {'x': (2, 3)}),
    ('slice_axis_bad_axis', "sym = mx.sym.slice_axis(mx.sym.var('x'), axis=2, begin=0, end=1)",
     'infer_shape', {'x': (2, 3)}),
    ('slice_clipped', "sym = mx.sym.slice(mx.sym.var('x'), begin=(0, -9), end=(1, 9))",
     'infer_shape', {'x': (2, 3)}),
    ('slice_empty', "sym = mx.sym.slice(mx.sym.var('x'), begin=(0, 2), end=(1, 1))",
     'infer_shape', {'x': (2, 3)}),
    ('slice_too_many_axes', "sym = mx.sym.slice(mx.sym.var('x'), begin=(0, 0, 0), end=(1, 1, 1))",
     'infer_shape', {'x': (2, 3)}),
    ('slice_zero_step', "sym = mx.sym.slice(mx.sym.var('x'), begin=(0, 0), end=(1, 1), "
                        "step=(0, 1))", 'infer_shape', {'x': (2, 3)}),
    ('tile_shapes', "sym = mx.sym.tile(mx.sym.var('x'), reps=(2, 1, 3))",
     'infer_shape', {'x': (2, 5)}),
    ('repeat_shapes', "sym = mx.sym.repeat(mx.sym.var('x'), repeats=2)",
     'infer_shape', {'x': (2, 5)}),
    ('where_1d', "sym = mx.sym.where(mx.sym.var('c'), mx.sym.var('a'), mx.sym.var('b'))",
     'infer_shape', {'c': (2,), 'a': (2, 3)}),
    ('where_types', "sym = mx.sym.where(mx.sym.var('c'), mx.sym.var('a'), mx.sym.var('b'))",
     'infer_type', {'c': 'int32', 'a': 'float64'}),
    ('one_hot_shape', "sym = mx.sym.one_hot(mx.sym.var('i'), depth=3)",
     'infer_shape', {'i': (2, 5)}),
    ('one_hot_type', "sym = mx.sym.one_hot(mx.sym.var('i'), depth=3, dtype='int32')",
     'infer_type', {'i': 'float32'}),
    ('cast_type', "sym = mx.sym.Cast(mx.sym.var('x'), dtype='float16')",
     'infer_type', {'x': 'float32'}),
    ('topk_both_types', "sym = mx.sym.topk(mx.sym.var('x'), k=2, ret_typ='both', dtype='int32')",
     'infer_type', {'x': 'float64'}),
    ('topk_value_types', "sym = mx.sym.topk(mx.sym.var('x'), k=2, ret_typ='value')",
     'infer_type', {'x': 'float64'}),
    ('topk_mask_types', "sym = mx.sym.topk(mx.sym.var('x'), k=2, ret_typ='mask')",
     'infer_type', {'x': 'float64'}),
    ('topk_axis_none', "sym = mx.sym.topk(mx.sym.var('x'), k=2, axis=None, ret_typ='both')",
     'infer_shape', {'x': (2, 5)}),
    ('topk_k_too_big', "sym = mx.sym.topk(mx.sym.var('x'), k=4)", 'infer_shape', {'x': (2, 3)}),
    ('softmax_dtype', "sym = mx.sym.softmax(mx.sym.var('x'), dtype='float64')",
     'infer_type', {'x': 'float32'}),
    ('softmax_length_shape', "sym = mx.sym.softmax(mx.sym.var('x'), mx.sym.var('l'), "
                             "use_length=True, axis=0)", 'infer_shape', {'x': (2, 5)}),
    ('softmax_length_bad', "sym = mx.sym.softmax(mx.sym.var('x'), mx.sym.var('l'), "
                           "use_length=True, axis=0)", 'infer_shape', {'x': (2, 4), 'l': (2,)}),
    ('linreg_label_default', "sym = mx.sym.LinearRegressionOutput(mx.sym.var('x'), name='lr')",
     'infer_shape', {'x': (4, 3)}),
    ('linreg_label_n1', "sym = mx.sym.LinearRegressionOutput(mx.sym.var('x'), name='lr')",
     'infer_shape', {'x': (4, 1)}),
    ('linreg_label_bad', "sym = mx.sym.LinearRegressionOutput(mx.sym.var('x'), name='lr')",
     'infer_shape', {'x': (4, 3), 'lr_label': (4, 2)}),
    ('linreg_label_bad_batch', "sym = mx.sym.LinearRegressionOutput(mx.sym.var('x'), name='lr')",
     'infer_shape', {'x': (4, 3), 'lr_label': (2, 6)}),
]

LIST_SPECS = [
    # (id, code): list_arguments / list_outputs of auto-named symbols
    ('names_concat', "sym = mx.sym.Concat(mx.sym.var('a'), mx.sym.var('b'))"),
    ('names_split', "sym = mx.sym.SliceChannel(mx.sym.var('a'), num_outputs=3)"),
    ('names_split_alias', "sym = mx.sym.split(mx.sym.var('a'), num_outputs=2)"),
    ('names_topk_indices', "sym = mx.sym.topk(mx.sym.var('a'))"),
    ('names_topk_value', "sym = mx.sym.topk(mx.sym.var('a'), ret_typ='value')"),
    ('names_topk_both', "sym = mx.sym.topk(mx.sym.var('a'), ret_typ='both')"),
    ('names_softmax_length', "sym = mx.sym.softmax(mx.sym.var('a'), use_length=True)"),
    ('names_log_softmax_length', "sym = mx.sym.log_softmax(mx.sym.var('a'), use_length=True)"),
    ('names_linreg', "sym = mx.sym.LinearRegressionOutput(mx.sym.var('a'))"),
    ('names_logreg', "sym = mx.sym.LogisticRegressionOutput(mx.sym.var('a'))"),
    ('names_maereg', "sym = mx.sym.MAERegressionOutput(mx.sym.var('a'))"),
    ('names_makeloss', "sym = mx.sym.MakeLoss(mx.sym.var('a'))"),
    ('names_make_loss', "sym = mx.sym.make_loss(mx.sym.var('a'))"),
    ('names_cast', "sym = mx.sym.cast(mx.sym.var('a'), dtype='int32')"),
    ('names_stack', "sym = mx.sym.stack(mx.sym.var('a'), mx.sym.var('b'))"),
    ('names_where', "sym = mx.sym.where(mx.sym.var('c'), mx.sym.var('a'), mx.sym.var('b'))"),
    ('names_one_hot', "sym = mx.sym.one_hot(mx.sym.var('a'), depth=2)"),
    ('names_transpose', "sym = mx.sym.transpose(mx.sym.var('a'))"),
    ('names_slice', "sym = mx.sym.slice(mx.sym.var('a'), begin=(0, None), end=(1, None))"),
]


def run_code(code):
    ns = {'mx': mx}
    with fresh_scopes():
        exec(code, ns)
    return ns['sym']


def fmt_types(ts):
    return None if ts is None else [None if t is None else np.dtype(t).name for t in ts]


def fmt_shapes(ss):
    return None if ss is None else [None if s is None else list(s) for s in ss]


def build_infer():
    records = []
    for cid, code, method, kwargs in INFER_SPECS:
        rec = OrderedDict([('id', cid), ('code', code), ('method', method),
                           ('kwargs', jsonable(kwargs))])
        sym = run_code(code)
        rec['arguments'] = sym.list_arguments()
        try:
            res = getattr(sym, method)(**kwargs)
            fmt = fmt_types if method == 'infer_type' else fmt_shapes
            rec['result'] = [fmt(r) for r in res]
        except Exception as e:  # noqa: BLE001  (recorded)
            rec.update(err_info(e))
        records.append(rec)
    names = []
    for cid, code in LIST_SPECS:
        sym = run_code(code)
        node = json.loads(sym.tojson())['nodes'][-1]
        names.append(OrderedDict([('id', cid), ('code', code),
                                  ('list_arguments', sym.list_arguments()),
                                  ('list_outputs', sym.list_outputs()),
                                  ('op', node['op']), ('attrs', node.get('attrs', {}))]))
    return OrderedDict([('generator', GENERATOR), ('mxnet_version', mx.__version__),
                        ('infer', records), ('names', names)])


# ----------------------------------------------------------------------------- functions

FN_ARRAYS = OrderedDict()

ND_FUNCS = ['add', 'subtract', 'multiply', 'divide', 'true_divide', 'modulo', 'power',
            'maximum', 'minimum', 'equal', 'not_equal', 'greater', 'greater_equal', 'lesser',
            'lesser_equal', 'logical_and', 'logical_or', 'logical_xor']


def _operand(r, kind, fn):
    """kind: 'A' (2,3) array, 'B' (1,3) array, or a number."""
    if kind in ('A', 'B'):
        shape = (2, 3) if kind == 'A' else (1, 3)
        if fn in ('power',):
            return r.uniform(0.5, 2.0, shape).astype(F32)
        if fn.startswith('logical') or fn in ('equal', 'not_equal', 'greater', 'greater_equal',
                                              'lesser', 'lesser_equal'):
            return r.randint(0, 3, shape).astype(F32)
        if fn in ('divide', 'true_divide', 'modulo'):
            return (np.where(r.uniform(size=shape) < 0.5, -1, 1)
                    * r.uniform(0.5, 2.0, shape)).astype(F32)
        return r.uniform(-2, 2, shape).astype(F32)
    return kind


def build_functions():
    records = []
    combos = [('A', 'B'), ('A', 1.5), (1.5, 'A'), (2, 3)]
    logical_combos = [('A', 'B'), ('A', 1), ('A', 0), (0, 'A'), (1, 0)]
    for fn in ND_FUNCS:
        cmp_like = fn.startswith('logical') or fn in ('equal', 'not_equal', 'greater',
                                                     'greater_equal', 'lesser', 'lesser_equal')
        for a, b in (logical_combos if fn.startswith('logical') else combos):
            if cmp_like and not fn.startswith('logical') and a == 'A' and b == 1.5:
                b = 1.0
            if cmp_like and not fn.startswith('logical') and a == 1.5:
                a = 1.0
            cid = 'nd_%s_%s_%s' % (fn, a, b)
            r = rng_for(cid)
            lhs, rhs = _operand(r, a, fn), _operand(r, b, fn)
            rec = OrderedDict([('id', cid), ('module', 'nd'), ('fn', fn),
                               ('lhs', 'array' if isinstance(lhs, np.ndarray) else lhs),
                               ('rhs', 'array' if isinstance(rhs, np.ndarray) else rhs)])
            args = []
            for side, v in (('lhs', lhs), ('rhs', rhs)):
                if isinstance(v, np.ndarray):
                    FN_ARRAYS['%s/%s' % (cid, side)] = v
                    args.append(mx.nd.array(v))
                else:
                    args.append(v)
            out = getattr(mx.nd, fn)(*args)
            if isinstance(out, mx.nd.NDArray):
                rec['result'] = 'array'
                FN_ARRAYS['%s/out' % cid] = out.asnumpy()
            else:
                rec['result'] = jsonable(out)
                rec['result_type'] = type(out).__name__
            records.append(rec)
    # TypeError for unsupported operand types
    for fn, rhs in (('add', 'x'), ('maximum', [1, 2])):
        cid = 'nd_%s_typeerror' % fn
        try:
            getattr(mx.nd, fn)(mx.nd.ones((2,)), rhs)
            rec = OrderedDict([('id', cid), ('result', 'no error')])
        except TypeError as e:
            rec = OrderedDict([('id', cid), ('module', 'nd'), ('fn', fn), ('lhs', 'array'),
                               ('rhs', rhs), ('error_type', 'TypeError'), ('error', str(e))])
        records.append(rec)

    # Symbol functions: the graph they build (tojson) and its forward value
    sym_specs = [('maximum', 'S', 'S'), ('maximum', 'S', 0.25), ('maximum', 0.25, 'S'),
                 ('maximum', 3, 4), ('minimum', 'S', 'S'), ('minimum', 'S', 0.25),
                 ('minimum', -1, 'S'), ('minimum', 3, 4), ('pow', 'S', 'S'), ('pow', 'S', 2),
                 ('pow', 2, 'S'), ('pow', 2, 3), ('power', 'S', 3.0), ('power', 1.5, 'S')]
    for fn, a, b in sym_specs:
        cid = 'sym_%s_%s_%s' % (fn, a, b)
        r = rng_for(cid)
        rec = OrderedDict([('id', cid), ('module', 'sym'), ('fn', fn),
                           ('lhs', 'symbol' if a == 'S' else a),
                           ('rhs', 'symbol' if b == 'S' else b)])
        args, feed = [], {}
        for name, v in (('a', a), ('b', b)):
            if v == 'S':
                args.append(mx.sym.var(name))
                arr = (r.uniform(0.5, 2, (2, 3)) if fn.startswith('pow')
                       else r.uniform(-1, 1, (2, 3))).astype(F32)
                feed[name] = arr
                FN_ARRAYS['%s/%s' % (cid, name)] = arr
            else:
                args.append(v)
        with fresh_scopes():
            out = getattr(mx.sym, fn)(*args)
        if isinstance(out, mx.sym.Symbol):
            rec['result'] = 'symbol'
            nodes = json.loads(out.tojson())['nodes']
            rec['nodes'] = [OrderedDict([('op', n['op']), ('name', n['name']),
                                         ('attrs', n.get('attrs', {}))]) for n in nodes]
            rec['list_arguments'] = out.list_arguments()
            ex = out.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in feed.items()})
            FN_ARRAYS['%s/out' % cid] = ex.forward()[0].asnumpy()
        else:
            rec['result'] = jsonable(out)
            rec['result_type'] = type(out).__name__
        records.append(rec)
    return OrderedDict([('generator', GENERATOR), ('mxnet_version', mx.__version__),
                        ('cases', records)])


README = """# MXNet {version} golden fixtures: matrix, softmax, loss heads, dispatch functions

Produced by the real Apache MXNet {version} (CPU build, numpy 1.23) with
`tools/make_golden_matrix.py`; regenerate with
`tools/mxnet-oracle tools/make_golden_matrix.py` from the repository root (paths are
resolved relative to the script). Inputs come from `np.random.RandomState` seeded by the CRC32
of the case id, so the output is deterministic.

* `ops.json` + `ops.npz`: single-operator cases in the format of
  `tests/golden/foundation/ops.json` (see that README): the op is built as
  `mx.sym.<op>(name='op0', **params, **variables)` with one Variable per input named after
  the op's argument, or, for the variadic ops (`"variadic": true`: Concat, stack), with
  positional Variables `arg0, arg1, ...`; bound with `simple_bind(type_dict=input dtypes)`,
  run with `forward(is_train=True)` and `backward(head grads)` (heads are drawn in each
  output's dtype). npz keys `<id>/in/<name>`, `<id>/out<i>`, `<id>/head<i>`,
  `<id>/grad/<name>`. Extra keys: `input_dtypes`, `output_dtypes`, `output_names`
  (`list_outputs()`). `grads_not_written` lists the arguments whose gradient buffer MXNet
  leaves untouched (found by binding sentinel-filled grads). Loss heads (`loss: true`) ignore
  the head gradient.
* `infer.json`: `infer` holds `infer_shape`/`infer_shape_partial`/`infer_type` results (lists
  of arg/out/aux shapes or dtype names) or error texts (`error`, with timestamps masked, and
  the core `error_message`) for symbols built by the stored `code`; `names` holds
  `list_arguments`/`list_outputs`, op name and attrs of auto-named symbols (fresh
  NameManager).
* `functions.json` + `functions.npz`: `mx.nd.<fn>(lhs, rhs)` for the Python-level dispatch
  functions of `python/mxnet/ndarray/ndarray.py` (`add` ... `logical_xor`) on array/array
  ((2,3) with (1,3): broadcasting), array/number, number/array and number/number operands
  (npz `<id>/lhs`, `<id>/rhs`, `<id>/out`; Python results in `result`), their TypeErrors, and
  `mx.sym.<fn>` (`maximum`, `minimum`, `pow`, `power`) with the nodes of the graph they build
  and its forward value on inputs `<id>/a`, `<id>/b`.
"""


def main():
    print('mxnet', mx.__version__, 'numpy', np.__version__)
    os.makedirs(OUT, exist_ok=True)
    build_op_cases()
    write_json(os.path.join(OUT, 'ops.json'),
               OrderedDict([('generator', GENERATOR), ('mxnet_version', mx.__version__),
                            ('cases', CASES)]))
    np.savez_compressed(os.path.join(OUT, 'ops.npz'), **ARRAYS)
    infer = build_infer()
    write_json(os.path.join(OUT, 'infer.json'), infer)
    fns = build_functions()
    write_json(os.path.join(OUT, 'functions.json'), fns)
    np.savez_compressed(os.path.join(OUT, 'functions.npz'), **FN_ARRAYS)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README.format(version=mx.__version__))
    print('wrote %d op cases (%d arrays), %d infer records, %d name records, %d function cases '
          'to %s' % (len(CASES), len(ARRAYS), len(infer['infer']), len(infer['names']),
                     len(fns['cases']), os.path.relpath(OUT, ROOT)))


if __name__ == '__main__':
    main()
