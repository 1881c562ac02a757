"""The operator micro-benchmark (benchmarks/workloads/op_bench.py, ``make bench`` workload
``op-bench``): its 30 operators run on neomx and PyTorch eager with the same inputs (small shapes,
quick mode), every cell is timed, and run.py's per-operator table reports the ratios and the
large-shape cells over the 2x limit. No timing assertion: benchmarks are not tests."""
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from workloads import NAMES, op_bench  # noqa: E402


def test_registered_with_thirty_operators():
    assert "op-bench" in NAMES
    assert [c[0] for c in op_bench._cases("small", 0)] == list(op_bench.OPS)
    assert len(set(op_bench.OPS)) == 30


@pytest.fixture(scope="module")
def small_runs():
    import torch
    import neomx as mx
    cfg = {"quick": True, "threads": 1, "seed": 0, "sizes": ("small",)}
    return op_bench.run_mx(mx, cfg), op_bench.run_torch(torch, cfg)


def test_every_cell_is_timed_on_both_peers(small_runs):
    for res in small_runs:
        ex = res["extra"]
        assert len(ex) == 60 and all(v > 0 for v in ex.values())
        assert res["value"] == pytest.approx(np.exp(np.mean(np.log(list(ex.values())))))
    assert set(small_runs[0]["extra"]) == set(small_runs[1]["extra"])


def test_neomx_and_torch_compute_the_same(small_runs):
    """The two peers' calls are the same computation (forward values on the shared inputs)."""
    import torch
    import neomx as mx
    for name, arrays, _ in op_bench._cases("small", 0):
        if name == "Dropout":
            continue
        f = op_bench._mx_call(mx, name, "small")
        got = f(*[mx.nd.array(a) for a in arrays]).asnumpy()
        tins = [torch.from_numpy(a) for a in arrays]
        if name in ("take", "Embedding"):
            k = 1 if name == "take" else 0
            tins[k] = tins[k].long()
        if name == "where":
            tins[0] = tins[0] > 0
        if name == "SoftmaxOutput":
            want = torch.softmax(tins[0], -1).numpy()
        elif name == "BatchNorm":
            continue  # (training statistics in torch's call, moving ones in the inference call)
        else:
            want = op_bench._torch_call(torch, name, "small")(*tins).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_table_flags_slow_large_cells():
    keys = [f"{op}|{size}|{mode}" for op in ("dot", "exp") for size in ("small", "large")
            for mode in ("fwd", "fwd+bwd")]
    med = {"neomx": {k: 10.0 for k in keys}, "mxnet": {k: 8.0 for k in keys},
           "torch": {k: 12.0 for k in keys}}
    med["neomx"]["exp|large|fwd+bwd"] = 30.0  # 3.75x the faster peer (MXNet's 8)
    w = {"peers": {p: {"extra_median": m} for p, m in med.items()}}
    text = op_bench.table(w, ["neomx", "mxnet", "torch"])
    assert "1.25x" in text and "3.75x" in text
    assert text.strip().endswith("exp large fwd+bwd: 3.75x")
