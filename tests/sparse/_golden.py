"""Golden records of tests/golden/sparse (written by tools/make_golden_sparse.py in MXNet 1.9.1)
and the helpers that compare neomx's sparse arrays with them."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

import neomx as mx

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sparse"


def load(name: str) -> dict:
    with open(GOLDEN / name, encoding="utf-8") as f:
        return json.load(f)


def inputs() -> dict:
    """The golden cases' inputs, built with neomx from the generator's own source."""
    env = {"mx": mx, "np": np}
    exec(load("cases.json")["inputs"], env)  # noqa: S102  (our own fixture's source)
    return env


def positions(rec: dict):
    """The stored positions of a sparse record (order-free: MXNet's csr sums leave rows
    unsorted), None for dense."""
    if rec["stype"] == "csr":
        ptr, idx = list(rec["indptr"]), list(rec["indices"])
        return sorted((i, int(idx[k])) for i in range(len(ptr) - 1) for k in range(ptr[i], ptr[i + 1]))
    if rec["stype"] == "row_sparse":
        return sorted(int(i) for i in rec["indices"])
    return None


def describe(value) -> dict:
    """What the golden records hold about a result, from a neomx array."""
    rec = {"stype": value.stype, "shape": list(value.shape), "dtype": np.dtype(value.dtype).name,
           "value": value.asnumpy(), "class": type(value).__name__}
    if value.stype == "csr":
        rec.update(data=value.data.asnumpy(), indices=value.indices.asnumpy().tolist(),
                   indptr=value.indptr.asnumpy().tolist())
    elif value.stype == "row_sparse":
        rec.update(data=value.data.asnumpy(), indices=value.indices.asnumpy().tolist())
    return rec


def evaluate(expr: str, env: dict):
    """(result or exception, whether a storage fallback warning was raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = eval(expr, env)  # noqa: S307  (expressions of our own fixture)
        except Exception as e:  # noqa: BLE001
            res = e
    fallback = any(issubclass(w.category, mx.nd.sparse.StorageFallbackWarning) for w in caught)
    return res, fallback
