"""Modules written in Python (MXNet 1.9.1's ``PythonModule`` and ``PythonLossModule``).

A :class:`PythonModule` has no parameters and no executors: subclasses compute ``forward``,
``backward`` and ``_compute_output_shapes`` themselves, with NDArrays. They fit into a
``SequentialModule`` chain, typically as the loss on top (:class:`PythonLossModule`).
"""
from __future__ import annotations

import logging

from .. import ndarray as nd
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A module without parameters implemented in Python.

    Parameters
    ----------
    data_names, label_names, output_names : list of str
    logger : Logger
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else None
        self._output_names = list(output_names)
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialise."""

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with this module's outputs when it takes labels."""
        if self._label_shapes is None:
            return  # (a module without labels has nothing to score)
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Record the shapes and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        assert grad_req == "write", "Python module only support write gradient"
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        assert len(data_shapes) == len(self._data_names)
        assert [x[0] for x in data_shapes] == self._data_names
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        if label_shapes is not None:
            assert self._label_names is not None
            assert len(self._label_names) == len(label_shapes)
            assert [x[0] for x in label_shapes] == self._label_names
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from ``self._data_shapes`` (subclasses)."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """No parameters to optimise."""
        self.optimizer_initialized = True

    def install_monitor(self, mon):
        """No executors to monitor."""


class PythonLossModule(PythonModule):
    """A loss on top of a chain: its output is its input (the scores), its input gradient
    ``grad_func(scores, labels)``.

    Parameters
    ----------
    name : str
        Outputs are named ``<name>_output``.
    data_names, label_names : tuple of str
        One each.
    grad_func : function
        ``grad_func(scores, labels) -> gradient`` (NDArray, or anything ``mx.nd.array`` takes).
    """

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        assert len(data_names) == 1
        assert len(label_names) == 1
        self._scores = self._labels = self._scores_grad = None
        if grad_func is not None:
            assert callable(grad_func)
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + "_output", _shape(self._data_shapes[0]))]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        assert merge_multi_context, "multi-context is not supported by PythonLossModule"
        return [self._scores]

    def backward(self, out_grads=None):
        """The gradient of the scores, from ``grad_func`` (a loss takes no head gradient)."""
        assert out_grads is None, "For a loss module, out_grads should be None"
        assert self.for_training
        self._backward_impl()

    def _backward_impl(self):
        """Compute ``self._scores_grad`` (override for a loss without ``grad_func``)."""
        if self._grad_func is None:
            raise NotImplementedError()
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        assert merge_multi_context, "multi-context is not supported by PythonLossModule"
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError()


def _shape(desc):
    return getattr(desc, "shape", None) or desc[1]

