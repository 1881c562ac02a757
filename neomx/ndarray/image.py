"""``mx.nd.image``: the operators named ``_image_<X>`` as ``mx.nd.image.<X>``
(MXNet's prefix namespace)."""
from __future__ import annotations

from ..ops import namespaces as _prefixed
from .register import function_for as _function_for

__all__: list = []


def _make(op, short):
    return _function_for(op)


_prefixed.fill(globals(), "_image_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_image_", _make)
