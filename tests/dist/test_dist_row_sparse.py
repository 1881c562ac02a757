"""row_sparse traffic of dist_sync over 2 worker processes (Gloo on loopback): pushes of
row_sparse gradients gather the stored rows only (counts, then indices, then rows), their sums
and optimizer updates are MXNet's (the servers' sum, then one lazy update), and
``row_sparse_pull`` reads each worker's own identical copy (no bytes)."""
from __future__ import annotations

import sys

import numpy as np

import neomx as mx
from neomx.launch import launch_local

from ._launch import results, worker_env
from ._rows_worker import SHAPE, grad

ROW_BYTES = SHAPE[1] * 4


def test_row_sparse_push_and_pull(tmp_path):
    n = 2
    env = worker_env({"OMP_NUM_THREADS": "1", "MXNET_KVSTORE_TIMEOUT": "30"})
    code = launch_local([sys.executable, "-m", "tests.dist._rows_worker", str(tmp_path)], n,
                        extra_env=env, kill_grace=10.0, timeout=120.0)
    assert code == 0
    arrays = results(tmp_path, n)
    for key, value in arrays[0].items():  # every worker holds the same values
        np.testing.assert_array_equal(arrays[1][key], value, err_msg=key)
    res = arrays[0]

    # init: rank 0's value (rows 0 and 10 of ones), whatever rank 1 passed
    assert res["init_indices"].tolist() == list(range(SHAPE[0]))  # (every row asked for)
    expect = np.zeros(SHAPE, np.float32)
    expect[[0, 10]] = 1
    np.testing.assert_array_equal(res["init"], expect)

    # pushes: the sum of the workers' rows replaces the value (MXNet's dist_sync without an
    # updater)
    for step in range(3):
        total = sum(grad(w, step).asnumpy() for w in range(n))
        np.testing.assert_allclose(res[f"sum{step}"], total, rtol=1e-6, atol=1e-7)
        assert res[f"sum{step}_indices"].tolist() == list(range(SHAPE[0]))
    np.testing.assert_array_equal(res["dense"], np.full(5, 3.0, np.float32))

    # the optimizer: the same as one store fed the summed gradients (lazy SGD on their rows)
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    w0 = np.random.RandomState(3).uniform(-1, 1, SHAPE).astype(np.float32)
    kv.init("w", mx.nd.array(w0).tostype("row_sparse"))
    for step in range(3):
        kv.push("w", [grad(w, step) for w in range(n)])
    full = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=full, row_ids=mx.nd.arange(SHAPE[0]))
    np.testing.assert_allclose(res["sgd"], full.asnumpy(), rtol=1e-6, atol=1e-7)
    untouched = np.setdiff1d(np.arange(SHAPE[0]),
                             np.concatenate([grad(w, s).indices.asnumpy()
                                             for w in range(n) for s in range(3)]))
    np.testing.assert_array_equal(res["sgd"][untouched], w0[untouched])
    ids = np.unique(np.concatenate([grad(0, 0).indices.asnumpy(), [1, 2, 999]]))
    assert res["sgd_some_indices"].tolist() == ids.tolist()
    np.testing.assert_allclose(res["sgd_some"][ids], full.asnumpy()[ids], rtol=1e-6, atol=1e-7)

    # bytes: 16 (count + checksum) + the largest row count x (8 + row bytes) per worker and
    # push -- proportional to the rows, far below the dense 64000 -- and none for pulls
    for rec in results(tmp_path, n, "json"):
        sent = rec["sent"]
        assert sent["pull"] == 0
        for step in range(3):
            width = max(sent[f"rows{step}"])
            assert sent[f"push{step}"] == 16 + width * (8 + ROW_BYTES)
            assert sent[f"push{step}_all"] - sent[f"push{step}"] < 100  # (the dense key)
            assert sent[f"push{step}"] < SHAPE[0] * ROW_BYTES / 10
