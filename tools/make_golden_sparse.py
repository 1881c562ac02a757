#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for sparse NDArrays (issue 16).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_sparse.py

Output goes to ``tests/golden/sparse/``:

* ``names.json``   the public functions of ``mx.nd.sparse`` and ``mx.sym.sparse``
* ``cases.json``   expressions over fixed inputs (``INPUTS`` below, rebuilt by the tests from
                   the same seeds): result storage type, dense value, the sparse parts, whether
                   MXNet logged its storage fallback message, or the error raised
* ``check_format.json``  invalid csr/row_sparse structures and MXNet's check_format errors
* ``*.params``     ``mx.nd.save`` files of csr and row_sparse arrays (``files.json`` lists them
                   with their arrays' parts)

Only mxnet, numpy and the stdlib are used.
"""
import os
import sys
import tempfile

from _oracle_common import golden_dir, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('sparse')
GENERATOR = 'tools/make_golden_sparse.py'


def inputs_source():
    """Python source building the inputs; the tests exec it with neomx as ``mx``."""
    return '''
rs = np.random.RandomState(7)
D = (rs.randint(-3, 4, (6, 5)) * (rs.rand(6, 5) < 0.45)).astype(np.float32)
D[2] = 0
D[4] = 0
D2 = (rs.randint(-3, 4, (6, 5)) * (rs.rand(6, 5) < 0.45)).astype(np.float32)
D2[0] = 0
D2[4] = 0
W = rs.randint(-2, 3, (5, 3)).astype(np.float32)
V = rs.randint(-2, 3, (6, 3)).astype(np.float32)
U = rs.randint(-2, 3, (3, 6)).astype(np.float32)
P = (rs.rand(6, 5) * 4).astype(np.float32)
c = mx.nd.array(D).tostype('csr')
c2 = mx.nd.array(D2).tostype('csr')
r = mx.nd.array(D).tostype('row_sparse')
r2 = mx.nd.array(D2).tostype('row_sparse')
d = mx.nd.array(D2)
p = mx.nd.array(P)
pc = p.tostype('csr')
pr = p.tostype('row_sparse')
w = mx.nd.array(W)
v = mx.nd.array(V)
u = mx.nd.array(U)
idx = mx.nd.array([0, 3, 5], dtype='int64')
'''


CASES = [
    # conversions
    "c", "r", "d.tostype('csr')", "d.tostype('row_sparse')", "c.tostype('default')",
    "r.tostype('default')", "mx.nd.cast_storage(d, stype='csr')",
    "mx.nd.cast_storage(c, stype='default')", "mx.nd.sparse.cast_storage(r, 'default')",
    "c.tostype('row_sparse')", "r.tostype('csr')",
    "mx.nd.sparse.zeros('csr', (3, 4))", "mx.nd.sparse.zeros('row_sparse', (3, 4, 2))",
    "mx.nd.sparse.zeros('row_sparse', (3, 4), dtype='float16')",
    "mx.nd.sparse.empty('csr', (2, 2))", "mx.nd.sparse.array(c)", "mx.nd.sparse.array(r)",
    "mx.nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))",
    "mx.nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]))",
    "mx.nd.sparse.csr_matrix((np.array([1, 2], dtype='float64'), [0, 2], [0, 1, 2]))",
    "mx.nd.sparse.csr_matrix((2, 3))", "mx.nd.sparse.csr_matrix(D)",
    "mx.nd.sparse.csr_matrix(d, dtype='float64')",
    "mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 3]), shape=(5, 2))",
    "mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 3]))",
    "mx.nd.sparse.row_sparse_array((4, 2))", "mx.nd.sparse.row_sparse_array((4, 2, 3))",
    "mx.nd.sparse.row_sparse_array(D2)", "mx.nd.sparse.row_sparse_array(r)",
    "r.astype('int32')", "c.astype('float64')", "c.copy()", "r.copy()",
    "c.copyto(mx.nd.zeros((6, 5)))", "r.copyto(mx.nd.zeros((6, 5)))",
    "c.copyto(mx.cpu(1))", "c.copyto(r)",
    "c[1:4]", "c[2]", "c[-1]", "c[:]", "c[::2]", "r[:]", "r[1]",
    # dot
    "mx.nd.dot(c, w)", "mx.nd.sparse.dot(c, w)", "mx.nd.dot(c, v, transpose_a=True)",
    "mx.nd.dot(u, c)", "mx.nd.dot(w.T, c, transpose_b=True)", "mx.nd.dot(c, c2, transpose_b=True)",
    "mx.nd.dot(r, w)", "mx.nd.dot(c, r2.T)", "mx.nd.dot(r, v, transpose_a=True)",
    # elementwise binary
    "mx.nd.elemwise_add(c, c2)", "mx.nd.elemwise_add(r, r2)", "mx.nd.elemwise_add(r, d)",
    "mx.nd.elemwise_add(d, r)", "mx.nd.elemwise_add(c, d)", "mx.nd.elemwise_add(d, c)",
    "mx.nd.elemwise_sub(c, c2)", "mx.nd.elemwise_sub(r, r2)", "mx.nd.elemwise_sub(r, d)",
    "mx.nd.elemwise_sub(d, c)",
    "mx.nd.elemwise_mul(c, c2)", "mx.nd.elemwise_mul(r, r2)", "mx.nd.elemwise_mul(r, d)",
    "mx.nd.elemwise_mul(d, r)", "mx.nd.elemwise_mul(c, d)", "mx.nd.elemwise_mul(d, c)",
    "mx.nd.elemwise_div(c, p)", "mx.nd.elemwise_div(r, p)",
    "c + c2", "r + r2", "c - c2", "r - r2", "c * c2", "r * r2", "r + d", "c * d",
    "r * 2", "c * 2", "2 * r", "c / 2", "r / 2", "r + 1", "c - 1", "-r", "-c",
    "mx.nd.sparse.add(c, c2)", "mx.nd.sparse.add(r, r2)", "mx.nd.sparse.subtract(r, r2)",
    "mx.nd.sparse.multiply(c, c2)", "mx.nd.sparse.multiply(r, 3)",
    "mx.nd.sparse.divide(r, 2)", "mx.nd.sparse.divide(c, p)",
    "mx.nd.sparse.multiply(c, mx.nd.ones((6, 1)))", "mx.nd.sparse.multiply(r, mx.nd.ones((1, 5)))",
    "mx.nd.broadcast_mul(c, mx.nd.ones((6, 1)))", "mx.nd.broadcast_add(r, mx.nd.ones((1, 5)))",
    "mx.nd.add_n(r, r2)", "mx.nd.add_n(r, r2, r)", "mx.nd.add_n(r, d)", "mx.nd.add_n(c, c2)",
    "mx.nd.add_n(d, c)", "mx.nd.ElementWiseSum(r, r2)",
    # reductions
    "mx.nd.sum(c)", "mx.nd.sum(c, axis=0)", "mx.nd.sum(c, axis=1)", "mx.nd.sum(c, axis=1, keepdims=True)",
    "mx.nd.mean(c, axis=0)", "mx.nd.mean(c, axis=1)", "mx.nd.sum(r, axis=0)", "mx.nd.sum(r, axis=1)",
    "mx.nd.sum(r)", "mx.nd.mean(r, axis=1)", "mx.nd.sparse.sum(c, axis=0)",
    "mx.nd.sparse.mean(c, axis=1)", "mx.nd.norm(c)", "mx.nd.norm(r)", "mx.nd.sparse.norm(c)",
    # unary
    "mx.nd.square(c)", "mx.nd.square(r)", "mx.nd.sqrt(pc)", "mx.nd.sqrt(pr)", "mx.nd.abs(c)",
    "mx.nd.abs(r)", "mx.nd.sign(c)", "mx.nd.sign(r)", "mx.nd.exp(c)", "mx.nd.exp(r)",
    "mx.nd.sin(c)", "mx.nd.tanh(r)", "mx.nd.relu(c)", "mx.nd.sigmoid(r)", "mx.nd.negative(c)",
    "mx.nd.log1p(pr)", "mx.nd.expm1(pc)", "mx.nd.floor(r)", "mx.nd.sparse.rint(c)",
    "mx.nd.sparse.trunc(r)", "mx.nd.sparse.cbrt(c)", "mx.nd.sparse.arcsin(c / 4)",
    "mx.nd.sparse.degrees(r)", "mx.nd.sparse.log(pc)", "mx.nd.sparse.gamma(pc)",
    "mx.nd.clip(c, -1, 2)", "mx.nd.clip(r, -1, 2)", "mx.nd.clip(r, 0.5, 2)", "mx.nd.clip(c, 1, 2)",
    "mx.nd.sparse.clip(r, a_min=-2, a_max=1)", "mx.nd.stop_gradient(r)",
    "mx.nd.sparse.make_loss(c)", "mx.nd.zeros_like(c)", "mx.nd.zeros_like(r)",
    "mx.nd.sparse.zeros_like(r)", "mx.nd.ones_like(r)", "mx.nd.copy(c)", "mx.nd.copy(r)",
    # retain, slice, where, concat
    "mx.nd.sparse.retain(r, idx)", "mx.nd.sparse.retain(r, mx.nd.array([1, 2]))",
    "r.retain(idx)", "mx.nd.sparse.gs_retain(r, idx)",
    "mx.nd.slice(c, begin=(1,), end=(4,))", "mx.nd.slice(c, begin=(1, 1), end=(4, 3))",
    "mx.nd.sparse.slice(c, begin=(0, 2), end=(None, None))", "mx.nd.slice(r, begin=(1,), end=(4,))",
    "mx.nd.slice(c, begin=(1,), end=(5,), step=(2,))",
    "mx.nd.where(c, d, mx.nd.ones((6, 5)))", "mx.nd.sparse.where(c, d, p)",
    "mx.nd.sparse.concat(c, c2, dim=0)", "mx.nd.sparse.concat(c, c2, dim=1)",
    "mx.nd.concat(r, r2, dim=0)",
    "mx.nd.sparse.relu(r)", "mx.nd.sparse.round(c)", "mx.nd.sparse.ceil(r / 2)",
    "mx.nd.sparse.fix(c / 2)", "mx.nd.sparse.rsqrt(pc)", "mx.nd.sparse.radians(c)",
    # errors
    "mx.nd.sparse.csr_matrix(([1, 2], [0, 1], [0, 1, 2]), shape=(2, 2, 2))",
    "mx.nd.sparse.csr_matrix(r)", "mx.nd.sparse.row_sparse_array(c)",
    "mx.nd.sparse.array(d)", "mx.nd.sparse.array(D)", "mx.nd.sparse.zeros('foo', (2, 2))",
    "mx.nd.sparse.row_sparse_array(([], []))",
]

CHECKS = [
    ('csr', "([1, 2], [0, 1], [0, 1, 2])", (2, 2)),
    ('csr', "([1, 2], [1, 0], [0, 2, 2])", (2, 2)),
    ('csr', "([1, 2], [0, 5], [0, 1, 2])", (2, 2)),
    ('csr', "([1, 2], [0, -1], [0, 1, 2])", (2, 2)),
    ('csr', "([1, 2], [0, 1], [0, 2, 1])", (2, 2)),
    ('csr', "([1, 2], [0, 1], [1, 1, 2])", (2, 2)),
    ('csr', "([1, 2], [0, 1], [0, 1, 3])", (2, 2)),
    ('csr', "([1, 2], [0, 0], [0, 2, 2])", (2, 2)),
    ('csr', "([1, 2], [0, 1], [0, 1, 2, 2])", (2, 2)),
    ('row_sparse', "([[1, 2], [3, 4]], [0, 2])", (3, 2)),
    ('row_sparse', "([[1, 2], [3, 4]], [1, 0])", (3, 2)),
    ('row_sparse', "([[1, 2], [3, 4]], [1, 1])", (3, 2)),
    ('row_sparse', "([[1, 2], [3, 4]], [0, 3])", (3, 2)),
    ('row_sparse', "([[1, 2], [3, 4]], [-1, 1])", (3, 2)),
]


class StderrCapture:
    """Captures what MXNet's C++ logging writes to file descriptor 2."""

    def __enter__(self):
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        mx.nd.waitall()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode('utf-8', 'replace')


def record(value):
    if isinstance(value, mx.nd.NDArray):
        rec = {'stype': value.stype, 'shape': list(value.shape),
               'dtype': np.dtype(value.dtype).name, 'value': value.asnumpy().tolist()}
        if value.stype == 'csr':
            rec.update(data=value.data.asnumpy().tolist(), indices=value.indices.asnumpy().tolist(),
                       indptr=value.indptr.asnumpy().tolist())
        elif value.stype == 'row_sparse':
            rec.update(data=value.data.asnumpy().tolist(), indices=value.indices.asnumpy().tolist())
        rec['class'] = type(value).__name__
        rec['context'] = str(value.context)
        return rec
    return {'python': repr(value)}


def run_cases(env):
    out = {}
    for expr in CASES:
        with StderrCapture() as cap:
            try:
                rec = record(eval(expr, env))
            except Exception as e:  # noqa: BLE001
                msg = str(e)
                lines = [l for l in msg.split('\n') if 'Error' in l or 'Check failed' in l]
                rec = {'error': type(e).__name__, 'message': (lines[-1] if lines else msg)[:400]}
        rec['fallback'] = 'fallback' in cap.text
        if rec['fallback'] and 'fallback_text' not in out.get('__first__', {}):
            out['__first__'] = {'fallback_text': cap.text}
        out[expr] = rec
    return out


def check_formats():
    out = []
    for stype, args, shape in CHECKS:
        make = mx.nd.sparse.csr_matrix if stype == 'csr' else mx.nd.sparse.row_sparse_array
        a = make(eval(args), shape=shape)
        for full in (True, False):
            try:
                a.check_format(full_check=full)
                err = None
            except mx.base.MXNetError as e:
                lines = [l for l in str(e).split('\n') if 'Check failed' in l]
                err = lines[-1] if lines else str(e)
            out.append({'stype': stype, 'args': args, 'shape': list(shape), 'full_check': full,
                        'error': err})
    return out


def fallback_texts(env):
    """MXNet's fallback messages for an op with parameters and a copy."""
    texts = {}
    for key, expr in [('op_params', "mx.nd.softmax(c, axis=1, temperature=2.0)"),
                      ('copy', "r.copyto(mx.nd.zeros((6, 5)))"),
                      ('two_inputs', "mx.nd.broadcast_maximum(c, r)")]:
        with StderrCapture() as cap:
            eval(expr, env).asnumpy()
        texts[key] = {'expr': expr, 'text': cap.text}
    return texts


def save_files(env):
    files = {}
    cases = {
        'csr.params': "[c]",
        'row_sparse.params': "[r]",
        'mixed_named.params': "{'c': c, 'r': r2, 'd': d, 'w': w}",
        'empty_sparse.params': "[mx.nd.sparse.zeros('csr', (3, 4)), mx.nd.sparse.zeros('row_sparse', (5, 2, 2))]",
        'dtypes.params': "[c.astype('float64'), r.astype('float16'), r.astype('int32'), "
                         "mx.nd.sparse.csr_matrix(([1, 2], [0, 1], [0, 1, 2]), shape=(2, 3), dtype='int64')]",
        'rsp3d.params': "[mx.nd.sparse.row_sparse_array((np.arange(12, dtype='float32').reshape(2, 3, 2), [1, 4]), shape=(6, 3, 2))]",
    }
    for fname, expr in cases.items():
        data = eval(expr, env)
        path = os.path.join(OUT, fname)
        mx.nd.save(path, data)
        items = data.items() if isinstance(data, dict) else enumerate(data)
        files[fname] = {'expr': expr, 'arrays': {str(k): record(v) for k, v in items}}
    return files


def main():
    os.makedirs(OUT, exist_ok=True)
    env = {'mx': mx, 'np': np}
    src = inputs_source()
    exec(src, env)
    names = {
        'nd.sparse': sorted(n for n in dir(mx.nd.sparse) if not n.startswith('_')
                            and callable(getattr(mx.nd.sparse, n))
                            and not isinstance(getattr(mx.nd.sparse, n), type(os))),
        'sym.sparse': sorted(n for n in dir(mx.sym.sparse) if not n.startswith('_')
                             and callable(getattr(mx.sym.sparse, n))),
    }
    meta = {'mxnet_version': mx.__version__, 'generator': GENERATOR}
    write_json(os.path.join(OUT, 'names.json'), dict(meta, **names))
    write_json(os.path.join(OUT, 'cases.json'), dict(meta, inputs=src, cases=run_cases(env),
                                                     fallback=fallback_texts(env)))
    write_json(os.path.join(OUT, 'check_format.json'), dict(meta, checks=check_formats()))
    write_json(os.path.join(OUT, 'files.json'), dict(meta, files=save_files(env)))


if __name__ == '__main__':
    main()
