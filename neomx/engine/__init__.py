"""The execution engine: every NDArray operation and executor run is pushed through here.

``push(fn, reads, writes, ctx)`` schedules ``fn`` once all earlier writers of ``reads`` and
earlier readers/writers of ``writes`` are done (MXNet's read/write dependency rule); ``wait_for``
and ``wait_all`` block until the given variables, or everything, are computed.

This engine (``NaiveEngine``) runs each push at once on the calling thread, which satisfies that
rule trivially; device kernels still run asynchronously where torch does (CUDA streams), and
``wait_all`` synchronises them. An asynchronous per-device engine can replace it behind the same
interface (``set_engine``).
"""
from __future__ import annotations

import contextvars

import torch

__all__ = ["Var", "NaiveEngine", "push", "wait_for", "wait_all", "get_engine", "set_engine"]


class Var:
    """A dependency token; each NDArray's storage has one."""

    __slots__ = ("__weakref__",)


class NaiveEngine:
    """Synchronous engine: runs each pushed function immediately."""

    def push(self, fn, reads=(), writes=(), ctx=None):
        return fn()

    def wait_for(self, var):
        pass

    def wait_all(self):
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            for i in range(torch.cuda.device_count()):
                torch.cuda.synchronize(i)


_engine: contextvars.ContextVar = contextvars.ContextVar("neomx_engine", default=NaiveEngine())


def get_engine():
    return _engine.get()


def set_engine(engine):
    """Install ``engine`` for the current context; returns a token for ``reset_engine``."""
    return _engine.set(engine)


def reset_engine(token):
    _engine.reset(token)


def push(fn, reads=(), writes=(), ctx=None):
    """Schedule ``fn()`` after its dependencies; returns what ``fn`` returns when run eagerly."""
    return _engine.get().push(fn, reads, writes, ctx)


def wait_for(var):
    _engine.get().wait_for(var)


def wait_all():
    _engine.get().wait_all()
