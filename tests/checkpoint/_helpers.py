"""Helpers for the checkpoint tests: the MXNet 1.9.1 golden files and their manifest."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

import neomx as mx

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "checkpoint"
with open(GOLDEN_DIR / "manifest.json", encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
FILES = MANIFEST["files"]


def golden_bytes(name: str) -> bytes:
    return (GOLDEN_DIR / name).read_bytes()


def make_array(desc: dict) -> mx.nd.NDArray:
    """The neomx array a manifest entry describes (dtype, shape, flat values, context)."""
    ctx = mx.Context(*desc.get("context", ["cpu", 0]))
    if desc["dtype"] == "bfloat16":
        bits = np.array(desc["bits"], dtype=np.uint16).astype(np.int16)
        t = torch.from_numpy(bits).view(torch.bfloat16).reshape(desc["shape"])
        return mx.nd.NDArray(t, ctx)
    vals = np.array(desc["values"], dtype=desc["dtype"]).reshape(desc["shape"])
    return mx.nd.array(vals, ctx=ctx, dtype=desc["dtype"])


def dtype_name(arr: mx.nd.NDArray) -> str:
    if arr._data.dtype is torch.bfloat16:
        return "bfloat16"
    return np.dtype(arr.dtype).name


def assert_matches(arr: mx.nd.NDArray, desc: dict) -> None:
    """``arr`` has the entry's dtype, shape and values (NaN equal to NaN, -0.0 to -0.0)."""
    assert dtype_name(arr) == desc["dtype"]
    assert list(arr.shape) == desc["shape"]
    if desc["dtype"] == "bfloat16":
        bits = arr._data.reshape(-1).view(torch.int16).numpy().astype(np.uint16)
        np.testing.assert_array_equal(bits, desc["bits"])
        return
    got = arr.asnumpy().reshape(-1)
    want = np.array(desc["values"], dtype=desc["dtype"])
    assert got.tobytes() == want.tobytes(), (got, want)
