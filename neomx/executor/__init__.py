"""Binding graphs to arrays and running them: ``Executor``, ``bind``, ``simple_bind``."""
from ..symbol.symbol import register_binders as _register_binders
from .bind import bind, simple_bind
from .executor import Executor

_register_binders(bind, simple_bind)

__all__ = ["Executor", "bind", "simple_bind"]
