"""INT8 quantization operators against MXNet 1.9.1 (CPU, MKLDNN) golden records.

Records: ``tests/golden/quantization/ops.{json,npz}`` from ``tools/make_golden_quantization.py``.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "quantization"
CASES = json.loads((GOLDEN / "ops.json").read_text())
ARRAYS = np.load(GOLDEN / "ops.npz")


def _inputs(case):
    return [mx.nd.array(ARRAYS["%s__in%d" % (case["name"], i)], dtype=case["in_types"][i])
            for i in range(case["n_in"])]


def _run(case, symbolic):
    ins = _inputs(case)
    if symbolic:
        names = ["in%d" % i for i in range(len(ins))]
        s = getattr(mx.sym.contrib, case["op"])(*[mx.sym.var(n) for n in names], **case["params"])
        ex = s.bind(mx.cpu(), dict(zip(names, ins)))
        return [o.asnumpy() for o in ex.forward()]
    outs = getattr(mx.nd.contrib, case["op"])(*ins, **case["params"])
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    return [o.asnumpy() for o in outs]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("symbolic", [False, True], ids=["nd", "sym"])
def test_op_matches_mxnet(case, symbolic):
    outs = _run(case, symbolic)
    assert len(outs) == len(case["out_types"])
    for i, got in enumerate(outs):
        want = ARRAYS["%s__out%d" % (case["name"], i)]
        assert got.dtype == want.dtype, (i, got.dtype, want.dtype)
        assert got.shape == want.shape, (i, got.shape, want.shape)
        if case["op"] == "calibrate_entropy" and i == 1:  # the divergence: float32 sums
            np.testing.assert_allclose(got, want, rtol=1e-5)
        elif case["name"] == "batch_norm_uint8" and i == 0:
            # (oneDNN's uint8 batch norm scaling is not reproduced exactly: within one step)
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
        else:
            np.testing.assert_array_equal(got, want, err_msg="output %d" % i)


def test_symbolic_inference_types_and_shapes():
    d, w, b = mx.sym.var("d"), mx.sym.var("w"), mx.sym.var("b")
    r = [mx.sym.var(n) for n in ("r0", "r1", "r2", "r3", "r4", "r5")]
    fc = mx.sym.contrib.quantized_fully_connected(d, w, b, *r, num_hidden=5)
    assert fc.list_arguments() == ["d", "w", "b", "r0", "r1", "r2", "r3", "r4", "r5"]
    assert fc.list_outputs() == [fc.name + s for s in ("_output", "_min_output", "_max_output")]
    arg, out, _ = fc.infer_shape(d=(4, 2, 3))
    assert arg == [(4, 2, 3), (5, 6), (5,)] + [(1,)] * 6
    assert out == [(4, 5), (1,), (1,)]
    arg_t, out_t, _ = fc.infer_type(d=np.int8)
    assert arg_t == [np.int8, np.int8, np.int8] + [np.float32] * 6
    assert out_t == [np.int32, np.float32, np.float32]
    q = mx.sym.contrib.quantize_v2(d, out_type="auto", min_calib_range=0.0, max_calib_range=1.0)
    assert q.infer_type(d=np.float32)[1] == [np.uint8, np.float32, np.float32]
    rq = mx.sym.contrib.requantize(d, r[0], r[1], min_calib_range=-1.0, max_calib_range=1.0)
    assert rq.infer_type(d=np.int32)[1] == [np.int8, np.float32, np.float32]
    conv = mx.sym.contrib.quantized_conv(d, w, *r[:4], kernel=(3, 3), num_filter=2, no_bias=True)
    arg, out, _ = conv.infer_shape(d=(1, 3, 8, 8))
    assert arg[1] == (2, 3, 3, 3) and out == [(1, 2, 6, 6), (1,), (1,)]
    pool = mx.sym.contrib.quantized_pooling(d, r[0], r[1], kernel=(2, 2), stride=(2, 2))
    assert pool.infer_shape(d=(1, 3, 8, 8))[1][0] == (1, 3, 4, 4)
    cat = mx.sym.contrib.quantized_concat(d, w, *r[:4], num_args=2, dim=1)
    assert cat.infer_shape(d=(2, 3), w=(2, 4))[1][0] == (2, 7)
    assert cat.infer_type(d=np.uint8, w=np.uint8)[1][0] == np.uint8
    assert cat.infer_type(d=np.uint8, w=np.int8)[1][0] == np.int8


def test_requantize_without_calibration_uses_actual_range():
    # (oneDNN's path negates the range here; neomx rescales by the data's actual range)
    x = mx.nd.array([-2 ** 30, 0, 2 ** 29], dtype="int32")
    q, lo, hi = mx.nd.contrib.requantize(x, mx.nd.array([-4.0]), mx.nd.array([4.0]))
    assert q.dtype == np.int8
    assert q.asnumpy().tolist() == [-127, 0, 64]
    assert lo.asscalar() == pytest.approx(-2.0) and hi.asscalar() == pytest.approx(2.0)


def test_quantized_act_uint8_and_quantize_asym():
    u = mx.nd.array([0, 7, 255], dtype="uint8")
    r = [mx.nd.array([0.0]), mx.nd.array([1.0])]
    y, lo, hi = mx.nd.contrib.quantized_act(u, *r, act_type="relu")
    assert y.dtype == np.uint8 and y.asnumpy().tolist() == [0, 7, 255]
    q, scale, shift = mx.nd.contrib.quantize_asym(mx.nd.array([-1.0, 0.0, 0.5, 1.0]))
    assert q.dtype == np.uint8
    assert q.asnumpy().tolist() == [0, 128, 191, 255]
    assert scale.asscalar() == 127.5 and shift.asscalar() == 127.5


def test_quantize_roundtrip_within_one_step():
    x = np.random.RandomState(3).uniform(-2, 2, (50,)).astype(np.float32)
    q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array(x))
    back = mx.nd.contrib.dequantize(q, lo, hi).asnumpy()
    assert np.abs(back - x).max() <= 2.0 / 127.5 * 0.5 + 1e-6


@pytest.mark.parametrize("call, fragment", [
    (lambda: mx.nd.contrib.quantize_v2(mx.nd.array([1.0]), out_type="int4"), "valid values"),
    (lambda: mx.nd.contrib.dequantize(mx.nd.array([1.0]), mx.nd.array([0.0]), mx.nd.array([1.0])),
     "either uint8 or int8"),
    (lambda: mx.nd.contrib.dequantize(mx.nd.array([1], dtype="int32"), mx.nd.array([0.0]),
                                      mx.nd.array([1.0])), "either uint8 or int8"),
    (lambda: mx.nd.contrib.requantize(mx.nd.array([1], dtype="int8"), mx.nd.array([0.0]),
                                      mx.nd.array([1.0])),
     "Type inconsistent, Provided = int8, inferred type = int32"),
    (lambda: mx.nd.contrib.quantized_fully_connected(
        mx.nd.array([[1.0]]), mx.nd.array([[1]], dtype="int8"), mx.nd.array([0.0]),
        mx.nd.array([1.0]),
        mx.nd.array([0.0]), mx.nd.array([1.0]), num_hidden=1, no_bias=True),
     "QuantizedFullyConnected only supports int8/uint8 input, while 0 is given"),
    (lambda: mx.nd.contrib.quantized_elemwise_add(
        mx.nd.array([1, 2], dtype="int8"), mx.nd.array([1], dtype="int8"),
        *[mx.nd.array([0.0]), mx.nd.array([1.0])] * 2), r"\(\[2\] vs. \[1\]\)"),
    (lambda: mx.nd.contrib.quantized_act(mx.nd.array([1], dtype="int8"), mx.nd.array([0.0]),
                                         mx.nd.array([1.0]), act_type="tanh"),
     "only supports act_type=relu"),
    (lambda: mx.nd.contrib.quantized_pooling(mx.nd.array([[[[1]]]], dtype="int8"),
                                             mx.nd.array([0.0]), mx.nd.array([1.0]),
                                             kernel=(1, 1), pool_type="sum"),
     "max/avg"),
    (lambda: mx.nd.contrib.quantized_batch_norm(
        mx.nd.array([[[[1]]]], dtype="int8"), *[mx.nd.ones((1,))] * 4, mx.nd.array([0.0]),
        mx.nd.array([1.0])), "min_calib_range or max_calib_range is not available"),
    (lambda: mx.nd.contrib.calibrate_entropy(mx.nd.ones((4,)), mx.nd.ones((5,))), "odd"),
])
def test_errors(call, fragment):
    with pytest.raises(MXNetError, match=fragment):
        out = call()
        mx.nd.waitall()
        if isinstance(out, (list, tuple)):
            [o.asnumpy() for o in out]
        else:
            out.asnumpy()
