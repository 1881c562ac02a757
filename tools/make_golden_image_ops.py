"""Golden values for MXNet 1.9.1's image operators (``mx.nd.image`` / ``mx.sym.image``,
``neomx/ops/image_ops.py``): forward values of the deterministic operators (and of the random
ones with a degenerate range: ``min_factor == max_factor``), head-gradients where MXNet has a
gradient, shape/type inference, symbol JSON and error messages.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_image_ops.py

Writes ``tests/golden/image_ops/image_ops.json``.
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import err_info, fresh_scopes, golden_dir, rng_for, write_json

import mxnet as mx
from mxnet import autograd

nd = mx.nd


def images():
    """Named inputs: (array, dtype)."""
    r = rng_for('image_ops')
    u8 = r.randint(0, 256, (6, 7, 3)).astype(np.uint8)
    return OrderedDict([
        ('u8', (u8, 'uint8')),
        ('f32', (u8.astype(np.float32), 'float32')),
        ('f64', (r.uniform(0, 255, (5, 4, 3)), 'float64')),
        ('gray', (r.randint(0, 256, (5, 6, 1)).astype(np.uint8), 'uint8')),
        ('grayf', (r.uniform(0, 255, (5, 6, 1)).astype(np.float32), 'float32')),
        ('batch', (r.randint(0, 256, (2, 6, 7, 3)).astype(np.uint8), 'uint8')),
        ('batchf', (r.uniform(0, 255, (2, 5, 8, 3)).astype(np.float32), 'float32')),
        ('big', (r.randint(0, 256, (17, 23, 3)).astype(np.uint8), 'uint8')),
        ('bigf', (r.uniform(0, 255, (17, 23, 3)).astype(np.float32), 'float32')),
        ('chw', (r.uniform(0, 1, (3, 4, 5)).astype(np.float32), 'float32')),
        ('chw1', (r.uniform(0, 1, (1, 4, 5)).astype(np.float32), 'float32')),
        ('nchw', (r.uniform(0, 1, (2, 3, 4, 5)).astype(np.float32), 'float32')),
        ('chw64', (r.uniform(0, 1, (3, 2, 3)), 'float64')),
        ('chwu8', (r.randint(0, 256, (3, 4, 5)).astype(np.uint8), 'uint8')),
        ('i32', (r.randint(0, 256, (4, 5, 3)).astype(np.int32), 'int32')),
    # (even widths: MXNet's flip_left_right leaves the middle column of odd widths unwritten)
    ('even', (r.randint(0, 256, (5, 6, 3)).astype(np.uint8), 'uint8')),
    ('evenf', (r.uniform(0, 255, (5, 6, 3)).astype(np.float32), 'float32')),
    ])


# (id, op, params, input name, differentiable per MXNet)
CASES = [
    ('to_tensor_u8', 'to_tensor', {}, 'u8', False),
    ('to_tensor_f32', 'to_tensor', {}, 'f32', False),
    ('to_tensor_f64', 'to_tensor', {}, 'f64', False),
    ('to_tensor_batch', 'to_tensor', {}, 'batch', False),
    ('to_tensor_i32', 'to_tensor', {}, 'i32', False),
    ('normalize', 'normalize', {'mean': (0.1, 0.2, 0.3), 'std': (0.5, 2.0, 3.0)}, 'chw', True),
    ('normalize_scalar', 'normalize', {'mean': 0.5, 'std': 2.0}, 'chw', True),
    ('normalize_one', 'normalize', {'mean': (0.25,), 'std': (4.0,)}, 'chw1', True),
    ('normalize_batch', 'normalize', {'mean': (0.1, 0.2, 0.3), 'std': (0.5, 2.0, 3.0)}, 'nchw', True),
    ('normalize_f64', 'normalize', {'mean': (0.1, 0.2, 0.3), 'std': (0.5, 2.0, 3.0)}, 'chw64', True),
    ('normalize_u8', 'normalize', {'mean': (10, 20, 30), 'std': (2.0, 3.0, 4.0)}, 'chwu8', False),
    ('resize_wh', 'resize', {'size': (4, 3)}, 'u8', False),
    ('resize_up', 'resize', {'size': (11, 9)}, 'u8', False),
    ('resize_int', 'resize', {'size': 5}, 'u8', False),
    ('resize_keep', 'resize', {'size': 4, 'keep_ratio': True}, 'u8', False),
    ('resize_keep_tall', 'resize', {'size': 3, 'keep_ratio': True}, 'f64', False),
    ('resize_f32', 'resize', {'size': (4, 3)}, 'f32', False),
    ('resize_f32_up', 'resize', {'size': (10, 13)}, 'bigf', False),
    ('resize_batch', 'resize', {'size': (3, 4)}, 'batch', False),
    ('resize_nearest', 'resize', {'size': (10, 8), 'interp': 0}, 'big', False),
    ('resize_nearest_down', 'resize', {'size': (10, 8), 'interp': 0}, 'big', False),
    ('resize_linear_down', 'resize', {'size': (10, 8), 'interp': 1}, 'big', False),
    ('resize_cubic', 'resize', {'size': (30, 20), 'interp': 2}, 'big', False),
    ('resize_area', 'resize', {'size': (10, 8), 'interp': 3}, 'big', False),
    ('resize_area_f', 'resize', {'size': (10, 8), 'interp': 3}, 'bigf', False),
    ('resize_lanczos', 'resize', {'size': (30, 20), 'interp': 4}, 'big', False),
    ('resize_gray', 'resize', {'size': (3, 4)}, 'gray', False),
    ('crop', 'crop', {'x': 1, 'y': 2, 'width': 3, 'height': 2}, 'u8', False),
    ('crop_f32', 'crop', {'x': 0, 'y': 0, 'width': 7, 'height': 6}, 'f32', True),
    ('crop_f32_part', 'crop', {'x': 2, 'y': 1, 'width': 4, 'height': 3}, 'f32', True),
    ('crop_batch', 'crop', {'x': 1, 'y': 2, 'width': 3, 'height': 2}, 'batch', False),
    ('flip_left_right', 'flip_left_right', {}, 'even', False),
    ('flip_left_right_f', 'flip_left_right', {}, 'evenf', True),
    ('flip_left_right_gray', 'flip_left_right', {}, 'gray', False),
    ('flip_top_bottom', 'flip_top_bottom', {}, 'u8', True),
    ('flip_top_bottom_f', 'flip_top_bottom', {}, 'f32', True),
    ('brightness_u8', 'random_brightness', {'min_factor': 1.5, 'max_factor': 1.5}, 'u8', False),
    ('brightness_dark', 'random_brightness', {'min_factor': 0.3, 'max_factor': 0.3}, 'u8', False),
    ('brightness_f', 'random_brightness', {'min_factor': 1.5, 'max_factor': 1.5}, 'f32', True),
    ('brightness_gray', 'random_brightness', {'min_factor': 0.7, 'max_factor': 0.7}, 'grayf', False),
    ('brightness_i32', 'random_brightness', {'min_factor': 1.3, 'max_factor': 1.3}, 'i32', False),
    ('contrast_u8', 'random_contrast', {'min_factor': 1.5, 'max_factor': 1.5}, 'u8', False),
    ('contrast_low', 'random_contrast', {'min_factor': 0.4, 'max_factor': 0.4}, 'u8', False),
    ('contrast_f', 'random_contrast', {'min_factor': 1.5, 'max_factor': 1.5}, 'f32', True),
    ('contrast_f64', 'random_contrast', {'min_factor': 0.6, 'max_factor': 0.6}, 'f64', False),
    ('contrast_gray', 'random_contrast', {'min_factor': 1.5, 'max_factor': 1.5}, 'grayf', False),
    ('saturation_u8', 'random_saturation', {'min_factor': 1.5, 'max_factor': 1.5}, 'u8', False),
    ('saturation_low', 'random_saturation', {'min_factor': 0.3, 'max_factor': 0.3}, 'u8', False),
    ('saturation_f', 'random_saturation', {'min_factor': 1.5, 'max_factor': 1.5}, 'f32', True),
    ('saturation_gray', 'random_saturation', {'min_factor': 1.5, 'max_factor': 1.5}, 'grayf', False),
    ('hue_f', 'random_hue', {'min_factor': 0.3, 'max_factor': 0.3}, 'f32', True),
    ('hue_most', 'random_hue', {'min_factor': 0.95, 'max_factor': 0.95}, 'f32', False),
    ('hue_u8', 'random_hue', {'min_factor': 0.1, 'max_factor': 0.1}, 'u8', False),
    ('hue_f64', 'random_hue', {'min_factor': 0.2, 'max_factor': 0.2}, 'f64', False),
    ('hue_big', 'random_hue', {'min_factor': 0.7, 'max_factor': 0.7}, 'bigf', False),
    ('adjust_lighting', 'adjust_lighting', {'alpha': (0.1, 0.2, 0.3)}, 'f32', True),
    ('adjust_lighting_u8', 'adjust_lighting', {'alpha': (-0.5, 0.2, 1.3)}, 'u8', False),
    ('adjust_lighting_f64', 'adjust_lighting', {'alpha': (0.02, -0.3, 0.1)}, 'f64', False),
    ('random_lighting_0', 'random_lighting', {'alpha_std': 0.0}, 'f32', True),
    ('jitter_zero_but_b', 'random_color_jitter',
     {'brightness': 1e-30, 'contrast': 0, 'saturation': 0, 'hue': 0}, 'f32', True),
]

# (id, op, params, input shape, dtype)
ERRORS = [
    ('to_tensor_2d', 'to_tensor', {}, (4, 5), 'uint8'),
    ('to_tensor_5d', 'to_tensor', {}, (1, 1, 2, 2, 3), 'uint8'),
    ('normalize_mean', 'normalize', {'mean': (0.5, 1), 'std': 2}, (3, 2, 2), 'float32'),
    ('normalize_std', 'normalize', {'mean': 0.5, 'std': (1, 2)}, (3, 2, 2), 'float32'),
    ('normalize_c4', 'normalize', {}, (4, 2, 2), 'float32'),
    ('normalize_default', 'normalize', {}, (3, 2, 2), 'float32'),
    ('normalize_2d', 'normalize', {}, (2, 2), 'float32'),
    ('resize_nosize', 'resize', {}, (4, 5, 3), 'uint8'),
    ('resize_3', 'resize', {'size': (3, 2, 1)}, (4, 5, 3), 'uint8'),
    ('resize_w0', 'resize', {'size': (0, 2)}, (4, 5, 3), 'uint8'),
    ('resize_h0', 'resize', {'size': (2, 0)}, (4, 5, 3), 'uint8'),
    ('resize_2d', 'resize', {'size': (3, 2)}, (4, 5), 'uint8'),
    ('crop_x', 'crop', {'x': 4, 'y': 1, 'width': 2, 'height': 3}, (4, 5, 3), 'uint8'),
    ('crop_y', 'crop', {'x': 0, 'y': 2, 'width': 2, 'height': 3}, (4, 5, 3), 'uint8'),
    ('crop_0', 'crop', {'x': 0, 'y': 0, 'width': 0, 'height': 3}, (4, 5, 3), 'uint8'),
    ('crop_2d', 'crop', {'x': 0, 'y': 0, 'width': 1, 'height': 1}, (4, 5), 'uint8'),
    ('flip_4d', 'flip_left_right', {}, (2, 4, 5, 3), 'uint8'),
    ('flip_c4', 'flip_top_bottom', {}, (2, 2, 4), 'uint8'),
    ('brightness_2d', 'random_brightness', {'min_factor': 1, 'max_factor': 1}, (4, 5), 'float32'),
    ('hue_c4', 'random_hue', {'min_factor': 0, 'max_factor': 0}, (2, 2, 4), 'float32'),
    ('lighting_4d', 'adjust_lighting', {'alpha': (1, 1, 1)}, (1, 2, 2, 3), 'float32'),
    ('hue_neg', 'random_hue', {'min_factor': -0.5, 'max_factor': -0.45}, (2, 2, 3), 'float32'),
    ('brightness_neg', 'random_brightness', {'min_factor': -1, 'max_factor': 1}, (2, 2, 3), 'float32'),
    ('brightness_noparam', 'random_brightness', {'min_factor': 1}, (2, 2, 3), 'float32'),
]

# (op, params, input shape, input dtype) for symbolic inference
INFER = [
    ('to_tensor', {}, (4, 5, 3), 'uint8'),
    ('to_tensor', {}, (2, 4, 5, 3), 'float64'),
    ('normalize', {'mean': (0.1, 0.2, 0.3), 'std': 2}, (3, 4, 5), 'float64'),
    ('resize', {'size': (3, 2)}, (4, 5, 3), 'uint8'),
    ('resize', {'size': 3, 'keep_ratio': True}, (4, 6, 3), 'uint8'),
    ('resize', {'size': 3, 'keep_ratio': True}, (6, 4, 3), 'uint8'),
    ('resize', {'size': 5, 'keep_ratio': True}, (7, 4, 3), 'float32'),
    ('resize', {'size': 5, 'keep_ratio': True}, (2, 4, 7, 3), 'float32'),
    ('resize', {'size': 5}, (2, 4, 7, 3), 'float32'),
    ('crop', {'x': 1, 'y': 1, 'width': 2, 'height': 3}, (4, 7, 3), 'uint8'),
    ('crop', {'x': 1, 'y': 1, 'width': 2, 'height': 3}, (2, 4, 7, 3), 'uint8'),
    ('flip_left_right', {}, (4, 7, 3), 'uint8'),
    ('random_hue', {'min_factor': 0, 'max_factor': 1}, (4, 7, 3), 'float32'),
    ('random_color_jitter', {'brightness': 0.1, 'contrast': 0, 'saturation': 0, 'hue': 0},
     (4, 7, 3), 'uint8'),
    ('random_lighting', {}, (4, 7, 3), 'float32'),
    ('adjust_lighting', {'alpha': (1, 2, 3)}, (4, 7, 3), 'float32'),
]


def run_case(cid, op, params, name, diff, data):
    arr, dt = data[name]
    x = nd.array(arr, dtype=dt)
    f = getattr(nd.image, op)
    rec = OrderedDict([('id', cid), ('op', op), ('params', params), ('input', name)])
    if diff:
        x.attach_grad()
        with autograd.record():
            out = f(x, **params)
        head = rng_for(cid + '/head').uniform(-1, 1, out.shape).astype(dt)
        out.backward(nd.array(head, dtype=dt))
        rec['head'] = head.tolist()
        rec['grad'] = x.grad.asnumpy().tolist()
    else:
        out = f(x, **params)
    o = out.asnumpy()
    rec['dtype'] = str(o.dtype)
    rec['shape'] = list(o.shape)
    rec['output'] = o.tolist()
    return rec


def main():
    data = images()
    inputs = OrderedDict((k, {'dtype': dt, 'value': a.tolist()}) for k, (a, dt) in data.items())
    cases = [run_case(*c, data=data) for c in CASES]
    errors = []
    for cid, op, params, shape, dt in ERRORS:
        try:
            getattr(nd.image, op)(nd.zeros(shape, dtype=dt), **params).wait_to_read()
            raise AssertionError(cid + ' did not fail')
        except mx.MXNetError as e:
            rec = OrderedDict([('id', cid), ('op', op), ('params', params), ('shape', list(shape)),
                               ('dtype', dt)])
            rec.update(err_info(e))
            errors.append(rec)
    infer = []
    for op, params, shape, dt in INFER:
        with fresh_scopes():
            s = getattr(mx.sym.image, op)(mx.sym.var('d'), **params)
            _, oshape, _ = s.infer_shape(d=shape)
            _, otype, _ = s.infer_type(d=np.dtype(dt))
            infer.append(OrderedDict([('op', op), ('params', params), ('shape', list(shape)),
                                      ('dtype', dt), ('out_shape', list(oshape[0])),
                                      ('out_dtype', np.dtype(otype[0]).name),
                                      ('json', s.tojson())]))
    os.makedirs(golden_dir('image_ops'), exist_ok=True)
    write_json(os.path.join(golden_dir('image_ops'), 'image_ops.json'), OrderedDict([
        ('mxnet_version', mx.__version__), ('generator', 'tools/make_golden_image_ops.py'),
        ('inputs', inputs), ('cases', cases), ('errors', errors), ('infer', infer)]))


if __name__ == '__main__':
    main()
