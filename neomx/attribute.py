"""``mx.attribute``: attribute scopes."""
from .symbol.scope import AttrScope

__all__ = ["AttrScope"]
