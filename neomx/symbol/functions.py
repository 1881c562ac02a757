"""MXNet 1.x's Python-level Symbol functions that dispatch between symbol and scalar forms
(``python/mxnet/symbol/symbol.py``): ``pow``/``power``, ``maximum``, ``minimum``.

Unlike their NDArray namesakes these do **not** broadcast: two symbols go to the same-shape ops
(``_power``, ``_maximum``, ``_minimum``), a symbol and a number to the scalar ops; two numbers
are computed in Python.

>>> import neomx as mx
>>> from neomx.symbol.functions import maximum
>>> maximum(mx.sym.var('a'), 2.5).tojson().count('_maximum_scalar')
1
>>> maximum(3, 4)
4
"""
from __future__ import annotations

from numbers import Number

from .register import invoke_sym
from .symbol import Symbol

__all__ = ["pow", "power", "maximum", "minimum", "hypot", "split_v2", "histogram"]


def _types_error(left, right):
    return TypeError('types (%s, %s) not supported' % (str(type(left)), str(type(right))))


def pow(base, exp):  # noqa: A001  (MXNet's name)
    """Element-wise ``base ** exp`` of Symbols and/or numbers.

    Two symbols use ``_power`` (equal shapes), a symbol base and a number exponent
    ``_power_scalar``, a number base and a symbol exponent ``_rpower_scalar``.
    """
    if isinstance(base, Symbol) and isinstance(exp, Symbol):
        return invoke_sym("_Power", [base, exp], {})
    if isinstance(base, Symbol) and isinstance(exp, Number):
        return invoke_sym("_PowerScalar", [base], {"scalar": exp})
    if isinstance(base, Number) and isinstance(exp, Symbol):
        return invoke_sym("_RPowerScalar", [exp], {"scalar": base})
    if isinstance(base, Number) and isinstance(exp, Number):
        return base ** exp
    raise _types_error(base, exp)


def power(base, exp):
    """Same as :func:`pow`."""
    return pow(base, exp)


def maximum(left, right):
    """Element-wise maximum of Symbols and/or numbers (``_maximum`` or ``_maximum_scalar``)."""
    return _minmax("maximum", left, right, lambda a, b: a if a > b else b)


def minimum(left, right):
    """Element-wise minimum of Symbols and/or numbers (``_minimum`` or ``_minimum_scalar``)."""
    return _minmax("minimum", left, right, lambda a, b: a if a < b else b)


def hypot(left, right):
    """Element-wise ``sqrt(left**2 + right**2)`` of Symbols and/or numbers (``_hypot`` or
    ``_hypot_scalar``)."""
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return invoke_sym("_Hypot", [left, right], {})
    if isinstance(left, Symbol) and isinstance(right, Number):
        return invoke_sym("_HypotScalar", [left], {"scalar": right})
    if isinstance(left, Number) and isinstance(right, Symbol):
        return invoke_sym("_HypotScalar", [right], {"scalar": left})
    if isinstance(left, Number) and isinstance(right, Number):
        return (left ** 2 + right ** 2) ** 0.5
    raise _types_error(left, right)


def _minmax(kind, left, right, py_fn):
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return invoke_sym(f"_{kind.capitalize()}", [left, right], {})
    if isinstance(left, Symbol) and isinstance(right, Number):
        return invoke_sym(f"_{kind.capitalize()}Scalar", [left], {"scalar": right})
    if isinstance(left, Number) and isinstance(right, Symbol):
        return invoke_sym(f"_{kind.capitalize()}Scalar", [right], {"scalar": left})
    if isinstance(left, Number) and isinstance(right, Number):
        return py_fn(left, right)
    raise _types_error(left, right)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Symbolic ``split_v2``: equal sections (an int) or split points (a tuple) along ``axis``."""
    indices, sections = [], 0
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return invoke_sym("_split_v2", [ary], {"indices": tuple(indices), "axis": axis,
                                          "squeeze_axis": squeeze_axis, "sections": sections})


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002  (MXNet's parameter name)
    """Symbolic histogram: ``bins`` equal bins over ``range`` (required here), or bin edges."""
    if isinstance(bins, Symbol):
        return invoke_sym("_histogram", [a, bins], kwargs)
    if isinstance(bins, int):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return invoke_sym("_histogram", [a], dict(kwargs, bin_cnt=bins, range=range))
    raise ValueError("bins argument should be either an integer or an NDArray")
