"""Dynamic loss scaler for AMP (MXNet 1.9.1's ``mxnet.contrib.amp.loss_scaler``)."""
import logging

from ... import autograd as ag
from ... import ndarray as nd


class LossScaler:
    """Dynamic loss scaler for AMP.

    The scale starts at 2**16. A step whose gradients overflow (``multi_all_finite`` is 0)
    halves the scale used from the next step on; 2000 steps in a row without overflow double
    it, up to 2**24.

    Properties
    ----------
    loss_scale : float
        The current loss scale
    """

    def __init__(self):
        self._loss_scale = 2. ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2. ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Check gradients for overflow (and update the scale for the next step)."""
        with ag.pause():
            grads = [p._grad[0] for p in params if p._grad is not None]
            flag = nd.ones((1,), ctx=grads[0].context)
            for i in range(0, len(grads), 200):
                chunk = grads[i:i + 200]
                nd.multi_all_finite(*chunk, num_arrays=len(chunk), init_output=False, out=flag)
        overflow = not bool(flag.asnumpy())
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
