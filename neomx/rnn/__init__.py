"""``mx.rnn``: symbolic recurrent cells, sentence bucketing and RNN checkpoints (MXNet 1.9.1's
API for ``Module``/``BucketingModule`` sequence models)."""
from . import rnn_cell
from .rnn_cell import *  # noqa: F401,F403
from . import rnn
from .rnn import *  # noqa: F401,F403
from . import io
from .io import *  # noqa: F401,F403
from .rnn_cell import __all__ as _cell_all
from .rnn import __all__ as _rnn_all
from .io import __all__ as _io_all

__all__ = list(_cell_all) + list(_rnn_all) + list(_io_all)
