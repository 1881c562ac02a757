"""Contrib optimizers (MXNet 1.9.1's ``mx.optimizer.contrib``): ``GroupAdaGrad``."""
from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray, zeros
from .optimizer import Optimizer

register = Optimizer.register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight (lazily, on the gradient's rows
    only, with a row_sparse gradient: ``mx.nd.contrib.group_adagrad_update``)::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        weight -= lr * grad / sqrt(history + eps)

    Weight decay is not supported (a nonzero ``wd`` fails at the update, as in MXNet).

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history before the square root.

    Examples
    --------
    >>> import neomx as mx
    >>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([[0.9, 0.9],
           [0.9, 0.9]], dtype=float32)
    """

    _sparse_updates = True  # (row_sparse gradients: group_adagrad_update)

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        assert len(weight.shape) == 2
        return zeros((weight.shape[0], 1), weight.context)  # history per row

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        assert wd == 0, "Weight decay is not supported for GroupAdaGrad"
        if grad.stype == "row_sparse":  # lazy: the gradient's rows only
            kwargs = {"epsilon": self.float_stable_eps, "rescale_grad": self.rescale_grad}
            if self.clip_gradient:
                kwargs["clip_gradient"] = self.clip_gradient
            nd.contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr, **kwargs)
            return
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        state[:] += nd.mean(nd.square(grad), axis=1, keepdims=True)
        div = lr * grad / nd.sqrt(state + self.float_stable_eps)
        weight[:] -= div
