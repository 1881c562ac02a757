"""``gluon.contrib.nn``: contributed layers (MXNet 1.9.1's)."""
from . import basic_layers
from .basic_layers import *  # noqa: F401,F403

__all__ = basic_layers.__all__
