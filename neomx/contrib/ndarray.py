"""NDArray namespace of the contrib functions (``mx.contrib.nd``): the functions of
``mx.nd.contrib``."""
from ..ndarray import contrib as _contrib

__all__ = []
globals().update({k: v for k, v in vars(_contrib).items() if not k.startswith("_")})
