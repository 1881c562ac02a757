"""``gluon.nn``: neural network layers (and, as in MXNet, the Block classes)."""
from ..block import *  # noqa: F401,F403
from .activations import *  # noqa: F401,F403
from .basic_layers import *  # noqa: F401,F403
from .conv_layers import *  # noqa: F401,F403
