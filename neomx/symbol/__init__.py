"""``mx.sym``: declarative graphs. Operator functions are generated from the op table."""
from __future__ import annotations

from types import SimpleNamespace

from .. import ops as _ops  # noqa: F401  (registers operators)
from .register import invoke_sym, make_function, populate
from .scope import AttrScope, NameManager, Prefix
from .symbol import Group, Symbol, Variable, load, load_json, var

_internal_dict: dict = {}
populate(globals(), _internal_dict)
_internal = SimpleNamespace(**_internal_dict)
from .functions import *  # noqa: E402,F401,F403  (pow, power, maximum, minimum)
from . import functions as _functions  # noqa: E402
_internal.__doc__ = "Every registered operator, internal ones included (``mx.sym._internal._plus``)."


def zeros(shape, dtype=None, **kwargs):
    """A symbol producing zeros of ``shape``."""
    return invoke_sym("_zeros", [], {"shape": shape, "dtype": dtype, **kwargs})


def ones(shape, dtype=None, **kwargs):
    return invoke_sym("_ones", [], {"shape": shape, "dtype": dtype, **kwargs})


def full(shape, val, dtype=None, **kwargs):
    return invoke_sym("_full", [], {"shape": shape, "value": val, "dtype": dtype, **kwargs})


from . import contrib, image, linalg, random  # noqa: E402  (prefix namespaces: _contrib_X -> contrib.X)

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "zeros", "ones", "full",
           "NameManager", "Prefix", "AttrScope"]
