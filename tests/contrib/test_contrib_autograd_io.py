"""mx.contrib.autograd (MXNet 1.9.1's values from tools/make_golden_contrib_text.py),
mx.contrib.io.DataLoaderIter, mx.contrib.tensorboard and the contrib operator namespaces."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import neomx as mx
from neomx.contrib import autograd as cag

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "contrib_text" / "golden.json")
                    .read_text())


def test_grad_and_loss_and_grad():
    x = mx.nd.array([[1, 2], [3, 4]])
    y = mx.nd.array([[0.5, -1], [2, 0]])
    grads, loss = cag.grad_and_loss(lambda a, b: (a * b + a * a).sum())(x, y)
    for g, want in zip(grads, GOLDEN["grad_and_loss"]["grads"]):
        np.testing.assert_allclose(g.asnumpy(), want)
    assert float(loss.asscalar()) == GOLDEN["grad_and_loss"]["loss"]
    got = cag.grad(lambda a, b: a * b, argnum=[1])(x, y)
    np.testing.assert_allclose(got[0].asnumpy(), GOLDEN["grad_argnum"])
    with pytest.raises(AssertionError, match="type of autograd input should NDArray"):
        cag.grad(lambda a: a)(np.ones(2))


def test_sections_set_training_and_recording():
    assert not mx.autograd.is_training() and not mx.autograd.is_recording()
    with cag.train_section():
        assert mx.autograd.is_training() and mx.autograd.is_recording()
        with cag.test_section():
            assert not mx.autograd.is_training() and not mx.autograd.is_recording()
        assert mx.autograd.is_recording()
    assert not mx.autograd.is_recording()
    assert cag.set_is_training(True) is False
    assert cag.set_is_training(False) is True


def test_mark_variables_backward_and_grad_reqs():
    x = mx.nd.array([1.0, 2.0])
    gx = mx.nd.zeros((2,))
    cag.mark_variables([x], [gx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            y = x * x
        cag.backward([y], [mx.nd.array([1.0, 10.0])])
    np.testing.assert_allclose(gx.asnumpy(), [4.0, 80.0])  # 'add' accumulates
    with cag.train_section():
        z = x * 3
    cag.compute_gradient([z])
    np.testing.assert_allclose(gx.asnumpy(), [7.0, 83.0])
    with pytest.raises(KeyError):
        cag.mark_variables([x], [gx], grad_reqs="bad")
    with pytest.raises(AssertionError, match="outputs must be a list or tuple"):
        cag.backward(z)
    with pytest.raises(AssertionError, match="must have the same length"):
        cag.backward([z], [None, None])


def test_dataloader_iter_pads_the_last_batch():
    data = mx.nd.arange(14).reshape((7, 2))
    label = mx.nd.arange(7)
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data, label), batch_size=3)
    it = mx.contrib.io.DataLoaderIter(loader, data_name="x", label_name="y", dtype="float16")
    assert it.batch_size == 3
    assert [(d.name, d.shape, np.dtype(d.dtype)) for d in it.provide_data] == \
        [("x", (3, 2), np.float16)]
    assert [(d.name, d.shape) for d in it.provide_label] == [("y", (3,))]
    for _ in range(2):  # and again after reset
        batches = list(it)
        assert [b.pad for b in batches] == [0, 0, 2]
        assert batches[0].data[0].dtype == np.float16
        np.testing.assert_array_equal(batches[2].data[0].asnumpy()[:1], [[12, 13]])
        np.testing.assert_array_equal(batches[2].label[0].asnumpy()[:1], [6])
        assert batches[2].data[0].shape == (3, 2) and batches[0].index is None
        it.reset()


def test_tensorboard_callback_names_the_missing_package(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name in ("mxboard", "torch.utils.tensorboard"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    with pytest.raises(ImportError, match="install the 'tensorboard' package"):
        mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path))


def test_tensorboard_callback_writes_scalars(monkeypatch):
    written = []

    class Writer:
        def __init__(self, logdir):
            self.logdir = logdir

        def add_scalar(self, name, value, global_step):
            written.append((name, value, global_step))
    monkeypatch.setattr(mx.contrib.tensorboard, "_summary_writer", Writer)
    cb = mx.contrib.tensorboard.LogMetricsCallback("logs", prefix="train")
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    cb(SimpleNamespace(eval_metric=metric, epoch=3))
    cb(SimpleNamespace(eval_metric=None, epoch=4))
    assert written == [("train-accuracy", 0.5, 3)]


def test_contrib_operator_namespaces():
    assert mx.contrib.nd is mx.contrib.ndarray and mx.contrib.sym is mx.contrib.symbol
    assert mx.contrib.nd.arange_like is mx.nd.contrib.arange_like
    assert mx.contrib.sym.arange_like is mx.sym.contrib.arange_like
