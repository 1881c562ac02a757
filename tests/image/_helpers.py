"""Shared by the mx.image tests: the golden folder (tests/golden/image, written by
tools/make_golden_image.py) and a skip when OpenCV (the ``image`` extra) is missing."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "image"

try:
    import cv2  # noqa: F401
    HAS_CV2 = True
except ImportError:
    HAS_CV2 = False

needs_cv2 = pytest.mark.skipif(not HAS_CV2, reason="needs OpenCV: pip install neomx[image]")


def load_json(name):
    with open(GOLDEN / name) as f:
        return json.load(f)


def load_npz(name):
    with np.load(GOLDEN / name) as z:
        return {k: z[k] for k in z.files}
