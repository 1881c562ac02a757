"""Golden fixtures for bfloat16 and AMP conformance, from MXNet 1.9.1.

Run with the oracle from the repository root::

    tools/mxnet-oracle tools/make_golden_bf16.py

It writes ``tests/golden/amp/bf16.json`` (and ``tests/golden/amp/bf16.params``, an
``mx.nd.save`` file of bfloat16 arrays): MXNet's bfloat16 stand-in dtype (conversions' raw bits,
``asnumpy``/repr, saved bytes, symbol JSON and type inference), the result dtypes of imperative
calls after ``amp.init('float16')``/``amp.init('bfloat16')`` on CPU (functions, fluent methods,
NDArray arithmetic), ``amp.init`` symbol graphs, and ``convert_model``/``convert_hybrid_block``
with ``target_dtype='bfloat16'`` (parameter dtypes, outputs of a fixed model).
``tests/contrib/test_amp_bf16.py`` and ``tests/ndarray/test_bfloat16.py`` read them.
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np

import mxnet as mx

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "ndarray"))
from _bf16_records import BF, bits, floats, name  # noqa: E402  (shared with the test)
OUT = os.path.join(ROOT, "tests", "golden", "amp")

# float32 values whose bfloat16 conversions differ between truncation and rounding
VALUES = [1.005859375, -1.005859375, 1.0117, 3.3, 1e-40, 3.4e38, float("inf"), float("-inf"),
          float("nan"), 0.0, -0.0, 65504.0, 1.00390625, 1.01171875, -7.1e5]


def conversions():
    x = mx.nd.array(np.array(VALUES, dtype=np.float32))
    b = x.astype(BF)
    res = {
        "values": [repr(v) for v in VALUES],
        "astype": bits(b),
        "Cast": bits(mx.nd.Cast(x, dtype=BF)),
        "amp_cast": bits(mx.nd.amp_cast(x, dtype=BF)),
        "Cast_from_float16": bits(mx.nd.Cast(x.astype("float16"), dtype=BF)),
        "Cast_from_float64": bits(mx.nd.Cast(x.astype("float64"), dtype=BF)),
        "Cast_from_int32": bits(mx.nd.Cast(mx.nd.array([257, 258, 259, 1000001], dtype="int32"),
                                           dtype=BF)),
        "to_float32": floats(b.astype("float32")),
        "to_float16": floats(b.astype("float16")),
        "amp_cast_to_float32": floats(mx.nd.amp_cast(b, dtype="float32")),
        "amp_cast_dtypes": {src: name(mx.nd.amp_cast(x.astype(src), dtype=BF).dtype)
                            for src in ("float16", "float64", "int32")},
        "array_list": bits(mx.nd.array([1.5, 2.25, 3.3], dtype=BF)),
        "array_structured": floats(mx.nd.array(np.array([(16320,)], dtype=BF))),
        "asnumpy_dtype": repr(b.asnumpy().dtype),
        "dtype": repr(b.dtype),
        "repr": repr(mx.nd.array([1.5, 2.25, -3.3]).astype(BF)),
        "zeros": bits(mx.nd.zeros((2,), dtype=BF)), "ones": bits(mx.nd.ones((2,), dtype=BF)),
        "one_hot": bits(mx.nd.one_hot(mx.nd.array([0, 2]), depth=3, dtype=BF)),
        "arange": bits(mx.nd.arange(0, 3, dtype=BF)),
        "exp_float32": floats(mx.nd.exp(mx.nd.array([0.5, 1.0, 2.25]).astype(BF)).astype("float32")),
        "fc_float32": floats(mx.nd.FullyConnected(
            mx.nd.array([[0.5, -1.25, 2.0]]).astype(BF), mx.nd.array([[1.5, 0.25, -0.75],
                                                                      [2.0, 1.0, 0.5]]).astype(BF),
            mx.nd.array([0.125, -0.5]).astype(BF), num_hidden=2).astype("float32")),
    }
    assign = {}
    a = mx.nd.zeros((2,), dtype=BF)
    for k, v in (("numpy", np.array([1.5, 2.5])), ("list", [3.5, 4.5]), ("scalar", 1.5),
                 ("ndarray", mx.nd.array([1.5, 2.5]))):
        a[:] = v  # numpy's cast into the stand-in: numbers become bits
        assign[k] = bits(a)
    f = mx.nd.zeros((2,))
    f[:] = np.array([(16320,), (16400,)], dtype=BF)
    assign["float32_from_structured"] = floats(f)
    res["assign"] = assign
    multicast = {}
    for a, b2 in (("float32", "bfloat16"), ("bfloat16", "float32"), ("float16", "bfloat16"),
                  ("bfloat16", "float16"), ("bfloat16", "bfloat16")):
        for narrow in (False, True):
            arrs = [mx.nd.ones((2,), dtype=BF if t == "bfloat16" else t) for t in (a, b2)]
            r = mx.nd.amp_multicast(*arrs, num_outputs=2, cast_narrow=narrow)
            multicast["%s,%s,%s" % (a, b2, narrow)] = [name(t.dtype) for t in r]
    res["amp_multicast"] = multicast
    try:
        mx.nd.array([1.0]).astype(BF) + mx.nd.array([1.0])
        res["mixed_add_error"] = None
    except mx.base.MXNetError as e:
        res["mixed_add_error"] = str(e).split("\n")[-1] if "\n" in str(e) else str(e)
    return res


def save_file():
    arrs = {"a": mx.nd.array(np.array(VALUES, dtype=np.float32)).astype(BF),
            "m": mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3) / 7).astype(BF)}
    path = os.path.join(OUT, "bf16.params")
    mx.nd.save(path + ".tmp", arrs)
    os.replace(path + ".tmp", path)
    return {k: bits(v) for k, v in arrs.items()}


def symbols():
    y = mx.sym.Variable("y", dtype=BF)
    w = mx.sym.Variable("w")
    res = {"variable_json": json.loads(y.tojson()),
           "amp_cast_json": json.loads(mx.sym.amp_cast(w, dtype=BF, name="c").tojson())}
    graphs = {
        "exp": mx.sym.exp(y),
        "FullyConnected": mx.sym.FullyConnected(y, num_hidden=3),
        "Convolution": mx.sym.Convolution(y, kernel=(3, 3), num_filter=2),
        "BatchNorm": mx.sym.BatchNorm(y),
        "Activation": mx.sym.Activation(y, act_type="relu"),
        "Pooling": mx.sym.Pooling(y, kernel=(2, 2)),
        "softmax": mx.sym.softmax(y),
        "LayerNorm": mx.sym.LayerNorm(y),
        "elemwise_add": mx.sym.elemwise_add(y, mx.sym.Variable("z")),
        "Cast": mx.sym.Cast(w, dtype=BF),
        "amp_cast": mx.sym.amp_cast(w, dtype=BF),
        "amp_multicast": mx.sym.amp_multicast(y, w, num_outputs=2),
    }
    types = {}
    for k, s in graphs.items():
        try:
            arg, out, aux = s.infer_type_partial(w=np.float32) if "w" in s.list_arguments() \
                else s.infer_type_partial()
            types[k] = {"args": [name(t) if t is not None else None for t in arg],
                        "outs": [name(t) if t is not None else None for t in out],
                        "aux": [name(t) if t is not None else None for t in aux]}
        except mx.base.MXNetError as e:
            types[k] = "error"
    res["infer_type"] = types
    return res


IMPERATIVE = r'''
import json, sys, warnings, numpy as np
import mxnet as mx
from mxnet.contrib import amp
warnings.filterwarnings("ignore")
target = sys.argv[1]
BF = np.dtype([("bfloat16", np.uint16)])
amp.init(target)
def nm(d):
    d = np.dtype(d); return d.names[0] if d.names else d.name
x = mx.nd.ones((2, 4)); w = mx.nd.ones((3, 4)); b = mx.nd.ones((3,))
low = mx.nd.ones((2, 4), dtype=BF if target == "bfloat16" else "float16")
CASES
res = {}
for k, f in cases.items():
    try:
        r = f()
        r.wait_to_read()
        res[k] = nm(r.dtype)
    except Exception as e:
        res[k] = "error"
A, B = mx.sym.Variable("a"), mx.sym.Variable("b")
s = {"fc": lambda: mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc"),
     "exp": lambda: mx.sym.exp(mx.sym.Variable("data"), name="e"),
     "badd": lambda: mx.sym.broadcast_add(A, B, name="ba"),
     "bn": lambda: mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn"),
     "sum": lambda: mx.sym.sum(mx.sym.Variable("data"), name="s"),
     "softrelu": lambda: mx.sym.Activation(mx.sym.Variable("data"), act_type="softrelu",
                                           name="sr"),
     "plus": lambda: A + B, "mul": lambda: A * B, "plus_scalar": lambda: A + 1,
     "neg": lambda: -A, "gemm2": lambda: mx.sym.linalg.gemm2(A, B, name="g"),
     "div_sqrt_dim": lambda: mx.sym.contrib.div_sqrt_dim(A, name="d"),
     "sum_method": lambda: A.sum(), "exp_method": lambda: A.exp(),
     "flatten_method": lambda: A.flatten(),
     "op_fc": lambda: mx.sym.op.FullyConnected(A, num_hidden=2, name="fc2"),
     "concat": lambda: mx.sym.concat(A, B, name="cc")}
res["symbols"] = {k: json.loads(s[k]().tojson(remove_amp_cast=False)) for k in s}
print(json.dumps(res))
'''

# name -> expression (x, w, b: float32; low: the target dtype), shared with the tests
CASES = r'''
def _iadd(a, b):
    a += b  # MXNet's wrapper casts ``out`` too: a new array comes back
    return a


cases = {
 "iadd_low_f32": lambda: _iadd(low.copy(), x),
 "iadd_scalar_low": lambda: _iadd(low.copy(), 1),
 "iadd_f32_scalar": lambda: _iadd(x.copy(), 1),
 "fc_out_f32": lambda: mx.nd.FullyConnected(x, w, b, num_hidden=3, out=mx.nd.zeros((2, 3))),
 "rpow_low": lambda: 2 ** low,
 "T_low": lambda: low.T, "transpose_low": lambda: low.transpose(),
 "broadcast_to_low": lambda: low.reshape((1, 2, 4)).broadcast_to((3, 2, 4)),
 "split_v2_low": lambda: mx.nd.split_v2(low, 2, axis=1)[0],
 "slice_method_low": lambda: low.slice(begin=(0, 0), end=(1, 2)),
 "slice_axis_low": lambda: low.slice_axis(axis=0, begin=0, end=1),
 "eq_scalar_low": lambda: low == 1, "equal_fn_low": lambda: mx.nd.equal(low, 1),
 "zeros_like_method_low": lambda: low.zeros_like(), "zeros_like_low": lambda: mx.nd.zeros_like(low),
 "ones_like_low": lambda: mx.nd.ones_like(low), "expand_dims_low": lambda: low.expand_dims(0),
 "copy_low": lambda: low.copy(), "abs_low": lambda: abs(low), "tile_low": lambda: low.tile((2, 1)),
 "clip_low": lambda: low.clip(0, 1), "max_method_low": lambda: low.max(),
 "onehot_encode_low": lambda: mx.nd.onehot_encode(mx.nd.array([0, 1]), mx.nd.zeros((2, 3), dtype=low.dtype)),
 "swapaxes_low": lambda: low.swapaxes(0, 1), "sqrt_method_low": lambda: low.sqrt(),
 "fc_f32": lambda: mx.nd.FullyConnected(x, w, b, num_hidden=3),
 "fc_op_f32": lambda: mx.nd.op.FullyConnected(x, w, b, num_hidden=3),
 "fc_low": lambda: mx.nd.FullyConnected(low, w, b, num_hidden=3),
 "conv_f32": lambda: mx.nd.Convolution(mx.nd.ones((1, 2, 4, 4)), mx.nd.ones((3, 2, 3, 3)),
                                       mx.nd.ones((3,)), kernel=(3, 3), num_filter=3),
 "add_f32_f32": lambda: x + x,
 "add_low_f32": lambda: low + x,
 "add_f32_low": lambda: x + low,
 "mul_low_f32": lambda: low * x,
 "sub_low_f32": lambda: low - x,
 "div_low_f32": lambda: low / x,
 "add_low_low": lambda: low + low,
 "add_scalar_low": lambda: low + 1,
 "rsub_scalar_low": lambda: 1 - low,
 "mul_scalar_low": lambda: low * 2,
 "neg_low": lambda: -low,
 "square_low": lambda: low ** 2,
 "gt_low_f32": lambda: low > x,
 "sum_low": lambda: low.sum(),
 "sum_nd_low": lambda: mx.nd.sum(low),
 "mean_low": lambda: low.mean(),
 "exp_low": lambda: low.exp(),
 "exp_nd_low": lambda: mx.nd.exp(low),
 "softmax_low": lambda: low.softmax(),
 "softmax_nd_low": lambda: mx.nd.softmax(low),
 "relu_nd_f32": lambda: mx.nd.relu(x),
 "relu_nd_low": lambda: mx.nd.relu(low),
 "act_relu_f32": lambda: mx.nd.Activation(x, act_type="relu"),
 "act_softrelu_low": lambda: mx.nd.Activation(low, act_type="softrelu"),
 "dot_f32": lambda: mx.nd.dot(x, w.T),
 "batch_dot_f32": lambda: mx.nd.batch_dot(mx.nd.ones((2, 2, 2)), mx.nd.ones((2, 2, 2))),
 "linalg_gemm2_f32": lambda: mx.nd.linalg.gemm2(x, w.T),
 "badd_low_f32": lambda: mx.nd.broadcast_add(low, x),
 "eadd_low_f32": lambda: mx.nd.elemwise_add(low, x),
 "add_fn_low_f32": lambda: mx.nd.add(low, x),
 "max_low_f32": lambda: mx.nd.maximum(low, x),
 "where_f32": lambda: mx.nd.where(x, x, low),
 "norm_low": lambda: mx.nd.norm(low),
 "log_softmax_f32": lambda: mx.nd.log_softmax(x),
 "contrib_div_sqrt_dim_low": lambda: mx.nd.contrib.div_sqrt_dim(low),
 "bn_f32": lambda: mx.nd.BatchNorm(mx.nd.ones((2, 3, 2, 2)), mx.nd.ones((3,)), mx.nd.ones((3,)),
                                   mx.nd.ones((3,)), mx.nd.ones((3,))),
 "pool_f32": lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2)),
 "astype_f32": lambda: x.astype("float16"),
 "slice_low": lambda: low[0],
 "flatten_low": lambda: low.flatten(),
 "reshape_low": lambda: low.reshape((4, 2)),
}
'''


def imperative(target):
    code = IMPERATIVE.replace("CASES", CASES)
    out = subprocess.check_output([sys.executable, "-c", code, target])
    return json.loads(out.decode().strip().splitlines()[-1])


def fixed_net(mx_):
    """A small Conv-BN-relu-Dense HybridBlock with deterministic weights (both libraries)."""
    net = mx_.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx_.gluon.nn.Conv2D(4, 3, prefix="conv_"), mx_.gluon.nn.BatchNorm(prefix="bn_"),
                mx_.gluon.nn.Activation("relu"), mx_.gluon.nn.Dense(5, prefix="fc_"))
    net.initialize()
    net(mx_.nd.ones((2, 3, 8, 8)))
    for i, (k, p) in enumerate(sorted(net.collect_params().items())):
        n = int(np.prod(p.shape))
        v = np.sin(np.arange(n, dtype=np.float64) * 0.37 + i).reshape(p.shape) * 0.5
        if k.endswith("running_var"):
            v = np.abs(v) + 0.5
        p.set_data(mx_.nd.array(v.astype(np.float32)))
    return net


def fixed_input(mx_):
    return mx_.nd.array((np.cos(np.arange(2 * 3 * 8 * 8) * 0.11).reshape(2, 3, 8, 8))
                        .astype(np.float32))


def conversions_of_models():
    from mxnet.contrib import amp
    res = {}
    for opt in (False, True):
        net = fixed_net(mx)
        net.hybridize()
        x = fixed_input(mx)
        ref = net(x)
        conv = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(),
                                        cast_optional_params=opt)
        y = conv(x)
        res["hybrid_bf16_%s" % opt] = {
            "params": {k: name(p.data().dtype) for k, p in conv.collect_params().items()},
            "out_dtype": name(y.dtype), "out": y.asnumpy().tolist(), "ref": ref.asnumpy().tolist()}
        sym = net(mx.sym.var("data"))
        args = {k: p.data() for k, p in net.collect_params().items()
                if not k.endswith(("running_mean", "running_var"))}
        auxs = {k: p.data() for k, p in net.collect_params().items()
                if k.endswith(("running_mean", "running_var"))}
        csym, a, x2 = amp.convert_model(sym, dict(args), dict(auxs), target_dtype="bfloat16",
                                        cast_optional_params=opt)
        ex = csym.bind(mx.cpu(), dict(a, data=x), aux_states=x2, grad_req="null")
        out = ex.forward()[0]
        res["model_bf16_%s" % opt] = {
            "json": json.loads(csym.tojson(remove_amp_cast=False)),
            "params": {k: name(v.dtype) for k, v in sorted(list(a.items()) + list(x2.items()))},
            "param_bits": {k: bits(v) for k, v in a.items() if name(v.dtype) == "bfloat16"},
            "out_dtype": name(out.dtype), "out": out.asnumpy().tolist()}
    return res


def main():
    golden = {"mxnet_version": mx.__version__, "script": "tools/make_golden_bf16.py",
              "imperative_source": IMPERATIVE.replace("CASES", CASES),
              "conversions": conversions(), "saved": save_file(), "symbols": symbols(),
              "imperative": {t: imperative(t) for t in ("float16", "bfloat16")},
              "models": conversions_of_models()}
    path = os.path.join(OUT, "bf16.json")
    with open(path + ".tmp", "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
