"""The golden records of tests/golden/sparse_symbol (tools/make_golden_sparse_symbol.py, MXNet
1.9.1) and the comparison of neomx's results of the same scenarios with them."""
from __future__ import annotations

import json
import math
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sparse_symbol" / "cases.json"


def load() -> dict:
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)


def assert_same(got, want, path="", rtol=1e-5, atol=1e-6):
    """Recursive equality of JSON-like records; numbers within tolerance."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: expected a dict {want}, got {got!r}"
        assert sorted(got) == sorted(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}", rtol, atol)
    elif isinstance(want, list):
        assert isinstance(got, (list, tuple)), f"{path}: expected a list {want}, got {got!r}"
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]", rtol, atol)
    elif isinstance(want, float) or (isinstance(want, int) and isinstance(got, float)):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{path}: {got!r}"
        assert math.isclose(got, want, rel_tol=rtol, abs_tol=atol), f"{path}: {got} != {want}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"
