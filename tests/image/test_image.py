"""mx.image's decoding, resizing, cropping and augmenters against MXNet 1.9.1's outputs
(tests/golden/image, tools/make_golden_image.py) and their properties."""
from __future__ import annotations

import random

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

from ._helpers import GOLDEN, load_json, load_npz, needs_cv2

pytestmark = needs_cv2
FILES = sorted(p.name for p in (GOLDEN / "files").iterdir())


@pytest.fixture(scope="module")
def decoded():
    return load_npz("decoded.npz")


@pytest.mark.parametrize("name", FILES)
def test_imdecode_pixels_equal_mxnet(decoded, name):
    """Exact for every file: JPEG (4:2:0, 4:4:4, progressive, gray, EXIF-rotated) and PNG."""
    data = (GOLDEN / "files" / name).read_bytes()
    rgb = mx.image.imdecode(data)
    assert rgb.dtype == np.uint8 and rgb.context == mx.cpu()
    np.testing.assert_array_equal(rgb.asnumpy(), decoded[name + ":rgb"])
    np.testing.assert_array_equal(mx.image.imdecode(data, flag=0).asnumpy(),
                                  decoded[name + ":gray"])
    if name + ":bgr" in decoded:
        np.testing.assert_array_equal(mx.image.imdecode(data, to_rgb=0).asnumpy(),
                                      decoded[name + ":bgr"])
    np.testing.assert_array_equal(mx.image.imread(str(GOLDEN / "files" / name)).asnumpy(),
                                  decoded[name + ":rgb"])


def test_imdecode_inputs(decoded):
    data = (GOLDEN / "files" / "photo.png").read_bytes()
    want = decoded["photo.png:rgb"]
    for buf in (bytearray(data), np.frombuffer(data, np.uint8),
                mx.nd.array(np.frombuffer(data, np.uint8), dtype="uint8")):
        np.testing.assert_array_equal(mx.image.imdecode(buf).asnumpy(), want)
    out = mx.nd.zeros(want.shape, dtype="uint8")
    assert mx.image.imdecode(data, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), want)
    assert mx.image.imdecode(data, flag=5).shape == want.shape  # any non-zero flag: colour
    with pytest.raises(ValueError, match="buf must be of type bytes"):
        mx.image.imdecode("photo.png")
    with pytest.raises(MXNetError, match="empty buffer"):
        mx.image.imdecode(b"")
    with pytest.raises(MXNetError, match="Invalid image file"):
        mx.image.imdecode(b"garbage")
    with pytest.raises(MXNetError, match="Invalid image file"):
        mx.image.imdecode(data[:40])
    with pytest.raises(MXNetError, match="greater equal to 0"):
        mx.image.imdecode(data, flag=-1)
    with pytest.raises(MXNetError, match="out has shape"):
        mx.image.imdecode(data, out=mx.nd.zeros((2, 2, 3), dtype="uint8"))
    with pytest.raises(MXNetError, match="couldn't open file"):
        mx.image.imread(str(GOLDEN / "nope.png"))


@pytest.fixture(scope="module")
def ops():
    return load_npz("ops.npz")


@pytest.fixture(scope="module")
def src(decoded):
    return mx.nd.array(decoded["photo.png:rgb"][:12, :16], dtype="uint8")


def test_imresize_matches_mxnet(ops, src):
    """uint8: exact except bicubic (OpenCV 3.4.2 vs 4.x rounding: off by at most 1); float32:
    within 1e-3 (SIMD summation order)."""
    for key, want in ops.items():
        if not key.startswith("imresize"):
            continue
        _, dtype, interp, w, h = key.split(":")
        res = mx.image.imresize(src.astype(dtype), int(w), int(h), interp=int(interp))
        assert res.dtype == np.dtype(dtype) and res.shape == want.shape
        diff = np.abs(res.asnumpy().astype(np.float64) - want).max()
        limit = (1 if interp == "2" else 0) if dtype == "uint8" else 1e-3
        assert diff <= limit, (key, diff)


def test_resize_short_and_border_match_mxnet(ops, src):
    np.testing.assert_allclose(mx.image.resize_short(src, 8).asnumpy(), ops["resize_short:8"],
                               atol=1)
    np.testing.assert_array_equal(mx.image.resize_short(src, 20, interp=1).asnumpy(),
                                  ops["resize_short:20:1"])
    np.testing.assert_array_equal(
        mx.image.copyMakeBorder(src, 1, 2, 3, 4, type=0, values=(9, 8, 7)).asnumpy(),
        ops["border:0"])
    for t in (1, 2, 4):
        np.testing.assert_array_equal(mx.image.copyMakeBorder(src, 2, 1, 0, 3, type=t).asnumpy(),
                                      ops["border:%d" % t])


def test_imresize_errors(src):
    with pytest.raises(MXNetError, match="unknown interp"):
        mx.image.imresize(src, 4, 4, interp=7)
    with pytest.raises(MXNetError, match="height, width, channels"):
        mx.image.imresize(src[:, :, 0], 4, 4)
    with pytest.raises(MXNetError, match="dtype int32"):
        mx.image.imresize(src.astype("int32"), 4, 4)
    with pytest.raises(MXNetError, match="must be positive"):
        mx.image.imresize(src, 0, 4)
    assert mx.image.imresize(src[:, :, :1], 5, 4).shape == (4, 5, 1)


def test_scale_down_and_crops(src):
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert mx.image.scale_down((9, 7), (20, 20)) == (7, 7)
    out, rect = mx.image.center_crop(src, (6, 4))
    assert rect == (5, 4, 6, 4) and out.shape == (4, 6, 3)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[4:8, 5:11])
    assert mx.image.fixed_crop(src, 1, 2, 3, 4).shape == (4, 3, 3)
    with pytest.raises(ValueError, match="Unknown interp"):
        mx.image.fixed_crop(src, 1, 2, 3, 4, size=(5, 5), interp=7)
    img = src.astype("float32")
    res = mx.image.color_normalize(img, mx.nd.array([1, 2, 3]), mx.nd.array([2, 2, 2]))
    np.testing.assert_allclose(res.asnumpy(), (src.asnumpy() - [1, 2, 3]) / 2, rtol=1e-6)


# ----------------------------------------------------------------------------- augmenters

def tup(v):
    """As tools/make_golden_image.py: 2-element JSON lists are tuples."""
    return tuple(v) if isinstance(v, list) and len(v) == 2 else v


def build_aug(fn, args, kwargs):
    args = [tup(a) for a in args]
    kwargs = {k: tup(v) for k, v in kwargs.items()}
    if fn == "ColorNormalizeAug":
        args = [mx.nd.array(a) for a in args]
    if fn == "LightingAug":
        args = [args[0], np.array(args[1]), np.array(args[2])]
    f = getattr(mx.image, fn)
    if fn == "CreateAugmenter":
        augs = f(*args, **kwargs)
        return mx.image.SequentialAug(augs), [a.dumps() for a in augs]
    if fn[0].isupper():
        aug = f(*args, **kwargs)
        return aug, [aug.dumps()]
    return (lambda s: f(s, *args, **kwargs)), None


AUG = load_json("aug.json")


@pytest.mark.parametrize("case", AUG["cases"], ids=[c["name"] for c in AUG["cases"]])
def test_augmenters_match_mxnet_with_same_seed(case, decoded):
    """MXNet's augmenters draw from Python's random and np.random only: same seed, same result."""
    golden = load_npz("aug.npz")
    src = mx.nd.array(decoded["photo.png:rgb"][:8, :10], dtype="uint8")
    aug, dumps = build_aug(case["fn"], case["args"], case["kwargs"])
    assert dumps == case["dumps"]
    random.seed(case["seed"])
    np.random.seed(case["seed"])
    for i in range(case["calls"]):
        x = src.copy() if case["input"] == "u8" else src.astype("float32")
        res = aug(x)
        key = "%s:%d" % (case["name"], i)
        if isinstance(res, tuple):
            res, rect = res
            assert list(rect) == golden[key + ":rect"].tolist(), key
        want = golden[key]
        assert res.shape == want.shape and res.dtype == want.dtype, key
        # bicubic resizes may differ by 1 (uint8); float colour ops by float32 rounding
        np.testing.assert_allclose(res.asnumpy(), want, rtol=1e-4, atol=1.0001, err_msg=key)
        if case["input"] == "u8" and case["fn"] != "CreateAugmenter":
            assert np.mean(res.asnumpy() != want) < 0.05, key


def test_augmenter_properties(src):
    img = src.astype("float32")
    flip = mx.image.HorizontalFlipAug(1.0)(img)
    np.testing.assert_array_equal(flip.asnumpy(), src.asnumpy()[:, ::-1])
    assert mx.image.HorizontalFlipAug(0.0)(img) is img
    gray = mx.image.RandomGrayAug(1.0)(img.copy()).asnumpy()
    np.testing.assert_allclose(gray[..., 0], gray[..., 1], rtol=1e-6)
    assert mx.image.CastAug("float16")(src).dtype == np.float16
    b = mx.image.BrightnessJitterAug(0.0)(img.copy())
    np.testing.assert_allclose(b.asnumpy(), img.asnumpy())
    for aug in (mx.image.ContrastJitterAug(0.3), mx.image.SaturationJitterAug(0.3),
                mx.image.HueJitterAug(0.3), mx.image.RandomSizedCropAug((5, 4), 0.1, (0.5, 2)),
                mx.image.ForceResizeAug((5, 4)), mx.image.ResizeAug(6, interp=10)):
        out = aug(img.copy())
        assert out.dtype == np.float32
    assert mx.image.ResizeAug(6)(src).shape == (6, 8, 3)
    seq = mx.image.SequentialAug([mx.image.CastAug(), mx.image.HorizontalFlipAug(0.5)])
    assert seq.dumps() == ["sequentialaug", ['["castaug", {"type": "float32"}]',
                                             '["horizontalflipaug", {"p": 0.5}]']]
    with pytest.raises(NotImplementedError):
        mx.image.Augmenter()(src)
    with pytest.raises(TypeError, match="unexpected keyword"):
        mx.image.RandomSizedCropAug((5, 4), 0.1, (0.5, 2), bogus=1)
    with pytest.warns(DeprecationWarning):
        mx.image.RandomSizedCropAug((5, 4), 0.1, (0.5, 2), min_area=0.2)


def test_import_without_cv2_gives_clear_error(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cv2(name, *args, **kwargs):
        if name == "cv2":
            raise ImportError("No module named 'cv2'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cv2)
    monkeypatch.setattr(mx.recordio, "_CV2", [])
    with pytest.raises(MXNetError, match=r"pip install neomx\[image\]"):
        mx.image.imdecode(b"abc")
    with pytest.raises(MXNetError, match=r"pip install neomx\[image\]"):
        mx.recordio.pack_img(mx.recordio.IRHeader(0, 1, 0, 0), np.zeros((2, 2, 3), np.uint8))


def test_neomx_imports_without_cv2():
    """cv2 is imported on first use only: without it, neomx imports and mx.image says why."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['cv2'] = None\n"
            "import neomx as mx\n"
            "aug = mx.image.CastAug()\n"
            "try:\n    mx.image.imdecode(b'x')\nexcept mx.MXNetError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install neomx[image]" in out.stdout


def test_legacy_nd_imdecode(decoded):
    """mx.nd.imdecode (deprecated; MXNet 1.9.1's wrapper fails on every call): the C++
    operator's (channels, h, w) float32 BGR layout, clip_rect, mean and out rows."""
    data = (GOLDEN / "files" / "photo.jpg").read_bytes()
    bgr = decoded["photo.jpg:bgr"].transpose(2, 0, 1).astype(np.float32)
    a = mx.nd.imdecode(data)
    assert a.shape == (3, 24, 32) and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), bgr)
    np.testing.assert_array_equal(mx.nd.imdecode(data, clip_rect=(1, 2, 5, 7)).asnumpy(),
                                  bgr[:, 2:7, 1:5])
    np.testing.assert_array_equal(mx.nd.imdecode(data, channels=1).asnumpy(),
                                  decoded["photo.jpg:gray"].transpose(2, 0, 1))
    mean = mx.nd.ones((3, 24, 32)) * 10
    np.testing.assert_array_equal(mx.nd.imdecode(data, mean=mean).asnumpy(), bgr - 10)
    out = mx.nd.zeros((2, 3, 24, 32))
    assert mx.nd.imdecode(data, out=out, index=1) is out
    np.testing.assert_array_equal(out.asnumpy()[1], bgr)
    assert out.asnumpy()[0].sum() == 0
    with pytest.raises(MXNetError, match="Failed to decode"):
        mx.nd.imdecode(b"junk")
    with pytest.raises(MXNetError, match="outside"):
        mx.nd.imdecode(data, clip_rect=(0, 0, 50, 50))
