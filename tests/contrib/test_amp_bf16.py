"""mx.contrib.amp with bfloat16, and AMP's casts of every imperative call, against MXNet 1.9.1
(fixtures: tools/make_golden_bf16.py -> tests/golden/amp/bf16.json).

``amp.init()`` patches the process, so those tests run in a child process.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import neomx as mx
from neomx.contrib import amp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = json.load(open(os.path.join(ROOT, "tests", "golden", "amp", "bf16.json")))
BF = np.dtype([("bfloat16", np.uint16)])


def name(d):
    d = np.dtype(d)
    return d.names[0] if d.names else d.name


def _builders():
    src = open(os.path.join(ROOT, "tools", "make_golden_bf16.py")).read()
    ns = {"mx": mx, "np": np}
    exec(src[src.index("def fixed_net"):src.index("def conversions_of_models")], ns)
    return ns


NS = _builders()

# the generator's child script, run with neomx (the same calls in the same order: auto-names)
CHILD = GOLDEN["imperative_source"].replace("import mxnet as mx", "import neomx as mx").replace(
    "from mxnet.contrib import amp", "from neomx.contrib import amp")


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_init_casts_every_imperative_call_as_mxnet(target):
    """Functions (mx.nd, mx.nd.op, mx.nd.contrib, mx.nd.linalg), fluent methods and NDArray's
    arithmetic operators all cast as AMP's lists say (on CPU: float32 and bfloat16 inputs)."""
    out = subprocess.run([sys.executable, "-c", CHILD, target], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    want = GOLDEN["imperative"][target]
    for key in sorted(want):
        if key == "symbols":
            for k in want[key]:
                assert got[key][k] == want[key][k], (target, k)
        elif want[key] == "error" and key in ("fc_f32", "fc_op_f32", "fc_low", "fc_out_f32",
                                                 "conv_f32"):
            # MXNet's CPU lacks the float16 kernels (its result's dtype, float16, is set before
            # the kernel fails); neomx computes them
            assert got[key] == "float16", key
        elif want[key] == "error" and (target, key) == ("float16", "onehot_encode_low"):
            # MXNet's _onehot_encode wants out's type to be the indices' (float32) type; neomx's
            # onehot_encode (the one_hot op) fills a float16 out
            assert got[key] == "float16", key
        elif want[key] == "error":
            assert got[key].startswith("error"), key
        else:
            assert got[key] == want[key], (target, key, got[key])


def _model_inputs(opt_net=None):
    net = NS["fixed_net"](mx)
    net.hybridize()
    x = NS["fixed_input"](mx)
    return net, x


@pytest.mark.parametrize("opt", [False, True])
def test_convert_hybrid_block_bfloat16(opt):
    want = GOLDEN["models"]["hybrid_bf16_%s" % opt]
    net, x = _model_inputs()
    ref = net(x)
    np.testing.assert_allclose(ref.asnumpy(), want["ref"], rtol=1e-5, atol=1e-5)
    conv = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(),
                                    cast_optional_params=opt)
    assert {k: name(p.data().dtype) for k, p in conv.collect_params().items()} == want["params"]
    y = conv(x)
    assert name(y.dtype) == want["out_dtype"]
    np.testing.assert_allclose(y.asnumpy(), want["out"], rtol=2e-2, atol=2e-2)


def _unversioned(graph):
    for node in graph["nodes"]:
        node["inputs"] = [e[:2] for e in node["inputs"]]
    return graph


@pytest.mark.parametrize("opt", [False, True])
def test_convert_model_bfloat16(opt):
    want = GOLDEN["models"]["model_bf16_%s" % opt]
    net, x = _model_inputs()
    net(x)
    sym = net(mx.sym.var("data"))
    params = net.collect_params()
    stats = ("running_mean", "running_var")
    args = {k: p.data() for k, p in params.items() if not k.endswith(stats)}
    auxs = {k: p.data() for k, p in params.items() if k.endswith(stats)}
    csym, a, x2 = amp.convert_model(sym, dict(args), dict(auxs), target_dtype="bfloat16",
                                    cast_optional_params=opt)
    # (the aux inputs' entry versions differ: neomx's Gluon symbols count traces otherwise)
    assert _unversioned(json.loads(csym.tojson(remove_amp_cast=False))) == \
        _unversioned(want["json"])
    assert {k: name(v.dtype) for k, v in sorted(list(a.items()) + list(x2.items()))} == \
        want["params"]
    assert {k: v.asnumpy().view(np.uint16).tolist() for k, v in a.items()
            if name(v.dtype) == "bfloat16"} == want["param_bits"]
    ex = csym.bind(mx.cpu(), dict(a, data=x), aux_states=x2, grad_req="null")
    out = ex.forward()[0]
    assert name(out.dtype) == want["out_dtype"]
    np.testing.assert_allclose(out.asnumpy(), want["out"], rtol=2e-2, atol=2e-2)


def test_convert_hybrid_block_float16_cast_optional_params():
    """float16 with cast_optional_params: the Conv/Dense weights and biases are stored in
    float16, BatchNorm's in float32 (as MXNet's; MXNet's CPU then lacks a float16 gemm, neomx
    runs it)."""
    net, x = _model_inputs()
    ref = net(x).asnumpy()
    conv = amp.convert_hybrid_block(net, ctx=mx.cpu(), cast_optional_params=True)
    got = {k: name(p.data().dtype) for k, p in conv.collect_params().items()}
    want = {k: ("float16" if v == "bfloat16" else v)
            for k, v in GOLDEN["models"]["hybrid_bf16_True"]["params"].items()}
    assert got == want
    y = conv(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-2, atol=2e-2)


TRAIN = r'''
import json, numpy as np
import neomx as mx
from neomx.contrib import amp
amp.init("bfloat16")
mx.random.seed(0)
net = mx.gluon.nn.HybridSequential()
net.add(mx.gluon.nn.Dense(8, activation="relu"), mx.gluon.nn.Dense(1))
net.initialize(mx.init.Xavier())
net.hybridize()
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
amp.init_trainer(trainer)
X = mx.nd.array(np.random.RandomState(0).rand(32, 4))
Y = mx.nd.dot(X, mx.nd.array([[1.], [2.], [3.], [4.]]))
loss_fn = mx.gluon.loss.L2Loss()
losses = []
for _ in range(30):
    with mx.autograd.record():
        out = net(X)
        loss = loss_fn(out, Y)
        with amp.scale_loss(loss, trainer) as scaled:
            mx.autograd.backward(scaled)
    trainer.step(32)
    losses.append(float(loss.mean().asscalar()))
nm = lambda d: np.dtype(d).names[0] if np.dtype(d).names else np.dtype(d).name
print(json.dumps({"out": nm(out.dtype), "loss": nm(loss.dtype), "losses": losses,
                  "weight": nm(net[0].weight.data().dtype)}))
'''


def test_bfloat16_training_loop_hybridized():
    """amp.init('bfloat16') + a hybridized Gluon net on CPU: Dense runs in bfloat16 (its output
    is bfloat16, as MXNet's), the loss in float32, parameters stay float32, and it learns."""
    out = subprocess.run([sys.executable, "-c", TRAIN], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert (res["out"], res["loss"], res["weight"]) == ("bfloat16", "float32", "float32")
    assert all(np.isfinite(res["losses"])) and res["losses"][-1] < 0.1 * res["losses"][0]
