"""``gluon.contrib.data``: MXNet 1.9.1's contributed data utilities: ``IntervalSampler`` and
the WikiText language-modelling datasets (``text.WikiText2``, ``text.WikiText103``)."""
from . import text
from . import sampler
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "text", "sampler"]
