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


def _creation(op, params, dtype, kwargs):
    """mx.sym.zeros/ones/full: float32 unless ``dtype`` is given (MXNet writes it), ``name`` and
    ``attr`` as for any operator (auto names ``_zeros0``...)."""
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    params = dict(params, dtype="float32" if dtype is None else dtype, **kwargs)
    return invoke_sym(op, [], params, name=name, attr=attr)


def zeros(shape, dtype=None, **kwargs):
    """A symbol producing zeros of ``shape`` (0 dims: decided by shape inference)."""
    return _creation("_zeros", {"shape": shape}, dtype, kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol producing ones of ``shape``."""
    return _creation("_ones", {"shape": shape}, dtype, kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol producing ``val`` everywhere in ``shape``."""
    return _creation("_full", {"shape": shape, "value": val}, dtype, kwargs)


from . import contrib, image, linalg, random  # noqa: E402  (prefix namespaces: _contrib_X -> contrib.X)
from . import sparse  # noqa: E402  (MXNet's sparse namespace)
from . import op  # noqa: E402  (mx.nd.op / mx.sym.op: MXNet's generated-op module)

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "zeros", "ones", "full",
           "NameManager", "Prefix", "AttrScope"]
