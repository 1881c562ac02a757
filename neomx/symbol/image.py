"""``mx.sym.image``: the operators named ``_image_<X>`` as ``mx.sym.image.<X>``
(MXNet's prefix namespace; unnamed nodes are named after ``<X>``, as MXNet's: ``x0``)."""
from __future__ import annotations

from ..ops import namespaces as _prefixed
from .register import make_function as _make

__all__: list = []

_prefixed.fill(globals(), "_image_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_image_", _make)
