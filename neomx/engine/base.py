"""Dependency variables shared by the engines."""
from __future__ import annotations

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
