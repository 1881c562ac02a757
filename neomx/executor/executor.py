"""Executor: a Symbol bound to arrays on a context, running forward and backward plans."""
from __future__ import annotations

import numpy as np
import torch

from .. import engine
from ..base import MXNetError
from ..graph.pipeline import compile_program, place_devices
from ..ndarray.ndarray import NDArray, from_torch
from ..ndarray.tape import store_dense_grad
from ..ops.registry import OpContext
from . import sparse_io as _sparse_io

class Executor:
    """A bound graph (made by ``Symbol.simple_bind`` / ``Symbol.bind``).

    ``forward(is_train)`` runs the forward plan on ``arg_arrays``/``aux_arrays`` and fills
    ``outputs``; ``backward(out_grads)`` runs the backward plan built by neomx's gradient pass and
    writes (``grad_req='write'``) or adds (``'add'``) into ``grad_arrays``. The plans come from
    :func:`neomx.graph.pipeline.compile_program` (``debug_str()`` prints them).
    """

    def __init__(self, symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays,
                 grads_given=True, group2ctx=None):
        self._symbol = symbol
        self._ctx = ctx
        self.arg_arrays = list(arg_arrays)
        self.aux_arrays = list(aux_arrays)
        self._grad_list = list(grad_arrays)
        self._grads_given = grads_given
        self._grad_reqs = list(grad_reqs)
        self._group2ctx = dict(group2ctx or {})
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._out_names = symbol.list_outputs()
        self._monitor = None
        self._monitor_all = False
        self._build()
        self.outputs = [_sparse_io.empty_array(st, s, t, c) if st != "default" else
                        from_torch(torch.empty(s, dtype=_torch_dtype(t), device=c.torch_device), c)
                        for s, t, c, st in zip(self._out_shapes, self._out_types, self._out_ctx,
                                               self._program.out_stypes)]

    # --- construction ---------------------------------------------------------------------
    def _build(self):
        dev = self._ctx.torch_device
        placed = (place_devices(self._symbol._graph(), self._ctx, self._group2ctx)
                  if self._group2ctx else {})  # model parallelism: node -> Context
        self._out_ctx = [placed.get(n, self._ctx) for n, _ in self._symbol._outputs]
        prog = compile_program(self._symbol._outputs,
                               [(a.shape, a.dtype) for a in self.arg_arrays],
                               [(a.shape, a.dtype) for a in self.aux_arrays],
                               self._grad_reqs,
                               placement={n: c.torch_device for n, c in placed.items()
                                          if c.torch_device != dev},
                               arg_stypes=[a.stype for a in self.arg_arrays])
        self._program = prog
        _sparse_io.warn_fallbacks(prog.fallbacks, self._ctx)
        self._out_shapes, self._out_types = prog.out_shapes, prog.out_types
        self._var_slots, self._out_slots = prog.var_slots, prog.out_slots
        self._hg_slots, self._head_grad_used = prog.hg_slots, prog.head_grad_used
        self._grad_slots, self._replayable = prog.grad_slots, prog.replayable
        self._fwd, self._bwd = prog.fwd, prog.bwd
        self._contexts = {d: None for d in prog.devices}
        self._vals = [None] * prog.num_slots
        self._sparse = prog.stypes is not None or any(
            a.stype != "default" for a in self.arg_arrays + self._grad_list if a is not None)
        self._forward_state = None  # None: no forward yet; "live"; "released" by a backward
        self._last_train = True

    def _op_contexts(self, is_train):
        dev = self._ctx.torch_device
        others = {d: OpContext(is_train=is_train, device=d) for d in self._contexts}
        return OpContext(is_train=is_train, device=dev), others

    # --- dictionaries ---------------------------------------------------------------------
    @property
    def grad_arrays(self):
        return self._grad_list if self._grads_given else None

    @property
    def arg_dict(self) -> dict:
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self) -> dict:
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self) -> dict:
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self) -> dict:
        return dict(zip(self._out_names, self.outputs))

    # --- running --------------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs):
        """Run the forward plan; ``kwargs`` (NDArray or numpy) are copied into arguments first."""
        if kwargs:
            arg_dict = self.arg_dict
            for name, value in kwargs.items():
                if name not in arg_dict:
                    raise TypeError(f"Unknown argument {name}")
                dst = arg_dict[name]
                shape = tuple(value.shape)
                if shape != dst.shape:
                    raise ValueError(f"Shape not match! Argument {name}, need: {dst.shape}, "
                                     f"received: {shape}")
                dst[:] = value
        engine.push(lambda: self._run_forward(bool(is_train)), reads=self.arg_arrays,
                    writes=self.outputs + self.aux_arrays, ctx=self._ctx,
                    asynchronous=self._monitor is None)  # monitor callbacks run during forward
        return self.outputs

    def _run_forward(self, is_train):
        vals = self._vals
        # Drop the previous iteration's values first, so they are not alive beside the new ones.
        for s in range(len(vals)):
            vals[s] = None
        self._load_vars(vals)
        oc, others = self._op_contexts(is_train)
        self._forward_state = None
        self._fwd.run(vals, oc, self._monitor_step if self._monitor else None, others)
        self._forward_state, self._last_train = "live", is_train
        if self._sparse:
            for out, s in zip(self.outputs, self._out_slots):
                _sparse_io.store(out, vals[s])
            return
        for out, s in zip(self.outputs, self._out_slots):
            out._data.copy_(vals[s])  # outputs keep their storage: references stay valid

    def _load_vars(self, vals):
        if self._sparse:
            for s, a in zip(self._var_slots, self.arg_arrays + self.aux_arrays):
                vals[s] = _sparse_io.value(a)
            return
        for s, a in zip(self._var_slots, self.arg_arrays + self.aux_arrays):
            vals[s] = a._data

    def backward(self, out_grads=None, is_train: bool = True):
        """Run the backward plan and write or add gradients into ``grad_arrays``.

        ``out_grads``: head gradients (NDArray, list, or {output name: NDArray}); loss heads such
        as SoftmaxOutput ignore them, other heads need them.
        """
        if not any(s is not None for s in self._grad_slots):
            return
        heads = self._normalise_out_grads(out_grads)
        engine.push(lambda: self._run_backward(heads, is_train),
                    reads=self.arg_arrays + self.outputs + [g for g in heads if g is not None],
                    writes=[g for g in self._grad_list if g is not None] + self.aux_arrays,
                    ctx=self._ctx, asynchronous=True)

    def _normalise_out_grads(self, out_grads):
        n = len(self._out_names)
        if out_grads is None:
            grads = [None] * n
        elif isinstance(out_grads, NDArray):
            grads = [out_grads]
        elif isinstance(out_grads, dict):
            grads = [out_grads.get(name) for name in self._out_names]
        else:
            grads = list(out_grads) or [None] * n  # ([]: none given, as MXNet takes it)
        if len(grads) != n:
            raise MXNetError(f"backward: expected {n} head gradients, got {len(grads)}")
        for i, (g, used) in enumerate(zip(grads, self._head_grad_used)):
            if used and g is None:
                raise MXNetError(
                    "Because the last operator is not Loss function, head_gradient is required "
                    f"when calling backward (output {self._out_names[i]}). If you are attempting to "
                    "minimize the output as an objective, please modify your network and pass it "
                    "through the make_loss symbol.")
            if g is not None and tuple(g.shape) != tuple(self._out_shapes[i]):
                raise MXNetError(f"backward: head gradient for {self._out_names[i]} has shape "
                                 f"{tuple(g.shape)}, expected {tuple(self._out_shapes[i])}")
        return grads

    def _run_backward(self, heads, is_train):
        vals = self._vals
        if self._forward_state is None:
            raise MXNetError("backward called before forward")
        if self._forward_state == "released":
            self._replay_forward()
        dev = self._ctx.torch_device
        for s, g in zip(self._hg_slots, heads):
            if g is not None and s is not None:
                if self._sparse:
                    vals[s] = _sparse_io.head_grad(g, self._program.stype(s), dev)
                    continue
                t = g._data
                vals[s] = t if t.device == dev else t.to(dev)
        self._load_vars(vals)
        oc, others = self._op_contexts(is_train)
        if self._replayable:  # from here on forward values go (also if backward fails midway)
            self._forward_state = "released"
        self._bwd.run(vals, oc, None, others)
        for k, (g, s, req) in enumerate(zip(self._grad_list, self._grad_slots, self._grad_reqs)):
            if s is None or g is None:
                continue
            v = vals[s]
            if self._sparse and (g.stype != "default" or not isinstance(v, torch.Tensor)):
                _sparse_io.store_grad(g, v, req, self._program.grad_producer(k))
                continue
            store_dense_grad(g._data, v, req)
        if self._replayable:  # (one slot may be the gradient of several arguments)
            for s in self._grad_slots:
                if s is not None:
                    vals[s] = None
        for s in self._hg_slots:
            if s is not None:
                vals[s] = None

    def _replay_forward(self):
        """Recompute the forward values a backward released (deterministic graphs only)."""
        vals = self._vals
        self._load_vars(vals)
        oc, others = self._op_contexts(self._last_train)
        self._fwd.run(vals, oc, None, others)
        self._forward_state = "live"

    # --- other API ------------------------------------------------------------------------
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name_bytes, NDArray)`` for every op output during forward."""
        self._monitor = callback
        self._monitor_all = monitor_all

    def _monitor_step(self, step, vals):
        node = step.node
        if self._monitor_all:  # MXNet's names: a variable's own, then <node>_<input name>
            names = node.op.list_inputs(node.params) + node.op.list_aux(node.params)
            for k, s in enumerate(step.ins):
                src, i = node.inputs[k]
                arr = _sparse_io.array(vals[s], self._ctx)
                if src.op is None:
                    self._monitor(src.name.encode(), arr)
                self._monitor(f"{node.name}_{names[k]}".encode(), arr)
        for i in range(node.num_visible_outputs):
            self._monitor(node.output_name(i).encode(), _sparse_io.array(vals[step.outs[i]], self._ctx))

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy (casting) parameters from dicts of NDArrays into the bound arrays."""
        arg_dict, aux_dict = self.arg_dict, self.aux_dict
        for name, array in arg_params.items():
            if name in arg_dict:
                dst = arg_dict[name]
                if (isinstance(array, NDArray) and array.stype != "default") or dst.stype != "default":
                    _sparse_io.assign(dst, array)  # (storage types converted)
                    continue
                dst[:] = array.astype(dst.dtype) if isinstance(array, NDArray) else array
            elif not allow_extra_params:
                raise ValueError(f'Find name "{name}" that is not in the arguments')
        for name, array in (aux_params or {}).items():
            if name in aux_dict:
                dst = aux_dict[name]
                dst[:] = array.astype(dst.dtype) if isinstance(array, NDArray) else array
            elif not allow_extra_params:
                raise ValueError(f'Find name "{name}" that is not in the auxiliary states')

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing unchanged arrays (parameters)."""
        from .bind import reshape_executor
        return reshape_executor(self, partial_shaping, allow_up_sizing, kwargs)

    def _allocate_sparse_grads(self):
        """Gradient arrays of the storage types the storage pass decided (``simple_bind``:
        MXNet allocates a row_sparse array where the gradient comes out row_sparse)."""
        for k, (st, g) in enumerate(zip(self._program.grad_stypes, self._grad_list)):
            if g is not None and st is not None and st != g.stype:
                self._grad_list[k] = _sparse_io.empty_array(st, g.shape, g.dtype, g.context)
                self._sparse = True

    def debug_str(self) -> str:
        return self._program.debug_str()

    @property
    def symbol(self):
        return self._symbol


def _torch_dtype(t):
    from ..base import dtype_torch
    return dtype_torch(t if t is not None else np.float32)
