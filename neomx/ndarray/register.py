"""Builds ``mx.nd.<Op>`` functions from the operator table and runs them through the engine."""
from __future__ import annotations

import inspect

import numpy as np

from .. import engine
from ..base import MXNetError, shape_str
from ..context import Context, current_context
from ..ops import registry as _reg
from ..ops.registry import OpContext, ShapeError, TypeInferError
from .ndarray import NDArray, check_same_device, from_torch


def _check(op, p, arrays):
    """Run the op's type and shape rules on concrete inputs: MXNet's errors, before any kernel."""
    if not arrays:
        return
    try:
        _, _ = op.infer_type(p, [a.dtype for a in arrays], [None] * op.num_outputs(p))
    except TypeInferError as e:  # imperative ops have no node name: "in node  at"
        raise MXNetError(f"Error in operator {op.name}: " + str(e).replace("{node}", "")) from None
    shapes = [a.shape for a in arrays]
    try:
        new_ins, _ = op.infer_shape(p, list(shapes), [None] * op.num_outputs(p))
    except ShapeError as e:
        raise MXNetError(f"Error in operator {op.name}: " + str(e).replace("{node}", "") + " (input shapes: "
                         + ", ".join(shape_str(s) for s in shapes) + ")") from None
    for name, have, want in zip(op.list_inputs(p) + op.list_aux(p), shapes, new_ins):
        if want is not None and tuple(want) != tuple(have):
            raise MXNetError(f"Error in operator {op.name}: Shape inconsistent for input '{name}', "
                             f"Provided = {shape_str(have)}, inferred shape={shape_str(want)}")


def invoke(op, p, inputs, out=None, ctx=None, is_train=False):
    """Run ``op`` eagerly on NDArrays; returns an NDArray or a list (visible outputs)."""
    if inputs:
        ctx = check_same_device(inputs, op.name)
    else:
        ctx = ctx if isinstance(ctx, Context) else (Context(*_parse_ctx(ctx)) if ctx else current_context())
    _check(op, p, inputs)
    tensors = [a._data for a in inputs]
    dev = ctx.torch_device
    if inputs:
        tensors = [t if t.device == dev else t.to(dev) for t in tensors]
    oc = OpContext(is_train=is_train, device=dev)
    try:
        res = engine.push(lambda: op.forward(p, tensors, oc), reads=inputs,
                          writes=inputs[len(op.list_inputs(p)):] if op.mutates_aux else (), ctx=ctx)
    except MXNetError:
        raise
    except (RuntimeError, ValueError, IndexError) as e:
        raise MXNetError(f"Error in operator {op.name}: {str(e).splitlines()[0]} (input shapes: "
                         + ", ".join(shape_str(a.shape) for a in inputs) + ")") from None
    nvis = op.num_visible_outputs(p)
    results = [res] if op.num_outputs(p) == 1 else list(res)[:nvis]
    outs = [from_torch(r, ctx) for r in results]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for src, dst in zip(outs, targets):
            dst[:] = src
        return out
    return outs[0] if nvis == 1 else outs


def _parse_ctx(s):
    s = str(s)
    if "(" in s:
        t, i = s.rstrip(")").split("(")
        return t, int(i)
    return s, 0


def invoke_by_name(name, inputs, params, out=None):
    op = _reg.get(name)
    p, _ = op.parse_params(params)
    return invoke(op, p, inputs, out=out)


def make_function(op):
    """The ``mx.nd.<Op>`` function for ``op``, with a real signature and docstring."""
    from .. import autograd
    input_names = set() if callable(op.inputs) else set(op.inputs)

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        arrays = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
        params = {k: v for k, v in kwargs.items()
                  if not isinstance(v, NDArray) and not (v is None and k in input_names)}
        if op.key_var_num_args and op.key_var_num_args not in params:
            params[op.key_var_num_args] = len(args) + len(arrays)
        if ctx is not None and "ctx" in op.param_map:
            params["ctx"] = str(ctx)
        p, _ = op.parse_params(params, name or "")
        names = op.list_inputs(p) + op.list_aux(p)
        inputs = [None] * len(names)
        if len(args) > len(names):
            raise MXNetError(f"{op.name}: expected at most {len(names)} inputs {names}, got {len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"{op.name}: input '{names[i]}' must be an NDArray, got {type(a).__name__}")
            inputs[i] = a
        for k, v in arrays.items():
            if k not in names:
                raise MXNetError(f"{op.name}: unknown input '{k}', inputs are {names}")
            inputs[names.index(k)] = v
        missing = [n for n, a in zip(names, inputs) if a is None]
        if missing:
            raise MXNetError(f"{op.name}: missing input(s) {missing}; inputs are {names}")
        return invoke(op, p, inputs, out=out, ctx=ctx, is_train=autograd.is_training())

    fn.__name__ = op.name
    fn.__qualname__ = op.name
    fn.__doc__ = op.signature_doc() + "\n\nReturns\n-------\nNDArray or list of NDArrays\n    The output(s)."
    from ..symbol.register import _signature
    fn.__signature__ = _signature(op, symbolic=False)
    return fn


def populate(namespace: dict, internal: dict):
    cache = {}
    for name, op in _reg.all_ops().items():
        f = cache.get(id(op)) or make_function(op)
        cache[id(op)] = f
        internal[name] = f
        if op.public and not name.startswith("_"):
            namespace.setdefault(name, f)
