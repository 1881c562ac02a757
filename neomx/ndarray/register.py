"""Builds ``mx.nd.<Op>`` functions from the operator table and runs them through the engine."""
from __future__ import annotations



from .. import engine
from ..engine import _state as _ENGINE
from ..base import MXNetError, shape_str
from ..context import Context, current_context
from ..ops import registry as _reg
from ..ops.registry import OpContext, ShapeError, TypeInferError
from .ndarray import NDArray, check_same_device, from_torch
from .tape import FLAGS as _AG
from .tape import record_op

_new = object.__new__


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


# Inputs already validated: (id(params), shapes, dtypes). Params objects come from per-function
# caches and live as long as them, so their ids are stable keys.
_CHECKED: set = set()
_OC_CACHE: dict = {}


def _checked(op, p, inputs):
    key = (id(p), *[a._data.shape for a in inputs], *[a._data.dtype for a in inputs])
    if key in _CHECKED:
        return
    _check(op, p, inputs)
    if len(_CHECKED) > 8192:
        _CHECKED.clear()
    _CHECKED.add(key)


def _op_context(is_train, dev):
    oc = _OC_CACHE.get((is_train, dev))
    if oc is None:
        oc = _OC_CACHE[(is_train, dev)] = OpContext(is_train=is_train, device=dev)
    return oc


def invoke(op, p, inputs, out=None, ctx=None, is_train=False, cached_params=False):
    """Run ``op`` eagerly on NDArrays; returns an NDArray or a list (visible outputs).

    ``cached_params`` says ``p`` is a long-lived (cached) object, so validation of these input
    shapes and dtypes can be remembered.
    """
    if inputs:
        ctx = inputs[0]._ctx if len(inputs) == 1 else check_same_device(inputs, op.name)
    else:
        ctx = ctx if isinstance(ctx, Context) else (Context(*_parse_ctx(ctx)) if ctx else current_context())
    if cached_params:
        _checked(op, p, inputs)
    else:
        _check(op, p, inputs)
    tensors = [a._data for a in inputs]
    dev = ctx.torch_device
    if inputs:
        tensors = [t if t.device == dev else t.to(dev) for t in tensors]
    oc = _op_context(is_train, dev)
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
    if _AG.recording:
        record_op(op, p, inputs, [res] if op.num_outputs(p) == 1 else res, outs, ctx, is_train)
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for src, dst in zip(outs, targets):
            if _AG.recording:
                dst._assign_recorded(src)
            else:
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


# kwargs values a fast-path key may hold (never NDArrays: their ``==`` is elementwise).
_PLAIN = frozenset({int, float, str, bool, type(None)})
_MISS = object()


def _fast_key(args, kwargs):
    """The fast-path key of a call with keyword parameters, or None when a value is not plain.
    Types are part of it: ``axis=True`` and ``axis=1.0`` must not find ``axis=1``'s plan."""
    key = [len(args)]
    for k, v in kwargs.items():
        c = v.__class__
        if c not in _PLAIN:
            return None
        key += (k, v, c)
    return tuple(key)


class _FastPlan:
    """A validated call form of one op: positional NDArray inputs on one context, one output,
    plain keyword parameters. Calls of that form skip parsing and the general dispatch.

    With the op's ``fast_kernel`` (a kernel specialised for these parameters, taking tensors),
    the kernel runs directly; otherwise the op's forward with a cached ``OpContext``. Inputs are
    checked against the validation cache unless the kernel accepts any shape and dtype."""

    __slots__ = ("op", "p", "kernel", "check_id", "ctx", "train", "oc", "direct1", "direct2")

    def __init__(self, op, p, nargs):
        self.op, self.p = op, p
        fk = op.fast_kernel(p) if op.fast_kernel is not None else None
        self.kernel, needs_check = fk if fk is not None else (None, True)
        self.check_id = id(p) if needs_check else None
        self.ctx = self.train = self.oc = None
        # kernels that validate their inputs themselves, run by ``fn`` itself (1 or 2 inputs)
        direct = self.kernel if (self.kernel is not None and not needs_check) else None
        self.direct1 = direct if nargs == 1 else None
        self.direct2 = direct if nargs == 2 else None

    def run(self, args, is_training):
        """The output NDArray, or ``_MISS`` when this call needs the general path."""
        a0 = args[0]
        if a0.__class__ is not NDArray:
            return _MISS
        ctx = a0._ctx
        t0 = a0._data
        if len(args) == 1:
            tensors = (t0,)
            if self.check_id is not None and (self.check_id, t0.shape, t0.dtype) not in _CHECKED:
                return _MISS
        else:
            tensors = [t0]
            for a in args[1:]:
                if a.__class__ is not NDArray or a._ctx is not ctx:
                    return _MISS
                tensors.append(a._data)
            if self.check_id is not None and (self.check_id, *[t.shape for t in tensors],
                                              *[t.dtype for t in tensors]) not in _CHECKED:
                return _MISS
        kernel = self.kernel
        try:
            if kernel is not None:
                if not _ENGINE["engine"]._inflight:
                    r = kernel(*tensors)
                else:
                    r = engine.push(lambda: kernel(*tensors), reads=args, ctx=ctx)
                if any(r is t for t in tensors):  # results are new arrays, never an input
                    r = r.clone()
                return from_torch(r, ctx)
            train = is_training()
            if ctx is not self.ctx or train is not self.train:
                self.oc = _op_context(train, ctx.torch_device)
                self.ctx, self.train = ctx, train
            p, oc, forward = self.p, self.oc, self.op.forward
            tensors = list(tensors)
            if not _ENGINE["engine"]._inflight:
                return from_torch(forward(p, tensors, oc), ctx)
            return from_torch(engine.push(lambda: forward(p, tensors, oc), reads=args, ctx=ctx), ctx)
        except MXNetError:
            raise
        except (RuntimeError, ValueError, IndexError) as e:
            if kernel is not None:  # invalid inputs, or a form the kernel does not take
                return _MISS        # -> the general path computes it or raises MXNet's error
            raise MXNetError(f"Error in operator {self.op.name}: {str(e).splitlines()[0]} (input "
                             "shapes: " + ", ".join(shape_str(a.shape) for a in args) + ")") from None


def _is_ndarray(v):
    return isinstance(v, NDArray)


def make_function(op):
    """The ``mx.nd.<Op>`` function for ``op``, with a real signature and docstring."""
    from .tape import is_training
    fast: dict = {}  # _fast_key of a call form (or the number of inputs) -> _FastPlan
    cache: dict = {}  # parameter kwargs -> (Params, input names); parsing once per distinct call

    def bound(args, kwargs):
        """op.bind_call, with the parsed parameters of each distinct keyword form cached.
        Returns (Params, input names, whether Params is cached, inputs by slot)."""
        key = None
        if not any(v.__class__ is NDArray for v in kwargs.values()):
            try:
                key = (len(args), tuple(sorted(kwargs.items())))
                hit = cache.get(key)
            except TypeError:  # unhashable values (lists): bind every time
                key = hit = None
            if hit is not None:
                p, names = hit
                return p, names, True, list(args) + [None] * (len(names) - len(args))
        p, _, slots, names = op.bind_call(args, kwargs, _is_ndarray)
        if key is not None and len(cache) < 1024:
            cache[key] = (p, names)
            return p, names, True, slots
        return p, names, False, slots

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        if out is None and ctx is None and args and not _AG.recording:
            plan = fast.get(_fast_key(args, kwargs) if kwargs else len(args))
            if plan is not None:
                # the leanest forms: kernels that validate their inputs themselves, run here
                kernel = plan.direct1
                if kernel is not None:
                    a = args[0]
                    if a.__class__ is NDArray and not _ENGINE["engine"]._inflight:
                        t = a._data
                        try:
                            r = kernel(t)
                        except (RuntimeError, ValueError, IndexError):
                            # invalid inputs, or a form the kernel does not take: the general
                            # path computes it or raises MXNet's error
                            return general(args, out, ctx, kwargs)
                        if r is t:  # results are new arrays, never the input itself
                            r = r.clone()
                        res = _new(NDArray)
                        res._data, res._ctx = r, a._ctx
                        return res
                kernel = plan.direct2
                if kernel is not None:
                    a, b = args
                    if (a.__class__ is NDArray and b.__class__ is NDArray and a._ctx is b._ctx
                            and not _ENGINE["engine"]._inflight):
                        ta, tb = a._data, b._data
                        try:
                            r = kernel(ta, tb)
                        except (RuntimeError, ValueError, IndexError):
                            return general(args, out, ctx, kwargs)
                        if r is ta or r is tb:
                            r = r.clone()
                        res = _new(NDArray)
                        res._data, res._ctx = r, a._ctx
                        return res
                res = plan.run(args, is_training)
                if res is not _MISS:
                    return res
        return general(args, out, ctx, kwargs)

    def general(args, out, ctx, kwargs):
        for i, a in enumerate(args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"{op.name}: input {i} must be an NDArray, got {type(a).__name__}")
        if ctx is not None and "ctx" in op.param_map:
            kwargs = dict(kwargs, ctx=str(ctx))
        p, names, stable, inputs = bound(args, kwargs)
        missing = [n for n, a in zip(names, inputs) if a is None]
        if missing:
            raise MXNetError(f"{op.name}: missing input(s) {missing}; inputs are {names}")
        res = invoke(op, p, inputs, out=out, ctx=ctx, is_train=is_training(), cached_params=stable)
        if (stable and out is None and ctx is None and args and len(args) == len(names)
                and not op.mutates_aux and op.num_outputs(p) == 1 and len(fast) < 256):
            key = _fast_key(args, kwargs) if kwargs else len(args)
            if key is not None:
                fast[key] = _FastPlan(op, p, len(args))
        return res

    fn.__name__ = op.name
    fn.__qualname__ = op.name
    fn.__doc__ = op.signature_doc() + "\n\nReturns\n-------\nNDArray or list of NDArrays\n    The output(s)."
    fn.__signature__ = op.signature(symbolic=False)
    return fn


_FUNCTIONS: dict = {}  # id(op) -> its mx.nd function (one per op, shared by its aliases)


def function_for(op):
    """The (cached) ``mx.nd`` function of ``op``; fluent methods (``a.sum()``) use it too."""
    f = _FUNCTIONS.get(id(op))
    if f is None:
        f = _FUNCTIONS[id(op)] = make_function(op)
    return f


def populate(namespace: dict, internal: dict):
    for name, op in _reg.all_ops().items():
        f = function_for(op)
        internal[name] = f
        if op.public and not name.startswith("_"):
            namespace.setdefault(name, f)
