"""mx.io.ImageRecordIter, ImageDetRecordIter, CSVIter and LibSVMIter against MXNet 1.9.1's
batches (tests/golden/image_record_iter, written by tools/make_golden_image_record_iter.py),
plus the properties of the random augmentations."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from .._golden import assert_error_matches

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "image_record_iter"

try:
    import cv2  # noqa: F401
    HAS_CV2 = True
except ImportError:
    HAS_CV2 = False

pytestmark = pytest.mark.skipif(not HAS_CV2, reason="needs OpenCV: pip install neomx[image]")

with open(GOLDEN / "cases.json") as _f:
    CASES = json.load(_f)["cases"]
with np.load(GOLDEN / "cases.npz") as _z:
    ARRAYS = {k: _z[k] for k in _z.files}

# cases whose pixels may differ by 1 (OpenCV versions: MXNet's 3.4 vs neomx's 4.x)
TOLERANCE = {"rotate": 1.0}


def _kwargs(case):
    out = {}
    for k, v in case["kwargs"].items():
        if isinstance(v, str) and v.startswith("data/"):
            v = str(GOLDEN / v)
        out[k] = tuple(v) if isinstance(v, list) else v
    return out


def _make(case):
    return getattr(mx.io, case["iterator"])(**_kwargs(case))


def _valid_rows(case, j, want):
    """Rows MXNet fills: without round_batch the tail of a last batch is stale memory (and
    ImageRecordIter reports pad 0 for it)."""
    n = len(want["label"])
    if case["kwargs"].get("round_batch", 1) != 0:
        return n
    if case["iterator"] == "ImageRecordIter":  # 10 records, no parts
        return max(0, min(n, 10 - j * n))
    return n - want["pad"]


OK = [c for c in CASES if "error_type" not in c]
ERR = [c for c in CASES if "error_type" in c]


@pytest.mark.parametrize("case", OK, ids=[c["name"] for c in OK])
def test_batches_equal_mxnet(case):
    it = _make(case)
    got_pd = [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_data]
    got_pl = [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_label]
    assert got_pd == case["provide_data"]
    assert got_pl == case["provide_label"]
    for e, want_batches in enumerate(case["epochs_out"]):
        batches = list(it)
        assert len(batches) == len(want_batches), f"epoch {e}"
        for j, (b, want) in enumerate(zip(batches, want_batches)):
            where = f"epoch {e} batch {j}"
            if b.pad != want["pad"]:
                # MXNet 1.9.1 recycles its batch objects and may report the pad of an earlier
                # batch on a batch that ends exactly at the end of the data; neomx reports 0
                assert b.pad == 0 and j == len(want_batches) - 1, where
            rows = _valid_rows(case, j, want)
            got_label = b.label[0].asnumpy()
            np.testing.assert_array_equal(got_label[:rows], np.asarray(want["label"])[:rows],
                                          err_msg=where)
            if want["index"] is not None and case["iterator"] != "ImageRecordIter":
                np.testing.assert_array_equal(b.index[:rows], want["index"][:rows],
                                              err_msg=where)
            key = f"{case['name']}:{e}:{j}"
            if key in ARRAYS:
                want_data = ARRAYS[key]
                got = b.data[0].asnumpy()
                assert got.dtype == np.dtype(case["provide_data"][0][2]), where
                tol = TOLERANCE.get(case["name"], 0.0)
                np.testing.assert_allclose(got[:rows].astype(np.float64),
                                           want_data[:rows].astype(np.float64), rtol=0,
                                           atol=tol, err_msg=where)
        it.reset()


@pytest.mark.parametrize("case", ERR, ids=[c["name"] for c in ERR])
def test_errors_as_mxnet(case):
    with pytest.raises(Exception) as info:
        it = _make(case)
        for _ in it:
            pass
    # (paths in MXNet's messages are where the generator ran: this checkout's golden folder)
    local = {k: re.sub(r"\S*/tests/golden/image_record_iter", str(GOLDEN), v)
             for k, v in case.items() if k in ("error", "error_message")}
    assert_error_matches(info.value, dict(case, error_is=case.get("error_is", []), **local))


# -- properties: threads, prefetching, reset, augmentation ------------------------------------

A_REC = str(GOLDEN / "data" / "a.rec")
A_IDX = str(GOLDEN / "data" / "a.idx")


def _epoch(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]


def _same(e1, e2):
    assert len(e1) == len(e2)
    for (d1, l1, p1), (d2, l2, p2) in zip(e1, e2):
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(l1, l2)
        assert p1 == p2


AUG = dict(path_imgrec=A_REC, data_shape=(3, 24, 24), batch_size=4, rand_crop=1, rand_mirror=1,
           max_rotate_angle=10, max_shear_ratio=0.1, max_aspect_ratio=0.2,
           min_random_scale=0.9, max_random_scale=1.1, brightness=0.2, contrast=0.2,
           saturation=0.2, pca_noise=0.1, random_h=10, random_s=10, random_l=10,
           max_random_contrast=0.1, max_random_illumination=5)


def test_augmentation_seeded_and_thread_independent():
    e1 = _epoch(mx.io.ImageRecordIter(preprocess_threads=1, seed_aug=5, **AUG))
    e4 = _epoch(mx.io.ImageRecordIter(preprocess_threads=4, prefetch_buffer=1, seed_aug=5, **AUG))
    _same(e1, e4)
    other = _epoch(mx.io.ImageRecordIter(preprocess_threads=2, seed_aug=6, **AUG))
    assert not np.array_equal(e1[0][0], other[0][0])


def test_augmentation_changes_between_epochs():
    it = mx.io.ImageRecordIter(shuffle=0, **AUG)
    first = _epoch(it)
    it.reset()
    second = _epoch(it)
    assert not np.array_equal(first[0][0], second[0][0])


def test_rand_crop_and_mirror_are_crops_of_the_image():
    """Every randomly cropped (and maybe flipped) image is a window of the decoded image."""
    it = mx.io.ImageRecordIter(path_imgrec=A_REC, data_shape=(3, 24, 24), batch_size=10,
                               rand_crop=1, rand_mirror=1, dtype="uint8", seed_aug=1)
    batch = it.next().data[0].asnumpy()
    rec = mx.recordio.MXIndexedRecordIO(A_IDX, A_REC, "r")
    flips = 0
    for i in range(10):
        img = mx.image.imdecode(mx.recordio.unpack(rec.read_idx(i))[1]).asnumpy()
        crop = batch[i].transpose(1, 2, 0)
        found = None
        for flip in (False, True):
            c = crop[:, ::-1] if flip else crop
            for y in range(img.shape[0] - 23):
                for x in range(img.shape[1] - 23):
                    if np.array_equal(img[y:y + 24, x:x + 24], c):
                        found = flip
                        break
                if found is not None:
                    break
            if found is not None:
                break
        assert found is not None, f"image {i} is not a crop"
        flips += found
    assert 0 < flips < 10


def test_random_resized_crop_shape_and_range():
    it = mx.io.ImageRecordIter(path_imgrec=A_REC, data_shape=(3, 16, 16), batch_size=5,
                               random_resized_crop=1, min_random_area=0.3, max_random_area=1,
                               max_aspect_ratio=1.3, min_aspect_ratio=0.75, dtype="uint8")
    d = it.next().data[0].asnumpy()
    assert d.shape == (5, 3, 16, 16) and d.dtype == np.uint8


def test_threads_and_prefetch_give_the_same_batches():
    kw = dict(path_imgrec=A_REC, data_shape=(3, 24, 24), batch_size=3, mean_r=100, std_g=3)
    _same(_epoch(mx.io.ImageRecordIter(preprocess_threads=1, prefetch_buffer=1, **kw)),
          _epoch(mx.io.ImageRecordIter(preprocess_threads=6, prefetch_buffer=8, **kw)))


def test_reset_mid_epoch_restarts_deterministically():
    kw = dict(path_imgrec=A_REC, path_imgidx=A_IDX, data_shape=(3, 24, 24), batch_size=2,
              shuffle=1, seed=4)
    a = mx.io.ImageRecordIter(prefetch_buffer=1, **kw)
    b = mx.io.ImageRecordIter(prefetch_buffer=5, **kw)
    for it in (a, b):
        it.next()
        it.next()
        it.reset()  # mid-epoch: a new order, whatever was prefetched
    _same(_epoch(a), _epoch(b))


def test_keyword_only_and_unknown_keywords():
    with pytest.raises(TypeError, match="keyword arguments"):
        mx.io.ImageRecordIter(A_REC)
    it = mx.io.ImageRecordIter(path_imgrec=A_REC, data_shape="(3, 24, 24)", batch_size="2",
                               some_unknown_option=1, ctx="cpu")
    assert it.provide_data[0].shape == (2, 3, 24, 24)


def test_missing_required():
    with pytest.raises(mx.base.MXNetError, match="batch_size"):
        mx.io.ImageRecordIter(path_imgrec=A_REC, data_shape=(3, 24, 24))


def test_missing_idx_file_is_an_error():
    with pytest.raises(mx.base.MXNetError, match="nope.idx"):
        mx.io.ImageRecordIter(path_imgrec=A_REC, path_imgidx=A_REC + "nope.idx",
                              data_shape=(3, 24, 24), batch_size=2)


def test_corrupt_record_raises(tmp_path):
    data = bytearray(Path(A_REC).read_bytes())
    data[2000:2004] = b"\0\0\0\0"  # the magic of record 1
    bad = tmp_path / "bad.rec"
    bad.write_bytes(bytes(data))
    with pytest.raises(mx.base.MXNetError, match="magic"):
        it = mx.io.ImageRecordIter(path_imgrec=str(bad), data_shape=(3, 24, 24), batch_size=2)
        list(it)


def test_std_shuffle_matches_libstdcxx():
    """std::shuffle(0..9, mt19937(111)) twice, as libstdc++ (MXNet's records 'shuffle' case)."""
    from neomx.io._rec_source import std_shuffle
    rs = np.random.RandomState(111)
    p1, p2 = list(range(10)), list(range(10))
    std_shuffle(p1, rs)
    std_shuffle(p2, rs)
    assert p1 == [3, 4, 9, 2, 1, 6, 7, 0, 5, 8]
    assert p2 == [4, 0, 8, 5, 7, 2, 1, 9, 6, 3]
    big = list(range(1000))
    std_shuffle(big, np.random.RandomState(7))
    assert sorted(big) == list(range(1000))


def test_data_batch_arrays_are_fresh():
    it = mx.io.ImageRecordIter(path_imgrec=A_REC, data_shape=(3, 24, 24), batch_size=4)
    b1 = it.next()
    keep = b1.data[0].asnumpy().copy()
    it.next()
    np.testing.assert_array_equal(b1.data[0].asnumpy(), keep)
    assert os.path.exists(A_REC)
