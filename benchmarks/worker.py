"""Runs one measurement (one peer, one workload) in this fresh process and writes it as JSON.

    python benchmarks/worker.py --peer {neomx,mxnet,torch} --workload NAME --threads N
        --result FILE [--quick] [--seed S]

``run.py`` starts it with the project venv's python (neomx, torch) or the MXNet oracle's python
(mxnet). Thread counts are pinned before any numerical library is imported.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402  (numpy only)


def _import_peer(peer, threads):
    info = {}
    t0 = time.perf_counter()
    if peer == "torch":
        import torch as lib
        info["torch_threads"] = common.set_torch_threads(lib, threads)
        info["version"] = lib.__version__
    elif peer == "neomx":
        import neomx as lib
        import torch
        info["torch_threads"] = common.set_torch_threads(torch, threads)
        info["version"] = lib.__version__
        info["torch_version"] = torch.__version__
        # opt-in (NEOMX_CPU_MEM_POOL=1): glibc keeps freed buffers, as MXNet's pool does
        storage = getattr(lib, "storage", None)
        info["cpu_pool"] = bool(storage.pooled()) if storage is not None else None
    elif peer == "mxnet":
        import mxnet as lib
        info["version"] = lib.__version__
        feats = lib.runtime.Features()
        info["features"] = [f for f in ("MKLDNN", "OPENMP", "BLAS_OPEN", "BLAS_MKL") if feats.is_enabled(f)]
        info["engine"] = os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice (default)")
        info["cpu_worker_nthreads"] = os.environ.get("MXNET_CPU_WORKER_NTHREADS", "1 (default)")
    else:
        raise SystemExit(f"unknown peer {peer!r}")
    info["import_s"] = time.perf_counter() - t0
    return lib, info


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--peer", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    o = p.parse_args(argv)
    common.pin_threads(o.threads)
    out = {"peer": o.peer, "workload": o.workload, "threads": o.threads, "quick": o.quick,
           "python": platform.python_version(), "pid": os.getpid()}
    try:
        import numpy as np
        out["numpy"] = np.__version__
        np.random.seed(o.seed)
        lib, info = _import_peer(o.peer, o.threads)
        out.update(info)
        if o.peer == "torch":
            lib.manual_seed(o.seed)
        else:
            lib.random.seed(o.seed)
        from workloads import load
        wl = load(o.workload)
        cfg = {"quick": o.quick, "threads": o.threads, "seed": o.seed}
        res = wl.run_torch(lib, cfg) if o.peer == "torch" else wl.run_mx(lib, cfg)
        out["value"] = float(res["value"])
        out["extra"] = res.get("extra", {})
        out["metric"] = wl.METRIC[0]
    except BaseException:  # reported in the table, never fatal for the whole run
        out["error"] = traceback.format_exc()
    with open(o.result, "w") as f:
        json.dump(out, f)
    return 0 if "error" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
