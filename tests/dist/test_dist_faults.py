"""A worker that dies or hangs makes the others fail with a clear MXNetError in time."""
from __future__ import annotations

import json
import re

from ._launch import results, run_workers


def test_killed_worker_is_reported_by_the_others(tmp_path):
    logs = []
    rc = run_workers(3, "die", tmp_path, timeout=20, kill_grace=20, logs=logs)
    assert rc != 0
    # the launcher names the first failure(s) it sees: rank 1's SIGKILL
    assert re.search(r"worker 1 \(pid \d+\) was killed by SIGKILL", logs[0]), logs
    for r in (0, 2):
        rep = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert rep["step"] == 3
        assert rep["elapsed"] < 20  # long before the timeout: the connection closed
        assert f"kvstore 'dist_sync' (rank {r} of 3): push (all-reduce) of key 'g' failed" \
            in rep["error"]
        assert "a worker died" in rep["error"]


def test_hung_worker_times_out(tmp_path):
    logs = []
    rc = run_workers(2, "hang", tmp_path, timeout=2, kill_grace=0.5, logs=logs)
    assert rc != 0 and logs[0].startswith("worker 0")  # rank 0 gave up; rank 1 was stopped
    rep = results(tmp_path, 1, "json")[0]
    assert rep["step"] == 3
    assert 1.5 < rep["elapsed"] < 10
    assert "no answer from the other workers within 2 s" in rep["error"]
    assert "MXNET_KVSTORE_TIMEOUT" in rep["error"]
