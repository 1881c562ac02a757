#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's data layer (``mx.io``, ``get_mnist``).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_io.py

Paths are resolved relative to this file. Output goes to ``tests/golden/io/``:

* ``datadesc.json``     DataDesc reprs/equality/batch axes and DataBatch ``str``
* ``ndarrayiter.json``  NDArrayIter cases: inputs (as generator specs), constructor arguments,
                        provide_data/provide_label reprs and every batch of several epochs
                        (values, dtype, pad, index), or the error MXNet raised and when
* ``idx/``              tiny raw IDX files written here (MNISTIter reads no gzip)
* ``mnistiter.json`` + ``mnistiter.npz``   MNISTIter on those files
* ``mnist/``            the four standard MNIST file names, gzip, with a few synthetic digits
* ``get_mnist.npz``     ``mx.test_utils.get_mnist()`` on ``mnist/`` (its ``download`` is
                        patched to return those local files; nothing is downloaded)
* ``README.md``

Array inputs are ``np.arange(prod(shape)).reshape(shape) * scale + start`` cast to ``dtype``
(see ``make_input``), so a test rebuilds them from the spec. Shuffled cases seed numpy's global
RNG with ``np.random.seed(seed)`` right before construction; NDArrayIter shuffles with
``np.random.shuffle``, whose legacy stream NumPy keeps stable, so neomx can match them exactly.
Only mxnet, numpy and the stdlib are used.
"""
import contextlib
import gzip
import io
import json
import os
import struct
import sys

from _oracle_common import golden_dir

import numpy as np
import mxnet as mx

OUT = golden_dir('io')
GENERATOR = 'tools/make_golden_io.py'


# ----------------------------------------------------------------------------- helpers

def make_input(spec):
    """Build an iterator input from a JSON spec (mirrored in tests/io/_helpers.py)."""
    kind = spec['kind']
    if kind == 'list':
        return [make_input(s) for s in spec['items']]
    if kind == 'dict':
        return {k: make_input(s) for k, s in spec['items'].items()}
    shape = tuple(spec['shape'])
    vals = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    vals = (vals * spec.get('scale', 1.0) + spec.get('start', 0.0)).astype(spec.get('dtype', 'float64'))
    if kind == 'nd':
        return mx.nd.array(vals, dtype=spec.get('dtype', 'float32'))
    assert kind == 'np', kind
    return vals


def arr(shape, start=0.0, dtype='float64', kind='np', scale=1.0):
    return {'kind': kind, 'shape': list(shape), 'start': start, 'dtype': dtype, 'scale': scale}


def core_message(err):
    """The last meaningful line of an MXNet error (no traceback, no timestamps)."""
    lines = [l.strip() for l in str(err).strip().splitlines() if l.strip()]
    return lines[-1] if lines else ''


def batch_record(b):
    return {
        'data': [d.asnumpy().tolist() for d in b.data],
        'data_dtype': [np.dtype(d.dtype).name for d in b.data],
        'label': [l.asnumpy().tolist() for l in b.label] if b.label is not None else None,
        'label_dtype': [np.dtype(l.dtype).name for l in b.label] if b.label is not None else None,
        'pad': b.pad,
        'index': None if b.index is None else np.asarray(b.index).tolist(),
    }


# ----------------------------------------------------------------------------- DataDesc

def datadesc_cases():
    out = {}
    descs = {
        'default': mx.io.DataDesc('data', (2, 3)),
        'int32_nc': mx.io.DataDesc('x', (3,), np.int32, 'NC'),
        'str_dtype_list_shape': mx.io.DataDesc('x', [3], 'float32'),
        'tnc': mx.io.DataDesc('seq', (5, 2, 8), np.float32, 'TNC'),
        'layout_none': mx.io.DataDesc('y', (4,), np.float64, None),
    }
    out['repr'] = {k: repr(v) for k, v in descs.items()}
    out['str'] = {k: str(v) for k, v in descs.items()}
    out['eq_tuple'] = mx.io.DataDesc('data', (2, 3)) == ('data', (2, 3))
    out['eq_other_dtype'] = mx.io.DataDesc('data', (2, 3)) == mx.io.DataDesc('data', (2, 3), np.int32)
    out['batch_axis'] = {str(l): mx.io.DataDesc.get_batch_axis(l)
                         for l in ['NCHW', 'TNC', 'NTC', 'CHW', None]}
    out['get_list'] = [repr(d) for d in mx.io.DataDesc.get_list(
        [('a', (1, 2)), ('b', (3,))], [('a', np.int32), ('b', np.float16)])]
    out['get_list_no_types'] = [repr(d) for d in mx.io.DataDesc.get_list([('a', (1, 2))], None)]
    out['batch_str'] = str(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))], pad=1))
    out['batch_str_nolabel'] = str(mx.io.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((2, 5))]))
    out['batch_defaults'] = {k: getattr(mx.io.DataBatch([]), k) for k in
                             ['label', 'pad', 'index', 'bucket_key', 'provide_data', 'provide_label']}
    return out


# ----------------------------------------------------------------------------- NDArrayIter

def ndarrayiter_specs():
    """(id, data spec, label spec or None, kwargs, epochs, seed or None)."""
    x10 = arr((10, 2))
    y10 = arr((10,), start=100.0)
    cases = [
        ('pad_10_bs4', x10, y10, dict(batch_size=4), 2, None),
        ('discard_10_bs4', x10, y10, dict(batch_size=4, last_batch_handle='discard'), 2, None),
        ('rollover_10_bs4', x10, y10, dict(batch_size=4, last_batch_handle='roll_over'), 4, None),
        ('rollover_10_bs3', x10, y10, dict(batch_size=3, last_batch_handle='roll_over'), 4, None),
        ('rollover_nolabel', arr((7, 3)), None, dict(batch_size=3, last_batch_handle='roll_over'), 3, None),
        ('pad_exact', arr((8, 1)), arr((8,)), dict(batch_size=4), 2, None),
        ('pad_bs_gt_n', arr((3, 2)), arr((3,)), dict(batch_size=8), 2, None),
        ('pad_bs_mult_n', arr((3, 2)), arr((3,)), dict(batch_size=7), 1, None),
        ('discard_bs_gt_n', arr((3, 2)), None, dict(batch_size=8, last_batch_handle='discard'), 2, None),
        ('default_bs1', arr((3, 2)), None, dict(), 1, None),
        ('image_nchw', arr((5, 1, 2, 3)), arr((5,)), dict(batch_size=2), 1, None),
        ('label_2d', arr((5, 2)), arr((5, 3), start=-1.0, scale=0.5), dict(batch_size=2), 1, None),
        ('names', arr((4, 2)), arr((4,)), dict(batch_size=2, data_name='x', label_name='y'), 1, None),
        ('dict_sorted', {'kind': 'dict', 'items': {'b': arr((5, 2)), 'a': arr((5, 3), start=50.0)}},
         {'kind': 'dict', 'items': {'lbl': arr((5,))}}, dict(batch_size=2), 1, None),
        ('list_inputs', {'kind': 'list', 'items': [arr((4, 2)), arr((4,), start=9.0)]},
         {'kind': 'list', 'items': [arr((4,)), arr((4, 1), start=3.0)]}, dict(batch_size=3), 1, None),
        ('list_12_sorted', {'kind': 'list', 'items': [arr((2, 1), start=10.0 * i) for i in range(12)]},
         None, dict(batch_size=2), 1, None),
        ('list_of_one', {'kind': 'list', 'items': [arr((4, 2))]}, None, dict(batch_size=2), 1, None),
        ('int_numpy', arr((5, 2), dtype='int64'), arr((5,), dtype='int32'), dict(batch_size=2), 1, None),
        ('int_ndarray', arr((5, 2), dtype='int32', kind='nd'), arr((5,), kind='nd', dtype='float64'),
         dict(batch_size=2), 1, None),
        ('int_ndarray_shuffled', arr((5, 2), dtype='int32', kind='nd'), None,
         dict(batch_size=2, shuffle=True), 1, 3),
        ('layout_tnc', arr((2, 3, 4)), None, dict(batch_size=2, layout='TNC'), 1, None),
        ('bogus_handle', arr((5, 2)), None, dict(batch_size=2, last_batch_handle='bogus'), 2, None),
        ('shuffle_pad', x10, y10, dict(batch_size=4, shuffle=True), 3, 7),
        ('shuffle_discard', arr((9, 2)), arr((9,)), dict(batch_size=4, shuffle=True,
                                                         last_batch_handle='discard'), 2, 11),
        ('shuffle_rollover', x10, y10, dict(batch_size=4, shuffle=True,
                                            last_batch_handle='roll_over'), 3, 5),
        ('shuffle_dict', {'kind': 'dict', 'items': {'b': arr((6, 2)), 'a': arr((6,), start=50.0)}},
         arr((6,)), dict(batch_size=3, shuffle=True), 2, 1),
        # errors
        ('err_rollover_bs_gt_n', arr((3, 1)), None, dict(batch_size=8, last_batch_handle='roll_over'), 2, None),
        ('err_label_short', arr((5,)), arr((3,)), dict(batch_size=2), 1, None),
    ]
    return cases


def run_ndarrayiter_case(cid, dspec, lspec, kwargs, epochs, seed):
    rec = {'id': cid, 'data': dspec, 'label': lspec, 'kwargs': kwargs, 'epochs': epochs,
           'seed': seed}
    if seed is not None:
        np.random.seed(seed)
    data = make_input(dspec)
    label = make_input(lspec) if lspec is not None else None
    it = mx.io.NDArrayIter(data, label, **kwargs)
    rec['provide_data'] = [repr(d) for d in it.provide_data]
    rec['provide_label'] = [repr(d) for d in it.provide_label]
    rec['num_data'] = int(it.num_data)
    rec['batch_size'] = it.batch_size
    out = []
    try:
        for _ in range(epochs):
            out.append([batch_record(b) for b in it])
            it.reset()
    except Exception as e:  # noqa: BLE001
        rec['error'] = {'type': type(e).__name__, 'message': core_message(e),
                        'epoch': len(out)}
    rec['batches'] = out
    return rec


def construct_errors():
    """Inputs NDArrayIter rejects at construction."""
    cases = {
        'none': 'None', 'empty_list': '[]', 'int': '5', 'str': "'abc'", 'tuple': '(np.zeros((2, 2)),)',
        'dict_bad_value': "{'a': 'x'}",
    }
    out = {}
    for k, src in cases.items():
        try:
            mx.io.NDArrayIter(eval(src))
            out[k] = {'src': src, 'error': None}
        except Exception as e:  # noqa: BLE001
            out[k] = {'src': src, 'error': {'type': type(e).__name__, 'message': core_message(e)}}
    return out


# ----------------------------------------------------------------------------- IDX / MNIST

@contextlib.contextmanager
def _open_out(path, compress):
    """A binary writer; gzip output is byte-for-byte reproducible (no name, mtime 0)."""
    with open(path, 'wb') as raw:
        if not compress:
            yield raw
            return
        with gzip.GzipFile(filename='', mode='wb', fileobj=raw, mtime=0) as f:
            yield f


def write_images(path, images, magic=2051, compress=False):
    with _open_out(path, compress) as f:
        f.write(struct.pack('>IIII', magic, *images.shape))
        f.write(images.astype(np.uint8).tobytes())


def write_labels(path, labels, magic=2049, compress=False):
    with _open_out(path, compress) as f:
        f.write(struct.pack('>II', magic, len(labels)))
        f.write(np.asarray(labels, np.uint8).tobytes())


def tiny_images(n, rows, cols, seed):
    """Images whose pixel (0, 0) is the example number, the rest pseudo-random (0..255)."""
    imgs = np.random.RandomState(seed).randint(0, 256, size=(n, rows, cols)).astype(np.uint8)
    imgs[:, 0, 0] = np.arange(n)
    imgs[0, 0, 1] = 255
    return imgs


def mnist_iter_cases(idx_dir):
    tiny_img, tiny_lbl = os.path.join(idx_dir, 'tiny-images-idx3-ubyte'), os.path.join(idx_dir, 'tiny-labels-idx1-ubyte')
    small_img, small_lbl = os.path.join(idx_dir, 'small-images-idx3-ubyte'), os.path.join(idx_dir, 'small-labels-idx1-ubyte')
    write_images(tiny_img, tiny_images(10, 28, 28, 1))
    write_labels(tiny_lbl, (np.arange(10) * 7) % 10)
    write_images(small_img, tiny_images(7, 5, 7, 2))
    write_labels(small_lbl, np.arange(7) % 3)
    rel = lambda p: os.path.relpath(p, OUT)
    specs = [
        ('tiny_bs4', dict(image=tiny_img, label=tiny_lbl, batch_size=4, shuffle=False)),
        ('tiny_bs4_flat', dict(image=tiny_img, label=tiny_lbl, batch_size=4, shuffle=False, flat=True)),
        ('tiny_bs10', dict(image=tiny_img, label=tiny_lbl, batch_size=10, shuffle=False)),
        ('tiny_shuffle', dict(image=tiny_img, label=tiny_lbl, batch_size=3, shuffle=True, seed=3)),
        ('tiny_part_2_1', dict(image=tiny_img, label=tiny_lbl, batch_size=2, shuffle=False,
                               num_parts=2, part_index=1)),
        ('tiny_part_3_0', dict(image=tiny_img, label=tiny_lbl, batch_size=1, shuffle=False,
                               num_parts=3, part_index=0)),
        ('tiny_part_3_2', dict(image=tiny_img, label=tiny_lbl, batch_size=1, shuffle=False,
                               num_parts=3, part_index=2)),
        ('small_5x7', dict(image=small_img, label=small_lbl, batch_size=2, shuffle=False)),
        ('small_5x7_flat', dict(image=small_img, label=small_lbl, batch_size=3, shuffle=False, flat=True)),
        ('names', dict(image=small_img, label=small_lbl, batch_size=2, shuffle=False,
                       data_name='img', label_name='lbl')),
        ('err_part_oob', dict(image=tiny_img, label=tiny_lbl, batch_size=2, num_parts=2, part_index=2)),
        ('err_bs_gt_n', dict(image=tiny_img, label=tiny_lbl, batch_size=11, shuffle=False)),
    ]
    meta, arrays = [], {}
    for cid, kw in specs:
        kw = dict(kw, silent=True)
        rec = {'id': cid, 'kwargs': {k: (rel(v) if k in ('image', 'label') else v) for k, v in kw.items()}}
        try:
            it = mx.io.MNISTIter(**kw)
        except BaseException as e:  # noqa: BLE001  (StopIteration too)
            rec['error'] = {'type': type(e).__name__, 'message': core_message(e)}
            meta.append(rec)
            continue
        rec['provide_data'] = [repr(d) for d in it.provide_data]
        rec['provide_label'] = [repr(d) for d in it.provide_label]
        rec['batch_size'] = it.batch_size
        epochs = []
        for e in range(2):
            batches = []
            for i, b in enumerate(it):
                arrays[f'{cid}/e{e}/b{i}/data'] = b.data[0].asnumpy()
                arrays[f'{cid}/e{e}/b{i}/label'] = b.label[0].asnumpy()
                batches.append({'data_shape': list(b.data[0].shape), 'data_dtype': np.dtype(b.data[0].dtype).name,
                                'label_shape': list(b.label[0].shape),
                                'label_dtype': np.dtype(b.label[0].dtype).name, 'pad': b.pad,
                                'index': None if b.index is None else np.asarray(b.index).tolist(),
                                'index_dtype': None if b.index is None else np.asarray(b.index).dtype.name})
            epochs.append(batches)
            it.reset()
        rec['epochs'] = epochs
        meta.append(rec)
    return meta, arrays


def get_mnist_case(mnist_dir):
    train = tiny_images(12, 28, 28, 3)
    test = tiny_images(5, 28, 28, 4)
    files = {
        'train-images-idx3-ubyte.gz': lambda p: write_images(p, train, compress=True),
        'train-labels-idx1-ubyte.gz': lambda p: write_labels(p, np.arange(12) % 10, compress=True),
        't10k-images-idx3-ubyte.gz': lambda p: write_images(p, test, compress=True),
        't10k-labels-idx1-ubyte.gz': lambda p: write_labels(p, [9, 0, 255, 3, 128], compress=True),
    }
    for name, write in files.items():
        write(os.path.join(mnist_dir, name))

    def local_download(url, *args, **kwargs):
        return os.path.join(mnist_dir, url.rsplit('/', 1)[-1])

    orig = mx.test_utils.download
    mx.test_utils.download = local_download
    try:
        res = mx.test_utils.get_mnist()
    finally:
        mx.test_utils.download = orig
    return {k: v for k, v in res.items()}


# ----------------------------------------------------------------------------- main

def main():
    os.makedirs(OUT, exist_ok=True)
    idx_dir = os.path.join(OUT, 'idx')
    mnist_dir = os.path.join(OUT, 'mnist')
    os.makedirs(idx_dir, exist_ok=True)
    os.makedirs(mnist_dir, exist_ok=True)
    stamp = {'generator': GENERATOR, 'mxnet': mx.__version__, 'numpy': np.__version__}

    with open(os.path.join(OUT, 'datadesc.json'), 'w') as f:
        json.dump(dict(stamp, **datadesc_cases()), f, indent=1, sort_keys=True)

    cases = [run_ndarrayiter_case(*c) for c in ndarrayiter_specs()]
    with open(os.path.join(OUT, 'ndarrayiter.json'), 'w') as f:
        json.dump(dict(stamp, cases=cases, construct_errors=construct_errors()), f, sort_keys=True)

    meta, arrays = mnist_iter_cases(idx_dir)
    with open(os.path.join(OUT, 'mnistiter.json'), 'w') as f:
        json.dump(dict(stamp, cases=meta), f, indent=1, sort_keys=True)
    np.savez_compressed(os.path.join(OUT, 'mnistiter.npz'), **arrays)

    res = get_mnist_case(mnist_dir)
    np.savez_compressed(os.path.join(OUT, 'get_mnist.npz'), **res)

    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README.format(**stamp))
    print('wrote', OUT, file=sys.stderr)


README = """# MXNet golden fixtures: io

Produced by `{generator}` with the real Apache MXNet {mxnet} (CPU build, numpy {numpy}).
Regenerate from the repository root with `tools/mxnet-oracle {generator}`
(the script resolves its output paths relative to its own location).

* `datadesc.json`: `DataDesc` repr/str/equality, `get_batch_axis`, `get_list`, `DataBatch` str.
* `ndarrayiter.json`: `NDArrayIter` cases. Inputs are specs (`kind` np/nd/list/dict, `shape`,
  `start`, `scale`, `dtype`: values `arange(prod(shape)).reshape(shape)*scale+start`); each
  case records `provide_data`/`provide_label` reprs and, per epoch (with `reset()` between),
  every batch's data/label values, dtypes, `pad` and `index`; `error` gives the exception
  MXNet raised and the epoch in which it happened. Shuffled cases call `np.random.seed(seed)`
  just before construction. `construct_errors` lists inputs rejected by the constructor.
* `idx/`: tiny raw IDX files (pixel (0,0) of image i is i). `mnistiter.json` +
  `mnistiter.npz`: `MNISTIter` cases on them (keys `<id>/e<epoch>/b<batch>/data|label`;
  image/label paths are relative to this directory). MXNet's shuffle order (`std::shuffle`)
  is not reproduced by neomx; for `tiny_shuffle` only the per-epoch multiset and the
  epoch-to-epoch order equality are meaningful.
* `mnist/` + `get_mnist.npz`: the four standard MNIST names (gzip, synthetic digits, 12 train
  and 5 test images; one test label is 255 and one 128, to show the int8 wrap-around) and the
  result of MXNet's `mx.test_utils.get_mnist()` on them, with its `download` patched to return
  the local files.
"""

if __name__ == '__main__':
    with contextlib.redirect_stdout(io.StringIO()):
        main()
