"""``mx.name``: automatic naming scopes."""
from .symbol.scope import NameManager, Prefix

__all__ = ["NameManager", "Prefix"]
