"""gluon.contrib.nn against MXNet 1.9.1 (the contrib cases of tests/golden/gluon_nn; helpers in
test_nn_layers.py): HybridConcurrent, Concurrent, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D,
plus SparseEmbedding's and multi-device SyncBatchNorm's clear errors."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.gluon.contrib import nn as cnn

from .test_nn_layers import (CASES, RECORDS, check_export, check_hybrid_equals_imperative,
                             check_names_and_repr, check_values, exported)

CONTRIB_CASES = [cid for cid, c in CASES.items() if c["spec"]["cls"].startswith("contrib.")]


def test_contrib_cases_exist():
    assert {"identity", "hybridconcurrent", "concurrent", "syncbatchnorm", "pixelshuffle1d",
            "pixelshuffle2d", "pixelshuffle3d"} <= set(CONTRIB_CASES)


@pytest.mark.parametrize("cid", CONTRIB_CASES)
def test_names_and_repr(cid):
    check_names_and_repr(CASES[cid])


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("cid", CONTRIB_CASES)
def test_values(cid, hybridize):
    check_values(CASES[cid], hybridize)


@pytest.mark.parametrize("cid", CONTRIB_CASES)
def test_hybridized_equals_imperative(cid):
    check_hybrid_equals_imperative(CASES[cid])


@pytest.mark.parametrize("cid", [c for c in CONTRIB_CASES if c != "syncbatchnorm"])
def test_export_json(cid, tmp_path):
    check_export(CASES[cid], tmp_path)


def test_syncbatchnorm_exports_batchnorm(tmp_path):
    """Without a contrib.SyncBatchNorm operator, neomx's one-device SyncBatchNorm runs and exports
    BatchNorm(axis=1) with the same arguments: MXNet's graph but for that node's op name and its
    ndev/key attributes."""
    case = CASES["syncbatchnorm"]
    if hasattr(mx.sym.contrib, "SyncBatchNorm"):
        check_export(case, tmp_path)
        return
    text, keys = exported(case, tmp_path)
    want = json.loads(case["export_json"])
    node = want["nodes"][-1]
    assert node["op"] == "_contrib_SyncBatchNorm"
    node["op"] = "BatchNorm"
    attrs = {k: v for k, v in node["attrs"].items() if k not in ("ndev", "key")}
    node["attrs"] = dict(attrs, axis="1")
    assert json.loads(text) == want
    assert keys == case["export_keys"]


def test_syncbatchnorm_devices():
    """num_devices defaults to the number of GPUs (at least 1) with MXNet's warning; more than one
    device needs the contrib operator."""
    with pytest.warns(UserWarning, match="Caution using SyncBatchNorm"):
        layer = cnn.SyncBatchNorm(in_channels=2)
    assert layer._kwargs["ndev"] == max(mx.context.num_gpus(), 1)
    if hasattr(mx.nd.contrib, "SyncBatchNorm"):
        return
    two = cnn.SyncBatchNorm(in_channels=2, num_devices=2)
    two.initialize()
    with pytest.raises(MXNetError, match="SyncBatchNorm"):
        two(mx.nd.ones((2, 2, 3)))


def test_sparse_embedding_needs_a_trainer():
    layer = cnn.SparseEmbedding(10, 4)  # (training: tests/sparse/test_sparse_gluon.py)
    layer.initialize()
    assert layer.weight.stype == "row_sparse" and layer.weight._grad_stype == "row_sparse"
    with pytest.raises(RuntimeError, match="no Trainer"):
        layer(mx.nd.array([1, 2]))


def test_public_layers():
    have = {n for n in dir(cnn) if isinstance(getattr(cnn, n), type)}
    assert set(RECORDS["contrib_nn_all"]) <= have
    assert sorted(cnn.__all__) == RECORDS["contrib_nn_all"]


def test_concurrent_requires_hybrid_children():
    net = cnn.HybridConcurrent()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        net.add(mx.gluon.nn.Lambda("tanh"))


def test_pixelshuffle_inverse_of_space_to_depth():
    """PixelShuffle2D moves channel blocks into space: out[n, c, h*f1+i, w*f2+j] =
    x[n, c*f1*f2 + i*f2 + j, h, w]."""
    f1, f2 = 2, 3
    x = np.arange(2 * 12 * 2 * 2, dtype=np.float32).reshape(2, 12, 2, 2)
    layer = cnn.PixelShuffle2D((f1, f2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layer(mx.nd.array(x)).asnumpy()
    want = x.reshape(2, 2, f1, f2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 6)
    np.testing.assert_array_equal(out, want)
    assert repr(layer) == "PixelShuffle2D((2, 3))"
