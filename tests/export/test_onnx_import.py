"""mx.contrib.onnx: models exported by mx.onnx.export_model import back (import_model,
import_to_gluon) and give neomx's outputs; metadata and errors as MXNet 1.9.1's importer."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

from . import _models

onnx = pytest.importorskip("onnx")


def _export(model, path):
    sym, args, aux, inputs = model
    mx.onnx.export_model(sym, [args, aux], [v.shape for v in inputs.values()],
                         onnx_file_path=str(path))
    return str(path)


def _round_trip(model, tmp_path):
    sym, args, aux, inputs = model
    ref = _models.neomx_forward(sym, args, aux, inputs)
    path = _export(model, tmp_path / "model.onnx")
    sym2, args2, aux2 = mx.contrib.onnx.import_model_(path)
    got = _models.neomx_forward(sym2, args2, aux2, inputs)
    assert len(got) == len(ref)
    for g, want in zip(got, ref):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)
    return path, sym2, args2, aux2


def test_lenet_round_trip(tmp_path):
    _, sym, args, aux = _round_trip(_models.lenet(), tmp_path)
    assert sym.list_inputs()[0] == "data"  # variables keep the file's names
    assert {"conv1_weight", "conv1_bias", "fc2_weight", "fc2_bias"} <= set(args)
    assert not aux
    assert set(args) | {"data"} == set(sym.list_arguments())


def test_resnet18_round_trip(tmp_path, resnet18_model):
    _, sym, args, aux = _round_trip(resnet18_model, tmp_path)
    assert set(aux) == set(sym.list_auxiliary_states())
    assert any(k.endswith("running_var") for k in aux)  # BatchNorm's statistics stay aux


def test_zoo_of_ops_round_trip(tmp_path):
    """ConvTranspose, LRN, norms, PRelu, Slice, Split, Gather (Embedding), Pad, pooling modes."""
    _round_trip(_models.zoo_of_ops(), tmp_path)


def test_import_to_gluon(tmp_path):
    model = _models.lenet(head=False)
    ref = _models.neomx_forward(*model)
    path = _export(model, tmp_path / "lenet.onnx")
    net = mx.contrib.onnx.import_to_gluon_(path, mx.cpu())
    assert isinstance(net, mx.gluon.SymbolBlock)
    out = net(mx.nd.array(model[3]["data"]))
    np.testing.assert_allclose(out.asnumpy(), ref[0], rtol=1e-4, atol=1e-5)


def test_get_model_metadata(tmp_path, capsys):
    path = _export(_models.lenet(), tmp_path / "lenet.onnx")
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta == {"input_tensor_data": [("data", (2, 1, 28, 28), 1)],
                    "output_tensor_data": [("softmax", (2, 10))]}
    assert "deprecated" in capsys.readouterr().out  # MXNet's notice


def test_export_model_deprecated_location(tmp_path, capsys):
    sym, args, aux, inputs = _models.lenet()
    path = str(tmp_path / "m.onnx")
    assert mx.contrib.onnx.export_model(sym, [args, aux], [(2, 1, 28, 28)],
                                        onnx_file_path=path) == path
    assert "mxnet.onnx.export_model is the preferred path" in capsys.readouterr().out
    assert mx.contrib.onnx.export_model_ is mx.onnx.export_model


def _small_model(path, nodes, initializers=(), out_shape=(1, 4)):
    h = onnx.helper
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", 1, [1, 4])],
                         [h.make_tensor_value_info("y", 1, list(out_shape))],
                         initializer=list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return str(path)


def test_unsupported_ops_named_together(tmp_path):
    h = onnx.helper
    path = _small_model(tmp_path / "bad.onnx", [
        h.make_node("Hardmax", ["x"], ["a"]), h.make_node("Relu", ["a"], ["b"]),
        h.make_node("Einsum", ["b"], ["y"], equation="ij->ij")])
    with pytest.raises(MXNetError, match="Einsum, Hardmax"):
        mx.contrib.onnx.import_model_(path)


def test_small_ops(tmp_path):
    """Constants, scalar arithmetic, Unsqueeze/Squeeze, Clip, ReduceSum and Softmax."""
    h, nh = onnx.helper, onnx.numpy_helper
    nodes = [
        h.make_node("Constant", [], ["two"], value=nh.from_array(np.array(2.0, np.float32))),
        h.make_node("Mul", ["x", "two"], ["a"]),
        h.make_node("Sub", ["a", "w"], ["b"]),
        h.make_node("Unsqueeze", ["b", "ax"], ["c"]),
        h.make_node("Squeeze", ["c", "ax"], ["d"]),
        h.make_node("Clip", ["d", "lo", "hi"], ["e"]),
        h.make_node("ReduceSum", ["e", "ax1"], ["f"], keepdims=1),
        h.make_node("Add", ["e", "f"], ["g"]),
        h.make_node("Softmax", ["g"], ["y"], axis=-1),
    ]
    w = np.array([[0.5, -1.0, 2.0, 0.0]], np.float32)
    inits = [nh.from_array(w, "w"), nh.from_array(np.array([0], np.int64), "ax"),
             nh.from_array(np.array([1], np.int64), "ax1"),
             nh.from_array(np.array(-1.0, np.float32), "lo"),
             nh.from_array(np.array(3.0, np.float32), "hi")]
    path = _small_model(tmp_path / "small.onnx", nodes, inits)
    sym, args, aux = mx.contrib.onnx.import_model_(path)
    assert set(args) == {"w"}
    x = np.array([[0.1, 0.2, 3.0, -4.0]], np.float32)
    got = _models.neomx_forward(sym, args, aux, {"x": x})[0]
    e = np.clip(2 * x - w, -1, 3)
    g = e + e.sum(axis=1, keepdims=True)
    want = np.exp(g) / np.exp(g).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5)
