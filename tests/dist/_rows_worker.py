"""One worker of tests/dist/test_dist_row_sparse.py (started by ``neomx.launch``):

    PYTHONPATH=<repository root> python -m tests.dist._rows_worker OUT_DIR

row_sparse pushes and pulls through a dist_sync store. Writes ``OUT_DIR/rank<r>.npz`` (the
values) and ``OUT_DIR/rank<r>.json`` (the bytes each step sent).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import neomx as mx

SHAPE = (1000, 16)


def rows_of(rank, step):
    """The rows worker ``rank`` pushes at ``step`` (overlapping between workers)."""
    rng = np.random.RandomState(100 * step + rank)
    return np.unique(rng.choice(SHAPE[0], 3 + 2 * rank + step, replace=False))


def grad(rank, step):
    rows = rows_of(rank, step)
    vals = np.random.RandomState(7 + 100 * step + rank).uniform(-1, 1, (len(rows), SHAPE[1]))
    return mx.nd.sparse.row_sparse_array((vals.astype(np.float32), rows), shape=SHAPE)


def main(out: Path):
    kv = mx.kv.create("dist_sync")
    n, r = kv.num_workers, kv.rank
    res, sent = {}, {}
    st = kv.comm_stats

    # init from rank 0's row_sparse value (the workers' differ, even in their row counts)
    init = mx.nd.sparse.row_sparse_array(
        (np.full((2 + r, SHAPE[1]), r + 1, np.float32), np.arange(2 + r) * 10), shape=SHAPE)
    kv.init("w", init)
    pulled = mx.nd.sparse.zeros("row_sparse", SHAPE)
    before = st["bytes"]
    kv.row_sparse_pull("w", out=pulled, row_ids=mx.nd.arange(SHAPE[0]))
    sent["pull"] = st["bytes"] - before
    res["init_indices"] = pulled.indices.asnumpy()
    res["init"] = pulled.asnumpy()

    # pushes without an updater store the sum over the workers; a dense key rides along
    kv.init("d", mx.nd.zeros((5,)))
    for step in range(3):
        b0, s0 = st["bytes"], st["sparse_bytes"]
        kv.push(["w", "d"], [grad(r, step), mx.nd.ones((5,)) * (r + 1)])
        sent[f"push{step}"] = st["sparse_bytes"] - s0
        sent[f"push{step}_all"] = st["bytes"] - b0
        sent[f"rows{step}"] = [len(rows_of(w, step)) for w in range(n)]
        kv.row_sparse_pull("w", out=pulled, row_ids=mx.nd.array(np.arange(0, SHAPE[0], 1)))
        res[f"sum{step}"] = pulled.asnumpy()
        res[f"sum{step}_indices"] = pulled.indices.asnumpy()
    dense = mx.nd.zeros((5,))
    kv.pull("d", out=dense)
    res["dense"] = dense.asnumpy()

    # with an optimizer: the update of the summed gradient, lazily on its rows
    kv2 = mx.kv.create("dist_sync")
    kv2.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    w0 = np.random.RandomState(3).uniform(-1, 1, SHAPE).astype(np.float32)
    kv2.init("w", mx.nd.array(w0).tostype("row_sparse"))
    for step in range(3):
        kv2.push("w", grad(r, step))
    some = mx.nd.sparse.zeros("row_sparse", SHAPE)
    ids = np.concatenate([rows_of(0, 0), [1, 2, 999]])
    kv2.row_sparse_pull("w", out=some, row_ids=mx.nd.array(ids))
    res["sgd_some"] = some.asnumpy()
    res["sgd_some_indices"] = some.indices.asnumpy()
    full = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv2.row_sparse_pull("w", out=full, row_ids=mx.nd.arange(SHAPE[0]))
    res["sgd"] = full.asnumpy()
    np.savez(out / f"rank{r}.npz", **res)
    (out / f"rank{r}.json").write_text(json.dumps({"sent": sent, "num_workers": n}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
