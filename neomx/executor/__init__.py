"""Binding graphs to arrays and running them: ``Executor``, ``bind``, ``simple_bind``."""
from ..symbol.symbol import register_binders as _register_binders
from .bind import bind, simple_bind
from .executor import Executor
from . import tape_plan as _tape_plan  # noqa: F401  (installs the tape's compiled backward)

_register_binders(bind, simple_bind)

__all__ = ["Executor", "bind", "simple_bind"]
