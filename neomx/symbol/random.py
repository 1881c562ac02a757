"""``mx.sym.random``: MXNet's sampling functions for graphs.

As in MXNet 1.x: numbers call ``_random_<dist>`` (unnamed nodes ``_random_<dist>0``), Symbols
call ``_sample_<dist>`` (``_sample_<dist>0``); ``<dist>_like`` come from the op table.
"""
from __future__ import annotations

import numbers

from ..ops import namespaces as _prefixed
from .register import make_function as _make
from .symbol import Symbol
from ..ops import registry as _reg

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


def _op(name):
    return _make(_reg.get(name), name)


def _helper(dist, names, values, shape, dtype, kwargs):
    kw = dict(kwargs)
    if shape is not None:
        kw["shape"] = shape
    if dtype is not None:
        kw["dtype"] = dtype
    if isinstance(values[0], Symbol):
        for v in values[1:]:
            if not isinstance(v, Symbol):
                raise AssertionError("Distribution parameters must all have the same type, but "
                                     f"got both {type(values[0])} and {type(v)}.")
        return _op(f"_sample_{dist}")(*values, **kw)
    if isinstance(values[0], numbers.Number):
        for v in values[1:]:
            if not isinstance(v, numbers.Number):
                raise AssertionError("Distribution parameters must all have the same type, but "
                                     f"got both {type(values[0])} and {type(v)}.")
        kw.update(zip(names, values))
        return _op(f"_random_{dist}")(**kw)
    raise ValueError("Distribution parameters must be either Symbol or numbers, but got "
                     f"{type(values[0])}.")


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs):
    return _helper("uniform", ("low", "high"), [low, high], shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    return _helper("normal", ("loc", "scale"), [loc, scale], shape, dtype, kwargs)


def randn(*shape, **kwargs):
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", None)
    assert isinstance(loc, (int, float))
    assert isinstance(scale, (int, float))
    return _helper("normal", ("loc", "scale"), [loc, scale], shape or None, dtype, kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs):
    return _helper("poisson", ("lam",), [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs):
    return _helper("exponential", ("lam",), [1.0 / scale], shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs):
    return _helper("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs):
    return _helper("negative_binomial", ("k", "p"), [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs):
    return _helper("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape, dtype,
                   kwargs)


def multinomial(data, shape=None, get_prob=True, dtype="int32", **kwargs):
    if shape is not None:
        kwargs["shape"] = shape
    return _op("_sample_multinomial")(data, get_prob=get_prob, dtype=dtype, **kwargs)


def shuffle(data, **kwargs):
    return _op("_shuffle")(data, **kwargs)


def randint(low, high, shape=None, dtype=None, **kwargs):
    return _helper("randint", ("low", "high"), [low, high], shape, dtype, kwargs)


_prefixed.fill(globals(), "_random_", _make, like_only=True)
__getattr__ = _prefixed.lazy_getattr(globals(), "_random_", _make, like_only=True)
