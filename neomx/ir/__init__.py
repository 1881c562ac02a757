"""The graph IR under ``symbol``, ``graph`` (the passes) and ``executor``: immutable
:class:`Node`, the indexed :class:`Graph` (topological order, entry ids, variables, aux
states) and :func:`verify`. It imports nothing from neomx but ``base`` and the op table."""
from .graph import Graph, aux_variables, topo_order
from .node import Entry, Node
from .verify import GraphInvariantError, verify

__all__ = ["Node", "Entry", "Graph", "topo_order", "aux_variables", "verify", "GraphInvariantError"]
