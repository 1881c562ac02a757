"""The execution engine: every NDArray operation and executor run is pushed through here.

``push(fn, reads, writes, ctx, asynchronous=False)`` runs ``fn`` once every earlier write to the
arrays in ``reads``, and every earlier read or write of the arrays in ``writes``, is done
(MXNet's dependency rule); ``wait_for(array)`` and ``wait_all()`` block until the given array, or
everything, is computed, and re-raise errors of asynchronous work there, as MXNet does.

Two engines implement it (``MXNET_ENGINE_TYPE`` picks one at import, as in MXNet):

* ``ThreadedEngine`` (default): asynchronous pushes (executor forward/backward) run on one worker
  thread per device, in push order per device, so several devices compute at once; other pushes
  run on the calling thread after their dependencies.
* ``NaiveEngine``: everything runs at once on the calling thread (for debugging).

``set_bulk_size(size)`` / ``bulk(size)`` are MXNet's bulk-execution controls (see ``bulk``).
"""
from __future__ import annotations

import operator
import os

from .base import Var, bulk_state
from .naive import NaiveEngine
from .threaded import ThreadedEngine

__all__ = ["Var", "NaiveEngine", "ThreadedEngine", "push", "idle", "wait_for", "wait_all", "get_engine",
           "set_engine", "set_bulk_size", "bulk"]


def _default_engine():
    kind = os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice")
    return NaiveEngine() if kind == "NaiveEngine" else ThreadedEngine()


_state = {"engine": _default_engine()}


def get_engine():
    return _state["engine"]


def set_engine(engine):
    """Install ``engine`` (after finishing the current one's work); returns the previous one."""
    prev = _state["engine"]
    prev.wait_all()
    _state["engine"] = engine
    return prev


def push(fn, reads=(), writes=(), ctx=None, asynchronous=False):
    """Schedule ``fn()`` after its dependencies; inline pushes return what ``fn`` returns."""
    return _state["engine"].push(fn, reads, writes, ctx, asynchronous)


def idle():
    """True when no asynchronous work is in flight, so inline work may run directly on the
    calling thread without a dependency check (the fast path of small NDArray operations)."""
    return not _state["engine"]._inflight


def wait_for(array):
    """Block until pending writes to ``array`` are done (raising their errors)."""
    _state["engine"].wait_for(array)


def wait_all():
    """Block until all pushed work is done (raising the first error of asynchronous work)."""
    _state["engine"].wait_all()


def set_bulk_size(size):
    """Set size limit on bulk execution (this thread's; MXNet's initial size is 0).

    Bulk execution bundles many operators to run together. This can improve performance when
    running a lot of small operators sequentially.

    What it changes in neomx: small NDArray operations already run directly on the calling thread
    (no engine job, no dependency bookkeeping) whenever nothing asynchronous is in flight, so
    there bulking has nothing left to remove and changes nothing. While asynchronous work is in
    flight (an executor's forward/backward on a device worker), each operation otherwise takes
    the engine lock and scans its arrays' pending work; inside a bulk, one lock per ``size``
    operations snapshots the arrays in-flight work touches, and operations on other arrays then
    run lock-free (measured on a 4x4 array with an executor job in flight: the engine's own cost per
    push 1.6-2.1 -> 1.0 us, ``x += 1`` 7.5 -> 6.5 us; operations on arrays that in-flight work
    uses still wait for it). An asynchronous push ends the segment. The executor needs no bulk:
    a bound graph already runs as one engine job per forward or backward.

    Parameters
    ----------
    size : int
        Maximum number of operators that can be bundled in a bulk.

    Returns
    -------
    int
        Previous bulk size.

    Examples
    --------
    >>> import neomx as mx
    >>> prev = mx.engine.set_bulk_size(10)
    >>> mx.engine.set_bulk_size(prev)
    10
    """
    size = operator.index(size)  # TypeError for str/float, as MXNet's ctypes.c_int
    prev = bulk_state.size
    bulk_state.size = size
    bulk_state.count = 0
    return prev


class _BulkScope:
    """Scope object for bulk execution."""

    def __init__(self, size):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, ptype, value, trace):
        set_bulk_size(self._old_size)


def bulk(size):
    """Bulk execution bundles many operators to run together (see ``set_bulk_size``).

    This can improve performance when running a lot of small operators sequentially.
    Returns a scope for managing bulk size::

        with mx.engine.bulk(10):
            x = mx.nd.zeros((1,))
            for i in range(100):
                x += 1
    """
    return _BulkScope(size)


# --- fork -----------------------------------------------------------------------------------------
# A forked child has none of its parent's threads: not the engine's device workers, nor the
# intra-op thread pool of torch's kernels (GNU OpenMP's pool hangs the child's first parallel
# kernel once the parent has used it). As MXNet's pthread_atfork handlers do, the parent finishes
# its pushed work before forking (Engine::Stop) and the child starts a fresh engine of the same
# kind (Engine::Start); the child's kernels run on one thread (multiprocessing workers, the
# DataLoader's included, are many processes already).
def _before_fork():
    import threading
    if threading.current_thread().name.startswith("neomx-"):
        return  # forking from a job on an engine worker: that job is in flight itself
    drain = getattr(_state["engine"], "drain", None)
    if drain is not None:  # (errors stay recorded for the parent's next wait)
        drain()


def _after_fork_in_child():
    _state["engine"] = type(_state["engine"])()
    import torch
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
