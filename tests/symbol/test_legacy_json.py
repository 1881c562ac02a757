"""Symbol files saved by MXNet 0.8-1.0 load as MXNet 1.9.1 loads them (its legacy upgrade):
golden files and results from ``tools/make_golden_legacy.py``."""
from __future__ import annotations

import json
import logging
import pathlib

import numpy as np
import pytest

import neomx as mx

DIR = pathlib.Path(__file__).parent.parent / "golden" / "legacy"
EXPECTED = json.loads((DIR / "expected.json").read_text())
SHAPES = {"lenet08": {"data": (2, 3, 8, 8)}, "sum08": {"a": (2, 3), "b": (2, 3)},
          "sum09": {"a": (2, 3), "b": (2, 3)}}


def _entries_without_versions(doc):
    """The JSON with input entries as (node, index): MXNet 1.9.1 writes the upgraded auxiliary
    inputs with entry version 0, neomx (which keeps no versions) with 1, as for any aux input."""
    doc = json.loads(json.dumps(doc))
    for node in doc["nodes"]:
        node["inputs"] = [e[:2] for e in node["inputs"]]
    doc["heads"] = [e[:2] for e in doc["heads"]]
    return doc


@pytest.mark.parametrize("case", sorted(EXPECTED["cases"]))
def test_old_files_upgrade_as_mxnet(case, caplog):
    want = EXPECTED["cases"][case]
    with caplog.at_level(logging.INFO, logger="neomx.symbol"):
        sym = mx.sym.load(str(DIR / f"{case}-symbol.json"))
    assert "Attempting to upgrade" in caplog.text and "Symbol successfully upgraded!" in caplog.text
    assert sym.list_arguments() == want["arguments"]
    assert sym.list_auxiliary_states() == want["auxiliary_states"]
    assert sym.list_outputs() == want["outputs"]
    assert sym.attr_dict() == want["attr_dict"]
    assert _entries_without_versions(json.loads(sym.tojson())) == _entries_without_versions(want["json"])
    got = sym.infer_shape(**SHAPES[case])
    assert [[list(s) for s in part] for part in got] == want["infer_shape"]


def test_current_files_do_not_log_an_upgrade(caplog):
    sym = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2)
    with caplog.at_level(logging.INFO, logger="neomx.symbol"):
        mx.sym.load_json(sym.tojson())
    assert "upgrade" not in caplog.text


def test_an_old_checkpoint_runs():
    sym, args, aux = mx.model.load_checkpoint(str(DIR / "lenet08"), 1)
    assert sorted(aux) == ["bn_moving_mean", "bn_moving_var"]
    x = np.array(EXPECTED["checkpoint"]["input"], dtype=np.float32)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"], context=mx.cpu())
    mod.bind(data_shapes=[("data", x.shape)], for_training=False)
    mod.set_params(args, aux)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), EXPECTED["checkpoint"]["output"],
                               rtol=1e-5, atol=1e-6)


def test_a_09_file_missing_auxiliary_inputs_raises():
    # MXNet 1.9.1 only adds auxiliary variables to 0.8 files; later files missing them give it a
    # symbol without auxiliary states that cannot run. neomx says so at load.
    doc = json.loads((DIR / "lenet08-symbol.json").read_text())
    doc["attrs"] = {"mxnet_version": ["int", 904]}
    with pytest.raises(mx.MXNetError, match="BatchNorm .node bn. has 3 inputs, expected 5"):
        mx.sym.load_json(json.dumps(doc))
