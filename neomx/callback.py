"""Callbacks for ``Module.fit`` (``mx.callback``), with MXNet 1.9.1's logging text.

* Batch-end callbacks receive a :class:`~neomx.model.BatchEndParam` ``(epoch, nbatch,
  eval_metric, locals)``: :class:`Speedometer`, :class:`ProgressBar`, :func:`log_train_metric`,
  :class:`LogValidationMetricsCallback`.
* Epoch-end callbacks receive ``(epoch, symbol, arg_params, aux_params)``:
  :func:`do_checkpoint`, :func:`module_checkpoint`.
"""
from __future__ import annotations

import logging
import math
import time

from .model import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer",
           "ProgressBar", "LogValidationMetricsCallback"]


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback saving ``mod`` (``mod.save_checkpoint``) every ``period`` epochs.

    Epoch ``i`` (0-based) is saved as checkpoint ``i + 1``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """An epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params`` every
    ``period`` epochs; epoch ``i`` (0-based) is saved as ``i + 1``.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> import neomx as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> cb = mx.callback.do_checkpoint(prefix, period=2)
    >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    >>> for epoch in range(4):
    ...     cb(epoch, net, {'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros((2,))}, {})
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['net-0002.params', 'net-0004.params', 'net-symbol.json']
    """
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback logging ``Iter[%d] Batch[%d] Train-%s=%f`` every ``period``
    batches (and resetting the metric's local statistics when ``auto_reset``)."""
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info('Iter[%d] Batch[%d] Train-%s=%f', param.epoch, param.nbatch, name,
                             value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """A batch-end callback logging the training speed and metric every ``frequent`` batches.

    With ``auto_reset`` (default) the metric's local statistics are reset after each log, and
    the line reads ``Epoch[0] Batch [50-100]\\tSpeed: 1910.41 samples/sec\\taccuracy=0.900000``;
    without it the range starts at 0 (``Batch [0-100]``). The first call of an epoch only
    starts the clock.

    Parameters
    ----------
    batch_size : int
    frequent : int, default 50
    auto_reset : bool, default True
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # a new epoch began
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        try:
            speed = self.frequent * self.batch_size / (time.time() - self.tic)
        except ZeroDivisionError:
            speed = float('inf')
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = 'Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec'
                msg += '\t%s=%f' * len(name_value)
                logging.info(msg, param.epoch, count - self.frequent, count, speed,
                             *sum(name_value, ()))
            else:
                msg = 'Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec'
                msg += '\t%s=%f' * len(name_value)
                logging.info(msg, param.epoch, count, speed, *sum(name_value, ()))
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        self.tic = time.time()


class ProgressBar:
    """A batch-end callback logging ``[====----] 50%`` for the share of ``total`` batches done.

    Parameters
    ----------
    total : int
        Batches per epoch.
    length : int, default 80
        Characters in the bar.
    """

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = '=' * filled_len + '-' * (self.bar_len - filled_len)
        logging.info('[%s] %s%s\r', prog_bar, percents, '%')


class LogValidationMetricsCallback:
    """An eval-end callback logging ``Epoch[%d] Validation-%s=%f`` for each metric value."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)
