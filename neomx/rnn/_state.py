"""How the recurrent cells call a begin-state function: ``func(name=..., **info)`` as MXNet's
(``info`` holds ``shape``, ``__layout__``, maybe ``dtype``)."""
from __future__ import annotations

from .. import ndarray, symbol
from ..symbol.register import invoke_sym

_SYM_FILLS = {symbol.zeros: "_zeros", symbol.ones: "_ones"}
_ND_FILLS = (ndarray.zeros, ndarray.ones)


def call_state_func(func, name, **kwargs):
    """``func(name=name, **kwargs)``; ``mx.sym.zeros/ones`` get MXNet's ``dtype`` default
    (float32) and keep ``__layout__`` as a node attribute, ``mx.nd.zeros/ones`` ignore it."""
    op = _SYM_FILLS.get(func)
    if op is not None:
        params = dict(kwargs)
        params["dtype"] = params.get("dtype") or "float32"
        return invoke_sym(op, [], params, name=name)
    if func in _ND_FILLS:
        kwargs = {k: v for k, v in kwargs.items() if not (k.startswith("__") and k.endswith("__"))}
    return func(name=name, **kwargs)
