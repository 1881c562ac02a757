#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's checkpoint (NDArray file format) tests.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_checkpoint.py

Output goes to ``tests/golden/checkpoint/`` (paths are resolved relative to this file):

* ``*.nd``            files written by ``mx.nd.save`` (one per dtype, list/dict/single/empty
                      saves, the 68-byte ``[array([7.])]`` example, contexts cpu(1) and
                      cpu_pinned, a zero-size array, a 0-d array, row_sparse and csr arrays,
                      a V3 file written under numpy shape semantics), and hand-built files in
                      layouts MXNet 1.9.1 reads but no longer writes (V1 records, pre-V1
                      records, a GPU record, bfloat16); MXNet loaded each one back here
* ``mlp-symbol.json``, ``mlp-0003.params``  ``mx.model.save_checkpoint`` of a tiny MLP with
                      BatchNorm (so it has aux states)
* ``manifest.json``   per file: what was saved (dtype, shape, values, context, names, in
                      order) and what MXNet's ``mx.nd.load`` returned, or the error it raised
* ``README.md``       this description for the fixture folder

Only mxnet, numpy and the stdlib are used; inputs come from a seeded ``np.random.RandomState``.
"""
import hashlib
import os
import struct

from _oracle_common import golden_dir, write_json

import numpy as np
import mxnet as mx
from mxnet.util import np_shape

OUT = golden_dir('checkpoint')
GENERATOR = 'tools/make_golden_checkpoint.py'
RNG = np.random.RandomState(20240611)
DTYPES = ['float32', 'float64', 'float16', 'uint8', 'int32', 'int8', 'int64', 'bool']
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


def values_of(dtype, shape, specials=True):
    """Deterministic test values; with ``specials``, the first ones are NaN, inf, -inf, -0.0
    (floats, 8 values or more) or the dtype's min and max (integers, 2 values or more)."""
    n = int(np.prod(shape))
    if dtype == 'bool':
        return RNG.rand(n).reshape(shape) > 0.5
    if dtype.startswith('float'):
        v = (RNG.randn(n) * 100).astype(dtype)
        if specials and n >= 8:
            v[:4] = [np.nan, np.inf, -np.inf, -0.0]
        return v.reshape(shape)
    info = np.iinfo(dtype)
    v = RNG.randint(max(info.min, -2**31), min(info.max, 2**31 - 1), size=n, dtype=np.int64)
    v = v.astype(dtype)
    if specials and n >= 2:
        v[:2] = [info.min, info.max]
    return v.reshape(shape)


def jsonable(arr):
    """Array values as JSON (floats keep NaN/Infinity, which Python's json writes)."""
    arr = np.asarray(arr)
    if arr.dtype == np.bool_:
        return arr.reshape(-1).tolist()
    if arr.dtype.kind == 'f':
        return [float(x) for x in arr.astype(np.float64).reshape(-1)]
    return [int(x) for x in arr.reshape(-1)]


def describe(arr, ctx=None):
    a = arr.asnumpy()
    if a.dtype.names == ('bfloat16',):  # MXNet's numpy stand-in for bfloat16: raw uint16 bits
        d = {'dtype': 'bfloat16', 'shape': list(arr.shape),
             'bits': jsonable(a.view('<u2')), 'values': jsonable(arr.astype('float32').asnumpy())}
    else:
        d = {'dtype': np.dtype(arr.dtype).name, 'shape': list(arr.shape), 'values': jsonable(a)}
    if ctx is not None:
        d['context'] = [ctx.device_type, ctx.device_id]
    return d


def describe_loaded(loaded):
    if isinstance(loaded, dict):
        return {'kind': 'dict', 'names': list(loaded.keys()),
                'arrays': [describe(v, v.context) for v in loaded.values()]}
    return {'kind': 'list', 'arrays': [describe(v, v.context) for v in loaded]}


def core_error(e):
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else str(e)


def write_mxnet(name, data, manifest, note):
    """mx.nd.save ``data`` to ``name``; record what was saved and what MXNet loads back."""
    path = os.path.join(OUT, name)
    mx.nd.save(path, data)
    saved_items = list(data.items()) if isinstance(data, dict) else \
        [(None, v) for v in (data if isinstance(data, list) else [data])]
    entry = {'note': note, 'writer': 'mxnet',
             'saved': {'kind': 'dict' if isinstance(data, dict) else
                       ('list' if isinstance(data, list) else 'ndarray'),
                       'names': [k for k, _ in saved_items] if isinstance(data, dict) else [],
                       'arrays': [describe(v, v.context) for _, v in saved_items]}}
    finish(name, entry, manifest)


def write_raw(name, raw, manifest, note, np_semantics=False):
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(raw)
    finish(name, {'note': note, 'writer': 'hand-built'}, manifest, np_semantics)


def finish(name, entry, manifest, np_semantics=False):
    path = os.path.join(OUT, name)
    raw = open(path, 'rb').read()
    entry['size'] = len(raw)
    entry['sha256'] = hashlib.sha256(raw).hexdigest()
    try:
        if np_semantics:
            with np_shape(True):
                entry['mxnet_load'] = describe_loaded(mx.nd.load(path))
            entry['mxnet_load']['np_shape'] = True
        else:
            entry['mxnet_load'] = describe_loaded(mx.nd.load(path))
    except Exception as e:  # noqa: BLE001  (MXNet raises MXNetError or a plain Exception)
        entry['mxnet_load_error'] = {'type': type(e).__name__, 'message': core_error(e)}
    manifest['files'][name] = entry


# --- hand-built records -----------------------------------------------------------------------
def record(shape, raw, magic=V2, dtype=0, dev=(1, 0), dim_fmt='<q'):
    head = struct.pack('<I', magic)
    if magic in (V2, V3):
        head += struct.pack('<i', 0)
    if magic in (V1, V2, V3):
        head += struct.pack('<i', len(shape))
    head += b''.join(struct.pack(dim_fmt, d) for d in shape)
    return head + struct.pack('<iii', dev[0], dev[1], dtype) + raw


def nd_file(records, names=()):
    out = struct.pack('<QQQ', 0x112, 0, len(records)) + b''.join(records)
    out += struct.pack('<Q', len(names))
    for n in names:
        b = n.encode('utf-8')
        out += struct.pack('<Q', len(b)) + b
    return out


README = """# MXNet 1.9.1 golden fixtures: NDArray files and checkpoints

Produced by the real Apache MXNet 1.9.1 (CPU build, numpy 1.23) with
`tools/make_golden_checkpoint.py`, for `tests/checkpoint/`. To regenerate, run
`tools/mxnet-oracle tools/make_golden_checkpoint.py` from the repository root.

* `*.nd`: files written by `mx.nd.save`, plus hand-built ones (`writer: hand-built` in the
  manifest) in layouts MXNet 1.9.1 reads but does not write (V1 and pre-V1 records, GPU
  records, bfloat16). `v3_np_shape.nd` was written under `np_shape(True)`.
* `mlp-symbol.json`, `mlp-0003.params`: `mx.model.save_checkpoint('mlp', 3, ...)` of a tiny
  MLP with BatchNorm.
* `manifest.json`: for each file, `saved` (what went in: dtype, shape, flat values, context,
  names in order), `size`, `sha256`, and `mxnet_load` (what MXNet's `mx.nd.load` returned:
  list or dict, names, dtype, shape, flat values, context) or `mxnet_load_error`. Float values
  are JSON numbers, with NaN/Infinity as Python's json writes them; bfloat16 comes back from
  MXNet as raw uint16 bits (its numpy has no bfloat16).
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(('.nd', '.params', '.json')):
            os.unlink(os.path.join(OUT, f))
    manifest = {'generator': GENERATOR, 'mxnet_version': mx.__version__,
                'numpy_version': np.__version__, 'files': {}}

    for dt in DTYPES:
        arr = mx.nd.array(values_of(dt, (2, 3, 4)), dtype=dt)
        write_mxnet(f'dtype_{dt}.nd', [arr], manifest,
                    f'list save of one {dt} array of shape (2,3,4)')

    write_mxnet('seven.nd', [mx.nd.array([7.])], manifest, 'the 68-byte save(f, [array([7.])])')
    write_mxnet('empty_list.nd', [], manifest, 'save(f, [])')
    write_mxnet('empty_dict.nd', {}, manifest, 'save(f, {}) writes the same bytes as []')
    write_mxnet('single.nd', mx.nd.array(values_of('float32', (3,))), manifest,
                'save(f, ndarray): a one-element list')
    mixed = [mx.nd.array(values_of(dt, s), dtype=dt)
             for dt, s in [('float32', (5,)), ('int64', (2, 2)), ('float16', (1, 2, 1, 3)),
                           ('uint8', (7,)), ('float64', (3, 1))]]
    write_mxnet('list.nd', mixed, manifest, 'list of arrays of several dtypes and shapes')
    named = {'arg:fc1_weight': mx.nd.array(values_of('float32', (4, 3))),
             'aux:bn_moving_var': mx.nd.array(values_of('float32', (4,))),
             'wé:ight ünïcode': mx.nd.array(values_of('int32', (2,)), dtype='int32'),
             '': mx.nd.array(values_of('float64', (1,)), dtype='float64'),
             'b': mx.nd.array(values_of('bool', (3,)), dtype='bool')}
    write_mxnet('dict.nd', named, manifest,
                'dict save: utf-8 names, an empty name, insertion order')
    write_mxnet('cpu1.nd', {'w': mx.nd.array([1, 2, 3], ctx=mx.cpu(1))}, manifest,
                'an array on cpu(1): dev_id 1 is written, load gives cpu(0)')
    write_mxnet('pinned.nd', {'w': mx.nd.array([1, 2, 3], ctx=mx.cpu_pinned(0))}, manifest,
                'an array on cpu_pinned(0): dev_type 3')
    write_mxnet('scalar0d.nd', [mx.nd.array(np.array(2.5, np.float32))], manifest,
                'a 0-d array: written with ndim 0 plus its data, which MXNet cannot load back')

    # A zero-size array: MXNet's legacy shape semantics cannot create one, but loads one.
    zs = mx.nd.load_frombuffer(nd_file([record((2, 0), b'')]))[0]
    write_mxnet('zero_size.nd', [zs, mx.nd.array([1.5])], manifest,
                'a (2,0) array (loaded from a hand-built file, then saved by MXNet)')

    dense = np.zeros((5, 3), np.float32)
    dense[1] = [1, 2, 3]
    dense[4] = [4, 5, 6]
    write_mxnet('row_sparse.nd', {'emb': mx.nd.array(dense).tostype('row_sparse')}, manifest,
                'a row_sparse array (neomx loads it dense)')
    write_mxnet('csr.nd', [mx.nd.array(dense).tostype('csr')], manifest,
                'a csr array (neomx loads it dense)')
    with np_shape(True):
        v3 = [mx.nd.array(np.array(3.0, np.float32)), mx.nd.zeros((0, 3)), mx.nd.ones((2,))]
        mx.nd.save(os.path.join(OUT, 'v3_np_shape.nd'), v3)
    finish('v3_np_shape.nd', {'note': 'saved under np_shape(True): magic 0xF993FACA, a 0-d and '
                                      'a (0,3) array; MXNet loads it only under np_shape',
                              'writer': 'mxnet'}, manifest, np_semantics=True)
    try:
        mx.nd.load(os.path.join(OUT, 'v3_np_shape.nd'))
    except Exception as e:  # noqa: BLE001
        manifest['files']['v3_np_shape.nd']['mxnet_load_error_legacy'] = {
            'type': type(e).__name__, 'message': core_error(e)}

    f32 = lambda *v: np.array(v, np.float32).tobytes()  # noqa: E731
    write_raw('v1.nd', nd_file([record((2,), f32(1, 2), magic=V1),
                                record((), f32(3), magic=V1)], ['a', 'b']), manifest,
              'hand-built V1 records (magic 0xF993FAC8, no stype), one of them 0-d')
    write_raw('pre_v1.nd', nd_file([record((1, 2), f32(5, 6), magic=2, dim_fmt='<I')]), manifest,
              'a hand-built pre-V1 record: the magic is the ndim, dims are u32')
    write_raw('gpu.nd', nd_file([record((2,), f32(1, 2), dev=(2, 0)),
                                 record((1,), f32(4), dev=(2, 5))], ['g0', 'g5']), manifest,
              'hand-built records on gpu(0) and gpu(5) (a CPU-only MXNet loads them on cpu(0))')
    write_raw('bfloat16.nd', nd_file([record((3,), np.array([0x3FC0, 0xC000, 0x7F80], '<u2')
                                             .tobytes(), dtype=12)]), manifest,
              'hand-built bfloat16 record (type flag 12): 1.5, -2.0, inf; MXNet returns the raw '
              'uint16 bits')

    # A tiny MLP checkpoint with aux states (BatchNorm).
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    net = mx.sym.BatchNorm(net, name='bn1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    arg_shapes, _, aux_shapes = net.infer_shape(data=(2, 5))
    args = {n: mx.nd.array(values_of('float32', s, specials=False) / 100) for n, s in
            zip(net.list_arguments(), arg_shapes) if n not in ('data', 'softmax_label')}
    auxs = {n: mx.nd.array(np.abs(values_of('float32', s, specials=False)) / 100) for n, s in
            zip(net.list_auxiliary_states(), aux_shapes)}
    prefix = os.path.join(OUT, 'mlp')
    mx.model.save_checkpoint(prefix, 3, net, args, auxs)
    sym2, arg2, aux2 = mx.model.load_checkpoint(prefix, 3)
    manifest['checkpoint'] = {
        'prefix': 'mlp', 'epoch': 3,
        'arg_params': {k: describe(v) for k, v in args.items()},
        'aux_params': {k: describe(v) for k, v in auxs.items()},
        'list_arguments': sym2.list_arguments(),
        'list_auxiliary_states': sym2.list_auxiliary_states(),
        'loaded_arg_names': list(arg2), 'loaded_aux_names': list(aux2),
        'params_sha256': hashlib.sha256(open(prefix + '-0003.params', 'rb').read()).hexdigest(),
    }
    finish('mlp-0003.params', {'note': 'save_checkpoint params: arg: keys then aux: keys',
                               'writer': 'mxnet'}, manifest)

    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README)
    write_json(os.path.join(OUT, 'manifest.json'), manifest)
    print(f'wrote {len(manifest["files"])} files to {OUT}')


if __name__ == '__main__':
    main()
