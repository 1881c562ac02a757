"""The graph IR: a :class:`Node` is an operator application or a variable; a Symbol is a tuple of
output entries ``(node, index)``. Nodes are never modified after construction."""
from __future__ import annotations

from ..ops.registry import OpDef, Params


class Node:
    """One node of a graph.

    ``op`` is None for a variable. ``inputs`` are ``(node, output_index)`` pairs, the op's
    arguments first and its auxiliary states last. ``given`` keeps the parameters exactly as the
    user passed them (as MXNet strings) for JSON; ``params`` is the full parsed set.
    """

    __slots__ = ("op", "name", "params", "given", "attrs", "inputs", "__weakref__")

    def __init__(self, op: OpDef | None, name: str, params: Params | None = None,
                 given: dict | None = None, attrs: dict | None = None, inputs: tuple = ()):
        self.op = op
        self.name = name
        self.params = params if params is not None else Params()
        self.given = given or {}
        self.attrs = attrs or {}
        self.inputs = tuple(inputs)

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_outputs(self.params)

    @property
    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_visible_outputs(self.params)

    @property
    def num_args(self) -> int:
        """Number of non-aux inputs."""
        return 0 if self.op is None else len(self.op.list_inputs(self.params))

    def output_name(self, i: int) -> str:
        if self.op is None:
            return self.name
        names = self.op.list_outputs(self.params)
        if i < len(names):
            return f"{self.name}_{names[i]}"
        return f"{self.name}_hidden{i}"

    def __repr__(self):
        return f"Node({'var' if self.op is None else self.op.name}, {self.name!r})"


def topo_order(heads) -> list[Node]:
    """Nodes reachable from ``heads`` (entries) in DFS post-order, inputs visited in order."""
    order, seen = [], set()
    for head, _ in heads:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def aux_variables(nodes) -> set[int]:
    """ids of variable nodes used as auxiliary states by some op."""
    aux = set()
    for n in nodes:
        if n.op is not None and len(n.inputs) > n.num_args:
            for src, _ in n.inputs[n.num_args:]:
                if src.op is None:
                    aux.add(id(src))
    return aux
