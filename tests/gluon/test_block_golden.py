"""Gluon Blocks against MXNet 1.9.1 (records from tools/make_golden_gluon_block.py): parameter
names, structural names, outputs and gradients imperative and hybridized, files written by
MXNet loaded by neomx and files written by neomx equal to MXNet's, error texts."""
import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

from . import _models

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "gluon_block"
REC = json.loads((GOLDEN / "records.json").read_text())
NAMES = sorted(_models.MODELS)


def build(name):
    with mx.name.NameManager():
        return _models.MODELS[name](mx)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybrid"])
@pytest.mark.parametrize("name", NAMES)
def test_names_values_gradients(name, hybrid):
    rec = REC[name]
    net, shapes = build(name)
    out, xgrads, pgrads = _models.run(mx, net, shapes, hybrid)
    assert net.prefix == rec["prefix"]
    assert [[k, list(p.shape), p.grad_req] for k, p in net.collect_params().items()] == \
        rec["params"]
    assert sorted(net._collect_params_with_prefix()) == rec["structural"]
    want = rec["hybrid" if hybrid else "imperative"]
    close(out, want["out"])
    for g, w in zip(xgrads, want["xgrads"]):
        close(g, w)
    assert sorted(pgrads) == sorted(want["pgrads"])
    for k, g in pgrads.items():
        close(g, want["pgrads"][k])


@pytest.mark.parametrize("name", NAMES)
def test_save_parameters_bytes_equal_mxnet(name, tmp_path):
    net, shapes = build(name)
    _models.run(mx, net, shapes, True)
    net.save_parameters(str(tmp_path / "p.params"))
    assert (tmp_path / "p.params").read_bytes() == (GOLDEN / f"{name}.params").read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_load_parameters_written_by_mxnet(name):
    net, shapes = build(name)
    net.initialize()
    xs = [mx.nd.array(_models.values_for(f"x{i}", s)) for i, s in enumerate(shapes)]
    net.load_parameters(str(GOLDEN / f"{name}.params"))
    close(net(*xs).asnumpy(), REC[name]["imperative"]["out"])


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("custom_block", "no_scope")])
def test_load_legacy_prefixed_file(name):
    """MXNet's fallback: a file keyed by prefix-stripped full names (save_params)."""
    net, shapes = build(name)
    xs = [mx.nd.array(_models.values_for(f"x{i}", s)) for i, s in enumerate(shapes)]
    net.load_parameters(str(GOLDEN / f"{name}-legacy.params"))
    close(net(*xs).asnumpy(), REC[name]["imperative"]["out"])


@pytest.mark.parametrize("name", [n for n in NAMES if n != "custom_block"])
def test_export_equals_mxnet_export(name, tmp_path):
    net, shapes = build(name)
    _models.run(mx, net, shapes, True)
    net.export(str(tmp_path / "m"))
    got = json.loads((tmp_path / "m-symbol.json").read_text())
    want = json.loads((GOLDEN / f"{name}-symbol.json").read_text())
    assert got["nodes"] == want["nodes"]
    assert got["heads"] == want["heads"]
    assert got["arg_nodes"] == want["arg_nodes"]
    ours = mx.nd.load(str(tmp_path / "m-0000.params"))
    theirs = mx.nd.load(str(GOLDEN / f"{name}-0000.params"))
    assert list(ours) == list(theirs)
    for k in ours:
        np.testing.assert_array_equal(ours[k].asnumpy(), theirs[k].asnumpy())


@pytest.mark.parametrize("name", [n for n in NAMES if n != "custom_block"])
def test_symbolblock_imports_mxnet_export(name):
    _, shapes = build(name)
    inputs = ["data"] if len(shapes) == 1 else [f"data{i}" for i in range(len(shapes))]
    blk = mx.gluon.SymbolBlock.imports(str(GOLDEN / f"{name}-symbol.json"), inputs,
                                       str(GOLDEN / f"{name}-0000.params"))
    xs = [mx.nd.array(_models.values_for(f"x{i}", s)) for i, s in enumerate(shapes)]
    close(blk(*xs).asnumpy(), REC[name]["hybrid"]["out"])


def test_module_loads_gluon_export(tmp_path):
    net, shapes = build("hybrid_mlp")
    _models.run(mx, net, shapes, True)
    net.export(str(tmp_path / "m"), epoch=3)
    sym, args, auxs = mx.model.load_checkpoint(str(tmp_path / "m"), 3)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", shapes[0])], for_training=False)
    mod.set_params(args, auxs)
    x = mx.nd.array(_models.values_for("x0", shapes[0]))
    mod.forward(mx.io.DataBatch([x]), is_train=False)
    close(mod.get_outputs()[0].asnumpy(), REC["hybrid_mlp"]["hybrid"]["out"])


def _err(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return e
    raise AssertionError("no error raised")


def test_error_texts():
    errs = REC["errors"]
    nn = mx.gluon.nn
    with mx.name.NameManager():
        d = nn.Dense(3)
        d.initialize()
        e = _err(lambda: d.weight.data())
        assert isinstance(e, mx.gluon.DeferredInitializationError)
        assert isinstance(e, mx.base.MXNetError)
        assert str(e) == errs["deferred_data"][1]
        d2 = nn.Dense(3)
        e = _err(lambda: d2.weight.data())
        assert type(e).__name__ == errs["uninitialized_data"][0] == "RuntimeError"
        assert str(e) == errs["uninitialized_data"][1]
        e = _err(lambda: setattr(d, "weight", 3))
        assert isinstance(e, TypeError)
        assert str(e) == errs["change_type"][1].replace("mxnet.", "neomx.")

        class Branchy(mx.gluon.HybridBlock):
            def hybrid_forward(self, F, x):
                if x.sum() > 0:
                    return x
                return -x
        b = Branchy()
        b.hybridize()
        e = _err(lambda: b(mx.nd.ones((2,))))
        assert type(e).__name__ == errs["control_flow"][0]
        assert str(e) == errs["control_flow"][1]
        net, shapes = _models.hybrid_mlp(mx)
        net.initialize()
        net(mx.nd.ones(shapes[0]))
        other, _ = _models.custom_block(mx)
        other.initialize()
        e = _err(lambda: other.load_parameters(str(GOLDEN / "hybrid_mlp.params")))
        assert isinstance(e, AssertionError) and isinstance(e, mx.base.MXNetError)
        assert str(e) == errs["load_missing"][1].replace(
            errs["load_missing"][1].split("'")[3], str(GOLDEN / "hybrid_mlp.params"))
        e = _err(lambda: mx.gluon.Parameter("p", shape=(2, 0)).initialize())
        assert isinstance(e, ValueError) and str(e) == errs["bad_init_shape"][1]
        e = _err(lambda: net[0].params.get("weight", shape=(5, 5)))
        assert isinstance(e, AssertionError) and str(e) == errs["get_mismatch"][1]
