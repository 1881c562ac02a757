"""Smoke test of the benchmark harness (benchmarks/run.py): runs the neomx and PyTorch peers of
two fast workloads once in --quick mode and checks the JSON it writes. No timing assertion:
benchmarks are not tests (``make bench`` runs them)."""
import json
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
RUN = REPO / "benchmarks" / "run.py"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    p = subprocess.run([sys.executable, str(RUN), "--workloads", "mlp,imperative", "--peers", "neomx,torch",
                        "--quick", "--repeats", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return out, p.stdout, json.loads((out / "results.json").read_text())


def test_json_structure(result):
    out, _, res = result
    meta = res["meta"]
    assert meta["peers"] == ["neomx", "torch"] and meta["quick"] is True
    assert meta["threads"] >= 1
    assert set(res["workloads"]) == {"mlp", "imperative"}
    assert res["workloads"]["imperative"]["unit"] == "us/op"
    for name, w in res["workloads"].items():
        assert w["repeats"] == 1
        assert set(w["peers"]) == {"neomx", "torch"}
        for peer, s in w["peers"].items():
            assert s["errors"] == [], (name, peer, s["errors"])
            assert len(s["samples"]) == 1 and s["median"] > 0
            assert s["min"] <= s["median"] <= s["max"]
            rec = s["records"][0]
            assert rec["threads"] == meta["threads"]
            if peer in ("neomx", "torch"):
                assert rec["torch_threads"] == meta["threads"]
        assert w["peers"]["neomx"]["ratio"] is None
        assert w["peers"]["torch"]["ratio"] == pytest.approx(
            w["peers"]["torch"]["median"] / w["peers"]["neomx"]["median"])


def test_table_and_files(result):
    out, stdout, res = result
    assert "PyTorch eager/neomx" in res["table"] and "mlp" in res["table"]
    assert res["table"] in stdout
    assert (out / "results.txt").read_text().strip()
    png = out / "results.png"
    if png.exists():  # matplotlib is a demo extra
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gpu_lenet_script_runs_on_cpu(tmp_path):
    """benchmarks/gpu_lenet.py (the GPU LeNet comparison for the device machine) runs its whole
    code path with --device cpu; without CUDA the default says so and measures nothing."""
    script = REPO / "benchmarks" / "gpu_lenet.py"
    out = tmp_path / "gpu_lenet.json"
    p = subprocess.run([sys.executable, str(script), "--device", "cpu", "--batches", "32", "--iters", "2",
                        "--warmup", "1", "--repeats", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (res,) = json.loads(out.read_text())
    assert res["batch"] == 32 and res["device"] == "cpu"
    assert set(res["median_images_per_s"]) == {"neomx", "torch"}
    assert all(v > 0 for v in res["median_images_per_s"].values())
    assert "neomx/torch" in p.stdout
    import torch
    if not torch.cuda.is_available():
        p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                           cwd=str(REPO))
        assert p.returncode == 0 and "no CUDA device" in p.stdout
