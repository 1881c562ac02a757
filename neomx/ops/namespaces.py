"""Operator namespaces as MXNet builds them from name prefixes (``_contrib_X`` -> ``contrib.X``).

Shared by ``mx.nd.<ns>`` and ``mx.sym.<ns>`` (it needs only the op table): :func:`fill` puts
every registered operator whose name matches into a module's globals at import, and :func:`lazy_getattr` (the module's
``__getattr__``) finds operators registered later, so a new ``_linalg_X`` shows up as
``linalg.X`` without touching the namespace modules.
"""
from __future__ import annotations

from . import registry as _reg


def _matches(name, prefix, like_only):
    return name.startswith(prefix) and len(name) > len(prefix) and (
        not like_only or name.endswith("_like"))


def fill(namespace: dict, prefix: str, make, like_only: bool = False):
    """``namespace[short] = make(op, short)`` for each op named ``prefix + short`` (kept when
    the module already defines ``short``, e.g. a Python wrapper)."""
    for name, op in _reg.all_ops().items():
        if _matches(name, prefix, like_only):
            short = name[len(prefix):]
            if short not in namespace:
                namespace[short] = make(op, short)
                namespace.setdefault("__all__", []).append(short)


def lazy_getattr(namespace: dict, prefix: str, make, like_only: bool = False):
    """A module ``__getattr__`` resolving operators registered after the module was filled."""
    def __getattr__(attr):
        op = None if attr.startswith("__") else _reg.find(prefix + attr)
        if op is None or not _matches(prefix + attr, prefix, like_only):
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {attr!r}")
        f = namespace[attr] = make(op, attr)
        return f
    return __getattr__
