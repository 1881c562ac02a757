"""mx.io.ResizeIter and PrefetchingIter (MXNet 1.9.1's Python wrappers), the torch interop
dataset (neomx.contrib.torch_data) and the doctests of the new io modules."""
from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest
import torch

import neomx as mx

REC = Path(__file__).resolve().parents[1] / "golden" / "image_record_iter" / "data" / "a.rec"

try:
    import cv2  # noqa: F401
    HAS_CV2 = True
except ImportError:
    HAS_CV2 = False
needs_cv2 = pytest.mark.skipif(not HAS_CV2, reason="needs OpenCV: pip install neomx[image]")


def test_resize_iter_wraps_around():
    it = mx.io.NDArrayIter(np.arange(10.).reshape(10, 1), batch_size=4)
    r = mx.io.ResizeIter(it, 5)
    firsts = [b.data[0].asnumpy()[0, 0] for b in r]
    assert firsts == [0, 4, 8, 0, 4]
    assert r.provide_data == it.provide_data and r.batch_size == 4
    r.reset()
    assert len(list(r)) == 5


def test_prefetching_iter_renames_and_combines():
    a = mx.io.NDArrayIter({"data": np.ones((8, 2))}, np.zeros(8), batch_size=4)
    b = mx.io.NDArrayIter({"data": np.zeros((8, 3))}, np.ones(8), batch_size=4)
    p = mx.io.PrefetchingIter([a, b], rename_data=[{"data": "x"}, {"data": "y"}])
    assert [d.name for d in p.provide_data] == ["x", "y"]
    batches = list(p)
    assert len(batches) == 2
    assert [d.shape for d in batches[0].data] == [(4, 2), (4, 3)]
    p.reset()
    assert len(list(p)) == 2


@needs_cv2
def test_prefetching_iter_over_image_record_iter():
    it = mx.io.ImageRecordIter(path_imgrec=str(REC), data_shape=(3, 24, 24), batch_size=4)
    p = mx.io.PrefetchingIter(it)
    labels = [b.label[0].asnumpy().tolist() for b in p]
    assert labels == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


@needs_cv2
def test_record_dataset_in_a_torch_dataloader_with_workers():
    from neomx.contrib.torch_data import RecordDataset, center_crop_normalize
    ds = RecordDataset(REC, transform=center_crop_normalize(24, mean=(0, 0, 0), std=(1, 1, 1)))
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    images, labels = next(iter(loader))
    assert images.shape == (4, 3, 24, 24) and images.dtype == torch.float32
    assert labels.tolist() == [0, 1, 2, 3]
    # the same pixels as ImageRecordIter's center crop
    it = mx.io.ImageRecordIter(path_imgrec=str(REC), data_shape=(3, 24, 24), batch_size=4)
    np.testing.assert_array_equal(images.numpy(), it.next().data[0].asnumpy())


@needs_cv2
@pytest.mark.parametrize("module", ["neomx.io.image_record_iter", "neomx.io.text_iters",
                                    "neomx.io.wrappers", "neomx.contrib.torch_data"])
def test_doctests(module):
    import importlib
    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


@needs_cv2
def test_rec_to_torch_example_runs(tmp_path):
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "examples" / "rec_to_torch.py"
    spec = importlib.util.spec_from_file_location("rec_to_torch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    acc = mod.main(["--images", "64", "--epochs", "1", "--workers", "0", "--out",
                    str(tmp_path)])
    assert 0.0 <= acc <= 1.0 and (tmp_path / "train.idx").exists()
