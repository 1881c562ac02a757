"""The executor's compilation pipeline, one small pass after another:

    infer -> add head gradients -> gradient -> assign slots -> place -> storage -> plan memory

(storage: with the arguments' storage types, :mod:`neomx.graph.storage` decides which steps
run sparse kernels or the dense fallback; slots may then hold csr / row_sparse values.)

:func:`compile_program` turns output entries, the bound variables' shapes and dtypes, the
gradient requests and the forward placement (:func:`place_devices`, which the caller runs: it
also places the caller's arrays) into a :class:`Program`: a printable object with a forward and
a backward :class:`~neomx.graph.plan.Plan` over one slot table, which ``Executor`` runs (and Gluon's cached
graphs or the autograd tape can run the same way). Nothing here touches NDArrays or the engine.
"""
from __future__ import annotations

import bisect

from ..base import MXNetError
from ..ir import Graph, Node, verify
from ..ops.registry import Params
from . import infer as _infer
from . import storage as _storage
from .gradient import build_gradient
from .plan import Plan, make_steps


class Program:
    """A compiled graph.

    ``graph``: the forward graph; ``full``: forward and backward nodes together (its entry ids
    are the slots); ``var_slots``: argument then aux-state slots; ``out_slots``; ``hg_slots``
    and ``head_grad_used``: the head-gradient inputs; ``grad_slots``: per argument, the slot
    holding its gradient (None: no gradient); ``fwd``/``bwd``: the plans; ``replayable``: the
    forward can be recomputed exactly, so backward may release forward values.
    """

    def __init__(self, graph, full, shapes, types, var_slots, out_slots, hg_slots,
                 head_grad_used, grad_slots, fwd, bwd, replayable, devices, stypes=None,
                 fallbacks=()):
        self.graph, self.full = graph, full
        self.shapes, self.types = shapes, types
        self.var_slots, self.out_slots = var_slots, out_slots
        self.hg_slots, self.head_grad_used = hg_slots, head_grad_used
        self.grad_slots = grad_slots
        self.fwd, self.bwd = fwd, bwd
        self.replayable = replayable
        self.devices = devices  # torch devices other than the executor's own, used by steps
        self.num_slots = full.num_entries
        # storage type per slot (None: every value is dense; see neomx/graph/storage.py)
        self.stypes = stypes
        self.fallbacks = list(fallbacks)  # [(forward node, in stypes, out stypes)]: dense fallback

    def stype(self, slot) -> str:
        return "default" if self.stypes is None or slot is None else self.stypes[slot]

    @property
    def out_stypes(self):
        return [self.stype(s) for s in self.out_slots]

    @property
    def grad_stypes(self):
        """Per argument, the storage type of its gradient (None: no gradient)."""
        return [None if s is None else self.stype(s) for s in self.grad_slots]

    def grad_producer(self, k):
        """The op name of the node computing argument ``k``'s gradient (None: a variable)."""
        s = self.grad_slots[k]
        if s is None:
            return None
        node = self.full.nodes[bisect.bisect_right(self.full.row_ptr, s) - 1]
        return None if node.op is None else node.op.name

    @property
    def out_shapes(self):
        return [self.shapes[s] for s in self.out_slots]

    @property
    def out_types(self):
        return [self.types[s] for s in self.out_slots]

    def debug_str(self) -> str:
        return "# forward\n" + self.fwd.to_python() + "\n# backward\n" + self.bwd.to_python()

    __str__ = debug_str


# --- the passes ----------------------------------------------------------------------------
def infer_all(graph, known_shapes: dict, known_types: dict):
    """Shapes and dtypes of every entry; every output must be decided."""
    shapes = _infer.infer(graph, known_shapes, "shape")
    types = _infer.infer(graph, known_types, "type")
    missing = [n.output_name(i) for (n, i), e in zip(graph.outputs, graph.output_entries())
               if shapes[e] is None or 0 in shapes[e]]
    if missing:
        raise MXNetError("InferShape pass cannot decide shapes for the following outputs (0 means "
                         f"unknown dimensions): {missing}")
    return shapes, types


def add_head_gradients(graph) -> list[Node]:
    """One new variable per output: the gradient flowing into it (``<output>_head_grad``)."""
    return [Node(None, f"{n.output_name(i)}_head_grad") for n, i in graph.outputs]


def join_gradient(graph, shapes, types, head_grads, grads, meta):
    """The graph of forward outputs and gradient entries, with shapes and dtypes per entry."""
    full = Graph(list(graph.outputs) + [e for e in grads if e is not None])
    fshapes, ftypes = [None] * full.num_entries, [None] * full.num_entries
    hg_meta = {hg: graph.output_entries()[k] for k, hg in enumerate(head_grads)}
    for n in full.nodes:
        for i in range(n.num_outputs):
            e = full.entry(n, i)
            if n in graph.index:
                src = graph.entry(n, i)
                fshapes[e], ftypes[e] = shapes[src], types[src]
            elif n in hg_meta:
                fshapes[e], ftypes[e] = shapes[hg_meta[n]], types[hg_meta[n]]
            else:
                fshapes[e], ftypes[e] = meta[(n, i)]
    return full, fshapes, ftypes


def dead_code_elimination(graph, keep_outputs) -> Graph:
    """The graph restricted to the outputs at positions ``keep_outputs`` (what nothing kept
    reads is gone)."""
    return Graph([graph.outputs[k] for k in keep_outputs])


def place_devices(graph, default_device, group2dev: dict) -> dict:
    """Model-parallel placement (MXNet's PlaceDevice): a node whose ``__ctx_group__`` is in
    ``group2dev`` runs there; an unplaced op node takes its first placed input's device, an
    unplaced variable its first consumer's. Returns ``{node: device}`` for the nodes placed
    somewhere other than ``default_device`` (empty without groups)."""
    if not group2dev:
        return {}
    dev = {}
    for n in graph.nodes:
        g = n.attrs.get("__ctx_group__")
        if g is not None and g in group2dev:
            dev[n] = group2dev[g]
    for n in graph.nodes:
        if n not in dev and n.op is not None:
            for s, _ in n.inputs:
                if s in dev:
                    dev[n] = dev[s]
                    break
    for n in graph.nodes:
        for s, _ in n.inputs:
            if s.op is None and s not in dev and n in dev:
                dev[s] = dev[n]
    return {n: d for n, d in dev.items() if d != default_device}


def place_gradient(full, graph, fwd_devices, grad_producers) -> dict:
    """Backward nodes run where the forward node they differentiate runs."""
    dev = dict(fwd_devices)
    if not fwd_devices:
        return dev
    for n in full.nodes:
        if n in graph.index:
            continue
        src = grad_producers.get(n)
        if src is not None and src in fwd_devices:
            dev[n] = fwd_devices[src]
        else:
            for s, _ in n.inputs:
                if s in dev and s not in graph.index:
                    dev[n] = dev[s]
                    break
    return dev


def _complete_creation_shapes(steps, shapes):
    """Ops without inputs whose ``shape`` parameter has unknown (0) dims (``mx.sym.zeros((0,
    H))``, a begin state sized by the batch) create what shape inference decided, as MXNet's
    kernels fill the output they are given."""
    for st in steps:
        p = st.params
        if st.ins or "shape" not in st.node.op.param_map or not p.shape or 0 not in tuple(p.shape):
            continue
        st.params = Params(p, shape=tuple(shapes[st.outs[0]]))


# --- the pipeline --------------------------------------------------------------------------
def compile_program(outputs, arg_values, aux_values, grad_reqs, placement=None,
                    check=False, arg_stypes=None) -> Program:
    """Compile ``outputs`` (entries) for bound variables.

    ``arg_values``/``aux_values``: per argument / aux-state variable (in ``Graph`` order),
    ``(shape, dtype)``; ``grad_reqs``: per argument ('write', 'add' or 'null'); ``placement``:
    ``{forward node: torch.device}`` for nodes run off the caller's device (from
    :func:`place_devices`); ``check``: run :func:`~neomx.ir.verify` after each pass;
    ``arg_stypes``: per argument, its storage type (given by executors: the storage pass of
    ``neomx/graph/storage.py`` then runs, and slots may hold sparse values).
    """
    graph = Graph(outputs)
    if check:
        verify(graph)
    known_s, known_t = {}, {}
    for n, (s, t) in zip(graph.arg_nodes + graph.aux_nodes, list(arg_values) + list(aux_values)):
        known_s[n], known_t[n] = s, t
    shapes, types = infer_all(graph, known_s, known_t)

    wrt = [n for n, r in zip(graph.arg_nodes, grad_reqs) if r != "null"]
    head_grads = add_head_gradients(graph) if wrt else []
    grads, meta, producers = [None] * len(wrt), {}, {}
    fwd_stypes = None
    if arg_stypes is not None:
        fwd_stypes, _ = _storage.infer_storage(
            graph, dict(zip(graph.arg_nodes, arg_stypes)), shapes)
        if all(st == "default" for st in fwd_stypes):
            fwd_stypes = None
    if wrt:
        grads, meta, producers = build_gradient(graph, shapes, types, wrt, head_grads,
                                                stypes=fwd_stypes)
    full, fshapes, ftypes = join_gradient(graph, shapes, types, head_grads, grads, meta)
    if check:
        verify(full)

    # slots: the entry ids of the joined graph
    slot = full.entry
    devices = place_gradient(full, graph, placement or {}, producers)

    fwd_steps = make_steps(graph.nodes, slot, devices)
    _complete_creation_shapes(fwd_steps, fshapes)
    bwd_nodes = [n for n in full.nodes if n not in graph.index]
    bwd_steps = make_steps(bwd_nodes, slot, devices)
    stypes, fallbacks = None, []
    if arg_stypes is not None:
        var_st = dict(zip(graph.arg_nodes, arg_stypes))
        if fwd_stypes is not None:  # a head gradient has its output's storage type (MXNet's)
            for hg, e in zip(head_grads, graph.output_entries()):
                var_st[hg] = fwd_stypes[e]
        stypes, modes = _storage.infer_storage(full, var_st, fshapes)
        if modes or any(st != "default" for st in stypes):
            _storage.wrap_steps(fwd_steps, modes)
            _storage.wrap_steps(bwd_steps, modes)
            fallbacks = _storage.fallbacks(graph, full, stypes, modes)
        else:
            stypes = None

    var_slots = [slot(n) for n in graph.arg_nodes + graph.aux_nodes]
    out_slots = [slot(n, i) for n, i in graph.outputs]
    hg_in_full = [hg in full.index for hg in head_grads]
    hg_slots = []
    for hg, used in zip(head_grads, hg_in_full):
        hg_slots.append(slot(hg) if used else None)
    grad_of = dict(zip(wrt, grads))
    grad_slots = []
    for n, r in zip(graph.arg_nodes, grad_reqs):
        e = grad_of.get(n)
        grad_slots.append(None if (e is None or r == "null") else slot(*e))

    # memory plan: which values each plan must keep
    replayable = all(n.op is None or (n.op.is_deterministic(n.params) and not n.op.mutates_aux)
                     for n in graph.nodes)
    kept_grads = {s for s in grad_slots if s is not None}
    bwd_reads = {s for st in bwd_steps for s in st.ins} | kept_grads
    fwd = Plan(fwd_steps, keep=set(var_slots) | set(out_slots) | bwd_reads)
    fwd_slots = {slot(n, i) for n in graph.nodes for i in range(n.num_outputs)}
    # Backward releases forward values after their last use (the memory of the activations
    # goes back as the backward pass walks down the graph); a second backward after one forward
    # then replays the forward first, which gives the same values when no op draws random
    # numbers or updates auxiliary states. Graphs with such ops (Dropout, BatchNorm) keep their
    # forward values instead.
    bwd = Plan(bwd_steps, keep=kept_grads if replayable else fwd_slots | kept_grads)
    return Program(graph, full, fshapes, ftypes, var_slots, out_slots, hg_slots, hg_in_full,
                   grad_slots, fwd, bwd, replayable, sorted(set(devices.values()), key=str),
                   stypes=stypes, fallbacks=fallbacks)
