"""What the ONNX and the PyTorch exporters share: loading a model, walking its graph in
topological order through a table of per-operator converters, MXNet's parameter conventions
(spatial defaults, reduce axes, Reshape's codes) and one error naming every operator that
cannot be converted.

A converter is ``fn(ctx, node, p, ins) -> output or list of outputs``: ``p`` the node's parsed
parameters, ``ins`` the converted input values (the exporter's own handles: fx proxies or ONNX
value names), ``ctx`` the exporter. It raises :class:`Unsupported` with a reason when the node's
parameters are outside what the target can express.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..base import MXNetError

__all__ = ["Unsupported", "Model", "load_model", "prepare", "walk", "spatial", "reduce_axes",
           "reshape_plan", "slice_spec", "output_values", "LOSS_LABELS"]


class Unsupported(Exception):
    """A node's parameters cannot be expressed in the target (the message says which)."""


# Loss heads: at inference they pass their data through a fixed function; their label is no
# model input (MXNet's exporter drops it too).
LOSS_LABELS = ("SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
               "MAERegressionOutput", "SVMOutput")


@dataclass
class Model:
    """A symbol, its parameters as numpy arrays, and what the exporters need to know of it."""

    symbol: object
    graph: object                         # neomx.ir.Graph below the symbol's outputs
    arg_params: dict                      # name -> np.ndarray
    aux_params: dict
    inputs: list                          # data input names (arguments without a value)
    labels: list                          # loss labels left out of the inputs
    shapes: dict = field(default_factory=dict)   # (node, i) -> shape tuple (if inferred)
    dtypes: dict = field(default_factory=dict)   # (node, i) -> numpy dtype (if inferred)

    def shape(self, entry):
        """The inferred shape of an input entry ``(node, i)``, or None."""
        s = self.shapes.get((entry[0], entry[1]))
        return None if s is None or 0 in s else tuple(s)

    def dtype(self, entry):
        return self.dtypes.get((entry[0], entry[1]))


def _to_numpy(v):
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    if hasattr(v, "detach"):  # a torch tensor
        return v.detach().cpu().numpy()
    return np.asarray(v)


def load_model(sym, params=None, aux_params=None):
    """``(Symbol, arg_params, aux_params)`` with numpy values from any of the forms MXNet's
    exporter takes: a Symbol or a ``-symbol.json`` path; a ``.params`` path, one dict (names
    with or without ``arg:``/``aux:``), a list ``[arg_params, aux_params]`` or two dicts."""
    from .. import ndarray as nd
    from .. import symbol as _sym
    if isinstance(sym, (str, os.PathLike)):
        sym = _sym.load(os.fspath(sym))
    if not isinstance(sym, _sym.Symbol):
        raise MXNetError(f"expected a Symbol or the path of a -symbol.json file, got {type(sym)}")
    if isinstance(params, (str, os.PathLike)):
        params = nd.load(os.fspath(params))
    if isinstance(params, (list, tuple)):
        if len(params) != 2:
            raise MXNetError("params given as a list must be [arg_params, aux_params]")
        params, aux_params = params
    merged = {}
    for d in (params or {}), (aux_params or {}):
        if not isinstance(d, dict):
            raise MXNetError(f"parameters must be a dict of name -> array, got {type(d)}")
        for k, v in d.items():
            if k.startswith(("arg:", "aux:")):
                k = k[4:]
            merged[k] = _to_numpy(v)
    aux_names = set(sym.list_auxiliary_states())
    args = {k: v for k, v in merged.items() if k not in aux_names}
    aux = {k: v for k, v in merged.items() if k in aux_names}
    return sym, args, aux


def _labels(graph, known):
    """Arguments without a value that only feed loss heads' label slots."""
    label_use, other_use = set(), set()
    for n in graph.op_nodes:
        names = n.op.list_inputs(n.params)
        for slot, (src, _) in zip(names, n.inputs):
            if src.op is not None or src.name in known:
                continue
            if n.op.name in LOSS_LABELS and slot == "label":
                label_use.add(src.name)
            else:
                other_use.add(src.name)
    return label_use - other_use


def prepare(sym, params=None, aux_params=None, in_shapes=None, in_types=None) -> Model:
    """Load the model and infer every entry's shape and dtype from ``in_shapes``/``in_types``
    (dicts input name -> shape/dtype; whatever is missing stays unknown)."""
    from ..graph import infer as _infer
    from ..ir import Graph
    sym, args, aux = load_model(sym, params, aux_params)
    graph = Graph(sym._outputs)
    known = set(args) | set(aux)
    missing_aux = [n.name for n in graph.aux_nodes if n.name not in aux]
    if missing_aux:
        raise MXNetError(f"auxiliary states without a value: {', '.join(missing_aux)}")
    labels = _labels(graph, known)
    inputs = [n.name for n in graph.input_nodes if n.name not in known and n.name not in labels]
    model = Model(sym, graph, args, aux, inputs, sorted(labels))
    for kind, given, store, conv in (("shape", in_shapes, model.shapes, tuple),
                                     ("type", in_types, model.dtypes, np.dtype)):
        vals = {k: (v.shape if kind == "shape" else v.dtype) for k, v in {**args, **aux}.items()}
        vals.update({k: v for k, v in (given or {}).items() if v is not None})
        known_nodes = {n: conv(vals[n.name]) for n in graph.input_nodes if n.name in vals}
        try:
            res = _infer.infer(graph, known_nodes, kind)
        except MXNetError:
            if given:
                raise
            continue  # ranks stay unknown; converters that need them say so
        for n in graph.nodes:
            for i in range(n.num_outputs):
                v = res[graph.entry(n, i)]
                if v is not None:
                    store[(n, i)] = conv(v)
    return model


def walk(model: Model, table: dict, ctx, values: dict, what: str):
    """Convert every operator node in topological order with ``table[op name]``; ``values``
    maps (node, i) -> converted value and starts with the variables'. Raises one MXNetError
    naming every operator that has no converter or whose parameters cannot be converted."""
    missing, problems = {}, {}
    for node in model.graph.op_nodes:
        conv = table.get(node.op.name)
        if conv is None:
            missing.setdefault(node.op.name, node.name)
            continue
        failed = bool(missing or problems)
        ins = [values.get((src, i)) for src, i in node.inputs]
        if failed:  # only looking for more errors now: stand-ins for what was not converted
            ins = [ctx.dummy() if v is None and (src, i) not in values else v
                   for v, (src, i) in zip(ins, node.inputs)]
        try:
            out = conv(ctx, node, node.params, ins)
        except Unsupported as e:
            problems.setdefault(node.op.name, f"{node.name}: {e}")
            continue
        except Exception:  # noqa: BLE001  (a stand-in the converter could not take)
            if failed:
                continue
            raise
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        for i, v in enumerate(outs):
            values[(node, i)] = v
    if missing or problems:
        ops = sorted(set(missing) | set(problems))
        lines = [f"  {op} (node {missing[op]}): no {what} converter" for op in sorted(missing)]
        lines += [f"  {op} (node {problems[op]})" for op in sorted(problems) if op not in missing]
        raise MXNetError(f"cannot convert to {what}: unsupported operators "
                         f"{', '.join(ops)}\n" + "\n".join(lines))


# --- MXNet's parameter conventions ------------------------------------------------------------------
def spatial(value, n, default):
    """A per-spatial-dim parameter (stride, pad, dilate) with MXNet's empty default."""
    value = tuple(value or ())
    if not value:
        return (default,) * n
    if len(value) != n:
        raise Unsupported(f"{len(value)} values for {n} spatial dims")
    return value


def reduce_axes(p, ndim):
    """The axes a reduction (sum/mean/max/min with axis/exclude) runs over, non-negative."""
    axis = p.axis
    if axis is None or axis == ():
        axes = tuple(range(ndim)) if ndim is not None else None
        if axis == () and not p.exclude:
            return ()  # MXNet: an empty axis tuple reduces nothing... never used in practice
        return axes
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if ndim is None:
        if p.exclude or any(a < 0 for a in axes):
            raise Unsupported("the input's rank is unknown (give input shapes)")
        return axes
    axes = tuple(a % ndim for a in axes)
    if p.exclude:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def reshape_plan(codes, rank, reverse=False):
    """MXNet's Reshape codes as a list of items for an input of rank ``rank``:
    ``("c", n)`` a constant (``n`` may be -1: inferred), ``("d", (i, j...))`` the product of
    input dims, ``("s", i, k)`` input dim ``i`` divided by ``k``."""
    codes = tuple(codes)
    if rank is None:
        if all(c > 0 or c == -1 for c in codes):
            return [("c", c) for c in codes]
        if all(c >= -1 for c in codes) and not reverse:
            return [("d", (i,)) if c == 0 else ("c", c) for i, c in enumerate(codes)]
        raise Unsupported(f"Reshape codes {codes} need the input's rank (give input shapes)")
    idx = list(range(rank))
    if reverse:
        idx, codes = idx[::-1], codes[::-1]
    out, i, j = [], 0, 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            out.append(("d", (idx[j],)))
            j += 1
        elif c == -1 or c > 0:
            out.append(("c", c))
            j += 1
        elif c == -2:
            out += [("d", (k,)) for k in idx[j:]]
            j = rank
        elif c == -3:
            out.append(("d", (idx[j], idx[j + 1])))
            j += 2
        elif c == -4:
            d1, d2 = codes[i + 1], codes[i + 2]
            out += [("s", idx[j], d2) if d1 == -1 else ("c", d1),
                    ("s", idx[j], d1) if d2 == -1 else ("c", d2)]
            i += 2
            j += 1
        else:
            raise Unsupported(f"Reshape code {c}")
        i += 1
    return out[::-1] if reverse else out


def _opt_tuple(v):
    import ast
    if isinstance(v, str):
        v = ast.literal_eval(v.strip()) if v.strip() not in ("", "None") else ()
    if v is None:
        return ()
    return (v,) if isinstance(v, int) else tuple(v)


def slice_spec(p):
    """``slice``'s begin/end/step as one ``(begin, end, step)`` per leading axis (None where
    not given); negative steps are not converted."""
    begin, end, step = _opt_tuple(p.begin), _opt_tuple(p.end), _opt_tuple(p.step)
    out = []
    for i, b in enumerate(begin):
        e = end[i] if i < len(end) else None
        s = step[i] if i < len(step) else None
        if s is not None and s < 0:
            raise Unsupported("negative steps")
        out.append((b, e, s))
    return out


def output_values(model, values, what):
    """The converted values of the model's outputs (an error for an output a converter does
    not give, such as a LeakyReLU's rrelu mask)."""
    outs = []
    for node, i in model.symbol._outputs:
        if (node, i) not in values:
            raise MXNetError(f"cannot convert to {what}: output {node.output_name(i)} of "
                             f"{node.name} ({node.op.name}) is not converted")
        outs.append(values[(node, i)])
    return outs
