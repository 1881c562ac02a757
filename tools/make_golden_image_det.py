#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.image.detection``: the detection augmenters,
``CreateDetAugmenter`` and ``ImageDetIter``.

Run it with the real MXNet (its OpenCV), from the repository root::

    tools/mxnet-oracle tools/make_golden_image_det.py

Output goes to ``tests/golden/image_det/``:

* ``files/``   seven small PNG images, ``det.lst`` (header width 2, objects of 5),
               ``det6.lst`` (header width 4, objects of 6), ``bad.lst`` (an image whose boxes
               are all degenerate), ``det.rec``/``det.idx`` (the images of det.lst, packed
               with their labels)
* ``aug.json`` + ``aug.npz``    augmenter cases (see ``AUG_CASES``): Python's ``random`` and
               ``np.random`` seeded before the first of ``calls`` calls on the same input;
               each call's image ``<case>:<k>:img`` and label ``<case>:<k>:label``; dumps()
* ``iter.json`` + ``iter.npz``  ImageDetIter cases (see ``ITER_CASES``): every batch's data,
               label and pad, over ``epochs`` passes; label_shape and provide_label; reshape,
               sync_label_shape, draw_next and error cases

The specs in the JSON files are interpreted by the same small builders in
``tests/image/test_image_det.py``. Only mxnet, numpy, cv2 (the oracle's) and the stdlib are used.
"""
import json
import os
import random
import shutil

from _oracle_common import golden_dir, write_json

import numpy as np
import mxnet as mx
import cv2

OUT = golden_dir('image_det')
FILES = os.path.join(OUT, 'files')
GENERATOR = 'tools/make_golden_image_det.py'

# (height, width, objects: [class, xmin, ymin, xmax, ymax])
IMAGES = [
    (30, 40, [[0, 0.1, 0.2, 0.5, 0.6], [1, 0.4, 0.3, 0.9, 0.8]]),
    (40, 30, [[2, 0.05, 0.6, 0.3, 0.95]]),
    (36, 36, [[0, 0.2, 0.2, 0.8, 0.8], [1, 0.0, 0.0, 0.3, 0.25], [2, 0.6, 0.7, 1.0, 1.0],
              [1, 0.45, 0.1, 0.7, 0.4]]),
    (24, 48, [[3, 0.3, 0.1, 0.6, 0.9], [0, 0.7, 0.5, 0.72, 0.55]]),
    (32, 28, [[1, 0.1, 0.1, 0.9, 0.9], [2, 0.5, 0.5, 0.5, 0.9]]),  # one degenerate box
    (20, 20, [[0, 0.25, 0.25, 0.75, 0.75]]),
    (44, 34, [[2, 0.0, 0.3, 0.4, 0.7], [3, 0.5, 0.0, 1.0, 0.5], [0, 0.6, 0.6, 0.9, 0.95]]),
]

AUG_LABEL = [[0, 0.1, 0.2, 0.5, 0.6], [1, 0.4, 0.3, 0.9, 0.8], [2, 0.05, 0.6, 0.3, 0.95],
             [3, 0.62, 0.05, 0.98, 0.35]]

# (name, spec, input 'u8'|'f32', seed, calls); spec: [class name, kwargs] or a compound
# ['select', [specs], skip_prob] / ['borrow', [augmenter name, args]] /
# ['create', kwargs] (CreateDetAugmenter((3, 32, 32), **kwargs), applied in order)
AUG_CASES = [
    ('flip', ['DetHorizontalFlipAug', {'p': 0.5}], 'u8', 1, 6),
    ('flip_always', ['DetHorizontalFlipAug', {'p': 1.0}], 'u8', 0, 1),
    ('crop_default', ['DetRandomCropAug', {}], 'u8', 2, 6),
    ('crop_params', ['DetRandomCropAug', {'min_object_covered': 0.5,
                                          'aspect_ratio_range': [0.5, 2.0],
                                          'area_range': [0.1, 0.8], 'min_eject_coverage': 0.5,
                                          'max_attempts': 20}], 'u8', 3, 6),
    ('crop_fixed', ['DetRandomCropAug', {'aspect_ratio_range': 1.0, 'area_range': 0.5}],
     'u8', 4, 5),
    ('crop_strict', ['DetRandomCropAug', {'min_object_covered': 0.95, 'area_range': [0.1, 0.3],
                                          'max_attempts': 5}], 'u8', 5, 4),
    ('pad_default', ['DetRandomPadAug', {}], 'u8', 6, 5),
    ('pad_params', ['DetRandomPadAug', {'aspect_ratio_range': 1.0, 'area_range': [1.5, 4.0],
                                        'pad_val': 50}], 'u8', 7, 4),
    ('pad_float', ['DetRandomPadAug', {'pad_val': [1.5, 2.5, 3.5]}], 'f32', 8, 3),
    ('multi_crop', ['multi', {'min_object_covered': [0.1, 0.3, 0.7],
                              'area_range': [[0.1, 1.0], [0.3, 1.0], [0.5, 0.9]],
                              'skip_prob': 0.2}], 'u8', 9, 8),
    ('select', ['select', [['DetHorizontalFlipAug', {'p': 1.0}], ['DetRandomPadAug', {}]], 0.3],
     'u8', 10, 8),
    ('select_empty', ['select', [], 0], 'u8', 10, 2),
    ('borrow_resize', ['borrow', ['ResizeAug', [20]]], 'u8', 0, 1),
    ('create_basic', ['create', {'rand_crop': 0.5, 'rand_pad': 0.5, 'rand_mirror': True,
                                 'inter_method': 1}], 'u8', 11, 8),
    ('create_full', ['create', {'resize': 40, 'rand_crop': 1, 'rand_pad': 0.7,
                                'min_object_covered': [0.1, 0.5, 0.9], 'area_range': [0.3, 3.0],
                                'rand_mirror': True, 'mean': True, 'std': True,
                                'brightness': 0.2, 'contrast': 0.2, 'saturation': 0.2,
                                'hue': 0.1, 'pca_noise': 0.05, 'rand_gray': 0.3,
                                'inter_method': 1}], 'u8', 12, 6),
    ('create_interp10', ['create', {'rand_crop': 0.8, 'rand_pad': 0.5, 'inter_method': 10}],
     'u8', 13, 6),
]


def photo(h, w, seed):
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 7.3) % 256, (yy * 9.1) % 256, ((xx + yy) * 4.0) % 256], -1)
    return np.clip(base + r.normal(0, 18, base.shape), 0, 255).astype(np.uint8)


def build(spec, M):
    """An augmenter (or a list of them, for 'create') from a spec; ``M`` is ``mx.image``."""
    kind = spec[0]
    if kind == 'select':
        return M.DetRandomSelectAug([build(s, M) for s in spec[1]], skip_prob=spec[2])
    if kind == 'borrow':
        return M.DetBorrowAug(getattr(M, spec[1][0])(*spec[1][1]))
    if kind == 'multi':
        kw = dict(spec[1])
        for k in ('aspect_ratio_range', 'area_range'):
            if k in kw and isinstance(kw[k], list) and isinstance(kw[k][0], list):
                kw[k] = [tuple(v) for v in kw[k]]
        return M.CreateMultiRandCropAugmenter(**kw)
    if kind == 'create':
        kw = dict(spec[1])
        if isinstance(kw.get('area_range'), list):
            kw['area_range'] = tuple(kw['area_range'])
        return M.CreateDetAugmenter((3, 32, 32), **kw)
    kw = dict(spec[1])
    for k in ('aspect_ratio_range', 'area_range', 'pad_val'):
        if isinstance(kw.get(k), list):
            kw[k] = tuple(kw[k])
    return getattr(M, kind)(**kw)


def apply(aug, img, label):
    augs = aug if isinstance(aug, list) else [aug]
    for a in augs:
        img, label = a(img, label)
    return img, label


def make_aug():
    src = photo(30, 40, 5)
    cases, arrays = [], {}
    for name, spec, kind, seed, calls in AUG_CASES:
        aug = build(spec, mx.image)
        dumps = [a.dumps() for a in aug] if isinstance(aug, list) else aug.dumps()
        random.seed(seed)
        np.random.seed(seed)
        for k in range(calls):
            img = mx.nd.array(src, dtype='uint8' if kind == 'u8' else 'float32')
            label = np.array(AUG_LABEL, dtype=np.float32)
            out, lab = apply(aug, img, label)
            arrays['%s:%d:img' % (name, k)] = out.asnumpy()
            arrays['%s:%d:label' % (name, k)] = np.asarray(lab)
        cases.append({'name': name, 'spec': spec, 'input': kind, 'seed': seed, 'calls': calls,
                      'dumps': dumps})
    arrays['input'] = src
    arrays['label'] = np.array(AUG_LABEL, dtype=np.float32)
    np.savez_compressed(os.path.join(OUT, 'aug.npz'), **arrays)
    write_json(os.path.join(OUT, 'aug.json'), {'generator': GENERATOR, 'cases': cases})


def flat_label(objs, header=None, width=5):
    header = header or [2, width]
    rows = [o + ([float(len(o))] * (width - 5)) for o in objs]
    return [float(v) for v in header] + [float(v) for r in rows for v in r]


def make_files():
    if os.path.isdir(FILES):
        shutil.rmtree(FILES)
    os.makedirs(FILES)
    lst, lst6, bad = [], [], []
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(FILES, 'det.idx'),
                                        os.path.join(FILES, 'det.rec'), 'w')
    for i, (h, w, objs) in enumerate(IMAGES):
        name = 'img%d.png' % i
        ok, buf = cv2.imencode('.png', photo(h, w, 20 + i))
        assert ok
        with open(os.path.join(FILES, name), 'wb') as f:
            f.write(buf.tobytes())
        lab = flat_label(objs)
        lst.append('%d\t%s\t%s' % (i, '\t'.join(repr(v) for v in lab), name))
        lab6 = flat_label(objs, header=[4, 6, 100 + i, 7], width=6)
        lst6.append('%d\t%s\t%s' % (i, '\t'.join(repr(v) for v in lab6), name))
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, np.array(lab, np.float32),
                                                               i, 0), buf.tobytes()))
        if i < 3:
            bad.append(lst[-1])
    rec.close()
    bad.append('%d\t%s\t%s' % (9, '\t'.join(repr(v) for v in flat_label(
        [[0, 0.5, 0.5, 0.4, 0.9], [1, 0.1, 0.3, 0.2, 0.3]])), 'img3.png'))
    for fname, lines in (('det.lst', lst), ('det6.lst', lst6), ('bad.lst', bad)):
        with open(os.path.join(FILES, fname), 'w') as f:
            f.write('\n'.join(lines) + '\n')


# iterator cases: constructor kwargs (paths relative to files/), seed, epochs; 'imglist' in
# kwargs names a list built from det.lst's labels with path_root=files
ITER_CASES = [
    ('lst_pad', {'batch_size': 3, 'data_shape': [3, 24, 24], 'path_imglist': 'det.lst'}, 0, 2),
    ('lst_discard', {'batch_size': 3, 'data_shape': [3, 16, 20], 'path_imglist': 'det.lst',
                     'last_batch_handle': 'discard', 'rand_mirror': True}, 1, 2),
    ('rec_idx_shuffle', {'batch_size': 2, 'data_shape': [3, 20, 20], 'path_imgrec': 'det.rec',
                         'path_imgidx': 'det.idx', 'shuffle': True, 'rand_crop': 0.5,
                         'rand_pad': 0.5, 'rand_mirror': True, 'inter_method': 1,
                         'last_batch_handle': 'roll_over'}, 2, 3),
    ('rec_seq', {'batch_size': 4, 'data_shape': [3, 18, 18], 'path_imgrec': 'det.rec'}, 3, 2),
    ('rec_parts', {'batch_size': 2, 'data_shape': [3, 18, 18], 'path_imgrec': 'det.rec',
                   'path_imgidx': 'det.idx', 'part_index': 1, 'num_parts': 2}, 4, 1),
    ('lst6', {'batch_size': 2, 'data_shape': [3, 16, 16], 'path_imglist': 'det6.lst',
              'rand_crop': 1, 'min_object_covered': [0.3, 0.7], 'inter_method': 1,
              'mean': True, 'std': True, 'brightness': 0.1, 'label_name': 'gt'}, 5, 1),
    ('imglist', {'batch_size': 3, 'data_shape': [3, 20, 24], 'imglist': 'det.lst',
                 'rand_pad': 1, 'pad_val': [0, 255, 0]}, 6, 1),
]


def load_imglist(fname):
    out = []
    with open(os.path.join(FILES, fname)) as f:
        for line in f:
            parts = line.strip().split('\t')
            out.append([float(v) for v in parts[1:-1]] + [parts[-1]])
    return out


def make_iter_obj(kw, M=mx.image):
    kw = dict(kw)
    kw['data_shape'] = tuple(kw['data_shape'])
    for k in ('path_imglist', 'path_imgrec', 'path_imgidx'):
        if k in kw:
            kw[k] = os.path.join(FILES, kw[k])
    if 'imglist' in kw:
        kw['imglist'] = load_imglist(kw['imglist'])
    kw['path_root'] = FILES
    if isinstance(kw.get('pad_val'), list):
        kw['pad_val'] = tuple(kw['pad_val'])
    return M.ImageDetIter(**kw)


def run_epochs(it, epochs, arrays, prefix):
    batches = []
    for e in range(epochs):
        if e:
            it.reset()
        k = 0
        for batch in it:
            arrays['%s:%d:%d:data' % (prefix, e, k)] = batch.data[0].asnumpy()
            arrays['%s:%d:%d:label' % (prefix, e, k)] = batch.label[0].asnumpy()
            batches.append([e, k, batch.pad])
            k += 1
    return batches


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e)]
    return None


def make_iter():
    arrays, cases = {}, []
    for name, kw, seed, epochs in ITER_CASES:
        random.seed(seed)
        np.random.seed(seed)
        it = make_iter_obj(kw)
        rec = {'name': name, 'kwargs': kw, 'seed': seed, 'epochs': epochs,
               'label_shape': list(it.label_shape),
               'provide_label': [[n, list(s)] for n, s in it.provide_label],
               'provide_data': [[n, list(s)] for n, s in it.provide_data]}
        rec['batches'] = run_epochs(it, epochs, arrays, name)
        cases.append(rec)

    extra = {}
    # reshape, then a batch; check_label_shape errors
    random.seed(0)
    it = make_iter_obj({'batch_size': 2, 'data_shape': [3, 24, 24], 'path_imglist': 'det.lst'})
    it.reshape(data_shape=(3, 16, 20), label_shape=(6, 5))
    extra['reshape'] = {'provide_data': [[n, list(s)] for n, s in it.provide_data],
                        'provide_label': [[n, list(s)] for n, s in it.provide_label],
                        'label_shape': list(it.label_shape)}
    # (the augmenters still resize to the constructor's shape: back to it for a batch)
    it.reshape(data_shape=(3, 24, 24))
    b = it.next()
    arrays['reshape:data'] = b.data[0].asnumpy()
    arrays['reshape:label'] = b.label[0].asnumpy()
    extra['check_label_shape'] = {
        'reduce': err(lambda: it.check_label_shape((2, 5))),
        'width': err(lambda: it.check_label_shape((6, 6))),
        'ndim': err(lambda: it.check_label_shape((6,))),
        'ok': err(lambda: it.check_label_shape((7, 5))),
        'bad_data_shape': err(lambda: it.reshape(data_shape=(1, 16, 16))),
    }
    # sync_label_shape: the small list (images 0-1, at most 2 objects) grows to 4 objects
    few = load_imglist('det.lst')[:2]
    a = mx.image.ImageDetIter(2, (3, 16, 16), imglist=few, path_root=FILES)
    big = make_iter_obj({'batch_size': 2, 'data_shape': [3, 16, 16], 'path_imglist': 'det.lst'})
    before = [list(a.label_shape), list(big.label_shape)]
    ret = big.sync_label_shape(a)
    extra['sync'] = {'before': before, 'after': [list(a.label_shape), list(big.label_shape)],
                     'returns_other': ret is a,
                     'provide_label': [list(a.provide_label[0][1]),
                                       list(big.provide_label[0][1])]}
    b = a.next()
    arrays['sync:label'] = b.label[0].asnumpy()
    # draw_next: a given colour with class names; random colours (np.random)
    d = make_iter_obj({'batch_size': 1, 'data_shape': [3, 40, 40], 'path_imglist': 'det.lst',
                       'inter_method': 1})
    imgs = list(d.draw_next(color=(255, 0, 0), thickness=1, id2labels={0: 'a', 2: 'c'}))
    extra['draw_next_count'] = len(imgs)
    for k, im in enumerate(imgs[:3]):
        arrays['draw:color:%d' % k] = im
    d = make_iter_obj({'batch_size': 1, 'data_shape': [3, 30, 30], 'path_imglist': 'det.lst',
                       'mean': True, 'std': True, 'inter_method': 1})
    np.random.seed(3)
    gen = d.draw_next(mean=True, std=True, thickness=2)
    for k in range(2):
        arrays['draw:random:%d' % k] = next(gen)
    # a source whose image has no valid box: construction fails (the label count pass)
    extra['bad_list'] = err(lambda: mx.image.ImageDetIter(
        2, (3, 16, 16), path_imglist=os.path.join(FILES, 'bad.lst'), path_root=FILES))
    # label parsing errors
    p = make_iter_obj({'batch_size': 1, 'data_shape': [3, 16, 16], 'path_imglist': 'det.lst'})
    extra['parse'] = {
        'short': err(lambda: p._parse_label(np.array([2, 5, 0, 0.1, 0.1, 0.5], np.float32))),
        'width': err(lambda: p._parse_label(np.array([2, 5, 0, 0.1, 0.1, 0.5, 0.5, 1],
                                                     np.float32))),
        'none_valid': err(lambda: p._parse_label(np.array([2, 5, 0, 0.5, 0.1, 0.5, 0.5],
                                                          np.float32))),
        'header3': p._parse_label(np.array([3, 5, 9, 0, 0.1, 0.1, 0.5, 0.5, 1, 0.2, 0.2, 0.1,
                                            0.3], np.float32)).tolist(),
        'check_valid': err(lambda: p._check_valid_label(np.array([[-1, 0.1, 0.1, 0.5, 0.5]]))),
        'check_shape': err(lambda: p._check_valid_label(np.array([[0, 0.1, 0.1, 0.5]]))),
    }
    extra['dumps'] = [a.dumps() for a in make_iter_obj(
        {'batch_size': 1, 'data_shape': [3, 16, 16], 'path_imglist': 'det.lst', 'resize': 20,
         'rand_crop': 0.5, 'rand_pad': 0.5, 'rand_mirror': True, 'mean': True,
         'brightness': 0.1, 'hue': 0.1, 'pca_noise': 0.1, 'rand_gray': 0.1}).auglist]
    np.savez_compressed(os.path.join(OUT, 'iter.npz'), **arrays)
    write_json(os.path.join(OUT, 'iter.json'), {'generator': GENERATOR, 'cases': cases,
                                                'extra': extra})


def main():
    os.makedirs(OUT, exist_ok=True)
    make_files()
    make_aug()
    make_iter()


if __name__ == '__main__':
    main()
