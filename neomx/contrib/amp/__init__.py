"""Automatic mixed precision module (MXNet 1.9.1's ``mx.contrib.amp``)."""
from .amp import *  # noqa: F401,F403
from .amp import __all__  # noqa: F401
from . import lists  # noqa: F401
from .loss_scaler import LossScaler  # noqa: F401
