"""mx.onnx.export_model: onnxruntime's outputs equal neomx's executor's."""
import sys

import numpy as np
import pytest

import neomx as mx

from . import _models

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")


def _run_onnx(path, inputs):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess, sess.run(None, inputs)


def _check(model, tmp_path, **kw):
    sym, args, aux, inputs = model
    ref = _models.neomx_forward(sym, args, aux, inputs)
    path = tmp_path / "model.onnx"
    assert mx.onnx.export_model(sym, [args, aux], [v.shape for v in inputs.values()],
                                onnx_file_path=str(path), **kw) == str(path)
    sess, outs = _run_onnx(path, inputs)
    assert len(outs) == len(ref)
    for got, want in zip(outs, ref):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return sess


def test_lenet_names_as_mxnet(tmp_path):
    sess = _check(_models.lenet(), tmp_path)
    assert [i.name for i in sess.get_inputs()] == ["data"]  # softmax_label is no input
    assert [o.name for o in sess.get_outputs()] == ["softmax"]
    proto = onnx.load(str(tmp_path / "model.onnx"))
    assert proto.graph.name == "mxnet_converted_model"
    assert {t.name for t in proto.graph.initializer} >= {"conv1_weight", "fc2_bias"}


def test_resnet18(resnet18_model, tmp_path):
    _check(resnet18_model, tmp_path)


@pytest.mark.parametrize("mode,layers,bidir", [("lstm", 2, True), ("gru", 1, True),
                                               ("rnn_tanh", 2, False), ("rnn_relu", 1, False)])
def test_rnn(mode, layers, bidir, tmp_path):
    sess = _check(_models.lstm(mode, layers, bidir), tmp_path)
    outs = [o.name for o in sess.get_outputs()]
    assert outs == (["head", "rnn1", "rnn2"] if mode == "lstm" else ["head", "rnn1"])


def test_many_operators(tmp_path):
    _check(_models.zoo_of_ops(), tmp_path)


def test_files_and_dynamic_batch(tmp_path):
    sym, args, aux, inputs = _models.lenet()
    prefix = str(tmp_path / "lenet")
    mx.model.save_checkpoint(prefix, 3, sym, args, aux)
    path = tmp_path / "dyn.onnx"
    mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0003.params",
                         in_shapes=[(2, 1, 28, 28)], onnx_file_path=str(path), dynamic=True,
                         dynamic_input_shapes=[(None, 1, 28, 28)], run_shape_inference=True)
    x = np.random.RandomState(0).rand(5, 1, 28, 28).astype(np.float32)
    _, (got,) = _run_onnx(path, {"data": x})
    want = _models.neomx_forward(sym, args, aux, {"data": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_unsupported_operators_are_all_named(tmp_path):
    data = mx.sym.Variable("data")
    net = mx.sym.topk(mx.sym.sort(mx.sym.FullyConnected(data, num_hidden=4, name="fc")), k=2)
    args = {"fc_weight": mx.nd.ones((4, 3)), "fc_bias": mx.nd.zeros(4)}
    with pytest.raises(mx.MXNetError, match="unsupported operators sort, topk"):
        mx.onnx.export_model(net, args, [(2, 3)], onnx_file_path=str(tmp_path / "x.onnx"))
    drop = mx.sym.Pooling(data, kernel=(2,), pool_type="max", pooling_convention="same")
    with pytest.raises(mx.MXNetError, match="Pooling .*pooling_convention='same'"):
        mx.onnx.export_model(drop, {}, [(1, 2, 6)], onnx_file_path=str(tmp_path / "y.onnx"))


def test_wrong_number_of_shapes():
    sym, args, aux, _ = _models.lenet()
    with pytest.raises(mx.MXNetError, match=r"inputs \['data'\]"):
        mx.onnx.export_model(sym, [args, aux], [(1, 1, 28, 28), (1,)])


def test_without_onnx_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    sym, args, aux, _ = _models.lenet()
    with pytest.raises(mx.MXNetError, match=r"pip install neomx\[onnx\]"):
        mx.onnx.export_model(sym, [args, aux], [(1, 1, 28, 28)])
