"""An indexed, read-only view of the graph below some output entries (NNVM's IndexedGraph).

Every node gets a position in a topological order and every output entry a dense *entry id*,
so passes keep per-entry facts (shapes, dtypes, slots) in lists instead of side maps.
"""
from __future__ import annotations

from .node import Node


def topo_order(heads) -> list[Node]:
    """Nodes reachable from ``heads`` (entries) in DFS post-order, inputs visited in order."""
    order, seen = [], set()
    for head, _ in heads:
        if head in seen:
            continue
        stack = [(head, 0)]
        seen.add(head)
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if child not in seen:
                    seen.add(child)
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def aux_variables(nodes) -> set[Node]:
    """Variable nodes used as auxiliary states by some op."""
    aux = set()
    for n in nodes:
        if n.op is not None and len(n.inputs) > n.num_args:
            for src, _ in n.inputs[n.num_args:]:
                if src.op is None:
                    aux.add(src)
    return aux


class Graph:
    """The nodes reachable from ``outputs`` (entries), indexed.

    ``nodes`` is the topological order; ``index[node]`` its position; ``entry(node, i)`` the
    dense id of an output entry (``row_ptr[index[node]] + i``); ``arg_nodes``/``aux_nodes`` the
    variables in order (MXNet's ``list_arguments``/``list_auxiliary_states``).
    """

    __slots__ = ("outputs", "nodes", "index", "row_ptr", "arg_nodes", "aux_nodes")

    def __init__(self, outputs):
        self.outputs = tuple(outputs)
        self.nodes = topo_order(self.outputs)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        row = [0]
        for n in self.nodes:
            row.append(row[-1] + n.num_outputs)
        self.row_ptr = row
        aux = aux_variables(self.nodes)
        self.arg_nodes = [n for n in self.nodes if n.op is None and n not in aux]
        self.aux_nodes = [n for n in self.nodes if n.op is None and n in aux]

    @property
    def num_entries(self) -> int:
        return self.row_ptr[-1]

    def entry(self, node: Node, i: int = 0) -> int:
        return self.row_ptr[self.index[node]] + i

    @property
    def input_nodes(self) -> list[Node]:
        """Every variable, in topological order (MXNet's ``list_inputs``)."""
        return [n for n in self.nodes if n.op is None]

    @property
    def op_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.op is not None]

    def output_entries(self) -> list[int]:
        return [self.entry(n, i) for n, i in self.outputs]

    def __repr__(self):
        return (f"<Graph {len(self.nodes)} nodes ({len(self.arg_nodes)} arguments, "
                f"{len(self.aux_nodes)} aux), {len(self.outputs)} outputs>")
