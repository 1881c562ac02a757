"""Golden records of MXNet 1.9.1 for the training utilities (``tests/golden/train_utils``)."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "train_utils"


@functools.lru_cache(maxsize=None)
def load_json(name: str) -> dict:
    with open(GOLDEN_DIR / name, encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def arrays() -> dict:
    with np.load(GOLDEN_DIR / "train_utils.npz") as z:
        return {k: z[k] for k in z.files}


def raises_like(record, fn):
    """Run ``fn`` and check that it raises MXNet's exception type and text (``record``)."""
    import builtins
    import pytest
    etype = getattr(builtins, record["error_type"])
    with pytest.raises(etype) as info:
        fn()
    return str(info.value)
