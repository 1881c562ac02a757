"""Golden values for the indexing, shape, sorting and creation operators (neomx/ops/indexing.py,
neomx/ops/layout.py): forward values, gradients (random head gradients; recorded where MXNet
1.9.1 computes one), shape inference (complete and partial) and the errors of bad input.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_indexing.py

Writes ``tests/golden/indexing/cases.json`` (every array is small and stored as a list).
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import (U, err_info, fresh_scopes, golden_dir, jsonable, resolve_op, rng_for,
                            write_json)

import mxnet as mx


def A(*shape):
    return ('u', shape)


def I(values, dtype='float32'):
    return ('v', values, dtype)


# (id, op, [(input name, spec)], params, names of inputs to differentiate)
CASES = [
    ('take_clip', 'take', [('a', A(3, 4)), ('indices', I([0, 5, -1, 0]))], {}, ['a']),
    ('take_wrap_axis1', 'take', [('a', A(3, 4)), ('indices', I([0, 5, -1]))],
     {'axis': 1, 'mode': 'wrap'}, ['a']),
    ('take_raise', 'take', [('a', A(3, 4)), ('indices', I([0, 2, 2]))],
     {'mode': 'raise'}, ['a']),
    ('take_2d_idx', 'take', [('a', A(2, 3, 4)), ('indices', I([[0, 2], [2, 2]]))],
     {'axis': -2}, ['a']),
    ('take_float_idx', 'take', [('a', A(3, 4)), ('indices', I([0, 2.7, -1.5]))],
     {'axis': 1}, ['a']),
    ('take_int_idx', 'take', [('a', A(4, 2)), ('indices', I([3, 1, 3], 'int32'))], {}, ['a']),
    ('pick_clip', 'pick', [('data', A(3, 4)), ('index', I([0, 5, -1]))], {}, ['data']),
    ('pick_wrap', 'pick', [('data', A(3, 4)), ('index', I([0, 5, -1]))], {'mode': 'wrap'},
     ['data']),
    ('pick_axis0_keep', 'pick', [('data', A(3, 4)), ('index', I([[0, 1, 2, 1]]))],
     {'axis': 0, 'keepdims': True}, ['data']),
    ('pick_3d', 'pick', [('data', A(2, 3, 4)), ('index', I([[0, 1, 2, 3], [2, 2, 0, 1]]))],
     {'axis': 1}, ['data']),
    ('choose_element', 'choose_element_0index', [('data', A(3, 4)), ('index', I([0, 5, -1]))],
     {}, ['data']),
    ('fill_element', 'fill_element_0index',
     [('lhs', A(3, 4)), ('mhs', A(3)), ('rhs', I([0, 5, 2]))], {}, []),
    ('batch_take', 'batch_take', [('a', A(3, 4)), ('indices', I([0, 5, -1], 'int32'))], {}, []),
    ('gather_nd_elems', 'gather_nd', [('data', A(3, 4)), ('indices', I([[0, 2, 2], [1, 3, 2]]))],
     {}, ['data']),
    ('gather_nd_slices', 'gather_nd', [('data', A(2, 3, 4)), ('indices', I([[1, 0, 1]]))], {},
     ['data']),
    ('gather_nd_dup', 'gather_nd', [('data', A(3, 2)), ('indices', I([[0, 0], [1, 1]]))], {},
     ['data']),
    ('scatter_nd_elems', 'scatter_nd', [('data', A(2)), ('indices', I([[0, 1], [1, 0]]))],
     {'shape': (2, 2)}, ['data']),
    ('scatter_nd_rows', 'scatter_nd', [('data', A(2, 4)), ('indices', I([[2, 0]]))],
     {'shape': (3, 4)}, ['data']),
    ('sort_last', 'sort', [('data', A(3, 4))], {}, ['data']),
    ('sort_axis0_desc', 'sort', [('data', A(3, 4))], {'axis': 0, 'is_ascend': False}, ['data']),
    ('sort_flat', 'sort', [('data', A(2, 3))], {'axis': None}, ['data']),
    ('argsort_ties', 'argsort', [('data', I([[3, 1, 3, 1], [2, 2, 2, 0]]))], {}, []),
    ('argsort_desc_int', 'argsort', [('data', I([[3, 1, 3, 1], [2, 2, 2, 0]]))],
     {'is_ascend': False, 'dtype': 'int32', 'axis': 1}, []),
    ('argsort_flat', 'argsort', [('data', A(2, 3))], {'axis': None, 'dtype': 'int64'}, []),
    ('cumsum_flat', 'cumsum', [('a', A(2, 3))], {}, ['a']),
    ('cumsum_axis1', 'cumsum', [('a', A(2, 3, 2))], {'axis': 1}, ['a']),
    ('cumsum_int', 'cumsum', [('a', I([[1, 2], [3, 4]], 'int32'))], {'axis': 0}, []),
    ('cumsum_dtype', 'cumsum', [('a', A(4))], {'dtype': 'float64'}, []),
    ('sort_int', 'sort', [('data', I([[3, -1, 2], [7, 7, 0]], 'int32'))], {'is_ascend': False},
     []),
    ('take_int_data', 'take', [('a', I([[3, -1], [2, 7]], 'int64')), ('indices', I([1, 1, 0]))],
     {}, []),
    ('moments_int', 'moments', [('data', I([[1, 2, 4], [4, 4, 9]], 'int32'))], {'axes': (1,)},
     []),
    ('histogram_int', '_histogram', [('data', I(list(range(24)), 'int32'))],
     {'bin_cnt': 4, 'range': (0, 10)}, []),
    ('norm_l2', 'norm', [('data', A(3, 4))], {}, ['data']),
    ('norm_l1_axis_keep', 'norm', [('data', A(3, 4))], {'ord': 1, 'axis': 1, 'keepdims': True},
     ['data']),
    ('norm_axes', 'norm', [('data', A(2, 3, 4))], {'axis': (0, 2)}, ['data']),
    ('norm_out_dtype', 'norm', [('data', A(2, 3))], {'axis': -1, 'out_dtype': 'float64'}, []),
    ('moments_axis1', 'moments', [('data', A(3, 4))], {'axes': (1,)}, ['data']),
    ('moments_keep', 'moments', [('data', A(2, 3, 4))], {'axes': (0, 2), 'keepdims': True},
     ['data']),
    ('shape_array', 'shape_array', [('data', A(2, 3, 4))], {}, []),
    ('size_array', 'size_array', [('data', A(2, 3, 4))], {}, []),
    ('ravel', '_ravel_multi_index', [('data', I([[0, 2, 1], [1, 3, 0]]))], {'shape': (3, 4)}, []),
    ('unravel', '_unravel_index', [('data', I([5, 11, 13, 0]))], {'shape': (3, 4)}, []),
    ('unravel_3d', '_unravel_index', [('data', I([7, 23, 1, 0]))], {'shape': (2, 3, 4)}, []),
    ('histogram_cnt', '_histogram', [('data', I([0.1, 0.5, 0.9, 1.0, 2.0, -1.0, 0.33]))],
     {'bin_cnt': 3, 'range': (0, 1)}, []),
    ('histogram_bins', '_histogram', [('data', I([0.1, 0.5, 0.9, 1.0, 2.0, 0.25])),
                                      ('bins', I([0.0, 0.25, 0.5, 1.0]))], {}, []),
    ('slice_like_all', 'slice_like', [('data', A(3, 4)), ('shape_like', A(2, 3))], {}, ['data']),
    ('slice_like_axes', 'slice_like', [('data', A(3, 4, 5)), ('shape_like', A(2, 2, 2))],
     {'axes': (0, -1)}, ['data']),
    ('reshape_like', 'reshape_like', [('lhs', A(3, 4)), ('rhs', A(2, 6))], {}, ['lhs']),
    ('reshape_like_range', 'reshape_like', [('lhs', A(6, 2)), ('rhs', A(2, 3, 5))],
     {'lhs_begin': 0, 'lhs_end': 1, 'rhs_begin': 0, 'rhs_end': 2}, ['lhs']),
    ('broadcast_like', 'broadcast_like', [('lhs', A(1, 3)), ('rhs', A(2, 3))], {}, ['lhs']),
    ('broadcast_like_axes', 'broadcast_like', [('lhs', A(1, 3)), ('rhs', A(4, 5))],
     {'lhs_axes': (0,), 'rhs_axes': (1,)}, ['lhs']),
    ('broadcast_axis', 'broadcast_axis', [('data', A(1, 3, 1))], {'axis': (0, 2), 'size': (2, 4)},
     ['data']),
    ('swapaxis', 'SwapAxis', [('data', A(2, 3, 4))], {'dim1': 0, 'dim2': 2}, ['data']),
    ('reverse_0', 'reverse', [('data', A(3, 4))], {'axis': (0,)}, ['data']),
    ('reverse_01', 'reverse', [('data', A(2, 3, 2))], {'axis': (0, 2)}, ['data']),
    ('diag_2d', 'diag', [('data', A(3, 4))], {}, ['data']),
    ('diag_2d_k1', 'diag', [('data', A(3, 4))], {'k': 1}, ['data']),
    ('diag_2d_kneg', 'diag', [('data', A(4, 3))], {'k': -2}, ['data']),
    ('diag_1d', 'diag', [('data', A(3))], {'k': -1}, ['data']),
    ('diag_3d', 'diag', [('data', A(2, 3, 4))], {'k': 1, 'axis1': 1, 'axis2': 2}, ['data']),
    ('eye', '_eye', [], {'N': 3, 'M': 4, 'k': 1}, []),
    ('eye_int', '_eye', [], {'N': 2, 'dtype': 'int32'}, []),
    ('linspace', '_linspace', [], {'start': 0, 'stop': 1, 'num': 5}, []),
    ('linspace_open', '_linspace', [], {'start': -1, 'stop': 2, 'num': 4, 'endpoint': False}, []),
    ('arange', '_arange', [], {'start': 1, 'stop': 4, 'step': 0.5}, []),
    ('arange_repeat', '_arange', [], {'start': 3, 'repeat': 2, 'dtype': 'int32'}, []),
    ('depth_to_space', 'depth_to_space', [('data', A(1, 8, 2, 3))], {'block_size': 2}, ['data']),
    ('space_to_depth', 'space_to_depth', [('data', A(2, 1, 4, 6))], {'block_size': 2}, ['data']),
    ('split_v2_indices', '_split_v2', [('data', A(2, 5))], {'indices': (0, 1, 3), 'axis': 1},
     ['data']),
    ('split_v2_sections', '_split_v2', [('data', A(4, 3))], {'indices': (), 'sections': 2,
                                                            'axis': 0}, ['data']),
    ('split_v2_squeeze', '_split_v2', [('data', A(2, 3))],
     {'indices': (0, 1, 2), 'axis': 1, 'squeeze_axis': True}, ['data']),
    ('pad_constant', 'Pad', [('data', A(1, 2, 3, 4))],
     {'mode': 'constant', 'pad_width': (0, 0, 0, 0, 1, 2, 2, 1), 'constant_value': 0.5},
     ['data']),
    ('pad_edge', 'Pad', [('data', A(1, 2, 3, 4))],
     {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 2, 1, 1, 2)}, ['data']),
    ('pad_reflect', 'Pad', [('data', A(1, 1, 3, 4))],
     {'mode': 'reflect', 'pad_width': (0, 0, 0, 0, 2, 1, 1, 2)}, ['data']),
    ('pad_5d', 'Pad', [('data', A(1, 1, 2, 2, 3))],
     {'mode': 'constant', 'pad_width': (0, 0, 0, 0, 1, 0, 0, 1, 1, 1)}, ['data']),
    ('crop_hw', 'Crop', [('data', A(1, 2, 5, 6))], {'num_args': 1, 'h_w': (2, 3),
                                                   'offset': (1, 2)}, ['data']),
    ('crop_center', 'Crop', [('data', A(1, 1, 5, 6))], {'num_args': 1, 'h_w': (2, 3),
                                                       'center_crop': True}, ['data']),
    ('crop_like', 'Crop', [('data', A(1, 2, 5, 6)), ('crop_like', A(1, 2, 3, 3))],
     {'num_args': 2, 'center_crop': True}, ['data']),
    ('im2col', 'im2col', [('data', A(1, 2, 5, 5))],
     {'kernel': (2, 3), 'stride': (2, 1), 'pad': (1, 0), 'dilate': (1, 2)}, ['data']),
    ('im2col_1d', 'im2col', [('data', A(2, 2, 6))], {'kernel': (3,), 'stride': (2,)}, ['data']),
    ('col2im', 'col2im', [('data', A(1, 8, 20))],
     {'output_size': (4, 5), 'kernel': (2, 2), 'pad': (1, 0), 'stride': (1, 1)}, ['data']),
]

# symbolic shape inference: (id, op, {input: shape}, params); 0 = unknown dim, None = unknown
SHAPES = [
    ('take', 'take', {'a': (3, 4), 'indices': (2, 5)}, {'axis': 1}),
    ('take_partial', 'take', {'a': (0, 4), 'indices': (2,)}, {}),
    ('take_unknown_a', 'take', {'a': None, 'indices': (2,)}, {}),
    ('pick_partial', 'pick', {'data': (0, 4), 'index': None}, {'axis': 1}),
    ('slice_like_partial', 'slice_like', {'data': (5, 0), 'shape_like': (2, 3)}, {}),
    ('slice_like_unknown', 'slice_like', {'data': None, 'shape_like': (2, 3)}, {}),
    ('broadcast_like_unknown', 'broadcast_like', {'lhs': None, 'rhs': (4, 6)}, {}),
    ('reshape_like_unknown', 'reshape_like', {'lhs': None, 'rhs': (4, 6)}, {}),
    ('swapaxis_partial', 'SwapAxis', {'data': (0, 3, 4)}, {'dim1': 0, 'dim2': 2}),
    ('reverse_partial', 'reverse', {'data': (0, 3)}, {'axis': (0,)}),
    ('sort_partial', 'sort', {'data': (0, 3)}, {}),
    ('cumsum_partial', 'cumsum', {'a': (0, 3)}, {'axis': 1}),
    ('norm_partial', 'norm', {'data': (0, 3)}, {'axis': 1}),
    ('gather_nd_partial', 'gather_nd', {'data': (0, 4, 5), 'indices': (2, 6)}, {}),
    ('d2s_partial', 'depth_to_space', {'data': (0, 12, 2, 3)}, {'block_size': 2}),
    ('pad_partial', 'Pad', {'data': (0, 2, 3, 4)},
     {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 1, 1, 2, 2)}),
    ('diag_partial', 'diag', {'data': (0, 6)}, {}),
    ('broadcast_axis_partial', 'broadcast_axis', {'data': (1, 0)}, {'axis': (0,), 'size': (3,)}),
    ('pick', 'pick', {'data': (3, 4, 5), 'index': None}, {'axis': 1}),
    ('pick_keep', 'pick', {'data': (3, 4), 'index': None}, {'keepdims': True}),
    ('choose_element', 'choose_element_0index', {'data': (3, 4), 'index': None}, {}),
    ('gather_nd', 'gather_nd', {'data': (3, 4, 5), 'indices': (2, 6)}, {}),
    ('scatter_nd', 'scatter_nd', {'data': (6,), 'indices': (2, 6)}, {'shape': (3, 4)}),
    ('sort_flat', 'sort', {'data': (3, 4)}, {'axis': None}),
    ('cumsum_flat', 'cumsum', {'a': (3, 4)}, {}),
    ('norm_keep', 'norm', {'data': (3, 4, 5)}, {'axis': (1, 2), 'keepdims': True}),
    ('moments', 'moments', {'data': (3, 4, 5)}, {'axes': (1,)}),
    ('shape_array', 'shape_array', {'data': (3, 4, 5)}, {}),
    ('unravel', '_unravel_index', {'data': (7,)}, {'shape': (3, 4)}),
    ('ravel', '_ravel_multi_index', {'data': (2, 7)}, {'shape': (3, 4)}),
    ('slice_like', 'slice_like', {'data': (5, 6), 'shape_like': (2, 3)}, {'axes': (1,)}),
    ('reshape_like', 'reshape_like', {'lhs': (4, 6), 'rhs': (2, 2, 6)}, {}),
    ('broadcast_like', 'broadcast_like', {'lhs': (1, 6), 'rhs': (4, 6)}, {}),
    ('broadcast_axis', 'broadcast_axis', {'data': (1, 6)}, {'axis': (0,), 'size': (3,)}),
    ('swapaxis', 'SwapAxis', {'data': (2, 3, 4)}, {'dim1': 1, 'dim2': 2}),
    ('diag', 'diag', {'data': (4, 6)}, {'k': 2}),
    ('diag_1d', 'diag', {'data': (4,)}, {'k': -1}),
    ('d2s', 'depth_to_space', {'data': (1, 12, 2, 3)}, {'block_size': 2}),
    ('s2d', 'space_to_depth', {'data': (1, 3, 4, 6)}, {'block_size': 2}),
    ('split_v2', '_split_v2', {'data': (4, 7)}, {'indices': (0, 2, 5), 'axis': 1}),
    ('pad', 'Pad', {'data': (1, 2, 3, 4)}, {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 1, 1, 2, 2)}),
    ('crop', 'Crop', {'data': (2, 3, 8, 8)}, {'num_args': 1, 'h_w': (4, 5)}),
    ('im2col', 'im2col', {'data': (2, 3, 8, 8)}, {'kernel': (3, 3), 'stride': (2, 2)}),
    ('col2im', 'col2im', {'data': (2, 27, 9)}, {'output_size': (7, 7), 'kernel': (3, 3),
                                                'stride': (2, 2)}),
    ('eye', '_eye', {}, {'N': 3}),
    ('arange', '_arange', {}, {'start': 0, 'stop': 7, 'step': 2, 'repeat': 3}),
    ('linspace', '_linspace', {}, {'start': 0, 'stop': 7, 'num': 9}),
]

# symbolic type inference: (id, op, {input: dtype or None}, params)
TYPES = [
    ('take_int_idx', 'take', {'a': 'float64', 'indices': 'int32'}, {}),
    ('take_no_idx_type', 'take', {'a': 'float16', 'indices': None}, {}),
    ('pick', 'pick', {'data': 'float64', 'index': None}, {}),
    ('gather_nd', 'gather_nd', {'data': 'int32', 'indices': 'int64'}, {}),
    ('scatter_nd', 'scatter_nd', {'data': 'float64', 'indices': None}, {'shape': (2, 2)}),
    ('argsort', 'argsort', {'data': 'float64'}, {'dtype': 'int32'}),
    ('sort', 'sort', {'data': 'int64'}, {}),
    ('cumsum', 'cumsum', {'a': 'int32'}, {'dtype': 'float64'}),
    ('norm', 'norm', {'data': 'float64'}, {}),
    ('moments', 'moments', {'data': 'float64'}, {'axes': (0,)}),
    ('shape_array', 'shape_array', {'data': 'float16'}, {}),
    ('size_array', 'size_array', {'data': 'int8'}, {}),
    ('histogram', '_histogram', {'data': 'float64'}, {'bin_cnt': 3, 'range': (0, 1)}),
    ('slice_like', 'slice_like', {'data': 'float64', 'shape_like': 'int32'}, {}),
    ('reshape_like', 'reshape_like', {'lhs': 'float64', 'rhs': 'int32'}, {}),
    ('broadcast_like', 'broadcast_like', {'lhs': 'int32', 'rhs': 'float32'}, {}),
    ('eye', '_eye', {}, {'N': 2, 'dtype': 'int64'}),
    ('arange', '_arange', {}, {'start': 2, 'dtype': 'float64'}),
    ('ravel', '_ravel_multi_index', {'data': 'int32'}, {'shape': (2, 2)}),
    ('unravel', '_unravel_index', {'data': 'float64'}, {'shape': (2, 2)}),
    ('d2s', 'depth_to_space', {'data': 'float64'}, {'block_size': 2}),
    ('pad', 'Pad', {'data': 'float64'}, {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 1, 1, 1, 1)}),
]

# graphs whose JSON neomx must write byte for byte (code run with ``mx`` and ``x``, ``i``)
JSON = [
    "mx.sym.take(x, i, axis=1, mode='wrap')",
    "mx.sym.pick(x, i, keepdims=True, axis=0)",
    "mx.sym.sort(mx.sym.argsort(x, axis=None, dtype='int32'), is_ascend=False)",
    "mx.sym.norm(x, ord=1, axis=(0, 1), keepdims=True)",
    "mx.sym.broadcast_like(x, i, lhs_axes=(0,), rhs_axes=(1,))",
    "mx.sym.Pad(x, mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 2, 2), constant_value=1.5)",
    "mx.sym.flip(mx.sym.swapaxes(x, dim1=0, dim2=1), axis=0)",
    "mx.sym.cumsum(mx.sym.diag(x, k=-1), axis=0)",
    "mx.sym.moments(x, axes=(1,))",
    "mx.sym.im2col(x, kernel=(2, 2), stride=(1, 2))",
    "mx.sym.Crop(x, i, num_args=2, center_crop=True)",
    "mx.sym.gather_nd(x, i) + mx.sym.scatter_nd(x, i, shape=(2, 3))",
]

# shape inference through a graph: ``elemwise_add(<code on x>, y)`` with only y's shape given
# (which operators infer their input back from their output, which fail on an unknown input)
BACK_SHAPES = [
    ('reverse', "mx.sym.reverse(x, axis=0)", (3, 4)),
    ('cumsum', "mx.sym.cumsum(x, axis=0)", (3, 4)),
    ('swapaxes', "mx.sym.swapaxes(x, dim1=0, dim2=1)", (3, 4)),
    ('depth_to_space', "mx.sym.depth_to_space(x, 2)", (1, 2, 4, 4)),
    ('space_to_depth', "mx.sym.space_to_depth(x, 2)", (1, 8, 2, 2)),
    ('sort', "mx.sym.sort(x)", (3, 4)),
    ('argsort', "mx.sym.argsort(x)", (3, 4)),
    ('pad', "mx.sym.pad(x, mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 1, 1))", (1, 1, 4, 4)),
    ('diag', "mx.sym.diag(x)", (3,)),
    ('broadcast_axis', "mx.sym.broadcast_axis(x, axis=0, size=3)", (3, 4)),
    ('im2col', "mx.sym.im2col(x, kernel=(2, 2))", (1, 4, 9)),
    ('crop', "mx.sym.Crop(x, num_args=1, h_w=(2, 2))", (1, 1, 2, 2)),
    ('moments', "mx.sym.moments(x, axes=(1,))[0]", (3,)),
    ('norm', "mx.sym.norm(x, axis=1)", (3,)),
    ('shape_array', "mx.sym.shape_array(x)", (2,)),
]

# bad input: (id, op, [(name, spec)], params)
ERRORS = [
    ('take_raise_oob', 'take', [('a', A(3, 4)), ('indices', I([0, 5]))], {'mode': 'raise'}),
    ('take_raise_neg', 'take', [('a', A(3, 4)), ('indices', I([0, -1]))], {'mode': 'raise'}),
    ('take_bad_mode', 'take', [('a', A(3, 4)), ('indices', I([0]))], {'mode': 'foo'}),
    ('take_bad_axis', 'take', [('a', A(3, 4)), ('indices', I([0]))], {'axis': 2}),
    ('pick_axis_none', 'pick', [('data', A(3, 4)), ('index', I([0, 1, 2]))], {'axis': None}),
    ('pick_bad_mode', 'pick', [('data', A(3, 4)), ('index', I([0, 1, 2]))], {'mode': 'raise'}),
    ('batch_take_float', 'batch_take', [('a', A(3, 4)), ('indices', I([0, 1, 2]))], {}),
    ('sort_bad_axis', 'sort', [('data', A(3, 4))], {'axis': 3}),
    ('argsort_bad_dtype', 'argsort', [('data', A(3, 4))], {'dtype': 'int8'}),
    ('norm_ord3', 'norm', [('data', A(3, 4))], {'ord': 3}),
    ('moments_no_axes', 'moments', [('data', A(3, 4))], {}),
    ('broadcast_axis_not1', 'broadcast_axis', [('data', A(2, 3))], {'axis': (0,), 'size': (3,)}),
    ('s2d_not_multiple', 'space_to_depth', [('data', A(1, 1, 2, 4))], {'block_size': 3}),
    ('d2s_not_multiple', 'depth_to_space', [('data', A(1, 3, 2, 2))], {'block_size': 2}),
    ('pad_3d', 'Pad', [('data', A(2, 3, 4))],
     {'mode': 'constant', 'pad_width': (0, 0, 0, 0, 1, 1)}),
    ('pad_first_axes', 'Pad', [('data', A(1, 1, 2, 2))],
     {'mode': 'constant', 'pad_width': (1, 0, 0, 0, 1, 1, 1, 1)}),
    ('pad_bad_mode', 'Pad', [('data', A(1, 1, 2, 2))],
     {'mode': 'wrap', 'pad_width': (0, 0, 0, 0, 1, 1, 1, 1)}),
    ('reshape_like_size', 'reshape_like', [('lhs', A(3, 4)), ('rhs', A(5, 2))], {}),
    ('cumsum_bad_dtype', 'cumsum', [('a', A(3))], {'dtype': 'uint8'}),
    ('cumsum_neg_axis', 'cumsum', [('a', A(2, 3))], {'axis': -1}),
    ('cumsum_axis_oob', 'cumsum', [('a', A(2, 3))], {'axis': 2}),
    ('flip_neg_axis', 'reverse', [('data', A(2, 3))], {'axis': (-1,)}),
    ('broadcast_axis_neg', 'broadcast_axis', [('data', A(2, 1))], {'axis': (-1,), 'size': (3,)}),
    ('swapaxis_oob', 'SwapAxis', [('data', A(2, 3))], {'dim1': 2, 'dim2': 0}),
    ('broadcast_like_ndim', 'broadcast_like', [('lhs', A(1, 3)), ('rhs', A(2, 2, 3))], {}),
    ('broadcast_like_bad', 'broadcast_like', [('lhs', A(2, 3)), ('rhs', A(4, 3))], {}),
    ('slice_like_big', 'slice_like', [('data', A(2, 3)), ('shape_like', A(4, 3))], {}),
    ('slice_like_ndim', 'slice_like', [('data', A(2, 3)), ('shape_like', A(1))], {}),
    ('slice_like_axis_oob', 'slice_like', [('data', A(2, 3)), ('shape_like', A(1, 1))],
     {'axes': (2,)}),
    ('gather_nd_too_many', 'gather_nd', [('data', A(2, 3)), ('indices', I([[0], [0], [0]]))], {}),
    ('scatter_nd_bad', 'scatter_nd', [('data', A(3)), ('indices', I([[0, 1]]))], {'shape': (2, 2)}),
    ('pick_bad_index', 'pick', [('data', A(2, 3, 4)), ('index', I([0, 1]))], {'axis': 1}),
    ('unravel_no_shape', '_unravel_index', [('data', I([1]))], {}),
    ('ravel_bad_rows', '_ravel_multi_index', [('data', I([[1], [2]]))], {'shape': (2, 2, 2)}),
    ('s2d_3d', 'space_to_depth', [('data', A(2, 2, 2))], {'block_size': 2}),
    ('s2d_block0', 'space_to_depth', [('data', A(1, 1, 2, 2))], {'block_size': 0}),
    ('pad_reflect_big', 'Pad', [('data', A(1, 1, 2, 2))],
     {'mode': 'reflect', 'pad_width': (0, 0, 0, 0, 2, 2, 2, 2)}),
    ('pad_width_len', 'Pad', [('data', A(1, 1, 2, 2))],
     {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 2, 2)}),
    ('pad_int', 'Pad', [('data', I([[[[1, 2]]]], 'int32'))],
     {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 1, 1, 1, 1)}),
    ('im2col_int', 'im2col', [('data', I([[[[1, 2], [3, 4]]]], 'int32'))], {'kernel': (1, 1)}),
    ('im2col_big_kernel', 'im2col', [('data', A(1, 1, 2, 2))], {'kernel': (3, 3)}),
    ('col2im_channels', 'col2im', [('data', A(1, 5, 4))], {'output_size': (3, 3),
                                                          'kernel': (2, 2)}),
    ('crop_too_high', 'Crop', [('data', A(1, 1, 2, 2))], {'h_w': (3, 3), 'num_args': 1}),
    ('crop_too_wide', 'Crop', [('data', A(1, 1, 4, 2))], {'h_w': (3, 3), 'num_args': 1}),
    ('crop_offset_y', 'Crop', [('data', A(1, 1, 4, 4))], {'h_w': (3, 3), 'offset': (2, 2),
                                                         'num_args': 1}),
    ('crop_offset_x', 'Crop', [('data', A(1, 1, 4, 4))], {'h_w': (3, 3), 'offset': (0, 2),
                                                         'num_args': 1}),
    ('diag_missing', 'diag', [('data', A(3, 4))], {'k': 5}),
    ('diag_same_axes', 'diag', [('data', A(2, 3, 4))], {'axis1': 1, 'axis2': 1}),
    ('sort_float16', 'sort', [('data', I([1, 2], 'float16'))], {}),
    ('argsort_float16', 'argsort', [('data', I([1, 2], 'float16'))], {}),
    ('linspace_negative', '_linspace', [], {'start': 0, 'stop': 1, 'num': -1}),
    ('arange_empty', '_arange', [], {'start': 1, 'stop': 1}),
    ('arange_step0', '_arange', [], {'start': 1, 'stop': 3, 'step': 0}),
    ('reshape_like_range', 'reshape_like', [('lhs', A(2, 3, 4)), ('rhs', A(2, 3, 4))],
     {'lhs_begin': 2, 'lhs_end': 1}),
    ('histogram_no_range', '_histogram', [('data', A(5))], {'bin_cnt': 4}),
]


def make_input(spec, key):
    if spec[0] == 'u':
        return U(rng_for(key), spec[1])
    return np.array(spec[1], dtype=spec[2])


def nd_call(op, arrays, params):
    f = getattr(mx.nd, op, None) or getattr(mx.nd._internal, op)
    return f(*arrays, **params)


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def record_case(cid, op, inputs, params, grad_names):
    arrays = OrderedDict((n, make_input(spec, cid + '/' + n)) for n, spec in inputs)
    nds = OrderedDict((n, mx.nd.array(a, dtype=a.dtype)) for n, a in arrays.items())
    for n in grad_names:
        nds[n].attach_grad()
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('inputs', [[n, a.tolist(), a.dtype.name] for n, a in arrays.items()])])
    try:
        with mx.autograd.record():
            outs = as_list(nd_call(op, list(nds.values()), params))
    except mx.base.MXNetError as e:  # MXNet 1.9.1's sort cannot be recorded
        rec['grad_error'] = err_info(e)['error_message'][:300]
        outs, grad_names = as_list(nd_call(op, list(nds.values()), params)), []
    try:
        for o in outs:
            o.wait_to_read()
    except mx.base.MXNetError as e:  # a kernel MXNet 1.9.1 lacks for these types
        rec['forward_error'] = err_info(e)['error_message'][:300]
        print('no forward:', cid, rec['forward_error'][-120:])
        return rec
    rec['outputs'] = [[o.asnumpy().tolist(), o.dtype.__name__ if isinstance(o.dtype, type)
                       else str(o.dtype)] for o in outs]
    rec['out_shapes'] = [list(o.shape) for o in outs]
    if grad_names:
        r = rng_for(cid + '/heads')
        heads = [mx.nd.array(U(r, o.shape)) for o in outs]
        rec['heads'] = [h.asnumpy().tolist() for h in heads]
        try:
            mx.autograd.backward(outs, heads)
            mx.nd.waitall()
            rec['grads'] = OrderedDict((n, nds[n].grad.asnumpy().tolist()) for n in grad_names)
        except mx.base.MXNetError as e:
            rec['grad_error'] = err_info(e)['error_message'][:300]
    return rec


def record_shape(cid, op, shapes, params):
    with fresh_scopes():
        vs = OrderedDict((n, mx.sym.Variable(n)) for n in shapes)
        if op == 'Crop':  # variadic: inputs by position
            sym = resolve_op(op)(*vs.values(), name='op0', **params)
        else:
            sym = resolve_op(op)(name='op0', **vs, **params)
    given = {n: s for n, s in shapes.items() if s is not None}
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('given', jsonable(shapes)), ('arg_names', sym.list_arguments())])
    try:
        args, outs, _ = sym.infer_shape_partial(**given)
    except mx.base.MXNetError as e:
        rec['error'] = err_info(e)['error_message'][-300:]
        return rec
    rec['args'], rec['outs'] = jsonable(args), jsonable(outs)
    return rec


def record_type(cid, op, types, params):
    with fresh_scopes():
        vs = OrderedDict((n, mx.sym.Variable(n)) for n in types)
        sym = resolve_op(op)(name='op0', **vs, **params)
    given = {n: t for n, t in types.items() if t is not None}
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('given', types)])
    try:
        args, outs, _ = sym.infer_type_partial(**given)
    except mx.base.MXNetError as e:
        rec['error'] = err_info(e)['error_message'][-300:]
        return rec
    name = lambda t: None if t is None else np.dtype(t).name  # noqa: E731
    rec['args'], rec['outs'] = [name(t) for t in args], [name(t) for t in outs]
    return rec


def record_json(code):
    with fresh_scopes():
        ns = {'mx': mx, 'x': mx.sym.var('x'), 'i': mx.sym.var('i')}
        sym = eval(code, ns)
    return OrderedDict([('code', code), ('json', sym.tojson())])


def record_back_shape(cid, code, yshape):
    with fresh_scopes():
        x, y = mx.sym.var('x'), mx.sym.var('y')
        sym = mx.sym.elemwise_add(eval(code, {'mx': mx, 'x': x}), y)
    rec = OrderedDict([('id', cid), ('code', code), ('y', list(yshape))])
    try:
        args, outs, _ = sym.infer_shape_partial(y=yshape)
    except mx.base.MXNetError as e:
        rec['error'] = err_info(e)['error_message'][-300:]
        return rec
    rec['args'], rec['outs'] = jsonable(args), jsonable(outs)
    return rec


def record_error(cid, op, inputs, params):
    arrays = [mx.nd.array(make_input(spec, cid + '/' + n), dtype=make_input(spec, 'x').dtype)
              for n, spec in inputs]
    rec = OrderedDict([('id', cid), ('op', op), ('params', jsonable(params)),
                       ('inputs', [[n, make_input(spec, cid + '/' + n).tolist(),
                                    make_input(spec, 'x').dtype.name] for n, spec in inputs])])
    try:
        outs = as_list(nd_call(op, arrays, params))
        for o in outs:
            o.wait_to_read()
        rec['no_error'] = True
    except mx.base.MXNetError as e:
        rec.update(err_info(e, bases=(ValueError, TypeError, IndexError)))
    return rec


def main():
    out = OrderedDict([('mxnet_version', mx.__version__),
                       ('generator', 'tools/make_golden_indexing.py'),
                       ('cases', [record_case(*c) for c in CASES]),
                       ('shapes', [record_shape(*c) for c in SHAPES]),
                       ('back_shapes', [record_back_shape(*c) for c in BACK_SHAPES]),
                       ('types', [record_type(*c) for c in TYPES]),
                       ('json', [record_json(c) for c in JSON]),
                       ('errors', [record_error(*c) for c in ERRORS])])
    d = golden_dir('indexing')
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, 'cases.json'), out)
    print('wrote', d)


if __name__ == '__main__':
    main()
