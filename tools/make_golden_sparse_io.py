#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for sparse data pipelines (issue 16, items 5-6).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_sparse_io.py

Output goes to ``tests/golden/sparse_io/``:

* ``data/``        the LibSVM files the cases read (written here, committed)
* ``cases.json``   one record per case: the Python source that builds the iterator (run by the
                   tests with neomx as ``mx``; paths relative to the golden folder), then per
                   epoch and batch the data and label (dense values, storage type, class,
                   dtype, csr parts), pad and index; or the error raised
* ``test_utils.json``  structure of ``mx.test_utils``' random sparse arrays: powerlaw layouts
                   (deterministic), nonzero counts, return forms, dtypes, errors

Only mxnet, numpy, scipy (NDArrayIter over ``scipy.sparse.csr_matrix``) and the stdlib are used.
"""
import os
import warnings

from _oracle_common import err_info, golden_dir, write_json

import numpy as np
import mxnet as mx
import scipy.sparse as sp

OUT = golden_dir('sparse_io')
DATA = os.path.join(OUT, 'data')
GENERATOR = 'tools/make_golden_sparse_io.py'


def write_data():
    os.makedirs(os.path.join(DATA, 'dir'), exist_ok=True)

    def w(name, text):
        with open(os.path.join(DATA, name), 'w', newline='') as f:
            f.write(text)

    w('doc.t', '1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n')
    w('doc_label.t', '1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n')
    w('short_label.t', '1 0:1\n2 1:1\n')
    r = np.random.RandomState(16)
    lines = []
    for i in range(23):
        cols = np.sort(r.choice(50, r.randint(0, 6), replace=False))
        lines.append('%d %s' % (r.randint(0, 2), ' '.join('%d:%g' % (c, r.randint(-20, 20) / 4.0)
                                                          for c in cols)))
    w('rand.t', '\n'.join(lines) + '\n')
    lab = []
    for i in range(23):
        cols = np.sort(r.choice(4, r.randint(0, 3), replace=False))
        lab.append('0 %s' % ' '.join('%d:%g' % (c, r.randint(1, 9)) for c in cols))
    w('rand_label.t', '\n'.join(lab) + '\n')
    # blank lines, a comment, qid, a label weight, tabs, CR LF, exponents, no final newline
    w('messy.t', '\n1 0:1 2:3 # a comment\n\n0:2.5 qid:3 1:2\r\n-1\t3:1e-1\t4:+2.5E1\n\n'
                 '   2 1:.5\n7 0:-0 4:4')
    w('dir/part-a.t', '1 0:1\n0 1:2\n')
    w('dir/part-b.t', '1 2:3\n0 0:4 2:5\n1 1:6\n')
    w('empty.t', '')


INPUTS = '''
X = np.arange(40, dtype=np.float32).reshape(10, 4)
X[X % 3 == 0] = 0
C = mx.nd.array(X).tostype('csr')
C64 = mx.nd.array(X, dtype='float64').tostype('csr')
Y = np.arange(10)
G = 'GOLDEN/'
'''

CASES = []


def case(name, src, epochs=2, seed=None):
    CASES.append(dict(name=name, src=src, epochs=epochs, seed=seed))


def define_cases():
    L = "mx.io.LibSVMIter(data_libsvm=G + '%s', data_shape=(%d,), batch_size=%d%s)"
    case('libsvm_doc', L % ('data/doc.t', 3, 3, ''), epochs=3)
    case('libsvm_doc_label', L % ('data/doc.t', 3, 3, ", label_libsvm=G + 'data/doc_label.t', "
                                  "label_shape=(3,)"), epochs=3)
    case('libsvm_rand', L % ('data/rand.t', 50, 5, ''), epochs=4)
    case('libsvm_rand_label', L % ('data/rand.t', 50, 4, ", label_libsvm=G + "
                                   "'data/rand_label.t', label_shape=(4,)"), epochs=3)
    for k in range(3):
        case('libsvm_part%d' % k, L % ('data/rand.t', 50, 2, ', num_parts=3, part_index=%d' % k),
             epochs=3)
    case('libsvm_messy', L % ('data/messy.t', 5, 2, ''), epochs=3)
    case('libsvm_dir', L % ('data/dir', 3, 2, ''), epochs=3)
    case('libsvm_names', L % ('data/doc.t', 3, 2, ", data_name='x', label_name='y', "
                              "round_batch=True"))
    case('libsvm_err_round0', L % ('data/doc.t', 3, 2, ', round_batch=False'))
    case('libsvm_err_2d', "mx.io.LibSVMIter(data_libsvm=G + 'data/doc.t', data_shape=(1, 3), "
                          "batch_size=2)")
    case('libsvm_err_label_shape1', L % ('data/doc.t', 3, 2, ", label_libsvm=G + "
                                         "'data/doc_label.t'"))
    case('libsvm_err_label_shape2', L % ('data/doc.t', 3, 2, ', label_shape=(2,)'))
    case('libsvm_err_batch', L % ('data/doc.t', 3, 9, ''))
    case('libsvm_err_nofile', L % ('data/nope.t', 3, 2, ''))
    case('libsvm_err_empty', L % ('data/empty.t', 3, 2, ''))
    case('libsvm_err_label_rows', L % ('data/doc.t', 3, 2, ", label_libsvm=G + "
                                       "'data/short_label.t', label_shape=(3,)"))
    N = "mx.io.NDArrayIter(%s)"
    case('ndarrayiter_csr', N % "C, Y, 3, last_batch_handle='discard'")
    case('ndarrayiter_csr_label', N % "X, C, 4, last_batch_handle='discard'")
    case('ndarrayiter_csr_dict', N % "{'b': C, 'a': X}, Y, 5, last_batch_handle='discard'")
    case('ndarrayiter_scipy_list', N % "[sp.csr_matrix(X)], Y, 3, last_batch_handle='discard'")
    case('ndarrayiter_scipy_dict', N % "{'a': sp.csr_matrix(X), 'b': X}, Y, 3, "
                                       "last_batch_handle='discard'")
    case('ndarrayiter_csr_shuffle', N % "C, Y, 3, shuffle=True, last_batch_handle='discard'",
         epochs=3, seed=3)
    case('ndarrayiter_csr64_shuffle', N % "C64, Y, 5, shuffle=True, last_batch_handle='discard'",
         epochs=2, seed=5)
    case('ndarrayiter_err_pad', N % "C, Y, 3")
    case('ndarrayiter_err_roll_over', N % "C, Y, 3, last_batch_handle='roll_over'")
    case('ndarrayiter_err_label_pad', N % "X, C, 3, last_batch_handle='pad'")
    case('ndarrayiter_err_scipy_bare', N % "sp.csr_matrix(X), Y, 3, last_batch_handle='discard'")


def arr_record(a):
    rec = dict(cls=type(a).__name__, stype=a.stype, dtype=np.dtype(a.dtype).name,
               shape=list(a.shape), value=a.asnumpy().tolist())
    if a.stype == 'csr':
        rec.update(indptr=a.indptr.asnumpy().tolist(), indices=a.indices.asnumpy().tolist(),
                   data=a.data.asnumpy().tolist())
    return rec


def desc(d):
    return [d.name, list(d.shape), np.dtype(d.dtype).name]


def run_case(c):
    rec = dict(c)
    env = dict(mx=mx, np=np, sp=sp)
    exec(INPUTS.replace("'GOLDEN/'", repr(OUT + '/')), env)
    try:
        if c['seed'] is not None:
            np.random.seed(c['seed'])
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            it = eval(c['src'], env)
            rec['provide_data'] = [desc(d) for d in it.provide_data]
            rec['provide_label'] = [desc(d) for d in it.provide_label]
            epochs = []
            for _ in range(c['epochs']):
                batches = []
                for b in it:
                    batches.append(dict(
                        data=[arr_record(a) for a in b.data],
                        label=[arr_record(a) for a in b.label], pad=int(b.pad),
                        index=None if b.index is None else np.asarray(b.index).tolist()))
                epochs.append(batches)
                it.reset()
            rec['epochs_out'] = epochs
    except Exception as e:  # noqa: BLE001
        rec.update(err_info(e, (ValueError, TypeError, NotImplementedError, AssertionError)))
        for k in ('error', 'error_message'):
            rec[k] = rec[k].replace(OUT + '/', 'GOLDEN/')
    return rec


def test_utils_records():
    tu = mx.test_utils
    out = {}

    def kind(x):
        return type(x).__name__

    np.random.seed(0)
    for shape, density in [((5, 16), 0.5), ((4, 10), 0.75), ((3, 8), 0.5), ((6, 3), 0.9),
                           ((4, 32), 0.25), ((2, 4), 1.0)]:
        key = 'powerlaw_%dx%d_%g' % (shape + (density,))
        try:
            a, (ptr, idx, dat) = tu.rand_sparse_ndarray(shape, 'csr', density=density,
                                                        distribution='powerlaw')
        except ValueError as e:
            out[key] = dict(shape=list(shape), density=density, **err_info(e, (ValueError,)))
            continue
        out[key] = dict(
            shape=list(shape), density=density, cls=kind(a), parts=[kind(ptr), kind(idx),
                                                                  kind(dat)],
            indptr=ptr.asnumpy().tolist(), indices=idx.asnumpy().tolist(),
            data_min=float(dat.asnumpy().min()), data_max=float(dat.asnumpy().max()))
    for shape, density, dtype in [((20, 30), 0.1, None), ((7, 9), 0.5, 'float64'),
                                  ((50, 40), 0.01, None), ((3, 4), 0.0, None)]:
        a, parts = tu.rand_sparse_ndarray(shape, 'csr', density=density, dtype=dtype)
        out['uniform_%dx%d_%g' % (shape + (density,))] = dict(
            shape=list(shape), density=density, dtype=dtype, cls=kind(a),
            parts=[kind(p) for p in parts], nnz=int(a.indptr.asnumpy()[-1]),
            out_dtype=np.dtype(a.dtype).name,
            data_in_01=bool(((a.data.asnumpy() >= 0) & (a.data.asnumpy() < 1)).all()))
    a, (val, idx) = tu.rand_sparse_ndarray((6, 3, 2), 'row_sparse', rsp_indices=np.array([1, 4]),
                                           data_init=2.5, dtype='float64')
    out['rsp_indices'] = dict(cls=kind(a), parts=[kind(val), kind(idx)], indices=idx.tolist(),
                              value=a.asnumpy().tolist(), dtype=np.dtype(a.dtype).name,
                              val_dtype=val.dtype.name)
    a, (val, idx) = tu.rand_sparse_ndarray((4, 3), 'row_sparse', density=0.0)
    out['rsp_empty'] = dict(cls=kind(a), parts=[kind(val), kind(idx)],
                            val_dtype=val.dtype.name, idx_dtype=idx.dtype.name,
                            nnz=int(a.indices.shape[0]))
    a = tu.create_sparse_array_zd((5, 3), 'row_sparse', 0.9, rsp_indices=[3, 0, 2])
    out['zd_rsp'] = dict(indices=a.indices.asnumpy().tolist(), cls=kind(a))
    a = tu.create_sparse_array_zd((5, 3), 'row_sparse', 0.9)
    out['zd_rsp_none'] = dict(nnz=int(a.indices.shape[0]))
    a = tu.create_sparse_array((6, 5), 'csr', data_init=3.0, density=0.5)
    out['create_csr'] = dict(cls=kind(a), nnz=int(a.indptr.asnumpy()[-1]),
                             data=sorted(set(a.data.asnumpy().tolist())))
    for stype in ('default', 'csr', 'row_sparse'):
        a = tu.rand_ndarray((4, 5), stype, density=0.5)
        out['rand_ndarray_' + stype] = dict(cls=kind(a), stype=a.stype, shape=list(a.shape),
                                            dtype=np.dtype(a.dtype).name)
    errs = {
        'err_density': lambda: tu.rand_sparse_ndarray((3, 3), 'csr', density=1.5),
        'err_rows': lambda: tu.rand_sparse_ndarray((0, 3), 'csr', density=0.5),
        'err_powerlaw_sparse': lambda: tu.rand_sparse_ndarray((10, 10), 'csr', density=0.1,
                                                              distribution='powerlaw'),
        'err_rsp_powerlaw': lambda: tu.rand_sparse_ndarray((3, 3), 'row_sparse', density=0.5,
                                                           distribution='powerlaw'),
        'err_stype': lambda: tu.create_sparse_array((3, 3), 'dense'),
    }
    for k, f in errs.items():
        try:
            f()
            out[k] = dict(error_type=None)
        except Exception as e:  # noqa: BLE001
            out[k] = err_info(e, (ValueError, TypeError, AssertionError))
    return out


def main():
    write_data()
    define_cases()
    cases = [run_case(c) for c in CASES]
    write_json(os.path.join(OUT, 'cases.json'), dict(
        generator=GENERATOR, mxnet=mx.__version__, inputs=INPUTS, cases=cases))
    write_json(os.path.join(OUT, 'test_utils.json'), dict(
        generator=GENERATOR, mxnet=mx.__version__, records=test_utils_records()))
    print('wrote %d iterator cases to %s' % (len(cases), OUT))


if __name__ == '__main__':
    main()
