"""CachedOp: a Symbol run imperatively on NDArrays through compiled programs (MXNet's CachedOp,
what a hybridized Gluon block calls).

Each distinct call signature (device, input shapes and dtypes, which inputs need a gradient)
is compiled once with :func:`neomx.graph.pipeline.compile_program` and reused. While autograd
records, the call is recorded on the tape as one node: the forward program keeps what the
backward program reads, and the node's gradient rule runs that backward program (the graph's
own gradient pass), so a hybridized block differentiates exactly as its graph does in an
executor.
"""
from __future__ import annotations

from .. import engine
from ..base import MXNetError
from ..graph.pipeline import compile_program
from ..ndarray import tape as _tape
from ..ndarray.ndarray import NDArray, check_same_device, from_torch
from ..ops.registry import OpContext, OpDef, Params

__all__ = ["CachedOp"]

_FLAG_NAMES = ("static_alloc", "static_shape", "inline_limit", "forward_bulk_size",
               "backward_bulk_size", "data_indices", "param_indices")


class _CallState(Params):
    """What one recorded call keeps for its backward: the program, the forward values, the
    context and the training flag."""

    __slots__ = ("program", "vals", "ctx", "is_train")

    def __init__(self):
        # (not Params.__init__: its ``__dict__ = self`` is a reference cycle, which would keep
        # the forward values alive after the backward until the cyclic GC runs, so every call
        # would take fresh memory, paid for in page faults)
        dict.__init__(self)


class CachedOp:
    """``CachedOp(sym, flags=())``; calling it with one NDArray per ``sym.list_inputs()`` entry
    (in that order) returns the outputs (an NDArray, or a list for several).

    ``flags`` are MXNet's (``static_alloc``, ``static_shape``, ``data_indices``...); neomx
    compiles one program per input signature whatever they say; ``static_alloc`` also keeps the
    latest call's values referenced until the next call (memory reuse, see ``__init__``).
    """

    def __init__(self, sym, flags=()):
        flags = dict(flags)
        unknown = [k for k in flags if k not in _FLAG_NAMES]
        if unknown:
            raise MXNetError(f"CachedOp: unknown flag(s) {unknown}; valid flags are "
                             f"{list(_FLAG_NAMES)}")
        self._sym = sym
        self._flags = flags
        graph = sym._graph()
        inputs = graph.input_nodes
        pos = {n: i for i, n in enumerate(inputs)}
        self._input_names = [n.name for n in inputs]
        self._arg_pos = [pos[n] for n in graph.arg_nodes]
        self._aux_pos = [pos[n] for n in graph.aux_nodes]
        self._var_pos = self._arg_pos + self._aux_pos
        self._nout = len(sym._outputs)
        self._programs: dict = {}
        self._monitor = None
        self._monitor_all = False
        # static_alloc: the latest call's values stay referenced until the next call, like the
        # buffers MXNet's static_alloc keeps. The C allocator then reuses memory instead of
        # returning it to the system and page-faulting it in again every call (lstm-lm, gluon
        # LeNet: fewer page faults and less CPU time than with the values freed at once).
        self._static_alloc = str(flags.get("static_alloc", False)).lower() in ("1", "true")
        self._held = None
        self._op = OpDef("_CachedOp", _no_forward, _no_infer,
                         inputs=tuple(self._input_names),
                         outputs=tuple(sym.list_outputs()), gradient=self._gradient)

    @property
    def symbol(self):
        return self._sym

    def _register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_name, op_name, NDArray)`` for every op output (and input with
        ``monitor_all``) while running."""
        self._monitor = callback
        self._monitor_all = monitor_all

    # --- running ---------------------------------------------------------------------------
    def _program(self, dev, args, reqs):
        key = (dev, tuple((a.shape, a.dtype) for a in args), reqs)
        prog = self._programs.get(key)
        if prog is None:
            try:
                prog = compile_program(self._sym._outputs,
                                       [(args[i].shape, args[i].dtype) for i in self._arg_pos],
                                       [(args[i].shape, args[i].dtype) for i in self._aux_pos],
                                       reqs)
            except MXNetError as e:
                raise MXNetError(f"CachedOp: cannot compile the graph for inputs "
                                 f"{self._describe(args)}: {e}") from None
            if len(self._programs) >= 64:  # (many shapes: keep the cache bounded)
                self._programs.clear()
            self._programs[key] = prog
        return prog

    def _describe(self, args):
        return ", ".join(f"{n}{tuple(a.shape)}" for n, a in zip(self._input_names, args))

    def __call__(self, *args, out=None):
        n = len(self._input_names)
        if len(args) != n:
            raise MXNetError(f"CachedOp: expected {n} inputs ({self._input_names}), got "
                             f"{len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"CachedOp: input {i} ({self._input_names[i]}) must be an "
                                 f"NDArray, got {type(a).__name__}")
        ctx = check_same_device(args, "CachedOp")
        dev = ctx.torch_device
        recording = _tape.recording()
        if recording:
            reqs = tuple("write" if args[i]._ag is not None else "null" for i in self._arg_pos)
        else:
            reqs = ("null",) * len(self._arg_pos)
        prog = self._program(dev, args, reqs)
        is_train = _tape.FLAGS.training
        vals = [None] * prog.num_slots
        for s, i in zip(prog.var_slots, self._var_pos):
            t = args[i]._data
            vals[s] = t if t.device == dev else t.to(dev)
        oc = OpContext(is_train=is_train, device=dev)
        monitor = None
        if self._monitor is not None:
            def monitor(step, values):
                self._monitor_step(step, values, ctx)
        aux = [args[i] for i in self._aux_pos]
        engine.push(lambda: prog.fwd.run(vals, oc, monitor), reads=list(args), writes=aux,
                    ctx=ctx)
        outs = self._own_outputs([vals[s] for s in prog.out_slots], [a._data for a in args])
        outputs = [from_torch(t, ctx) for t in outs]
        if recording and "write" in reqs:
            state = _CallState()
            state.program, state.vals, state.ctx, state.is_train = prog, vals, ctx, is_train
            _tape.record_op(self._op, state, list(args), outs, outputs, ctx, is_train)
        if self._static_alloc:
            self._held = vals
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            for src, dst in zip(outputs, targets):
                dst[:] = src
            return out
        return outputs[0] if self._nout == 1 else outputs

    @staticmethod
    def _own_outputs(outs, inputs):
        """Outputs that are inputs (or views of them), or repeat an earlier output, are copied:
        each result is a new array."""
        seen = set()
        roots = {id(t._base if t._base is not None else t) for t in inputs}
        res = []
        for t in outs:
            root = id(t._base if t._base is not None else t)
            if root in roots or id(t) in seen:
                t = t.clone()
            seen.add(id(t))
            res.append(t)
        return res

    def _monitor_step(self, step, vals, ctx):
        node = step.node
        if self._monitor_all:
            for k, s in enumerate(step.ins):
                src, i = node.inputs[k]
                self._monitor(src.output_name(i), node.op.name, from_torch(vals[s], ctx))
        for i in range(node.num_visible_outputs):
            self._monitor(node.output_name(i), node.op.name, from_torch(vals[step.outs[i]], ctx))

    # --- the gradient rule of the recorded node --------------------------------------------
    def _gradient(self, F, p, ins, outs, ograds):
        if _tape.recording():
            raise MXNetError("Higher-order gradients through a hybridized block are not supported "
                             "by neomx: call hybridize(False) on the block to differentiate it "
                             "again")
        prog, ctx = p.program, p.ctx
        dev = ctx.torch_device
        vals = list(p.vals)  # (backward frees values; a retained graph may run it again)
        for s, g in zip(prog.hg_slots, ograds):
            if s is not None:
                t = g._data
                vals[s] = t if t.device == dev else t.to(dev)
        prog.bwd.run(vals, OpContext(is_train=p.is_train, device=dev))
        grads = [None] * len(ins)
        for k, s in enumerate(prog.grad_slots):
            if s is not None:
                grads[self._arg_pos[k]] = from_torch(vals[s], ctx)
        return grads


def _no_forward(p, ins, oc):
    raise MXNetError("a CachedOp node of the autograd tape cannot be re-run")


def _no_infer(p, ins, outs):
    return ins, outs

