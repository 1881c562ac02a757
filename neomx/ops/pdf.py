"""``nanprod`` and the probability densities ``_random_pdf_<dist>`` (``mx.nd.random_pdf_<dist>``).

Semantics follow MXNet 1.9.1 (``src/operator/random/pdf_op.{h,cc}``,
``tensor/broadcast_reduce_prod_value.cc``):

* ``random_pdf_<dist>(sample, *params, is_log=False)``: the parameter arrays share one shape,
  which is the leftmost part of ``sample``'s shape; each parameter entry describes the
  distribution of every sample under it (Dirichlet's ``alpha`` has a last axis of the vector
  length ``k``, which is ``sample``'s last axis too, and the output drops it). The output has
  ``sample``'s shape; ``is_log`` gives the log density.
* Gradients flow to the sample and to every parameter: ``d pdf = pdf * d log pdf`` (``d log
  pdf`` with ``is_log``), from the closed forms of the log densities. ``uniform``'s density does
  not check the support (MXNet's). The discrete distributions (Poisson, negative binomial,
  generalized negative binomial) give the sample a zero gradient, as MXNet's.
* ``nanprod`` is ``prod`` with NaN entries counted as 1 (an all-NaN slice gives 1); its gradient
  is ``out / x`` at the non-NaN entries and 0 at the NaN ones.
"""
from __future__ import annotations

import math

import torch

from .nn_layers import data_typed, replay_op
from .reduce import _REDUCE_PARAMS, _expand_back, _reduce_forward, _reduce_infer_shape
from .registry import OpDef, Param, ShapeError, register, _sh


# --- nanprod -------------------------------------------------------------------------------------
def _nanprod(x, axes, keep):
    x = torch.where(torch.isnan(x), torch.ones((), dtype=x.dtype, device=x.device), x)
    for a in sorted(axes, reverse=True):
        x = torch.prod(x, dim=a, keepdim=keep)
    return x


def _nanprod_grad(F, p, ins, outs, ograds):
    x = ins[0]
    g, _ = _expand_back(F, p, ograds[0], x)
    y, _ = _expand_back(F, p, outs[0], x)
    ratio = F.where(F._equal(x, x), F.elemwise_div(y, x), F.zeros_like(x))
    return [F.elemwise_mul(g, ratio)]


register(OpDef(
    "nanprod", _reduce_forward(_nanprod), _reduce_infer_shape, params=_REDUCE_PARAMS,
    gradient=_nanprod_grad,
    doc="Computes the product of array elements over given axes treating Not a Numbers (``NaN``) "
        "as one. A reduction over every axis returns shape ``(1,)``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([[1, float('nan')], [3, 4]])\n"
        ">>> mx.nd.nanprod(x, axis=1).asnumpy().tolist()\n"
        "[1.0, 12.0]"))


# --- densities -----------------------------------------------------------------------------------
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _lp_uniform(x, low, high):
    return (-torch.log(high - low)).expand_as(x)


def _lp_normal(x, mu, sigma):
    z = (x - mu) / sigma
    return -0.5 * z * z - torch.log(sigma) - _LOG_SQRT_2PI


def _lp_gamma(x, alpha, beta):
    return alpha * torch.log(beta) + (alpha - 1) * torch.log(x) - beta * x - torch.lgamma(alpha)


def _lp_exponential(x, lam):
    return torch.log(lam) - lam * x


def _lp_poisson(x, lam):
    x = x.detach()  # (discrete: no gradient w.r.t. the sample, as MXNet's)
    return x * torch.log(lam) - torch.lgamma(x + 1) - lam


def _lp_negative_binomial(x, k, prob):
    x = x.detach()
    return (torch.lgamma(x + k) - torch.lgamma(x + 1) - torch.lgamma(k) + k * torch.log(prob)
            + x * torch.log1p(-prob))


def _lp_generalized_negative_binomial(x, mu, alpha):
    k = 1 / alpha
    return _lp_negative_binomial(x, k, 1 / (mu * alpha + 1))


def _lp_dirichlet(x, alpha):
    return (torch.lgamma(alpha.sum(-1)) - torch.lgamma(alpha).sum(-1)
            + ((alpha - 1) * torch.log(x)).sum(-1))


def _pdf_shape(vparm):
    def infer(p, ins, outs):
        ins = list(ins)
        if any(s is None or len(s) == 0 for s in ins):
            return ins, outs  # MXNet infers only with every input known
        for i in range(2, len(ins)):
            if tuple(ins[i]) != tuple(ins[i - 1]):
                raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[i])}, inferred "
                                 f"shape={_sh(ins[i - 1])}")
        sample, prm = tuple(ins[0]), tuple(ins[1])
        if len(prm) > len(sample):
            raise ShapeError(f"Check failed: (*in_attrs)[1].ndim() <= (*in_attrs)[0].ndim() "
                             f"({len(prm)} vs. {len(sample)}) : dimension of input samples "
                             f"({len(sample)}) must be at least dimension of distribution "
                             f"parameters ({len(prm)})")
        want = sample[:len(prm) - vparm] + ((sample[-1],) if vparm else ())
        for i in range(1, len(ins)):
            if tuple(ins[i]) != want:
                raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[i])}, inferred "
                                 f"shape={_sh(want)}")
        return ins, [sample[:len(sample) - vparm]]
    return infer


def _pdf_compute(logpdf, vparm):
    def compute(p, ins):
        x = ins[0]
        prms = []
        for a in ins[1:]:
            extra = x.dim() - a.dim()
            if vparm:
                a = a.reshape(tuple(a.shape[:-1]) + (1,) * extra + (a.shape[-1],))
            else:
                a = a.reshape(tuple(a.shape) + (1,) * extra)
            prms.append(a)
        lp = logpdf(x, *prms)
        return lp if p.is_log else torch.exp(lp)
    return compute


_IS_LOG = Param("is_log", "bool", False, "If set, compute the density of the log-probability "
                                          "instead of the probability.")
_SAMPLE_DOC = ("The parameter arrays share one shape, the leftmost part of ``sample``'s shape: "
               "each parameter entry describes the distribution of every sample under it.")

for _dist, _fn, _names, _what, _vparm in (
        ("uniform", _lp_uniform, ("low", "high"), "uniform distributions on ``[low, high)`` "
         "(the support is not checked, as in MXNet)", False),
        ("normal", _lp_normal, ("mu", "sigma"), "normal distributions with mean ``mu`` and "
         "standard deviation ``sigma``", False),
        ("gamma", _lp_gamma, ("alpha", "beta"), "gamma distributions with shape ``alpha`` and "
         "rate ``beta``", False),
        ("exponential", _lp_exponential, ("lam",), "exponential distributions with rate "
         "``lam``", False),
        ("poisson", _lp_poisson, ("lam",), "Poisson distributions with rate ``lam``", False),
        ("negative_binomial", _lp_negative_binomial, ("k", "p"), "negative binomial "
         "distributions with failure limit ``k`` and failure probability ``p``", False),
        ("generalized_negative_binomial", _lp_generalized_negative_binomial, ("mu", "alpha"),
         "generalized negative binomial distributions with mean ``mu`` and dispersion ``alpha`` "
         "(``k = 1 / alpha``, ``p = 1 / (mu * alpha + 1)``)", False),
        ("dirichlet", _lp_dirichlet, ("alpha",), "Dirichlet distributions with concentration "
         "vectors ``alpha`` (last axis: the vector length, also ``sample``'s last axis, which "
         "the output drops)", True),
):
    _compute = _pdf_compute(_fn, _vparm)
    replay_op(
        f"_random_pdf_{_dist}", _compute, (lambda c: lambda p, ins, oc: c(p, ins))(_compute),
        _pdf_shape(_vparm), params=(_IS_LOG,), inputs=("sample",) + _names,
        infer_type=data_typed(), aliases=(f"random_pdf_{_dist}",), hint=f"random_pdf_{_dist}",
        doc=f"Computes the value of the PDF of ``sample`` of {_what}. {_SAMPLE_DOC} With "
            "``is_log`` the log density. Gradients flow to ``sample`` and the parameters.")
