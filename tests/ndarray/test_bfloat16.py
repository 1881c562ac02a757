"""bfloat16 as MXNet 1.9.1 exposes it (fixtures: tools/make_golden_bf16.py -> tests/golden/amp/).

MXNet stands in the structured numpy dtype ``[('bfloat16', '<u2')]`` for bfloat16: an NDArray's
``.dtype``, ``asnumpy()`` (the raw bits), type code 12 in saved files and symbol JSON. neomx
computes it as ``torch.bfloat16``. Conversions to bfloat16 are compared bit for bit: ``Cast``
and ``astype`` truncate (mshadow's conversion), ``amp_cast`` from float32 rounds to nearest even
and flushes denormals (MKL-DNN's reorder).
"""
import json
import math
import os

import numpy as np
import pytest

import neomx as mx

from ._bf16_records import BF, bits, floats, name

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "amp")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "bf16.json")))
CONV = GOLDEN["conversions"]


def values():
    return mx.nd.array(np.array([float(v) for v in CONV["values"]], dtype=np.float32))


def test_dtype_is_mxnets_structured_stand_in():
    b = values().astype(BF)
    assert repr(b.dtype) == CONV["dtype"] and b.dtype == BF
    assert repr(b.asnumpy().dtype) == CONV["asnumpy_dtype"]
    assert repr(mx.nd.array([1.5, 2.25, -3.3]).astype(BF)) == CONV["repr"]
    assert mx.base.dtype_code(BF) == 12 and mx.base.dtype_from_code(12) == BF
    assert mx.nd.zeros((2,), dtype="bfloat16").dtype == BF  # (neomx also takes the string)


@pytest.mark.parametrize("how", ["astype", "Cast", "amp_cast"])
def test_conversion_bits_from_float32(how):
    x = values()
    got = {"astype": lambda: x.astype(BF), "Cast": lambda: mx.nd.Cast(x, dtype=BF),
           "amp_cast": lambda: mx.nd.amp_cast(x, dtype=BF)}[how]()
    assert got.dtype == BF
    assert bits(got) == CONV[how]


def test_conversion_bits_from_other_types():
    x = values()
    assert bits(mx.nd.Cast(x.astype("float16"), dtype=BF)) == CONV["Cast_from_float16"]
    assert bits(mx.nd.Cast(x.astype("float64"), dtype=BF)) == CONV["Cast_from_float64"]
    ints = mx.nd.array([257, 258, 259, 1000001], dtype="int32")
    assert bits(mx.nd.Cast(ints, dtype=BF)) == CONV["Cast_from_int32"]
    assert {src: name(mx.nd.amp_cast(x.astype(src), dtype=BF).dtype)
            for src in ("float16", "float64", "int32")} == CONV["amp_cast_dtypes"]


def test_conversion_from_bfloat16():
    b = values().astype(BF)
    assert floats(b.astype("float32")) == CONV["to_float32"]
    assert floats(b.astype("float16")) == CONV["to_float16"]
    assert floats(mx.nd.amp_cast(b, dtype="float32")) == CONV["amp_cast_to_float32"]


def test_creation():
    assert bits(mx.nd.array([1.5, 2.25, 3.3], dtype=BF)) == CONV["array_list"]  # numpy's cast
    assert floats(mx.nd.array(np.array([(16320,)], dtype=BF))) == CONV["array_structured"]
    assert bits(mx.nd.zeros((2,), dtype=BF)) == CONV["zeros"]
    assert bits(mx.nd.ones((2,), dtype=BF)) == CONV["ones"]
    assert bits(mx.nd.one_hot(mx.nd.array([0, 2]), depth=3, dtype=BF)) == CONV["one_hot"]
    assert bits(mx.nd.arange(0, 3, dtype=BF)) == CONV["arange"]
    a = mx.nd.zeros((2,), dtype=BF)
    a[:] = np.array([(16320,), (16400,)], dtype=BF)  # the raw bits
    assert bits(a) == [16320, 16400]


def test_assignment_converts_with_numpy_as_mxnet():
    got = {}
    a = mx.nd.zeros((2,), dtype=BF)
    for k, v in (("numpy", np.array([1.5, 2.5])), ("list", [3.5, 4.5]), ("scalar", 1.5),
                 ("ndarray", mx.nd.array([1.5, 2.5]))):
        a[:] = v
        got[k] = bits(a)
    f = mx.nd.zeros((2,))
    f[:] = np.array([(16320,), (16400,)], dtype=BF)
    got["float32_from_structured"] = floats(f)
    assert got == CONV["assign"]


def test_amp_multicast_types():
    got = {}
    for key in CONV["amp_multicast"]:
        a, b, narrow = key.split(",")
        arrs = [mx.nd.ones((2,), dtype=BF if t == "bfloat16" else t) for t in (a, b)]
        r = mx.nd.amp_multicast(*arrs, num_outputs=2, cast_narrow=narrow == "True")
        got[key] = [name(t.dtype) for t in r]
    assert got == CONV["amp_multicast"]


def test_arithmetic_close_to_mxnet():
    # MXNet's bfloat16 arithmetic truncates its float32 results, torch's rounds: within one ulp
    e = mx.nd.exp(mx.nd.array([0.5, 1.0, 2.25]).astype(BF)).astype("float32").asnumpy()
    np.testing.assert_allclose(e, [float(v) for v in CONV["exp_float32"]], rtol=2 ** -7)
    fc = mx.nd.FullyConnected(
        mx.nd.array([[0.5, -1.25, 2.0]]).astype(BF),
        mx.nd.array([[1.5, 0.25, -0.75], [2.0, 1.0, 0.5]]).astype(BF),
        mx.nd.array([0.125, -0.5]).astype(BF), num_hidden=2)
    assert fc.dtype == BF
    np.testing.assert_allclose(fc.astype("float32").asnumpy().reshape(-1),
                               [float(v) for v in CONV["fc_float32"]], rtol=2 ** -7)


def test_mixed_types_error():
    with pytest.raises(mx.base.MXNetError, match="expected bfloat16, got float32"):
        (mx.nd.array([1.0]).astype(BF) + mx.nd.array([1.0])).wait_to_read()


def test_save_is_byte_identical_and_loads(tmp_path):
    vals = np.array([float(v) for v in CONV["values"]], dtype=np.float32)
    arrs = {"a": mx.nd.array(vals).astype(BF),
            "m": mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3) / 7).astype(BF)}
    path = str(tmp_path / "x.params")
    mx.nd.save(path, arrs)
    golden = os.path.join(GOLDEN_DIR, "bf16.params")
    assert open(path, "rb").read() == open(golden, "rb").read()
    loaded = mx.nd.load(golden)
    assert {k: bits(v) for k, v in loaded.items()} == GOLDEN["saved"]
    assert all(v.dtype == BF for v in loaded.values())


def test_symbol_json_and_type_inference():
    sym = GOLDEN["symbols"]
    y = mx.sym.Variable("y", dtype=BF)
    w = mx.sym.Variable("w")
    assert json.loads(y.tojson()) == sym["variable_json"]
    assert json.loads(mx.sym.amp_cast(w, dtype=BF, name="c").tojson()) == sym["amp_cast_json"]
    graphs = {
        "exp": mx.sym.exp(y), "FullyConnected": mx.sym.FullyConnected(y, num_hidden=3),
        "Convolution": mx.sym.Convolution(y, kernel=(3, 3), num_filter=2),
        "BatchNorm": mx.sym.BatchNorm(y), "Activation": mx.sym.Activation(y, act_type="relu"),
        "Pooling": mx.sym.Pooling(y, kernel=(2, 2)), "softmax": mx.sym.softmax(y),
        "LayerNorm": mx.sym.LayerNorm(y),
        "elemwise_add": mx.sym.elemwise_add(y, mx.sym.Variable("z")),
        "Cast": mx.sym.Cast(w, dtype=BF), "amp_cast": mx.sym.amp_cast(w, dtype=BF),
        "amp_multicast": mx.sym.amp_multicast(y, w, num_outputs=2),
    }
    for k, s in graphs.items():
        arg, out, aux = s.infer_type_partial(w=np.float32) if "w" in s.list_arguments() \
            else s.infer_type_partial()
        got = {"args": [name(t) if t is not None else None for t in arg],
               "outs": [name(t) if t is not None else None for t in out],
               "aux": [name(t) if t is not None else None for t in aux]}
        assert got == sym["infer_type"][k], k
    # a loaded JSON with bfloat16 dtypes binds and runs
    s = mx.sym.load_json(mx.sym.exp(mx.sym.amp_cast(w, dtype=BF)).tojson(remove_amp_cast=False))
    ex = s.bind(mx.cpu(), {"w": mx.nd.array([0.5, 1.0])}, grad_req="null")
    out = ex.forward()[0]
    assert out.dtype == BF
    np.testing.assert_allclose(out.astype("float32").asnumpy(), np.exp([0.5, 1.0]), rtol=2 ** -7)


def test_gluon_cast_bfloat16_and_autograd():
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.linspace(-1, 1, 8).reshape(2, 4))
    ref = net(x).asnumpy()
    net.cast(BF)
    assert all(p.data().dtype == BF for p in net.collect_params().values())
    xb = x.astype(BF)
    xb.attach_grad()
    with mx.autograd.record():
        y = net(xb)
    y.backward()
    assert y.dtype == BF and xb.grad.dtype == BF
    np.testing.assert_allclose(y.astype("float32").asnumpy(), ref, rtol=3e-2, atol=3e-2)
    assert math.isfinite(float(xb.grad.astype("float32").asnumpy().sum()))
