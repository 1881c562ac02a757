"""mx.image.ImageIter: every batch of MXNet 1.9.1's runs (tests/golden/image/iter.json) with the
same seeds, over .rec (with and without .idx), .lst + folder and in-memory lists."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

from ._helpers import GOLDEN, load_json, load_npz, needs_cv2

pytestmark = needs_cv2
ITER = load_json("iter.json")


@pytest.fixture
def in_golden(monkeypatch):
    monkeypatch.chdir(GOLDEN)


def make_iter(kwargs, seed):
    kw = dict(ITER["defaults"], **kwargs)
    kw["data_shape"] = tuple(kw["data_shape"])
    random.seed(seed)
    np.random.seed(seed)
    return mx.image.ImageIter(**kw)


@pytest.mark.parametrize("case", ITER["cases"], ids=[c["name"] for c in ITER["cases"]])
def test_batches_match_mxnet(case, in_golden):
    golden = load_npz("iter.npz")
    it = make_iter(case["kwargs"], case["seed"])
    assert [list(map(lambda x: list(x) if isinstance(x, tuple) else x, d))
            for d in it.provide_data] == case["provide_data"]
    assert [[d[0], list(d[1])] for d in it.provide_label] == case["provide_label"]
    got = []
    for e in range(case["epochs"]):
        it.reset()
        for n, b in enumerate(it):
            key = "%s:%d:%d" % (case["name"], e, n)
            assert b.data[0].dtype == np.float32
            np.testing.assert_allclose(b.data[0].asnumpy(), golden[key + ":data"], atol=1,
                                       err_msg=key)  # bicubic resizes: +-1
            np.testing.assert_array_equal(b.label[0].asnumpy(), golden[key + ":label"],
                                          err_msg=key)
            got.append([e, n, b.pad])
    assert got == case["batches"]


def test_in_memory_list(in_golden):
    imglist = [[float(i), "im%d.png" % i] for i in range(5)] + [[[5.0], "im6.png"]]
    it = mx.image.ImageIter(2, (3, 6, 6), imglist=imglist, path_root="iter/img")
    labels = np.concatenate([b.label[0].asnumpy() for b in it])
    assert labels.tolist() == [0, 1, 2, 3, 4, 5]
    multi = mx.image.ImageIter(2, (3, 6, 6), imglist=[[1, 2, "im0.png"], [3, 4, "im1.png"]],
                               path_root="iter/img", label_width=2)
    assert multi.next().label[0].asnumpy().tolist() == [[1, 2], [3, 4]]
    ref = mx.image.ImageIter(6, (3, 6, 6), path_imglist="iter/data.lst", path_root="iter/img",
                             label_width=2)
    first = ref.next().data[0].asnumpy()
    it.reset()
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), first[:2])


def test_aug_list_and_names(in_golden):
    it = mx.image.ImageIter(4, (3, 5, 5), path_imgrec="iter/data.rec",
                            aug_list=[mx.image.ForceResizeAug((5, 5)), mx.image.CastAug()],
                            data_name="img", label_name="y")
    assert it.provide_data == [("img", (4, 3, 5, 5))]
    assert it.provide_label == [("y", (4,))]
    b = it.next()
    assert b.data[0].shape == (4, 3, 5, 5) and b.pad == 0
    b = it.next()
    assert b.pad == 1
    with pytest.raises(StopIteration):
        it.next()


def test_bad_arguments(in_golden, tmp_path):
    with pytest.raises(MXNetError, match="needs path_imgrec"):
        mx.image.ImageIter(2, (3, 4, 4))
    with pytest.raises(MXNetError, match="need path_imgidx"):
        mx.image.ImageIter(2, (3, 4, 4), path_imgrec="iter/data.rec", shuffle=True)
    with pytest.raises(ValueError, match="3 channels"):
        mx.image.ImageIter(2, (1, 4, 4), path_imgrec="iter/data.rec")
    with pytest.raises(MXNetError, match="last_batch_handle"):
        mx.image.ImageIter(2, (3, 4, 4), path_imgrec="iter/data.rec", last_batch_handle="x")
    bad = tmp_path / "bad.lst"
    bad.write_text("0\t1.0\ta.png\nx\t1.0\tb.png\n")
    with pytest.raises(MXNetError, match="line 2"):
        mx.image.ImageIter(2, (3, 4, 4), path_imglist=str(bad))
    broken = tmp_path / "broken.rec"
    w = mx.recordio.MXRecordIO(str(broken), "w")
    w.write(mx.recordio.pack(mx.recordio.IRHeader(0, 1.0, 0, 0), b"not an image"))
    w.close()
    it = mx.image.ImageIter(2, (3, 4, 4), path_imgrec=str(broken))
    with pytest.raises(RuntimeError, match="Broken image.*broken.rec"):
        it.next()


def test_feeds_module_style_loop(in_golden):
    it = mx.image.ImageIter(3, (3, 6, 6), path_imgrec=os.path.join("iter", "data.rec"),
                            path_imgidx=os.path.join("iter", "data.idx"), shuffle=True,
                            rand_mirror=True, mean=True, std=True)
    n = 0
    for epoch in range(2):
        it.reset()
        for b in it:
            assert b.data[0].shape == (3, 3, 6, 6) and np.isfinite(b.data[0].asnumpy()).all()
            n += 1
    assert n == 6
