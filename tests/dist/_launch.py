"""Start test workers (``_worker.py``) with the local launcher, in-process."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from neomx.launch import launch_local

WORKER = Path(__file__).resolve().parent / "_worker.py"


def run_workers(n, scenario, out: Path, *args, timeout=30.0, kill_grace=10.0, wall=120.0,
                logs=None, env=None):
    """Run ``_worker.py scenario out args`` as ``n`` workers; returns the launcher's exit code.

    One OpenMP thread per worker (the test machine may have 2 cores); ``timeout`` is the
    store's MXNET_KVSTORE_TIMEOUT, ``wall`` a safety limit for the whole run.
    """
    env = {"OMP_NUM_THREADS": "1", "MXNET_KVSTORE_TIMEOUT": str(timeout)}
    return launch_local([sys.executable, str(WORKER), scenario, str(out), *args], n,
                        extra_env=env, kill_grace=kill_grace, timeout=wall,
                        log=(logs.append if logs is not None else None))


def results(out: Path, n, kind="npz"):
    """Each rank's ``rank<r>.npz`` (dict of arrays) or ``rank<r>.json``."""
    if kind == "npz":
        return [dict(np.load(out / f"rank{r}.npz")) for r in range(n)]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(n)]
