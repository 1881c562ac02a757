"""Elementwise math operators: trigonometric and hyperbolic functions, special functions (erf,
gamma), logs and roots, MXNet's rounding rules, hard_sigmoid/softsign/smooth_l1, hypot and the
logical ops with a scalar.

MXNet's semantics, checked against MXNet 1.9.1 (``tools/make_golden_math.py``):

* Integer arrays are accepted and keep their dtype: the value is computed in floating point
  and truncated (``sin`` of int32 ``[1, 2]`` is ``[0, 0]``; NaN and infinities become the most
  negative integer, as the C cast does). A scalar parameter is cast to the array's dtype first
  (``smooth_l1(int32, scalar=0.5)`` uses 0). float16 computes in float32.
* ``round`` rounds half away from zero, ``rint`` rounds half *down* (MXNet's rint is
  ``floor`` when ``a - floor(a) <= ceil(a) - a``: ``rint(0.5) == 0``, ``rint(-0.5) == -1``),
  ``fix`` is ``trunc``.
* Gradients follow MXNet's ``_backward_*`` formulas, written with other ops through ``F``;
  rounding ops and the logical ops have a zero gradient, as MXNet defines them.
"""
from __future__ import annotations

import math

import torch

from ..base import MXNetError
from .elemwise import (_SCALAR_PARAMS, _binary_forward, _binary_gradient, _broadcast_infer,
                       _unary_forward, _unary_gradient, register_unary)
from .registry import OpDef, Param, register, same_shape, zero_gradient

_F32 = (torch.float32, torch.float64)
_HALF = (torch.float16, torch.bfloat16)


def _to_int(r, dt):
    """A floating result cast to an integer dtype as MXNet's CPU cast does it: NaN, infinities
    and out-of-range values become the most negative value (explicitly, so that every device
    gives it; CUDA's conversion would saturate)."""
    if dt in (torch.int32, torch.int64):
        lo = torch.iinfo(dt).min
        ok = torch.isfinite(r) & (r >= lo) & (r < -float(lo))
        r = torch.where(ok, r, torch.full_like(r, lo))
    return r.to(dt)


def _real(fn, precise=False):
    """``fn`` on any dtype, as MXNet computes it: float32/float64 natively (``precise``: via
    float64, for special functions whose float32 kernels round differently), half precision
    in float32, integers in floating point and truncated back."""
    def kernel(x):
        dt = x.dtype
        if dt in _F32:
            return fn(x.double()).to(dt) if precise and dt is torch.float32 else fn(x)
        if dt in _HALF:
            return fn(x.float()).to(dt)
        return _to_int(fn(x.to(torch.float64 if precise or dt is torch.int64 else torch.float32)), dt)
    return kernel


def _cbrt(x):
    """Real cube root (one Newton step after pow, so exact cubes give exact roots)."""
    y = torch.copysign(torch.abs(x).pow(1.0 / 3.0), x)
    ok = torch.isfinite(y) & (y != 0)
    y2 = y - (y * y * y - x) / (3 * y * y)
    return torch.where(ok, y2, y)


def _gamma(x):
    """tgamma: exp(lgamma) with the sign of Gamma; poles at 0 (signed inf) and NaN at the
    negative integers and at -inf."""
    fl = torch.floor(x)
    neg = (x < 0) & (torch.remainder(fl, 2) == 1)
    y = torch.exp(torch.lgamma(x))
    y = torch.where(neg, -y, y)
    y = torch.where((x < 0) & (x == fl), torch.full_like(x, math.nan), y)
    y = torch.where(x == -math.inf, torch.full_like(x, math.nan), y)
    return torch.where(x == 0, torch.copysign(torch.full_like(x, math.inf), x), y)


def _erfinv_int(x):
    """erfinv of integer arrays: MXNet gives 0 outside [-1, 1] (its kernel's last branch)."""
    y = torch.erfinv(x.double())
    return _to_int(torch.where(x.abs() > 1, torch.zeros_like(y), y), x.dtype)


def _erfinv(x):
    return _erfinv_int(x) if not (x.is_floating_point()) else _real(torch.erfinv, True)(x)


def _round(x):
    """Half away from zero (C ``round``), exact for every float: trunc + sign where the
    fraction is at least 0.5."""
    t = torch.trunc(x)
    return torch.where(torch.abs(x - t) >= 0.5, t + torch.sign(x), t)


def _rint(x):
    """MXNet's rint: floor(a) when a - floor(a) <= ceil(a) - a, else ceil(a)."""
    f, c = torch.floor(x), torch.ceil(x)
    return torch.where(x - f <= c - x, f, c)


def _integral(fn):
    """Rounding ops: identity on integer arrays."""
    return lambda x: fn(x) if x.is_floating_point() else x.clone()


def _logical_not(x):
    return (x == 0).to(x.dtype)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
# MXNet's degrees/radians multiply by 180/pi and pi/180 in single precision (float64 arrays too)
_PI32, _180 = torch.tensor(math.pi, dtype=torch.float32), torch.tensor(180.0, dtype=torch.float32)
_DEG, _RAD = float(_180 / _PI32), float(_PI32 / _180)


def _mul(F, g, x):
    return F.elemwise_mul(g, x)


def _rsqrt_1m_sq(F, x):
    """1 / sqrt(1 - x^2)"""
    return F.rsqrt(F._rminus_scalar(F.square(x), scalar=1.0))


# name, torch fn (any dtype), gradient(F, x, y, g) or None (zero gradient)
_UNARY = [
    ("sin", _real(torch.sin), lambda F, x, y, g: _mul(F, g, F.cos(x))),
    ("cos", _real(torch.cos), lambda F, x, y, g: F.negative(_mul(F, g, F.sin(x)))),
    ("tan", _real(torch.tan),
     lambda F, x, y, g: _mul(F, g, F._plus_scalar(F.square(y), scalar=1.0))),
    ("arcsin", _real(torch.asin), lambda F, x, y, g: _mul(F, g, _rsqrt_1m_sq(F, x))),
    ("arccos", _real(torch.acos),
     lambda F, x, y, g: F.negative(_mul(F, g, _rsqrt_1m_sq(F, x)))),
    ("arctan", _real(torch.atan),
     lambda F, x, y, g: F.elemwise_div(g, F._plus_scalar(F.square(x), scalar=1.0))),
    ("sinh", _real(torch.sinh), lambda F, x, y, g: _mul(F, g, F.cosh(x))),
    ("cosh", _real(torch.cosh), lambda F, x, y, g: _mul(F, g, F.sinh(x))),
    ("arcsinh", _real(torch.asinh),
     lambda F, x, y, g: _mul(F, g, F.rsqrt(F._plus_scalar(F.square(x), scalar=1.0)))),
    ("arccosh", _real(torch.acosh),
     lambda F, x, y, g: _mul(F, g, F.rsqrt(F._minus_scalar(F.square(x), scalar=1.0)))),
    ("arctanh", _real(torch.atanh),
     lambda F, x, y, g: F.elemwise_div(g, F._rminus_scalar(F.square(x), scalar=1.0))),
    ("degrees", _real(lambda x: x * _DEG), lambda F, x, y, g: F._mul_scalar(g, scalar=_DEG)),
    ("radians", _real(lambda x: x * _RAD), lambda F, x, y, g: F._mul_scalar(g, scalar=_RAD)),
    ("erf", _real(torch.erf, True),
     lambda F, x, y, g: _mul(F, g, F._mul_scalar(F.exp(F.negative(F.square(x))),
                                                 scalar=2.0 / math.sqrt(math.pi)))),
    ("erfinv", _erfinv,
     lambda F, x, y, g: _mul(F, g, F._mul_scalar(F.exp(F.square(y)), scalar=math.sqrt(math.pi) / 2))),
    ("gamma", _real(_gamma, True), lambda F, x, y, g: _mul(F, g, F.elemwise_mul(y, F._digamma(x)))),
    ("gammaln", _real(torch.lgamma, True), lambda F, x, y, g: _mul(F, g, F._digamma(x))),
    ("log1p", _real(torch.log1p),
     lambda F, x, y, g: F.elemwise_div(g, F._plus_scalar(x, scalar=1.0))),
    ("expm1", _real(torch.expm1), lambda F, x, y, g: _mul(F, g, F.exp(x))),
    ("log2", _real(torch.log2), lambda F, x, y, g: F.elemwise_div(g, F._mul_scalar(x, scalar=_LN2))),
    ("log10", _real(torch.log10),
     lambda F, x, y, g: F.elemwise_div(g, F._mul_scalar(x, scalar=_LN10))),
    ("rsqrt", _real(torch.rsqrt),
     lambda F, x, y, g: _mul(F, g, F._mul_scalar(F.elemwise_mul(y, F.square(y)), scalar=-0.5))),
    ("cbrt", _real(_cbrt, True),
     lambda F, x, y, g: F.elemwise_div(g, F._mul_scalar(F.square(y), scalar=3.0))),
    ("rcbrt", _real(lambda x: torch.reciprocal(_cbrt(x)), True),
     lambda F, x, y, g: _mul(F, g, F.elemwise_div(F._mul_scalar(y, scalar=-1.0 / 3.0), x))),
    ("trunc", _integral(torch.trunc), None),
    ("rint", _integral(_rint), None),
    ("fix", _integral(torch.trunc), None),
    ("softsign", _real(lambda x: x / (1 + torch.abs(x))),
     lambda F, x, y, g: F.elemwise_div(g, F.square(F._plus_scalar(F.abs(x), scalar=1.0)))),
    ("logical_not", _logical_not, None),
]
for _name, _fn, _rule in _UNARY:
    register_unary(_name, _fn, _rule,
                   f"Elementwise ``{_name}`` (MXNet's semantics, integer arrays included).")

register(OpDef("_digamma", _unary_forward(_real(torch.digamma, True)), same_shape, public=False,
               doc="Elementwise digamma (the gradient of gammaln; not public in MXNet 1.9.1)."))


# --- unary ops with parameters -------------------------------------------------------------------
def _scalar_for(x, s):
    """The scalar cast to the array's dtype, as MXNet does."""
    return float(int(s)) if not x.is_floating_point() else s


def _smooth_l1(x, sigma):
    """0.5 (sigma x)^2 where |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2."""
    s2 = sigma * sigma
    ax = torch.abs(x)
    inv = math.inf if s2 == 0 else 1.0 / s2
    return torch.where(ax < inv, 0.5 * s2 * x * x, ax - 0.5 * inv)


def _smooth_l1_forward(p, ins, oc):
    x = ins[0]
    return _real(lambda t: _smooth_l1(t, _scalar_for(x, _f32(p.scalar))))(x)


def _smooth_l1_gradient(F, p, ins, outs, ograds):
    x, g, s2 = ins[0], ograds[0], p.scalar * p.scalar
    inside = F._lesser_scalar(F.abs(x), scalar=(1.0 / s2) if s2 else math.inf)
    d = F.elemwise_add(F.elemwise_mul(inside, F._mul_scalar(x, scalar=s2)),
                       F.elemwise_mul(F._rminus_scalar(inside, scalar=1.0), F.sign(x)))
    return [F.elemwise_mul(g, d)]


register(OpDef(
    "smooth_l1", _smooth_l1_forward, same_shape,
    params=(Param("scalar", "float", 1.0, "scalar input (sigma)"),),
    gradient=_smooth_l1_gradient,
    fast_kernel=lambda p: ((lambda x: _smooth_l1_forward(p, [x], None)), False),
    doc="Smooth L1 loss: ``0.5 (sigma x)^2`` where ``|x| < 1/sigma^2``, else "
        "``|x| - 0.5/sigma^2`` (``sigma`` is ``scalar``)."))


def _f32(v):
    """A ``float`` parameter as MXNet holds it (single precision, for float64 arrays too)."""
    return float(torch.tensor(v, dtype=torch.float32))


def _hard_sigmoid(x, alpha, beta):
    if not x.is_floating_point():
        raise MXNetError(f"This operation only support floating point types, not "
                         f"{str(x.dtype).replace('torch.', '')}")
    return torch.clamp(x * _f32(alpha) + _f32(beta), 0.0, 1.0)


def _hard_sigmoid_fast(p):
    alpha, beta = _f32(p.alpha), _f32(p.beta)

    def kernel(x):
        if not x.is_floating_point():
            raise ValueError  # the general path raises MXNet's error
        return torch.clamp(x * alpha + beta, 0.0, 1.0)
    return kernel, False


def _hard_sigmoid_gradient(F, p, ins, outs, ograds):
    y = outs[0]
    inside = F.elemwise_mul(F._greater_scalar(y, scalar=0.0), F._lesser_scalar(y, scalar=1.0))
    return [F.elemwise_mul(ograds[0], F._mul_scalar(inside, scalar=_f32(p.alpha)))]


register(OpDef(
    "hard_sigmoid", lambda p, ins, oc: _hard_sigmoid(ins[0], p.alpha, p.beta), same_shape,
    params=(Param("alpha", "float", 0.2, "Slope of hard sigmoid"),
            Param("beta", "float", 0.5, "Bias of hard sigmoid.")),
    gradient=_hard_sigmoid_gradient, fast_kernel=_hard_sigmoid_fast,
    doc="``max(0, min(1, alpha * x + beta))``; floating-point arrays only."))


# --- hypot and logical ops with a scalar ---------------------------------------------------------
def _hypot(a, b):
    if a.is_floating_point():
        return torch.hypot(a, b)
    return _to_int(torch.hypot(a.double(), b.double()), a.dtype)


def _hypot_rule(F, a, b, y, g):
    return (F.elemwise_mul(g, F.elemwise_div(a, y)), F.elemwise_mul(g, F.elemwise_div(b, y)))


# (fast kernels with needs_check: the plan runs them on shapes and dtypes the rules accepted)
register(OpDef("_hypot", _binary_forward(_hypot), same_shape, inputs=("lhs", "rhs"),
               aliases=("_Hypot",), gradient=_binary_gradient(_hypot_rule, False),
               fast_kernel=lambda p: (_hypot, True),
               doc="``sqrt(lhs^2 + rhs^2)`` of two arrays of the same shape."))
register(OpDef("broadcast_hypot", _binary_forward(_hypot), _broadcast_infer, inputs=("lhs", "rhs"),
               gradient=_binary_gradient(_hypot_rule, True),  # (elemwise ops -> broadcast_*)
               fast_kernel=lambda p: (_hypot, True),
               doc="``sqrt(lhs^2 + rhs^2)``, with numpy-style broadcasting."))


def _scalar_op(fn):
    def forward(p, ins, oc):
        x = ins[0]
        return fn(x, _scalar_for(x, p.scalar))
    return forward


def _hypot_scalar(x, s):
    return _real(lambda t: torch.hypot(t, torch.full_like(t, s)))(x)


def _logical_scalar(fn):
    return lambda x, s: fn(x != 0, torch.tensor(s != 0)).to(x.dtype)


_SCALAR = [
    ("_hypot_scalar", ("_HypotScalar",), _hypot_scalar,
     lambda F, p, ins, outs, ograds: [F.elemwise_mul(ograds[0], F.elemwise_div(ins[0], outs[0]))]),
    ("_logical_and_scalar", (), _logical_scalar(torch.logical_and), zero_gradient),
    ("_logical_or_scalar", (), _logical_scalar(torch.logical_or), zero_gradient),
    ("_logical_xor_scalar", (), _logical_scalar(torch.logical_xor), zero_gradient),
]
for _name, _aliases, _fn, _grad in _SCALAR:
    _fwd = _scalar_op(_fn)
    register(OpDef(_name, _fwd, same_shape, params=_SCALAR_PARAMS, aliases=_aliases,
                   gradient=_grad, fast_kernel=lambda p, _f=_fwd: ((lambda x: _f(p, [x], None)), False),
                   doc=f"``{_name.strip('_')}``: an array and a scalar."))


# --- contrib math (mx.nd.contrib.<name> in MXNet; registered as _contrib_<name>) -------------------
# (MXNet's contrib isfinite/isinf/isnan are Python compositions in ndarray/contrib.py, not
# operators: they belong with the contrib namespace, not in the op table.)
def _sign_nan0(x):
    """sign with sign(nan) = 0, as MXNet's sign_ste."""
    return torch.nan_to_num(torch.sign(x), nan=0.0) if x.is_floating_point() else torch.sign(x)


_CONTRIB_UNARY = [  # name, input name, kernel, gradient rule (F, x, y, g) or None
    # straight-through estimators: round/sign forward, identity gradient
    ("_contrib_round_ste", "data", _integral(_round), lambda F, x, y, g: g),
    ("_contrib_sign_ste", "data", _sign_nan0, lambda F, x, y, g: g),
]
for _name, _in, _fn, _rule in _CONTRIB_UNARY:
    register(OpDef(_name, _unary_forward(_fn), same_shape, inputs=(_in,), hint=_name[9:],
                   gradient=_unary_gradient(_rule), fast_kernel=lambda p, _fn=_fn: (_fn, False),
                   doc=f"``mx.nd.contrib.{_name[9:]}`` (MXNet's semantics)."))


def _quadratic(p):
    a, b, c = _f32(p.a), _f32(p.b), _f32(p.c)
    return _real(lambda x: (x * a + b) * x + c)


register(OpDef(
    "_contrib_quadratic", lambda p, ins, oc: _quadratic(p)(ins[0]), same_shape, hint="quadratic",
    params=(Param("a", "float", 0.0, "Coefficient of the quadratic term in the quadratic function."),
            Param("b", "float", 0.0, "Coefficient of the linear term in the quadratic function."),
            Param("c", "float", 0.0, "Constant term in the quadratic function.")),
    gradient=lambda F, p, ins, outs, ograds: [F.elemwise_mul(ograds[0], F._plus_scalar(
        F._mul_scalar(ins[0], scalar=2 * _f32(p.a)), scalar=_f32(p.b)))],
    fast_kernel=lambda p: (_quadratic(p), False),
    doc="``a * x^2 + b * x + c`` elementwise (``mx.nd.contrib.quadratic``)."))


def _div_sqrt_dim(x):
    """x / sqrt(last dim); integer arrays divide by the truncated root (MXNet's DType cast)."""
    if not x.is_floating_point():
        return torch.div(x, int(math.sqrt(x.shape[-1])), rounding_mode="trunc")
    return _real(lambda t: t / math.sqrt(x.shape[-1]))(x)


register(OpDef(
    "_contrib_div_sqrt_dim", lambda p, ins, oc: _div_sqrt_dim(ins[0]), same_shape,
    hint="div_sqrt_dim",
    gradient=lambda F, p, ins, outs, ograds: [
        F._div_scalar(ograds[0], scalar=math.sqrt(ins[0].shape[-1]))],
    fast_kernel=lambda p: (_div_sqrt_dim, False),
    doc="``data / sqrt(data.shape[-1])`` (``mx.nd.contrib.div_sqrt_dim``)."))
