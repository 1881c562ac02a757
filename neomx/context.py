"""Devices: ``Context(device_type, device_id)`` mapped onto torch devices; the current context."""
from __future__ import annotations

import contextvars
import threading

import torch

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "gpu_memory_info"]


class Context:
    """A device on which NDArrays live and operators run.

    ``cpu(0)`` and ``cpu(1)`` are distinct devices (separate engine queues) that share host
    memory, so copies between them are cheap. ``gpu(i)`` maps to ``cuda:i``; whether the device
    exists is checked at the first allocation, as in MXNet.

    Examples
    --------
    >>> import neomx as mx
    >>> mx.cpu(1)
    cpu(1)
    >>> with mx.cpu(1):
    ...     mx.current_context()
    cpu(1)
    """

    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    __slots__ = ("device_typeid", "device_id", "_torch_device")

    def __init__(self, device_type, device_id: int = 0):
        if isinstance(device_type, Context):
            self.device_typeid, self.device_id = device_type.device_typeid, device_type.device_id
        else:
            self.device_typeid = Context.devstr2type[device_type]  # KeyError for unknown, as MXNet
            self.device_id = int(device_id)
        self._torch_device = None

    @property
    def device_type(self) -> str:
        return Context.devtype2str[self.device_typeid]

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return f"{self.device_type}({self.device_id})"

    __repr__ = __str__

    def __enter__(self):
        # ``with`` blocks nest per thread, so one stack of tokens per thread serves every Context
        # (a Context object is shared between threads: its tokens cannot live on it)
        stack = getattr(_tokens, "stack", None)
        if stack is None:
            stack = _tokens.stack = []
        stack.append(_current.set(self))
        return self

    def __exit__(self, *exc):
        _current.reset(_tokens.stack.pop())

    @property
    def torch_device(self) -> torch.device:
        """The torch device for this context; raises MXNetError if it does not exist here."""
        dev = self._torch_device
        if dev is None:
            dev = self._torch_device = _resolve(self)
        return dev

    def empty_cache(self):
        if self.device_typeid == 2 and torch.cuda.is_available():
            with torch.cuda.device(self.torch_device):
                torch.cuda.empty_cache()

    @property
    def is_gpu(self) -> bool:
        return self.device_typeid == 2


def _resolve(ctx: Context) -> torch.device:
    if ctx.device_typeid == 2:
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if ctx.device_id >= n:
            raise MXNetError(
                f"cannot allocate on {ctx}: no such CUDA device (this process sees {n} GPU"
                f"{'' if n == 1 else 's'}{'; neomx was given a CPU-only torch' if n == 0 and not torch.backends.cuda.is_built() else ''})")
        return torch.device("cuda", ctx.device_id)
    return torch.device("cpu")


def cpu(device_id: int = 0) -> Context:
    """The CPU context ``cpu(device_id)``."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU context ``gpu(device_id)`` (checked at first allocation)."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return Context("cpu_pinned", device_id)


def num_gpus() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _check_gpu(device_id) -> int:
    """``device_id`` as an int, or MXNet's error when CUDA or that GPU is missing."""
    device_id = int(device_id)
    n = num_gpus()
    if n == 0:
        if not torch.backends.cuda.is_built():
            raise MXNetError("This call is only supported for MXNet built with CUDA support.")
        raise MXNetError("CUDA: no CUDA-capable device is detected")
    if not 0 <= device_id < n:
        raise MXNetError(f"CUDA: invalid device ordinal (GPU {device_id}; this process sees {n})")
    return device_id


def gpu_memory_info(device_id=0):
    """Query CUDA for the free and total bytes of GPU global memory.

    Parameters
    ----------
    device_id : int, optional
        The device id of the GPU device.

    Raises
    ------
    MXNetError
        Without CUDA ("This call is only supported for MXNet built with CUDA support.", as a
        CPU build of MXNet) or without that GPU.

    Returns
    -------
    (free, total) : (int, int)
    """
    device_id = _check_gpu(device_id)
    free, total = torch.cuda.mem_get_info(device_id)
    return (int(free), int(total))


_tokens = threading.local()  # this thread's stack of `with ctx:` tokens
_current: contextvars.ContextVar[Context] = contextvars.ContextVar("neomx_context", default=Context("cpu", 0))


def current_context() -> Context:
    """The context used when an API call is given ``ctx=None`` (``cpu(0)`` by default)."""
    return _current.get()


