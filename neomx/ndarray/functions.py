"""MXNet 1.x's Python-level NDArray functions that dispatch between array and scalar forms
(``python/mxnet/ndarray/ndarray.py``): ``add``, ``subtract``, ..., ``maximum``, ``equal``, ...

Two arrays go to the broadcasting op (``broadcast_add``); an array and a number to the scalar
op (``_plus_scalar``, or the reversed ``_rminus_scalar`` when the number comes first); two
numbers are computed in Python.

>>> import neomx as mx
>>> from neomx.ndarray.functions import maximum, subtract
>>> maximum(mx.nd.array([1, 5]), 2).asnumpy()
array([2., 5.], dtype=float32)
>>> subtract(10, mx.nd.array([1, 2])).asnumpy()
array([9., 8.], dtype=float32)
>>> maximum(3, 4)
4
"""
from __future__ import annotations

import operator

from ..base import numeric_types
from .ndarray import OPS, NDArray
from .register import invoke_by_name

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum",
           "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
           "logical_and", "logical_or", "logical_xor", "onehot_encode", "split_v2", "histogram"]


def _array_op(name):
    # through the op's mx.nd function (MXNet's helpers call ``op.<name>``: AMP's casts apply)
    return lambda lhs, rhs: OPS[name](lhs, rhs)


def _scalar_op(name):
    return lambda arr, scalar: OPS[name](arr, scalar=scalar)


def _ufunc_helper(lhs, rhs, fn_array, fn_scalar, lfn_scalar, rfn_scalar=None):
    """MXNet's dispatch: array-array, array-number, number-array (``rfn_scalar``, or
    ``lfn_scalar`` for commutative ops) and number-number."""
    if isinstance(lhs, numeric_types):
        if isinstance(rhs, numeric_types):
            return fn_scalar(lhs, rhs)
        if rfn_scalar is None:
            return lfn_scalar(rhs, float(lhs))
        return rfn_scalar(rhs, float(lhs))
    if isinstance(rhs, numeric_types):
        return lfn_scalar(lhs, float(rhs))
    if isinstance(rhs, NDArray):
        return fn_array(lhs, rhs)
    raise TypeError('type %s not supported' % str(type(rhs)))


def _make(name, doc, bcast, py_fn, scalar, rscalar=None):
    fa, fs = _array_op(bcast), _scalar_op(scalar)
    fr = None if rscalar is None else _scalar_op(rscalar)

    def fn(lhs, rhs):
        return _ufunc_helper(lhs, rhs, fa, py_fn, fs, fr)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{doc}\n\nTwo arrays use ``{bcast}`` (numpy-style broadcasting); an array and "
                  f"a number use ``{scalar}``"
                  + (f" (``{rscalar}`` when the number comes first)" if rscalar else "")
                  + ".\n\nParameters\n----------\nlhs : NDArray or scalar\nrhs : NDArray or scalar"
                    "\n\nReturns\n-------\nNDArray (a Python number when both are numbers)")
    return fn


add = _make("add", "Element-wise sum ``lhs + rhs``.", "broadcast_add", operator.add,
            "_plus_scalar")
subtract = _make("subtract", "Element-wise difference ``lhs - rhs``.", "broadcast_sub",
                 operator.sub, "_minus_scalar", "_rminus_scalar")
multiply = _make("multiply", "Element-wise product ``lhs * rhs``.", "broadcast_mul", operator.mul,
                 "_mul_scalar")
divide = _make("divide", "Element-wise division ``lhs / rhs``.", "broadcast_div",
               operator.truediv, "_div_scalar", "_rdiv_scalar")
modulo = _make("modulo", "Element-wise modulo ``lhs % rhs``.", "broadcast_mod", operator.mod,
               "_mod_scalar", "_rmod_scalar")
power = _make("power", "Element-wise ``base ** exp``.", "broadcast_power", operator.pow,
              "_power_scalar", "_rpower_scalar")
maximum = _make("maximum", "Element-wise maximum.", "broadcast_maximum",
                lambda x, y: x if x > y else y, "_maximum_scalar")
minimum = _make("minimum", "Element-wise minimum.", "broadcast_minimum",
                lambda x, y: x if x < y else y, "_minimum_scalar")
equal = _make("equal", "Element-wise ``lhs == rhs`` (1 or 0 in the array's dtype).",
              "broadcast_equal", lambda x, y: 1 if x == y else 0, "_equal_scalar")
not_equal = _make("not_equal", "Element-wise ``lhs != rhs`` (1 or 0).", "broadcast_not_equal",
                  lambda x, y: 1 if x != y else 0, "_not_equal_scalar")
greater = _make("greater", "Element-wise ``lhs > rhs`` (1 or 0).", "broadcast_greater",
                lambda x, y: 1 if x > y else 0, "_greater_scalar", "_lesser_scalar")
greater_equal = _make("greater_equal", "Element-wise ``lhs >= rhs`` (1 or 0).",
                      "broadcast_greater_equal", lambda x, y: 1 if x >= y else 0,
                      "_greater_equal_scalar", "_lesser_equal_scalar")
lesser = _make("lesser", "Element-wise ``lhs < rhs`` (1 or 0).", "broadcast_lesser",
               lambda x, y: 1 if x < y else 0, "_lesser_scalar", "_greater_scalar")
lesser_equal = _make("lesser_equal", "Element-wise ``lhs <= rhs`` (1 or 0).",
                     "broadcast_lesser_equal", lambda x, y: 1 if x <= y else 0,
                     "_lesser_equal_scalar", "_greater_equal_scalar")


def true_divide(lhs, rhs):
    """Same as :func:`divide`."""
    return divide(lhs, rhs)


# --- logical ops ---------------------------------------------------------------------------------
def _logical_scalar(kind):
    """``_logical_<kind>_scalar`` when registered; otherwise composed from comparison ops, which
    is exact: ``x and s`` is ``x != 0`` for s != 0 and all zeros for s == 0, and so on."""
    from ..ops import registry as _reg
    name = f"_logical_{kind}_scalar"

    def fn(arr, scalar):
        if _reg.find(name) is not None:
            return invoke_by_name(name, [arr], {"scalar": scalar})
        nonzero = invoke_by_name("_not_equal_scalar", [arr], {"scalar": 0.0})
        if kind == "and":
            return nonzero if scalar != 0 else invoke_by_name("zeros_like", [arr], {})
        if kind == "or":
            return invoke_by_name("ones_like", [arr], {}) if scalar != 0 else nonzero
        return invoke_by_name("_equal_scalar", [arr], {"scalar": 0.0}) if scalar != 0 else nonzero
    return fn


def _make_logical(kind, py_fn):
    fa = _array_op(f"broadcast_logical_{kind}")
    fs = _logical_scalar(kind)

    def fn(lhs, rhs):
        return _ufunc_helper(lhs, rhs, fa, py_fn, fs, None)
    fn.__name__ = fn.__qualname__ = f"logical_{kind}"
    fn.__doc__ = (f"Element-wise logical {kind.upper()} (1 or 0 in the array's dtype) with "
                  f"broadcasting; a number operand is treated as a constant array.")
    return fn


logical_and = _make_logical("and", lambda x, y: 1 if x and y else 0)
logical_or = _make_logical("or", lambda x, y: 1 if x or y else 0)
logical_xor = _make_logical("xor", lambda x, y: 1 if bool(x) ^ bool(y) else 0)


def onehot_encode(indices, out):
    """One-hot encode ``indices`` into ``out`` (shape ``(N, depth)``); deprecated in MXNet in
    favour of ``one_hot``. Returns ``out``."""
    return OPS["one_hot"](indices, depth=out.shape[1], dtype=out.dtype, out=out)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices (a
    tuple), as ``numpy.split``; ``squeeze_axis`` drops a split axis of size 1."""
    axis_size = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        if axis_size % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        size = axis_size // indices_or_sections
        indices = [i * size for i in range(indices_or_sections)]
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return OPS["_split_v2"](ary, indices=tuple(indices), axis=axis, squeeze_axis=squeeze_axis)


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's parameter name)
    """Histogram of ``a``: ``bins`` equal bins over ``range`` or the edges in an NDArray.
    Returns ``(counts, bin_edges)``; without ``range`` numpy computes it, as MXNet does."""
    import warnings

    import numpy as np
    from . import array as _array
    if isinstance(bins, NDArray):
        return invoke_by_name("_histogram", [a, bins], {})
    if isinstance(bins, int):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure consistency "
                          "with numpy")
            res, bounds = np.histogram(a.asnumpy(), bins=bins)
            return _array(res), _array(bounds)
        return invoke_by_name("_histogram", [a], {"bin_cnt": bins, "range": range})
    raise ValueError("bins argument should be either an integer or an NDArray")
