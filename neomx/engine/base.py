"""Dependency variables shared by the engines."""
from __future__ import annotations

import threading

import torch


class Var:
    """The dependency token of one array's storage (views share their base's Var).

    ``write`` is the pending asynchronous write (a Future) and ``reads`` the pending asynchronous
    reads since then; both are only touched under the engine's lock.
    """

    __slots__ = ("write", "reads", "__weakref__")

    def __init__(self):
        self.write = None
        self.reads = []


def sync_devices():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i in range(torch.cuda.device_count()):
            torch.cuda.synchronize(i)


class _BulkState(threading.local):
    """This thread's bulk size (``engine.set_bulk_size``) and its current bulk segment."""

    def __init__(self):
        self.size = 0  # MXNet's initial bulk size for imperative pushes
        self.count = 0  # pushes so far in the current segment (0: the next push starts one)
        self.gen = -1  # the engine's async-push generation the segment's snapshot was taken at
        self.busy_w = frozenset()
        self.busy_r = frozenset()


bulk_state = _BulkState()
