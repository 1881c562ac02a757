"""The gradient pass: builds the backward graph out of each operator's gradient rule.

Like NNVM's ``Gradient`` pass, it walks the forward nodes in reverse topological order, sums the
gradients flowing into every output entry (``add_n``), and calls the op's rule with a
graph-building namespace ``F``; the rule's results become new nodes. The pass returns, for each
requested variable, the entry holding its gradient (or None when no gradient reaches it).
"""
from __future__ import annotations

from ..base import MXNetError
from ..ops import registry as _reg
from ..ops.registry import ShapeError, TypeInferError
from ..ir import Node


class Handle:
    """An entry of the graph being built, with its inferred shape and dtype."""

    __slots__ = ("node", "index", "shape", "dtype", "stype")

    def __init__(self, node, index, shape, dtype, stype="default"):
        self.node, self.index, self.shape, self.dtype = node, index, tuple(shape), dtype
        self.stype = stype  # forward entries of graphs bound with sparse arguments

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def entry(self):
        return (self.node, self.index)

    def __repr__(self):
        return f"Handle({self.node.name}[{self.index}], {self.shape})"


class GraphBuilder:
    """The ``F`` namespace for gradient rules in the executor: ``F.<op>(*handles, **params)``
    adds a node and returns its output handle(s), with shapes and dtypes inferred at once."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.count = 0
        self.nodes: list[Node] = []
        self.handles: dict = {}  # node -> its output handles (shapes and dtypes)
        self.origin: dict = {}  # node -> the forward node whose gradient rule built it
        self.current = None
        self.wanted = None  # per input of the rule being run: does it need a gradient?

    def __getattr__(self, opname):
        op = _reg.get(opname)

        def build(*inputs, **params):
            return self._build(op, inputs, params)
        return build

    def _build(self, op, inputs, params):
        p, given, slots, names = op.bind_call(inputs, params, _is_handle)
        if any(h is None for h in slots):
            raise MXNetError(f"gradient pass: {op.name} needs inputs {names}")
        inputs = slots
        name = f"{self.prefix}_{op.hint}{self.count}"
        self.count += 1
        node = Node(op, name, p, given, {}, tuple(h.entry for h in inputs))
        nout = op.num_outputs(p)
        try:
            _, shapes = op.infer_shape(p, [h.shape for h in inputs], [None] * nout)
            _, types = op.infer_type(p, [h.dtype for h in inputs], [None] * nout)
        except (ShapeError, TypeInferError) as e:
            raise MXNetError(f"gradient pass: error in operator {op.name} ({name}): "
                             + str(e).replace("{node}", name)) from None
        self.nodes.append(node)
        handles = [Handle(node, i, shapes[i], types[i]) for i in range(nout)]
        self.handles[node] = handles
        if self.current is not None:
            self.origin[node] = self.current
        nvis = op.num_visible_outputs(p)
        return handles[0] if nvis == 1 else handles[:nvis]


def _is_handle(v):
    return isinstance(v, Handle)


def build_gradient(graph, shapes, types, wrt, head_grads, stypes=None):
    """Gradient entries for the ``wrt`` variables of ``graph``.

    ``shapes``/``types``: per entry id of ``graph`` (from inference); ``head_grads``: one
    variable node per graph output (its gradient input). Returns ``(grads, meta, origin)``:
    ``grads`` aligned with ``wrt`` (an entry, or None when no gradient reaches that variable),
    ``meta``: ``{entry: (shape, dtype)}`` for every entry the pass created, and ``origin``:
    ``{new node: forward node whose rule built it}``. ``stypes`` (optional, per entry id):
    the forward entries' storage types: a node with a sparse input uses its op's
    ``sparse_gradient`` rule when it has one (MXNet computes no gradient for dot's csr input).
    """
    F = GraphBuilder("_grad")

    def handle(node, i):
        e = graph.entry(node, i)
        return Handle(node, i, shapes[e], types[e], "default" if stypes is None else stypes[e])

    wanted = set(wrt)
    needs = set()  # nodes whose outputs depend on a wanted variable
    for n in graph.nodes:
        if n in wanted or any(s in needs for s, _ in n.inputs):
            needs.add(n)

    pending: dict = {}  # (node, i) -> list of handles
    for (n, i), g in zip(graph.outputs, head_grads):
        if n in needs:
            e = graph.entry(n, i)
            pending.setdefault((n, i), []).append(Handle(g, 0, shapes[e], types[e]))

    def total(key):
        gs = pending.pop(key, None)
        if not gs:
            return None
        return gs[0] if len(gs) == 1 else F.add_n(*gs)

    found = {}
    for n in reversed(graph.nodes):
        if n not in needs:
            continue
        if n.op is None:
            if n in wanted:
                found[n] = total((n, 0))
            continue
        outs = [handle(n, i) for i in range(n.num_outputs)]
        ograds = [total((n, i)) for i in range(n.num_visible_outputs)]
        if all(g is None for g in ograds) and not n.op.is_loss:
            continue
        if n.op.gradient is None:
            raise MXNetError(f"Operator {n.op.name} is non-differentiable because it didn't register "
                             f"FGradient attribute (node {n.name}).")
        ograds = [g if g is not None else F.zeros_like(outs[i]) for i, g in enumerate(ograds)]
        ins = [handle(s, i) for s, i in n.inputs]
        F.current = n
        F.wanted = tuple(s in needs for s, _ in n.inputs[:n.num_args])
        rule = n.op.gradient
        if stypes is not None and any(h.stype != "default" for h in ins):
            rule = getattr(n.op, "sparse_gradient", None) or rule  # (see neomx/ops/sparse.py)
        try:
            in_grads = rule(F, n.params, ins, outs, ograds)
        except MXNetError as e:
            raise MXNetError(f"while building the gradient of {n.name} ({n.op.name}): {e}") from None
        finally:
            F.current = F.wanted = None
        for (s, i), g in zip(n.inputs[:n.num_args], in_grads):
            if g is not None and s in needs:
                want = shapes[graph.entry(s, i)]
                if tuple(g.shape) != tuple(want):
                    raise MXNetError(f"gradient rule of {n.op.name} ({n.name}) gave shape {g.shape} "
                                     f"for input {s.output_name(i)} of shape {want}")
                pending.setdefault((s, i), []).append(g)
    grads = [found[v].entry if found.get(v) is not None else None for v in wrt]
    meta = {}
    for node in F.nodes:
        for h in F.handles[node]:
            meta[h.entry] = (h.shape, h.dtype)
    return grads, meta, F.origin
