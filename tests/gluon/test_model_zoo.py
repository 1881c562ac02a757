"""gluon.model_zoo against MXNet 1.9.1 (tests/golden/model_zoo, from
tools/make_golden_model_zoo.py).

For every model of ``vision.get_model``: the parameter names and shapes once deferred shapes are
inferred, the structural names of ``save_parameters`` files (what pretrained files hold) and the
symbol JSON, text for text. For a few small models: the output for a fixed input with every
parameter set from a RandomState keyed by its name, imperative, hybridized, and from the
exported files. Then the pretrained-file store: short hashes, clear errors for a missing or
corrupt file, loading a file whose hash is in the table, ``purge``.
"""
from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.gluon.model_zoo import model_store, vision

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "model_zoo"
with gzip.open(GOLDEN / "models.json.gz") as _f:
    RECORDS = json.load(_f)
with np.load(GOLDEN / "values.npz") as _z:
    VALUES = {k: _z[k] for k in _z.files}
MODELS = RECORDS["models"]


# --- the generator's functions ------------------------------------------------------------------
def param_value(name, shape):
    """As tools/make_golden_model_zoo.py: He-uniform weights, BatchNorm statistics near 0 and 1,
    small biases, from a RandomState keyed by the parameter's name."""
    r = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    if name.endswith(("_gamma", "_running_var")):
        v = r.uniform(0.8, 1.2, shape)
    elif name.endswith(("_beta", "_bias", "_running_mean")):
        v = r.uniform(-0.1, 0.1, shape)
    else:
        bound = np.sqrt(6.0 / int(np.prod(shape[1:])))
        v = r.uniform(-bound, bound, shape)
    return v.astype(np.float32)


def input_value(name, shape):
    r = np.random.RandomState(zlib.crc32(("input/" + name).encode()) & 0x7FFFFFFF)
    return r.uniform(-1, 1, shape).astype(np.float32)


def build(name, **kwargs):
    with mx.name.NameManager():
        return vision.get_model(name, **kwargs)


def valued_net(name):
    """Model ``name`` with shapes inferred for its golden input and the generator's values."""
    net = build(name)
    net.initialize()
    x = input_value(name, tuple(RECORDS["values"][name]))
    net.infer_shape(mx.nd.array(x))
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(param_value(p.name, p.shape)))
    return net, mx.nd.array(x)


def close(got, want, what):
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale, err_msg=what)


# --- every model: names, shapes, symbol ---------------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_names_shapes_and_symbol(name):
    rec = MODELS[name]
    net = build(name)
    assert list(net._collect_params_with_prefix()) == rec["struct"]
    net.initialize()
    net.infer_shape(mx.nd.zeros(tuple(rec["input"])))
    assert [[p.name, list(p.shape)] for p in net.collect_params().values()] == rec["params"]
    assert repr(net) == rec["repr"]
    sym = build(name)(mx.sym.var("data"))
    assert sym.tojson() == rec["symbol"]


def test_every_model_is_listed():
    assert sorted(MODELS) == sorted(vision._MODELS)
    assert RECORDS["public"]["vision"] == sorted(n for n in dir(vision) if not n.startswith("_"))


# --- small models: values, hybridized, exported -------------------------------------------------
@pytest.mark.parametrize("name", list(RECORDS["values"]))
def test_values_imperative_hybridized_exported(name, tmp_path):
    want = VALUES[name]
    net, x = valued_net(name)
    close(net(x).asnumpy(), want, f"{name} imperative")
    net.hybridize()
    close(net(x).asnumpy(), want, f"{name} hybridized")
    net.export(str(tmp_path / name))
    rec = MODELS[name]
    assert (tmp_path / f"{name}-symbol.json").read_text() == rec["symbol"]
    assert sorted(mx.nd.load(str(tmp_path / f"{name}-0000.params"))) == rec["export_keys"]
    if RECORDS["values"][name][-1] >= 224:
        return  # (time: running the exported files of the 224x224 models adds nothing)
    imported = mx.gluon.SymbolBlock.imports(str(tmp_path / f"{name}-symbol.json"), ["data"],
                                            str(tmp_path / f"{name}-0000.params"))
    close(imported(x).asnumpy(), want, f"{name} exported and imported")


# A hybridized forward on a 32x32 input (a model's symbol does not depend on the input size)
# and export, for one model of each remaining block kind (test_names_shapes_and_symbol checks
# every model's symbol; test_values_imperative_hybridized_exported exports seven more).
SMALL_INPUT = ["resnet50_v1", "resnet50_v2", "mobilenet1.0", "mobilenetv2_1.0", "vgg11_bn"]


@pytest.mark.parametrize("name", SMALL_INPUT)
def test_hybridized_export(name, tmp_path):
    net = build(name)
    net.initialize()
    net.hybridize()
    assert net(mx.nd.ones((1, 3, 32, 32))).shape == (1, 1000)
    net.export(str(tmp_path / "m"))
    text = (tmp_path / "m-symbol.json").read_text()
    assert text == MODELS[name]["symbol"]
    assert sorted(mx.nd.load(str(tmp_path / "m-0000.params"))) == MODELS[name]["export_keys"]


def test_save_and_load_parameters_round_trip(tmp_path):
    net, x = valued_net("mobilenetv2_0.25")
    net(x)  # set_data on a deferred parameter waits for the first forward, as in MXNet
    net.save_parameters(str(tmp_path / "m.params"))
    assert sorted(mx.nd.load(str(tmp_path / "m.params"))) == sorted(
        MODELS["mobilenetv2_0.25"]["struct"])
    other = vision.mobilenet_v2_0_25()
    other.load_parameters(str(tmp_path / "m.params"))
    close(other(x).asnumpy(), VALUES["mobilenetv2_0.25"], "loaded parameters")


def test_constructor_arguments():
    net = vision.resnet18_v1(classes=10, thumbnail=True)
    net.initialize()
    assert net(mx.nd.zeros((1, 3, 32, 32))).shape == (1, 10)
    net = vision.get_model("ResNet50_V2", classes=7, prefix="r_")
    assert net.prefix == "r_" and net.output._units == 7
    assert isinstance(net.features[5][0], vision.BottleneckV2)
    net = vision.get_model("vgg11_bn")
    assert any(isinstance(b, mx.gluon.nn.BatchNorm) for b in net.features._children.values())
    net = vision.get_model("mobilenet0.5", classes=3)
    net.initialize()
    assert net(mx.nd.zeros((2, 3, 32, 32))).shape == (2, 3)


# --- errors ---------------------------------------------------------------------------------------
CALLS = {
    "vision.get_model('resnet19_v1')": lambda: vision.get_model("resnet19_v1"),
    "vision.get_resnet(3, 18)": lambda: vision.get_resnet(3, 18),
    "vision.get_resnet(1, 19)": lambda: vision.get_resnet(1, 19),
    "vision.SqueezeNet('1.2')": lambda: vision.SqueezeNet("1.2"),
    "model_store.short_hash('resnet19_v1')": lambda: model_store.short_hash("resnet19_v1"),
    "model_store.get_model_file('resnet19_v1')":
        lambda: model_store.get_model_file("resnet19_v1"),
}


@pytest.mark.parametrize("call,etype,message", RECORDS["errors"], ids=[e[0] for e in
                                                                        RECORDS["errors"]])
def test_errors(call, etype, message):
    with pytest.raises(Exception) as info:
        CALLS[call]()
    assert type(info.value).__name__ == etype
    assert str(info.value) == message


# --- pretrained files -------------------------------------------------------------------------
def test_short_hashes_and_default_root():
    assert {n: model_store.short_hash(n) for n in MODELS} == RECORDS["short_hash"]
    root = os.path.join(mx.base.data_dir(), "models")
    for fn in (model_store.get_model_file, model_store.purge, vision.get_resnet,
               vision.alexnet, vision.get_mobilenet_v2):
        assert inspect.signature(fn).parameters["root"].default == root


def test_pretrained_missing_file(tmp_path, monkeypatch):
    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    path = tmp_path / f"resnet18_v1-{RECORDS['short_hash']['resnet18_v1']}.params"
    with pytest.raises(MXNetError) as info:
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    msg = str(info.value)
    assert str(path) in msg and "is not there" in msg
    assert ("https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/models/"
            f"{path.stem}.zip") in msg
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror.example/mx")
    with pytest.raises(MXNetError, match=r"http://mirror\.example/mx/gluon/models/mobilenet0\.5-"):
        vision.get_model("mobilenet0.5", pretrained=True, root=str(tmp_path))


def test_pretrained_hash_mismatch(tmp_path):
    path = tmp_path / f"squeezenet1.1-{RECORDS['short_hash']['squeezenet1.1']}.params"
    path.write_bytes(b"not the store's parameters")
    with pytest.raises(MXNetError) as info:
        vision.squeezenet1_1(pretrained=True, root=str(tmp_path))
    msg = str(info.value)
    assert str(path) in msg and model_store._model_sha1["squeezenet1.1"] in msg
    assert path.exists()  # left for the user to inspect


@pytest.mark.parametrize("legacy", [False, True], ids=["structural", "legacy"])
def test_pretrained_loads_file_with_matching_hash(tmp_path, monkeypatch, legacy):
    net, x = valued_net("mobilenet0.25")
    net(x)
    src = tmp_path / "saved.params"
    if legacy:  # the store's older files: save_params' names without the model's prefix
        net.collect_params().save(str(src), strip_prefix=net.prefix)
    else:
        net.save_parameters(str(src))
    sha1 = hashlib.sha1(src.read_bytes()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.25", sha1)
    root = tmp_path / "models"
    root.mkdir()
    src.rename(root / f"mobilenet0.25-{sha1[:8]}.params")
    assert model_store.get_model_file("mobilenet0.25", root=str(root)) == str(
        root / f"mobilenet0.25-{sha1[:8]}.params")
    loaded = vision.get_model("mobilenet0.25", pretrained=True, root=str(root), ctx=mx.cpu())
    close(loaded(x).asnumpy(), VALUES["mobilenet0.25"], "pretrained mobilenet0.25")


def test_purge(tmp_path):
    (tmp_path / "a-1234.params").write_bytes(b"x")
    (tmp_path / "keep.txt").write_bytes(b"x")
    model_store.purge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_mxnet_home_decides_the_default_root(tmp_path):
    code = ("import neomx as mx\n"
            "try:\n"
            "    mx.gluon.model_zoo.vision.alexnet(pretrained=True)\n"
            "except mx.base.MXNetError as e:\n"
            "    print(e)\n")
    env = dict(os.environ, MXNET_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    expect = tmp_path / "models" / f"alexnet-{RECORDS['short_hash']['alexnet']}.params"
    assert str(expect) in out


@pytest.mark.parametrize("module", ["vision", "vision.resnet"])
def test_doctests(module):
    import doctest
    import importlib
    mod = importlib.import_module(f"neomx.gluon.model_zoo.{module}")
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    tests = [t for t in finder.find(mod) if t.examples and t.name.startswith(mod.__name__)]
    for t in tests:
        runner.run(t)
    assert tests and runner.summarize(verbose=False).failed == 0
