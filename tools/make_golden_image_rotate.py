#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for image rotation: ``mx.image.imrotate``,
``mx.image.random_rotate`` and ``gluon.data.vision.transforms.Rotate``/``RandomRotation``.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_image_rotate.py

Output: ``tests/golden/image_rotate/rotate.json`` (the cases: call, arguments, seed) and
``rotate.npz`` (the inputs ``<case>:in`` and outputs ``<case>:out``, float32). Random cases seed
``np.random`` just before the call (MXNet draws the angles and the apply-or-not from it).
"""
import os

from _oracle_common import golden_dir, err_info, write_json

import numpy as np
import mxnet as mx
from mxnet.gluon.data.vision import transforms

OUT = golden_dir('image_rotate')


def main():
    os.makedirs(OUT, exist_ok=True)
    r = np.random.RandomState(19)
    img = r.uniform(0, 1, (3, 5, 7)).astype(np.float32)
    batch = r.uniform(0, 1, (4, 2, 6, 4)).astype(np.float32)
    cases, arrays = [], {}

    def add(name, kind, x, args, fn, seed=None):
        arrays[name + ':in'] = x
        if seed is not None:
            np.random.seed(seed)
        out = fn(mx.nd.array(x))
        arrays[name + ':out'] = out.asnumpy()
        cases.append({'name': name, 'kind': kind, 'args': args, 'seed': seed})

    for deg in (0, 30, -45, 90, 137.5, 180, 400):
        for zi, zo in ((False, False), (True, False), (False, True)):
            add(f'img_{deg}_{int(zi)}{int(zo)}', 'imrotate', img,
                {'rotation_degrees': deg, 'zoom_in': zi, 'zoom_out': zo},
                lambda x, d=deg, zi=zi, zo=zo: mx.image.imrotate(x, d, zoom_in=zi, zoom_out=zo))
    angles = [10.0, -75.0, 200.0, 45.0]
    for zi, zo in ((False, False), (True, False), (False, True)):
        add(f'batch_vec_{int(zi)}{int(zo)}', 'imrotate', batch,
            {'rotation_degrees': angles, 'zoom_in': zi, 'zoom_out': zo},
            lambda x, zi=zi, zo=zo: mx.image.imrotate(x, mx.nd.array(angles), zoom_in=zi,
                                                      zoom_out=zo))
    add('batch_scalar', 'imrotate', batch, {'rotation_degrees': -20, 'zoom_in': False,
                                             'zoom_out': False},
        lambda x: mx.image.imrotate(x, -20))
    add('random_img', 'random_rotate', img, {'angle_limits': [-60, 60], 'zoom_in': False,
                                             'zoom_out': False},
        lambda x: mx.image.random_rotate(x, (-60, 60)), seed=3)
    add('random_batch', 'random_rotate', batch, {'angle_limits': [0, 90], 'zoom_in': False,
                                                 'zoom_out': True},
        lambda x: mx.image.random_rotate(x, (0, 90), zoom_out=True), seed=4)
    add('T_rotate', 'Rotate', img, {'rotation_degrees': 33, 'zoom_in': True, 'zoom_out': False},
        lambda x: transforms.Rotate(33, zoom_in=True)(x))
    add('T_rotate_batch', 'Rotate', batch, {'rotation_degrees': 120, 'zoom_in': False,
                                            'zoom_out': False},
        lambda x: transforms.Rotate(120)(x))
    # RandomRotation with probability: several calls in a row from one seed
    t = transforms.RandomRotation((-30, 30), rotate_with_proba=0.5)
    np.random.seed(7)
    for k in range(6):
        arrays[f'T_random_{k}:in'] = img
        arrays[f'T_random_{k}:out'] = t(mx.nd.array(img)).asnumpy()
        cases.append({'name': f'T_random_{k}', 'kind': 'RandomRotation',
                      'args': {'angle_limits': [-30, 30], 'zoom_in': False, 'zoom_out': False,
                               'rotate_with_proba': 0.5},
                      'seed': 7 if k == 0 else None})

    errors = []
    for name, fn in (
            ('both_zooms', lambda: mx.image.imrotate(mx.nd.array(img), 10, True, True)),
            ('float64', lambda: mx.image.imrotate(mx.nd.array(img, dtype='float64'), 10)),
            ('uint8', lambda: mx.image.imrotate(mx.nd.array(img, dtype='uint8'), 10)),
            ('single_vec_angle', lambda: mx.image.imrotate(mx.nd.array(img),
                                                           mx.nd.array([10.0]))),
            ('count_mismatch', lambda: mx.image.imrotate(mx.nd.array(batch),
                                                         mx.nd.array([1.0, 2.0]))),
            ('ndim2', lambda: mx.image.imrotate(mx.nd.array(img[0]), 10)),
            ('T_float64', lambda: transforms.Rotate(5)(mx.nd.array(img, dtype='float64'))),
            ('T_bad_limits', lambda: transforms.RandomRotation((5, 5))),
            ('T_bad_proba', lambda: transforms.RandomRotation((0, 5), rotate_with_proba=2))):
        try:
            fn()
            errors.append({'name': name, 'error_type': None})
        except Exception as e:  # noqa: BLE001
            rec = err_info(e)
            rec['name'] = name
            errors.append(rec)

    np.savez_compressed(os.path.join(OUT, 'rotate.npz'), **arrays)
    write_json(os.path.join(OUT, 'rotate.json'),
               {'generator': 'tools/make_golden_image_rotate.py', 'mxnet': mx.__version__,
                'cases': cases, 'errors': errors})


if __name__ == '__main__':
    main()
