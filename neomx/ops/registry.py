"""The operator table.

Every operator is one :class:`OpDef`: its typed parameters (with MXNet's defaults and
validation), the names of its inputs, auxiliary states and outputs, shape and type inference,
the forward computation on torch tensors, and its gradient rule. ``mx.nd.<Op>``, ``mx.sym.<Op>``
and the executor are all built from this one definition.

Conventions shared by every rule:

* ``p`` is the op's parsed parameters (:class:`Params`, attribute access).
* ``infer_shape(p, ins, outs)`` gets lists of shapes (tuples, ``None`` = unknown) for all
  inputs (aux states last) and all outputs (hidden ones included) and returns the completed
  ``(ins, outs)``; it may leave entries ``None`` when it cannot decide yet and raises
  :class:`ShapeError` on an inconsistency. ``infer_type`` is the same over numpy types.
* ``forward(p, ins, oc)`` gets torch tensors (aux states last, updated in place when the op
  mutates them) and an :class:`OpContext`; it returns one tensor when the op has one output,
  else a tuple with every output (hidden ones included).
* ``gradient(F, p, ins, outs, ograds)`` builds input gradients out of other registered ops
  through the namespace ``F`` (graph-building in the executor, eager for NDArrays); handles
  have ``.shape`` and ``.dtype``. It returns one entry per non-aux input, ``None`` where no
  gradient flows. Loss ops (``is_loss``) ignore ``ograds``. ``F.wanted`` (a bool per non-aux
  input, or None: all) says which gradients are needed; a rule may skip the others (return
  None) to save work.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..base import MXNetError, dtype_name, dtype_np

__all__ = ["Param", "Params", "OpDef", "OpContext", "ShapeError", "TypeInferError", "register",
           "get", "find", "all_ops", "REQUIRED", "same_shape", "same_type", "zero_gradient",
           "merge_shape", "assign_shape"]

REQUIRED = object()


class ShapeError(MXNetError):
    """Shape inference found an inconsistency (message without the operator prefix)."""


class TypeInferError(MXNetError):
    """Type inference found an inconsistency."""


class Params(dict):
    """Parsed operator parameters with attribute access (``p.num_hidden``).

    The instance's attribute dictionary is the mapping itself, so ``p.axis`` is one plain
    attribute lookup (kernels read parameters on every call)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__ = self

    def __getattr__(self, key):  # only reached for missing keys
        raise AttributeError(key)

    def __reduce__(self):
        return (Params, (dict(self),))


@dataclass
class OpContext:
    """What a forward kernel may need besides its inputs."""

    is_train: bool = False
    device: Any = None  # torch.device


# --- parameter types ---------------------------------------------------------------------------
def _parse_bool(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
    raise ValueError(f"Invalid Input: '{v}', expected a boolean")


def _parse_int(v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        return int(v.strip())
    raise ValueError(f"Invalid Input: '{v}', expected an integer")


def _parse_float(v):
    if isinstance(v, str):
        return float(v.strip())
    return float(v)


def _parse_shape(v):
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "None"):
            return ()
        v = ast.literal_eval(s)
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(int(x) for x in v)


def _parse_str(v):
    return str(v)


def _parse_dtype(v):
    if v is None or (isinstance(v, str) and v == "None"):
        return None
    return dtype_np(v)


def _parse_axis(v):
    """``axis`` params: None, an int or a tuple of ints."""
    if v is None:
        return None
    if isinstance(v, str):
        s = v.strip()
        if s in ("None", ""):
            return None
        v = ast.literal_eval(s)
    if isinstance(v, (int, np.integer)):
        return int(v)
    t = tuple(int(x) for x in v)
    return t


_PARSERS = {"int": _parse_int, "float": _parse_float, "bool": _parse_bool, "shape": _parse_shape,
            "str": _parse_str, "dtype": _parse_dtype, "axis": _parse_axis}
_TYPE_DOC = {"int": "int", "float": "float", "bool": "boolean", "shape": "Shape(tuple)",
             "str": "string", "dtype": "dtype", "axis": "int or tuple of int"}


@dataclass(frozen=True)
class Param:
    """One typed operator parameter."""

    name: str
    type: str
    default: Any = REQUIRED
    doc: str = ""
    choices: tuple | None = None
    optional: bool = False  # None is accepted

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def parse(self, value, where: str):
        """Parse one value; ``where`` is ``Op(name="", k="v", ...)`` for error messages."""
        if value is None or (self.optional and isinstance(value, str) and value == "None"):
            if self.optional or self.default is None:
                return None
        try:
            out = _PARSERS[self.type](value)
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError(f"Invalid Parameter format for {self.name} expect {_TYPE_DOC[self.type]} "
                             f"but value='{value}', in operator {where}") from None
        if self.choices is not None and out not in self.choices:
            valid = ", ".join(f"'{c}'" for c in sorted(self.choices, key=_choice_key))
            raise MXNetError(f"Invalid Input: '{value}', valid values are: {{{valid}}}, in operator {where}")
        return out

    def doc_line(self) -> str:
        kind = (("{" + ", ".join(repr(c) for c in self.choices) + "}") if self.choices
                else _TYPE_DOC[self.type])
        dflt = "required" if self.required else f"optional, default={self.default!r}"
        return f"{self.name} : {kind}, {dflt}\n    {self.doc}"


def _choice_key(c):
    """Sort key of a parameter choice (dtype choices by MXNet's name)."""
    if isinstance(c, np.dtype) or (isinstance(c, type) and issubclass(c, np.generic)):
        return _mx_str(c)
    return c


def _listify(v):
    return v if callable(v) else (lambda p, _v=tuple(v): _v)


def merge_shape(a, b):
    """The combination of two views of one shape (0 = unknown dim); None if they conflict."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    a, b = tuple(a), tuple(b)
    if a == b:
        return a
    if len(a) != len(b) or any(x and y and x != y for x, y in zip(a, b)):
        return None
    return tuple(x or y for x, y in zip(a, b))


def assign_shape(shapes, i, want, what="input"):
    """Set ``shapes[i]`` to ``want`` unless it conflicts (ShapeError, MXNet's wording)."""
    have = shapes[i]
    merged = merge_shape(have, want)
    if merged is None:
        raise ShapeError(f"Shape inconsistent, Provided = {_sh(have)}, inferred shape={_sh(want)}")
    shapes[i] = merged


def same_shape(p, ins, outs):
    """Inference rule for ops whose inputs and outputs all share one shape."""
    known = None
    for s in list(ins) + list(outs):
        if s is not None:
            known = s if known is None else (merge_shape(known, s) or known)
    if known is None:
        return ins, outs
    for i, s in enumerate(ins):
        if s is not None and merge_shape(s, known) is None:
            raise ShapeError(f"Incompatible attr in node {{node}} at {i}-th input: expected "
                             f"{_sh(known)}, got {_sh(s)}")
    return [known] * len(ins), [known] * len(outs)


def same_type(p, ins, outs):
    """Inference rule: every input and output has the first known type."""
    known = next((t for t in list(ins) + list(outs) if t is not None), None)
    if known is None:
        return ins, outs
    for i, t in enumerate(ins):
        if t is not None and t is not known and np.dtype(t) != np.dtype(known):
            raise TypeInferError(f"Incompatible attr in node {{node}} at {i}-th input: expected "
                                 f"{dtype_name(known)}, got {dtype_name(t)}")
    return [known] * len(ins), [known] * len(outs)


def zero_gradient(F, p, ins, outs, ograds):
    """Gradient rule of ops whose gradient is defined as zero (comparisons, argmax, BlockGrad)."""
    return [F.zeros_like(x) for x in ins]


def _sh(s):
    return "[" + ",".join(str(int(d)) for d in s) + "]"


@dataclass
class OpDef:
    """One operator, defined once for NDArray, Symbol and the executor."""

    name: str
    forward: Callable
    infer_shape: Callable
    params: Sequence[Param] = ()
    inputs: Any = ("data",)             # names, or fn(p) -> names (aux states not included)
    aux: Any = ()                       # names, or fn(p) -> names
    outputs: Any = ("output",)          # visible output names, or fn(p)
    num_hidden_outputs: Any = 0         # int or fn(p)
    infer_type: Callable = same_type
    gradient: Callable | None = None
    is_loss: bool = False               # ignores head gradients
    hint: str | None = None             # auto-name prefix; lowercased name by default
    aliases: Sequence[str] = ()
    doc: str = ""
    key_var_num_args: str | None = None  # variadic ops: the param counting inputs
    mutates_aux: bool = False
    no_grad_inputs: Sequence[str] = ()   # inputs that never get a gradient (labels)
    public: bool = True                 # exported as mx.nd.X / mx.sym.X
    # Optional: fast_kernel(p) -> (kernel(*tensors) -> tensor, needs_check) or None. The same
    # computation as ``forward`` for these parameters, for the imperative fast path (a result that
    # is the input tensor itself is copied there; views of it are not allowed). needs_check
    # False: the kernel validates its inputs itself (it accepts any input, or raises for the
    # ones it does not take; those calls then go to the general path: rules, errors, forward).
    fast_kernel: Callable | None = None
    # Optional: inplace_forward(p, ins, oc) computes the (single) output into ins[0]'s storage and
    # returns it. The executor uses it when ins[0] is a fresh value (see fresh_output) that no
    # other step reads (MXNet's FInplaceOption, e.g. Activation after Convolution).
    inplace_forward: Callable | None = None
    # forward returns newly allocated tensors that alias neither the inputs nor each other
    # (views of its own new results allowed): their storage may be reused in place.
    fresh_output: bool = False
    # False (or fn(p) -> False) for ops whose forward draws random numbers (Dropout, samplers):
    # executors keep their graphs' forward values, since a forward cannot be replayed exactly.
    deterministic: Any = True
    # Optional: input_init(p) -> {input name: initializer JSON}: the ``__init__`` attribute of the
    # variables a symbol call makes for missing inputs (MXNet's FSetInputVarAttrOnCompose, e.g.
    # PReLU's gamma starts at 0.25, BatchNorm's moving_var at one).
    input_init: Callable | None = None
    # Optional storage-type rule (MXNet's FInferStorageType, see neomx/ops/sparse.py):
    # infer_storage_type(p, in_stypes, in_shapes) -> output stypes, or None where MXNet has no
    # sparse kernel (the dispatch then computes the dense form after MXNet's fallback warning);
    # sparse_forward(p, ins, out_stypes, oc) computes them (ins: tensors or ops.sparse.Sparse).
    # Only consulted when an input is sparse: dense calls never look at them.
    infer_storage_type: Callable | None = None
    sparse_forward: Callable | None = None
    param_map: dict = field(init=False)

    def __post_init__(self):
        self.param_map = {prm.name: prm for prm in self.params}
        shadowing = [n for n in self.param_map if hasattr(dict, n)]
        if shadowing:  # Params' attribute access would hide the dict methods
            raise ValueError(f"{self.name}: parameter names {shadowing} shadow dict methods")
        self._inputs = _listify(self.inputs)
        self._aux = _listify(self.aux)
        self._outputs = _listify(self.outputs)
        nh = self.num_hidden_outputs
        self._nhidden = nh if callable(nh) else (lambda p, _n=nh: _n)
        if self.hint is None:
            self.hint = self.name.lower()
        self.static_arity = not (callable(self.inputs) or callable(self.outputs) or
                                 callable(self.aux) or callable(self.num_hidden_outputs))
        if self.static_arity:
            self._n_in, self._n_out = len(self.inputs), len(self.outputs)

    # --- arity ----------------------------------------------------------------------------
    def list_inputs(self, p) -> list:
        return list(self._inputs(p))

    def list_aux(self, p) -> list:
        return list(self._aux(p))

    def list_outputs(self, p) -> list:
        return list(self._outputs(p))

    def num_visible_outputs(self, p) -> int:
        return len(self._outputs(p))

    def num_outputs(self, p) -> int:
        return len(self._outputs(p)) + self._nhidden(p)

    def is_deterministic(self, p) -> bool:
        d = self.deterministic
        return bool(d(p) if callable(d) else d)

    # --- parameters -----------------------------------------------------------------------
    def parse_params(self, kwargs: dict, node_name: str = "") -> tuple[Params, dict]:
        """Parse user params; returns (full parsed Params, the given ones as MXNet strings)."""
        p = Params()
        given = {k: (v if isinstance(v, str) else _mx_str(v)) for k, v in kwargs.items()}
        # MXNet names the operator as Op(name="", k="v", ...) in parameter errors.
        where = f"{self.name}(name=\"\"" + "".join(f", {k}=\"{v}\"" for k, v in given.items()) + ")"
        for key, val in kwargs.items():
            prm = self.param_map.get(key)
            if prm is None:
                raise MXNetError(
                    f"Cannot find argument '{key}', Possible Arguments:\n----------------\n"
                    + "\n".join(x.doc_line() for x in self.params) + f"\n, in operator {where}")
            p[key] = prm.parse(val, where)
        for prm in self.params:
            if prm.name not in p:
                if prm.required:
                    raise MXNetError(f"Required parameter {prm.name} of {_TYPE_DOC[prm.type]} is not "
                                     f"presented, in operator {where}")
                p[prm.name] = prm.default
        return p, given

    def positional_params(self, args, kwargs):
        """MXNet's generated signatures: the inputs (auxiliary states included), then the
        parameters in order (``mx.nd.clip(x, 0, 1)``, ``mx.sym.Dropout(x, 0.5)``). Returns the
        positional inputs and the keywords with the positional parameters added."""
        if callable(self.inputs) or callable(self.aux):
            return args, kwargs
        n_in = len(self.inputs) + len(self.aux)
        if len(args) <= n_in:
            return args, kwargs
        extra, args = args[n_in:], args[:n_in]
        if len(extra) > len(self.params):
            raise MXNetError(f"{self.name}: too many positional arguments ({n_in + len(extra)}), "
                             f"expected at most {n_in + len(self.params)}")
        kwargs = dict(kwargs)
        for prm, v in zip(self.params, extra):
            if prm.name in kwargs:
                raise MXNetError(f"{self.name}: argument '{prm.name}' given twice")
            kwargs[prm.name] = v
        return args, kwargs

    def _drop_none_inputs(self, args, kwargs):
        if callable(self.inputs) or callable(self.aux):
            return [a for a in args if a is not None], kwargs
        kwargs = dict(kwargs)
        for name, a in zip(list(self.inputs) + list(self.aux), args):
            if a is None:
                continue
            if kwargs.get(name) is not None:
                raise MXNetError(f"{self.name}: input '{name}' given twice")
            kwargs[name] = a
        return [], kwargs

    def bind_call(self, args, kwargs, is_input, extra_params=None):
        """Split one call ``op(*args, **kwargs)`` into parameters and inputs: the single place
        where ``mx.nd.<op>``, ``mx.sym.<op>`` and the gradient pass's ``F.<op>`` do it.

        ``is_input(value)`` says whether a value is an input (an NDArray, a Symbol, a handle).
        Positional arguments are inputs in the op's order (arguments, then auxiliary states);
        keyword inputs go to their named slot; a keyword input given as None counts as missing
        (an explicit None *parameter* is kept: MXNet stores it as "None"). ``extra_params``
        (e.g. attribute-scope keys) fill parameters not given. Returns
        ``(params, given, slots, names)``: ``slots[i]`` is the input for ``names[i]`` or None.
        """
        args, kwargs = self.positional_params(args, kwargs)
        if any(a is None for a in args):  # a positional None input is not given (MXNet)
            args, kwargs = self._drop_none_inputs(args, kwargs)
        kw_inputs, params = {}, {}
        if kwargs:
            fixed = () if callable(self.inputs) else self.inputs
            for k, v in kwargs.items():
                if is_input(v):
                    kw_inputs[k] = v
                elif not (v is None and k in fixed):
                    params[k] = v
        if params and not self.params:
            params = {}  # an operator without parameters ignores keywords (MXNet's nd calls)
        if self.key_var_num_args and self.key_var_num_args not in params:
            params[self.key_var_num_args] = len(args) + len(kw_inputs)
        if extra_params:
            for k, v in extra_params.items():
                params.setdefault(k, v)
        p, given = self.parse_params(params)
        names = self.list_inputs(p) + self.list_aux(p)
        if len(args) > len(names):
            raise MXNetError(f"{self.name}: too many positional inputs ({len(args)}), expected at "
                             f"most {len(names)}: {names}")
        slots = list(args) + [None] * (len(names) - len(args))
        for k, v in kw_inputs.items():
            if k not in names:
                raise MXNetError(f"{self.name}: unknown input '{k}', inputs are {names}")
            i = names.index(k)
            if slots[i] is not None:
                raise MXNetError(f"{self.name}: input '{k}' given twice")
            slots[i] = v
        return p, given, slots, names

    def signature(self, symbolic: bool):
        """The Python signature of ``mx.sym.<op>`` (``symbolic``) or ``mx.nd.<op>``."""
        P = inspect.Parameter
        params = []
        if callable(self.inputs):
            params.append(P("args", P.VAR_POSITIONAL))
        else:
            params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in self.inputs]
        # fixed-input ops take their parameters positionally too, in this order (MXNet's)
        kind = P.KEYWORD_ONLY if callable(self.inputs) else P.POSITIONAL_OR_KEYWORD
        if not callable(self.inputs) and not callable(self.aux):
            params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in self.aux]
        for prm in self.params:
            # (a required parameter after defaulted inputs: None stands for "not given")
            dflt = prm.default if not prm.required else (None if kind is not P.KEYWORD_ONLY else P.empty)
            params.append(P(prm.name, kind, default=dflt))
        params.append(P("name", P.KEYWORD_ONLY, default=None))
        params.append(P("attr", P.KEYWORD_ONLY, default=None) if symbolic
                      else P("out", P.KEYWORD_ONLY, default=None))
        params.append(P("kwargs", P.VAR_KEYWORD))
        return inspect.Signature(params)

    def signature_doc(self) -> str:
        lines = [self.doc.strip() or self.name, "", "Parameters", "----------"]
        if not callable(self.inputs):
            lines += [f"{n} : NDArray or Symbol\n    Input {n}." for n in self.inputs]
        else:
            lines += ["*args : NDArray or Symbol\n    Input arrays."]
        lines += [prm.doc_line() for prm in self.params]
        return "\n".join(lines)


def _mx_str(v) -> str:
    """The string MXNet stores for a Python parameter value (``str(value)``)."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, np.generic):
        return str(v.item())
    if isinstance(v, list):
        return str(tuple(v))
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, np.dtype):
        return v.names[0] if v.names else v.name  # bfloat16's structured dtype: 'bfloat16'
    return str(v)


_REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    for name in (op.name, *op.aliases):
        if name in _REGISTRY:
            raise MXNetError(f"operator {name} registered twice")
        _REGISTRY[name] = op
    return op


def get(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MXNetError(f"Cannot find operator {name}") from None


def find(name: str) -> OpDef | None:
    return _REGISTRY.get(name)


def all_ops() -> dict[str, OpDef]:
    """Every registered name (aliases included) -> OpDef."""
    return dict(_REGISTRY)
