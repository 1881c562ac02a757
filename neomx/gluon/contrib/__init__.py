"""``gluon.contrib``: MXNet 1.9.1's contributed Gluon layers (``contrib.nn`` so far; its rnn,
cnn, data and estimator packages are not in neomx yet)."""
from . import nn

__all__ = ["nn"]
