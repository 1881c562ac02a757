"""``mx.sym.linalg``: the operators named ``_linalg_<X>`` as ``mx.sym.linalg.<X>``
(MXNet's prefix namespace; unnamed nodes are named after ``<X>``, as MXNet's: ``x0``)."""
from __future__ import annotations

from ..ops import namespaces as _prefixed
from .register import make_function as _make

__all__: list = []

_prefixed.fill(globals(), "_linalg_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_linalg_", _make)
