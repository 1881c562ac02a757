"""``Custom``: operators written in Python (``mx.operator.CustomOpProp`` / ``CustomOp``).

One :class:`CustomOpDef` serves every registered custom operator: its parameters are
``op_type`` plus the caller's extra keywords, kept as strings (MXNet hands them to the Prop's
constructor as strings). Names of inputs, outputs and auxiliary states, shape and type
inference come from the registered Prop; the forward creates the operator
(``prop.create_operator``) and calls its ``forward`` on NDArrays.

The operator instance of one forward call must see the matching backward (custom ops keep
state on ``self`` between the two, as in MXNet's stateful ops). It travels on the first output
tensor (attribute ``_custom_op``), which the gradient rule passes to ``_backward_Custom`` as
``out_data``: executors, the autograd tape and cached graphs keep it from forward to backward
with the other values the backward reads. (A hidden output would do the same but change the
graph's JSON, whose ``node_row_ptr`` counts outputs: MXNet's Custom node has only its own.)

The kernels wrap tensors as NDArrays and run user code that calls ``mx.nd``. This layer may not
import ``neomx.ndarray``: ``neomx.operator`` installs the two functions they need
(:func:`install_host`: wrap a tensor as an NDArray, switch autograd recording).
"""
from __future__ import annotations

import traceback

import numpy as np
import torch

from ..base import MXNetError, dtype_code, dtype_np, dtype_torch
from ..context import Context
from .registry import (OpDef, Param, Params, ShapeError, TypeInferError, _mx_str, merge_shape,
                       register)

__all__ = ["CustomOpDef", "register_prop", "get_prop_class", "registered_names", "install_host"]

_PROPS: dict = {}  # op_type -> CustomOpProp subclass
_HOST: dict = {}  # "wrap": (tensor, Context) -> NDArray; "set_recording": bool -> previous


def install_host(wrap, set_recording) -> None:
    """Called by ``neomx.operator``: how to hand tensors to user code as NDArrays."""
    _HOST["wrap"], _HOST["set_recording"] = wrap, set_recording


def _host(key):
    try:
        return _HOST[key]
    except KeyError:
        raise MXNetError("custom operators need neomx.operator (import neomx)") from None


def register_prop(reg_name: str, prop_cls) -> None:
    _PROPS[reg_name] = prop_cls


def get_prop_class(reg_name: str):
    try:
        return _PROPS[reg_name]
    except KeyError:
        raise MXNetError(f"Cannot find custom operator {reg_name}") from None


def registered_names() -> list:
    return list(_PROPS)


def _prop_of(p):
    """The Prop instance made from these parameters (created once per parsed Params)."""
    prop = p.get("__prop__")
    if prop is None:
        cls = get_prop_class(p["op_type"])
        kwargs = {k: v for k, v in p.items() if k not in ("op_type", "__prop__")}
        try:
            prop = cls(**kwargs)
        except Exception:
            raise MXNetError(f"Error in {p['op_type']}.__init__: {traceback.format_exc()}") from None
        dict.__setitem__(p, "__prop__", prop)
    return prop


def _call(p, what, fn, *args):
    """Call a Prop method; its exceptions become MXNetError (MXNet: 'Error in name.method')."""
    try:
        return fn(*args)
    except MXNetError:
        raise
    except Exception:
        raise MXNetError(f"Error in {p['op_type']}.{what}: {traceback.format_exc()}") from None


def _names(what):
    def names(p):
        prop = _prop_of(p)
        return [str(n) for n in _call(p, what, getattr(prop, what))]
    return names


_args, _outs, _auxs = _names("list_arguments"), _names("list_outputs"), _names("list_auxiliary_states")


def _split3(p, ret, n_in, n_out, n_aux, what):
    if len(ret) == 2:
        i, o = ret
        a = []
    elif len(ret) == 3:
        i, o, a = ret
    else:
        raise MXNetError(f"Error in {p['op_type']}.{what}: {what} must return 2 or 3 lists")
    for kind, lst, n in (("output", o, n_out), ("input", i, n_in), ("aux state", a, n_aux)):
        if len(lst) != n:
            raise MXNetError(f"Error in {p['op_type']}.{what}: expecting {n} entries in returned "
                             f"{kind} {what[6:]}s, got {len(lst)}.")
    return list(i), list(o), list(a)


def _infer_shape(p, ins, outs):
    """The Prop's infer_shape, called (as MXNet does) with ``[]`` for unknown input shapes once
    any input shape is known; an empty returned shape stays unknown."""
    n_in, n_out, n_aux = len(_args(p)), len(_outs(p)), len(_auxs(p))
    if all(s is None for s in ins[:n_in]):
        return ins, outs
    prop = _prop_of(p)
    ret = _call(p, "infer_shape", prop.infer_shape, [[] if s is None else list(s) for s in ins[:n_in]])
    i, o, a = _split3(p, ret, n_in, n_out, n_aux, "infer_shape")
    new_ins = [_shape(s) for s in i + a]
    for k, (have, want) in enumerate(zip(ins, new_ins)):
        if have is None:
            continue
        if want is None or merge_shape(have, want) is None:
            if want is None:
                new_ins[k] = tuple(have)
                continue
            raise ShapeError(f"Shape inconsistent, Provided = {list(have)}, inferred shape={list(want)}")
        new_ins[k] = merge_shape(have, want)
    return new_ins, [_shape(s) for s in o]


def _shape(s):
    s = tuple(int(d) for d in s)
    return s if s else None


def _infer_type(p, ins, outs):
    n_in, n_out, n_aux = len(_args(p)), len(_outs(p)), len(_auxs(p))
    prop = _prop_of(p)
    given = [None if t is None else np.dtype(t).type for t in ins[:n_in]]
    ret = _call(p, "infer_type", prop.infer_type, given)
    i, o, a = _split3(p, ret, n_in, n_out, n_aux, "infer_type")
    for k, (have, want) in enumerate(zip(ins, i + a)):
        if have is not None and want is not None and np.dtype(have) != np.dtype(want):
            raise TypeInferError(f"Incompatible attr in node {{node}} at {k}-th input: expected "
                                 f"{np.dtype(want).name}, got {np.dtype(have).name}")
    norm = [None if t is None else dtype_np(t) for t in i + a]
    return norm, [None if t is None else dtype_np(t) for t in o]


def _context_of(dev):
    if dev is not None and dev.type == "cuda":
        return Context("gpu", dev.index or 0)
    return Context("cpu", 0)


def _user_code(what, fn, **kwargs):
    """Run the user's forward/backward off the autograd tape (MXNet runs them on its own
    thread, where nothing records); exceptions become MXNet's error."""
    set_recording = _host("set_recording")
    prev = set_recording(False)
    try:
        fn(**kwargs)
    except Exception:
        raise MXNetError(f"Error in CustomOp.{what}: {traceback.format_exc()}") from None
    finally:
        set_recording(prev)


def _forward(p, ins, oc):
    from_torch = _host("wrap")
    prop = _prop_of(p)
    n_in = len(_args(p))
    dev = oc.device if oc.device is not None else (ins[0].device if ins else torch.device("cpu"))
    ctx = _context_of(dev)
    shapes = [tuple(t.shape) for t in ins]
    _, out_shapes = _infer_shape(p, list(shapes), None)
    _, out_types = _infer_type(p, [dtype_np(t.dtype) for t in ins], None)
    op = _call(p, "create_operator", prop.create_operator, ctx,
               [list(s) for s in shapes[:n_in]], [dtype_code(t.dtype) for t in ins[:n_in]])
    outs = [torch.zeros(s, dtype=dtype_torch(t), device=dev)
            for s, t in zip(out_shapes, out_types)]
    wrap = [from_torch(t, ctx) for t in ins]
    with ctx:
        _user_code("forward", op.forward, is_train=bool(oc.is_train), req=["write"] * len(outs),
                   in_data=wrap[:n_in], out_data=[from_torch(t, ctx) for t in outs],
                   aux=wrap[n_in:])
    outs[0]._custom_op = (op, ctx)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _backward_inputs(p):
    prop = _prop_of(p)
    outs, args, auxs = _outs(p), _args(p), _auxs(p)
    og = [f"{o}_grad" for o in outs] if _need_top_grad(prop) else []
    return og + [f"in_{a}" for a in args] + [f"out_{o}" for o in outs] + auxs


def _need_top_grad(prop):
    return bool(getattr(prop, "need_top_grad_", True))


def _gradient(F, p, ins, outs, ograds):
    prop = _prop_of(p)
    n_in, n_out = len(_args(p)), len(_outs(p))
    heads = list(ograds) if _need_top_grad(prop) else []
    params = {k: v for k, v in p.items() if k != "__prop__"}
    res = F._backward_Custom(*heads, *ins[:n_in], *outs[:n_out], *ins[n_in:], **params)
    return [res] if n_in == 1 else list(res)


def _backward_forward(p, ins, oc):
    from_torch = _host("wrap")
    prop = _prop_of(p)
    n_in, n_out = len(_args(p)), len(_outs(p))
    k = 0
    if _need_top_grad(prop):
        ograds, k = list(ins[:n_out]), n_out
    else:
        ograds = None
    in_data = ins[k:k + n_in]
    out_data = ins[k + n_in:k + n_in + n_out]
    aux = ins[k + n_in + n_out:]
    op, ctx = out_data[0]._custom_op
    if ograds is None:  # MXNet hands undeclared dependencies over as empty arrays
        ograds = [torch.zeros_like(t) for t in out_data]
    in_grad = [torch.zeros_like(t) for t in in_data]
    w = lambda ts: [from_torch(t, ctx) for t in ts]  # noqa: E731
    with ctx:
        _user_code("backward", op.backward, req=["write"] * n_in, out_grad=w(ograds),
                   in_data=w(in_data), out_data=w(out_data), in_grad=w(in_grad), aux=w(aux))
    return in_grad[0] if n_in == 1 else tuple(in_grad)


def _backward_infer_shape(p, ins, outs):
    n_in, n_out = len(_args(p)), len(_outs(p))
    k = n_out if _need_top_grad(_prop_of(p)) else 0
    return ins, list(ins[k:k + n_in])


def _backward_infer_type(p, ins, outs):
    n_in, n_out = len(_args(p)), len(_outs(p))
    k = n_out if _need_top_grad(_prop_of(p)) else 0
    return ins, list(ins[k:k + n_in])


class CustomOpDef(OpDef):
    """An OpDef whose parameters are ``op_type`` plus any keywords, all kept as strings."""

    def parse_params(self, kwargs: dict, node_name: str = ""):
        given = {k: (v if isinstance(v, str) else _mx_str(v)) for k, v in kwargs.items()}
        if "op_type" not in given:
            raise MXNetError(f"Required parameter op_type of string is not presented, in operator "
                             f"{self.name}(name=\"{node_name}\")")
        get_prop_class(given["op_type"])
        return Params(given), given


_DOC = """Apply a custom operator implemented in a frontend language (like Python).

Custom operators should override required methods like `forward` and `backward`.
The custom operator must be registered before it can be used (``mx.operator.register``)."""

register(CustomOpDef(
    "Custom", _forward, _infer_shape, params=(Param("op_type", "str", doc="Name of the custom "
                                                    "operator, the name given to register()."),),
    inputs=_args, aux=_auxs, outputs=_outs, infer_type=_infer_type,
    gradient=_gradient, mutates_aux=True, deterministic=False, doc=_DOC))

register(CustomOpDef(
    "_backward_Custom", _backward_forward, _backward_infer_shape,
    params=(Param("op_type", "str"),), inputs=_backward_inputs, outputs=_args,
    infer_type=_backward_infer_type, deterministic=False, public=False))
