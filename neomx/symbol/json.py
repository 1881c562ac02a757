"""MXNet's JSON graph layout: ``{"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}``."""
from __future__ import annotations

import json
import logging

from ..base import MXNetError
from ..ops import registry as _reg
from ..ir import Node, topo_order
from .scope import HIDDEN_KEYS
from .symbol import Symbol

MXNET_VERSION = 10901
_log = logging.getLogger("neomx.symbol")


def to_json(sym: Symbol) -> str:
    doc = _graph_doc(sym._outputs)
    doc["attrs"] = {"mxnet_version": ["int", MXNET_VERSION]}
    return _dump(doc)


def _graph_doc(outputs) -> dict:
    """The JSON layout of the graph below ``outputs`` (nodes of control-flow operators carry
    their subgraphs under ``"subgraphs"``, as MXNet writes them)."""
    nodes = topo_order(outputs)
    index = {n: i for i, n in enumerate(nodes)}
    out_nodes, arg_nodes, row_ptr = [], [], [0]
    for i, n in enumerate(nodes):
        entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
        attrs = dict(n.given)
        attrs.update(n.attrs)
        if attrs:
            entry["attrs"] = {k: str(v) for k, v in attrs.items()}
        nargs = n.num_args
        entry["inputs"] = [[index[s], k, 1 if (j >= nargs and s.op is None) else 0]
                           for j, (s, k) in enumerate(n.inputs)]
        subgraphs = n.params.get("subgraphs") if n.op is not None else None
        if subgraphs:
            entry["subgraphs"] = [_graph_doc(g._outputs) for g in subgraphs]
        out_nodes.append(entry)
        if n.op is None:
            arg_nodes.append(i)
        row_ptr.append(row_ptr[-1] + n.num_outputs)
    return {"nodes": out_nodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr,
            "heads": [[index[n], k, 0] for n, k in outputs]}


def _seq(open_, close, items, depth, multi):
    """dmlc::JSONWriter layout: items joined by ", ", one per line (indent 2*depth) if multi."""
    out = open_
    for k, item in enumerate(items):
        if k:
            out += ", "
        if multi:
            out += "\n" + " " * (2 * depth)
        out += item
    if multi:
        out += "\n" + " " * (2 * (depth - 1))
    return out + close


def _ints(values, depth):
    # dmlc writes vectors on several lines when they hold more than 10 items.
    return _seq("[", "]", [str(v) for v in values], depth, len(values) > 10)


def _entries(entries, depth):
    return _seq("[", "]", [_seq("[", "]", [str(x) for x in e], 0, False) for e in entries],
                depth, len(entries) > 10)


def _dump(doc, d: int = 1) -> str:
    """Serialise exactly like MXNet 1.9.1 (nnvm's JSON through dmlc::JSONWriter); ``d`` is the
    depth of the document's keys (subgraph documents sit 4 levels below their node's graph)."""
    enc = lambda o: json.dumps(o, ensure_ascii=False)  # noqa: E731
    nodes = []
    for n in doc["nodes"]:
        items = [f'"op": {enc(n["op"])}', f'"name": {enc(n["name"])}']
        if "attrs" in n:
            attrs = sorted(n["attrs"].items())
            items.append('"attrs": ' + _seq("{", "}", [f"{enc(k)}: {enc(v)}" for k, v in attrs],
                                            d + 3, len(attrs) > 1))
        items.append('"inputs": ' + _entries(n["inputs"], d + 3))
        if "subgraphs" in n:
            items.append('"subgraphs": ' + _seq("[", "]", [_dump(g, d + 4) for g in n["subgraphs"]],
                                                d + 3, True))
        nodes.append(_seq("{", "}", items, d + 2, True))
    top = ['"nodes": ' + _seq("[", "]", nodes, d + 1, True),
           '"arg_nodes": ' + _ints(doc["arg_nodes"], d + 1),
           '"node_row_ptr": ' + _ints(doc["node_row_ptr"], d + 1),
           '"heads": ' + _entries(doc["heads"], d + 1)]
    if "attrs" in doc:
        top.append('"attrs": {"mxnet_version": ["int", ' + str(doc["attrs"]["mxnet_version"][1])
                   + "]}")
    return _seq("{", "}", top, d, True)


def from_json(text) -> Symbol:
    """A Symbol from MXNet's JSON (``str``, or UTF-8 ``bytes``); anything malformed raises
    MXNetError (never a UnicodeDecodeError, KeyError or IndexError)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise MXNetError(f"invalid symbol JSON: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not isinstance(text, str):
        raise MXNetError(f"invalid symbol JSON: expected str or bytes, got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except (ValueError, TypeError, RecursionError) as e:
        raise MXNetError(f"invalid symbol JSON: {e}") from None
    if not isinstance(doc, dict) or "nodes" not in doc or "heads" not in doc:
        raise MXNetError("invalid symbol JSON: expected an object with 'nodes' and 'heads'")
    try:
        return _from_doc(doc)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        raise MXNetError(f"invalid symbol JSON: malformed graph ({type(e).__name__}: {e})") from None


def _file_version(doc) -> int:
    """The ``mxnet_version`` a file was saved by (files before 0.9 have none: 0.8.0)."""
    v = (doc.get("attrs") or {}).get("mxnet_version")
    if isinstance(v, list) and len(v) == 2:
        return int(v[1])
    return 800


def _version_str(v: int) -> str:
    return f"v{v // 10000}.{v // 100 % 100}.{v % 100}"


def _legacy_aux_inputs(op, p, node_name, given, attrs, inputs):
    """MXNet 0.8 files list no auxiliary states (BatchNorm with data, gamma, beta only): as
    MXNet's upgrade, make ``<node>_<aux>`` variables carrying the op's attributes and their
    initialiser, and wire them in after the arguments."""
    from .register import _AUX_INIT
    out = list(inputs)
    for aux in op.list_aux(p):
        var_attr = dict(given)
        var_attr.update(attrs)
        if aux in _AUX_INIT:
            var_attr["__init__"] = _AUX_INIT[aux]
        out.append((Node(None, f"{node_name}_{aux}", attrs=var_attr), 0))
    return tuple(out)


def _from_doc(doc, version=None) -> Symbol:
    sub = version is not None  # a subgraph: logged and upgraded with its parent
    version = _file_version(doc) if version is None else version
    if version < MXNET_VERSION and not sub:
        _log.info("Loading symbol saved by previous version %s. Attempting to upgrade...",
                  _version_str(version))
    built: list[Node] = []
    for i, jn in enumerate(doc["nodes"]):
        try:
            opname, name = jn["op"], jn["name"]
            raw_inputs = jn.get("inputs", [])
        except (KeyError, TypeError):
            raise MXNetError(f"invalid symbol JSON: node {i} lacks 'op' or 'name'") from None
        if not isinstance(opname, str) or not isinstance(name, str):
            raise MXNetError(f"invalid symbol JSON: node {i}'s 'op' and 'name' must be strings")
        # MXNet < 1.0 stored params under "param" and user attrs under "attr".
        attrs = dict(jn.get("attrs", {}) or {})
        attrs.update(jn.get("attr", {}) or {})
        attrs = {(f"__{k}__" if k in HIDDEN_KEYS else k): str(v) for k, v in attrs.items()}
        params_in = dict(jn.get("param", {}) or {})
        inputs = []
        for inp in raw_inputs:
            src, k = int(inp[0]), int(inp[1])
            if not 0 <= src < i:
                raise MXNetError(f"invalid symbol JSON: node {name} refers to node {src}, "
                                 "which is not before it")
            if not 0 <= k < built[src].num_outputs:
                raise MXNetError(f"invalid symbol JSON: node {name} reads output {k} of node "
                                 f"{built[src].name}, which has {built[src].num_outputs}")
            inputs.append((built[src], k))
        if opname == "null":
            built.append(Node(None, name, attrs={k: str(v) for k, v in attrs.items()}))
            continue
        op = _reg.find(opname)
        if op is None:
            raise MXNetError(f"Cannot find operator {opname} (node {name}) in this version of neomx")
        for k in list(attrs):
            if k in op.param_map:
                params_in[k] = attrs.pop(k)
        p, given = op.parse_params(params_in, name)
        if jn.get("subgraphs"):
            p["subgraphs"] = tuple(_from_doc(g, version) for g in jn["subgraphs"])
        n_args, aux = len(op.list_inputs(p)), op.list_aux(p)
        if version < 900 and aux and len(inputs) == n_args:
            inputs = _legacy_aux_inputs(op, p, name, given, attrs, inputs)
        node = Node(op, name, p, given, attrs, tuple(inputs))
        want = n_args + len(aux)
        if len(inputs) != want:
            raise MXNetError(f"invalid symbol JSON: operator {opname} (node {name}) has "
                             f"{len(inputs)} inputs, expected {want}")
        built.append(node)
    heads = []
    for h in doc["heads"]:
        src, k = int(h[0]), int(h[1])
        if not 0 <= src < len(built) or not 0 <= k < built[src].num_outputs:
            raise MXNetError(f"invalid symbol JSON: head {list(h)} refers to no node output")
        heads.append((built[src], k))
    if not heads:
        raise MXNetError("invalid symbol JSON: no heads")
    if version < MXNET_VERSION and not sub:
        _log.info("Symbol successfully upgraded!")
    return Symbol(heads)
