"""NaiveEngine: runs every push at once on the calling thread."""
from __future__ import annotations

from .base import sync_devices


class NaiveEngine:
    """Synchronous engine (``MXNET_ENGINE_TYPE=NaiveEngine``)."""

    # Nothing is ever in flight: callers may run inline work directly (see ``engine.idle``).
    _inflight = frozenset()

    def push(self, fn, reads=(), writes=(), ctx=None, asynchronous=False):
        return fn()

    def wait_for(self, array):
        pass

    def wait_all(self):
        sync_devices()
