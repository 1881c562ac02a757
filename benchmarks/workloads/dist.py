"""``dist``: data-parallel LeNet over worker processes of this machine, as each framework does it.

* neomx: ``Module`` with ``kvstore='dist_sync'`` -- the workers sum their gradients with a
  bucketed Gloo all-reduce over loopback and all take the same SGD step;
* MXNet 1.9.1: the same code on MXNet's ``dist_sync`` -- ps-lite, with one scheduler and one
  server process (started as ``tools/launch.py`` would, through the ``DMLC_*`` variables) that
  sum the pushes and run the optimizer;
* PyTorch: ``DistributedDataParallel`` over Gloo (it overlaps the all-reduce with backward).

Each trains LeNet on a global batch of 256 random 0-255 "pixels" (as ``lenet``), split evenly
over the workers, for 20 timed steps after 3 warm-up ones (``--quick``: 3 after 1): first with 1
worker (a plain single process: no store, no process group), then with 2. The ``--threads`` are
shared: each of n workers gets ``threads // n`` (at least 1), so both runs use the same cores
(MXNet's server gets the same count as a worker).

Metric: seconds for the timed steps with 2 workers (the slower worker's clock). Extras:
``sps_1w``/``sps_2w`` (samples/s), ``scaling`` (sps_2w / sps_1w), ``allreduce_ms_step`` (neomx:
time per step inside the store's reduction over workers, including waiting for the slower
worker), ``allreduce_ms_micro`` (one ``kv.pushpull`` -- PyTorch: one ``all_reduce`` -- of
LeNet's 431,080 gradient floats, 1.7 MB, on otherwise idle workers).

``BENCH_DIST_DEVICE=gpu`` runs both workers on ``gpu(0)`` (neomx and MXNet:
``dist_device_sync``; PyTorch: DDP on ``cuda:0``). With one GPU, NCCL cannot put two ranks on
the same device, so neomx reduces through Gloo, staging the sums in host memory.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import common

METRIC = ("time_s", "s", "LeNet, 20 steps of batch 256 over 2 worker processes")
BATCH = 256
WORKER = Path(__file__).resolve().parent / "dist_worker.py"


def steps(cfg):
    return (3, 1) if cfg["quick"] else (20, 3)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _roles(peer, n):
    """``[(role, extra env)]`` of the processes to start; workers first."""
    port = str(_free_port())
    if peer == "mxnet":
        ps = {"DMLC_PS_ROOT_URI": "127.0.0.1", "DMLC_PS_ROOT_PORT": port, "DMLC_NUM_WORKER": str(n),
              "DMLC_NUM_SERVER": "1", "DMLC_NODE_HOST": "127.0.0.1", "DMLC_INTERFACE": "lo"}
        if n == 1:
            return [("worker", {})]
        return ([("worker", dict(ps, DMLC_ROLE="worker")) for _ in range(n)]
                + [(role, dict(ps, DMLC_ROLE=role)) for role in ("server", "scheduler")])
    return [("worker", {"RANK": str(r), "WORLD_SIZE": str(n), "LOCAL_RANK": str(r),
                        "LOCAL_WORLD_SIZE": str(n), "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": port}) for r in range(n)]


def spawn(peer, n, cfg, device="cpu", timeout=600):
    """Run ``dist_worker.py`` as ``n`` workers (plus MXNet's server and scheduler); returns the
    workers' JSON records."""
    n_steps, warmup = steps(cfg)
    threads = max(1, cfg["threads"] // n)
    with tempfile.TemporaryDirectory(prefix="bench-dist-") as tmp:
        procs, outs = [], []
        for i, (role, extra) in enumerate(_roles(peer, n)):
            env = dict(os.environ)
            env.update(common.thread_env(threads))
            env.update(extra)
            if role == "worker":
                outs.append(Path(tmp) / f"worker{i}.json")
                cmd = [sys.executable, str(WORKER), "--peer", peer, "--workers", str(n),
                       "--steps", str(n_steps), "--warmup", str(warmup), "--batch", str(BATCH),
                       "--threads", str(threads), "--seed", str(cfg["seed"]), "--device", device,
                       "--out", str(outs[-1])]
            else:  # importing mxnet with DMLC_ROLE=server/scheduler runs that role, then exits
                cmd = [sys.executable, "-c", "import mxnet"]
            procs.append((role, subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)))
        errors, aborts = [], 0
        try:
            for i, (role, p) in enumerate(procs):
                _, err = p.communicate(timeout=timeout)
                if p.returncode == -6 and role == "worker" and outs[i].exists():
                    aborts += 1  # torch's rare "terminate called" at exit, after the results
                elif p.returncode != 0:
                    errors.append(f"{peer} {role} {i} of {n} workers: exit {p.returncode}: "
                                  f"{err[-1500:]}")
        except subprocess.TimeoutExpired:
            errors.append(f"{peer} with {n} workers timed out after {timeout} s")
        finally:
            for _, p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if errors:
            raise RuntimeError("\n".join(errors))
        return [dict(json.loads(path.read_text()), exit_aborts=aborts) for path in outs]


def _run(peer, cfg):
    device = os.environ.get("BENCH_DIST_DEVICE", "cpu")
    n_steps, _ = steps(cfg)
    one = spawn(peer, 1, cfg, device)
    two = spawn(peer, 2, cfg, device)
    t1 = max(r["loop_s"] for r in one)
    t2 = max(r["loop_s"] for r in two)
    extra = {"steps": n_steps, "batch": BATCH, "device": device,
             "sps_1w": BATCH * n_steps / t1, "sps_2w": BATCH * n_steps / t2,
             "scaling": t1 / t2, "loop_1w_s": t1,
             "allreduce_ms_micro": max(r["allreduce_ms_micro"] for r in two),
             "exit_aborts": one[0]["exit_aborts"] + two[0]["exit_aborts"]}
    if "allreduce_ms_step" in two[0]:
        extra["allreduce_ms_step"] = max(r["allreduce_ms_step"] for r in two)
        extra["buckets_per_step"] = two[0]["buckets_per_step"]
    return {"value": t2, "extra": extra}


def run_mx(mx, cfg):
    return _run("mxnet" if mx.__name__ == "mxnet" else "neomx", cfg)


def run_torch(torch, cfg):
    return _run("torch", cfg)
