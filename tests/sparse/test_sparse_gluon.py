"""gluon with sparse parameters (issue 16, step 5): Embedding(sparse_grad=True) and
contrib.nn.SparseEmbedding trained by a Trainer, against MXNet 1.9.1
(tests/golden/sparse_grad/cases.json, tools/make_golden_sparse_grad.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GLUON = json.loads((Path(__file__).resolve().parents[1] / "golden" / "sparse_grad"
                    / "cases.json").read_text())["gluon"]
W0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 4
BATCHES = [[[0, 3], [3, 5]], [[1, 1], [0, 2]], [[4, 0], [5, 5]]]
OPTS = {"sgd": {"learning_rate": 0.1, "wd": 0.01, "momentum": 0.9}, "adam": {"learning_rate": 0.1}}


@pytest.mark.parametrize("name", ["embedding", "sparse_embedding"])
@pytest.mark.parametrize("opt", sorted(OPTS))
def test_trainer_with_sparse_parameters(name, opt):
    rec = GLUON[f"{name}_{opt}"]
    if name == "embedding":
        net = mx.gluon.nn.Embedding(6, 2, sparse_grad=True)
    else:
        net = mx.gluon.contrib.nn.SparseEmbedding(6, 2)
    net.initialize(mx.init.Constant(mx.nd.array(W0)))
    trainer = mx.gluon.Trainer(net.collect_params(), opt, OPTS[opt])
    rows = []
    for b in BATCHES:
        with mx.autograd.record():
            loss = (net(mx.nd.array(b)) ** 2).sum()
        loss.backward()
        rows.append(net.weight.grad().indices.asnumpy().tolist())
        trainer.step(2)
    w = net.weight.data() if name == "embedding" else \
        net.weight.row_sparse_data(mx.nd.arange(6))
    assert rows == rec["grad_rows"]
    assert w.stype == rec["weight_stype"]
    assert trainer._update_on_kvstore == rec["update_on_kvstore"]
    np.testing.assert_allclose(w.asnumpy(), np.array(rec["weight"]), rtol=1e-5, atol=1e-5)


def test_row_sparse_parameter_errors():
    p = mx.gluon.Parameter("w", shape=(4, 2), stype="row_sparse")
    p.initialize()
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(mx.nd.array([0]))
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    d = mx.gluon.Parameter("d", shape=(4, 2))
    d.initialize()
    with pytest.raises(RuntimeError, match="Please use data"):
        d.row_sparse_data(mx.nd.array([0]))
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        mx.gluon.Trainer([p], "sgd", update_on_kvstore=False)._init_kvstore()
