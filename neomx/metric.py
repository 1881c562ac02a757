"""Evaluation metrics (``mx.metric``), as in MXNet 1.9.1.

A metric accumulates ``sum_metric`` and ``num_inst`` over ``update(labels, preds)`` calls
(lists of NDArrays, or single NDArrays) and reports ``get() -> (name, sum_metric / num_inst)``,
``nan`` before any update. Metrics with global statistics also keep ``global_sum_metric`` and
``global_num_inst``, which ``reset_local()`` leaves alone (``get_global()``).

What counts as an instance differs per metric, as in MXNet: Accuracy, TopKAccuracy,
CrossEntropy, NegativeLogLikelihood and Loss count samples (elements); MAE, MSE, RMSE,
PearsonCorrelation and CustomMetric (without a ``(sum, n)`` result) count one per array
pair, so they report the mean of per-batch values; F1 and MCC (``average='macro'``) count one
per ``update`` call.

Metrics are registered by lowercased class name plus aliases (``'acc'``, ``'ce'``,
``'top_k_accuracy'``, ``'nll_loss'``, ``'pearsonr'``, ``'composite'``...):
``mx.metric.create('acc')``; a list gives a CompositeEvalMetric, a function a CustomMetric.

Examples
--------
>>> import neomx as mx
>>> acc = mx.metric.create('acc')
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
"""
from __future__ import annotations

import json
import math
import warnings
from collections import OrderedDict

import numpy
import torch

from .base import numeric_types
from .ndarray import NDArray

__all__ = ["EvalMetric", "register", "alias", "create", "check_label_shapes",
           "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "Perplexity", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "PCC",
           "Loss", "Torch", "Caffe", "CustomMetric", "np"]


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless ``labels`` and ``preds`` have the same length (or ``shape``);
    with ``wrap``, single NDArrays come back as one-element lists."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of "
                         f"predictions {pred_shape}")
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """The base class of metrics: subclasses define ``update``.

    Parameters
    ----------
    name : str
        The name reported by ``get``.
    output_names, label_names : list of str, optional
        The outputs/labels ``update_dict`` picks (default: all, in order).
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The constructor arguments plus ``metric`` (class name), for ``create(**config)``."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """``update`` from ``{name: NDArray}`` dicts (filtered by output/label names)."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError()

    def reset(self):
        """Clear the local and global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def _add(self, value, num):
        """Add to the local and global sums (as Python numbers: float64 accumulation)."""
        value = float(value)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += num
        self.global_num_inst += num

    def get(self):
        """``(name, value)``; ``value`` is nan when nothing was counted."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self):
        """``[(name, value), ...]``."""
        name, value = self.get()
        return list(zip(name if isinstance(name, list) else [name],
                        value if isinstance(value, list) else [value]))

    def get_global_name_value(self):
        if self._has_global_stats:
            name, value = self.get_global()
            return list(zip(name if isinstance(name, list) else [name],
                            value if isinstance(value, list) else [value]))
        return self.get_name_value()


# --- registry -------------------------------------------------------------------------------------
_REGISTRY: dict = {}


def register(klass, name=None):
    """Register an EvalMetric subclass under its lowercased class name (or ``name``)."""
    assert issubclass(klass, EvalMetric), "Can only register subclass of EvalMetric"
    name = (klass.__name__ if name is None else name).lower()
    if name in _REGISTRY:
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name "
                      f"{name} is overriding existing metric {_REGISTRY[name].__module__}."
                      f"{_REGISTRY[name].__name__}", UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """A class decorator registering the class under extra names."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args, **kwargs):
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop("metric")
    if isinstance(name, EvalMetric):
        assert not args and not kwargs, \
            "metric is already an instance. Additional arguments are invalid"
        return name
    if isinstance(name, dict):
        return _create(**name)
    assert isinstance(name, str), "metric must be of string type"
    if name.startswith("["):
        assert not args and not kwargs
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    if name.startswith("{"):
        assert not args and not kwargs
        return _create(**json.loads(name))
    name = name.lower()
    assert name in _REGISTRY, \
        f"{name} is not registered. Please register with metric.register first"
    return _REGISTRY[name](*args, **kwargs)


def create(metric, *args, **kwargs):
    """A metric from a name, an instance, a function ``feval(label, pred)`` (CustomMetric) or
    a list of those (CompositeEvalMetric).

    Examples
    --------
    >>> import neomx as mx
    >>> m = mx.metric.create(['acc', 'ce'])
    >>> [type(c).__name__ for c in m.metrics]
    ['Accuracy', 'CrossEntropy']
    """
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


def _np(a):
    return a.asnumpy() if isinstance(a, NDArray) else numpy.asarray(a)


# --- composite ------------------------------------------------------------------------------------
@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns ``([names], [values])``."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:  # MXNet returns (does not raise) the error
            return ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in getattr(self, "metrics", []):
            metric.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            names.extend([name] if isinstance(name, str) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


# --- classification -------------------------------------------------------------------------------
@register
@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of correct predictions; predictions shaped unlike the labels are
    ``argmax``-ed along ``axis`` first. Counts every label element."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            if pred_label.shape != label.shape:
                pred_label = pred_label.argmax(axis=self.axis)
            pred_label = _np(pred_label).astype("int32").flat
            label = _np(label).astype("int32").flat
            check_label_shapes(label, pred_label)
            self._add((pred_label == label).sum(), len(pred_label))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """A prediction is correct when the label is among the ``top_k`` (> 1) highest scores;
    the name is ``top_k_accuracy_<k>``."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        assert self.top_k > 1, "Please use Accuracy if top_k is no more than 1"
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            assert len(pred_label.shape) <= 2, "Predictions should be no more than 2 dims"
            pred_label = numpy.argpartition(_np(pred_label).astype("float32"), -self.top_k)
            label = _np(label).astype("int32")
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            if pred_label.ndim == 1:
                # MXNet adds this to the local sum only
                self.sum_metric += float((pred_label.flat == label.flat).sum())
            else:
                num_classes = pred_label.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    self._add((pred_label[:, num_classes - 1 - j].flat == label.flat).sum(), 0)
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """Confusion counts (local and global) of a binary classifier, for F1 and MCC."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = _np(pred)
        label = _np(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.__class__.__name__} currently only supports binary "
                             "classification.")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        tp, fp = (pred_true * label_true).sum(), (pred_true * label_false).sum()
        fn, tn = (pred_false * label_true).sum(), (pred_false * label_false).sum()
        self.true_positives += tp
        self.global_true_positives += tp
        self.false_positives += fp
        self.global_false_positives += fp
        self.false_negatives += fn
        self.global_false_negatives += fn
        self.true_negatives += tn
        self.global_true_negatives += tn

    @staticmethod
    def _ratio(a, b):
        return float(a) / (a + b) if a + b > 0 else 0.0

    @staticmethod
    def _f(p, r):
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def precision(self):
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self):
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self):
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self):
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self):
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self):
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global=False):
        """MCC, with zero factors of the denominator replaced by 1."""
        pre = "global_" if use_global else ""
        if not (self.global_total_examples if use_global else self.total_examples):
            return 0.0
        tp, fp, fn, tn = (float(getattr(self, pre + k)) for k in
                          ("true_positives", "false_positives", "false_negatives",
                           "true_negatives"))
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self):
        return (self.false_negatives + self.false_positives
                + self.true_negatives + self.true_positives)

    @property
    def global_total_examples(self):
        return (self.global_false_negatives + self.global_false_positives
                + self.global_true_negatives + self.global_true_positives)

    def local_reset_stats(self):
        self.false_positives = self.false_negatives = 0
        self.true_positives = self.true_negatives = 0

    def reset_stats(self):
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryMetric(EvalMetric):
    """F1/MCC: ``'macro'`` averages per-``update`` scores, ``'micro'`` scores all counts."""

    def __init__(self, name, output_names, label_names, average):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names,
                            has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            self.metrics.reset_stats()
        else:
            self.sum_metric = self._score(False) * self.metrics.total_examples
            self.global_sum_metric = self._score(True) * self.metrics.global_total_examples
            self.num_inst = self.metrics.total_examples
            self.global_num_inst = self.metrics.global_total_examples

    def reset(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """Binary F1 score (class 1 positive; predictions are ``argmax``-ed over axis 1)."""

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryMetric):
    """Binary Matthews correlation coefficient."""

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.matthewscc(use_global=use_global)


@register
class Perplexity(EvalMetric):
    """``exp(mean -log(max(1e-10, p[label])))`` over labels not equal to ``ignore_label``."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        assert len(labels) == len(preds)
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            assert label.size == pred.size / pred.shape[-1], \
                f"shape mismatch: {label.shape} vs. {pred.shape}"
            p = pred.to_torch()
            lab = label.to_torch().to(p.device).reshape(label.size)
            axis = self.axis % p.dim()
            # mx.nd.pick: integer indices, clipped to the axis (mode='clip')
            idx = lab.to(torch.int32).long().clamp(0, p.shape[axis] - 1)
            idx = idx.reshape(p.shape[:axis] + p.shape[axis + 1:]).unsqueeze(axis)
            picked = torch.gather(p, axis, idx).reshape(-1)
            if self.ignore_label is not None:
                ignore = (lab == self.ignore_label).to(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(torch.log(torch.clamp(picked, min=1e-10)).sum())
            num += picked.numel()
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# --- regression -----------------------------------------------------------------------------------
def _as_columns(label, pred):
    label, pred = _np(label), _np(pred)
    if len(label.shape) == 1:
        label = label.reshape(label.shape[0], 1)
    if len(pred.shape) == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _PerBatch(EvalMetric):
    """A regression metric: one value per (label, pred) pair, ``num_inst`` += 1 each."""

    _fn = None

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(type(self)._fn(label, pred), 1)


@register
class MAE(_PerBatch):
    """Mean absolute error (1-D arrays become columns, then broadcast)."""

    _fn = staticmethod(lambda label, pred: numpy.abs(label - pred).mean())

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


@register
class MSE(_PerBatch):
    """Mean squared error (1-D arrays become columns, then broadcast)."""

    _fn = staticmethod(lambda label, pred: ((label - pred) ** 2.0).mean())

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


@register
class RMSE(_PerBatch):
    """Root mean squared error per batch, averaged over batches."""

    _fn = staticmethod(lambda label, pred: numpy.sqrt(((label - pred) ** 2.0).mean()))

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


class _LogLoss(EvalMetric):
    """Sum of ``-log(pred[i, label[i]] + eps)`` over samples."""

    _count_message = True  # MXNet's NegativeLogLikelihood names the counts; CrossEntropy not

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _np(label).ravel(), _np(pred)
            n = pred.shape[0]
            assert label.shape[0] == n, (label.shape[0], n) if self._count_message else ''
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Cross entropy of class probabilities: mean ``-log(p[label] + eps)``."""

    _count_message = False

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log likelihood: mean ``-log(p[label] + eps)``."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation: ``'macro'`` averages per-batch coefficients, ``'micro'`` computes
    one over everything seen (Welford updates)."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        if self.average == "micro":
            self.reset_micro()

    def reset_micro(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0
        self._pred_nums = self._label_nums = 0
        self._conv = 0

    def reset(self):
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, *aggregate):
        """Welford's online update of ``(count, mean, M2)``."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred):
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _np(label).ravel().astype(numpy.float64)
            pred = _np(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = \
                    self.update_variance(label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = \
                    self.update_variance(pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                 * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, float(pearsonr))


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Gorodkin's R_K) from a growing confusion matrix."""

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _np(label).astype("int32")
            pred = _np(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred, label), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """The mean of the predictions themselves (loss outputs); labels are ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            self._add(pred.to_torch().sum().item(), pred.size)


@register
class Torch(Loss):
    """Loss under the name ``torch``."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Loss under the name ``caffe``."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning a value (one instance)
    or ``(sum_metric, num_inst)``. The name defaults to ``feval.__name__`` (``custom(<lambda>)``
    for lambdas)."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_np(label), _np(pred))
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self.sum_metric += sum_metric
                self.global_sum_metric += sum_metric
                self.num_inst += num_inst
                self.global_num_inst += num_inst
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric from a function of numpy ``(label, pred)``.

    Examples
    --------
    >>> import neomx as mx
    >>> def l1(label, pred):
    ...     return abs(label - pred).mean()
    >>> m = mx.metric.np(l1)
    >>> m.update([mx.nd.array([1, 2])], [mx.nd.array([1, 4])])
    >>> m.get()
    ('l1', 1.0)
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
