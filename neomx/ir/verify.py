"""``verify(graph)``: the invariants every pass keeps (torch.fx's ``lint``)."""
from __future__ import annotations

from ..base import MXNetError
from .graph import Graph


class GraphInvariantError(MXNetError):
    """A graph broke an IR invariant (a bug in a pass, never a user error)."""


def verify(graph: Graph) -> Graph:
    """Check ``graph`` and return it; raises :class:`GraphInvariantError` naming the node.

    * the order is topological: every input comes from an earlier node of the graph;
    * every entry refers to an existing output of its node (inputs and graph outputs);
    * variables have no inputs and no parameters; an op node has exactly its op's inputs
      (arguments, then auxiliary states), and its auxiliary-state inputs are variables;
    * nodes are unique in the order, named, and the index and entry ids are consistent.
    """
    seen = set()
    for pos, n in enumerate(graph.nodes):
        where = f"node {pos} ({n!r})"
        if n in seen:
            raise GraphInvariantError(f"{where} appears twice in the order")
        if graph.index.get(n) != pos:
            raise GraphInvariantError(f"{where}: index says {graph.index.get(n)}")
        if not isinstance(n.name, str) or not n.name:
            raise GraphInvariantError(f"{where} has no name")
        if graph.row_ptr[pos + 1] - graph.row_ptr[pos] != n.num_outputs:
            raise GraphInvariantError(f"{where}: entry ids do not match its {n.num_outputs} outputs")
        if n.op is None:
            if n.inputs:
                raise GraphInvariantError(f"{where}: a variable with inputs")
            if n.given:
                raise GraphInvariantError(f"{where}: a variable with parameters")
        else:
            want = len(n.op.list_inputs(n.params)) + len(n.op.list_aux(n.params))
            if len(n.inputs) != want:
                raise GraphInvariantError(f"{where}: {len(n.inputs)} inputs, its op takes {want}")
            for src, _ in n.inputs[n.num_args:]:
                if src.op is not None:
                    raise GraphInvariantError(f"{where}: auxiliary state {src!r} is not a variable")
        for k, (src, i) in enumerate(n.inputs):
            if src not in seen:
                raise GraphInvariantError(f"{where}: input {k} ({src!r}) is not before it")
            if not 0 <= i < src.num_outputs:
                raise GraphInvariantError(f"{where}: input {k} reads output {i} of {src!r}, "
                                          f"which has {src.num_outputs}")
        seen.add(n)
    for k, (n, i) in enumerate(graph.outputs):
        if n not in seen or not 0 <= i < n.num_outputs:
            raise GraphInvariantError(f"graph output {k} ({n!r}, {i}) is not an entry of the graph")
    return graph
