"""Naming and attribute scopes: ``mx.name.NameManager``/``Prefix`` and ``mx.AttrScope``."""
from __future__ import annotations

import contextvars

from ..base import MXNetError


class NameManager:
    """Gives automatic names ``<hint><counter>`` (``fullyconnected0``) to unnamed operators.

    Counters belong to the manager; ``with NameManager():`` starts fresh counters and restores the
    enclosing manager on exit.
    """

    def __init__(self):
        self._counter: dict[str, int] = {}
        self._tokens: list = []

    def get(self, name: str | None, hint: str) -> str:
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._tokens.append(_name_manager.set(self))
        return self

    def __exit__(self, *exc):
        _name_manager.reset(self._tokens.pop())

    @staticmethod
    def current() -> "NameManager":
        return _name_manager.get()


class Prefix(NameManager):
    """A NameManager that prefixes every operator name, explicit ones included (not Variables)."""

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


_name_manager: contextvars.ContextVar[NameManager] = contextvars.ContextVar(
    "neomx_name_manager", default=NameManager())


class AttrScope:
    """Attributes (strings) attached to every symbol created inside the scope.

    >>> import neomx as mx
    >>> with mx.AttrScope(ctx_group='dev1'):
    ...     x = mx.sym.Variable('x')
    >>> x.attr('ctx_group')
    'dev1'
    """

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs
        self._tokens: list = []

    def get(self, attr: dict | None) -> dict:
        """The scope's attributes updated with ``attr`` (hidden keys in ``__key__`` form)."""
        out = check_attr_dict(self._attr)
        if attr:
            out.update(check_attr_dict(attr))
        return out

    def __enter__(self):
        outer = _attr_scope.get()
        merged = AttrScope(**{**outer._attr, **self._attr})
        self._tokens.append(_attr_scope.set(merged))
        return self

    def __exit__(self, *exc):
        _attr_scope.reset(self._tokens.pop())

    @staticmethod
    def current() -> "AttrScope":
        return _attr_scope.get()


_attr_scope: contextvars.ContextVar[AttrScope] = contextvars.ContextVar("neomx_attr_scope", default=AttrScope())


# Keys that MXNet stores in their hidden ``__key__`` form (nnvm's kHiddenKeys).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope")


def check_attr_dict(attr) -> dict:
    """Validate user attributes (str -> str) and store hidden keys as ``__key__``."""
    if attr is None:
        return {}
    if not isinstance(attr, dict):
        raise MXNetError(f"attr must be a dict of str to str, got {type(attr).__name__}")
    out = {}
    for k, v in attr.items():
        if not isinstance(v, str):
            raise ValueError("Set Attr only accepts string values")
        k = str(k)
        out[f"__{k}__" if k in HIDDEN_KEYS else k] = v
    return out
