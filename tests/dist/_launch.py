"""Start test workers (``tests.dist._worker``) with the local launcher, in-process."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from neomx.launch import launch_local

ROOT = Path(__file__).resolve().parents[2]
# ``python -m tests.dist._worker ...`` with the repository root on the path (the workers import
# ``tests.dist._data`` and the seed tutorial in ``examples/``).
WORKER = ["-m", "tests.dist._worker"]


def worker_env(extra=None):
    """``PYTHONPATH`` with the repository root first, plus ``extra``."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, **(extra or {})}


def run_workers(n, scenario, out: Path, *args, timeout=30.0, kill_grace=10.0, wall=120.0,
                logs=None, env=None):
    """Run ``_worker scenario out args`` as ``n`` workers; returns the launcher's exit code.

    One OpenMP thread per worker (the test machine may have 2 cores); ``timeout`` is the
    store's MXNET_KVSTORE_TIMEOUT, ``wall`` a safety limit for the whole run, ``env`` more
    environment variables for the workers.
    """
    extra = worker_env({"OMP_NUM_THREADS": "1", "MXNET_KVSTORE_TIMEOUT": str(timeout),
                        **(env or {})})
    return launch_local([sys.executable, *WORKER, scenario, str(out), *args], n,
                        extra_env=extra, kill_grace=kill_grace, timeout=wall,
                        log=(logs.append if logs is not None else None))


def results(out: Path, n, kind="npz"):
    """Each rank's ``rank<r>.npz`` (dict of arrays) or ``rank<r>.json``."""
    if kind == "npz":
        return [dict(np.load(out / f"rank{r}.npz")) for r in range(n)]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(n)]
