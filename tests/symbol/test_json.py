"""Symbol JSON: files written by MXNet load and round-trip exactly; random graphs round-trip;
``save`` is atomic."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neomx as mx

from ._helpers import GOLDEN_DIR, load_golden

SYMBOLS = {e["id"]: e for e in load_golden("symbols.json")["symbols"]}
SEED_FILE = GOLDEN_DIR / "seed_mlp-symbol.json"
LEGACY_FILE = GOLDEN_DIR / "legacy-symbol.json"


def _read(path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _seed_mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=10)
    return mx.sym.SoftmaxOutput(data=net, name="out")


# --- files written by MXNet -----------------------------------------------------------------------
def test_mxnet_written_file_round_trips_to_identical_text():
    sym = mx.sym.load(str(SEED_FILE))
    assert sym.tojson() == _read(SEED_FILE)


def test_mxnet_written_file_loads_the_seed_graph():
    sym = mx.sym.load(str(SEED_FILE))
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "out_label"]
    assert sym.list_outputs() == ["out_output"]
    assert sym.name == "out"
    assert sym.attr_dict()["fc1"] == {"num_hidden": "128"}
    _, out_shapes, _ = sym.infer_shape(data=(100, 100))
    assert out_shapes == [(100, 10)]


def test_built_seed_graph_saves_the_mxnet_file(tmp_path):
    with mx.name.NameManager():
        sym = _seed_mlp()
    path = tmp_path / "seed_mlp-symbol.json"
    sym.save(str(path))
    assert _read(path) == _read(SEED_FILE)


def test_load_json_of_the_text_equals_load_of_the_file():
    text = _read(SEED_FILE)
    assert mx.sym.load_json(text).tojson() == mx.sym.load(str(SEED_FILE)).tojson()


def test_legacy_file_loads_and_equals_recorded_upgraded_form():
    sym = mx.sym.load(str(LEGACY_FILE))
    rec = SYMBOLS["legacy_load"]
    assert sym.tojson() == rec["tojson"]["value"]
    assert sym.list_arguments() == rec["list_arguments"]["value"]
    assert sym.attr_dict() == rec["attr_dict"]["value"]


def test_legacy_upgrade_round_trips():
    upgraded = mx.sym.load(str(LEGACY_FILE)).tojson()
    assert mx.sym.load_json(upgraded).tojson() == upgraded


def test_load_missing_file_raises_mxnet_error(tmp_path):
    with pytest.raises(mx.base.MXNetError):
        mx.sym.load(str(tmp_path / "nope-symbol.json"))


def test_load_json_rejects_garbage():
    with pytest.raises(mx.base.MXNetError):
        mx.sym.load_json("{not json")


# --- atomic save ----------------------------------------------------------------------------------
def test_save_leaves_only_the_target_file(tmp_path):
    with mx.name.NameManager():
        sym = _seed_mlp()
    target = tmp_path / "net-symbol.json"
    sym.save(str(target))
    assert sorted(os.listdir(tmp_path)) == ["net-symbol.json"]
    assert mx.sym.load(str(target)).tojson() == sym.tojson()


def test_save_replaces_a_longer_file_completely(tmp_path):
    target = tmp_path / "net-symbol.json"
    target.write_text("x" * 100000)
    sym = mx.sym.Variable("v")
    sym.save(str(target))
    assert _read(target) == sym.tojson()
    assert sorted(os.listdir(tmp_path)) == ["net-symbol.json"]


def test_failed_save_keeps_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    """An atomic save writes elsewhere and renames into place; if the rename fails the old
    file is untouched and the temporary file is removed."""
    target = tmp_path / "net-symbol.json"
    target.write_text("OLD CONTENT")

    def fail(*args, **kwargs):
        raise OSError("simulated crash before the rename")

    monkeypatch.setattr(os, "replace", fail)
    monkeypatch.setattr(os, "rename", fail)
    with pytest.raises(OSError):
        _seed_mlp().save(str(target))
    monkeypatch.undo()
    assert _read(target) == "OLD CONTENT"
    assert sorted(os.listdir(tmp_path)) == ["net-symbol.json"]


# --- random graphs round-trip ------------------------------------------------------------------------
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
OPTIONAL_NAME = st.one_of(st.none(), NAMES)
ACT_TYPES = st.sampled_from(["relu", "sigmoid", "tanh", "softrelu", "softsign"])
BINARY = st.sampled_from(["+", "-", "*", "/"])
SCALAR_OPS = st.sampled_from(["+", "-", "*", "/", "r-", "r/", "**"])
SCALARS = st.one_of(st.integers(-5, 5), st.floats(-3.0, 3.0, allow_nan=False, width=32))
DUNDER_ATTRS = st.dictionaries(st.sampled_from(["__mood__", "__ctx_group__", "__lr_mult__"]),
                               st.from_regex(r"[a-z0-9.]{1,6}", fullmatch=True), max_size=2)

STEP = st.one_of(
    st.tuples(st.just("fc"), st.integers(1, 64), st.booleans(), st.booleans(), OPTIONAL_NAME,
              DUNDER_ATTRS),
    st.tuples(st.just("act"), ACT_TYPES, OPTIONAL_NAME),
    st.tuples(st.just("binary"), BINARY, NAMES),
    st.tuples(st.just("scalar"), SCALAR_OPS, SCALARS),
    st.tuples(st.just("neg")),
)


def _apply(net, step):
    kind = step[0]
    if kind == "fc":
        _, hidden, no_bias, flatten, name, attr = step
        kw = {"no_bias": True} if no_bias else {}
        if not flatten:
            kw["flatten"] = False
        return mx.sym.FullyConnected(net, num_hidden=hidden, name=name, attr=attr or None, **kw)
    if kind == "act":
        return mx.sym.Activation(net, act_type=step[1], name=step[2])
    if kind == "binary":
        other = mx.sym.Variable(step[2])
        return {"+": net + other, "-": net - other, "*": net * other, "/": net / other}[step[1]]
    if kind == "scalar":
        op, s = step[1], step[2]
        return {"+": lambda: net + s, "-": lambda: net - s, "*": lambda: net * s,
                "/": lambda: net / s, "r-": lambda: s - net, "r/": lambda: s / net,
                "**": lambda: net ** s}[op]()
    return -net


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data_name=NAMES, steps=st.lists(STEP, min_size=1, max_size=6),
       var_attrs=DUNDER_ATTRS, group_with_internal=st.booleans())
def test_random_graph_round_trips(data_name, steps, var_attrs, group_with_internal):
    with mx.name.NameManager():
        net = mx.sym.Variable(data_name, attr=var_attrs or None)
        first = None
        for step in steps:
            net = _apply(net, step)
            if first is None:
                first = net
        if group_with_internal and first is not net:
            net = mx.sym.Group([first, net])
    text = net.tojson()
    loaded = mx.sym.load_json(text)
    assert loaded.tojson() == text
    assert loaded.list_arguments() == net.list_arguments()
    assert loaded.list_outputs() == net.list_outputs()
    assert loaded.list_auxiliary_states() == net.list_auxiliary_states()
    assert loaded.attr_dict() == net.attr_dict()
    # The text is valid JSON in MXNet's layout.
    doc = json.loads(text)
    assert set(doc) == {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    assert doc["arg_nodes"] == [i for i, n in enumerate(doc["nodes"]) if n["op"] == "null"]
    assert len(doc["node_row_ptr"]) == len(doc["nodes"]) + 1
