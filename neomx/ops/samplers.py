"""MXNet 1.9.1's samplers beyond uniform/normal (``neomx.ops.random``): ``_random_<dist>`` (scalar
parameters, no inputs), ``_random_<dist>_like`` (shape and dtype of ``data``), ``_sample_<dist>``
(one draw of ``shape`` per element of the parameter arrays: output shape = parameter shape +
``shape``), ``_random_randint``, ``_sample_multinomial`` and ``_shuffle``.

Values come from torch's generators (``mx.random.seed`` makes them repeatable); they differ
from MXNet's draws, the distributions are the same. Parametrisations are MXNet's: gamma
``alpha`` (shape) and ``beta`` (scale); exponential ``lam`` (rate); negative binomial ``k``
(successes) and ``p`` (success probability), counting failures; generalized negative binomial
``mu`` (mean) and ``alpha`` (dispersion: variance ``mu + alpha * mu**2``). Integer-valued
distributions are returned as floats, as MXNet's.
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError, dtype_torch
from .registry import OpDef, Param, ShapeError, TypeInferError, register

_SHAPE = Param("shape", "shape", (), "Shape of the output.")
_CTX = Param("ctx", "str", "", "Context of output, in format [cpu|gpu|cpu_pinned](n).")
_DTYPE = Param("dtype", "dtype", None, "Output data type (float32 when None).", optional=True)
_SAMPLE_SHAPE = Param("shape", "shape", (), "Shape to be sampled from each random distribution.")
_FLOATS = (np.float16, np.float32, np.float64)


def _dtype_error(value, valid, op):
    return MXNetError(f"Invalid Input: '{value}', valid values are: "
                      "{" + ", ".join(f"'{v}'" for v in valid) + "}" + f", in operator {op}")


def _float_dtype(p, what):
    dt = p.dtype or np.float32
    if np.dtype(dt) not in [np.dtype(t) for t in _FLOATS]:
        raise _dtype_error(np.dtype(dt).name, ("None", "float16", "float32", "float64"), what)
    return dt


def _work_dtype(dt):
    """The dtype to sample in (half precision samples in float32, then casts)."""
    return torch.float64 if dt == torch.float64 else torch.float32


# --- the distributions, on tensors of parameters (already of the output's shape) ----------------
def _exponential(lam):
    return torch.empty_like(lam).exponential_(1.0) / lam


def _gamma(alpha, beta):
    return torch._standard_gamma(alpha) * beta


def _poisson(lam):
    return torch.poisson(lam)


def _negative_binomial(k, p):
    # failures before the k-th success: Poisson(Gamma(k, (1 - p) / p))
    lam = _gamma(k, (1 - p) / p)
    return torch.poisson(torch.nan_to_num(lam, nan=0.0, posinf=0.0))


def _generalized_negative_binomial(mu, alpha):
    safe = torch.where(alpha > 0, alpha, torch.ones_like(alpha))
    lam = torch.where(alpha > 0, _gamma(1.0 / safe, safe * mu), mu)
    return torch.poisson(lam)


def _uniform(low, high):
    return low + (high - low) * torch.rand_like(low)


def _normal(mu, sigma):
    return mu + sigma * torch.randn_like(mu)


_DISTS = {
    # name: (scalar params (name, type, default, doc), sample inputs, kernel)
    "uniform": ((("low", "float", 0.0, "Lower bound of the distribution."),
                 ("high", "float", 1.0, "Upper bound of the distribution.")),
                ("low", "high"), _uniform),
    "normal": ((("loc", "float", 0.0, "Mean of the distribution."),
                ("scale", "float", 1.0, "Standard deviation of the distribution.")),
               ("mu", "sigma"), _normal),
    "exponential": ((("lam", "float", 1.0, "Lambda parameter (rate) of the exponential distribution."),),
                    ("lam",), _exponential),
    "gamma": ((("alpha", "float", 1.0, "Alpha parameter (shape) of the gamma distribution."),
               ("beta", "float", 1.0, "Beta parameter (scale) of the gamma distribution.")),
              ("alpha", "beta"), _gamma),
    "poisson": ((("lam", "float", 1.0, "Lambda parameter (rate) of the Poisson distribution."),),
                ("lam",), _poisson),
    "negative_binomial": ((("k", "int", 1, "Limit of unsuccessful experiments."),
                           ("p", "float", 1.0, "Failure probability in each experiment.")),
                          ("k", "p"), _negative_binomial),
    "generalized_negative_binomial": (
        (("mu", "float", 1.0, "Mean of the negative binomial distribution."),
         ("alpha", "float", 1.0, "Alpha (dispersion) parameter of the negative binomial distribution.")),
        ("mu", "alpha"), _generalized_negative_binomial),
}


def _no_gradient(F, p, ins, outs, ograds):
    return [None] * len(ins)


def _scalar_forward(kernel, names, opname):
    def forward(p, ins, oc):
        dt = dtype_torch(_float_dtype(p, opname))
        wt = _work_dtype(dt)
        shape = tuple(p.shape)
        args = [torch.full(shape, float(p[n]), dtype=wt, device=oc.device) for n in names]
        return kernel(*args).to(dt)
    return forward


def _like_forward(kernel, names):
    def forward(p, ins, oc):
        x = ins[0]
        wt = torch.float64 if x.dtype in (torch.float64, torch.int64) else torch.float32
        args = [torch.full(x.shape, float(p[n]), dtype=wt, device=x.device) for n in names]
        return kernel(*args).to(x.dtype)
    return forward


def _creation_infer_shape(p, ins, outs):
    shape = tuple(p.shape)  # () and 0 are unknown (MXNet 1.x's legacy shapes)
    return ins, [shape if shape else None]


def _random_infer_type(name):
    def infer_type(p, ins, outs):
        return ins, [_float_dtype(p, name)]
    return infer_type


def _like_infer_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]  # (any dtype: integer data gets cast draws)
    return [t], [t]


def _like_infer_shape(p, ins, outs):
    s = ins[0] if ins[0] is not None else outs[0]
    return [s], [s]


def _sample_infer_shape(p, ins, outs):
    known = next((s for s in ins if s is not None), None)
    for i, s in enumerate(ins):
        if s is not None and tuple(s) != tuple(known):
            raise ShapeError(f"the distribution parameters must have one shape, got "
                             f"{tuple(known)} and {tuple(s)}")
    if known is None:
        return ins, outs
    return [tuple(known)] * len(ins), [tuple(known) + tuple(p.shape)]


def _sample_infer_type(name):
    def infer_type(p, ins, outs):
        known = next((t for t in ins if t is not None), None)
        for t in ins:
            if t is not None and np.dtype(t) != np.dtype(known):
                raise TypeInferError(f"the distribution parameters must have one type, "
                                     f"got {np.dtype(known).name} and {np.dtype(t).name}")
        return [known] * len(ins), [_float_dtype(p, name)]
    return infer_type


def _sample_forward(kernel):
    def forward(p, ins, oc):
        dt = dtype_torch(p.dtype)
        wt = _work_dtype(dt)
        extra = tuple(p.shape)
        args = []
        for t in ins:
            t = t.to(wt)
            args.append(t.reshape(t.shape + (1,) * len(extra)).expand(t.shape + extra).contiguous())
        return kernel(*args).to(dt)
    return forward


for _dist, (_params, _inputs, _kernel) in _DISTS.items():
    _prm = tuple(Param(n, t, d, doc) for n, t, d, doc in _params)
    if _dist not in ("uniform", "normal"):  # (those two are in neomx.ops.random)
        register(OpDef(
            f"_random_{_dist}", _scalar_forward(_kernel, [n for n, *_ in _params], f"_random_{_dist}"),
            _creation_infer_shape, params=_prm + (_SHAPE, _CTX, _DTYPE), inputs=(),
            infer_type=_random_infer_type(f"_random_{_dist}"), aliases=(f"random_{_dist}",),
            doc=f"Draw random samples from the {_dist.replace('_', ' ')} distribution "
                "(MXNet's parametrisation, see neomx.ops.samplers).",
            deterministic=False, gradient=lambda F, p, ins, outs, ograds: []))
    register(OpDef(
        f"_random_{_dist}_like", _like_forward(_kernel, [n for n, *_ in _params]),
        _like_infer_shape, params=_prm, inputs=("data",), infer_type=_like_infer_type,
        doc=f"Samples of the {_dist.replace('_', ' ')} distribution with the shape and dtype "
            "of ``data``.",
        deterministic=False, gradient=_no_gradient))
    register(OpDef(
        f"_sample_{_dist}", _sample_forward(_kernel), _sample_infer_shape,
        params=(_SAMPLE_SHAPE, _DTYPE), inputs=_inputs,
        infer_type=_sample_infer_type(f"_sample_{_dist}"), aliases=(f"sample_{_dist}",),
        doc=f"Concurrent sampling from several {_dist.replace('_', ' ')} distributions, one per "
            f"element of the parameter arrays ({', '.join(_inputs)}); the output has the "
            "parameters' shape followed by ``shape``.",
        deterministic=False, gradient=_no_gradient))


# --- randint ----------------------------------------------------------------------------------
def _randint_type(p, ins, outs):
    dt = p.dtype or np.int32
    if np.dtype(dt) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _dtype_error(np.dtype(dt).name, ("None", "int32", "int64"), "_random_randint")
    return ins, [dt]


def _randint_forward(p, ins, oc):
    if p.low >= p.high:
        raise MXNetError(f"_random_randint: low ({p.low}) must be less than high ({p.high})")
    _, (dt,) = _randint_type(p, [], [None])
    return torch.randint(p.low, p.high, tuple(p.shape), dtype=dtype_torch(dt), device=oc.device)


register(OpDef(
    "_random_randint", _randint_forward, _creation_infer_shape,
    params=(Param("low", "int", doc="Lower bound of the distribution."),
            Param("high", "int", doc="Upper bound of the distribution."), _SHAPE, _CTX,
            Param("dtype", "dtype", None, "int32 (when None) or int64.", optional=True)),
    inputs=(), infer_type=_randint_type, aliases=("random_randint",),
    doc="Draw random integers uniformly from ``[low, high)``.",
    deterministic=False, gradient=lambda F, p, ins, outs, ograds: []))


# --- multinomial --------------------------------------------------------------------------------
_MULTI_DTYPES = ("float16", "float32", "float64", "int32", "uint8")


def _multi_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    if len(d) == 0:
        raise ShapeError("data must have at least one dimension")
    if len(d) == 1:
        o = tuple(p.shape) if len(p.shape) else (1,)
    else:
        o = tuple(d[:-1]) + tuple(p.shape)
    return ins, [o, o] if p.get_prob else [o]


def _multi_type(p, ins, outs):
    if np.dtype(p.dtype).name not in _MULTI_DTYPES:
        raise _dtype_error(np.dtype(p.dtype).name, _MULTI_DTYPES, "_sample_multinomial")
    t = ins[0] if ins[0] is not None else np.float32
    return [t], [p.dtype, t] if p.get_prob else [p.dtype]


def _multi_forward(p, ins, oc):
    data = ins[0]
    k = data.shape[-1]
    extra = tuple(p.shape)
    n = int(np.prod(extra)) if extra else 1
    probs = data.reshape(-1, k).to(torch.float64 if data.dtype == torch.float64 else torch.float32)
    idx = torch.multinomial(probs, n, replacement=True)  # (batch, n)
    if data.dim() == 1:
        oshape = extra if extra else (1,)
    else:
        oshape = tuple(data.shape[:-1]) + extra
    sample = idx.reshape(oshape).to(dtype_torch(p.dtype))
    if not p.get_prob:
        return sample
    logp = torch.log(torch.gather(probs, 1, idx)).reshape(oshape).to(data.dtype)
    return sample, logp


def _multi_gradient(F, p, ins, outs, ograds):
    """d log p[s] / d p = 1 / p[s] at each sampled category s, summed over the draws."""
    if not p.get_prob or ograds[1] is None:
        return [F.zeros_like(ins[0])]
    data = ins[0]
    k = data.shape[-1]
    onehot = F.one_hot(outs[0], depth=k, dtype=np.dtype(data.dtype).name)  # oshape + (k,)
    w = F.broadcast_div(ograds[1], F.exp(outs[1]))  # ograd / p[s]
    g = F.broadcast_mul(onehot, F.expand_dims(w, axis=-1))
    nd = len(outs[0].shape)
    if len(data.shape) == 1:
        axes = tuple(range(nd))
    else:
        axes = tuple(range(len(data.shape) - 1, nd))
    return [F.sum(g, axis=axes) if axes else g]


register(OpDef(
    "_sample_multinomial", _multi_forward, _multi_shape,
    params=(Param("shape", "shape", (), "Shape to be sampled from each random distribution."),
            Param("get_prob", "bool", False, "Whether to also return the log probability of "
                  "sampled result. This is usually used for differentiating through stochastic "
                  "variables, e.g. in reinforcement learning."),
            Param("dtype", "dtype", np.int32, "DType of the output in case this can't be inferred.")),
    inputs=("data",), outputs=lambda p: ("output0", "output1") if p.get_prob else ("output",),
    infer_type=_multi_type, aliases=("sample_multinomial",),
    doc="Concurrent sampling from multiple multinomial distributions (``data``'s last axis "
        "holds the probabilities of each).",
    deterministic=False, gradient=_multi_gradient, no_grad_inputs=()))


# --- shuffle --------------------------------------------------------------------------------------
def _shuffle_forward(p, ins, oc):
    x = ins[0]
    if x.dim() == 0 or x.shape[0] <= 1:
        return x.clone()
    return x[torch.randperm(x.shape[0], device=x.device)]


def _same(p, ins, outs):
    s = ins[0] if ins[0] is not None else outs[0]
    if s is not None and len(s) == 0:  # (MXNet 1.x: a 0-d shape is unknown)
        raise ShapeError("data must have at least one dimension")
    return [s], [s]


register(OpDef(
    "_shuffle", _shuffle_forward, _same, inputs=("data",),
    aliases=("shuffle",),
    doc="Randomly shuffle the elements along the first axis (a copy).",
    deterministic=False, gradient=_no_gradient))
