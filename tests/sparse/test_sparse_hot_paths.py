"""The fast sparse kernels behind training on csr batches: dot(csr, w) recorded by autograd
without a dense copy of the batch (its weight gradient from csr.T . ograd), the fused kernel
for csr . dense, and csr_rows; checked against dense arithmetic."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import neomx as mx
from neomx.ops import sparse as _sp


def _batch(rng, rows=7, cols=30, density=0.2):
    x = (rng.rand(rows, cols) < density) * rng.uniform(-1, 1, (rows, cols))
    x[0] = 0  # empty first and last rows
    x[-1] = 0
    return x.astype(np.float32)


@pytest.mark.parametrize("w_stype, buf_stype", [("default", "default"),
                                                ("default", "row_sparse"),
                                                ("row_sparse", "row_sparse")])
def test_recorded_csr_dot_gradient_equals_dense(w_stype, buf_stype):
    rng = np.random.RandomState(3)
    x, w, head = _batch(rng), rng.uniform(-1, 1, (30, 4)).astype(np.float32), \
        rng.uniform(-1, 1, (7, 4)).astype(np.float32)
    w[5] = 0  # a zero row of the weight (not stored when row_sparse)
    c = mx.nd.array(x).tostype("csr")
    wn = mx.nd.array(w) if w_stype == "default" else mx.nd.array(w).tostype("row_sparse")
    wn.attach_grad(stype=buf_stype)
    with mx.autograd.record():
        out = mx.nd.sparse.dot(c, wn)
        loss = (out * mx.nd.array(head)).sum()
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), x @ w, rtol=1e-5, atol=1e-6)
    g = wn.grad
    assert g.stype == buf_stype
    np.testing.assert_allclose(g.asnumpy(), x.T @ head, rtol=1e-5, atol=1e-6)
    if buf_stype == "row_sparse":
        assert g.indices.asnumpy().tolist() == np.flatnonzero(np.abs(x).sum(0)).tolist()


def test_recorded_csr_dot_feeds_later_ops_and_grad_add_refused():
    rng = np.random.RandomState(4)
    x, w = _batch(rng), rng.uniform(-1, 1, (30, 1)).astype(np.float32)
    c = mx.nd.array(x).tostype("csr")
    wn = mx.nd.array(w)
    wn.attach_grad()
    with mx.autograd.record():
        z = mx.nd.sparse.dot(c, wn * 2)  # an intermediate rhs: a dense gradient flows back
        loss = mx.nd.log1p(mx.nd.exp(z)).sum()
    loss.backward()
    sig = 1 / (1 + np.exp(-(x @ (2 * w))))
    np.testing.assert_allclose(wn.grad.asnumpy(), 2 * x.T @ sig, rtol=1e-4, atol=1e-5)
    wr = mx.nd.array(w).tostype("row_sparse")
    wr.attach_grad(grad_req="add", stype="row_sparse")
    with pytest.raises(mx.MXNetError, match="kWriteTo"):
        with mx.autograd.record():
            y = mx.nd.sparse.dot(c, wr).sum()
        y.backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_csr_dot_kernels_equal_dense(dtype):
    rng = np.random.RandomState(5)
    x = _batch(rng, 9, 40, 0.3).astype(dtype)
    w = rng.uniform(-1, 1, (40, 3)).astype(dtype)
    v = rng.uniform(-1, 1, (9, 3)).astype(dtype)
    c = mx.nd.array(x, dtype=dtype).tostype("csr")
    tol = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(mx.nd.sparse.dot(c, mx.nd.array(w, dtype=dtype)).asnumpy(),
                               x.astype(np.float64) @ w, rtol=tol, atol=tol)
    t = mx.nd.sparse.dot(c, mx.nd.array(v, dtype=dtype), transpose_a=True)
    assert t.stype == "row_sparse"
    np.testing.assert_allclose(t.asnumpy(), x.T.astype(np.float64) @ v, rtol=tol, atol=tol)


def test_csr_rows_with_empty_rows_and_unsorted_columns():
    indptr = torch.tensor([0, 0, 2, 2, 2, 5, 5])
    s = _sp.Sparse("csr", torch.arange(5.0), (indptr, torch.tensor([3, 1, 0, 4, 2])), (6, 5))
    assert _sp.csr_rows(s).tolist() == [1, 1, 4, 4, 4]
    w = torch.arange(10.0).reshape(5, 2)
    np.testing.assert_allclose(_sp.csr_dot(s, w, False).numpy(),
                               _sp.to_dense(s).numpy() @ w.numpy())
    empty = _sp.Sparse("csr", torch.zeros(0), (torch.zeros(4, dtype=torch.int64),
                                               torch.zeros(0, dtype=torch.int64)), (3, 5))
    assert _sp.csr_rows(empty).tolist() == []
    assert _sp.csr_dot(empty, w, False).tolist() == [[0.0, 0.0]] * 3


@pytest.mark.parametrize("all_rows", [True, False])
def test_row_sparse_pull_of_many_ids(all_rows):
    """A csr batch's column indices as row_ids (many, repeated): the sorted unique rows, each
    the stored row or zeros; ids outside the weight raise MXNetError."""
    rng = np.random.RandomState(6)
    w = rng.uniform(-1, 1, (3000, 2)).astype(np.float32)
    if not all_rows:
        w[rng.rand(3000) < 0.5] = 0
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.array(w).tostype("row_sparse"))
    ids = rng.randint(0, 3000, 20000)
    out = mx.nd.sparse.zeros("row_sparse", (3000, 2))
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array(ids, dtype="int64"))
    want = np.unique(ids)
    assert out.indices.asnumpy().tolist() == want.tolist()
    np.testing.assert_array_equal(out.data.asnumpy(), w[want])
    with pytest.raises(mx.MXNetError, match="row_ids"):
        kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array(np.r_[ids, 3000], dtype="int64"))


def test_csr_dot_row_sparse_rhs_without_its_dense_form():
    rng = np.random.RandomState(7)
    x = _batch(rng, 6, 20, 0.4)
    w = rng.uniform(-1, 1, (20, 3)).astype(np.float32)
    w[::3] = 0  # rows the row_sparse rhs does not store
    got = mx.nd.sparse.dot(mx.nd.array(x).tostype("csr"), mx.nd.array(w).tostype("row_sparse"))
    assert got.stype == "default"
    np.testing.assert_allclose(got.asnumpy(), x @ w, rtol=1e-5, atol=1e-6)
    empty = mx.nd.sparse.zeros("row_sparse", (20, 3))
    assert not mx.nd.sparse.dot(mx.nd.array(x).tostype("csr"), empty).asnumpy().any()


def test_wide_csr_kernels_take_the_search_path():
    """A matrix far wider than its stored values (a LibSVM batch over 1M features): the
    binary-search and sort branches of the kernels give the same products."""
    cols = np.array([5, 99_999, 123, 5, 70_000])
    indptr = np.array([0, 2, 2, 5])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    c = mx.nd.sparse.csr_matrix((vals, cols, indptr), shape=(3, 100_000))
    dense = np.zeros((3, 100_000), np.float32)
    dense[[0, 0, 2, 2, 2], cols] = vals
    rng = np.random.RandomState(8)
    w = np.zeros((100_000, 2), np.float32)
    stored = np.array([5, 123, 4242, 99_999])
    w[stored] = rng.uniform(-1, 1, (4, 2))
    wr = mx.nd.sparse.row_sparse_array((w[stored], stored), shape=(100_000, 2))
    np.testing.assert_allclose(mx.nd.sparse.dot(c, wr).asnumpy(), dense @ w, rtol=1e-6)
    g = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    t = mx.nd.sparse.dot(c, mx.nd.array(g), transpose_a=True)
    assert t.indices.asnumpy().tolist() == [5, 123, 70_000, 99_999]
    np.testing.assert_allclose(t.asnumpy(), dense.T @ g, rtol=1e-6, atol=1e-7)
