#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.io.ImageRecordIter`` & co.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_image_record_iter.py

Output goes to ``tests/golden/image_record_iter/``:

* ``data/``      small inputs made here: ``a.rec``/``a.idx`` (10 JPEGs of 36-64 px, label =
                 record number, id = 100 + number), ``b.rec`` (the same images, 3 labels each),
                 ``a.lst`` (2 labels per id), ``d.rec`` (7 detection records: [2, 5, objects of
                 5 values]), ``x.csv``/``y.csv``, ``s.libsvm``
* ``cases.json`` one entry per case: the iterator, its keyword arguments, ``provide_data``/
                 ``provide_label``, and per epoch the batches' ``pad`` and labels; or the
                 error text for a case that fails
* ``cases.npz``  the data of the cases with ``"data": true``: the first batch (every batch of
                 epoch 0 for the ``FULL_DATA`` cases), key ``<case>:0:<batch>``; stored as uint8
                 when every value is an integer in 0-255

MXNet 1.9.1 sometimes crashes (segmentation fault) while its iterators shut down; run it again.

Only mxnet, numpy, cv2 (the oracle's) and the stdlib are used.
"""
import json
import os
import shutil
import sys

from _oracle_common import golden_dir, write_json, err_info

import numpy as np
import mxnet as mx

OUT = golden_dir('image_record_iter')
DATA = os.path.join(OUT, 'data')
SIZES = [(40, 50), (48, 36), (36, 36), (60, 44), (37, 53), (50, 50), (41, 39), (45, 64),
         (38, 40), (52, 47)]


def photo(h, w, seed):
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 7.3) % 256, (yy * 9.1) % 256, ((xx + yy) * 4.0) % 256], -1)
    return np.clip(base + r.normal(0, 18, base.shape), 0, 255).astype(np.uint8)


def make_inputs():
    shutil.rmtree(DATA, ignore_errors=True)
    os.makedirs(DATA)
    p = lambda n: os.path.join(DATA, n)  # noqa: E731
    w = mx.recordio.MXIndexedRecordIO(p('a.idx'), p('a.rec'), 'w')
    w2 = mx.recordio.MXRecordIO(p('b.rec'), 'w')
    for i, (h, ww) in enumerate(SIZES):
        img = photo(h, ww, i)
        w.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i), 100 + i, 0), img,
                                            quality=90))
        w2.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, [i, i * 0.5, 7], 100 + i, 0), img,
                                      quality=90))
    w.close()
    w2.close()
    with open(p('a.lst'), 'w') as f:
        for i in range(10):
            f.write('%d\t%f\t%f\tx%d.jpg\n' % (100 + i, i * 10, -i, i))
    w = mx.recordio.MXRecordIO(p('d.rec'), 'w')
    for i, nobj in enumerate([1, 3, 2, 1, 4, 1, 2]):
        lab = [2, 5] + sum([[k % 3, 0.1 * k, 0.2, 0.5 + 0.05 * k, 0.9] for k in range(nobj)], [])
        w.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, np.array(lab, np.float32), i, 0),
                                     photo(40 + i, 50 - i, i), quality=90))
    w.close()
    r = np.random.RandomState(0)
    x = r.randint(-50, 50, (7, 6)) / 4.0
    np.savetxt(p('x.csv'), x, delimiter=',', fmt='%g')
    np.savetxt(p('y.csv'), np.arange(7 * 2).reshape(7, 2), delimiter=',', fmt='%g')
    with open(p('s.libsvm'), 'w') as f:
        for i in range(7):
            cols = sorted(r.choice(8, 1 + i % 3, replace=False).tolist())
            f.write('%d %s\n' % (i % 2, ' '.join('%d:%g' % (c, r.randint(1, 9) / 2.0)
                                                  for c in cols)))


def rel(kwargs):
    """Paths in the arguments are stored relative to the golden folder."""
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, str) and v.startswith(DATA):
            v = os.path.relpath(v, OUT)
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


CASES = []
FULL_DATA = ('plain', 'det', 'csv', 'csv_label', 'libsvm')  # data of every batch of epoch 0


def case(name, iterator='ImageRecordIter', epochs=1, data=False, **kwargs):
    CASES.append(dict(name=name, iterator=iterator, epochs=epochs, data=data, kwargs=kwargs))


def d(name):
    return os.path.join(DATA, name)


def define_cases():
    A = dict(path_imgrec=d('a.rec'), data_shape=(3, 24, 24), batch_size=4)
    case('plain', epochs=3, data=True, **A)
    case('threads1', data=True, preprocess_threads=1, **A)
    case('round0', epochs=3, round_batch=0, **A)
    case('idx', epochs=2, path_imgidx=d('a.idx'), **A)
    for n in range(3):
        case('parts_bytes%d' % n, epochs=3, num_parts=3, part_index=n, **A)
        case('parts_idx%d' % n, epochs=3, num_parts=3, part_index=n, path_imgidx=d('a.idx'), **A)
    case('shuffle', epochs=3, shuffle=1, path_imgidx=d('a.idx'), **A)
    case('shuffle_seed3', epochs=3, shuffle=1, seed=3, path_imgidx=d('a.idx'), **A)
    case('shuffle_part', epochs=3, shuffle=1, seed=3, path_imgidx=d('a.idx'), num_parts=2,
         part_index=1, **A)
    case('shuffle_noidx', epochs=2, shuffle=1, **dict(A, batch_size=5))
    B = dict(A, batch_size=3)
    case('batch3', epochs=3, **B)
    case('batch12', epochs=3, **dict(A, batch_size=12))
    case('normalize', data=True, mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395,
         std_g=57.12, std_b=57.375, scale=0.5, **A)
    case('scale', data=True, scale=1.0 / 255, **A)
    for interp in (0, 1, 3, 9):
        case('resize_interp%d' % interp, data=True, resize=28, inter_method=interp, **A)
    case('upscale', data=True, **dict(A, data_shape=(3, 40, 40)))
    case('upscale_interp3', data=True, inter_method=3, **dict(A, data_shape=(3, 45, 30)))
    case('label_width3', label_width=3, **dict(A, path_imgrec=d('b.rec')))
    case('imglist', label_width=2, path_imglist=d('a.lst'), **A)
    case('gray', data=True, **dict(A, data_shape=(1, 24, 24)))
    case('uint8', data=True, dtype='uint8', **A)
    case('int8', data=True, dtype='int8', mean_r=50.5, mean_g=-20, std_r=0.5, scale=3, **A)
    case('mirror', data=True, mirror=1, **A)
    case('pad', data=True, pad=4, fill_value=7, **A)
    case('crop_size', data=True, max_crop_size=30, min_crop_size=30, **A)
    case('rotate', data=True, rotate=30, **A)
    case('v1', iterator='ImageRecordIter_v1', epochs=2, data=True, **A)
    case('v1_round0', iterator='ImageRecordIter_v1', epochs=2, round_batch=0, **A)
    case('uint8_iter', iterator='ImageRecordUInt8Iter', data=True, **A)
    case('int8_iter', iterator='ImageRecordInt8Iter', data=True, mean_r=100, **A)
    case('names', data_name='img', label_name='lbl', **A)
    # errors
    case('err_label_width', label_width=2, **dict(A, path_imgrec=d('b.rec')))
    case('err_label_width1', label_width=3, **A)
    case('err_no_file', **dict(A, path_imgrec=d('nope.rec')))
    case('err_no_rec', **dict(A, path_imgrec=''))
    case('err_4ch', **dict(A, data_shape=(4, 24, 24)))
    case('err_2ch', **dict(A, data_shape=(2, 24, 24)))
    case('err_2d', **dict(A, data_shape=(24, 24)))
    case('err_part', num_parts=2, part_index=2, **A)
    case('err_interp', resize=30, inter_method=5, **A)
    case('err_rrc', random_resized_crop=1, rand_crop=1, **A)
    case('err_dtype', dtype='float17', **A)
    case('err_dtype16', dtype='float16', **A)
    case('err_imglist_id', label_width=2, path_imglist=d('a_missing.lst'), **A)
    # detection
    D = dict(path_imgrec=d('d.rec'), data_shape=(3, 24, 28), batch_size=3)
    case('det', iterator='ImageDetRecordIter', epochs=2, data=True, **D)
    case('det_round0', iterator='ImageDetRecordIter', epochs=2, round_batch=0, **D)
    case('det_pad_width', iterator='ImageDetRecordIter', label_pad_width=30, label_pad_value=-2,
         **D)
    case('det_norm', iterator='ImageDetRecordIter', data=True, mean_r=10, mean_g=20, std_r=2,
         std_b=4, scale=0.5, **D)
    case('det_mirror', iterator='ImageDetRecordIter', data=True, rand_mirror_prob=1, **D)
    case('det_gray', iterator='ImageDetRecordIter', data=True, **dict(D, data_shape=(1, 20, 24)))
    case('det_err_pad_width', iterator='ImageDetRecordIter', label_pad_width=5, **D)
    # CSV and LibSVM
    C = dict(data_csv=d('x.csv'), data_shape=(6,), batch_size=3)
    case('csv', iterator='CSVIter', epochs=3, data=True, **C)
    case('csv_label', iterator='CSVIter', epochs=2, data=True, label_csv=d('y.csv'),
         label_shape=(2,), **C)
    case('csv_round0', iterator='CSVIter', epochs=2, data=True, round_batch=0, **C)
    case('csv_shape', iterator='CSVIter', data=True, **dict(C, data_shape=(2, 3)))
    case('csv_int', iterator='CSVIter', data=True, dtype='int32', **dict(C, data_csv=d('y.csv'),
                                                                         data_shape=(2,)))
    case('csv_err_shape', iterator='CSVIter', **dict(C, data_shape=(5,)))
    S = dict(data_libsvm=d('s.libsvm'), data_shape=(8,), batch_size=3)
    case('libsvm', iterator='LibSVMIter', epochs=3, data=True, **S)
    case('libsvm_round0', iterator='LibSVMIter', epochs=2, data=True, round_batch=0, **S)
    case('libsvm_parts', iterator='LibSVMIter', epochs=2, data=True, num_parts=2, part_index=1,
         **S)


def run_case(c, arrays):
    rec = dict(name=c['name'], iterator=c['iterator'], kwargs=rel(c['kwargs']),
               epochs=c['epochs'], data=c['data'])
    try:
        it = getattr(mx.io, c['iterator'])(**c['kwargs'])
        rec['provide_data'] = [[x.name, list(x.shape), np.dtype(x.dtype).name]
                               for x in it.provide_data]
        rec['provide_label'] = [[x.name, list(x.shape), np.dtype(x.dtype).name]
                                for x in it.provide_label]
        out = []
        for e in range(c['epochs']):
            batches = []
            for j, b in enumerate(it):
                lab = b.label[0]
                lab = lab.tostype('default') if lab.stype != 'default' else lab
                batches.append(dict(pad=int(b.pad), label=lab.asnumpy().tolist(),
                                    index=None if b.index is None else
                                    [int(v) for v in b.index]))
                if c['data'] and e == 0 and (j == 0 or c['name'] in FULL_DATA):
                    x = b.data[0]
                    x = (x.tostype('default') if x.stype != 'default' else x).asnumpy()
                    if x.dtype == np.float32 and np.array_equal(x, np.clip(np.round(x), 0, 255)):
                        x = x.astype(np.uint8)  # smaller; the values are the same
                    arrays['%s:%d:%d' % (c['name'], e, j)] = x
            out.append(batches)
            it.reset()
        rec['epochs_out'] = out
    except Exception as e:  # noqa: BLE001
        rec.update(err_info(e))
    return rec


def main():
    make_inputs()
    with open(d('a_missing.lst'), 'w') as f:
        f.write('0\t1\t2\tx.jpg\n')
    define_cases()
    arrays, records = {}, []
    for c in CASES:
        print(c['name'], file=sys.stderr, flush=True)
        records.append(run_case(c, arrays))
    write_json(os.path.join(OUT, 'cases.json'),
               dict(generator='tools/make_golden_image_record_iter.py',
                    mxnet=mx.__version__, cases=records))
    np.savez_compressed(os.path.join(OUT, 'cases.npz'), **arrays)
    print('%d cases, %d arrays' % (len(records), len(arrays)))


if __name__ == '__main__':
    main()
