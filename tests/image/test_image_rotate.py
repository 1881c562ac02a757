"""Image rotation against MXNet 1.9.1 goldens (tests/golden/image_rotate, written by
tools/make_golden_image_rotate.py): mx.image.imrotate / random_rotate and the Rotate /
RandomRotation transforms (bilinear sampling, angle sign, zoom_in / zoom_out, batches)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.data.vision import transforms

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "image_rotate"
with open(GOLDEN / "rotate.json") as _f:
    META = json.load(_f)
with np.load(GOLDEN / "rotate.npz") as _z:
    ARR = {k: _z[k] for k in _z.files}

CASES = [c for c in META["cases"] if c["kind"] != "RandomRotation"]


def _run(case, x):
    a = case["args"]
    if case["kind"] == "imrotate":
        deg = a["rotation_degrees"]
        deg = mx.nd.array(deg) if isinstance(deg, list) else deg
        return mx.image.imrotate(x, deg, zoom_in=a["zoom_in"], zoom_out=a["zoom_out"])
    if case["kind"] == "random_rotate":
        return mx.image.random_rotate(x, tuple(a["angle_limits"]), zoom_in=a["zoom_in"],
                                      zoom_out=a["zoom_out"])
    assert case["kind"] == "Rotate"
    return transforms.Rotate(a["rotation_degrees"], zoom_in=a["zoom_in"],
                             zoom_out=a["zoom_out"])(x)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_rotation_matches_mxnet(case):
    x = mx.nd.array(ARR[case["name"] + ":in"])
    if case["seed"] is not None:
        np.random.seed(case["seed"])
    out = _run(case, x).asnumpy()
    want = ARR[case["name"] + ":out"]
    assert out.shape == want.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_random_rotation_transform_sequence():
    """Six calls of RandomRotation(rotate_with_proba=0.5) from one np.random seed: the same
    images rotated (by the same angles) and passed through as MXNet's."""
    cases = [c for c in META["cases"] if c["kind"] == "RandomRotation"]
    assert len(cases) == 6
    a = cases[0]["args"]
    t = transforms.RandomRotation(tuple(a["angle_limits"]),
                                  rotate_with_proba=a["rotate_with_proba"])
    np.random.seed(cases[0]["seed"])
    passed = 0
    for c in cases:
        x = mx.nd.array(ARR[c["name"] + ":in"])
        out = t(x).asnumpy()
        want = ARR[c["name"] + ":out"]
        passed += int(np.array_equal(want, ARR[c["name"] + ":in"]))
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert 0 < passed < 6  # the golden has both outcomes


def test_rotation_invariants():
    img = mx.nd.array(np.random.RandomState(0).uniform(0, 1, (2, 6, 6)).astype(np.float32))
    np.testing.assert_allclose(mx.image.imrotate(img, 0).asnumpy(), img.asnumpy(), atol=1e-6)
    # four quarter turns of a square image give the input back (90-degree steps are exact
    # permutations up to float rounding); one quarter turn is np.rot90 (counter-clockwise)
    r = img
    for _ in range(4):
        r = mx.image.imrotate(r, 90)
    np.testing.assert_allclose(r.asnumpy(), img.asnumpy(), atol=1e-5)
    np.testing.assert_allclose(mx.image.imrotate(img, 90).asnumpy(),
                               np.rot90(img.asnumpy(), 1, axes=(1, 2)), atol=1e-5)
    # zoom_in: no zero padding shows in the corners
    ones = mx.nd.ones((1, 9, 9))
    assert mx.image.imrotate(ones, 45, zoom_in=True).asnumpy().min() > 0.99
    assert mx.image.imrotate(ones, 45).asnumpy()[0, 0, 0] == 0.0


@pytest.mark.parametrize("err", META["errors"], ids=[e["name"] for e in META["errors"]])
def test_rotation_errors(err):
    img = mx.nd.array(ARR["img_0_00:in"])
    batch = mx.nd.array(ARR["batch_scalar:in"])
    calls = {
        "both_zooms": lambda: mx.image.imrotate(img, 10, True, True),
        "float64": lambda: mx.image.imrotate(img.astype("float64"), 10),
        "uint8": lambda: mx.image.imrotate(img.astype("uint8"), 10),
        "single_vec_angle": lambda: mx.image.imrotate(img, mx.nd.array([10.0])),
        "count_mismatch": lambda: mx.image.imrotate(batch, mx.nd.array([1.0, 2.0])),
        "ndim2": lambda: mx.image.imrotate(img[0], 10),
        "T_float64": lambda: transforms.Rotate(5)(img.astype("float64")),
        "T_bad_limits": lambda: transforms.RandomRotation((5, 5)),
        "T_bad_proba": lambda: transforms.RandomRotation((0, 5), rotate_with_proba=2),
    }
    with pytest.raises(Exception) as info:
        calls[err["name"]]()
    assert type(info.value).__name__ == err["error_type"]
    assert str(info.value) == err["error"]


def test_module_paths():
    assert mx.image.image.imrotate is mx.image.imrotate
    assert mx.image.image.random_rotate is mx.image.random_rotate
