"""``gluon.loss``: the losses of MXNet 1.9.1, as HybridBlocks (same numbers and gradients
imperative and hybridized).

Every loss takes ``weight`` (a global scalar factor, or None) and ``batch_axis``; most also take
a per-sample ``sample_weight`` input broadcast against the elementwise loss before it is
averaged over all axes but ``batch_axis``.

Examples
--------
>>> import neomx as mx
>>> loss = mx.gluon.loss.L2Loss()
>>> loss(mx.nd.array([[1., 2.]]), mx.nd.array([[1., 4.]])).asnumpy()
array([1.], dtype=float32)
"""
from __future__ import annotations

import numpy as np

from .. import ndarray
from ..base import numeric_types
from .block import HybridBlock
from .parameter import GluonAssertionError

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss`` times ``sample_weight`` (broadcast) and times the number ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numeric_types):
            raise GluonAssertionError("weight must be a number")
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape."""
    if F is ndarray:
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


def _softrelu_of_minus_abs(F, x):
    """``log(1 + exp(-|x|))``, the stable part of log-sigmoid."""
    return F.Activation(-F.abs(x), act_type="softrelu")


class Loss(HybridBlock):
    """The base class of losses: keeps ``weight`` (a number or None) and ``batch_axis``."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{self.__class__.__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _mean_over_sample(self, F, loss):
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class L2Loss(Loss):
    r"""Half the mean squared error: :math:`L = \frac{1}{2} \sum_i (label_i - pred_i)^2`
    averaged over all axes but ``batch_axis``. ``label`` may have any shape with ``pred``'s
    number of elements."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return self._mean_over_sample(F, loss)


class L1Loss(Loss):
    r"""The mean absolute error :math:`|label_i - pred_i|` over all axes but ``batch_axis``."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` itself when
    ``from_sigmoid``) against ``label`` in [0, 1]; ``pos_weight`` (broadcast, e.g. shape
    ``(1, classes)``) weighs the positive term. Alias: ``SigmoidBCELoss``."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                # max(x, 0) - x*z + log(1 + exp(-|x|)), log-sum-exp stable
                loss = F.relu(pred) - pred * label + _softrelu_of_minus_abs(F, pred)
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (
                    _softrelu_of_minus_abs(F, pred) + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross-entropy of ``softmax(pred, axis)`` (``pred`` taken as log-probabilities when
    ``from_logits``) against class indices (``sparse_label``: ``label`` is ``pred``'s shape
    without ``axis``) or against distributions (``label`` with ``pred``'s size).
    Alias: ``SoftmaxCELoss``."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence :math:`\sum_i label_i (\log label_i - pred_i)`, summed
    over all axes but ``batch_axis``; ``pred`` is a log-probability when ``from_logits``
    (default), else ``log_softmax(pred, axis)`` is taken first."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist Temporal Classification loss over unnormalized ``pred`` (``layout``
    'NTC' or 'TNC'; the last class is the blank) and 0-based ``label`` (``label_layout`` 'NT'
    or 'TN', padded with -1), with optional ``pred_lengths``/``label_lengths`` of shape
    ``(batch,)``. Output shape ``(batch,)``."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise GluonAssertionError(
                f"Only 'NTC' and 'TNC' layouts for pred are supported. Got: {layout}")
        if label_layout not in ("NT", "TN"):
            raise GluonAssertionError(
                f"Only 'NT' and 'TN' layouts for label are supported. Got: {label_layout}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        # MXNet's generated functions drop None inputs, so the optional lengths shift left
        inputs = [x for x in (pred, label, pred_lengths, label_lengths) if x is not None]
        loss = F.CTCLoss(*inputs, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: ``|d| - rho/2`` where ``|d| > rho``, else ``d**2 / (2 rho)``, with
    ``d = label - pred``, averaged over all axes but ``batch_axis``."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels -1/1, averaged over all axes but
    ``batch_axis``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label) ** 2`` for labels -1/1, averaged over all axes but
    ``batch_axis``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels -1/1 (``label_format='signed'``) or 0/1
    (``'binary'``), averaged over all axes but ``batch_axis``."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ("signed", "binary"):
            raise ValueError(f"label_format can only be signed or binary, recieved {label_format}.")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # -1/1 -> 0/1
        loss = F.relu(pred) - pred * label + _softrelu_of_minus_abs(F, pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_over_sample(F, loss)


class TripletLoss(Loss):
    r"""``max(\|positive - pred\|^2 - \|negative - pred\|^2 + margin, 0)``, the squared
    distances summed over all axes but ``batch_axis``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    """Poisson negative log-likelihood, averaged over *all* elements (shape ``(1,)``):
    ``exp(pred) - target * pred`` when ``from_logits`` (default), else
    ``pred - target * log(pred + epsilon)``; ``compute_full`` adds Stirling's approximation
    of ``log(target!)`` where ``target > 1``."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling_factor = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            stirling_factor *= target > 1
            # in place, as MXNet: under autograd.record() this raises MXNet's error about
            # assigning to arrays in a graph (hybridized, it is an ordinary add)
            loss += stirling_factor
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` where ``label`` is 1 and ``max(0, cos - margin)`` where it
    is -1, cosines along the last axis; output shape ``(batch, 1)``."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        zero = F.array([0]) if F is ndarray else F.zeros((1, 1))
        # (MXNet passes axis=1 here, an attribute broadcast_maximum ignores)
        cos_sim_b = F.broadcast_maximum(zero, y_minus_1 * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        eps = F.array([1e-12]) if F is ndarray else F.full((1, 1), 1e-12)
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, eps)


class SDMLLoss(Loss):
    """Batchwise Smoothed Deep Metric Learning loss (Bonadiman et al., 2019): row ``i`` of
    ``x2`` is the positive for row ``i`` of ``x1`` and every other row a negative; the
    KL divergence between ``log_softmax(-squared distances)`` and the identity smoothed by
    ``smoothing_parameter``. Needs concrete shapes, so it runs imperatively only (as MXNet)."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1, x2):
        """Squared euclidean distance between every row of ``x1`` and every row of ``x2``."""
        if x1.shape != x2.shape:
            raise GluonAssertionError("")
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to([batch_size, batch_size, dim])
        x2_ = x2.expand_dims(0).broadcast_to([batch_size, batch_size, dim])
        return ((x1_ - x2_) ** 2).sum(axis=2)

    def _compute_labels(self, F, batch_size):
        """The identity, smoothed: 1 - s on the diagonal, s / (batch - 1) elsewhere."""
        gold = F.eye(batch_size)
        s = self.smoothing_parameter
        return gold * (1 - s) + (1 - gold) * s / (batch_size - 1)

    def _loss(self, F, x1, x2):
        batch_size = x1.shape[0]
        labels = self._compute_labels(F, batch_size)
        distances = self._compute_distances(x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels.as_in_context(distances.context))

    def hybrid_forward(self, F, x1, x2):
        return self._loss(F, x1, x2)
