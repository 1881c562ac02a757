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
"""
from __future__ import annotations

import os

from .base import Var
from .naive import NaiveEngine
from .threaded import ThreadedEngine

__all__ = ["Var", "NaiveEngine", "ThreadedEngine", "push", "idle", "wait_for", "wait_all", "get_engine",
           "set_engine"]


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
