"""dist_sync stores over 2 and 3 worker processes (Gloo on loopback): sums, init from rank 0,
buckets, dtypes, optimizers, metric totals, key/optimizer mismatches; start-up errors."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import neomx as mx
from neomx.kvstore import process_group
from neomx.launch import free_port

from ._launch import results, run_workers


@pytest.mark.parametrize("n", [2, 3])
def test_store_operations(tmp_path, n):
    """Every check of ``_worker.scenario_ops`` passes on every rank, and every rank ends with
    bitwise the same sums and weights."""
    assert run_workers(n, "ops", tmp_path) == 0
    arrays = results(tmp_path, n)
    for key, value in arrays[0].items():
        for r in range(1, n):
            np.testing.assert_array_equal(arrays[r][key], value, err_msg=f"{key} on rank {r}")
    # accuracy total: rank r has r+1 right and 1 wrong -> sum(r+1) / sum(r+2)
    assert arrays[0]["total_acc"][1] == pytest.approx(sum(range(1, n + 1)) / sum(range(2, n + 2)))
    assert np.isnan(arrays[0]["total_acc"][0])  # a metric nobody updated
    for msgs in results(tmp_path, n, "json"):
        assert "set a different optimizer (lr: " in msgs["optimizer"]
        assert "pushed different keys or shapes in the same step" in msgs["keys"]
        assert "refused: an earlier collective failed" in msgs["after"]


# --- start-up errors (no process group is created in this process) ------------------------------
def _env(**kw):
    env = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": str(free_port())}
    env.update({k: str(v) for k, v in kw.items()})
    return env


@pytest.mark.parametrize("kw,match", [
    ({}, "only 1 of WORLD_SIZE=2 workers joined within 1 s (missing ranks [1])"),
    ({"RANK": 1}, "rank 1 cannot reach the master (rank 0) at 127.0.0.1:"),
    ({"RANK": 2}, "RANK=2 is outside [0, WORLD_SIZE=2)"),
    ({"WORLD_SIZE": 0}, "WORLD_SIZE=0 must be at least 1"),
    ({"WORLD_SIZE": "two"}, "WORLD_SIZE='two' is not an integer"),
    ({"MASTER_PORT": 70000}, "MASTER_PORT=70000 is not a TCP port"),
    ({"RANK": 1, "MASTER_ADDR": "no-such-host.invalid"}, "cannot resolve MASTER_ADDR"),
])
def test_startup_errors(monkeypatch, kw, match):
    for k, v in _env(**kw).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("MXNET_KVSTORE_TIMEOUT", "1")
    t0 = time.monotonic()
    with pytest.raises(mx.MXNetError, match="kvstore 'dist_sync'") as info:
        mx.kv.create("dist_sync")
    assert match in str(info.value)
    assert time.monotonic() - t0 < 5
    assert process_group._session is None


def test_missing_environment_says_how_to_launch(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(mx.MXNetError, match="missing: RANK, WORLD_SIZE, MASTER_ADDR, "
                                            "MASTER_PORT.*python -m neomx.launch"):
        mx.kv.create("dist_device_sync")


def test_slurm_variables():
    env = {"SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
           "SLURM_NTASKS_PER_NODE": "4", "MASTER_ADDR": "node1", "MASTER_PORT": "29500"}
    w = process_group.worker_env(env)
    assert (w.rank, w.world_size, w.local_rank, w.local_world_size) == (3, 8, 1, 4)
    assert (w.master_addr, w.master_port, w.agent_store) == ("node1", 29500, False)
    w = process_group.worker_env({"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "a",
                                  "MASTER_PORT": "1", "TORCHELASTIC_USE_AGENT_STORE": "True"})
    assert w.agent_store and w.rank == 1


@pytest.mark.parametrize("value,match", [("0", "must be positive"), ("soon", "not a number")])
def test_bad_timeout(value, match):
    with pytest.raises(mx.MXNetError, match=match):
        process_group.timeout_from_env({"MXNET_KVSTORE_TIMEOUT": value})
    assert process_group.timeout_from_env({}) == process_group.DEFAULT_TIMEOUT


def test_dist_async_is_a_clear_error():
    with pytest.raises(mx.MXNetError, match="'dist_async' is not supported.*parameter servers"):
        mx.kv.create("dist_async")


def test_workers_disagreeing_on_world_size(tmp_path):
    """Rank 0 says 2 workers, rank 1 says 3: both fail at start-up, naming both values."""
    port = str(free_port())
    code = "import neomx as mx; mx.kv.create('dist_sync')"
    procs = []
    for rank, ws in ((0, 2), (1, 3)):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ws), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, MXNET_KVSTORE_TIMEOUT="20")
        procs.append(subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                      stderr=subprocess.PIPE))
    errs = [p.communicate(timeout=60)[1] for p in procs]
    assert all(p.returncode != 0 for p in procs)
    assert "rank 1 has WORLD_SIZE=3 but rank 0 has WORLD_SIZE=2" in errs[0]
    assert "this worker (rank 1) has WORLD_SIZE=3 but rank 0 has WORLD_SIZE=2" in errs[1]
