#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.image`` and im2rec.

Run it with the real MXNet (its OpenCV decodes, as MXNet's own does), from the repository root::

    tools/mxnet-oracle tools/make_golden_image.py

Output goes to ``tests/golden/image/`` (all images are tiny and generated here):

* ``files/``        encoded test images: JPEG 4:2:0 / 4:4:4 / progressive / gray / with an EXIF
                    orientation, PNG RGB / RGBA / gray / 16-bit (encoded by the oracle's cv2)
* ``decoded.npz``   ``mx.image.imdecode`` of each: ``<file>:rgb``, ``:bgr`` (to_rgb=0), ``:gray``
* ``ops.npz``       ``imresize`` (interp 0-4, uint8/float32, down/up), ``resize_short``,
                    ``copyMakeBorder`` on ``files/photo.png``
* ``aug.json`` + ``aug.npz``  augmenter cases: the constructor, the seed given to Python's
                    ``random`` and ``np.random`` just before, and each call's output (keys
                    ``<case>:<call>``), plus ``dumps()``; MXNet draws from those two generators
                    only, so neomx repeats the same choices
* ``iter/``         a small ``.rec``/``.idx`` (7 PNGs), a 2-label ``.rec``, an ``.lst`` and its
                    folder; ``iter.json`` + ``iter.npz``: ImageIter cases and every batch (data stored as uint8: every value is an integer)
* ``im2rec/``       MXNet's ``tools/im2rec.py`` run on ``im2rec/src`` (two class folders):
                    ``.lst`` files of ``--list`` runs and ``.rec``/``.idx`` of pack runs (see
                    ``IM2REC_RUNS``)

Only mxnet, numpy, cv2 (the oracle's) and the stdlib are used.
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys

from _oracle_common import golden_dir, write_json

import numpy as np
import mxnet as mx
import cv2

OUT = golden_dir('image')
FILES = os.path.join(OUT, 'files')
GENERATOR = 'tools/make_golden_image.py'


def photo(h, w, seed):
    """A smooth colour gradient plus noise (JPEG-like content)."""
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 7.3) % 256, (yy * 9.1) % 256, ((xx + yy) * 4.0) % 256], -1)
    return np.clip(base + r.normal(0, 18, base.shape), 0, 255).astype(np.uint8)


def exif_jpeg(jpg, orientation):
    tiff = (b'II*\x00' + struct.pack('<IH', 8, 1) + struct.pack('<HHII', 0x0112, 3, 1, orientation)
            + struct.pack('<I', 0))
    app1 = b'Exif\x00\x00' + tiff
    return jpg[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + jpg[2:]


def encode(ext, img, params=()):
    ok, buf = cv2.imencode(ext, img, list(params))
    assert ok
    return buf.tobytes()


def make_files():
    img = photo(24, 32, 1)
    r = np.random.RandomState(2)
    files = {
        'photo.jpg': encode('.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, 90]),
        'photo444.jpg': encode('.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, 95,
                                             cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                                             cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]),
        'photo_prog.jpg': encode('.jpg', img[:17, :23], [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        'gray.jpg': encode('.jpg', img[:, :, 1]),
        'exif6.jpg': exif_jpeg(encode('.jpg', img[:16, :24]), 6),
        'photo.png': encode('.png', img),
        'rgba.png': encode('.png', r.randint(0, 256, (9, 11, 4)).astype(np.uint8)),
        'gray.png': encode('.png', r.randint(0, 256, (9, 11)).astype(np.uint8)),
        'deep16.png': encode('.png', r.randint(0, 65536, (9, 11, 3)).astype(np.uint16)),
    }
    os.makedirs(FILES, exist_ok=True)
    decoded = {}
    for name, data in files.items():
        with open(os.path.join(FILES, name), 'wb') as f:
            f.write(data)
        decoded[name + ':rgb'] = mx.image.imdecode(data).asnumpy()
        if name == 'photo.jpg':
            decoded[name + ':bgr'] = mx.image.imdecode(data, to_rgb=0).asnumpy()
        decoded[name + ':gray'] = mx.image.imdecode(data, flag=0).asnumpy()
    np.savez_compressed(os.path.join(OUT, 'decoded.npz'), **decoded)


def make_ops():
    src = mx.image.imread(os.path.join(FILES, 'photo.png'))[:12, :16]
    out = {}
    for interp in range(5):
        for w, h in [(7, 5), (23, 15)]:
            out['imresize:uint8:%d:%d:%d' % (interp, w, h)] = \
                mx.image.imresize(src, w, h, interp=interp).asnumpy()
        out['imresize:float32:%d:9:7' % interp] = \
            mx.image.imresize(src.astype('float32'), 9, 7, interp=interp).asnumpy()
    out['resize_short:8'] = mx.image.resize_short(src, 8).asnumpy()
    out['resize_short:20:1'] = mx.image.resize_short(src, 20, interp=1).asnumpy()
    out['border:0'] = mx.image.copyMakeBorder(src, 1, 2, 3, 4, type=0, values=(9, 8, 7)).asnumpy()
    for t in (1, 2, 4):
        out['border:%d' % t] = mx.image.copyMakeBorder(src, 2, 1, 0, 3, type=t).asnumpy()
    np.savez_compressed(os.path.join(OUT, 'ops.npz'), **out)


# (case name, augmenter or function, args, kwargs, input 'u8'|'f32', seed, calls)
AUG_CASES = [
    ('random_crop', 'random_crop', [[10, 8]], {}, 'u8', 3, 3),
    ('random_crop_scale', 'random_crop', [[20, 10]], {'interp': 1}, 'u8', 4, 2),
    ('random_size_crop', 'random_size_crop', [[10, 8], 0.3, [0.75, 1.333]], {}, 'u8', 5, 3),
    ('random_size_crop_fallback', 'random_size_crop', [[10, 8], [0.99, 1.0], [3.0, 4.0]], {},
     'u8', 6, 1),
    ('center_crop', 'center_crop', [[10, 8]], {}, 'u8', 0, 1),
    ('center_crop_up', 'center_crop', [[16, 16]], {'interp': 9}, 'u8', 0, 1),
    ('fixed_crop', 'fixed_crop', [2, 3, 6, 4], {'size': [5, 5], 'interp': 10}, 'u8', 7, 2),
    ('ResizeAug', 'ResizeAug', [12], {}, 'u8', 0, 1),
    ('ForceResizeAug', 'ForceResizeAug', [[12, 6]], {'interp': 3}, 'u8', 0, 1),
    ('RandomCropAug', 'RandomCropAug', [[7, 5]], {}, 'u8', 8, 2),
    ('RandomSizedCropAug', 'RandomSizedCropAug', [[7, 5], 0.2, [0.5, 2.0]], {}, 'u8', 9, 2),
    ('CenterCropAug', 'CenterCropAug', [[7, 5]], {}, 'u8', 0, 1),
    ('HorizontalFlipAug', 'HorizontalFlipAug', [0.5], {}, 'u8', 10, 4),
    ('BrightnessJitterAug', 'BrightnessJitterAug', [0.4], {}, 'f32', 11, 2),
    ('ContrastJitterAug', 'ContrastJitterAug', [0.4], {}, 'f32', 12, 2),
    ('SaturationJitterAug', 'SaturationJitterAug', [0.4], {}, 'f32', 13, 2),
    ('HueJitterAug', 'HueJitterAug', [0.4], {}, 'f32', 14, 2),
    ('ColorJitterAug', 'ColorJitterAug', [0.3, 0.3, 0.3], {}, 'f32', 15, 3),
    ('LightingAug', 'LightingAug', [0.5, [55.46, 4.794, 1.148],
                                    [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                                     [-0.5836, -0.6948, 0.4203]]], {}, 'f32', 16, 2),
    ('ColorNormalizeAug', 'ColorNormalizeAug', [[123.68, 116.28, 103.53],
                                                [58.395, 57.12, 57.375]], {}, 'f32', 0, 1),
    ('RandomGrayAug', 'RandomGrayAug', [0.5], {}, 'f32', 17, 4),
    ('CastAug', 'CastAug', [], {}, 'u8', 0, 1),
    ('CreateAugmenter', 'CreateAugmenter', [[3, 5, 6]],
     {'resize': 9, 'rand_crop': True, 'rand_resize': True, 'rand_mirror': True, 'mean': True,
      'std': True, 'brightness': 0.2, 'contrast': 0.2, 'saturation': 0.2, 'hue': 0.2,
      'pca_noise': 0.1, 'rand_gray': 0.3, 'inter_method': 10}, 'u8', 18, 3),
    ('CreateAugmenter_plain', 'CreateAugmenter', [[3, 5, 6]], {}, 'u8', 0, 1),
]


def tup(v):
    """JSON lists -> tuples, except numeric arrays MXNet takes as arrays (mean/std, eig*)."""
    return tuple(v) if isinstance(v, list) and len(v) == 2 else v


def build_aug(fn, args, kwargs):
    args = [tup(a) for a in args]
    kwargs = {k: tup(v) for k, v in kwargs.items()}
    if fn == 'ColorNormalizeAug':
        args = [mx.nd.array(a) for a in args]
    if fn == 'LightingAug':
        args = [args[0], np.array(args[1]), np.array(args[2])]
    f = getattr(mx.image, fn)
    if fn[0].isupper() and fn != 'CreateAugmenter':
        aug = f(*args, **kwargs)
        return aug, [aug.dumps()]
    if fn == 'CreateAugmenter':
        augs = f(*args, **kwargs)
        return mx.image.SequentialAug(augs), [a.dumps() for a in augs]
    return (lambda src: f(src, *args, **kwargs)), None


def make_aug():
    src_u8 = mx.image.imread(os.path.join(FILES, 'photo.png'))[:8, :10]
    out, cases = {}, []
    for name, fn, args, kwargs, inp, seed, calls in AUG_CASES:
        aug, dumps = build_aug(fn, args, kwargs)
        random.seed(seed)
        np.random.seed(seed)
        for i in range(calls):
            src = src_u8.copy() if inp == 'u8' else src_u8.astype('float32')
            res = aug(src)
            if isinstance(res, tuple):
                res, rect = res
                out['%s:%d:rect' % (name, i)] = np.array(rect)
            out['%s:%d' % (name, i)] = res.asnumpy()
        cases.append({'name': name, 'fn': fn, 'args': args, 'kwargs': kwargs, 'input': inp,
                      'seed': seed, 'calls': calls, 'dumps': dumps})
    np.savez_compressed(os.path.join(OUT, 'aug.npz'), **out)
    write_json(os.path.join(OUT, 'aug.json'), {'generator': GENERATOR, 'mxnet': mx.__version__,
                                               'input': 'files/photo.png[:8, :10]',
                                               'cases': cases})


ITER_CASES = [
    ('rec_seq', {'path_imgrec': 'iter/data.rec'}, 0, 2),
    ('rec_idx_shuffle', {'path_imgrec': 'iter/data.rec', 'path_imgidx': 'iter/data.idx',
                         'shuffle': True, 'rand_crop': True, 'rand_mirror': True}, 21, 2),
    ('rec_parts', {'path_imgrec': 'iter/data.rec', 'path_imgidx': 'iter/data.idx',
                   'num_parts': 2, 'part_index': 1, 'batch_size': 2}, 0, 2),
    ('rec_discard', {'path_imgrec': 'iter/data.rec', 'path_imgidx': 'iter/data.idx',
                     'last_batch_handle': 'discard'}, 0, 2),
    ('rec_roll_over', {'path_imgrec': 'iter/data.rec', 'path_imgidx': 'iter/data.idx',
                       'last_batch_handle': 'roll_over'}, 0, 3),
    ('rec_seq_roll_over', {'path_imgrec': 'iter/data.rec', 'last_batch_handle': 'roll_over',
                           'batch_size': 4}, 0, 3),
    ('rec_multilabel', {'path_imgrec': 'iter/multi.rec', 'label_width': 2, 'resize': 7}, 0, 1),
    ('lst', {'path_imglist': 'iter/data.lst', 'path_root': 'iter/img', 'label_width': 2,
             'dtype': 'float64', 'data_name': 'img', 'label_name': 'lbl'}, 0, 1),
    ('lst_shuffle', {'path_imglist': 'iter/data.lst', 'path_root': 'iter/img',
                     'label_width': 2, 'shuffle': True}, 22, 2),
    ('rec_with_lst', {'path_imgrec': 'iter/data.rec', 'path_imgidx': 'iter/data.idx',
                      'path_imglist': 'iter/data.lst', 'label_width': 2}, 0, 1),
]
ITER_DEFAULTS = {'batch_size': 3, 'data_shape': [3, 6, 6]}


def make_iter_data():
    d = os.path.join(OUT, 'iter')
    os.makedirs(os.path.join(d, 'img'), exist_ok=True)
    single = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'data.idx'),
                                           os.path.join(d, 'data.rec'), 'w')
    multi = mx.recordio.MXRecordIO(os.path.join(d, 'multi.rec'), 'w')
    lines = []
    for i in range(7):
        img = photo(8 + i, 12 - i // 2, 30 + i)
        png = encode('.png', img)
        key = 100 + 3 * i
        single.write_idx(key, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 3), key, 0),
                                               png))
        multi.write(mx.recordio.pack(mx.recordio.IRHeader(0, [i, 10 - i], key, 0), png))
        with open(os.path.join(d, 'img', 'im%d.png' % i), 'wb') as f:
            f.write(png)
        lines.append('%d\t%f\t%f\tim%d.png\n' % (key, i % 3, i * 0.5, i))
    single.close()
    multi.close()
    with open(os.path.join(d, 'data.lst'), 'w') as f:
        f.writelines(lines)


def make_iter():
    make_iter_data()
    out, cases = {}, []
    cwd = os.getcwd()
    os.chdir(OUT)
    try:
        for name, kwargs, seed, epochs in ITER_CASES:
            kw = dict(ITER_DEFAULTS, **kwargs)
            kw['data_shape'] = tuple(kw['data_shape'])
            random.seed(seed)
            np.random.seed(seed)
            it = mx.image.ImageIter(**kw)
            meta = {'name': name, 'kwargs': kwargs, 'seed': seed, 'epochs': epochs,
                    'provide_data': it.provide_data, 'provide_label': it.provide_label,
                    'batches': []}
            for e in range(epochs):
                it.reset()
                n = 0
                for b in it:
                    data = b.data[0].asnumpy()
                    assert (data == np.round(data)).all() and 0 <= data.min() <= data.max() < 256
                    out['%s:%d:%d:data' % (name, e, n)] = data.astype(np.uint8)  # smaller
                    out['%s:%d:%d:label' % (name, e, n)] = b.label[0].asnumpy()
                    meta['batches'].append([e, n, b.pad])
                    n += 1
            cases.append(meta)
    finally:
        os.chdir(cwd)
    np.savez_compressed(os.path.join(OUT, 'iter.npz'), **out)
    write_json(os.path.join(OUT, 'iter.json'), {'generator': GENERATOR, 'mxnet': mx.__version__,
                                                'defaults': ITER_DEFAULTS, 'cases': cases})


# (output prefix, extra arguments); run in this order, from tests/golden/image/im2rec
IM2REC_RUNS = [
    ('all', ['--list', '--recursive']),
    ('split', ['--list', '--recursive', '--train-ratio', '0.5', '--test-ratio', '0.25',
               '--no-shuffle']),
    ('chunk', ['--list', '--recursive', '--chunks', '2', '--exts', '.png']),
    ('all', []),
    ('multi', ['--pack-label', '--encoding', '.png', '--quality', '3', '--resize', '12',
               '--center-crop', '--num-thread', '2']),
]


def make_im2rec():
    d = os.path.join(OUT, 'im2rec')
    shutil.rmtree(d, ignore_errors=True)
    for k, cls in enumerate(['cat', 'dog']):
        os.makedirs(os.path.join(d, 'src', cls))
        for i in range(3):
            img = photo(14 + 3 * i, 20 - 2 * i + k, 50 + 10 * k + i)
            ext = '.png' if i == 1 else '.jpg'
            with open(os.path.join(d, 'src', cls, 'p%d%s' % (i, ext)), 'wb') as f:
                f.write(encode(ext, img))
    with open(os.path.join(d, 'src', 'notes.txt'), 'w') as f:
        f.write('not an image\n')
    with open(os.path.join(d, 'multi.lst'), 'w') as f:
        f.write('5\t1.000000\t0.500000\tcat/p0.jpg\n9\t0.000000\t2.000000\tdog/p1.png\n')
    tool = os.path.join(os.path.dirname(mx.__file__), 'tools', 'im2rec.py')
    for prefix, extra in IM2REC_RUNS:
        subprocess.run([sys.executable, tool, prefix, 'src'] + extra, cwd=d, check=True,
                       stdout=subprocess.DEVNULL)
    write_json(os.path.join(d, 'runs.json'), {'generator': GENERATOR, 'runs': IM2REC_RUNS})


def main():
    make_files()
    make_ops()
    make_aug()
    make_iter()
    make_im2rec()


if __name__ == '__main__':
    main()
