"""``mx.optimizer``: optimizers, their registry and the Updater (MXNet 1.9.1 semantics)."""
from . import contrib, optimizer, updater
from .optimizer import *  # noqa: F401,F403
from .optimizer import __all__ as _opt_all
from .updater import Updater, get_updater

__all__ = list(_opt_all) + ["contrib"]
