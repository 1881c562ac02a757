"""Shape and type inference over a graph, in both directions, until nothing changes.

Shapes are tuples where 0 is an unknown dimension (MXNet 1.x convention) and None an unknown
shape; operator rules see partially known shapes and fill in what they can.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, dtype_from_code, parse_shape
from ..ops.registry import ShapeError, TypeInferError, merge_shape, _sh


def _merge_type(old, new):
    if old is None:
        return new
    if new is None or np.dtype(old) == np.dtype(new):
        return old
    return False  # conflict


def _merge(kind, old, new):
    if kind == "shape":
        return merge_shape(old, new) if (old is not None or new is not None) else None
    return _merge_type(old, new)


def _conflict(kind, old, new, node, pos, is_input):
    if kind == "shape":
        if is_input:
            return (f"Error in operator {node}: Shape inconsistent, Provided = {_sh(old)}, "
                    f"inferred shape={_sh(new)}")
        return (f"Error in operator {node}: Incompatible attr in node {node} at {pos}-th output: "
                f"expected {_sh(old)}, got {_sh(new)}")
    where = "input" if is_input else "output"
    return (f"Error in operator {node}: Incompatible attr in node {node} at {pos}-th {where}: "
            f"expected {np.dtype(old).name}, got {np.dtype(new).name}")


def variable_hint(node, kind):
    """The shape/dtype a variable declares through its ``__shape__``/``__dtype__`` attrs."""
    if kind == "shape":
        s = node.attrs.get("__shape__")
        if s is None:
            return None
        shape = parse_shape(s)
        return shape if shape else None
    t = node.attrs.get("__dtype__")
    return None if t is None else dtype_from_code(int(t))


def _variable_value(node, given, kind):
    """A variable's starting value, as MXNet decides it: a given value wins when it is
    complete; otherwise the variable's own ``__shape__``/``__dtype__`` attribute, when it has
    one, replaces it."""
    if given is not None and _complete(kind, given):
        return tuple(given) if kind == "shape" else given
    hint = variable_hint(node, kind)
    return hint if hint is not None else given


def infer(graph, known: dict, kind: str = "shape") -> list:
    """Infer every entry's shape (``kind='shape'``) or dtype (``'type'``) over ``graph``.

    ``known`` maps variable nodes to given values. Returns a list indexed by entry id (None, or
    a shape with 0s, where undecidable). Errors are MXNetError "Error in operator <name>: ...".
    """
    vals = [None] * graph.num_entries
    ops = []
    for n in graph.nodes:
        if n.op is None:
            vals[graph.entry(n)] = _variable_value(n, known.get(n), kind)
        else:
            ins = [graph.entry(s, i) for s, i in n.inputs]
            first = graph.entry(n)
            ops.append((n, ins, list(range(first, first + n.num_outputs))))
    sweep = ops + ops[::-1]
    for _ in range(len(ops) + 2):
        changed = False
        for n, ins, outs in sweep:
            if _step(n, ins, outs, vals, kind):
                changed = True
        if not changed:
            break
    return vals


def _complete(kind, v):
    return v is not None and (kind != "shape" or all(d > 0 for d in v))


def _step(n, in_ids, out_ids, vals, kind) -> bool:
    ins = [vals[e] for e in in_ids]
    outs = [vals[e] for e in out_ids]
    if all(_complete(kind, v) for v in ins) and all(_complete(kind, v) for v in outs):
        return False
    rule = n.op.infer_shape if kind == "shape" else n.op.infer_type
    try:
        new_ins, new_outs = rule(n.params, list(ins), list(outs))
    except (ShapeError, TypeInferError) as e:
        if kind == "shape" and any(v is not None and 0 in v for v in ins):
            return False  # not decidable yet with unknown dims
        raise MXNetError(f"Error in operator {n.name}: " + str(e).replace("{node}", n.name)) from None
    changed = False
    new_outs = list(new_outs) + [None] * (len(out_ids) - len(new_outs))
    for is_input, keys, news in ((True, in_ids, new_ins), (False, out_ids, new_outs)):
        for pos, (key, v) in enumerate(zip(keys, news)):
            if v is None:
                continue
            old = vals[key]
            m = _merge(kind, old, v)
            if m is None or m is False:
                raise MXNetError(_conflict(kind, old, v, n.name, pos, is_input))
            if old is None or (kind == "shape" and tuple(old) != tuple(m)):
                vals[key] = m
                changed = True
    return changed
