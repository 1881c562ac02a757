"""Graph nodes: an operator application or a variable, immutable once built."""
from __future__ import annotations

from types import MappingProxyType

from ..ops.registry import OpDef, Params

Entry = tuple  # (Node, output index)


class Node:
    """One node of a graph: ``Node(op, name, params, given, attrs, inputs)``.

    ``op`` is None for a variable. ``inputs`` are ``(node, output_index)`` entries, the op's
    arguments first and its auxiliary states last. ``given`` keeps the parameters exactly as the
    user passed them (as MXNet strings) for JSON; ``params`` is the full parsed set.

    The structure (op, name, params, given, inputs) cannot change after construction, so passes
    may cache anything they derive from a node. ``attrs`` (user annotations such as
    ``__lr_mult__`` or ``__ctx_group__``) is a read-only view; :meth:`annotate` is the one way to
    add annotations later (MXNet's ``Symbol._set_attr``: every graph holding the node sees them).
    Nodes compare and hash by identity.
    """

    __slots__ = ("op", "name", "params", "given", "_attrs", "attrs", "inputs", "__weakref__")

    def __init__(self, op: OpDef | None, name: str, params: Params | None = None,
                 given: dict | None = None, attrs: dict | None = None, inputs: tuple = ()):
        init = object.__setattr__
        init(self, "op", op)
        init(self, "name", name)
        init(self, "params", params if params is not None else Params())
        init(self, "given", MappingProxyType(dict(given or {})))
        init(self, "_attrs", dict(attrs or {}))
        init(self, "attrs", MappingProxyType(self._attrs))
        init(self, "inputs", tuple(inputs))

    def __setattr__(self, key, value):
        raise AttributeError(f"Node is immutable (cannot set {key!r}); build a new Node")

    def __delattr__(self, key):
        raise AttributeError(f"Node is immutable (cannot delete {key!r})")

    def annotate(self, **attrs: str) -> None:
        """Add or replace string annotations (never structure)."""
        self._attrs.update(attrs)

    def replace(self, **changes) -> "Node":
        """A new node with some fields changed (``name``, ``inputs``, ``attrs``...)."""
        fields = {"op": self.op, "name": self.name, "params": self.params, "given": self.given,
                  "attrs": self._attrs, "inputs": self.inputs}
        fields.update(changes)
        return Node(**fields)

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
