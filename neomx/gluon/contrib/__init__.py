"""``gluon.contrib``: MXNet 1.9.1's contributed Gluon packages (``nn``, ``estimator`` and
``cnn`` so far; its rnn and data packages are not in neomx yet)."""
from . import nn
from . import estimator
from . import cnn
from . import rnn

__all__ = ["nn", "estimator", "cnn"]
