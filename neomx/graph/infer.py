"""Shape and type inference over a graph, in both directions, until nothing changes."""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, dtype_from_code, parse_shape
from ..ops.registry import ShapeError, TypeInferError, _sh


def _merge_shape(old, new):
    """Combine two views of one shape; 0 dims are unknown. Returns merged or raises."""
    if old is None:
        return tuple(new)
    if new is None:
        return old
    old, new = tuple(old), tuple(new)
    if old == new:
        return old
    if len(old) == len(new) and all(a == b or a == 0 or b == 0 for a, b in zip(old, new)):
        return tuple(a if a else b for a, b in zip(old, new))
    raise ShapeError(f"Shape inconsistent, Provided = {_sh(old)}, inferred shape={_sh(new)}")


def _merge_type(old, new):
    if old is None:
        return new
    if new is None or np.dtype(old) == np.dtype(new):
        return old
    raise TypeInferError(f"expected {np.dtype(old).name}, got {np.dtype(new).name}")


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


def infer(nodes, known: dict, kind: str = "shape") -> dict:
    """Infer every entry's shape (``kind='shape'``) or dtype (``'type'``).

    ``nodes`` is a topological order; ``known`` maps variable-node ids to given values. Returns a
    dict ``(id(node), index) -> value`` (value None where undecidable). Errors are MXNetError
    "Error in operator <name>: ...".
    """
    merge = _merge_shape if kind == "shape" else _merge_type
    vals: dict = {}
    for n in nodes:
        if n.op is None:
            given = known.get(id(n))
            hint = variable_hint(n, kind)
            try:
                v = merge(hint, given) if given is not None else hint
            except MXNetError as e:
                raise MXNetError(f"Error in operator {n.name}: {e}") from None
            vals[(id(n), 0)] = v
    for _ in range(len(nodes) + 2):
        changed = False
        for n in list(nodes) + list(reversed(nodes)):
            if n.op is not None and _step(n, vals, merge, kind):
                changed = True
        if not changed:
            break
    return vals


def _usable(v, kind):
    if kind == "shape" and v is not None and any(d == 0 for d in v):
        return None
    return v


def _step(n, vals, merge, kind) -> bool:
    nout = n.num_outputs
    ins = [_usable(vals.get((id(s), i)), kind) for s, i in n.inputs]
    outs = [_usable(vals.get((id(n), i)), kind) for i in range(nout)]
    if kind == "shape" and all(v is not None for v in ins) and all(v is not None for v in outs):
        return False
    rule = n.op.infer_shape if kind == "shape" else n.op.infer_type
    try:
        new_ins, new_outs = rule(n.params, ins, outs)
    except (ShapeError, TypeInferError) as e:
        raise MXNetError(f"Error in operator {n.name}: {e}") from None
    changed = False
    try:
        for (s, i), v in zip(n.inputs, new_ins):
            key = (id(s), i)
            old = vals.get(key)
            m = merge(old, v)
            if m is not None and (old is None or tuple_ne(old, m)):
                vals[key] = m
                changed = True
        for i, v in enumerate(list(new_outs) + [None] * (nout - len(new_outs))):
            key = (id(n), i)
            old = vals.get(key)
            m = merge(old, v)
            if m is not None and (old is None or tuple_ne(old, m)):
                vals[key] = m
                changed = True
    except TypeInferError as e:
        pos = next((k for k, (s, i) in enumerate(n.inputs)), 0)
        raise MXNetError(f"Error in operator {n.name}: Incompatible attr in node {n.name} at {pos}-th input: {e}") from None
    except ShapeError as e:
        raise MXNetError(f"Error in operator {n.name}: {e}") from None
    return changed


def tuple_ne(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return tuple(a) != tuple(b)
    return np.dtype(a) != np.dtype(b)
