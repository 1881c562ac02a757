"""The IR: immutable nodes, annotations shared as MXNet's ``_set_attr``, the indexed graph,
and ``verify`` catching every broken invariant."""
from __future__ import annotations

import pytest

import neomx as mx
from neomx.ir import Graph, GraphInvariantError, Node, verify
from neomx.ops import registry as reg


def mlp():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    return mx.sym.Activation(bn, act_type="relu", name="act")


def test_nodes_are_immutable():
    node = mlp()._outputs[0][0]
    for field, value in [("name", "x"), ("inputs", ()), ("op", None), ("params", {})]:
        with pytest.raises(AttributeError):
            setattr(node, field, value)
    with pytest.raises(TypeError):
        node.attrs["k"] = "v"
    with pytest.raises(TypeError):
        node.given["act_type"] = "tanh"
    renamed = node.replace(name="act2")
    assert renamed.name == "act2" and renamed.inputs == node.inputs and node.name == "act"


def test_annotations_are_seen_by_every_symbol_holding_the_node():
    # MXNet 1.9.1: x._set_attr(__foo__='bar') shows in y = relu(x)'s attr_dict
    data = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    y = mx.sym.relu(x)
    x._set_attr(__foo__="bar")
    data._set_attr(__lr_mult__="2")
    d = y.attr_dict()
    assert d["fc"]["__foo__"] == "bar"
    assert d["data"] == {"__lr_mult__": "2", "lr_mult": "2"}


def test_graph_index_and_entry_ids():
    g = Graph(mlp()._outputs)
    verify(g)
    assert [n.name for n in g.arg_nodes] == ["data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"]
    assert [n.name for n in g.aux_nodes] == ["bn_moving_mean", "bn_moving_var"]
    ids = [g.entry(n, i) for n in g.nodes for i in range(n.num_outputs)]
    assert ids == list(range(g.num_entries))  # dense, in order
    bn = next(n for n in g.nodes if n.name == "bn")
    assert g.num_entries == len(g.nodes) - 1 + bn.num_outputs  # BatchNorm has 3 outputs


def _var(name):
    return Node(None, name)


def _relu(x, name="r"):
    op = reg.get("relu")
    p, given = op.parse_params({})
    return Node(op, name, p, given, {}, ((x, 0),))


@pytest.mark.parametrize("case", ["input_missing_from_order", "bad_output_index", "wrong_arity",
                                  "variable_with_inputs", "aux_not_variable", "bad_head",
                                  "unnamed"])
def test_verify_catches_broken_graphs(case):
    a = _var("a")
    r = _relu(a)
    g = Graph([(r, 0)])
    if case == "input_missing_from_order":
        g.nodes.remove(a)
        g.index = {n: i for i, n in enumerate(g.nodes)}
        g.row_ptr = [0, 1]
    elif case == "bad_output_index":
        bad = Node(r.op, "r2", r.params, r.given, {}, ((a, 1),))
        g = Graph([(bad, 0)])
    elif case == "wrong_arity":
        bad = Node(r.op, "r2", r.params, r.given, {}, ((a, 0), (a, 0)))
        g = Graph([(bad, 0)])
    elif case == "variable_with_inputs":
        bad = Node(None, "v", inputs=((a, 0),))
        g = Graph([(bad, 0)])
    elif case == "aux_not_variable":
        bn = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn")._outputs[0][0]
        inputs = list(bn.inputs)
        inputs[3] = (_relu(a), 0)
        g = Graph([(bn.replace(inputs=tuple(inputs)), 0)])
    elif case == "bad_head":
        g.outputs = ((r, 3),)
    elif case == "unnamed":
        g = Graph([(_relu(a, name=""), 0)])
    with pytest.raises(GraphInvariantError):
        verify(g)
