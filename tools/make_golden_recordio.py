#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.recordio``.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_recordio.py

Output goes to ``tests/golden/recordio/``:

* ``mxnet.rec`` + ``mxnet.idx``  written by MXNet's ``MXIndexedRecordIO`` from the payloads of
                                 ``records.json`` (empty, unaligned lengths, the RecordIO magic
                                 at aligned and unaligned offsets, so multi-part records with
                                 cflag 1/2/3, and ``pack``-ed image-record headers)
* ``records.json``  the payloads (hex), their keys, ``tell()`` after each write, and
                    ``pack``/``unpack`` cases (headers with number and array labels)

Only mxnet, numpy and the stdlib are used.
"""
import os
import struct

from _oracle_common import golden_dir, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('recordio')
GENERATOR = 'tools/make_golden_recordio.py'
MAGIC = struct.pack('<I', 0xced7230a)


def payloads():
    """(key, bytes) pairs covering the writer's cases."""
    r = np.random.RandomState(13)
    items = [b'', b'a', b'ab', b'abc', b'abcd', b'abcde', MAGIC, b'xxxx' + MAGIC + b'yy',
             MAGIC + MAGIC, b'ab' + MAGIC + b'cd', b'x' + MAGIC + b'yyy' + MAGIC,
             b'1234' + MAGIC + b'5678' + MAGIC + b'9', r.bytes(97), r.bytes(1000)]
    items.append(mx.recordio.pack(mx.recordio.IRHeader(0, 3.0, 17, 0), b'image-bytes'))
    items.append(mx.recordio.pack(mx.recordio.IRHeader(0, [1.5, 2.0, -3.0], 18, 5), b'jpg'))
    keys = [3 * i + 1 for i in range(len(items))]
    return list(zip(keys, items))


def pack_cases():
    cases = [((0, 3.0, 17, 0), b'abc'), ((7, 2.5, 5, 9), b''), ((0, [1, 2, 3], 5, 0), b'xyz'),
             ((0, np.array([0.25], np.float32), 1, 2), b'q'), ((4, 1, 2 ** 40, 2 ** 33), b'zz'),
             ((0, [], 3, 0), b'e')]
    out = []
    for header, s in cases:
        packed = mx.recordio.pack(mx.recordio.IRHeader(*header), s)
        h, rest = mx.recordio.unpack(packed)
        label = h.label.tolist() if isinstance(h.label, np.ndarray) else h.label
        out.append({'header': [header[0], np.asarray(header[1]).tolist(), header[2], header[3]],
                    'payload': s.hex(), 'packed': packed.hex(),
                    'unpacked': {'flag': h.flag, 'label': label, 'id': h.id, 'id2': h.id2,
                                 'rest': rest.hex()}})
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    rec_path, idx_path = os.path.join(OUT, 'mxnet.rec'), os.path.join(OUT, 'mxnet.idx')
    items = payloads()
    w = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, 'w')
    tells = [w.tell()]
    for key, s in items:
        w.write_idx(key, s)
        tells.append(w.tell())
    w.close()
    r = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, 'r')
    assert all(r.read_idx(k) == s for k, s in items)
    r.close()
    write_json(os.path.join(OUT, 'records.json'), {
        'generator': GENERATOR, 'mxnet': mx.__version__,
        'records': [{'key': k, 'payload': s.hex()} for k, s in items],
        'tell': tells, 'pack': pack_cases()})


if __name__ == '__main__':
    main()
