"""``mx.sym.op``: MXNet's generated operator module (``mxnet/symbol/op.py``).

Every public operator of the op table whose name has no leading underscore, as the same function
object as ``mx.sym.<name>`` (``mx.sym.op.FullyConnected is mx.sym.FullyConnected``); ``mx.sym``'s
Python-level wrappers (``maximum``, ``pow`` ...) are not operators and are not here, as in MXNet.
Operators registered after import resolve lazily.
"""
from __future__ import annotations

from ..ops import registry as _reg
from . import _internal_dict
from .register import make_function as _make_function

__all__: list = []


def _public(name, op):
    return op.public and not name.startswith("_")


def _function(name, op):
    f = _internal_dict.get(name)
    if f is None:
        f = _internal_dict[name] = _make_function(op, name)
    return f


for _name, _op in _reg.all_ops().items():
    if _public(_name, _op):
        globals()[_name] = _function(_name, _op)
        __all__.append(_name)
del _name, _op


def __getattr__(attr):
    op = None if attr.startswith("__") else _reg.find(attr)
    if op is None or not _public(attr, op):
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    f = globals()[attr] = _function(attr, op)
    return f
