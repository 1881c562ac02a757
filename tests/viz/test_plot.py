"""neomx.visualization against MXNet 1.9.1 golden output (tests/golden/viz, made by
tools/make_golden_viz.py), plus structure, rendering and error checks.

Each golden case is checked twice:

* end to end: the network is rebuilt with ``mx.sym.load_json`` from MXNet's own JSON (node
  names then never depend on neomx's name counters) and neomx infers shapes and types. This
  needs the network's operators registered in neomx; the test fails (does not skip) when one
  is missing;
* drawing logic only: a Symbol whose ``tojson``/``get_internals`` replay what MXNet recorded
  (its JSON, output names, inferred shapes and types), so only visualization.py is tested.
"""
from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import graphviz  # a test dependency (pip install .[test]): the tests fail without it
import numpy as np
import pytest

import neomx as mx
from examples import mixed_programming
from neomx.visualization import plot_network, print_summary

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "viz"
CASES = json.loads((GOLDEN / "cases.json").read_text())
REPEATED_NAMES = "There are multiple variables with the same name"


def load_network(name: str) -> mx.sym.Symbol:
    return mx.sym.load_json((GOLDEN / CASES["networks"][name]["file"]).read_text())


class ReplayedSymbol(mx.sym.Symbol):
    """A Symbol answering ``tojson`` and ``get_internals()`` inference from golden records."""

    __slots__ = ("_json", "_internals")

    def __init__(self, network: str, internals: dict):
        super().__init__(())
        self._json = (GOLDEN / CASES["networks"][network]["file"]).read_text()
        self._internals = internals

    def tojson(self):
        return self._json

    def get_internals(self):
        return self

    def list_outputs(self):
        return list(self._internals["outputs"])

    def infer_shape(self, **kwargs):
        return None, [tuple(s) for s in self._internals["shapes"]], None

    def infer_type(self, **kwargs):
        return None, [getattr(np, t) for t in self._internals["types"]], None


def call_kwargs(kwargs: dict) -> dict:
    """Golden kwargs (lists, dtype names) -> what MXNet was called with (tuples, numpy types)."""
    out = dict(kwargs)
    if "shape" in out:
        out["shape"] = {k: tuple(v) for k, v in out["shape"].items()}
    if "dtype" in out:
        out["dtype"] = {k: getattr(np, v) for k, v in out["dtype"].items()}
    return out


def by_id(section: str) -> list:
    return [pytest.param(c, id=c["id"]) for c in CASES[section]]


# --- golden comparisons -----------------------------------------------------------------------

@pytest.mark.parametrize("case", by_id("plots"))
def test_plot_source_matches_mxnet(case):
    sym = load_network(case["network"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dot = plot_network(sym, **call_kwargs(case["kwargs"]))
    assert isinstance(dot, graphviz.Digraph)
    assert (dot.name, dot.format) == (case["name"], case["format"])
    # graphviz >= 0.9 ends the source with a newline after '}'; MXNet's 0.8.4 did not.
    assert dot.source.rstrip("\n") == case["source"]
    ours = [str(w.message) for w in caught if str(w.message).startswith(REPEATED_NAMES)]
    theirs = [w["message"] for w in case["warnings"] if w["message"].startswith(REPEATED_NAMES)]
    assert ours == theirs
    if theirs:
        assert all(w.category is RuntimeWarning for w in caught
                   if str(w.message).startswith(REPEATED_NAMES))


@pytest.mark.parametrize("case", by_id("summaries"))
def test_print_summary_matches_mxnet(case, capsys):
    sym = load_network(case["network"])
    print_summary(sym, **call_kwargs(case["kwargs"]))
    assert capsys.readouterr().out == case["stdout"]


@pytest.mark.parametrize("case", by_id("plots"))
def test_plot_logic_on_mxnet_inference(case):
    sym = ReplayedSymbol(case["network"], case["internals"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dot = plot_network(sym, **call_kwargs(case["kwargs"]))
    assert dot.source.rstrip("\n") == case["source"]


@pytest.mark.parametrize("case", by_id("summaries"))
def test_summary_logic_on_mxnet_inference(case, capsys):
    print_summary(ReplayedSymbol(case["network"], case["internals"]),
                  **call_kwargs(case["kwargs"]))
    assert capsys.readouterr().out == case["stdout"]


ERROR_TYPES = {"TypeError": TypeError, "ValueError": ValueError, "KeyError": KeyError,
               "MXNetError": mx.MXNetError}
ERROR_CASES = [c for c in CASES["errors"] if c["exc_type"] in ERROR_TYPES]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ERROR_CASES])
def test_errors_match_mxnet(case):
    func = plot_network if case["function"] == "plot_network" else print_summary
    arg = load_network(case["network"]) if case["network"] else "not a symbol"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ERROR_TYPES[case["exc_type"]]) as info:
            func(arg, **call_kwargs(case["kwargs"]))
    # neomx may add detail (the type received, a hint) but keeps MXNet's first line.
    expected = case["error_message"].splitlines()[0].strip("'")
    assert expected in str(info.value)


def test_summary_of_batch_only_input_does_not_crash(capsys):
    """MXNet raises IndexError half-way through the table when a layer's input is 1-D
    (batch axis only); neomx prints the same lines and then finishes the table."""
    case = next(c for c in CASES["errors"] if c["id"] == "summary-1d-input")
    assert case["exc_type"] == "IndexError"
    print_summary(load_network(case["network"]), **call_kwargs(case["kwargs"]))
    out = capsys.readouterr().out
    assert out.startswith(case["stdout"])
    tail = out[len(case["stdout"]):].splitlines()
    assert tail[0].startswith("relu(Activation)")
    assert tail[-2:] == ["Total params: 0", "_" * 120]


# --- the seed tutorial, built from operators --------------------------------------------------

def seed_mlp():
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=net, name='out')


def seed_lenet():
    """The seed tutorial's LeNet, from its code in examples/mixed_programming.py."""
    return mixed_programming.lenet()


def golden_source(case_id: str) -> str:
    return next(c["source"] for c in CASES["plots"] if c["id"] == case_id)


def test_seed_mlp_built_from_ops():
    assert plot_network(seed_mlp()).source.rstrip("\n") == golden_source("mlp-default")


def test_seed_lenet_built_from_ops():
    """The tutorial's ``mx.viz.plot_network(lenet(), shape={'data':(128,1,28,28)})``."""
    with mx.name.NameManager():
        net = seed_lenet()
    dot = plot_network(net, shape={'data': (128, 1, 28, 28)})
    assert dot.source.rstrip("\n") == golden_source("lenet-shape")


def test_mx_viz_alias():
    assert mx.viz.plot_network is plot_network
    assert mx.visualization.print_summary is print_summary


# --- structure --------------------------------------------------------------------------------

NODE_RE = re.compile(r'^\t(\S+) \[label=("[^"]*"|\S+) (.*)\]$', re.M)
EDGE_RE = re.compile(r'^\t(\S+) -> (\S+) \[label=("[^"]*"|\S+) (.*)\]$', re.M)


def parse(source: str):
    """``({node: (label, attrs)}, [(tail, head, label, attrs)])`` from a Digraph source."""
    unquote = lambda s: s[1:-1] if s.startswith('"') else s  # noqa: E731
    nodes = {m[1]: (unquote(m[2]), m[3]) for m in NODE_RE.finditer(source)}
    edges = [(m[1], m[2], unquote(m[3]), m[4]) for m in EDGE_RE.finditer(source)]
    return nodes, edges


def test_lenet_structure():
    dot = plot_network(load_network("lenet"), shape={"data": (128, 1, 28, 28)})
    nodes, edges = parse(dot.source)
    assert list(nodes) == ["data", "convolution0", "activation0", "pooling0", "convolution1",
                           "activation1", "pooling1", "flatten0", "fullyconnected0",
                           "activation2", "fullyconnected1", "out_label", "out"]
    assert nodes["convolution0"][0] == "Convolution\n5x5/1, 20"
    assert nodes["pooling1"][0] == "Pooling\nmax, 2x2/2x2"
    assert nodes["fullyconnected0"][0] == "FullyConnected\n500"
    assert nodes["activation2"][0] == "Activation\ntanh"
    assert nodes["flatten0"][0] == "flatten0"
    assert 'fillcolor="#8dd3c7"' in nodes["data"][1] and "shape=oval" in nodes["data"][1]
    assert 'fillcolor="#fb8072"' in nodes["convolution1"][1]
    assert 'fillcolor="#80b1d3"' in nodes["pooling0"][1]
    assert 'fillcolor="#fdb462"' in nodes["flatten0"][1]
    assert 'fillcolor="#fccde5"' in nodes["out"][1]
    assert all("shape=box" in attrs for name, (_, attrs) in nodes.items()
               if name not in ("data", "out_label"))
    assert len(edges) == 12
    assert all(attrs == "arrowtail=open dir=back" for *_, attrs in edges)
    labels = {(t, h): label for t, h, label, _ in edges}
    assert labels[("convolution0", "data")] == "1x28x28"
    assert labels[("pooling0", "activation0")] == "20x24x24"
    assert labels[("fullyconnected0", "flatten0")] == "800"
    assert labels[("out", "out_label")] == ""


def test_edges_follow_the_graph():
    """Every operator input that is not a parameter becomes one op -> input edge."""
    sym = load_network("bn_concat")
    graph = json.loads(sym.tojson())
    names = [n["name"] for n in graph["nodes"]]
    expected = [(n["name"], names[i]) for n in graph["nodes"] if n["op"] != "null"
                for i, _, _ in n["inputs"]]
    weights = ("_weight", "_bias", "_gamma", "_beta", "_moving_mean", "_moving_var")
    _, shown = parse(plot_network(sym, hide_weights=False).source)
    assert [(t, h) for t, h, *_ in shown] == expected
    _, hidden = parse(plot_network(sym).source)
    assert [(t, h) for t, h, *_ in hidden] == [e for e in expected if not e[1].endswith(weights)]


def test_shown_weights_are_edges_only():
    nodes, edges = parse(plot_network(load_network("mlp"), hide_weights=False).source)
    assert "fc1_weight" not in nodes and "fc1_bias" not in nodes
    assert ("fc1", "fc1_weight") in [(t, h) for t, h, *_ in edges]


def test_node_attrs_override_defaults_but_not_colours():
    nodes, _ = parse(plot_network(load_network("mlp"),
                                  node_attrs={"shape": "diamond", "fillcolor": "red"}).source)
    assert "shape=diamond" in nodes["fc1"][1] and "shape=oval" in nodes["data"][1]
    assert 'fillcolor="#fb8072"' in nodes["fc1"][1]


def test_dtype_labels():
    _, edges = parse(plot_network(load_network("mlp"), shape={"data": (4, 7)},
                                  dtype={"data": "float32"}).source)
    assert edges[0][:3] == ("fc1", "data", "7(float32)")


# --- rendering --------------------------------------------------------------------------------

def test_render_png(tmp_path):
    # `make test` installs Graphviz (make system-deps); rendering is tested, never skipped
    assert shutil.which("dot"), "Graphviz's 'dot' program is not installed (apt-get install graphviz)"
    dot = plot_network(load_network("lenet"), shape={"data": (128, 1, 28, 28)},
                       save_format="png", title="lenet")
    path = Path(dot.render(directory=tmp_path, cleanup=True))
    assert path.suffix == ".png" and path.exists()
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in dot.pipe(format="svg")


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [plot_network, print_summary])
def test_rejects_non_symbols(func):
    with pytest.raises(TypeError, match="must be a? ?Symbol, got dict"):
        func({"data": 1})


@pytest.mark.parametrize("func", [plot_network, print_summary])
def test_bad_shape_name(func):
    with pytest.raises(mx.MXNetError, match="argument name bogus not found"):
        func(load_network("mlp"), shape={"bogus": (1, 2)})


@pytest.mark.parametrize("func", [plot_network, print_summary])
def test_shape_must_be_a_dict(func):
    with pytest.raises(TypeError, match="shape must be a dict"):
        func(load_network("mlp"), shape=(100, 100))


def test_bad_dtype_name():
    with pytest.raises(mx.MXNetError, match="argument name bogus not found"):
        plot_network(load_network("mlp"), dtype={"bogus": np.float32})


def test_pooling_without_pool_type():
    """MXNet raises KeyError: the JSON only holds explicitly given params (pool_type='max' is
    the default). Checked on the replayed JSON so it does not need neomx's Pooling."""
    with pytest.raises(KeyError, match="pool_type"):
        plot_network(ReplayedSymbol("pool_no_type", {"outputs": []}))
