"""Learning rate schedulers of MXNet's pre-``lr_scheduler`` API (``mxnet.misc``, kept by MXNet
1.9.1 for old code; new code uses ``mx.lr_scheduler``)."""
from __future__ import annotations

import logging
import math

__all__ = ["LearningRateScheduler", "FactorScheduler"]


class LearningRateScheduler:
    """Base class of learning rate scheduler (``base_lr`` 0.01)."""

    def __init__(self):
        self.base_lr = 0.01

    def __call__(self, iteration):
        """The learning rate at ``iteration``."""
        raise NotImplementedError("must override this")


class FactorScheduler(LearningRateScheduler):
    """Reduce learning rate in factor: ``base_lr * factor ** (iteration // step)``.

    Parameters
    ----------
    step: int
        Schedule learning rate after every round.
    factor: float
        Reduce learning rate factor.

    Examples
    --------
    >>> import neomx as mx
    >>> s = mx.misc.FactorScheduler(step=10, factor=0.5)
    >>> s(0), s(9), s(10), s(25)
    (0.01, 0.01, 0.005, 0.0025)
    """

    def __init__(self, step, factor=0.1):
        super().__init__()
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor >= 1.0:
            raise ValueError("Factor must be less than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.old_lr = self.base_lr
        self.init = False

    def __call__(self, iteration):
        if not self.init:
            self.init = True
            self.old_lr = self.base_lr
        lr = self.base_lr * math.pow(self.factor, int(iteration / self.step))
        if lr != self.old_lr:
            self.old_lr = lr
            logging.info("At Iteration [%d]: Swith to new learning rate %.5f", iteration, lr)
        return lr
