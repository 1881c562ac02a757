"""Sparse storage in symbols and executors (issue 16), against MXNet 1.9.1's results of the
same scenarios (tests/sparse/_sparse_symbol_cases.py; golden from
tools/make_golden_sparse_symbol.py): ``stype`` on variables and their JSON, ``mx.sym.sparse``,
``simple_bind(stype_dict=...)`` and the storage types of arguments, gradients and outputs,
executors running csr / row_sparse inputs with row_sparse gradients where MXNet's come out
row_sparse (``dot(csr, w)``, ``Embedding(sparse_grad=True)``, ``contrib.SparseEmbedding``),
grad_req write / add / null, FullyConnected and the regression outputs on sparse data."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import neomx as mx

from . import _sparse_symbol_cases as cases
from ._symbol_golden import assert_same, load

GOLD = load()


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")


@pytest.fixture(scope="module")
def sym_json():
    return cases.symbol_json(mx)


@pytest.mark.parametrize("key", ["variables", "attrs", "dot", "sparse_embedding",
                                 "sparse_embedding_args", "retain", "roundtrip"])
def test_symbol_json_and_attributes(sym_json, key):
    assert_same(sym_json[key], GOLD["symbol_json"][key])


def test_sym_sparse_namespace_has_mxnet_names():
    # adagrad_update is MXNet's _sparse_adagrad_update, not an operator of neomx yet
    missing = [n for n in GOLD["symbol_json"]["names"]
               if n != "adagrad_update" and not callable(getattr(mx.sym.sparse, n, None))]
    assert not missing
    assert mx.symbol.sparse is mx.sym.sparse
    s = mx.sym.sparse.dot(mx.sym.Variable("a", stype="csr"), mx.sym.Variable("b"))
    assert isinstance(s, mx.sym.Symbol) and s.list_arguments() == ["a", "b"]


def test_no_infer_storage_type_as_in_mxnet():
    assert hasattr(mx.sym.Symbol, "infer_storage_type") == GOLD["symbol_json"]["has_infer_storage_type"]


def test_variable_stype_spellings():
    assert mx.sym.Variable("a", stype="csr").attr("__storage_type__") == "2"
    assert mx.sym.var("a", stype="row_sparse").attr("__storage_type__") == "1"
    loaded = mx.sym.load_json(mx.sym.Variable("a", stype="csr").tojson())
    ex = loaded.simple_bind(mx.cpu(), a=(2, 3))
    assert ex.arg_dict["a"].stype == "csr"


@pytest.fixture(scope="module")
def stypes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cases.bind_stypes(mx)


@pytest.mark.parametrize("case", sorted(GOLD["bind_stypes"]))
def test_bind_storage_types(stypes, case):
    assert_same(stypes[case], GOLD["bind_stypes"][case], case)


@pytest.fixture(scope="module")
def values():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cases.executor_values(mx)


@pytest.mark.parametrize("case", sorted(GOLD["executor_values"]))
def test_executor_values(values, case):
    assert_same(values[case], GOLD["executor_values"][case], case)


def test_nd_sparse_embedding():
    assert_same(cases.nd_sparse_embedding(mx), GOLD["nd_sparse_embedding"])


def test_stype_dict_errors():
    s = mx.sym.dot(mx.sym.Variable("x"), mx.sym.Variable("w"))
    with pytest.raises(mx.MXNetError, match="storage type 'foo'"):
        s.simple_bind(mx.cpu(), x=(3, 6), w=(6, 2), stype_dict={"x": "foo"})


def test_fallback_warning_when_bound(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1")
    s = mx.sym.FullyConnected(mx.sym.Variable("x", stype="csr"), num_hidden=2, name="fc")
    with pytest.warns(mx.nd.sparse.StorageFallbackWarning, match="operator = FullyConnected"):
        s.simple_bind(mx.cpu(), x=(3, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # dot(csr, row_sparse) has its kernel: no warning
        mx.sym.dot(mx.sym.Variable("x", stype="csr"),
                   mx.sym.Variable("w", stype="row_sparse")).simple_bind(mx.cpu(), x=(3, 6),
                                                                         w=(6, 2))


def test_forward_kwargs_and_repeat():
    """forward(x=csr) copies the new batch in; the row_sparse gradient follows each batch."""
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w", stype="row_sparse")
    ex = mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(2, 5), w=(5, 1))
    wv = mx.nd.array(np.arange(5, dtype=np.float32).reshape(5, 1)).tostype("row_sparse")
    for cols in ([0, 3], [1, 4]):
        dense = np.zeros((2, 5), np.float32)
        dense[0, cols[0]] = 1
        dense[1, cols[1]] = 2
        out = ex.forward(is_train=True, x=mx.nd.array(dense).tostype("csr"), w=wv)[0]
        np.testing.assert_allclose(out.asnumpy(), dense @ np.arange(5).reshape(5, 1))
        ex.backward(mx.nd.ones((2, 1)))
        g = ex.grad_dict["w"]
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == sorted(cols)
        np.testing.assert_allclose(g.asnumpy().ravel(), dense.sum(0))


def test_monitor_sees_sparse_values():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w", stype="row_sparse")
    ex = mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(3, 6), w=(6, 2))
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.stype)), monitor_all=True)
    cases._csr(mx).copyto(ex.arg_dict["x"])
    ex.forward()
    mx.nd.waitall()
    assert (b"x", "csr") in seen and (b"dot0_output", "default") in seen or \
        any(n.endswith(b"_output") for n, _ in seen)


@pytest.mark.parametrize("seed", range(4))
def test_random_csr_dot_rsp_matches_dense(seed):
    """Random shapes and densities: the executor's dot(csr, row_sparse w) forward equals the
    dense product; w's row_sparse gradient holds exactly the csr's columns, valued x.T . g."""
    rng = np.random.RandomState(seed)
    n, k, h = rng.randint(1, 6), rng.randint(1, 9), rng.randint(1, 4)
    x = (rng.uniform(size=(n, k)) < 0.4) * rng.uniform(-2, 2, (n, k))
    w = rng.uniform(-1, 1, (k, h))
    g = rng.uniform(-1, 1, (n, h))
    sym = mx.sym.dot(mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w", stype="row_sparse"))
    ex = sym.simple_bind(mx.cpu(), x=(n, k), w=(k, h))
    out = ex.forward(is_train=True, x=mx.nd.array(x).tostype("csr"),
                     w=mx.nd.array(w).tostype("row_sparse"))[0]
    np.testing.assert_allclose(out.asnumpy(), x @ w, rtol=1e-5, atol=1e-6)
    ex.backward(mx.nd.array(g))
    grad = ex.grad_dict["w"]
    assert grad.stype == "row_sparse"
    assert grad.indices.asnumpy().tolist() == sorted(set(np.nonzero(x)[1].tolist()))
    np.testing.assert_allclose(grad.asnumpy(), x.T @ g, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), 0)  # (MXNet: none for csr)


def test_sparse_values_into_dense_arguments():
    """forward(w=row_sparse) into a dense argument, and ``dense[:] = sparse``, write the dense
    form (the stored rows were once broadcast over the whole array)."""
    ex = mx.sym.dot(mx.sym.Variable("x"), mx.sym.Variable("w")).simple_bind(mx.cpu(), x=(1, 3),
                                                                           w=(3, 2))
    w = np.array([[1, 2], [0, 0], [0, 0]], np.float32)
    out = ex.forward(x=mx.nd.ones((1, 3)), w=mx.nd.array(w).tostype("row_sparse"))[0]
    np.testing.assert_array_equal(ex.arg_dict["w"].asnumpy(), w)
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2]])
    d = mx.nd.zeros((2, 3))
    d[:] = mx.nd.sparse.csr_matrix(([1., 2.], [0, 2], [0, 1, 2]), shape=(2, 3))
    np.testing.assert_array_equal(d.asnumpy(), [[1, 0, 0], [0, 0, 2]])
