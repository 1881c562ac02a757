"""``mx.model.FeedForward`` against MXNet 1.9.1 (``tools/make_golden_feedforward.py``): a fit
from fixed parameters, predict (iterators, numpy, ``num_batch``, ``return_data``), score,
save/load of MXNet's checkpoint; argument checks and errors."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "feedforward"
A = dict(np.load(GOLDEN / "feedforward.npz"))
META = json.loads((GOLDEN / "feedforward.json").read_text())
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def network():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _iter():
    return mx.io.NDArrayIter(A["X"], A["y"], batch_size=8, shuffle=False)


@pytest.fixture(scope="module")
def trained():
    init = {k[5:]: mx.nd.array(v) for k, v in A.items() if k.startswith("init/")}
    model = mx.model.FeedForward(network(), num_epoch=3, optimizer="sgd", learning_rate=0.1,
                                 momentum=0.9, wd=0.01, arg_params=init)
    model.fit(_iter())
    return model


def test_fit_matches_mxnet(trained):
    assert sorted(trained.arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    for k, v in trained.arg_params.items():
        np.testing.assert_allclose(v.asnumpy(), A["trained/" + k], rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    assert trained.aux_params == {}


def test_predict_and_score(trained):
    np.testing.assert_allclose(trained.predict(_iter()), A["predict"], rtol=1e-5, atol=1e-6)
    out, data, label = trained.predict(_iter(), return_data=True)
    np.testing.assert_allclose(out, A["predict"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(data, A["predict_data"])
    np.testing.assert_array_equal(label, A["predict_label"])
    np.testing.assert_allclose(trained.predict(A["X"]), A["predict_numpy"], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(trained.predict(_iter(), num_batch=2), A["predict_2batches"],
                               rtol=1e-5, atol=1e-6)
    assert trained.score(_iter()) == pytest.approx(META["score"])
    calls = []
    trained.score(_iter(), batch_end_callback=lambda p: calls.append((p.epoch, p.nbatch)))
    assert calls == [(0, 0), (0, 1), (0, 2)]


def test_load_mxnet_checkpoint_and_save(tmp_path, trained):
    model = mx.model.FeedForward.load(str(GOLDEN / "ff"), 3)
    assert model.begin_epoch == META["begin_epoch_after_load"]
    for k, v in model.arg_params.items():
        np.testing.assert_array_equal(v.asnumpy(), A["trained/" + k])
    np.testing.assert_allclose(model.predict(_iter()), A["predict"], rtol=1e-5, atol=1e-6)
    model.num_epoch = 5
    model.save(str(tmp_path / "again"))
    _, arg, aux = mx.model.load_checkpoint(str(tmp_path / "again"), 5)
    assert sorted(arg) == sorted(model.arg_params) and aux == {}


def test_save_needs_an_epoch(tmp_path):
    model = mx.model.FeedForward(network())
    with pytest.raises(AssertionError):
        model.save(str(tmp_path / "x"))


def test_create_with_numpy_and_initializer():
    mx.random.seed(3)
    np.random.seed(3)
    model = mx.model.FeedForward.create(network(), A["X"], A["y"], num_epoch=2,
                                        numpy_batch_size=10, learning_rate=0.05,
                                        initializer=mx.init.Xavier())
    assert model.arg_params["fc1_weight"].shape == (6, 5)
    assert model.predict(A["X"]).shape == (20, 3)


def test_constructor_and_errors():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = mx.model.FeedForward(network(), ctx=mx.cpu(), optimizer="adam", beta1=0.8)
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    assert model.ctx == [mx.cpu()] and model.kwargs == {"beta1": 0.8}
    assert model.numpy_batch_size == 128 and model.begin_epoch == 0
    assert mx.model.FeedForward._is_data_arg("x_label")
    with pytest.raises(ValueError, match="y must be specified"):
        model.fit(A["X"])
    with pytest.raises(TypeError, match="y must be ndarray"):
        model.fit(A["X"], list(A["y"]))
    with pytest.raises(ValueError, match="not equal"):
        model.fit(A["X"], A["y"][:5])
    with pytest.raises(ValueError, match="Label must be 1D"):
        model.fit(A["X"], np.zeros((20, 2)))
    with pytest.raises(TypeError, match="X must be DataIter"):
        model.fit([1, 2])
    with pytest.raises(ValueError, match="Eval data is NONE"):
        model.fit(_iter(), eval_data=(None, None))
    dup = mx.sym.FullyConnected(mx.sym.Variable("data"), weight=mx.sym.Variable("w"),
                                num_hidden=2, no_bias=True)
    dup = mx.sym.FullyConnected(dup, weight=mx.sym.Variable("w"), num_hidden=2, no_bias=True)
    with pytest.raises(ValueError, match="duplicated argument"):
        mx.model.FeedForward(dup)
    extra = mx.model.FeedForward(network(), allow_extra_params=True,
                                 arg_params={"fc1_bias": mx.nd.zeros((6,)), "x": mx.nd.ones(1)})
    assert list(extra.arg_params) == ["fc1_bias"]
