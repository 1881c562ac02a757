"""Bad ``-symbol.json`` input: text that is not UTF-8, not JSON, JSON of the wrong shape, and
graphs whose inputs or heads point past the end raise MXNetError -- never UnicodeDecodeError,
KeyError, IndexError... -- from ``mx.sym.load``, ``mx.sym.load_json`` (str and bytes) and
``mx.model.load_checkpoint``; random byte mutations of a saved symbol load or raise MXNetError."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import neomx as mx

from ._helpers import GOLDEN_DIR

SEED = (GOLDEN_DIR / "seed_mlp-symbol.json").read_bytes()
LEGACY = (GOLDEN_DIR / "legacy-symbol.json").read_bytes()
VAR = {"op": "null", "name": "a", "inputs": []}


def _graph(nodes=(VAR,), heads=((0, 0, 0),)) -> bytes:
    """A graph document; ``nodes``/``heads`` as given when they are not sequences."""
    return json.dumps({"nodes": list(nodes) if isinstance(nodes, tuple) else nodes,
                       "heads": [list(h) for h in heads] if isinstance(heads, tuple) else heads},
                      separators=(", ", ": ")).encode()


def _seed_with(edit) -> bytes:
    doc = json.loads(SEED)
    edit(doc)
    return json.dumps(doc).encode()


def _set_input(doc, node, k, entry):
    doc["nodes"][node]["inputs"][k] = entry


BAD = {  # id: (file contents, the MXNetError's message)
    # not UTF-8
    "latin-1-name": (SEED.replace(b'"data"', b'"d\xe4ta"'), "not UTF-8"),
    "utf-16": (SEED.decode().encode("utf-16"), "not UTF-8"),
    "truncated-utf-8": (SEED.replace(b'"data"', b'"data\xe2\x82"'), "not UTF-8"),
    "lone-continuation-byte": (b"\x80" + SEED, "not UTF-8"),
    # not JSON
    "empty": (b"", "Expecting value"),
    "garbage": (b"{not json", "Expecting property name"),
    "truncated": (SEED[: len(SEED) // 2], "Expecting"),
    "trailing-junk": (SEED + b"}", "Extra data"),
    "nested-too-deep": (b"[" * 100_000 + b"]" * 100_000, "recursion"),
    # JSON of the wrong shape
    "a-list": (b"[]", "expected an object"),
    "a-string": (b'"nodes"', "expected an object"),
    "null": (b"null", "expected an object"),
    "no-heads": (json.dumps({"nodes": [VAR]}).encode(), "expected an object"),
    "no-nodes": (json.dumps({"heads": [[0, 0, 0]]}).encode(), "expected an object"),
    "nodes-not-a-list": (_graph(nodes=5), "malformed graph"),
    "node-not-an-object": (_graph(nodes=[5]), "node 0 lacks"),
    "node-without-name": (_graph(nodes=[{"op": "null", "inputs": []}]), "node 0 lacks"),
    "name-not-a-string": (_graph(nodes=[{"op": "null", "name": ["a"], "inputs": []}]),
                          "must be strings"),
    "op-not-a-string": (_graph(nodes=[{"op": 0, "name": "a", "inputs": []}]), "must be strings"),
    "node-without-op": (_graph(nodes=[{"name": "a", "inputs": []}]), "node 0 lacks"),
    "inputs-not-a-list": (_seed_with(lambda d: d["nodes"][3].update(inputs=7)), "malformed graph"),
    "input-not-a-list": (_seed_with(lambda d: _set_input(d, 3, 0, "data")), "malformed graph"),
    "input-too-short": (_seed_with(lambda d: _set_input(d, 3, 0, [0])), "IndexError"),
    "input-not-a-number": (_seed_with(lambda d: _set_input(d, 3, 0, ["x", 0, 0])), "ValueError"),
    "input-infinite": (SEED.replace(b"[1, 0, 0]", b"[1e999, 0, 0]"), "OverflowError"),
    "input-nan": (SEED.replace(b"[1, 0, 0]", b"[NaN, 0, 0]"), "NaN"),
    "attrs-not-an-object": (_seed_with(lambda d: d["nodes"][3].update(attrs=["num_hidden"])),
                            "malformed graph"),
    "param-not-a-number": (_seed_with(lambda d: d["nodes"][3]["attrs"].update(num_hidden="lots")),
                           "Invalid Parameter format for num_hidden"),
    "unknown-operator": (_seed_with(lambda d: d["nodes"][3].update(op="NoSuchOp")),
                         "Cannot find operator NoSuchOp"),
    "wrong-input-count": (_seed_with(lambda d: d["nodes"][3]["inputs"].pop()),
                          "has 2 inputs, expected 3"),
    "heads-not-a-list": (_graph(heads=5), "malformed graph"),
    "head-not-a-list": (_graph(heads=["a"]), "malformed graph"),
    "head-too-short": (_graph(heads=[[0]]), "IndexError"),
    "head-infinite": (_graph().replace(b"[[0, 0, 0]]", b"[[Infinity, 0, 0]]"), "OverflowError"),
    "empty-heads": (_graph(heads=[]), "no heads"),
    "empty-graph": (_graph(nodes=[], heads=[]), "no heads"),
    # inputs and heads pointing past the end
    "head-past-the-end": (_seed_with(lambda d: d.update(heads=[[len(d["nodes"]), 0, 0]])),
                          r"head \[10, 0, 0\] refers to no node output"),
    "head-negative": (_seed_with(lambda d: d.update(heads=[[-1, 0, 0]])), r"head \[-1, 0, 0\]"),
    "head-output-past-the-end": (_seed_with(lambda d: d.update(heads=[[9, 1, 0]])),
                                 r"head \[9, 1, 0\] refers to no node output"),
    "input-past-the-end": (_seed_with(lambda d: _set_input(d, 3, 0, [99, 0, 0])),
                           "refers to node 99, which is not before it"),
    "input-from-a-later-node": (_seed_with(lambda d: _set_input(d, 3, 0, [4, 0, 0])),
                                "refers to node 4, which"),
    "input-from-itself": (_seed_with(lambda d: _set_input(d, 3, 0, [3, 0, 0])),
                          "refers to node 3, which"),
    "input-negative": (_seed_with(lambda d: _set_input(d, 3, 0, [-1, 0, 0])),
                       "refers to node -1, which"),
    "input-output-past-the-end": (_seed_with(lambda d: _set_input(d, 3, 0, [0, 1, 0])),
                                  "reads output 1 of node data, which has 1"),
}


def _loaders(raw: bytes, tmp_path):
    """(name, call) for every loader of ``raw``: load_json of bytes (and of str when ``raw`` is
    UTF-8), sym.load of a file, load_checkpoint of a checkpoint with a valid .params file."""
    sym_file = tmp_path / "net-symbol.json"
    mx.model.save_checkpoint(str(tmp_path / "net"), 1, mx.sym.Variable("a"),
                             {"a": mx.nd.ones((2,))}, {})
    sym_file.write_bytes(raw)
    calls = [("load_json(bytes)", lambda: mx.sym.load_json(raw)),
             ("load", lambda: mx.sym.load(str(sym_file))),
             ("load_checkpoint", lambda: mx.model.load_checkpoint(str(tmp_path / "net"), 1))]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        calls.append(("load_json(str)", lambda: mx.sym.load_json(text)))
    return calls


@pytest.mark.parametrize("raw, match", list(BAD.values()), ids=list(BAD))
def test_bad_symbol_json_raises_mxnet_error(raw, match, tmp_path):
    for name, call in _loaders(raw, tmp_path):
        with pytest.raises(mx.MXNetError, match=match) as info:
            call()
        if name in ("load", "load_checkpoint"):
            assert "net-symbol.json" in str(info.value), (name, str(info.value))


def test_the_valid_files_load_through_every_loader(tmp_path):
    """The sources of the cases above load (so each case fails for its own edit)."""
    for raw in (SEED, LEGACY, _graph()):
        for name, call in _loaders(raw, tmp_path):
            out = call()
            sym = out[0] if name == "load_checkpoint" else out
            assert isinstance(sym, mx.sym.Symbol), name


# --- random mutations -------------------------------------------------------------------------
MUTATION = st.one_of(
    st.tuples(st.just("set"), st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(b'[]{}",:0123456789-e.\xff')),
    st.tuples(st.just("delete"), st.floats(0, 1, exclude_max=True), st.integers(1, 8)),
    st.tuples(st.just("truncate"), st.floats(0, 1), st.just(0)),
)


def _mutate(raw: bytes, edits) -> bytes:
    b = bytearray(raw)
    for kind, where, arg in edits:
        i = min(int(where * len(b)), max(len(b) - 1, 0))
        if kind == "set" and b:
            b[i] = arg
        elif kind == "insert":
            b.insert(min(int(where * len(b)), len(b)), arg)
        elif kind == "delete":
            del b[i:i + arg]
        elif kind == "truncate":
            del b[int(where * len(b)):]
    return bytes(b)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from([SEED, LEGACY]), edits=st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_symbol_json_loads_or_raises_mxnet_error(source, edits):
    raw = _mutate(source, edits)
    try:
        sym = mx.sym.load_json(raw)
    except mx.MXNetError:
        return
    assert isinstance(sym, mx.sym.Symbol)
