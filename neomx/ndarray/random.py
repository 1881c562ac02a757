"""``mx.nd.random``: MXNet's sampling functions.

As in MXNet 1.x, ``uniform``/``normal``/... are Python wrappers choosing the operator from the
parameters' type: numbers call ``_random_<dist>`` (``shape`` defaults to ``(1,)``), NDArrays
call ``_sample_<dist>`` (one draw of ``shape`` per parameter element, the parameter shape
first). The ``_random_<dist>_like`` operators appear as ``<dist>_like`` from the op table.
"""
from __future__ import annotations

import numbers

from ..base import MXNetError
from ..context import current_context
from ..ops import namespaces as _prefixed
from .ndarray import NDArray
from .register import function_for as _function_for
from ..ops import registry as _reg

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]

_NUMERIC = (numbers.Number,)


def _shape_tuple(shape):
    return (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)


def _op(name):
    return _function_for(_reg.get(name))


def _helper(dist, names, values, shape, dtype, ctx, out, kwargs):
    kw = dict(kwargs)
    if shape is not None:
        kw["shape"] = shape
    if dtype is not None:
        kw["dtype"] = dtype
    if isinstance(values[0], NDArray):
        for v in values[1:]:
            if not isinstance(v, NDArray):
                raise AssertionError("Distribution parameters must all have the same type, but "
                                     f"got both {type(values[0])} and {type(v)}.")
        return _op(f"_sample_{dist}")(*values, out=out, **kw)
    if isinstance(values[0], _NUMERIC):
        for v in values[1:]:
            if not isinstance(v, _NUMERIC):
                raise AssertionError("Distribution parameters must all have the same type, but "
                                     f"got both {type(values[0])} and {type(v)}.")
        if out is not None:  # the result takes the output array's shape, dtype and device
            kw.setdefault("shape", out.shape)
            kw.setdefault("dtype", out.dtype)
            ctx = out.context
        elif shape is None:
            kw["shape"] = (1,)
        elif not _shape_tuple(shape):  # (MXNet 1.x: () is an unknown shape)
            raise MXNetError(f"Operator _random_{dist} inferring shapes failed: shape {shape} "
                             "is unknown (give the output shape)")
        if ctx is None:
            ctx = current_context()
        kw.update(zip(names, values))
        return _op(f"_random_{dist}")(ctx=ctx, out=out, **kw)
    raise ValueError("Distribution parameters must be either NDArray or numbers, but got "
                     f"{type(values[0])}.")


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a uniform distribution on ``[low, high)`` (NDArray ``low``/``high``: one
    draw of ``shape`` per element)."""
    return _helper("uniform", ("low", "high"), [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a normal distribution with mean ``loc`` and standard deviation ``scale``."""
    return _helper("normal", ("loc", "scale"), [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of ``shape`` (given positionally); ``loc``, ``scale``, ``dtype``, ``ctx``
    and ``out`` as keywords."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", None)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    assert isinstance(loc, (int, float))
    assert isinstance(scale, (int, float))
    return _helper("normal", ("loc", "scale"), [loc, scale], shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a Poisson distribution of rate ``lam`` (as floats)."""
    return _helper("poisson", ("lam",), [lam], shape, dtype, ctx, out, kwargs)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from an exponential distribution of scale ``scale`` (rate ``1/scale``)."""
    return _helper("exponential", ("lam",), [1.0 / scale], shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _helper("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Failures before the ``k``-th success, success probability ``p``."""
    return _helper("negative_binomial", ("k", "p"), [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  **kwargs):
    """Samples of mean ``mu`` and variance ``mu + alpha * mu**2``."""
    return _helper("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape, dtype,
                   ctx, out, kwargs)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Category indices drawn from the distributions in ``data``'s last axis; with
    ``get_prob`` also their log-probabilities (differentiable with respect to ``data``)."""
    if shape is not None:
        kwargs["shape"] = shape
    return _op("_sample_multinomial")(data, get_prob=get_prob, out=out, dtype=dtype, **kwargs)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    return _op("_shuffle")(data, **kwargs)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from ``[low, high)`` (int32 unless ``dtype='int64'``)."""
    return _helper("randint", ("low", "high"), [low, high], shape, dtype, ctx, out, kwargs)


def _make(op, short):
    return _function_for(op)


_prefixed.fill(globals(), "_random_", _make, like_only=True)
__getattr__ = _prefixed.lazy_getattr(globals(), "_random_", _make, like_only=True)
