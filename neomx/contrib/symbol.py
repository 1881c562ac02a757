"""Symbol namespace of the contrib functions (``mx.contrib.sym``): the functions of
``mx.sym.contrib``."""
from ..symbol import contrib as _contrib

__all__ = []
globals().update({k: v for k, v in vars(_contrib).items() if not k.startswith("_")})
