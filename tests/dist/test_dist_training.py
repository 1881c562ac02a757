"""Module.fit(kvstore='dist_sync') on 2 workers, each with half of every batch, ends with the
parameters of one process training on the whole batches (the seed's MLP and LeNet)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from neomx.launch import free_port

from . import _data
from ._launch import WORKER, results, run_workers, worker_env


@pytest.mark.parametrize("network,env", [
    ("mlp", None), ("lenet", None),
    # the workers update on their devices; the store only sums (and broadcasts the start)
    pytest.param("mlp", {"MXNET_UPDATE_ON_KVSTORE": "0"}, marks=pytest.mark.slow,
                 id="mlp-update-on-devices")])
def test_two_workers_match_one_process(tmp_path, network, env):
    assert run_workers(2, "train", tmp_path, network, env=env) == 0
    ranks = results(tmp_path, 2)
    assert [r["update_on_kvstore"] for r in results(tmp_path, 2, "json")] == [env is None] * 2
    ref = _data.reference(network, 2)
    assert set(ranks[0]) == set(ref)
    for name, want in ref.items():
        np.testing.assert_array_equal(ranks[1][name], ranks[0][name], err_msg=name)
        np.testing.assert_allclose(ranks[0][name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    # per-worker and total metrics are logged every epoch
    totals = {}
    for r in range(2):
        log = (tmp_path / f"rank{r}.log").read_text()
        for kind in ("Train", "Validation"):
            mine = re.findall(rf"Epoch\[1\] {kind}-accuracy=([\d.]+)", log)
            total = re.findall(rf"Epoch\[1\] {kind}-total-accuracy=([\d.]+)", log)
            assert len(mine) == 1 and len(total) == 1, log
            assert totals.setdefault(kind, total[0]) == total[0]  # the same on every worker


@pytest.mark.slow
def test_started_by_torchrun(tmp_path):
    """torchrun's workers (agent-hosted store) need nothing from neomx.launch."""
    p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                        "--master-port", str(free_port()), *WORKER, "train", str(tmp_path),
                        "mlp"], capture_output=True, text=True, timeout=180,
                       env={**os.environ, **worker_env({"OMP_NUM_THREADS": "1"})})
    assert p.returncode == 0, p.stderr[-3000:]
    ranks = results(tmp_path, 2)
    for name, want in _data.reference("mlp", 2).items():
        np.testing.assert_allclose(ranks[1][name], want, rtol=1e-5, atol=1e-6, err_msg=name)
