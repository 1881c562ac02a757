"""CSRNDArray / RowSparseNDArray behaviour beyond the golden expressions: the mx.nd.sparse
namespace, in-place updates, copies, pickling, the storage-fallback switch."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.base import NotSupportedForSparseNDArray

from ._golden import load

# MXNet's ctypes plumbing, re-exported by its sparse module; neomx has no C library.
C_PLUMBING = {"NDArrayHandle", "c_array_buf", "check_call", "native_array"}
# Registered by MXNet only for sparse gradients (_sparse_adagrad_update): issue 16, step 5.
PENDING = {"adagrad_update"}


def test_namespace_has_mxnets_public_names():
    names = load("names.json")["nd.sparse"]
    missing = [n for n in names if n not in C_PLUMBING | PENDING and not hasattr(mx.nd.sparse, n)]
    assert not missing


def _rsp():
    return mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [1, 3]), shape=(5, 2))


def test_basic_attributes():
    r = _rsp()
    assert r.shape == (5, 2) and r.ndim == 2 and len(r) == 5 and r.dtype == np.float32
    assert repr(r) == "\n<RowSparseNDArray 5x2 @cpu(0)>"
    assert mx.nd.ones((2,)).stype == "default"
    with pytest.raises(NotImplementedError):
        r.size
    with pytest.raises(NotSupportedForSparseNDArray):
        r.reshape((10,))


def test_inplace_and_setitem():
    r = _rsp()
    r += _rsp()
    assert r.stype == "row_sparse"
    np.testing.assert_array_equal(r.asnumpy()[[1, 3]], [[2, 4], [6, 8]])
    r[:] = mx.nd.ones((5, 2))
    assert r.stype == "row_sparse" and r.indices.asnumpy().tolist() == [0, 1, 2, 3, 4]
    r[:] = 0
    assert r.indices.asnumpy().tolist() == []
    c = mx.nd.sparse.zeros("csr", (2, 3))
    c[:] = mx.nd.array([[0, 1, 0], [2, 0, 0]])
    assert c.stype == "csr" and c.indptr.asnumpy().tolist() == [0, 1, 2]
    d = mx.nd.zeros((2, 3))
    d[:] = 1
    mx.nd.zeros((2, 3)).copyto(c)
    assert c.indices.asnumpy().tolist() == []


def test_out_argument_and_zeros_stype():
    out = mx.nd.zeros((5, 2), stype="row_sparse")
    assert out.stype == "row_sparse"
    res = mx.nd.elemwise_add(_rsp(), _rsp(), out=out)
    assert res is out and out.indices.asnumpy().tolist() == [1, 3]


def test_retain_method_and_copies():
    r = _rsp()
    kept = r.retain(mx.nd.array([3], dtype="int64"))
    assert kept.indices.asnumpy().tolist() == [3]
    copy = r.copyto(mx.cpu(1))
    assert copy.context == mx.cpu(1) and copy.stype == "row_sparse"
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(r)).asnumpy(), r.asnumpy())
    assert r.astype("float32", copy=False) is r


def test_fallback_can_be_silenced(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.nd.exp(_rsp()).asnumpy()


def test_dot_matches_dense():
    rs = np.random.RandomState(3)
    x = (rs.rand(30, 20) < 0.1) * rs.randn(30, 20).astype(np.float32)
    w = rs.randn(20, 4).astype(np.float32)
    v = rs.randn(30, 4).astype(np.float32)
    c = mx.nd.array(x).tostype("csr")
    np.testing.assert_allclose(mx.nd.dot(c, mx.nd.array(w)).asnumpy(), x @ w, rtol=1e-5, atol=1e-5)
    g = mx.nd.dot(c, mx.nd.array(v), transpose_a=True)
    assert g.stype == "row_sparse"
    np.testing.assert_allclose(g.asnumpy(), x.T @ v, rtol=1e-5, atol=1e-5)
    assert g.indices.asnumpy().tolist() == np.nonzero(np.abs(x).sum(0))[0].tolist()


def test_no_scipy_needed_for_the_rest():
    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="scipy"):
            mx.nd.sparse.zeros("csr", (2, 2)).asscipy()
    else:
        s = mx.nd.array([[0, 1], [2, 0]]).tostype("csr").asscipy()
        np.testing.assert_array_equal(s.toarray(), [[0, 1], [2, 0]])
