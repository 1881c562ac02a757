"""``mx.nd.op``: MXNet's generated operator module (``mxnet/ndarray/op.py``).

Every public operator of the op table whose name has no leading underscore, as the same function
object as ``mx.nd.<name>`` (``mx.nd.op.broadcast_add is mx.nd.broadcast_add``); ``mx.nd``'s
Python-level wrappers (``maximum``, ``power`` ...) are not operators and are not here, as in
MXNet. Operators registered after import resolve lazily.
"""
from __future__ import annotations

from ..ops import registry as _reg
from .register import function_for as _function_for

__all__: list = []


def _public(name, op):
    return op.public and not name.startswith("_")


for _name, _op in _reg.all_ops().items():
    if _public(_name, _op):
        globals()[_name] = _function_for(_op)
        __all__.append(_name)
del _name, _op


def __getattr__(attr):
    op = None if attr.startswith("__") else _reg.find(attr)
    if op is None or not _public(attr, op):
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    f = globals()[attr] = _function_for(op)
    return f
