"""CPU memory pooling, opt-in.

MXNet keeps freed buffers in a pool and hands them out again, so a training loop touches the same
memory every iteration. PyTorch's CPU tensors come from the C allocator; with glibc's defaults,
blocks above the (dynamic, at most 32 MiB) mmap threshold are fresh ``mmap`` regions returned to
the kernel on free, and a thread's arena heap is unmapped as soon as it is wholly free, so every
iteration page-faults its large activations in again (LeNet at batch 1024: ~35,000 faults per
step; see benchmarks/README.md for what that costs).

glibc can be told to keep such blocks instead (``mallopt``: one arena, mmap and trim thresholds of
1 GiB), which makes the C heap behave like a pool. But those settings belong to the whole process,
every library and thread in it, not to neomx: a program that frees a large buffer would no longer
give the memory back to the system. So ``import neomx`` leaves them alone, and a program opts in:

* ``neomx.storage.enable_cpu_pool()``, best called early (before the large buffers exist), or
* ``NEOMX_CPU_MEM_POOL=1`` in the environment, applied when neomx is imported.

Elsewhere (other C libraries, other systems) enabling does nothing and returns False.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["enable_cpu_pool", "pooled", "configure"]

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_POOL_BYTES = 1 << 30  # blocks up to 1 GiB come from (and go back to) the heap

_ON = ("1", "true", "on", "yes")

_state = {"pooled": False}


def _glibc_mallopt():
    """glibc's ``mallopt``, or None (not Linux, not glibc: musl has no tunable mallopt)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  (glibc only)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


def enable_cpu_pool() -> bool:
    """Make the C allocator keep freed CPU buffers for reuse, like MXNet's pooled storage.

    Process-wide and irreversible (glibc cannot restore its dynamic thresholds): it sets glibc's
    mmap and trim thresholds to 1 GiB and limits malloc to one arena (a per-thread arena's heap is
    unmapped as soon as it is wholly free, whatever the trim threshold; the main heap keeps its
    blocks). Freed memory then stays with the process for reuse instead of going back to the
    system. Returns whether the settings are in effect (False where the C library is not glibc).
    """
    if _state["pooled"]:
        return True
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False
    ok = (mallopt(_M_MMAP_THRESHOLD, _POOL_BYTES) == 1 and mallopt(_M_TRIM_THRESHOLD, _POOL_BYTES) == 1
          and mallopt(_M_ARENA_MAX, 1) == 1)
    _state["pooled"] = bool(ok)
    return _state["pooled"]


def configure(environ=os.environ) -> bool:
    """Run by ``import neomx``: enables the pool only if ``NEOMX_CPU_MEM_POOL`` opts in (1, true,
    on, yes); otherwise changes nothing. Returns whether the pool is in effect."""
    if environ.get("NEOMX_CPU_MEM_POOL", "").strip().lower() in _ON:
        return enable_cpu_pool()
    return _state["pooled"]


def pooled() -> bool:
    """Whether the CPU pool settings are in effect in this process."""
    return _state["pooled"]
