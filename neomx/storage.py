"""CPU memory pooling.

MXNet keeps freed buffers in a pool and hands them out again, so a training loop touches the same
memory every iteration. PyTorch's CPU tensors come from the C allocator; with glibc's defaults,
blocks above the (dynamic) mmap threshold are fresh ``mmap`` regions returned to the kernel on
free, so every iteration page-faults its large activations in again: ~70,000 faults and about a
third of a LeNet step at batch 1024 on this project's reference machine.

``configure()`` (run at import) gives glibc a fixed, high mmap threshold and trim threshold, so
large blocks are reused from the heap like a pool. ``NEOMX_CPU_MEM_POOL=0`` keeps the C library's
defaults. Elsewhere (other C libraries, other systems) this does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_POOL_BYTES = 1 << 30  # blocks up to 1 GiB come from (and go back to) the heap

_state = {"pooled": False}


def configure(environ=os.environ) -> bool:
    """Apply the pool settings once; returns whether they are in effect."""
    if _state["pooled"]:
        return True
    if environ.get("NEOMX_CPU_MEM_POOL", "1").strip().lower() in ("0", "false", "off", "no"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        if not libc.gnu_get_libc_version:  # glibc only (musl has no tunable mallopt)
            return False
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    # One arena: glibc unmaps a per-thread arena's heap (at most 64 MiB) as soon as it is wholly
    # free, whatever the trim threshold; the main heap keeps its blocks for reuse.
    ok = (mallopt(_M_MMAP_THRESHOLD, _POOL_BYTES) == 1 and mallopt(_M_TRIM_THRESHOLD, _POOL_BYTES) == 1
          and mallopt(_M_ARENA_MAX, 1) == 1)
    _state["pooled"] = bool(ok)
    return _state["pooled"]


def pooled() -> bool:
    """Whether the CPU pool settings are in effect in this process."""
    return _state["pooled"]
