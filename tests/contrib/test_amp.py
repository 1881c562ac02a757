"""mx.contrib.amp against MXNet 1.9.1 (fixtures: tools/make_golden_amp.py -> tests/golden/amp/).

``amp.init()`` patches mx.nd/mx.sym for the whole process, so the tests that call it run in a
child process.
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
GOLDEN = json.load(open(os.path.join(ROOT, "tests", "golden", "amp", "golden.json")))


def _builders():
    src = open(os.path.join(ROOT, "tools", "make_golden_amp.py")).read()
    ns = {"mx": mx}
    exec(src[src.index("def lenet"):src.index("def convert_cases")], ns)  # the same graphs
    return ns


NS = _builders()


@pytest.mark.parametrize("case", sorted(GOLDEN["convert"]))
def test_convert_symbol_json_as_mxnet(case):
    kw = dict(GOLDEN["convert"][case]["kwargs"])
    if "conditional_fp32_ops" in kw:
        kw["conditional_fp32_ops"] = [(a, b, list(c)) for a, b, c in kw["conditional_fp32_ops"]]
    got = amp.convert_symbol(NS["CASES"][case][0](), **kw)
    assert json.loads(got.tojson(remove_amp_cast=False)) == \
        json.loads(GOLDEN["convert"][case]["json"])


def test_convert_model_param_dtypes():
    sym = NS["bnnet"]()
    arg_shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 6, 6))
    args = {n: mx.nd.ones(s) for n, s in zip(sym.list_arguments(), arg_shapes) if n != "data"}
    auxs = {n: mx.nd.ones(s) for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    for opt in (False, True):
        csym, a, x = amp.convert_model(sym, dict(args), dict(auxs), cast_optional_params=opt)
        got = {k: np.dtype(v.dtype).name for k, v in sorted(list(a.items()) + list(x.items()))}
        assert got == GOLDEN["convert_model"][str(opt)]
        ex = csym.bind(mx.cpu(), dict(a, data=mx.nd.ones((2, 3, 6, 6))), aux_states=x,
                       grad_req="null")
        assert all(o.dtype == np.float32 for o in ex.forward())


def test_convert_hybrid_block_close_to_fp32():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3), mx.gluon.nn.BatchNorm(), mx.gluon.nn.Activation("relu"),
            mx.gluon.nn.Dense(5))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 8, 8))
    ref = net(x).asnumpy()
    for opt in (False, True):
        conv = amp.convert_hybrid_block(net, ctx=mx.cpu(), cast_optional_params=opt)
        out = conv(x)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out.asnumpy(), ref, rtol=2e-2, atol=2e-2)


def test_convert_errors_as_mxnet():
    net = NS["lenet"]()
    with pytest.raises(AssertionError, match="Only target_dtype float16 and bfloat16"):
        amp.convert_symbol(net, target_dtype="float64")
    with pytest.raises(AssertionError, match="Ops cannot be in two or more lists"):
        amp.convert_symbol(net, target_dtype_ops=["exp"], fp32_ops=["exp"])
    with pytest.raises(AssertionError, match="Can only choose ops"):
        amp.convert_symbol(net, target_dtype_ops=["not_an_op"])
    with pytest.raises(RuntimeError, match="hybridize"):
        amp.convert_hybrid_block(mx.gluon.nn.Dense(2))
    with pytest.raises(AssertionError, match="AMP not initialized"):
        amp.init_trainer(None)


def test_lists():
    assert "Convolution" in amp.list_lp16_ops("float16")
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert "BatchNorm" in amp.list_lp16_use_fp32_params(amp.amp.bfloat16)
    assert "SoftmaxOutput" in amp.list_loss_output_functions("float16")


class _P:
    def __init__(self, g):
        self._grad = [g]


def test_loss_scaler_backoff_and_growth():
    ls = amp.LossScaler()
    assert ls.loss_scale == 2. ** 16
    good, bad = [_P(mx.nd.ones((3,)))], [_P(mx.nd.array([1., np.inf])), _P(mx.nd.ones((2,)))]
    assert ls.has_overflow(bad)
    assert ls.loss_scale == 2. ** 16          # the halved scale applies from the next step
    assert not ls.has_overflow(good)
    assert ls.loss_scale == 2. ** 15
    ls._scale_seq_len = 3
    for _ in range(2):
        ls.has_overflow(good)
    assert ls.loss_scale == 2. ** 15 and ls._next_loss_scale == 2. ** 16
    ls.has_overflow(good)
    assert ls.loss_scale == 2. ** 16
    ls._loss_scale = ls._next_loss_scale = ls._max_loss_scale
    for _ in range(4):
        ls.has_overflow(good)
    assert ls.loss_scale == 2. ** 24


CHILD = r'''
import json, numpy as np, neomx as mx
from neomx.contrib import amp
amp.init("float16")
x = mx.nd.ones((2, 4)); w = mx.nd.ones((3, 4)); b = mx.nd.ones((3,))
h = mx.nd.ones((2, 3), dtype="float16")
res = {
  "FullyConnected": mx.nd.FullyConnected(x, w, b, num_hidden=3).dtype.__name__,
  "exp_fp16": mx.nd.exp(h).dtype.__name__,
  "relu_fp16": mx.nd.relu(h).dtype.__name__,
  "softrelu_fp16": mx.nd.Activation(h, act_type="softrelu").dtype.__name__,
  "relu_act_fp16": mx.nd.Activation(h, act_type="relu").dtype.__name__,
  "add_mixed": mx.nd.elemwise_add(h, mx.nd.ones((2, 3))).dtype.__name__,
  "badd_fp16": mx.nd.broadcast_add(h, h).dtype.__name__,
  "sum_fp16": mx.nd.sum(h).dtype.__name__,
}
res["sym_fc"] = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc").tojson(remove_amp_cast=False)
res["sym_exp"] = mx.sym.exp(mx.sym.Variable("data"), name="e").tojson(remove_amp_cast=False)
mx.random.seed(0)
net = mx.gluon.nn.Dense(1)
net.initialize(mx.init.Xavier())
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
amp.init_trainer(trainer)
X = mx.nd.random.uniform(shape=(32, 4)); Y = mx.nd.dot(X, mx.nd.array([[1.], [2.], [3.], [4.]]))
loss_fn = mx.gluon.loss.L2Loss()
losses = []
for _ in range(30):
    with mx.autograd.record():
        loss = loss_fn(net(X).astype("float32"), Y)
        with amp.scale_loss(loss, trainer) as scaled:
            mx.autograd.backward(scaled)
    trainer.step(32)
    losses.append(float(loss.mean().asscalar()))
res["losses"] = losses
res["scale"] = trainer._amp_loss_scaler.loss_scale
print(json.dumps(res))
'''


def test_init_and_training_loop():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    want = GOLDEN["imperative"]
    for key in ("FullyConnected", "exp_fp16", "relu_fp16", "softrelu_fp16", "relu_act_fp16",
                "add_mixed", "badd_fp16", "sum_fp16"):
        assert res[key] == want[key], key
    for key in ("sym_fc", "sym_exp"):
        assert json.loads(res[key]) == json.loads(want[key]), key
    losses = res["losses"]
    assert all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0]
