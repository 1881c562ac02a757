"""One small graph per operator family, through both exporters, against neomx's executor."""
import numpy as np
import pytest
import torch

import neomx as mx

from . import _models

S = mx.sym
X = S.Variable("data")

CASES = {
    "deconv_adj_dilate": (S.Deconvolution(X, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                                          dilate=(1, 1), num_filter=2, num_group=1, name="dc"),
                          (2, 3, 5, 5)),
    "conv1d_group": (S.Convolution(X, kernel=(3,), num_filter=4, num_group=2, stride=(2,),
                                   name="c"), (2, 4, 9)),
    "conv3d": (S.Convolution(X, kernel=(2, 2, 2), num_filter=2, name="c"), (1, 2, 4, 4, 4)),
    "gelu_selu_rrelu": (S.LeakyReLU(S.LeakyReLU(S.LeakyReLU(X, act_type="rrelu")[0],
                                                act_type="selu"), act_type="gelu"),
                        (2, 3, 4)),
    "upsampling": (S.UpSampling(X, scale=2, sample_type="nearest", num_args=1), (1, 2, 3, 3)),
    "pool_avg_exclude_pad": (S.Pooling(X, kernel=(3, 3), pad=(1, 1), pool_type="avg",
                                       count_include_pad=False), (1, 2, 5, 5)),
    "pool_global_max": (S.Pooling(X, kernel=(1, 1), global_pool=True, pool_type="max"),
                        (2, 3, 4, 5)),
    "bn_axis_last": (S.BatchNorm(X, axis=-1, fix_gamma=False, name="bn"), (2, 3, 4)),
    "layernorm_axis1": (S.LayerNorm(X, axis=1, name="ln"), (2, 3, 4)),
    "reshape_codes": (S.Reshape(S.Reshape(X, shape=(-4, 2, -1, -2)), shape=(0, -1),
                                reverse=True), (4, 3, 5)),
    "swap_stack_squeeze": (S.squeeze(S.stack(S.SwapAxis(X, dim1=0, dim2=2), X * 2, axis=0,
                                             num_args=2).slice_axis(axis=0, begin=0, end=1),
                                     axis=0), (3, 2, 3)),
    "reduce_exclude": (S.broadcast_add(S.max(X, axis=1, exclude=True, keepdims=True),
                                       S.min(X)), (2, 3, 4)),
    "batch_dot_t": (S.batch_dot(X, X, transpose_b=True), (2, 3, 4)),
    "log_softmax_pad_edge": (S.log_softmax(S.Pad(X, mode="edge",
                                                 pad_width=(0, 0, 0, 0, 1, 2, 0, 1)), axis=1),
                             (1, 2, 3, 3)),
    "scalars": (S.clip(1.0 / (2.0 - X) ** 2.0, 0.1, 3.0) - S.maximum(X, 0.2), (2, 5)),
    "unary": (S.sqrt(S.abs(X)) + S.tanh(X) * S.sigmoid(X) + S.floor(X) - S.exp(S.negative(X)),
              (3, 4)),
    "fc_no_flatten_no_bias": (S.FullyConnected(X, num_hidden=3, no_bias=True, flatten=False,
                                               name="fc"), (2, 4, 5)),
    "regression_heads": (S.Group([S.LinearRegressionOutput(X, name="lro"),
                                  S.LogisticRegressionOutput(X, name="logro")]), (2, 3)),
}


@pytest.fixture(params=sorted(CASES))
def case(request):
    sym, shape = CASES[request.param]
    args, aux = _models._fill(sym, {"data": shape}, 11)
    x = np.random.RandomState(12).uniform(-1, 1, shape).astype(np.float32)
    return sym, args, aux, {"data": x}


def test_to_torch(case):
    sym, args, aux, inputs = case
    ref = _models.neomx_forward(sym, args, aux, inputs)
    gm = mx.to_torch(sym, args, aux, input_shapes={"data": inputs["data"].shape})
    out = gm(torch.from_numpy(inputs["data"]))
    for got, want in zip(out if isinstance(out, tuple) else [out], ref):
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-4, atol=1e-5)


def test_onnx(case, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    sym, args, aux, inputs = case
    ref = _models.neomx_forward(sym, args, aux, inputs)
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(sym, [args, aux], [inputs["data"].shape], onnx_file_path=path)
    outs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, inputs)
    for got, want in zip(outs, ref):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
