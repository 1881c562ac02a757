"""Module checkpoints and training against MXNet 1.9.1 (golden files from
tools/make_golden_module.py): a checkpoint written by MXNet's Module.fit loads into neomx and
predicts the same outputs, and neomx's fit from the same start reaches the same weights."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import neomx as mx

from ._helpers import GOLDEN, as_numpy, assert_params_close

META = json.loads((GOLDEN / "module.json").read_text())
CASES = ["one_ctx", "two_ctx"]


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN / "module.npz") as z:
        return dict(z)


def _contexts(case):
    return [mx.Context(c.split("(")[0], int(c.split("(")[1].rstrip(")")))
            for c in META[case]["contexts"]]


def _test_iter(golden):
    return mx.io.NDArrayIter(golden["x_test"], golden["y_test"], META["one_ctx"]["batch_size"])


@pytest.mark.parametrize("case", CASES)
def test_mxnet_checkpoint_loads_and_predicts_the_same(golden, case):
    mod = mx.mod.Module.load(str(GOLDEN / case), 1, context=_contexts(case))
    it = _test_iter(golden)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    pred = mod.predict(it)
    assert pred.shape == golden[case + ":pred"].shape == (13, 3)
    np.testing.assert_allclose(pred.asnumpy(), golden[case + ":pred"], rtol=1e-5, atol=1e-6)
    [(name, acc)] = mod.score(it, "acc")
    assert [name, acc] == pytest.approx(META[case]["score"][0])
    args, aux = mod.get_params()
    assert aux == {}
    assert_params_close(as_numpy(args), {k[len(case) + 5:]: v for k, v in golden.items()
                                         if k.startswith(case + ":arg:")})


@pytest.mark.parametrize("case", CASES)
def test_fit_from_the_same_start_matches_mxnet(golden, case, caplog):
    spec = META[case]
    sym = mx.sym.load(str(GOLDEN / (case + "-symbol.json")))
    train = mx.io.NDArrayIter(golden["x_train"], golden["y_train"], spec["batch_size"])
    init = {k[5:]: mx.nd.array(v) for k, v in golden.items() if k.startswith("init:")}
    mod = mx.mod.Module(sym, context=_contexts(case))
    with caplog.at_level(logging.INFO):
        mod.fit(train, kvstore=spec["kvstore"], optimizer=spec["optimizer"],
                optimizer_params=spec["optimizer_params"], arg_params=init,
                num_epoch=spec["num_epoch"])
    assert [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("Epoch[0] Train")] == spec["log"]
    expected = {k[len(case) + 5:]: v for k, v in golden.items() if k.startswith(case + ":arg:")}
    assert_params_close(as_numpy(mod.get_params()[0]), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mod.predict(_test_iter(golden)).asnumpy(), golden[case + ":pred"],
                               rtol=1e-5, atol=1e-6)
