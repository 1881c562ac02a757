"""Drawings and layer tables of Symbols (``mx.viz``), matching MXNet 1.9.1's output.

Both functions read the symbol's MXNet-layout JSON (``Symbol.tojson()``), as MXNet does, and
take shapes and types from ``get_internals()`` inference. The output follows MXNet text for
text, quirks included (documented where they happen). Where MXNet crashes with an internal
``KeyError``/``IndexError``, neomx carries on instead; those places say so.

``graphviz`` (the Python package) is needed only by :func:`plot_network` and is imported when
it is called. Rendering the returned ``Digraph`` also needs Graphviz's ``dot`` program.
"""
from __future__ import annotations

import json
import re
import warnings

from .symbol import Symbol

__all__ = ["plot_network", "print_summary"]

# --- drawing style ----------------------------------------------------------------------------

_NODE_DEFAULTS = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
                  "style": "filled"}
_EDGE_STYLE = {"dir": "back", "arrowtail": "open"}

# MXNet's 8-colour palette, by the kind of node it paints.
_INPUT = "#8dd3c7"
_WEIGHTED = "#fb8072"       # Convolution, FullyConnected
_ACTIVATION = "#ffffb3"     # Activation, LeakyReLU
_NORM = "#bebada"           # BatchNorm
_POOL = "#80b1d3"
_RESHAPE = "#fdb462"        # Concat, Flatten, Reshape
_SOFTMAX = "#b3de69"        # only op "Softmax": mx.sym.Softmax is stored as SoftmaxOutput
_OTHER = "#fccde5"

# Variables with these suffixes are parameters: never drawn as nodes of their own.
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                    "_running_var", "_running_mean")


def _dims(text: str) -> list[str]:
    """The integers of an attribute string such as ``'(5, 5)'`` -> ``['5', '5']``."""
    return re.findall(r"\d+", text)


def _xjoin(values) -> str:
    return "x".join(str(v) for v in values)


def _conv_label(attrs: dict) -> str:
    stride = _xjoin(_dims(attrs["stride"])) if "stride" in attrs else "1"
    return f"Convolution\n{_xjoin(_dims(attrs['kernel']))}/{stride}, {attrs['num_filter']}"


def _pool_label(attrs: dict) -> str:
    if "pool_type" not in attrs:
        # MXNet 1.9.1 fails the same way: the JSON only holds parameters given explicitly.
        raise KeyError("pool_type: plot_network needs Pooling nodes built with an explicit "
                       "pool_type (MXNet 1.9.1 raises KeyError here too)")
    kernel = _xjoin(_dims(attrs["kernel"])) if "kernel" in attrs else "[]"
    stride = _xjoin(_dims(attrs["stride"])) if "stride" in attrs else "1"
    return f"Pooling\n{attrs['pool_type']}, {kernel}/{stride}"


# op -> (label builder or None for the node name, fill colour)
_OP_STYLES = {
    "Convolution": (_conv_label, _WEIGHTED),
    "FullyConnected": (lambda a: f"FullyConnected\n{a['num_hidden']}", _WEIGHTED),
    "BatchNorm": (None, _NORM),
    "Activation": (lambda a: f"Activation\n{a['act_type']}", _ACTIVATION),
    "LeakyReLU": (lambda a: f"LeakyReLU\n{a.get('act_type', 'Leaky')}", _ACTIVATION),
    "Pooling": (_pool_label, _POOL),
    "Concat": (None, _RESHAPE),
    "Flatten": (None, _RESHAPE),
    "Reshape": (None, _RESHAPE),
    "Softmax": (None, _SOFTMAX),
    "Custom": (lambda a: a["op_type"], _OTHER),
}


def _node_style(node: dict) -> tuple[str, str]:
    """``(label, fillcolor)`` of an operator node."""
    make_label, color = _OP_STYLES.get(node["op"], (None, _OTHER))
    label = make_label(node.get("attrs", {})) if make_label else node["name"]
    return label, color


# --- shared helpers ---------------------------------------------------------------------------

def _check_symbol(symbol, message: str) -> None:
    if not isinstance(symbol, Symbol):
        raise TypeError(f"{message}, got {type(symbol).__name__}")


def _graph(symbol: Symbol) -> dict:
    return json.loads(symbol.tojson())


def _check_mapping(value, what: str) -> None:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict mapping input names to {what}s, "
                        f"got {type(value).__name__}")


def _output_shapes(symbol: Symbol, shape: dict) -> dict:
    """``{output name: shape}`` for every internal output (variables by their own name)."""
    _check_mapping(shape, "shape")
    internals = symbol.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError("Input shape is incomplete")
    return dict(zip(internals.list_outputs(), out_shapes))


def _output_types(symbol: Symbol, dtype: dict) -> dict:
    """``{output name: numpy type}`` for every internal output."""
    _check_mapping(dtype, "dtype")
    internals = symbol.get_internals()
    _, out_types, _ = internals.infer_type(**dtype)
    if out_types is None:
        raise ValueError("Input type is incomplete")
    return dict(zip(internals.list_outputs(), out_types))


def _output_key(node: dict) -> str:
    """The internals output name MXNet reads for a node: ``<name>`` or ``<name>_output``."""
    return node["name"] if node["op"] == "null" else node["name"] + "_output"


# --- plot_network -----------------------------------------------------------------------------

def _warn_repeated_names(nodes: list) -> None:
    seen, repeated = set(), []
    for node in nodes:
        if node["name"] in seen and node["name"] not in repeated:
            repeated.append(node["name"])
        seen.add(node["name"])
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this may "
                      "result in cyclic graph. Repeated names: " + ",".join(repeated),
                      RuntimeWarning, stacklevel=3)


def _edge_key(node: dict, entry: list, known: dict) -> str:
    """The output name whose shape/type labels the edge ``entry`` out of ``node``.

    MXNet reads ``<name>_output`` for every operator, or ``<name>_output<num_outputs-1>``
    (the last output, whichever one the edge carries) when the node has a ``num_outputs``
    attribute. Where that name does not exist MXNet raises a bare KeyError; neomx then tries
    the output the edge carries (``<name>_output<index>``) before failing with a clear error.
    """
    key = _output_key(node)
    if node["op"] != "null" and "num_outputs" in node.get("attrs", {}):
        key += str(int(node["attrs"]["num_outputs"]) - 1)
    for candidate in (key, f"{key}{entry[1]}"):
        if candidate in known:
            return candidate
    raise KeyError(f"plot_network: no inferred output named {key!r} for node "
                   f"{node['name']!r} ({node['op']})")


def _edge_label(node: dict, entry: list, shapes, types) -> str:
    label = ""
    if shapes is not None:
        label = _xjoin(shapes[_edge_key(node, entry, shapes)][1:])
    if types is not None:
        label += "(" + types[_edge_key(node, entry, types)].__name__ + ")"
    return label


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None, node_attrs={},
                 hide_weights=True):
    """Draw the graph computing ``symbol`` as a ``graphviz.Digraph``.

    Parameters
    ----------
    symbol : Symbol
        The graph to draw.
    title : str, optional
        Name of the digraph (``digraph <title> {...}``) and of files it renders to.
    save_format : str, optional
        Graphviz output format used by ``render``/``view`` (``'pdf'``, ``'png'``, ...).
    shape : dict of str to tuple, optional
        Input shapes. When given, each edge is labelled with its tensor's shape minus the
        batch axis, e.g. ``20x24x24``.
    dtype : dict of str to numpy type, optional
        Input types. When given, each edge label ends with the type, e.g. ``(float32)``.
    node_attrs : dict of str to str, optional
        Graphviz node attributes that override the defaults (``shape='box'``,
        ``fixedsize='true'``, ``width='1.3'``, ``height='0.8034'``, ``style='filled'``).
        Variables are always ovals and every node keeps its colour.
    hide_weights : bool, optional
        If True (default), parameters (variables named ``*_weight``, ``*_bias``, ``*_gamma``,
        ``*_beta``, ``*_moving_mean``, ...) and their edges are left out. If False their edges
        are drawn, to plain nodes that Graphviz creates from the edge alone.

    Returns
    -------
    graphviz.Digraph
        Edges run from each operator back to its inputs (``dir=back, arrowtail=open``).

    Examples
    --------
    >>> import neomx as mx
    >>> from neomx.visualization import plot_network
    >>> net = mx.sym.Variable('data')
    >>> net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    >>> net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    >>> dot = plot_network(net, shape={'data': (100, 200)})
    >>> print(dot.source.replace(chr(9), '  ').strip())
    digraph plot {
      data [label=data fillcolor="#8dd3c7" fixedsize=true height=0.8034 shape=oval style=filled width=1.3]
      fc1 [label="FullyConnected
    128" fillcolor="#fb8072" fixedsize=true height=0.8034 shape=box style=filled width=1.3]
      relu1 [label="Activation
    relu" fillcolor="#ffffb3" fixedsize=true height=0.8034 shape=box style=filled width=1.3]
      fc1 -> data [label=200 arrowtail=open dir=back]
      relu1 -> fc1 [label=128 arrowtail=open dir=back]
    }
    """
    try:
        from graphviz import Digraph
    except ImportError as err:
        raise ImportError("Draw network requires graphviz library "
                          "(pip install graphviz; rendering also needs the 'dot' program)") from err
    _check_symbol(symbol, "symbol must be a Symbol")
    shapes = _output_shapes(symbol, shape) if shape is not None else None
    types = _output_types(symbol, dtype) if dtype is not None else None
    nodes = _graph(symbol)["nodes"]
    _warn_repeated_names(nodes)

    style = {**_NODE_DEFAULTS, **node_attrs}
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    hidden.add(node["name"])
                continue  # never declared; shown weights appear through their edges only
            dot.node(name=node["name"], label=node["name"],
                     **{**style, "shape": "oval", "fillcolor": _INPUT})
        else:
            label, color = _node_style(node)
            dot.node(name=node["name"], label=label, **{**style, "fillcolor": color})

    for node in nodes:
        if node["op"] == "null":
            continue
        entries = node["inputs"]
        if node["op"] == "_contrib_BilinearResize2D":
            entries = entries[:1]  # MXNet draws only the data input
        for entry in entries:
            src = nodes[entry[0]]
            if src["name"] in hidden:
                continue
            dot.edge(tail_name=node["name"], head_name=src["name"],
                     label=_edge_label(src, entry, shapes, types), **_EDGE_STYLE)
    return dot


# --- print_summary ----------------------------------------------------------------------------

def _format_row(fields, positions) -> str:
    """Each field starts where the previous one ended, cut/padded to end at its position."""
    line = ""
    for field, end in zip(fields, positions):
        line = (line + str(field))[:end].ljust(end)
    return line


def _param_count(node: dict, in_channels: int, shapes) -> int:
    """Parameters of one layer, counted as MXNet does from its attributes.

    Like MXNet, only the stored string ``no_bias='True'`` drops the bias term.
    """
    op, attrs = node["op"], node.get("attrs", {})
    bias = 0 if attrs.get("no_bias") == "True" else 1
    if op == "Convolution":
        filters = int(attrs["num_filter"])
        count = in_channels * filters // int(attrs.get("num_group", "1"))
        for k in _dims(attrs["kernel"]):
            count *= int(k)
        return count + bias * filters
    if op == "FullyConnected":
        return (in_channels + bias) * int(attrs["num_hidden"])
    if op == "BatchNorm":
        key = node["name"] + "_output"
        return 2 * int(shapes[key][1]) if shapes is not None and key in shapes else 0
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def _summary_layer(nodes, index, heads, shapes):
    """``(rows, params)`` for the layer at ``nodes[index]``.

    MXNet lists as previous layers the inputs that are operators or whose node index is in
    ``set(heads[0])`` -- the first head entry ``[node, output, version]`` read as a set, so
    in practice node 0 and the first head's node. Only those inputs' channel counts
    (``shape[1]``) add up to the ``in_channels`` used for Convolution/FullyConnected.
    """
    node = nodes[index]
    previous, in_channels = [], 0
    if node["op"] != "null":
        for entry in node["inputs"]:
            src = nodes[entry[0]]
            if src["op"] == "null" and entry[0] not in heads:
                continue
            previous.append(src["name"])
            dims = shapes.get(_output_key(src)) if shapes is not None else None
            # MXNet raises IndexError on a batch-only (1-D) input; neomx counts it as 0.
            if dims is not None and len(dims) > 1:
                in_channels += int(dims[1])
    out_shape = ()
    if shapes is not None and (node["op"] != "null" or index in heads):
        out_shape = shapes.get(_output_key(node), (None,))[1:]
    params = _param_count(node, in_channels, shapes)
    rows = [[f"{node['name']}({node['op']})", _xjoin(out_shape), params,
             previous[0] if previous else ""]]
    rows += [["", "", "", name] for name in previous[1:]]
    return rows, params


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):
    """Print a table of the layers of ``symbol``: output shape, parameter count, inputs.

    Parameters
    ----------
    symbol : Symbol
        The network.
    shape : dict of str to tuple, optional
        Input shapes; without them the shape column is empty and parameter counts that need
        the input width (Convolution, FullyConnected, BatchNorm) are partial.
    line_length : int, optional
        Width of the table.
    positions : list of float or int, optional
        Where each of the four columns ends: fractions of ``line_length`` if the last one is
        at most 1, else absolute character positions.

    Notes
    -----
    The rows are the first graph node (normally the data variable) and every operator, in
    topological order. Parameter counts are Convolution ``C*F/G*prod(kernel) (+F)``,
    FullyConnected ``(C+1)*H`` (``C*H`` with ``no_bias``), BatchNorm ``2*C``, Embedding
    ``input_dim*output_dim`` and 0 otherwise, ``C`` being the summed ``shape[1]`` of the
    listed previous layers. A closing ``=`` rule is printed after the last graph node only
    when that node is a row, as in MXNet.

    Examples
    --------
    >>> import neomx as mx
    >>> from neomx.visualization import print_summary
    >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), name='fc1', num_hidden=10)
    >>> print_summary(net, shape={'data': (1, 4)}, line_length=64,
    ...               positions=[24, 38, 48, 64])  # doctest: +NORMALIZE_WHITESPACE
    ________________________________________________________________
    Layer (type)            Output Shape  Param #   Previous Layer
    ================================================================
    data(null)              4             0
    ________________________________________________________________
    fc1(FullyConnected)     10            50        data
    ================================================================
    Total params: 50
    ________________________________________________________________
    """
    _check_symbol(symbol, "symbol must be Symbol")
    shapes = _output_shapes(symbol, shape) if shape is not None else None
    graph = _graph(symbol)
    nodes = graph["nodes"]
    heads = set(graph["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    print("_" * line_length)
    print(_format_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], positions))
    print("=" * line_length)
    total = 0
    for index, node in enumerate(nodes):
        if node["op"] == "null" and index > 0:
            continue
        rows, params = _summary_layer(nodes, index, heads, shapes)
        total += params
        for row in rows:
            print(_format_row(row, positions))
        print(("=" if index == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)
