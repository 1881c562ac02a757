"""Bounding-box and detection operators of ``mx.nd.contrib`` beyond the golden cases
(tests/ops/test_contrib_golden.py): float64 numerical gradients of the differentiable ones
(box_nms, ROIAlign), the docstring examples, behaviours MXNet's kernels get wrong (ROIAlign's
negative batch index), dtypes, and the speed of suppression on many boxes.
"""
from __future__ import annotations

import doctest
import time

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.test_utils import check_numeric_gradient

OPS = ["_contrib_box_iou", "_contrib_box_nms", "_contrib_bipartite_matching",
       "_contrib_box_encode", "_contrib_box_decode", "_contrib_MultiBoxPrior",
       "_contrib_MultiBoxTarget", "_contrib_MultiBoxDetection", "_contrib_ROIAlign"]


@pytest.mark.parametrize("name", OPS)
def test_doc_examples_run(name):
    op = mx.ops.get(name)
    assert op.doc.strip()
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(op.doc, {}, name, None, 0))
    assert runner.summarize(verbose=False).failed == 0


def _dets(rng, n, width=6):
    xy = rng.uniform(0, 0.7, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0.1, 0.3, (n, 2))], axis=1)
    score = rng.permutation(n) / n + 0.01  # distinct scores: no ties to flip
    out = np.concatenate([rng.randint(0, 2, (n, 1)), score[:, None], boxes], axis=1)
    if width > 6:
        out = np.concatenate([out, rng.uniform(-1, 1, (n, width - 6))], axis=1)
    return out


def test_box_nms_numeric_gradient_float64():
    data = _dets(np.random.RandomState(0), 10, width=7)
    sym = mx.sym.contrib.box_nms(mx.sym.Variable("data"), overlap_thresh=0.3, id_index=0,
                                 topk=8)
    check_numeric_gradient(sym, [data], numeric_eps=1e-6, rtol=1e-6, atol=1e-8,
                           dtype=np.float64)


@pytest.mark.parametrize("params", [
    dict(pooled_size=(2, 3), spatial_scale=1.0),
    dict(pooled_size=(2, 2), spatial_scale=0.5, sample_ratio=2, aligned=True),
    dict(pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True)])
def test_roialign_numeric_gradient_float64(params):
    r = np.random.RandomState(1)
    c = 8 if params.get("position_sensitive") else 2
    data = r.uniform(-1, 1, (2, c, 5, 6))
    rois = np.array([[0, 0.3, 0.2, 4.1, 3.7], [1, 1.2, 0.6, 5.4, 4.3], [1, -1, 2, 7, 6.5]])
    if params["spatial_scale"] != 1.0:
        rois[:, 1:] *= 2
    sym = mx.sym.contrib.ROIAlign(mx.sym.Variable("data"), mx.sym.Variable("rois"), **params)
    check_numeric_gradient(sym, [data, rois], grad_nodes=["data"], numeric_eps=1e-6, rtol=1e-6,
                           atol=1e-8, dtype=np.float64)


def test_roialign_negative_batch_index_gives_zeros():
    """MXNet documents zeros; its 1.9.1 CPU kernel zeroes element n of the whole output
    instead and leaves the roi's output unset. neomx gives the documented zeros and leaves
    the other rois alone; the roi gets no gradient."""
    data = mx.nd.array(np.random.RandomState(2).uniform(-1, 1, (1, 2, 4, 4)))
    rois = mx.nd.array([[0, 0, 0, 3, 3], [-1, 0, 0, 3, 3]])
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0)
    out.backward(mx.nd.concat(mx.nd.zeros((1, 2, 2, 2)), mx.nd.ones((1, 2, 2, 2)), dim=0))
    assert not out[1].asnumpy().any() and out[0].asnumpy().any()
    assert not data.grad.asnumpy().any()


def test_box_ops_keep_float64():
    r = np.random.RandomState(3)
    a = mx.nd.array(_dets(r, 6)[:, 2:], dtype="float64")
    assert mx.nd.contrib.box_iou(a, a).dtype == np.float64
    nms = mx.nd.contrib.box_nms(mx.nd.array(_dets(r, 6), dtype="float64"))
    assert nms.dtype == np.float64
    dec = mx.nd.contrib.box_decode(mx.nd.zeros((1, 6, 4), dtype="float64"), a.reshape((1, 6, 4)),
                                   format="corner")
    np.testing.assert_allclose(dec.asnumpy()[0], a.asnumpy(), rtol=1e-12)


def test_box_iou_matches_numpy_reference():
    r = np.random.RandomState(4)
    a, b = _dets(r, 7)[:, 2:], _dets(r, 5)[:, 2:]
    w = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]),
                0, None)
    h = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]),
                0, None)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    want = w * h / (area(a)[:, None] + area(b)[None, :] - w * h)
    got = mx.nd.contrib.box_iou(mx.nd.array(a, dtype="float64"), mx.nd.array(b, dtype="float64"))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


def test_multibox_ops_are_float32_only():
    with pytest.raises(MXNetError, match="Unsupported data type 1"):
        mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2), dtype="float64"))


def test_box_nms_many_boxes_is_fast():
    """4000 boxes: the greedy pass loops over kept boxes only, each a vectorised IoU."""
    r = np.random.RandomState(5)
    data = mx.nd.array(np.stack([_dets(r, 4000), _dets(r, 4000)]))
    mx.nd.contrib.box_nms(data[:, :10]).wait_to_read()
    t0 = time.perf_counter()
    out = mx.nd.contrib.box_nms(data, overlap_thresh=0.5, topk=3000).asnumpy()
    assert time.perf_counter() - t0 < 5.0
    kept = out[0, :, 1] >= 0
    assert 0 < kept.sum() < 3000 and (np.diff(out[0, kept, 1]) <= 0).all()


def test_bipartite_matching_batched_reference():
    """The vectorised greedy matching equals a plain loop over the stably sorted scores."""
    r = np.random.RandomState(6)
    s = r.randint(0, 6, (3, 5, 4)).astype(np.float32)
    x, y = mx.nd.contrib.bipartite_matching(mx.nd.array(s), threshold=1.5)
    for b in range(3):
        rows, cols = -np.ones(5), -np.ones(4)
        flat = s[b].ravel()
        for k in np.argsort(-flat, kind="stable"):
            i, j = divmod(int(k), 4)
            if rows[i] == -1 and cols[j] == -1:
                if not flat[k] > 1.5:
                    break
                rows[i], cols[j] = j, i
        np.testing.assert_array_equal(x.asnumpy()[b], rows)
        np.testing.assert_array_equal(y.asnumpy()[b], cols)
