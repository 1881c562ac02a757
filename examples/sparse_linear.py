"""Sparse logistic regression on a generated LibSVM file with a million features.

What MXNet's ``example/sparse/linear_classification`` does, on neomx's imperative path:

* a LibSVM file (zero-based ``label index:value ...`` lines) with 1,000,000 features is
  generated, and ``mx.io.LibSVMIter`` reads it as ``csr`` batches;
* the weight (1,000,000 x 1) lives in a kvstore as a ``row_sparse`` array; for each batch only
  the rows of the features present in it are fetched with ``kv.row_sparse_pull``;
* ``mx.nd.sparse.dot(csr, weight)`` under ``autograd`` gives a ``row_sparse`` gradient (those
  rows only), pushed to the kvstore whose optimizer (lazy Adam or SGD) updates just those rows.

A tqdm progress bar shows the training loss; each epoch prints the training loss and the test
accuracy.

    .venv/bin/python examples/sparse_linear.py [--rows 100000] [--epochs 3] [--optimizer adam]
    .venv/bin/python examples/sparse_linear.py --quick      (a few seconds; run by the tests)
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import neomx as mx
from neomx import autograd

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm ships with the demo extra
    raise ImportError("examples/sparse_linear.py needs tqdm for its progress bar: "
                      "pip install 'neomx[demo]' (or pip install tqdm)") from None

FEATURES = 1_000_000


def generate_libsvm(path, rows, features=FEATURES, nnz=40, informative=20_000, seed=1,
                    truth_seed=0):
    """Write ``rows`` LibSVM lines (drawn with ``seed``) to ``path``: half of each row's ``nnz``
    features come from ``informative`` frequent ones, which carry hidden weights (drawn with
    ``truth_seed``), half from all ``features``; the label is 1 when the hidden score is
    positive. Returns the hidden weights."""
    hidden = np.random.RandomState(truth_seed)
    truth = np.zeros(features, np.float32)
    frequent = hidden.choice(features, informative, replace=False)
    truth[frequent] = hidden.normal(0, 1, informative)
    rng = np.random.RandomState(seed)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for start in range(0, rows, 10_000):
            n = min(10_000, rows - start)
            cols = np.concatenate([frequent[rng.randint(0, informative, (n, nnz // 2))],
                                   rng.randint(0, features, (n, nnz - nnz // 2))], axis=1)
            cols.sort(axis=1)
            vals = rng.uniform(0.1, 1.0, cols.shape).astype(np.float32)
            score = (truth[cols] * vals).sum(1)
            labels = (score > 0).astype(int)
            f.write("".join(
                "%d %s\n" % (labels[i], " ".join("%d:%.3f" % cv for cv in zip(cols[i], vals[i])))
                for i in range(n)))
    os.replace(tmp, path)
    return truth


def logistic_loss(z, y):
    """Per-example binary cross-entropy of logits ``z`` (n, 1) for labels ``y`` (n,)."""
    return mx.nd.relu(z) - z * y.reshape((-1, 1)) + mx.nd.log1p(mx.nd.exp(-mx.nd.abs(z)))


def pull_weight(kv, row_ids):
    w = mx.nd.sparse.zeros("row_sparse", (FEATURES, 1))
    kv.row_sparse_pull("weight", out=w, row_ids=row_ids)
    return w


def evaluate(kv, path, batch_size):
    """Accuracy on the LibSVM file ``path`` (padding rows of the last batch left out)."""
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(FEATURES,), batch_size=batch_size)
    bias = mx.nd.zeros((1,))
    kv.pull("bias", out=bias)
    correct = seen = 0
    for batch in it:
        x, y = batch.data[0], batch.label[0]
        w = pull_weight(kv, x.indices)
        pred = (mx.nd.sparse.dot(x, w) + bias).asnumpy().ravel() > 0
        keep = batch_size - batch.pad
        correct += int((pred[:keep] == (y.asnumpy()[:keep] > 0.5)).sum())
        seen += keep
    return correct / seen


def train(train_path, test_path, epochs, batch_size, optimizer, lr, progress=True):
    mx.random.seed(0)
    kv = mx.kv.create("local")
    kv.init("weight", mx.nd.random.normal(0, 0.01, (FEATURES, 1)).tostype("row_sparse"))
    kv.init("bias", mx.nd.zeros((1,)))
    kv.set_optimizer(mx.optimizer.create(optimizer, learning_rate=lr, lazy_update=True,
                                         rescale_grad=1.0 / batch_size))
    it = mx.io.LibSVMIter(data_libsvm=train_path, data_shape=(FEATURES,),
                          batch_size=batch_size)
    bias = mx.nd.zeros((1,))
    acc = 0.0
    for epoch in range(epochs):
        it.reset()
        total = count = 0.0
        bar = tqdm(it, desc=f"epoch {epoch}", unit="batch", disable=not progress, leave=False)
        for batch in bar:
            x, y = batch.data[0], batch.label[0]   # csr (batch, 1M), dense (batch,)
            w = pull_weight(kv, x.indices)          # only the rows this batch uses
            kv.pull("bias", out=bias)
            w.attach_grad(stype="row_sparse")
            bias.attach_grad()
            with autograd.record():
                loss = logistic_loss(mx.nd.sparse.dot(x, w) + bias, y)
            loss.backward()
            kv.push("weight", w.grad)               # row_sparse: a lazy update of those rows
            kv.push("bias", bias.grad)
            total += float(loss.sum().asscalar())
            count += batch_size
            bar.set_postfix(loss=f"{total / count:.4f}")
        acc = evaluate(kv, test_path, batch_size)
        print(f"epoch {epoch}: train loss {total / count:.4f}  test accuracy {acc:.3f}")
    return acc


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000, help="training rows")
    p.add_argument("--test-rows", type=int, default=10_000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    p.add_argument("--lr", type=float, default=None, help="default: 0.02 (adam), 2.0 (sgd)")
    p.add_argument("--out", default=None, help="folder for the LibSVM files (default: temp)")
    p.add_argument("--quick", action="store_true", help="small data, 2 epochs, no progress bar")
    a = p.parse_args(argv)
    p_informative = 20_000
    if a.quick:
        a.rows, a.test_rows, a.epochs, a.batch_size = 4_000, 1_000, 2, 250
        p_informative = 2_000
    lr = a.lr if a.lr is not None else (0.02 if a.optimizer == "adam" else 2.0)
    folder = a.out or tempfile.mkdtemp(prefix="sparse_linear_")
    os.makedirs(folder, exist_ok=True)
    train_path = os.path.join(folder, "train.libsvm")
    test_path = os.path.join(folder, "test.libsvm")
    t = time.perf_counter()
    generate_libsvm(train_path, a.rows, informative=p_informative, seed=1)
    # other rows, the same hidden weights
    generate_libsvm(test_path, a.test_rows, informative=p_informative, seed=2)
    print(f"generated {a.rows} training and {a.test_rows} test rows with {FEATURES:,} features "
          f"in {time.perf_counter() - t:.1f} s ({folder})")
    t = time.perf_counter()
    acc = train(train_path, test_path, a.epochs, a.batch_size, a.optimizer, lr,
                progress=not a.quick)
    print(f"trained in {time.perf_counter() - t:.1f} s: test accuracy {acc:.3f}")
    return acc


if __name__ == "__main__":
    main()
