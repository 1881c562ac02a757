"""Elementwise operators: binary (same-shape and broadcasting), scalar, unary, comparisons."""
from __future__ import annotations

import numpy as np
import torch

from .registry import OpDef, Param, ShapeError, register, same_shape, zero_gradient, _sh

_FLOAT_TYPES = (torch.float16, torch.float32, torch.float64, torch.bfloat16)


def _is_int(t: torch.Tensor) -> bool:
    return t.dtype not in _FLOAT_TYPES


def _div(a, b):
    """MXNet division: C-style truncation for integer arrays."""
    if _is_int(a):
        return torch.div(a, b, rounding_mode="trunc").to(a.dtype)
    return torch.div(a, b)


def _mod(a, b):
    """mshadow's mod: the divisor's sign, like Python's % (torch.remainder), and 0 where the
    divisor is 0 (integer and floating point alike, as MXNet 1.9.1)."""
    if not isinstance(b, torch.Tensor):
        return torch.zeros_like(a) if b == 0 else torch.remainder(a, b)
    zero = b == 0
    if not bool(zero.any()):
        return torch.remainder(a, b)
    r = torch.remainder(a, torch.where(zero, torch.ones_like(b), b))
    return r.masked_fill(zero, 0) if r.shape == zero.shape else torch.where(zero, torch.zeros_like(r), r)


def _cmp(fn):
    return lambda a, b: fn(a, b).to(a.dtype)


# name, hint, aliases, torch fn, gradient(F, a, b, out, g) -> (da, db)
_BINARY = [
    ("elemwise_add", "_plus", ("_plus", "_add", "_Plus"), torch.add, lambda F, a, b, y, g: (g, g)),
    ("elemwise_sub", "_minus", ("_minus", "_sub", "_Minus"), torch.sub,
     lambda F, a, b, y, g: (g, F.negative(g))),
    ("elemwise_mul", "_mul", ("_mul", "_Mul"), torch.mul,
     lambda F, a, b, y, g: (F.elemwise_mul(g, b), F.elemwise_mul(g, a))),
    ("elemwise_div", "_div", ("_div", "_Div"), _div,
     lambda F, a, b, y, g: (F.elemwise_div(g, b),
                            F.negative(F.elemwise_mul(g, F.elemwise_div(y, b))))),
    ("_power", "_power", ("_Power",), torch.pow,
     lambda F, a, b, y, g: (F.elemwise_mul(g, F.elemwise_mul(b, F.elemwise_div(y, a))),
                            F.elemwise_mul(g, F.elemwise_mul(y, F.log(a))))),
    ("_mod", "_mod", ("_Mod",), _mod,
     lambda F, a, b, y, g: (g, F.negative(F.elemwise_mul(g, F.floor(F.elemwise_div(a, b)))))),
    ("_maximum", "_maximum", ("_Maximum",), torch.maximum,
     lambda F, a, b, y, g: (F.elemwise_mul(g, F._greater_equal(a, b)),
                            F.elemwise_mul(g, F._lesser(a, b)))),
    ("_minimum", "_minimum", ("_Minimum",), torch.minimum,
     lambda F, a, b, y, g: (F.elemwise_mul(g, F._lesser_equal(a, b)),
                            F.elemwise_mul(g, F._greater(a, b)))),
    ("_equal", "_equal", (), _cmp(torch.eq), None),
    ("_not_equal", "_not_equal", (), _cmp(torch.ne), None),
    ("_greater", "_greater", (), _cmp(torch.gt), None),
    ("_greater_equal", "_greater_equal", (), _cmp(torch.ge), None),
    ("_lesser", "_lesser", (), _cmp(torch.lt), None),
    ("_lesser_equal", "_lesser_equal", (), _cmp(torch.le), None),
    ("_logical_and", "_logical_and", (), lambda a, b: torch.logical_and(a, b).to(a.dtype), None),
    ("_logical_or", "_logical_or", (), lambda a, b: torch.logical_or(a, b).to(a.dtype), None),
    ("_logical_xor", "_logical_xor", (), lambda a, b: torch.logical_xor(a, b).to(a.dtype), None),
]

# broadcast_* names that pair with a same-shape op above
_BROADCAST = {"broadcast_add": ("elemwise_add", ("broadcast_plus",)),
              "broadcast_sub": ("elemwise_sub", ("broadcast_minus",)),
              "broadcast_mul": ("elemwise_mul", ()), "broadcast_div": ("elemwise_div", ()),
              "broadcast_power": ("_power", ()), "broadcast_mod": ("_mod", ()),
              "broadcast_maximum": ("_maximum", ()), "broadcast_minimum": ("_minimum", ()),
              "broadcast_equal": ("_equal", ()), "broadcast_not_equal": ("_not_equal", ()),
              "broadcast_greater": ("_greater", ()), "broadcast_greater_equal": ("_greater_equal", ()),
              "broadcast_lesser": ("_lesser", ()), "broadcast_lesser_equal": ("_lesser_equal", ()),
              "broadcast_logical_and": ("_logical_and", ()), "broadcast_logical_or": ("_logical_or", ()),
              "broadcast_logical_xor": ("_logical_xor", ())}

BINARY_FN = {}  # op name -> torch function; used by NDArray's operator fast path


def _binary_forward(fn):
    return lambda p, ins, oc: fn(ins[0], ins[1])


class _Broadcasting:
    """Lets a same-shape gradient rule serve its broadcast_* twin: elementwise ops inside the
    rule become their broadcasting versions (results are then reduced to each input's shape)."""

    _MAP = {"elemwise_add": "broadcast_add", "elemwise_sub": "broadcast_sub",
            "elemwise_mul": "broadcast_mul", "elemwise_div": "broadcast_div",
            "_equal": "broadcast_equal", "_greater": "broadcast_greater",
            "_greater_equal": "broadcast_greater_equal", "_lesser": "broadcast_lesser",
            "_lesser_equal": "broadcast_lesser_equal"}

    def __init__(self, F):
        self._F = F

    def __getattr__(self, name):
        return getattr(self._F, self._MAP.get(name, name))


def _binary_gradient(rule, broadcast):
    if rule is None:
        return zero_gradient

    def gradient(F, p, ins, outs, ograds):
        a, b = ins
        da, db = rule(_Broadcasting(F) if broadcast else F, a, b, outs[0], ograds[0])
        if broadcast:
            da = da if tuple(da.shape) == tuple(a.shape) else F._reduce_to(da, shape=a.shape)
            db = db if tuple(db.shape) == tuple(b.shape) else F._reduce_to(db, shape=b.shape)
        return [da, db]
    return gradient


def broadcast_shapes(a, b):
    """numpy-style broadcast of two shapes; ShapeError on a bad pair."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x == 0 or y == 0:  # an unknown dimension (partial inference) stays unknown
            out.append(0)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"operands could not be broadcast together with shapes {_sh(a)} {_sh(b)}")
    return tuple(out)


def _broadcast_infer(p, ins, outs):
    a, b = ins
    if a is None or b is None:
        return ins, outs
    return ins, [broadcast_shapes(a, b)]


_DOC_BIN = "Elementwise ``{fn}`` of two arrays{how}."
for _name, _hint, _aliases, _fn, _rule in _BINARY:
    BINARY_FN[_name] = _fn
    register(OpDef(_name, _binary_forward(_fn), same_shape, inputs=("lhs", "rhs"), hint=_hint,
                   aliases=_aliases, gradient=_binary_gradient(_rule, False),
                   doc=_DOC_BIN.format(fn=_name.strip("_"), how=" of the same shape")))
for _bname, (_base, _aliases) in _BROADCAST.items():
    _fn = BINARY_FN[_base]
    _rule = next(r for n, _, _, _, r in _BINARY if n == _base)
    BINARY_FN[_bname] = _fn
    register(OpDef(_bname, _binary_forward(_fn), _broadcast_infer, inputs=("lhs", "rhs"),
                   aliases=_aliases, gradient=_binary_gradient(_rule, True),
                   doc=_DOC_BIN.format(fn=_base.strip("_"), how=", with numpy-style broadcasting")))


# --- scalar ops ----------------------------------------------------------------------------------
def _scalar_value(x: torch.Tensor, s: float):
    """The scalar cast to the array's dtype, as MXNet does (int32 * 1.5 multiplies by 1)."""
    return int(s) if _is_int(x) else s


def _rdiv(x, s):
    return _div(torch.full_like(x, s), x)


# name, hint, torch fn(x, s), gradient(F, x, y, g, s)
_SCALAR = [
    ("_plus_scalar", "_plusscalar", torch.add, lambda F, x, y, g, s: g),
    ("_minus_scalar", "_minusscalar", torch.sub, lambda F, x, y, g, s: g),
    ("_rminus_scalar", "_rminusscalar", lambda x, s: torch.rsub(x, s),
     lambda F, x, y, g, s: F.negative(g)),
    ("_mul_scalar", "_mulscalar", torch.mul, lambda F, x, y, g, s: F._mul_scalar(g, scalar=s)),
    ("_div_scalar", "_divscalar", _div, lambda F, x, y, g, s: F._div_scalar(g, scalar=s)),
    ("_rdiv_scalar", "_rdivscalar", _rdiv,
     lambda F, x, y, g, s: F.negative(F.elemwise_mul(g, F.elemwise_div(y, x)))),
    ("_power_scalar", "_powerscalar", torch.pow,
     lambda F, x, y, g, s: F.elemwise_mul(g, F._mul_scalar(F._power_scalar(x, scalar=s - 1), scalar=s))),
    ("_rpower_scalar", "_rpower_scalar", lambda x, s: torch.pow(s, x),
     lambda F, x, y, g, s: F._mul_scalar(F.elemwise_mul(g, y), scalar=float(np.log(s)))),
    ("_mod_scalar", "_modscalar", _mod, lambda F, x, y, g, s: g),
    ("_rmod_scalar", "_rmodscalar", lambda x, s: _mod(torch.full_like(x, s), x),
     lambda F, x, y, g, s: F.negative(F.elemwise_mul(g, F.floor(F._rdiv_scalar(x, scalar=s))))),
    ("_maximum_scalar", "_maximumscalar", lambda x, s: torch.clamp(x, min=s),
     lambda F, x, y, g, s: F.elemwise_mul(g, F._greater_equal_scalar(x, scalar=s))),
    ("_minimum_scalar", "_minimumscalar", lambda x, s: torch.clamp(x, max=s),
     lambda F, x, y, g, s: F.elemwise_mul(g, F._lesser_equal_scalar(x, scalar=s))),
    ("_equal_scalar", "_equal_scalar", _cmp(torch.eq), None),
    ("_not_equal_scalar", "_not_equal_scalar", _cmp(torch.ne), None),
    ("_greater_scalar", "_greater_scalar", _cmp(torch.gt), None),
    ("_greater_equal_scalar", "_greater_equal_scalar", _cmp(torch.ge), None),
    ("_lesser_scalar", "_lesser_scalar", _cmp(torch.lt), None),
    ("_lesser_equal_scalar", "_lesser_equal_scalar", _cmp(torch.le), None),
]
SCALAR_FN = {}
# The same for floating-point arrays, where the scalar needs no cast: plain torch functions.
FLOAT_SCALAR_FN = {"_plus_scalar": torch.add, "_minus_scalar": torch.sub, "_rminus_scalar": torch.rsub,
                   "_mul_scalar": torch.mul, "_div_scalar": torch.div, "_power_scalar": torch.pow}


def _scalar_forward(fn):
    def forward(p, ins, oc):
        x = ins[0]
        return fn(x, _scalar_value(x, p.scalar))
    return forward


def _scalar_gradient(rule):
    if rule is None:
        return zero_gradient
    return lambda F, p, ins, outs, ograds: [rule(F, ins[0], outs[0], ograds[0], p.scalar)]


_SCALAR_PARAMS = (Param("scalar", "float", 1.0, "scalar input value"),
                  Param("is_int", "bool", True, "Indicate whether scalar input is int type"))
# MXNet's CamelCase aliases used by Symbol's operators (their lowercase is the auto-name hint).
_SCALAR_ALIASES = {"_plus_scalar": ("_PlusScalar",), "_minus_scalar": ("_MinusScalar",),
                   "_rminus_scalar": ("_RMinusScalar",), "_mul_scalar": ("_MulScalar",),
                   "_div_scalar": ("_DivScalar",), "_rdiv_scalar": ("_RDivScalar",),
                   "_mod_scalar": ("_ModScalar",), "_rmod_scalar": ("_RModScalar",),
                   "_power_scalar": ("_PowerScalar",), "_rpower_scalar": ("_RPowerScalar",),
                   "_maximum_scalar": ("_MaximumScalar",), "_minimum_scalar": ("_MinimumScalar",)}
for _name, _hint, _fn, _rule in _SCALAR:
    SCALAR_FN[_name] = _fn
    FLOAT_SCALAR_FN.setdefault(_name, _fn)
    register(OpDef(_name, _scalar_forward(_fn), same_shape, params=_SCALAR_PARAMS, hint=_hint,
                   aliases=_SCALAR_ALIASES.get(_name, ()),
                   gradient=_scalar_gradient(_rule),
                   doc=f"``{_name.strip('_').replace('_scalar', '')}`` of an array and a scalar."))


# --- unary ops -----------------------------------------------------------------------------------
def _sign(x):
    return torch.sign(x)


def _round_half_away(x):
    """C ``round`` (MXNet's): halves away from zero (torch.round rounds them to even)."""
    if not x.is_floating_point():
        return x.clone()
    t = torch.trunc(x)
    return torch.where(torch.abs(x - t) >= 0.5, t + torch.sign(x), t)


# name, torch fn, gradient(F, x, y, g)
_UNARY = [
    ("negative", torch.neg, lambda F, x, y, g: F.negative(g)),
    ("abs", torch.abs, lambda F, x, y, g: F.elemwise_mul(g, F.sign(x))),
    ("sign", _sign, None),
    ("exp", torch.exp, lambda F, x, y, g: F.elemwise_mul(g, y)),
    ("log", torch.log, lambda F, x, y, g: F.elemwise_div(g, x)),
    ("sqrt", torch.sqrt, lambda F, x, y, g: F.elemwise_div(F._mul_scalar(g, scalar=0.5), y)),
    ("square", torch.square, lambda F, x, y, g: F.elemwise_mul(g, F._mul_scalar(x, scalar=2.0))),
    ("reciprocal", torch.reciprocal,
     lambda F, x, y, g: F.negative(F.elemwise_mul(g, F.square(y)))),
    ("floor", torch.floor, None),
    ("ceil", torch.ceil, None),
    ("round", _round_half_away, None),
    ("relu", torch.relu, lambda F, x, y, g: F.elemwise_mul(g, F._greater_scalar(y, scalar=0.0))),
    ("sigmoid", torch.sigmoid, lambda F, x, y, g: F._backward_sigmoid(g, y)),
    ("tanh", torch.tanh, lambda F, x, y, g: F._backward_tanh(g, y)),
    ("_copy", lambda x: x.clone(), lambda F, x, y, g: g),
]
UNARY_FN = {}


def _unary_forward(fn):
    return lambda p, ins, oc: fn(ins[0])


def _unary_gradient(rule):
    if rule is None:
        return zero_gradient
    return lambda F, p, ins, outs, ograds: [rule(F, ins[0], outs[0], ograds[0])]


def register_unary(name, fn, rule, doc, aliases=()):
    """One elementwise operator from a kernel ``fn(tensor)`` (also its fast kernel) and a
    gradient rule ``rule(F, x, y, dy)`` (None: zero gradient)."""
    UNARY_FN[name] = fn
    register(OpDef(name, _unary_forward(fn), same_shape, gradient=_unary_gradient(rule),
                   fast_kernel=lambda p, _fn=fn: (_fn, False), aliases=aliases, doc=doc))


for _name, _fn, _rule in _UNARY:
    register_unary(_name, _fn, _rule, f"Elementwise ``{_name.strip('_')}``.",
                   aliases=("identity",) if _name == "_copy" else ())

# MXNet's _backward_sigmoid / _backward_tanh: the unary gradients in one output buffer (the
# products in MXNet's order, so the same bits: g * (y * (1 - y)), g * (1 - y * y)), each with its
# own gradient rule, so second derivatives go through them.
def _sigmoid_backward(p, ins, oc):
    g, y = ins
    t = torch.rsub(y, 1.0)
    return t.mul_(y).mul_(g)


def _tanh_backward(p, ins, oc):
    g, y = ins
    t = torch.mul(y, y)
    return t.neg_().add_(1.0).mul_(g)


register(OpDef("_backward_sigmoid", _sigmoid_backward, same_shape, inputs=("ograd", "output"),
               public=False, fresh_output=True,
               gradient=lambda F, p, ins, outs, ograds: [
                   F._backward_sigmoid(ograds[0], ins[1]),  # d/dg: y (1 - y)
                   F.elemwise_mul(ograds[0], F.elemwise_mul(  # d/dy: g (1 - 2 y)
                       ins[0], F._rminus_scalar(F._mul_scalar(ins[1], scalar=2.0), scalar=1.0)))],
               doc="Gradient of sigmoid from its output: ``ograd * y * (1 - y)``."))
register(OpDef("_backward_tanh", _tanh_backward, same_shape, inputs=("ograd", "output"),
               public=False, fresh_output=True,
               gradient=lambda F, p, ins, outs, ograds: [
                   F._backward_tanh(ograds[0], ins[1]),  # d/dg: 1 - y^2
                   F.elemwise_mul(ograds[0], F.elemwise_mul(  # d/dy: -2 g y
                       ins[0], F._mul_scalar(ins[1], scalar=-2.0)))],
               doc="Gradient of tanh from its output: ``ograd * (1 - y * y)``."))


register(OpDef("BlockGrad", lambda p, ins, oc: ins[0], same_shape, aliases=("stop_gradient",),
               gradient=zero_gradient,
               doc="Identity whose gradient is zero."))
register(OpDef("zeros_like", lambda p, ins, oc: torch.zeros_like(ins[0]), same_shape,
               gradient=zero_gradient, doc="An array of zeros shaped like the input."))
register(OpDef("ones_like", lambda p, ins, oc: torch.ones_like(ins[0]), same_shape,
               gradient=zero_gradient, doc="An array of ones shaped like the input."))


# --- add_n ---------------------------------------------------------------------------------------
def _add_n_forward(p, ins, oc):
    out = ins[0] + ins[1] if len(ins) > 1 else ins[0].clone()
    for t in ins[2:]:
        out.add_(t)
    return out


register(OpDef(
    "add_n", _add_n_forward, same_shape,
    params=(Param("num_args", "int", doc="Number of inputs to be summed."),),
    inputs=lambda p: [f"arg{i}" for i in range(p.num_args)], aliases=("ElementWiseSum", "_sum"),
    hint="elementwisesum", key_var_num_args="num_args",
    gradient=lambda F, p, ins, outs, ograds: [ograds[0]] * len(ins),
    doc="Adds all input arguments element-wise."))


# --- reduce-to-shape (gradient of broadcasting) ----------------------------------------------------
def _reduce_to_forward(p, ins, oc):
    x, shape = ins[0], tuple(p.shape)
    lead = x.dim() - len(shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1]
    out = x.sum(dim=axes, keepdim=True) if axes else x
    return out.reshape(shape)


register(OpDef(
    "_reduce_to", _reduce_to_forward,
    lambda p, ins, outs: (ins, [tuple(p.shape)]),
    params=(Param("shape", "shape", doc="target shape"),), public=False,
    doc="Sums a broadcast result back down to ``shape`` (the gradient of broadcasting)."))
