"""Compiled backward of a recorded tape: a training loop records the same graph every
iteration, and running its gradient rules eagerly (an NDArray dispatch per gradient operator,
the tape's bookkeeping per node) costs several times what the kernels do for small networks.

The second time ``backward()`` meets a tape of the same structure (operators, their parsed
parameters, how the nodes connect, the shapes and dtypes of the variables and constants, the
gradient requests), the tape is turned into a graph of neomx's IR once, compiled with the
executor's own pipeline (:func:`neomx.graph.pipeline.compile_program`: the graph's gradient
pass over the *same* gradient rules, memory plan, in-place steps), and from then on its backward
plan runs over the values the tape recorded, as an executor's backward does. What the eager
tape does with the rules, the plan does with the same rules, so the gradients are the same
(tests/autograd/test_compiled_backward.py compares them). The tape (``neomx.ndarray``, a layer
below this one) calls it through its ``COMPILED_BACKWARD`` hook, set when this module loads.

Only plain tapes take this path: one context, registered operators with dense values (BatchNorm's
moving statistics included: the forward updated them, the backward plan never reads them),
backward into the marked variables (not ``autograd.grad``, not
``create_graph``); the rest, and a structure seen only once, run eagerly
(:func:`neomx.ndarray.tape._propagate`). ``ENABLED`` switches it off.

On the autograd-mlp workload (an imperative 2-layer MLP at batch 64, 2 threads) the backward
takes ~45 instead of ~100 microseconds a step.
"""
from __future__ import annotations

import torch

from .. import engine
from ..base import dtype_np
from ..graph.pipeline import compile_program
from ..ir import Graph, Node
from ..ndarray import ndarray as _nd
from ..ndarray import tape as _tape
from ..ops import registry as _reg
from ..ops.registry import OpContext

__all__ = ["ENABLED", "STATS", "try_backward"]

ENABLED = {"enabled": True}
STATS = {"runs": 0}  # backward passes run through a compiled plan (tests read it)
_MAX_PROGRAMS = 32
_programs: dict = {}  # signature -> _Compiled (None: failed to compile, eager from then on)
_seen: dict = {}      # signatures met once (compiled the second time)
_OP_OK: dict = {}     # id(registered op) -> whether its nodes may be compiled
_STRIDED = torch.strided
_OpNode, _Leaf = _tape.OpNode, _tape.Leaf


class _Compiled:
    __slots__ = ("prog", "var_src", "out_fill", "hg", "grad_of", "keep")

    def __init__(self, prog, var_src, out_fill, hg, grad_of, keep):
        self.prog = prog
        self.var_src = var_src    # per var slot: ("leaf", j) or ("const", k, input index)
        self.out_fill = out_fill  # [(slot, node position, output index)]
        self.hg = hg              # per head: its head-gradient slot or None
        self.grad_of = grad_of    # [(leaf index, gradient slot)]
        self.keep = keep          # the Params objects of the signature (their ids stay theirs)


def _signature(order, leaves, entries):
    """(signature, leaf tensors) of a tape, or None when it cannot take the compiled path."""
    pos = {}
    leaf_pos = {leaf: j for j, leaf in enumerate(leaves)}
    leaf_t = [None] * len(leaves)
    sig = []
    ctx = None
    for k, node in enumerate(order):
        op = node.op
        if node.__class__ is not _OpNode:
            return None
        ok = _OP_OK.get(id(op))
        if ok is None:
            ok = _OP_OK[id(op)] = op.gradient is not None and _reg.find(op.name) is op
        if not ok:
            return None
        if ctx is None:
            ctx = node.ctx
        elif node.ctx is not ctx and node.ctx != ctx:
            return None
        pos[node] = k
        refs = []
        for e, t in zip(node.in_entries, node.ins):
            if t.layout is not _STRIDED:  # (sparse values: their own gradient kernels)
                return None
            if e is None:
                refs.append((t.shape, t.dtype))
                continue
            src, i = e
            if src.__class__ is _Leaf:
                j = leaf_pos[src]
                have = leaf_t[j]
                if have is None:
                    leaf_t[j] = t
                elif have is not t:  # (the variable's array changed between two uses)
                    return None
                refs.append(j)
            else:
                refs.append((pos[src], i))
        sig.append((id(op), id(node.p), tuple(refs), len(node.outs), node.nvis))
    heads = []
    for src, i in entries:
        k = pos.get(src)
        if k is None:  # (a head that is a variable)
            return None
        heads.append((k, i))
    lsig = []
    for leaf, t in zip(leaves, leaf_t):
        req = leaf.grad_req
        if req != "null":
            g = leaf.grad
            if (g.__class__ is not _nd.NDArray or g._data.layout is not torch.strided
                    or g._data.device != t.device):
                return None
        lsig += (t.shape, t.dtype, req)
    return (tuple(sig), tuple(lsig), tuple(heads), ctx), leaf_t


def _compile(order, leaves, leaf_t, heads):
    leaf_nodes = [Node(None, f"_tape_var{j}") for j in range(len(leaves))]
    var_src = {n: ("leaf", j) for j, n in enumerate(leaf_nodes)}
    gnodes = []
    pos = {}
    for k, node in enumerate(order):
        pos[node] = k
        inputs = []
        for idx, e in enumerate(node.in_entries):
            if e is None:
                c = Node(None, f"_tape_const{k}_{idx}")
                var_src[c] = ("const", k, idx)
                inputs.append((c, 0))
            elif e[0] in pos:
                inputs.append((gnodes[pos[e[0]]], e[1]))
            else:
                inputs.append((leaf_nodes[leaves.index(e[0])], 0))
        gnodes.append(Node(node.op, f"_tape{k}", params=node.p, inputs=tuple(inputs)))
    outputs = [(gnodes[k], i) for k, i in heads]
    graph = Graph(outputs)

    def value(n):
        src = var_src[n]
        t = leaf_t[src[1]] if src[0] == "leaf" else order[src[1]].ins[src[2]]
        return tuple(t.shape), dtype_np(t.dtype)
    reqs = [leaves[var_src[n][1]].grad_req if var_src[n][0] == "leaf" else "null"
            for n in graph.arg_nodes]
    # auxiliary states (BatchNorm's moving statistics) are values the backward never reads:
    # the forward already updated them, and the plan's forward is never run
    prog = compile_program(outputs, [value(n) for n in graph.arg_nodes],
                           [value(n) for n in graph.aux_nodes], reqs)
    full = prog.full
    out_fill = []
    for k, gn in enumerate(gnodes):
        if gn in full.index:
            for i in range(len(order[k].outs)):
                out_fill.append((full.entry(gn, i), k, i))
    var_list = [var_src[n] for n in graph.arg_nodes + graph.aux_nodes]
    grad_of = []
    for s, src in zip(prog.grad_slots, var_list):  # (arguments only: aux states get none)
        if s is not None and src[0] == "leaf":
            grad_of.append((src[1], s))
    return _Compiled(prog, list(zip(prog.var_slots, var_list)), out_fill, list(prog.hg_slots),
                     grad_of, [node.p for node in order])


def try_backward(order, leaves, entries, grads_in, train_mode):
    """Run the backward of a tape through its compiled plan; returns {(leaf, 0): gradient
    tensor} for the leaves that got one, or None when the tape takes the eager path."""
    if not order or not engine.idle():  # (work in flight: the eager rules order themselves)
        return None
    if not ENABLED["enabled"]:
        return None
    got = _signature(order, leaves, entries)
    if got is None:
        return None
    sig, leaf_t = got
    comp = _programs.get(sig, False)
    if comp is False:
        if sig not in _seen:  # first meeting: eager (one-off tapes never pay for compiling)
            if len(_seen) >= 4 * _MAX_PROGRAMS:
                _seen.clear()
            _seen[sig] = True
            return None
        try:
            comp = _compile(order, leaves, leaf_t, sig[2])
        except Exception:  # (an operator the pipeline cannot take: the eager rules run it)
            comp = None
        if len(_programs) >= _MAX_PROGRAMS:
            _programs.clear()
        _programs[sig] = comp
    if comp is None:
        return None
    prog = comp.prog
    vals = [None] * prog.num_slots
    for s, src in comp.var_src:
        vals[s] = leaf_t[src[1]] if src[0] == "leaf" else order[src[1]].ins[src[2]]
    for s, k, i in comp.out_fill:
        vals[s] = order[k].outs[i]
    for s, g, (src, i) in zip(comp.hg, grads_in, entries):
        if s is not None:
            vals[s] = g._data if g is not None else torch.ones_like(src.outs[i])
    prog.bwd.run(vals, OpContext(is_train=bool(train_mode), device=order[0].ctx.torch_device))
    STATS["runs"] += 1
    return {(leaves[j], 0): vals[s] for j, s in comp.grad_of}


_tape.COMPILED_BACKWARD = try_backward
