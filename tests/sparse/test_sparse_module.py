"""Module with sparse weights (issue 16), against MXNet 1.9.1 running the same scenarios
(tests/sparse/_sparse_symbol_cases.py; golden from tools/make_golden_sparse_symbol.py): MXNet's
sparse linear classification pattern (a csr data batch, ``mx.sym.sparse.dot`` with a
row_sparse weight, a LogisticRegressionOutput) bound, initialised and trained with and without
a KVStore (``prepare(batch, sparse_row_id_fn)`` pulling the rows a batch needs, lazy
row_sparse updates in the store or on the device, two devices), then saved and loaded with
``save_checkpoint`` / ``Module.load``; Embedding(sparse_grad=True) in a Module."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import neomx as mx

from . import _sparse_symbol_cases as cases
from ._symbol_golden import assert_same, load

GOLD = load()["module"]


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")


_FITS = {"kv_local": {"kvstore": "local"},
         "kv_local_adam": {"kvstore": "local", "optimizer": "adam"},
         "no_kv": {"kvstore": None},
         "str_local": {"kvstore": "str_local"},
         "two_devices": {"kvstore": "local", "contexts": 2},
         "all_rows": {"kvstore": "local", "row_ids": "all"}}


@pytest.mark.parametrize("case", sorted(_FITS))
def test_sparse_linear_module_fit(case):
    got = cases.module_fit(mx, **_FITS[case])
    assert_same(got, GOLD[case], case, rtol=1e-4, atol=1e-6)


def test_embedding_sparse_grad_module():
    assert_same(cases.module_embedding(mx), GOLD["embedding"], "embedding", rtol=1e-5)


def test_prepare_pulls_only_requested_rows():
    mod = mx.mod.Module(cases.linear_model(mx), data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (cases.BATCH, cases.NF))],
             label_shapes=[("label", (cases.BATCH,))])
    mod.init_params(initializer=mx.init.Constant(0.1))
    mod.init_optimizer(kvstore=mx.kv.create("local"), optimizer="sgd")
    batch = mx.io.DataBatch(data=[mx.nd.sparse.csr_matrix(([1., 2.], [1, 6], [0, 1, 1, 2, 2]),
                                                          shape=(4, cases.NF))],
                            label=[mx.nd.zeros((4,))])
    mod.prepare(batch, sparse_row_id_fn=lambda b: {"weight": b.data[0].indices})
    w = mod._exec_group.param_arrays[0][0]
    assert w.stype == "row_sparse" and w.indices.asnumpy().tolist() == [1, 6]
    np.testing.assert_allclose(w.data.asnumpy().ravel(), [0.1, 0.1])
    with pytest.warns(UserWarning, match="bias.stype is not 'row_sparse'"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"bias": mx.nd.array([0])})


def test_prepare_without_store_warns():
    mod = mx.mod.Module(cases.linear_model(mx), data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (cases.BATCH, cases.NF))],
             label_shapes=[("label", (cases.BATCH,))])
    mod.init_params()
    mod.init_optimizer(kvstore=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.prepare(None, sparse_row_id_fn=lambda b: {})
    assert any("No need to call sparse_row_id_fn" in str(w.message) for w in caught)


def test_smaller_last_batch_reshapes_with_csr_data():
    """A smaller csr batch reshapes the executors (a new csr data array; the row_sparse
    weight and its gradient array are kept). MXNet 1.9.1 refuses this reshape (its
    NDArray::Reshape checks default storage); neomx allows it."""
    mod = mx.mod.Module(cases.linear_model(mx), data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (4, cases.NF))], label_shapes=[("label", (4,))])
    mod.init_params(initializer=mx.init.Constant(0.1))
    mod.init_optimizer(kvstore=None, optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    weight = mod._exec_group.param_arrays[0][0]
    batch = mx.io.DataBatch(data=[mx.nd.array(np.eye(3, cases.NF, dtype=np.float32)).tostype("csr")],
                            label=[mx.nd.zeros((3,))])
    mod.forward_backward(batch)
    out = mod.get_outputs()[0].asnumpy().ravel()
    np.testing.assert_allclose(out, [1 / (1 + np.exp(-0.1))] * 3, rtol=1e-6)  # w.x = .1, b = 0
    grad = mod._exec_group.grad_arrays[0][0]
    assert grad.stype == "row_sparse" and grad.indices.asnumpy().tolist() == [0, 1, 2]
    mod.update()
    assert mod._exec_group.param_arrays[0][0] is weight
    w = mod.get_params()[0]["weight"].asnumpy().ravel()
    np.testing.assert_allclose(w[:3], 0.1 - out / 4, rtol=1e-6)  # (rescale_grad: 1 / bound batch)
    np.testing.assert_allclose(w[3:], 0.1)


def test_copy_params_from_converts_storage():
    ex = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc").simple_bind(
        mx.cpu(), x=(1, 3))
    ex.copy_params_from({"fc_weight": mx.nd.array([[1, 2, 3], [0, 0, 0]]).tostype("row_sparse"),
                         "fc_bias": mx.nd.ones(2)})
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy(), [[1, 2, 3], [0, 0, 0]])
    w = mx.sym.Variable("w", stype="row_sparse")
    ex = mx.sym.dot(mx.sym.Variable("x", stype="csr"), w).simple_bind(mx.cpu(), x=(1, 3),
                                                                      w=(3, 1))
    ex.copy_params_from({"w": mx.nd.array([[1], [0], [2]])})
    got = ex.arg_dict["w"]
    assert got.stype == "row_sparse" and got.indices.asnumpy().tolist() == [0, 2]


@pytest.mark.parametrize("kv", ["local", None])
def test_matrix_factorization_module(kv):
    """row_sparse embedding weights (Embedding(sparse_grad=True) over row_sparse variables),
    the rows of each batch pulled, Adam's lazy updates (in the store or on the device)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cases.module_matrix_factorization(mx, kv)
    assert_same(got, GOLD[f"matrix_factorization_{kv}"], f"mf_{kv}", rtol=1e-4, atol=1e-5)
