"""mx.image.detection (DetAugmenters, CreateDetAugmenter, ImageDetIter) against MXNet 1.9.1
goldens (tests/golden/image_det, written by tools/make_golden_image_det.py).

MXNet draws the crops, pads, flips and jitters from Python's ``random`` (and ``np.random``):
with the same seeds neomx must make the same choices, so boxes are compared to float32
rounding and images exactly (uint8, bilinear) or to resampling tolerance (random interp)."""
from __future__ import annotations

import json
import os
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

from ._helpers import needs_cv2

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "image_det"
FILES = str(GOLDEN / "files")


def _load(name):
    with open(GOLDEN / (name + ".json")) as f:
        meta = json.load(f)
    with np.load(GOLDEN / (name + ".npz")) as z:
        return meta, {k: z[k] for k in z.files}


AUG_META, AUG = _load("aug")
ITER_META, ITER = _load("iter")

pytestmark = needs_cv2


# -- the generator's builders (the same specs, on neomx) ------------------------------------------

def build(spec, M=mx.image):
    kind = spec[0]
    if kind == "select":
        return M.DetRandomSelectAug([build(s, M) for s in spec[1]], skip_prob=spec[2])
    if kind == "borrow":
        return M.DetBorrowAug(getattr(M, spec[1][0])(*spec[1][1]))
    if kind == "multi":
        kw = dict(spec[1])
        for k in ("aspect_ratio_range", "area_range"):
            if k in kw and isinstance(kw[k], list) and isinstance(kw[k][0], list):
                kw[k] = [tuple(v) for v in kw[k]]
        return M.CreateMultiRandCropAugmenter(**kw)
    if kind == "create":
        kw = dict(spec[1])
        if isinstance(kw.get("area_range"), list):
            kw["area_range"] = tuple(kw["area_range"])
        return M.CreateDetAugmenter((3, 32, 32), **kw)
    kw = dict(spec[1])
    for k in ("aspect_ratio_range", "area_range", "pad_val"):
        if isinstance(kw.get(k), list):
            kw[k] = tuple(kw[k])
    return getattr(M, kind)(**kw)


def load_imglist(fname):
    out = []
    with open(os.path.join(FILES, fname)) as f:
        for line in f:
            parts = line.strip().split("\t")
            out.append([float(v) for v in parts[1:-1]] + [parts[-1]])
    return out


def make_iter(kw):
    kw = dict(kw)
    kw["data_shape"] = tuple(kw["data_shape"])
    for k in ("path_imglist", "path_imgrec", "path_imgidx"):
        if k in kw:
            kw[k] = os.path.join(FILES, kw[k])
    if "imglist" in kw:
        kw["imglist"] = load_imglist(kw["imglist"])
    kw["path_root"] = FILES
    if isinstance(kw.get("pad_val"), list):
        kw["pad_val"] = tuple(kw["pad_val"])
    return mx.image.ImageDetIter(**kw)


# -- augmenters ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", AUG_META["cases"], ids=[c["name"] for c in AUG_META["cases"]])
def test_augmenter_matches_mxnet(case):
    aug = build(case["spec"])
    dumps = [a.dumps() for a in aug] if isinstance(aug, list) else aug.dumps()
    assert json.loads(json.dumps(dumps)) == case["dumps"]
    augs = aug if isinstance(aug, list) else [aug]
    random.seed(case["seed"])
    np.random.seed(case["seed"])
    dtype = "uint8" if case["input"] == "u8" else "float32"
    # bicubic (interp 2, the default) and Lanczos (random interp 10 may pick it) differ by 1
    # between OpenCV versions; nearest, bilinear and area are exact
    interps = set(re.findall(r'interp\\?": (\d+)', json.dumps(dumps)))
    atol = 1e-3 if interps <= {"0", "1", "3"} else 1.0
    for k in range(case["calls"]):
        img = mx.nd.array(AUG["input"], dtype=dtype)
        label = AUG["label"].copy()
        for a in augs:
            img, label = a(img, label)
        want_img = AUG[f"{case['name']}:{k}:img"]
        want_label = AUG[f"{case['name']}:{k}:label"]
        got = img.asnumpy()
        assert got.shape == want_img.shape, (k, got.shape, want_img.shape)
        assert got.dtype == want_img.dtype
        np.testing.assert_allclose(np.asarray(label), want_label, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got.astype(np.float64), want_img, rtol=1e-5, atol=atol)


def test_flip_label_in_place_and_invariants():
    label = AUG["label"].copy()
    img = mx.nd.array(AUG["input"])
    out, lab = mx.image.DetHorizontalFlipAug(1.0)(img, label)
    assert lab is label  # MXNet flips the label array in place
    np.testing.assert_allclose(lab[:, 1], 1.0 - AUG["label"][:, 3], atol=1e-7)
    np.testing.assert_array_equal(out.asnumpy(), AUG["input"][:, ::-1])


def test_crop_and_pad_keep_boxes_on_pixels():
    """Boxes after a crop/pad still frame the same pixels (checked on a marker image)."""
    h, w = 30, 40
    img = np.zeros((h, w, 3), np.uint8)
    box = [0, 0.25, 0.2, 0.75, 0.8]
    img[6:24, 10:30] = 255
    random.seed(0)
    for aug in (mx.image.DetRandomPadAug(), mx.image.DetRandomCropAug(min_object_covered=0.99)):
        for _ in range(5):
            out, lab = aug(mx.nd.array(img), np.array([box], np.float32))
            o = out.asnumpy()
            oh, ow = o.shape[:2]
            x1, y1, x2, y2 = (lab[0, 1] * ow, lab[0, 2] * oh, lab[0, 3] * ow, lab[0, 4] * oh)
            ys, xs = np.nonzero(o[:, :, 0] == 255)
            assert abs(xs.min() - x1) < 1e-3 and abs(xs.max() + 1 - x2) < 1e-3
            assert abs(ys.min() - y1) < 1e-3 and abs(ys.max() + 1 - y2) < 1e-3


def test_invalid_ranges_warn_and_skip():
    """MXNet 1.9.1 means to warn and disable these (its warnings.warn call raises a
    TypeError instead); neomx warns and returns the input unchanged."""
    label = AUG["label"].copy()
    img = mx.nd.array(AUG["input"])
    for make in (lambda: mx.image.DetRandomCropAug(area_range=(0.5, 0.2)),
                 lambda: mx.image.DetRandomCropAug(aspect_ratio_range=(0, 1)),
                 lambda: mx.image.DetRandomPadAug(area_range=(1.0, 1.0)),
                 lambda: mx.image.DetRandomPadAug(aspect_ratio_range=(2, 1))):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            aug = make()
        assert any("Skip DetRandom" in str(x.message) for x in w)
        assert not aug.enabled
        out, lab = aug(img, label)
        assert out is img and lab is label


def test_augmenter_type_errors():
    with pytest.raises(TypeError, match="Borrowing from invalid Augmenter"):
        mx.image.DetBorrowAug(mx.image.DetHorizontalFlipAug(0.5))
    with pytest.raises(ValueError, match="Allow DetAugmenter in list only"):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])


def test_module_paths():
    assert mx.image.det is mx.image.detection
    for name in mx.image.detection.__all__:
        assert getattr(mx.image, name) is getattr(mx.image.detection, name)


# -- ImageDetIter ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ITER_META["cases"], ids=[c["name"] for c in ITER_META["cases"]])
def test_image_det_iter_matches_mxnet(case):
    random.seed(case["seed"])
    np.random.seed(case["seed"])
    it = make_iter(case["kwargs"])
    assert list(it.label_shape) == case["label_shape"]
    assert [[n, list(s)] for n, s in it.provide_label] == case["provide_label"]
    assert [[n, list(s)] for n, s in it.provide_data] == case["provide_data"]
    # (bicubic, the default interp: within 1 between OpenCV versions)
    atol = 1e-3 if case["kwargs"].get("inter_method") == 1 else 1.0
    got = []
    for e in range(case["epochs"]):
        if e:
            it.reset()
        for k, batch in enumerate(it):
            got.append([e, k, batch.pad])
            name = f"{case['name']}:{e}:{k}"
            np.testing.assert_allclose(batch.label[0].asnumpy(), ITER[name + ":label"],
                                       rtol=1e-6, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(batch.data[0].asnumpy(), ITER[name + ":data"],
                                       rtol=1e-5, atol=atol, err_msg=name)
    assert got == case["batches"]


def test_reshape_and_check_label_shape():
    ex = ITER_META["extra"]
    random.seed(0)
    it = make_iter({"batch_size": 2, "data_shape": [3, 24, 24], "path_imglist": "det.lst"})
    it.reshape(data_shape=(3, 16, 20), label_shape=(6, 5))
    assert [[n, list(s)] for n, s in it.provide_data] == ex["reshape"]["provide_data"]
    assert [[n, list(s)] for n, s in it.provide_label] == ex["reshape"]["provide_label"]
    assert list(it.label_shape) == ex["reshape"]["label_shape"]
    it.reshape(data_shape=(3, 24, 24))
    b = it.next()
    np.testing.assert_allclose(b.label[0].asnumpy(), ITER["reshape:label"], atol=1e-6)
    np.testing.assert_allclose(b.data[0].asnumpy(), ITER["reshape:data"], atol=1.0)
    calls = {"reduce": lambda: it.check_label_shape((2, 5)),
             "width": lambda: it.check_label_shape((6, 6)),
             "ndim": lambda: it.check_label_shape((6,)),
             "ok": lambda: it.check_label_shape((7, 5)),
             "bad_data_shape": lambda: it.reshape(data_shape=(1, 16, 16))}
    for key, want in ex["check_label_shape"].items():
        if want is None:
            calls[key]()
            continue
        with pytest.raises(Exception) as info:
            calls[key]()
        assert [type(info.value).__name__, str(info.value)] == want, key


def test_sync_label_shape():
    ex = ITER_META["extra"]["sync"]
    a = mx.image.ImageDetIter(2, (3, 16, 16), imglist=load_imglist("det.lst")[:2],
                              path_root=FILES)
    big = make_iter({"batch_size": 2, "data_shape": [3, 16, 16], "path_imglist": "det.lst"})
    assert [list(a.label_shape), list(big.label_shape)] == ex["before"]
    ret = big.sync_label_shape(a)
    assert ret is a
    assert [list(a.label_shape), list(big.label_shape)] == ex["after"]
    assert [list(a.provide_label[0][1]), list(big.provide_label[0][1])] == ex["provide_label"]
    np.testing.assert_allclose(a.next().label[0].asnumpy(), ITER["sync:label"], atol=1e-6)


def test_draw_next():
    d = make_iter({"batch_size": 1, "data_shape": [3, 40, 40], "path_imglist": "det.lst",
                       "inter_method": 1})
    imgs = list(d.draw_next(color=(255, 0, 0), thickness=1, id2labels={0: "a", 2: "c"}))
    assert len(imgs) == ITER_META["extra"]["draw_next_count"]
    for k in range(3):
        assert imgs[k].dtype == np.uint8
        np.testing.assert_array_equal(imgs[k], ITER[f"draw:color:{k}"])
    d = make_iter({"batch_size": 1, "data_shape": [3, 30, 30], "path_imglist": "det.lst",
                   "mean": True, "std": True, "inter_method": 1})
    np.random.seed(3)
    gen = d.draw_next(mean=True, std=True, thickness=2)
    for k in range(2):
        got = next(gen).astype(np.int16)
        # (mean/std undone in float: rounding may move a pixel by one level)
        assert np.abs(got - ITER[f"draw:random:{k}"]).max() <= 1


def test_label_errors():
    ex = ITER_META["extra"]
    with pytest.raises(mx.MXNetError, match="no images to read labels from"):
        mx.image.ImageDetIter(2, (3, 16, 16), imglist=[], path_root=FILES)
    with pytest.raises(RuntimeError) as info:
        mx.image.ImageDetIter(2, (3, 16, 16), path_imglist=os.path.join(FILES, "bad.lst"),
                              path_root=FILES)
    assert [type(info.value).__name__, str(info.value)] == ex["bad_list"]
    p = make_iter({"batch_size": 1, "data_shape": [3, 16, 16], "path_imglist": "det.lst"})
    f32 = lambda *v: np.array(v, np.float32)  # noqa: E731
    calls = {"short": lambda: p._parse_label(f32(2, 5, 0, 0.1, 0.1, 0.5)),
             "width": lambda: p._parse_label(f32(2, 5, 0, 0.1, 0.1, 0.5, 0.5, 1)),
             "none_valid": lambda: p._parse_label(f32(2, 5, 0, 0.5, 0.1, 0.5, 0.5)),
             "check_valid": lambda: p._check_valid_label(np.array([[-1, 0.1, 0.1, 0.5, 0.5]])),
             "check_shape": lambda: p._check_valid_label(np.array([[0, 0.1, 0.1, 0.5]]))}
    for key, fn in calls.items():
        with pytest.raises(RuntimeError) as info:
            fn()
        assert [type(info.value).__name__, str(info.value)] == ex["parse"][key], key
    got = p._parse_label(f32(3, 5, 9, 0, 0.1, 0.1, 0.5, 0.5, 1, 0.2, 0.2, 0.1, 0.3))
    np.testing.assert_allclose(got, ex["parse"]["header3"])


def test_default_augmenter_dumps():
    it = make_iter({"batch_size": 1, "data_shape": [3, 16, 16], "path_imglist": "det.lst",
                    "resize": 20, "rand_crop": 0.5, "rand_pad": 0.5, "rand_mirror": True,
                    "mean": True, "brightness": 0.1, "hue": 0.1, "pca_noise": 0.1,
                    "rand_gray": 0.1})
    got = json.loads(json.dumps([a.dumps() for a in it.auglist]))
    assert got == ITER_META["extra"]["dumps"]


def test_doc_examples():
    import doctest
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    for test in finder.find(mx.image.detection):
        if test.examples:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 2
