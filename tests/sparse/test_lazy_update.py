"""Optimizers with row_sparse gradients (lazy and standard updates) and KVStore row_sparse
push/pull (issue 16, step 5), against MXNet 1.9.1 (tests/golden/sparse_grad/cases.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "sparse_grad"
                     / "cases.json").read_text())
LAZY = GOLDEN["lazy"]
CONFIGS = {
    "sgd": ("sgd", dict(learning_rate=0.1, wd=0.01)),
    "sgd_nolazy": ("sgd", dict(learning_rate=0.1, wd=0.01, lazy_update=False)),
    "sgd_mom": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "sgd_mom_nolazy": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "adam": ("adam", dict(learning_rate=0.01, wd=0.01)),
    "adam_nolazy": ("adam", dict(learning_rate=0.01, wd=0.01, lazy_update=False)),
    "adagrad": ("adagrad", dict(learning_rate=0.1)),
    "adagrad_wd": ("adagrad", dict(learning_rate=0.1, wd=0.1)),
    "ftrl": ("ftrl", dict(learning_rate=0.1, wd=0.01)),
    "sgd_clip": ("sgd", dict(learning_rate=0.1, clip_gradient=0.3, rescale_grad=2.0)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_updates_with_row_sparse_gradients(name):
    opt_name, kw = CONFIGS[name]
    upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
    w = mx.nd.array(LAZY["inputs"]["w0"])
    steps = [mx.nd.sparse.row_sparse_array((np.array(d, np.float32), rows), shape=(5, 3))
             for d, rows in LAZY["inputs"]["steps"]]
    if "error" in LAZY[name]:
        with pytest.raises(mx.base.MXNetError, match="does not support wd"):
            for g in steps:
                upd(0, g, w)
                w.wait_to_read()
        return
    for g in steps:
        upd(0, g, w)
    np.testing.assert_allclose(w.asnumpy(), np.array(LAZY[name]["weight"]), rtol=1e-5,
                               atol=1e-6)


KV = GOLDEN["kvstore"]


def _check(a, rec):
    assert a.stype == rec["stype"]
    assert a.indices.asnumpy().tolist() == rec["indices"]
    np.testing.assert_allclose(a.asnumpy(), np.array(rec["value"]))


@pytest.mark.parametrize("kind", ["local", "device"])
def test_kvstore_row_sparse_push_pull(kind):
    w = np.arange(15, dtype=np.float32).reshape(5, 3)
    g = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [0, 3]), shape=(5, 3))
    g2 = mx.nd.sparse.row_sparse_array((np.ones((1, 3), np.float32) * 2, [3]), shape=(5, 3))
    kv = mx.kv.create(kind)
    kv.init("w", mx.nd.array(w).tostype("row_sparse"))
    res = mx.nd.sparse.zeros("row_sparse", (5, 3))
    kv.row_sparse_pull("w", out=res, row_ids=mx.nd.array([3, 1, 3]))
    _check(res, KV[f"pull_{kind}"])
    kv.push("w", [g, g2])
    kv.row_sparse_pull("w", out=res, row_ids=mx.nd.array([0, 1, 3]))
    _check(res, KV[f"push_pull_{kind}"])
    kv = mx.kv.create(kind)
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
    kv.init("w", mx.nd.array(w).tostype("row_sparse"))
    kv.push("w", [g, g2])
    outs = [mx.nd.sparse.zeros("row_sparse", (5, 3)) for _ in range(2)]
    kv.row_sparse_pull("w", out=outs, row_ids=mx.nd.arange(5))
    for o in outs:
        _check(o, KV[f"update_{kind}"])
    with pytest.raises(mx.base.MXNetError, match="row_sparse_pull expects row_sparse"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((5, 3)), row_ids=mx.nd.arange(5))
