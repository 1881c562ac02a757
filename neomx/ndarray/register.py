"""Builds ``mx.nd.<Op>`` functions from the operator table and runs them through the engine."""
from __future__ import annotations

import torch

from .. import engine
from .. import profiler as _profiler
from ..base import MXNetError, shape_str
from ..context import Context, current_context
from ..ops import registry as _reg
from ..ops.registry import OpContext, ShapeError, TypeInferError
from . import ndarray as _ndarray_module
from .ndarray import NDArray, check_same_device, from_torch
from .tape import FLAGS as _AG
from .tape import RECORDING as _REC
from .tape import is_training, record_op

_new = object.__new__
_idle = engine.idle  # (reads the installed engine at each call)
_PROF = _profiler.STATE  # the profiler's hook: one attribute test per call while it is off


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


def _own(r, tensors):
    """``r``, or a copy of it when it is an input or a view of one's memory: an imperative
    operator's result is a new array in MXNet (``nd.transpose(x)[:] = 0`` leaves ``x`` alone),
    while forwards may return views (the executor relies on them being cheap)."""
    root = r._base
    if root is None:
        root = r
    for t in tensors:
        b = t._base
        if root is t or (b is not None and root is b):
            return r.clone()
    return r


# [has_sparse(inputs, out), invoke_sparse(op, p, inputs, out, ctx, is_train)], filled by
# neomx/ndarray/sparse.py: calls with a sparse input or output go there (plans never see them:
# they only run inputs whose class is NDArray itself).
SPARSE_HOOK: list = []


def invoke(op, p, inputs, out=None, ctx=None, is_train=False, cached_params=False):
    """Run ``op`` eagerly on NDArrays; returns an NDArray or a list (visible outputs).

    ``cached_params`` says ``p`` is a long-lived (cached) object, so validation of these input
    shapes and dtypes can be remembered.
    """
    if SPARSE_HOOK and SPARSE_HOOK[0](inputs, out):  # (sparse.py installs it on import)
        return SPARSE_HOOK[1](op, p, inputs, out, ctx, is_train)
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
    if op.num_outputs(p) == 1:
        res = _own(res, tensors)
        results = [res]
    else:
        res = [_own(r, tensors) for r in res]
        results = res[:nvis]
    outs = [from_torch(r, ctx) for r in results]
    if _AG.recording:
        record_op(op, p, inputs, [res] if op.num_outputs(p) == 1 else res, outs, ctx, is_train)
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for src, dst in zip(outs, targets):
            if src.shape != dst.shape:
                raise MXNetError(f"{op.name}: result of shape {shape_str(src.shape)} does not fit "
                                 f"the output array of shape {shape_str(dst.shape)}")
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


# kwargs values a plan key may hold (never NDArrays: their ``==`` is elementwise).
_PLAIN = frozenset({int, float, str, bool, type(None)})
_MISS = object()
_MAX_PLANS = 256  # per op; a full table starts over (scalars in a loop make many forms)


def _fast_key(args, kwargs):
    """The plan key of a call with keyword parameters, or None when a value is not plain.
    Types are part of it: ``axis=True`` and ``axis=1.0`` must not find ``axis=1``'s plan."""
    key = [len(args)]
    for k, v in kwargs.items():
        c = v.__class__
        if c not in _PLAIN:
            return None
        key += (k, v, c)
    return tuple(key)


# --- direct kernels: arithmetic that validates itself --------------------------------------------
_INPLACE_FN = {"add": torch.Tensor.add_, "sub": torch.Tensor.sub_, "mul": torch.Tensor.mul_,
               "div": torch.Tensor.div_}
_BINARY_INPLACE = {"elemwise_add": "add", "broadcast_add": "add", "elemwise_sub": "sub",
                   "broadcast_sub": "sub", "elemwise_mul": "mul", "broadcast_mul": "mul",
                   "elemwise_div": "div", "broadcast_div": "div"}
_SCALAR_INPLACE = {"_plus_scalar": "add", "_minus_scalar": "sub", "_mul_scalar": "mul",
                   "_div_scalar": "div"}


def _push(kernel, tensors, reads, writes=()):
    """``kernel(*tensors)`` through the engine, after the work in flight it depends on."""
    return engine.push(lambda: kernel(*tensors), reads=reads, writes=writes)


def _binary_direct(fn, fn_, same_shape):
    """The direct computation of a binary arithmetic op: ``run(a, b)`` is ``fn`` on two
    NDArrays of one dtype and context (and one shape for the elemwise_* ops; torch refuses
    shapes that do not broadcast); ``run_inplace(a, b)`` is ``fn_`` for ``a op= b`` (None when
    the op has no in-place form). Both return None for anything else (promotion, bad shapes,
    integer division in place): the general path computes it or raises MXNet's error. NDArray's
    operators call them directly; the op's plans through ``_arithmetic_runner``."""
    def run(a, b):
        ctx = a._ctx
        if b._ctx is not ctx or a.__class__ is not NDArray or b.__class__ is not NDArray:
            return None
        ta, tb = a._data, b._data
        if ta.dtype is not tb.dtype or (same_shape and ta.shape != tb.shape):
            return None
        try:
            r = fn(ta, tb) if _idle() else _push(fn, (ta, tb), (a, b))
        except (RuntimeError, ValueError):
            return None
        if r is ta or r is tb:
            r = r.clone()
        res = _new(NDArray)
        res._data = r
        res._ctx = ctx
        return res

    if fn_ is None:
        return run, None

    def run_inplace(a, b):
        if b._ctx is not a._ctx or a.__class__ is not NDArray or b.__class__ is not NDArray:
            return None
        ta, tb = a._data, b._data
        if ta.dtype is not tb.dtype or (same_shape and ta.shape != tb.shape):
            return None
        try:
            if _idle():
                fn_(ta, tb)
            else:
                _push(fn_, (ta, tb), (b,), (a,))
        except (RuntimeError, ValueError):
            return None
        return a
    return run, run_inplace


_INF = float("inf")


def _scalar_direct(fn, fn_):
    """The direct computation of an array-scalar op: ``run(x, s)`` is ``fn`` with the Python
    number ``s`` cast to the array's dtype as MXNet does (int32 * 1.5 multiplies by 1);
    ``run_inplace(x, s)`` is ``fn_`` for floating-point ``x op= s`` (None when the op has no
    in-place form). Both return None where the general path must compute it."""
    def run(x, s):
        if x.__class__ is not NDArray:
            return None
        t = x._data
        if not t.is_floating_point() and s.__class__ is not int and s == s and abs(s) != _INF:
            s = int(s)
        try:
            r = fn(t, s) if _idle() else _push(fn, (t, s), (x,))
        except (RuntimeError, ValueError):
            return None
        res = _new(NDArray)
        res._data = r
        res._ctx = x._ctx
        return res

    if fn_ is None:
        return run, None

    def run_inplace(x, s):
        if x.__class__ is not NDArray:
            return None
        t = x._data
        if not t.is_floating_point():
            return None
        try:
            if _idle():
                fn_(t, s)
            else:
                _push(fn_, (t, s), (), (x,))
        except (RuntimeError, ValueError):
            return None
        return x
    return run, run_inplace


_DIRECT: dict = {}  # op name -> (run, run_inplace) of the arithmetic ops


def direct_arithmetic(name):
    """``(run, run_inplace)`` of an arithmetic op (binary or with a scalar), or None."""
    d = _DIRECT.get(name, _MISS)
    if d is _MISS:
        from ..ops import elemwise as _ew
        d = None
        if name in _ew.BINARY_FN:
            inplace = _BINARY_INPLACE.get(name)
            d = _binary_direct(_ew.BINARY_FN[name], _INPLACE_FN[inplace] if inplace else None,
                               not name.startswith("broadcast_"))
        elif name in _ew.SCALAR_FN:
            inplace = _SCALAR_INPLACE.get(name)
            d = _scalar_direct(_ew.SCALAR_FN[name], _INPLACE_FN[inplace] if inplace else None)
        _DIRECT[name] = d
    return d


def _arithmetic_runner(op, p):
    """The ``run(args, out)`` of a plan of an arithmetic op (binary or with a scalar), or None:
    the op's direct computation (``direct_arithmetic``), ``_MISS`` where it returns None."""
    d = direct_arithmetic(op.name)
    if d is None:
        return None
    run, run_inplace = d
    from ..ops import elemwise as _ew
    binary = op.name in _ew.BINARY_FN
    s = None if binary else p.scalar  # (the second operand: the other array or the scalar)

    def plan_run(args, out):
        a = args[0]
        b = args[1] if binary else s
        if out is None:
            r = run(a, b)
        elif out is a and run_inplace is not None:
            r = run_inplace(a, b)
        else:
            return _MISS
        return _MISS if r is None else r
    return plan_run


class _Plan:
    """A validated call form of one op (positional NDArray inputs on one context, one output,
    plain keyword parameters): the parsed Params and how to compute it.

    ``run(args, out)`` returns the result NDArray (``out`` itself for an in-place update of
    ``args[0]``), or ``_MISS`` when the call needs the general path. Arithmetic plans run a
    direct computation (``direct_arithmetic``: torch's functions directly, and
    in place for ``a op= b``). Other plans run the op's ``fast_kernel`` when it has one for these
    parameters (it validates its inputs itself, raising for the ones it does not take), else the
    op's forward with a cached ``OpContext``, for inputs whose shapes and dtypes passed the op's
    rules before."""

    __slots__ = ("op", "p", "kernel", "check_id", "fwd_ctx", "fwd_train", "fwd", "run")

    def __init__(self, op, p, nargs):
        self.op, self.p = op, p
        self.fwd_ctx = self.fwd_train = None
        fk = op.fast_kernel(p) if op.fast_kernel is not None else None
        self.kernel, needs_check = fk if fk is not None else (None, True)
        self.check_id = id(p) if needs_check else None
        run = _arithmetic_runner(op, p) if nargs <= 2 else None
        if run is not None:
            self.kernel, self.check_id = run, None
        self.run = run or (self._run1 if nargs == 1 else self._run2 if nargs == 2 else self._runn)

    def _run1(self, args, out):
        a = args[0]
        if a.__class__ is not NDArray:
            return _MISS
        if out is not None:
            return self._update(args, out)
        t = a._data
        if self.check_id is not None and (self.check_id, t.shape, t.dtype) not in _CHECKED:
            return _MISS
        kernel = self.kernel
        if kernel is None:
            kernel = self._forward(a._ctx)
        try:
            r = kernel(t) if _idle() else _push(kernel, (t,), args)
        except (RuntimeError, ValueError, IndexError) as e:
            return self._failed(e, args)
        if r is t or (self.kernel is None and r._base is not None):  # new arrays, never an
            r = _own(r, (t,))                                          # input or a view of one
        res = _new(NDArray)
        res._data, res._ctx = r, a._ctx
        return res

    def _run2(self, args, out):
        a, b = args
        if a.__class__ is not NDArray or b.__class__ is not NDArray or b._ctx is not a._ctx:
            return _MISS
        if out is not None:
            return self._update(args, out)
        ta, tb = a._data, b._data
        if self.check_id is not None and (self.check_id, ta.shape, tb.shape, ta.dtype,
                                          tb.dtype) not in _CHECKED:
            return _MISS
        kernel = self.kernel
        if kernel is None:
            kernel = self._forward(a._ctx)
        try:
            r = kernel(ta, tb) if _idle() else _push(kernel, (ta, tb), args)
        except (RuntimeError, ValueError, IndexError) as e:
            return self._failed(e, args)
        if r is ta or r is tb or (self.kernel is None and r._base is not None):
            r = _own(r, (ta, tb))
        res = _new(NDArray)
        res._data, res._ctx = r, a._ctx
        return res

    def _runn(self, args, out):
        a0 = args[0]
        if a0.__class__ is not NDArray:
            return _MISS
        ctx = a0._ctx
        tensors = []
        for a in args:
            if a.__class__ is not NDArray or a._ctx is not ctx:
                return _MISS
            tensors.append(a._data)
        if out is not None:
            return self._update(args, out)
        if self.check_id is not None and (self.check_id, *[t.shape for t in tensors],
                                          *[t.dtype for t in tensors]) not in _CHECKED:
            return _MISS
        kernel = self.kernel
        if kernel is None:
            kernel = self._forward(ctx)
        try:
            r = kernel(*tensors) if _idle() else _push(kernel, tensors, args)
        except (RuntimeError, ValueError, IndexError) as e:
            return self._failed(e, args)
        if any(r is t for t in tensors) or (self.kernel is None and r._base is not None):
            r = _own(r, tensors)
        res = _new(NDArray)
        res._data, res._ctx = r, ctx
        return res

    def _update(self, args, out):
        """``op(..., out=args[0])`` in place: only arithmetic plans (their runners) do it."""
        return _MISS

    def record(self, args, res):
        """Put this call onto the autograd tape (the caller records); returns ``res``."""
        record_op(self.op, self.p, args, (res._data,), (res,), res._ctx, is_training())
        return res

    def _failed(self, e, args):
        """A kernel raised: a direct kernel refuses inputs it does not take (the general path
        computes them or raises MXNet's error); the op's forward failing is the error."""
        if self.kernel is not None:
            return _MISS
        if isinstance(e, MXNetError):
            raise e
        raise MXNetError(f"Error in operator {self.op.name}: {str(e).splitlines()[0]} (input "
                         "shapes: " + ", ".join(shape_str(a.shape) for a in args) + ")") from None

    def _forward(self, ctx):
        """The op's forward on tensors, with the OpContext of this context and mode (made once
        per context and mode)."""
        train = is_training()
        if ctx is not self.fwd_ctx or train is not self.fwd_train:
            p, oc, forward = self.p, _op_context(train, ctx.torch_device), self.op.forward
            self.fwd = lambda *ts: forward(p, list(ts), oc)
            self.fwd_ctx, self.fwd_train = ctx, train
        return self.fwd


def _is_ndarray(v):
    return isinstance(v, NDArray)


# Automatic mixed precision: None, or (set by ``mx.contrib.amp.init``) a function
# ``(op, args, kwargs) -> (args, kwargs)`` casting the inputs of the operators in AMP's lists.
# Every imperative call of an operator (``mx.nd`` functions, fluent methods, NDArray's
# arithmetic operators) passes through it here, once.
_AMP_HOOK = None


def set_amp_hook(hook):
    """Install (or, with None, remove) the AMP input-cast hook of the imperative dispatch."""
    global _AMP_HOOK
    _AMP_HOOK = hook
    _ndarray_module.AMP_ACTIVE = hook is not None


def make_function(op):
    """The ``mx.nd.<Op>`` function for ``op``, with a real signature and docstring.

    It is the one imperative dispatch: every ``mx.nd`` call, NDArray operator (``a + b`` is
    ``broadcast_add``, ``a * 2`` is ``_mul_scalar``) and in-place update (``a += b`` is
    ``broadcast_add(a, b, out=a)``) runs here. A call whose form (number of inputs, keyword
    parameters) was seen before runs its cached ``_Plan`` directly; any other call, and every
    call while ``autograd`` records, takes the general path: bind the arguments
    (``OpDef.bind_call``), check shapes and types, run through the engine, record onto the tape.
    """
    plans: dict = {}  # plan key of a call form -> _Plan
    binds: dict = {}  # (nargs, parameter kwargs) -> (Params, input names): parsing once per form

    def bound(args, kwargs):
        """op.bind_call, with the parsed parameters of each distinct keyword form cached.
        Returns (Params, input names, whether Params is cached, inputs by slot)."""
        key = None
        if not any(v.__class__ is NDArray for v in kwargs.values()) and \
                not any(a is None for a in args):  # (None inputs: bind_call drops them)
            try:
                key = (len(args), tuple(sorted(kwargs.items())))
                hit = binds.get(key)
            except TypeError:  # unhashable values (lists): bind every time
                key = hit = None
            if hit is not None:
                p, names = hit
                return p, names, True, list(args) + [None] * (len(names) - len(args))
        p, _, slots, names = op.bind_call(args, kwargs, _is_ndarray)
        if key is not None and len(binds) < 1024:
            binds[key] = (p, names)
            return p, names, True, slots
        return p, names, False, slots

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        if _AMP_HOOK is not None:  # (``out`` too: MXNet's wrappers cast it as any keyword)
            args, kwargs = _AMP_HOOK(op, args, kwargs if out is None else dict(kwargs, out=out))
            out = kwargs.pop("out", None) if "out" in kwargs else None
        if _PROF.imperative:
            return _profiler.call_imperative(op.name, dispatch, (args, out, ctx, kwargs), {})
        if ctx is None and args:
            plan = plans.get(_fast_key(args, kwargs) if kwargs else len(args))
            if plan is not None:
                if not (_REC.n and _AG.recording):
                    res = plan.run(args, out)
                    if res is not _MISS:
                        return res
                elif out is None:
                    res = plan.run(args, None)
                    if res is not _MISS:
                        return plan.record(args, res)
        return general(args, out, ctx, kwargs)

    def dispatch(args, out, ctx, kwargs):
        """``fn``'s body, for the profiler (which times it)."""
        if ctx is None and args:
            plan = plans.get(_fast_key(args, kwargs) if kwargs else len(args))
            if plan is not None and out is None:
                res = plan.run(args, None)
                if res is not _MISS:
                    return plan.record(args, res) if _REC.n and _AG.recording else res
        return general(args, out, ctx, kwargs)

    def general(args, out, ctx, kwargs):
        args, kwargs = op.positional_params(args, kwargs)
        for i, a in enumerate(args):
            if not isinstance(a, NDArray) and a is not None:
                raise MXNetError(f"{op.name}: input {i} must be an NDArray, got {type(a).__name__}")
        if ctx is not None and "ctx" in op.param_map:
            kwargs = dict(kwargs, ctx=str(ctx))
        p, names, stable, inputs = bound(args, kwargs)
        missing = [n for n, a in zip(names, inputs) if a is None]
        if missing:
            raise MXNetError(f"{op.name}: missing input(s) {missing}; inputs are {names}")
        res = invoke(op, p, inputs, out=out, ctx=ctx, is_train=is_training(), cached_params=stable)
        if (stable and ctx is None and args and len(args) == len(names)
                and not op.mutates_aux and op.num_outputs(p) == 1):
            key = _fast_key(args, kwargs) if kwargs else len(args)
            if key is not None and key not in plans:
                if len(plans) >= _MAX_PLANS:
                    plans.clear()
                plans[key] = plan = _Plan(op, p, len(args))
                if len(kwargs) == 1 and "scalar" in kwargs:  # NDArray's operators: short key
                    s = kwargs["scalar"]
                    plans[(s, s.__class__)] = plan
        return res

    fn.__name__ = op.name
    fn.__qualname__ = op.name
    fn.__doc__ = op.signature_doc() + "\n\nReturns\n-------\nNDArray or list of NDArrays\n    The output(s)."
    fn.__signature__ = op.signature(symbolic=False)
    fn.plans, fn.general = plans, general  # (NDArray's operators use them, see operators())
    return fn


def operators(fns):
    """NDArray's arithmetic, comparison and in-place operators, as entries of the same dispatch:
    ``a + b`` is ``broadcast_add``, ``a + 2`` ``_plus_scalar`` with ``scalar=2``, ``a += b``
    ``broadcast_add(a, b, out=a)``. Arithmetic runs the op's direct computation
    (``direct_arithmetic``, the one its plans run) when not recording or profiling; other
    operators look up the op's plan for the call form (``fn(a, scalar=2)``'s, under a short
    key); misses, recording and profiling take the op's general path. Returns name -> method."""
    def binary(opname, scalar_op, reverse=False):
        aplans, ageneral = fns[opname].plans, fns[opname].general
        splans, sgeneral = fns[scalar_op].plans, fns[scalar_op].general
        arun = (direct_arithmetic(opname) or (None,))[0]
        srun = (direct_arithmetic(scalar_op) or (None,))[0]

        def operator(self, other):
            cls = other.__class__
            if _AMP_HOOK is not None:  # through the op functions, which apply the hook
                if cls is NDArray:
                    return fns[opname](self, other)
                if cls is float or cls is int:
                    return fns[scalar_op](self, scalar=other)
            if not (_PROF.imperative or (_REC.n and _AG.recording)):
                if cls is NDArray:  # (never reversed: Python calls ``a.__add__(b)`` for two NDArrays)
                    if arun is not None:
                        res = arun(self, other)
                        if res is not None:
                            return res
                        return ageneral((self, other), None, None, {})
                elif cls is float or cls is int:
                    if srun is not None:
                        res = srun(self, other)
                        if res is not None:
                            return res
                        return sgeneral((self,), None, None, {"scalar": other})
            if _PROF.imperative:
                return _profiler.call_imperative(
                    opname if cls is NDArray else scalar_op, profiled, (self, other), {})
            if cls is NDArray:
                plan = aplans.get(2)
                if plan is not None:
                    res = plan.run((self, other), None)
                    if res is not _MISS:
                        return plan.record((self, other), res) if _REC.n and _AG.recording else res
                return ageneral((self, other), None, None, {})
            if cls is float or cls is int:
                plan = splans.get((other, cls))
                if plan is not None:
                    res = plan.run((self,), None)
                    if res is not _MISS:
                        return plan.record((self,), res) if _REC.n and _AG.recording else res
                return sgeneral((self,), None, None, {"scalar": other})
            return self._binary_other(other, opname, scalar_op, reverse)

        def profiled(self, other):
            cls = other.__class__
            if cls is NDArray:
                return ageneral((self, other), None, None, {})
            if cls is float or cls is int:
                return sgeneral((self,), None, None, {"scalar": other})
            return self._binary_other(other, opname, scalar_op, reverse)
        return operator

    def inplace(opname, scalar_op):
        ageneral, sgeneral = fns[opname].general, fns[scalar_op].general
        arun_ = (direct_arithmetic(opname) or (None, None))[1]
        srun_ = (direct_arithmetic(scalar_op) or (None, None))[1]

        def operator(self, other):
            if _AMP_HOOK is not None:  # through the op functions, which apply the hook
                if other.__class__ is NDArray:
                    return fns[opname](self, other, out=self)
                if other.__class__ is float or other.__class__ is int:
                    return fns[scalar_op](self, scalar=other, out=self)
            if _PROF.imperative:
                return _profiler.call_imperative(
                    opname if other.__class__ is NDArray else scalar_op, profiled, (self, other), {})
            cls = other.__class__
            if cls is NDArray:
                if arun_ is not None and not (_REC.n and _AG.recording) \
                        and arun_(self, other) is self:
                    return self
                return ageneral((self, other), self, None, {})
            if cls is float or cls is int:
                if srun_ is not None and not (_REC.n and _AG.recording) \
                        and srun_(self, other) is self:
                    return self
                return sgeneral((self,), self, None, {"scalar": other})
            res = self._binary_other(other, opname, scalar_op, False)
            if res is NotImplemented:
                return res
            return fns["_copy"](res, out=self)

        def profiled(self, other):
            cls = other.__class__
            if cls is NDArray:
                return ageneral((self, other), self, None, {})
            if cls is float or cls is int:
                return sgeneral((self,), self, None, {"scalar": other})
            res = self._binary_other(other, opname, scalar_op, False)
            return res if res is NotImplemented else fns["_copy"](res, out=self)
        return operator

    table = {"add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
             "sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
             "mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
             "truediv": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
             "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
             "pow": ("broadcast_power", "_power_scalar", "_rpower_scalar")}
    methods = {}
    for name, (opname, scalar_op, rscalar_op) in table.items():
        methods[f"__{name}__"] = binary(opname, scalar_op)
        methods[f"__r{name}__"] = binary(opname, rscalar_op, True)
        if name != "pow":
            methods[f"__i{name}__"] = inplace(opname, scalar_op)
    for name, opname in (("eq", "equal"), ("ne", "not_equal"), ("gt", "greater"),
                         ("ge", "greater_equal"), ("lt", "lesser"), ("le", "lesser_equal")):
        methods[f"__{name}__"] = binary(f"broadcast_{opname}", f"_{opname}_scalar")
    methods["__div__"], methods["__rdiv__"] = methods["__truediv__"], methods["__rtruediv__"]
    methods["__idiv__"] = methods["__itruediv__"]
    return methods


_FUNCTIONS: dict = {}  # id(op) -> its mx.nd function (one per op, shared by its aliases)


def function_for(op):
    """The (cached) ``mx.nd`` function of ``op``; fluent methods (``a.sum()``) use it too."""
    f = _FUNCTIONS.get(id(op))
    if f is None:
        f = _FUNCTIONS[id(op)] = make_function(op)
    return f


def populate(namespace: dict, internal: dict):
    from . import ndarray as _ndarray
    for name, op in _reg.all_ops().items():
        f = function_for(op)
        internal[name] = f
        _ndarray.OPS[name] = f
        if op.public and not name.startswith("_"):
            namespace.setdefault(name, f)
    for name, method in operators(_ndarray.OPS).items():
        setattr(NDArray, name, method)
