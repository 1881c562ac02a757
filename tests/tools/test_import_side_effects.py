"""``import neomx`` has no process-wide side effect on the C allocator: glibc's malloc settings
(mmap/trim thresholds, arenas) stay the C library's defaults unless the program opts in to the CPU
pool (``NEOMX_CPU_MEM_POOL=1`` or ``neomx.storage.enable_cpu_pool()``).

Checked by behaviour, in fresh processes: with glibc's defaults a freed 256 MiB block (above the
largest dynamic mmap threshold, 32 MiB) goes straight back to the kernel, so the resident set
shrinks again; with the pool's settings the process keeps it."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                                reason="the CPU pool exists only with glibc's malloc")

PROBE = r"""
import ctypes, json, sys

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
libc.memset.restype, libc.memset.argtypes = ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)

def kept_after_free(n=256 << 20):
    # whether the process keeps a freed, touched n-byte block (True: pooled, False: returned)
    r0 = rss()
    p = libc.malloc(n)
    assert p
    libc.memset(p, 1, n)
    libc.free(p)
    return rss() - r0 > n // 2

import neomx
out = {"pooled": neomx.storage.pooled(), "kept": kept_after_free()}
if "--enable" in sys.argv:
    out["enabled"] = neomx.storage.enable_cpu_pool()
    out["pooled_after"] = neomx.storage.pooled()
    out["kept_after"] = kept_after_free()
print(json.dumps(out))
"""


def _probe(*args, pool=None):
    env = dict(os.environ)
    env.pop("NEOMX_CPU_MEM_POOL", None)
    if pool is not None:
        env["NEOMX_CPU_MEM_POOL"] = pool
    p = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_import_leaves_malloc_alone_until_the_program_opts_in():
    r = _probe("--enable")
    assert r["pooled"] is False
    assert r["kept"] is False, "import neomx changed glibc's malloc settings"
    # the documented opt-in, called by the program
    assert r["enabled"] is True and r["pooled_after"] is True
    assert r["kept_after"] is True


@pytest.mark.parametrize("value", ["0", "", "off"])
def test_env_values_that_do_not_opt_in(value):
    r = _probe(pool=value)
    assert r == {"pooled": False, "kept": False}


def test_env_opt_in_applies_at_import():
    r = _probe(pool="1")
    assert r == {"pooled": True, "kept": True}
