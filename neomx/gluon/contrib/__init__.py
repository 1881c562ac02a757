"""``gluon.contrib``: MXNet 1.9.1's contributed Gluon packages (``nn``, ``estimator``,
``cnn``, ``rnn`` and ``data``)."""
from . import nn
from . import estimator
from . import cnn
from . import rnn
from . import data

__all__ = ["nn", "estimator", "cnn"]
