"""``mx.mon``: watch the values inside executors while training, as MXNet 1.9.1's Monitor.

A :class:`Monitor` installs a callback on executors (``install``, or ``Module.install_monitor``
/ ``fit(monitor=...)``); every ``interval`` batches, between ``tic()`` and ``toc()``, it records
``stat_func`` of each operator output the executors compute whose name matches ``pattern``
(with ``monitor_all``, operator inputs too) and, at ``toc()``, of the matching arguments and
auxiliary states. ``toc_print()`` logs them as MXNet does::

    Batch:       1 fc1_output                     0.7031783
"""
from __future__ import annotations

import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

__all__ = ["Monitor"]


class Monitor:
    """Monitor inputs, outputs, weights, and gradients for debugging.

    Parameters
    ----------
    interval : int
        Number of batches between printing.
    stat_func : function
        Computes a statistic of an NDArray: returns an NDArray or a list of them. Default:
        ``norm(x) / sqrt(x.size)``.
    pattern : str
        A regular expression; only values whose names match it are recorded (``re.match``).
    sort : bool, default False
        Sort the records of a batch by name.
    monitor_all : bool, default False
        Record operator inputs as well as outputs.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                """``norm(x) / sqrt(size(x))``."""
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """The executor's callback: ``name`` as bytes, the value as an NDArray."""
            if isinstance(name, bytes):
                name = name.decode()
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Install the callback on executor ``exe`` (several executors may share a Monitor)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait(self):
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Start collecting for the current batch (call before forward)."""
        if self.step % self.interval == 0:
            self._wait()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Stop collecting; returns ``[(step, name, text)]`` for the batch (empty between
        intervals). ``text`` is each statistic's value followed by a tab."""
        if not self.activated:
            return []
        self._wait()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, values in self.queue:
            if isinstance(values, NDArray):
                values = [values]
            if not isinstance(values, list):
                raise TypeError(f"Monitor: stat_func must return an NDArray or a list of them, "
                                f"got {type(values).__name__}")
            text = ""
            for v in values:
                if not isinstance(v, NDArray):
                    raise TypeError(f"Monitor: stat_func returned a {type(v).__name__}, "
                                    "expected NDArray")
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((n, k, text))
        self.queue = []
        return res

    def toc_print(self):
        """Stop collecting and log the batch's records (``logging.info``)."""
        for n, k, v in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(n, k, v))
