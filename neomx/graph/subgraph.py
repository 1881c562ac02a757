"""Running a Symbol held by an operator (a control-flow node's subgraph) on torch tensors, through
programs compiled per input signature with the executor's pipeline."""
from __future__ import annotations

from ..base import dtype_np
from ..ir import Graph
from ..ops import control_flow as _control_flow
from . import infer as _infer
from .pipeline import compile_program

__all__ = ["SubgraphRunner"]


class SubgraphRunner:
    """A Symbol run on torch tensors given in ``sym.list_inputs()`` order, through a program
    compiled per (device, shapes, dtypes, gradient wanted)."""

    def __init__(self, sym):
        self.sym = sym
        graph = Graph(list(sym._outputs))
        self.graph = graph
        self.inputs = graph.input_nodes
        pos = {n: i for i, n in enumerate(self.inputs)}
        self.arg_pos = [pos[n] for n in graph.arg_nodes]
        self.aux_pos = [pos[n] for n in graph.aux_nodes]
        self.num_outputs = len(sym._outputs)
        self._programs: dict = {}

    def program(self, xs, grad: bool):
        key = (tuple((tuple(x.shape), x.dtype, x.device) for x in xs), grad)
        prog = self._programs.get(key)
        if prog is None:
            sig = [(tuple(x.shape), dtype_np(str(x.dtype).replace("torch.", ""))) for x in xs]
            reqs = ["write" if grad else "null"] * len(self.arg_pos)
            prog = compile_program(list(self.sym._outputs), [sig[i] for i in self.arg_pos],
                                   [sig[i] for i in self.aux_pos], reqs)
            if len(self._programs) >= 32:
                self._programs.clear()
            self._programs[key] = prog
        return prog

    def forward(self, xs, oc, grad=False):
        """The outputs for inputs ``xs``; with ``grad``, also the slot table for
        :meth:`backward`."""
        prog = self.program(xs, grad)
        vals = [None] * prog.num_slots
        for s, i in zip(prog.var_slots, self.arg_pos + self.aux_pos):
            vals[s] = xs[i]
        prog.fwd.run(vals, oc)
        outs = [vals[s] for s in prog.out_slots]
        return (outs, (prog, vals)) if grad else outs

    def backward(self, state, ograds, oc):
        """Gradients (one per input, None where none flows) for head gradients ``ograds``."""
        prog, vals = state
        vals = list(vals)
        for s, g in zip(prog.hg_slots, ograds):
            if s is not None:
                vals[s] = g
        prog.bwd.run(vals, oc)
        grads = [None] * len(self.inputs)
        for k, s in enumerate(prog.grad_slots):
            if s is not None:
                grads[self.arg_pos[k]] = vals[s]
        return grads

    def infer(self, values, kind):
        """Shapes (or dtypes) of the inputs and outputs from partial knowledge of the inputs."""
        known = {n: v for n, v in zip(self.inputs, values) if v is not None}
        res = _infer.infer(self.graph, known, kind)
        ins = [res[self.graph.entry(n, 0)] for n in self.inputs]
        outs = [res[self.graph.entry(n, i)] for n, i in self.graph.outputs]
        return ins, outs

    def deterministic(self) -> bool:
        return all(n.op is None or (n.op.is_deterministic(n.params) and not n.op.mutates_aux)
                   for n in self.graph.nodes)


_control_flow.SUBGRAPH["runner"] = SubgraphRunner
