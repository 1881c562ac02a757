"""``simple_bind`` and ``bind``: infer, allocate, attach gradients, build the Executor."""
from __future__ import annotations

import logging

import numpy as np
import torch

from ..base import MXNetError, dtype_torch
from ..context import Context
from ..graph.pipeline import place_devices
from ..ndarray.ndarray import NDArray, from_torch
from .executor import Executor
from .sparse_io import empty_array

_REQS = ("null", "write", "add", "inplace")


def _grad_reqs(grad_req, arg_names):
    """Normalise grad_req (str, list in argument order, or dict with 'null' for missing names)."""
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(arg_names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) == 0:
            raise MXNetError("grad_req must not be an empty list")
        if len(grad_req) != len(arg_names):
            raise MXNetError(f"grad_req has {len(grad_req)} entries for {len(arg_names)} arguments")
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        if len(grad_req) == 0:
            raise MXNetError("grad_req must not be an empty dict")
        unknown = set(grad_req) - set(arg_names)
        if unknown:
            raise MXNetError(f"grad_req names unknown arguments {sorted(unknown)}; arguments are {arg_names}")
        reqs = [grad_req.get(n, "null") for n in arg_names]
    else:
        raise TypeError("grad_req must be a str, a list or a dict")
    for r in reqs:
        if r not in _REQS:
            raise MXNetError(f"grad_req must be one of {_REQS}, got {r!r}")
    return ["write" if r == "inplace" else r for r in reqs]


def _zeros(shape, dtype, ctx):
    return from_torch(torch.zeros(shape, dtype=dtype_torch(dtype), device=ctx.torch_device), ctx)


def _describe(kwargs):
    return "".join(f"{k}: {tuple(v) if isinstance(v, (tuple, list)) else v}\n" for k, v in kwargs.items())


_STYPE_CODES = {"0": "default", "1": "row_sparse", "2": "csr"}
_STYPES = ("default", "row_sparse", "csr")


def _arg_stypes(symbol, arg_names, stype_dict):
    """Each argument's storage type: ``stype_dict``'s, else the variable's ``stype``
    (``__storage_type__``), else default."""
    stype_dict = dict(stype_dict or {})
    for k, v in stype_dict.items():
        if v not in _STYPES:
            raise MXNetError(f"simple_bind: unknown storage type {v!r} for argument {k} "
                             f"(expected one of {', '.join(_STYPES)})")
    attrs = {n.name: n.attrs for n in symbol._graph().arg_nodes}
    out = []
    for name in arg_names:
        st = stype_dict.get(name)
        if st is None:
            code = attrs.get(name, {}).get("__storage_type__")
            st = _STYPE_CODES.get(code, "default") if code is not None else "default"
        out.append(st)
    return out


def simple_bind(symbol, ctx: Context, grad_req="write", type_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, stype_dict=None,
                **kwargs):
    """Infer all shapes from ``kwargs``, allocate zeroed arguments, gradients and auxiliary states,
    and bind them (see ``Symbol.simple_bind``). Arguments are csr / row_sparse as
    ``stype_dict`` or their variable's ``stype`` says; a gradient array is row_sparse where
    the gradient comes out row_sparse (``dot(csr, w)``'s ``w``, ``Embedding(sparse_grad=True)``)."""
    if not isinstance(ctx, Context):
        raise TypeError(f"simple_bind: ctx must be a Context, got {type(ctx).__name__}")
    arg_names = symbol.list_arguments()
    stypes = _arg_stypes(symbol, arg_names, stype_dict)
    inputs = set(symbol.list_inputs())
    unknown = [k for k in kwargs if k not in inputs]
    shapes = {k: v for k, v in kwargs.items() if k in inputs}
    try:
        _, arg_shapes, _, aux_shapes = symbol._infer("shape", (), shapes)
        names = arg_names + symbol.list_auxiliary_states()
        if not all(s is not None and 0 not in s for s in arg_shapes + aux_shapes):
            listing = "".join(f"{n}: {tuple(s) if s is not None else None}, "
                              for n, s in zip(names, arg_shapes + aux_shapes))
            hint = (f"\n(neomx: shapes given for unknown argument(s) {unknown} were ignored)"
                    if unknown else "")
            raise MXNetError("InferShape pass cannot decide shapes for the following arguments (-1 means "
                             "unknown dimensions). Please consider providing them as inputs:\n"
                             + listing.rstrip(" ") + hint)
        types = {k: v for k, v in (type_dict or {}).items() if k in inputs}
        _, arg_types, _, aux_types = symbol._infer("type", (), types)
    except MXNetError as e:
        raise MXNetError("simple_bind error. Arguments:\n" + _describe(kwargs) + str(e)) from None
    arg_types = [t if t is not None else np.float32 for t in arg_types]
    aux_types = [t if t is not None else np.float32 for t in aux_types]
    reqs = _grad_reqs(grad_req, arg_names)
    if shared_buffer is not None and not isinstance(shared_buffer, dict):
        raise ValueError("shared_buffer in simple_bind must be dict or None")
    group2ctx = _check_group2ctx(group2ctx)
    graph = symbol._graph()
    placed = place_devices(graph, ctx, group2ctx)  # model parallelism: variables' contexts
    arg_ctx = [placed.get(n, ctx) for n in graph.arg_nodes]
    aux_ctx = [placed.get(n, ctx) for n in graph.aux_nodes]
    shared = set(shared_arg_names or ())
    shared_args = shared_exec.arg_dict if shared_exec is not None else {}
    shared_grads = (shared_exec.grad_dict if shared_exec is not None and shared_exec.grad_arrays
                    is not None else {})
    args, grads = [], []
    for name, shape, dt, req, c, st in zip(arg_names, arg_shapes, arg_types, reqs, arg_ctx, stypes):
        src = shared_args.get(name) if name in shared else None
        if st != "default":
            if src is not None and src.stype == st and src.shape == tuple(shape) \
                    and np.dtype(src.dtype) == np.dtype(dt):
                args.append(src)
            else:
                args.append(empty_array(st, shape, dt, c))
            grads.append(_zeros(shape, dt, c) if req != "null" else None)
            continue
        if src is not None and src.shape == tuple(shape) and np.dtype(src.dtype) == np.dtype(dt):
            args.append(src)
            g = shared_grads.get(name)
            grads.append(g if req != "null" and g is not None else
                         (_zeros(shape, dt, c) if req != "null" else None))
        elif shared_buffer is not None and name not in shared:
            args.append(_reshape_or_create(shared_buffer, name, shape, dt, c))
            grads.append(_reshape_or_create(shared_buffer, "grad of " + name, shape, dt, c)
                         if req != "null" else None)
        else:
            args.append(_zeros(shape, dt, c))
            grads.append(_zeros(shape, dt, c) if req != "null" else None)
    aux = [_zeros(s, t, c) for s, t, c in zip(aux_shapes, aux_types, aux_ctx)]
    ex = Executor(symbol, ctx, args, grads, reqs, aux, group2ctx=group2ctx)
    ex._allocate_sparse_grads()
    return ex


def _check_group2ctx(group2ctx):
    if group2ctx is None:
        return {}
    if not isinstance(group2ctx, dict):
        raise TypeError("group2ctx must be a dict of str to Context")
    for k, v in group2ctx.items():
        if not isinstance(v, Context):
            raise TypeError(f"group2ctx[{k!r}] must be a Context, got {type(v).__name__}")
    return dict(group2ctx)


def _reshape_or_create(buffer, key, shape, dtype, ctx):
    """MXNet's memory sharing between the executors of one Module (buckets): a buffer at least
    as large as needed, of the same dtype and context, is reused through a reshaped view of its
    memory; otherwise a new array is made and replaces it in ``buffer``."""
    shape = tuple(shape)
    have = buffer.get(key)
    size = int(np.prod(shape))
    if have is not None and have.context == ctx and np.dtype(have.dtype) == np.dtype(dtype):
        if have.size >= size:
            return from_torch(have._data.reshape(-1)[:size].view(shape), ctx)
        logging.warning("Bucketing: data %s has a shape %s, which is larger than already allocated "
                        "shape %s. Need to re-allocate. Consider putting default bucket key to be "
                        "the bucket taking the largest input for better memory sharing.",
                        key, list(shape), list(have.shape))
    new = _zeros(shape, dtype, ctx)
    buffer[key] = new
    return new


def _as_list(value, names, what, allow_missing=False):
    if isinstance(value, dict):
        out = []
        for n in names:
            if n not in value:
                if allow_missing:
                    out.append(None)
                    continue
                raise ValueError(f"key `{n}` is missing in `{what}`")
            out.append(value[n])
        return out
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"Length of {what} does not match the number of arguments: "
                             f"{len(value)} vs {len(names)} ({names})")
        return list(value)
    raise TypeError(f"Only accept list of NDArrays or dict of str to NDArray for {what}")


def bind(symbol, ctx: Context, args, args_grad=None, grad_req="write", aux_states=None,
         group2ctx=None, shared_exec=None):
    """Bind the given arrays themselves (no copies) into an Executor (see ``Symbol.bind``)."""
    if not isinstance(ctx, Context):
        raise TypeError(f"bind: ctx must be a Context, got {type(ctx).__name__}")
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    arg_list = _as_list(args, arg_names, "args")
    for n, a in zip(arg_names, arg_list):
        if not isinstance(a, NDArray):
            raise TypeError(f"bind: argument {n} must be an NDArray, got {type(a).__name__}")
    if aux_names:
        aux_list = _as_list(aux_states if aux_states is not None else [], aux_names, "aux_states")
    else:
        aux_list = []
    grads_given = args_grad is not None
    if grads_given:
        grad_list = _as_list(args_grad, arg_names, "args_grad", allow_missing=isinstance(args_grad, dict))
        reqs = _grad_reqs(grad_req, arg_names)
        reqs = [r if g is not None else "null" for r, g in zip(reqs, grad_list)]
        for n, a, g in zip(arg_names, arg_list, grad_list):
            if g is not None and g.shape != a.shape:
                raise MXNetError(f"bind: gradient array for {n} has shape {g.shape}, argument has {a.shape}")
    else:
        grad_list = [None] * len(arg_names)
        reqs = ["null"] * len(arg_names)
    try:
        shapes = {n: a.shape for n, a in zip(arg_names + aux_names, arg_list + aux_list)}
        symbol._infer("shape", (), shapes)
    except MXNetError as e:
        raise MXNetError("bind error. Arguments:\n" + _describe(shapes) + str(e)) from None
    return Executor(symbol, ctx, arg_list, grad_list, reqs, aux_list, grads_given=grads_given,
                    group2ctx=_check_group2ctx(group2ctx))


def reshape_executor(ex: Executor, partial_shaping, allow_up_sizing, shapes):
    """A new executor for new input shapes, as MXNet's ``Executor.reshape``: an array whose
    shape is unchanged is shared; a smaller one is a view of the old memory (writes are seen by
    both executors); a larger one is new (only with ``allow_up_sizing``). Arrays whose shapes
    were not given may change only with ``partial_shaping``."""
    symbol = ex._symbol
    arg_names = symbol.list_arguments()
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    if arg_shapes is None:
        raise MXNetError(f"reshape: cannot infer every shape from {shapes}")

    def resize(kind, name, shape, old, grad=None):
        shape = tuple(shape)
        if shape == old.shape:
            return old, grad
        if old.stype != "default" or (grad is not None and grad.stype != "default"):
            # a sparse array (a csr batch, a row_sparse gradient) holds no memory to view:
            # a new empty one of the new shape (its values come with the next forward)
            if not partial_shaping and name not in shapes:
                raise MXNetError(f"Shape of unspecified {kind}: {name} changed (sparse storage)")
            return (empty_array(old.stype, shape, old.dtype, old.context),
                    None if grad is None else empty_array(grad.stype, shape, grad.dtype,
                                                          grad.context))
        if not partial_shaping and name not in shapes:
            raise MXNetError(f"Shape of unspecifie {kind}: {name} changed. This can cause the new "
                             "executor to not share parameters with the old one. Please check for "
                             "error in network.If this is intended, set partial_shaping=True to "
                             "suppress this warning.")
        n = int(np.prod(shape))
        if n > old.size:
            if not allow_up_sizing:
                raise MXNetError(f"New shape of {kind}: {name} is larger than original.First making "
                                 "a big executor and then down sizing it is more efficient than the "
                                 "reverse.If you really want to up size, set allow_up_sizing=True to "
                                 "enable allocation of new arrays.")
            return (_zeros(shape, old.dtype, old.context),
                    None if grad is None else _zeros(shape, grad.dtype, grad.context))
        view = lambda a: from_torch(a._data.reshape(-1)[:n].view(shape), a.context)  # noqa: E731
        return view(old), None if grad is None else view(grad)

    new_args, new_grads = [], []
    for name, shape, old, g in zip(arg_names, arg_shapes, ex.arg_arrays, ex._grad_list):
        a, g = resize("arg", name, shape, old, g)
        new_args.append(a)
        new_grads.append(g)
    new_aux = [resize("aux", name, shape, old)[0] for name, shape, old in
               zip(symbol.list_auxiliary_states(), aux_shapes, ex.aux_arrays)]
    return Executor(symbol, ex._ctx, new_args, new_grads, ex._grad_reqs, new_aux,
                    grads_given=ex._grads_given, group2ctx=ex._group2ctx)
