"""``mx.gluon.rnn``: recurrent cells and the fused recurrent layers (MXNet 1.9.1's)."""
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__ as _cell_all
from .rnn_layer import *  # noqa: F401,F403
from .rnn_layer import __all__ as _layer_all

__all__ = list(_cell_all) + list(_layer_all)
