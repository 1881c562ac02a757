"""Sparse gradients in autograd and gluon (issue 16, step 4), against MXNet 1.9.1's values
(tests/golden/sparse_grad/cases.json, from tools/make_golden_sparse_grad.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "sparse_grad"
                     / "cases.json").read_text())
W0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 4


def _check(grad, rec):
    assert grad.stype == rec["stype"]
    np.testing.assert_allclose(grad.asnumpy(), np.array(rec["value"]), rtol=1e-6)
    if rec["stype"] == "row_sparse":
        assert grad.indices.asnumpy().tolist() == rec["indices"]


@pytest.mark.parametrize("stype,sparse_grad", [("default", False), ("row_sparse", True),
                                               ("default", True), ("row_sparse", False)])
def test_embedding_grad(stype, sparse_grad):
    rec = GOLDEN["grads"][f"embedding_{stype}_{sparse_grad}"]
    w = mx.nd.array(W0)
    w.attach_grad(stype=stype)
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array([[0, 3], [3, 5]]), w, input_dim=6, output_dim=2,
                            sparse_grad=sparse_grad)
        z = (y ** 2).sum()
    if "error" in rec:
        with pytest.raises(mx.base.MXNetError, match=rec["error"].split(": ", 1)[-1].strip()[:40]):
            z.backward()
        return
    z.backward()
    _check(w.grad, rec)


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
def test_dot_csr_weight_grad(stype):
    x = mx.nd.sparse.csr_matrix(([1., 2., 3., -1.], [0, 2, 4, 2], [0, 2, 2, 4]), shape=(3, 6))
    w = mx.nd.array(np.arange(6, dtype=np.float32).reshape(6, 1))
    w.attach_grad(stype=stype)
    with mx.autograd.record():
        loss = ((mx.nd.dot(x, w) - 1) ** 2).sum()
    loss.backward()
    _check(w.grad, GOLDEN["grads"][f"dot_{stype}"])


def test_dense_gradient_into_row_sparse_buffer():
    w = mx.nd.array([[1., 2], [0, 0], [3, 4]])
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = w * w
    y.backward()
    _check(w.grad, GOLDEN["grads"]["dense_op"])


def test_two_uses_sum_their_rows():
    w = mx.nd.array(W0)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = (mx.nd.Embedding(mx.nd.array([1]), w, input_dim=6, output_dim=2, sparse_grad=True)
             + mx.nd.Embedding(mx.nd.array([4, 4]), w, input_dim=6, output_dim=2,
                               sparse_grad=True).sum(axis=0, keepdims=True))
    y.backward()
    _check(w.grad, GOLDEN["grads"]["twice"])


def test_write_replaces_rows_and_unreached_is_empty():
    w = mx.nd.array(W0)
    w.attach_grad(stype="row_sparse")
    for ids in ([0, 3], [1]):
        with mx.autograd.record():
            y = mx.nd.Embedding(mx.nd.array(ids), w, input_dim=6, output_dim=2, sparse_grad=True)
        y.backward()
        assert w.grad.indices.asnumpy().tolist() == ids
    v = mx.nd.ones((2,))
    v.attach_grad()
    with mx.autograd.record():
        z = v * 2
    z.backward()
    assert w.grad.indices.asnumpy().tolist() == [1]  # (w is not in this graph)
    assert isinstance(w.grad, mx.nd.sparse.RowSparseNDArray)


def test_grad_req_add_with_row_sparse_is_refused():
    w = mx.nd.array(W0)
    w.attach_grad(grad_req="add", stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array([1]), w, input_dim=6, output_dim=2, sparse_grad=True)
    with pytest.raises(mx.base.MXNetError, match="req != write"):
        y.backward()


def test_autograd_grad_returns_row_sparse_and_unknown_stype():
    w = mx.nd.array(W0)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array([2]), w, input_dim=6, output_dim=2, sparse_grad=True)
    (g,) = mx.autograd.grad(y, [w])
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [2]
    with pytest.raises(ValueError, match="unknown storage type"):
        mx.nd.ones((2, 2)).attach_grad(stype="foo")


def test_recorded_sparse_weight_gets_gradient_without_fallback_warning(recwarn):
    w = mx.nd.array(W0).tostype("row_sparse")
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array([1, 3]), w, input_dim=6, output_dim=2, sparse_grad=True)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), W0[[1, 3]])
    assert w.grad.indices.asnumpy().tolist() == [1, 3]
    assert not [r for r in recwarn if issubclass(r.category, mx.nd.sparse.StorageFallbackWarning)]


def test_gluon_embedding_sparse_grad():
    net = mx.gluon.nn.Embedding(6, 2, sparse_grad=True)
    net.initialize()
    assert net.weight.grad().stype == "row_sparse"
    with mx.autograd.record():
        y = net(mx.nd.array([[0, 3], [3, 5]]))
    y.backward()
    g = net.weight.grad()
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [0, 3, 5]
    np.testing.assert_allclose(g.data.asnumpy(), [[1, 1], [2, 2], [1, 1]])
    net.weight.zero_grad()
    assert net.weight.grad().indices.asnumpy().tolist() == []
    p = mx.gluon.Parameter("w", shape=(4, 2), grad_stype="row_sparse")
    p.initialize()
    assert p.grad().stype == "row_sparse"


def test_attach_grad_of_sparse_arrays_keeps_their_storage_and_shape():
    """MXNet 1.9.1: attach_grad() is zeros_like(self): a row_sparse array gets a row_sparse
    (5, 2) buffer, a csr one a csr buffer; stype='default' a dense buffer of the full shape."""
    x = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [3]), shape=(5, 2))
    x.attach_grad()
    assert (type(x.grad).__name__, x.grad.shape, x.grad.stype) == ("RowSparseNDArray", (5, 2),
                                                                    "row_sparse")
    y = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 3))
    y.attach_grad()
    assert (type(y.grad).__name__, y.grad.shape, y.grad.stype) == ("CSRNDArray", (2, 3), "csr")
    x.attach_grad(stype="default")
    assert (x.grad.shape, x.grad.stype) == ((5, 2), "default")
    assert not x.grad.asnumpy().any()
