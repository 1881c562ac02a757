"""The first autograd API of MXNet (``mx.contrib.autograd``, kept by MXNet 1.9.1; new code uses
``mx.autograd``). Training state and recording are one switch here (``set_is_training`` sets
both), and ``grad``/``grad_and_loss`` turn a function into one returning gradients.

Built on ``mx.autograd``: the same tape, per-thread flags and errors.
"""
from __future__ import annotations

import functools

from .. import autograd as _ag
from ..base import string_types
from ..ndarray import NDArray, zeros_like

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]

_GRAD_REQS = ("null", "write", "add")


def set_is_training(is_train):
    """Set status to training/not training (and recording/not recording): when training, the
    graph is recorded for gradient computation and operators run in training mode (Dropout
    drops).

    Parameters
    ----------
    is_train: bool

    Returns
    -------
    previous state before this set (the previous recording state, as MXNet).
    """
    _ag.set_training(bool(is_train))
    return bool(_ag.set_recording(bool(is_train)))


class TrainingStateScope:
    """Scope for managing training state.

    Example::

        with TrainingStateScope(True):
            y = model(x)
            compute_gradient([y])
    """

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """A training scope (records the graph; operators in training mode)."""
    return TrainingStateScope(True)


def test_section():
    """A testing scope (nothing recorded; operators in inference mode)."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables to compute gradient for autograd.

    Parameters
    ----------
    variables: list of NDArray
    gradients: list of NDArray
    grad_reqs: str or list of str ('write', 'add' or 'null'; KeyError for others, as MXNet)
    """
    if isinstance(grad_reqs, string_types):
        grad_reqs = [_GRAD_REQS[_GRAD_REQS.index(grad_reqs)] if grad_reqs in _GRAD_REQS
                     else _bad_req(grad_reqs)] * len(variables)
    else:
        grad_reqs = [r if r in _GRAD_REQS else _bad_req(r) for r in grad_reqs]
    _ag.mark_variables(variables, gradients, grad_reqs)


def _bad_req(req):
    raise KeyError(req)


def backward(outputs, out_grads=None, retain_graph=False):
    """Compute the gradients of outputs w.r.t variables.

    Parameters
    ----------
    outputs: list of NDArray
    out_grads: list of NDArray or None
    """
    assert isinstance(outputs, (list, tuple)), "outputs must be a list or tuple of NDArrays"
    if out_grads is not None:
        assert len(out_grads) == len(outputs), "outputs and out_grads must have the same length"
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads),
                 retain_graph=retain_graph, train_mode=_ag.is_training())


def compute_gradient(outputs):
    """Deprecated. Please use backward"""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Return function that computes both gradient of arguments and loss value.

    Parameters
    ----------
    func: a python function
        The forward (loss) function.
    argnum: an int or a list of int
        The index of argument to calculate gradient for.

    Returns
    -------
    grad_and_loss_func: a python function
        A function that would compute both the gradient of arguments and loss value.

    Examples
    --------
    >>> import neomx as mx
    >>> f = mx.contrib.autograd.grad_and_loss(lambda x: (x * x).sum())
    >>> grads, loss = f(mx.nd.array([1, 2, 3]))
    >>> grads[0].asnumpy(), float(loss.asscalar())
    (array([2., 4., 6.], dtype=float32), 14.0)
    """
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            argnum_ = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in argnum_]
        for x in variables:
            assert isinstance(x, NDArray), "type of autograd input should NDArray."
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Return function that computes gradient of arguments (``grad_and_loss`` without the loss).

    Examples
    --------
    >>> import neomx as mx
    >>> g = mx.contrib.autograd.grad(lambda x, y: x * y, argnum=1)
    >>> g(mx.nd.array([2, 3]), mx.nd.array([5, 7]))[0].asnumpy()
    array([2., 3.], dtype=float32)
    """
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args):
        return grad_with_loss_func(*args)[0]
    return wrapped
