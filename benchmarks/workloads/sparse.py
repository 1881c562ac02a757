"""``sparse``: csr . dense products and sparse logistic-regression training steps (density 1%).

The data: a csr batch of 1024 rows x 100,000 features at density 1% (1,000 stored values per
row, ~1M in all) from a fixed seed, the same for every peer.

* **dot** -- ``mx.nd.sparse.dot(csr, W)`` with a dense W (100,000 x 32), 20 times;
* **step** -- one training step of sparse logistic regression, MXNet's
  ``example/sparse/linear_classification`` loop done imperatively, 20 times: the weight
  (100,000 x 1, all rows stored) lives in a kvstore as ``row_sparse``; ``kv.row_sparse_pull``
  fetches the rows of the batch's features, ``dot(csr, w)`` under ``autograd.record()`` with a
  ``row_sparse`` gradient buffer, a numerically stable logistic loss, ``backward()``, and
  ``kv.push`` of the gradient to the store's lazy SGD.

neomx and MXNet 1.9.1 run the same code. PyTorch's peer (``torch.sparse``): a ``sparse_csr``
tensor times the dense W, and for the step the natural PyTorch form of sparse features -- an
``nn.EmbeddingBag(mode='sum', sparse=True)`` weighted by the values, ``binary_cross_entropy_
with_logits`` and ``optim.SGD`` on its sparse gradient.

Metric: seconds for the 20 products plus the 20 steps, after a warm-up; ``dot_ms`` and
``step_ms`` are in the extras.

``python benchmarks/workloads/sparse.py --embedding-memory`` measures something else, by hand
(~1 GB per run, not part of ``make bench``): the peak memory of one training step of a
10M-row embedding (dim 8, a batch of 4096 ids) with a ``row_sparse`` gradient and lazy SGD
against its dense form (dense gradient, standard SGD), for neomx and MXNet 1.9.1 (each in a
fresh process).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

METRIC = ("time_s", "s", "20 csr.dense dots + 20 sparse logistic steps, 1024x100k at 1%")
ROWS, FEATURES, DENSITY, K = 1024, 100_000, 0.01, 32
LR = 0.5


def _iters(cfg):
    return (5, 1) if cfg["quick"] else (20, 3)   # (timed repetitions, warm-up)


def _data(seed):
    """(indptr, indices, values, labels, W, w0) of the benchmark batch."""
    rng = np.random.RandomState(seed)
    per_row = int(FEATURES * DENSITY)
    # distinct sorted columns per row: one at a random place in each of per_row equal buckets
    width = FEATURES // per_row
    cols = np.arange(per_row) * width + rng.randint(0, width, (ROWS, per_row))
    indices = cols.reshape(-1).astype(np.int64)
    indptr = np.arange(ROWS + 1, dtype=np.int64) * per_row
    values = rng.uniform(0, 1, indices.shape[0]).astype(np.float32)
    labels = rng.randint(0, 2, ROWS).astype(np.float32)
    W = rng.uniform(-1, 1, (FEATURES, K)).astype(np.float32)
    w0 = rng.normal(0, 0.01, (FEATURES, 1)).astype(np.float32)
    return indptr, indices, values, labels, W, w0


def _timed(fn, n, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return time.perf_counter() - t0


def run_mx(mx, cfg):
    n, warmup = _iters(cfg)
    indptr, indices, values, labels, W, w0 = _data(cfg["seed"])
    x = mx.nd.sparse.csr_matrix((values, indices, indptr), shape=(ROWS, FEATURES))
    y = mx.nd.array(labels)
    Wn = mx.nd.array(W)
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.array(w0).tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=LR, lazy_update=True,
                                         rescale_grad=1.0 / ROWS))
    row_ids = x.indices
    state = {}

    def dot():
        state["out"] = mx.nd.sparse.dot(x, Wn)

    def step():
        w = mx.nd.sparse.zeros("row_sparse", (FEATURES, 1))
        kv.row_sparse_pull("w", out=w, row_ids=row_ids)
        w.attach_grad(stype="row_sparse")
        with mx.autograd.record():
            z = mx.nd.sparse.dot(x, w)
            loss = mx.nd.relu(z) - z * y.reshape((-1, 1)) + \
                mx.nd.log1p(mx.nd.exp(-mx.nd.abs(z)))
        loss.backward()
        kv.push("w", w.grad)
        state["loss"] = loss

    t_dot = _timed(dot, n, warmup, mx.nd.waitall)
    t_step = _timed(step, n, warmup, mx.nd.waitall)
    check = float(state["out"].asnumpy()[0, 0])
    return {"value": t_dot + t_step,
            "extra": {"dot_ms": 1e3 * t_dot / n, "step_ms": 1e3 * t_step / n, "repeats": n,
                      "nnz": int(indices.shape[0]), "out00": check,
                      "last_loss": float(state["loss"].mean().asnumpy().ravel()[0])}}


def run_torch(torch, cfg):
    n, warmup = _iters(cfg)
    indptr, indices, values, labels, W, w0 = _data(cfg["seed"])
    ip, ix, v = (torch.from_numpy(a) for a in (indptr, indices, values))
    x = torch.sparse_csr_tensor(ip, ix, v, (ROWS, FEATURES))
    Wt = torch.from_numpy(W)
    y = torch.from_numpy(labels).reshape(-1, 1)
    bag = torch.nn.EmbeddingBag(FEATURES, 1, mode="sum", sparse=True)
    with torch.no_grad():
        bag.weight.copy_(torch.from_numpy(w0))
    opt = torch.optim.SGD(bag.parameters(), lr=LR / ROWS)
    offsets = ip[:-1]
    state = {}

    def dot():
        state["out"] = x @ Wt

    def step():
        opt.zero_grad()
        z = bag(ix, offsets, per_sample_weights=v)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none")
        loss.sum().backward()
        opt.step()
        state["loss"] = loss

    t_dot = _timed(dot, n, warmup, lambda: None)
    t_step = _timed(step, n, warmup, lambda: None)
    return {"value": t_dot + t_step,
            "extra": {"dot_ms": 1e3 * t_dot / n, "step_ms": 1e3 * t_step / n, "repeats": n,
                      "nnz": int(indices.shape[0]), "out00": float(state["out"][0, 0]),
                      "last_loss": float(state["loss"].mean().detach())}}


# --- memory of a 10M-row embedding step (by hand: --embedding-memory) -------------------------
EMB_ROWS, EMB_DIM, EMB_BATCH = 10_000_000, 8, 4096

_MEMORY_CHILD = r'''
import json, sys
sys.path.insert(0, {bench!r})
import common
import numpy as np
import {lib} as mx
form = {form!r}
rng = np.random.RandomState(0)
ids = mx.nd.array(rng.randint(0, {rows}, {batch}))
w = mx.nd.random.uniform(-0.01, 0.01, ({rows}, {dim}))
mx.nd.waitall()
base = common.rss_bytes()
exact = common.reset_peak_rss()
sparse = form == "row_sparse"
w.attach_grad(stype="row_sparse" if sparse else "default")
with mx.autograd.record():
    e = mx.nd.Embedding(ids, w, input_dim={rows}, output_dim={dim}, sparse_grad=sparse)
    loss = (e * e).sum()
loss.backward()
mx.nd.sgd_update(w, w.grad, lr=0.1, lazy_update=sparse, out=w)
mx.nd.waitall()
peak = common.peak_rss_bytes()
print(json.dumps(dict(peak_mib=(peak - base) / 2**20, weight_mib={rows} * {dim} * 4 / 2**20,
                      grad_stype=w.grad.stype, exact=exact)))
'''


def embedding_memory(peers=("neomx", "mxnet")):
    """{peer: {form: record}} for one 10M-row embedding step, each in a fresh process."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    repo = os.path.dirname(here)
    out = {}
    for peer in peers:
        if peer == "neomx":
            cmd = [sys.executable]
        else:
            cmd = [os.path.join(repo, "tools", "mxnet-oracle")]
        for form in ("row_sparse", "default"):
            code = _MEMORY_CHILD.format(bench=here, lib="neomx" if peer == "neomx" else "mxnet",
                                        form=form, rows=EMB_ROWS, dim=EMB_DIM, batch=EMB_BATCH)
            p = subprocess.run(cmd + ["-c", code], capture_output=True, text=True, cwd=repo,
                               env=dict(os.environ, MXNET_SUBGRAPH_VERBOSE="0"))
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            out.setdefault(peer, {})[form] = json.loads(lines[-1]) if lines else \
                {"error": (p.stderr or p.stdout)[-500:]}
    return out


if __name__ == "__main__":
    if "--embedding-memory" in sys.argv:
        peers = ("neomx",) if "--neomx-only" in sys.argv else ("neomx", "mxnet")
        res = embedding_memory(peers)
        print(json.dumps(res, indent=1))
        for peer, forms in res.items():
            if all("peak_mib" in r for r in forms.values()):
                print(f"{peer}: 10M x {EMB_DIM} embedding step peak above baseline: "
                      f"row_sparse {forms['row_sparse']['peak_mib']:.0f} MiB, "
                      f"dense {forms['default']['peak_mib']:.0f} MiB "
                      f"(weight {forms['default']['weight_mib']:.0f} MiB)")
    else:
        print(__doc__)
