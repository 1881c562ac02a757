"""Producer + activation fusion in the executor's plans (neomx/ops/fused_kernels.py): a
Convolution or FullyConnected read only by a relu/sigmoid/tanh Activation runs as one oneDNN
kernel; the results and gradients are those of the separate operators (to a few ulps: oneDNN's
tanh/sigmoid and GEMM sum in their own order; a fused convolution + relu gives the same bits)."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx
from neomx.graph import plan as _plan
from neomx.ops import fused_kernels

from .test_memory_plan import convnet, run

pytestmark = pytest.mark.skipif(not fused_kernels.AVAILABLE,
                                reason="this torch build has no oneDNN post-op kernels")


def _fused_lines(ex):
    return [line for line in ex.debug_str().splitlines() if "(fused" in line]


@pytest.mark.parametrize("act", ["tanh", "relu", "sigmoid"])
def test_fused_plan_gives_the_separate_results(act, monkeypatch):
    ex, outs, grads = run(convnet(act))
    fused = _fused_lines(ex)
    # c1+a1, c2+a2 and f1+a3 (all read only by their activation); f2 feeds SoftmaxOutput
    assert [line.split("# ")[1].split(" (")[0] for line in fused] == \
        ["c1 + a1", "c2 + a2", "f1 + a3"], ex.debug_str()
    monkeypatch.setitem(_plan.FUSE, "enabled", False)
    ex0, outs0, grads0 = run(convnet(act))
    assert not _fused_lines(ex0)
    for a, b in zip(outs, outs0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for k in grads:
        np.testing.assert_allclose(grads[k], grads0[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_fused_convolution_relu_is_bit_identical(monkeypatch):
    with mx.name.NameManager():
        x = mx.sym.Variable("data")
        y = mx.sym.Activation(mx.sym.Convolution(x, kernel=(3, 3), num_filter=16, pad=(1, 1),
                                                 name="c"), act_type="relu", name="r")
        net = mx.sym.Activation(mx.sym.Convolution(y, kernel=(3, 3), num_filter=8, name="c2"),
                                act_type="relu", name="r2")
    rng = np.random.RandomState(3)
    vals = {"data": rng.uniform(-1, 1, (4, 3, 12, 12)), "c_weight": rng.uniform(-1, 1, (16, 3, 3, 3)),
            "c_bias": rng.uniform(-1, 1, (16,)), "c2_weight": rng.uniform(-1, 1, (8, 16, 3, 3)),
            "c2_bias": rng.uniform(-1, 1, (8,))}

    def forward():
        ex = net.simple_bind(mx.cpu(), grad_req="null", data=(4, 3, 12, 12))
        for k, v in vals.items():
            ex.arg_dict[k][:] = v
        return ex, ex.forward(is_train=False)[0].asnumpy()
    ex, got = forward()
    assert len(_fused_lines(ex)) == 2
    monkeypatch.setitem(_plan.FUSE, "enabled", False)
    _, want = forward()
    np.testing.assert_array_equal(got, want)


def test_values_read_elsewhere_or_needed_by_backward_are_not_fused():
    """The convolution's output is also read by another operator; the softrelu's backward
    needs its input (and softrelu has no post-op): nothing fuses."""
    with mx.name.NameManager():
        x = mx.sym.Variable("data")
        c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c")
        a = mx.sym.Activation(c, act_type="relu", name="a")
        s = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=3, name="f"),
                              act_type="softrelu", name="s")
        net = mx.sym.Group([a + c, s])
    ex = net.simple_bind(mx.cpu(), data=(2, 2, 5, 5))
    rng = np.random.RandomState(0)
    for k, arr in ex.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
    ex.forward(is_train=True)
    assert not _fused_lines(ex), ex.debug_str()
    conv = mx.nd.Convolution(ex.arg_dict["data"], ex.arg_dict["c_weight"], ex.arg_dict["c_bias"],
                             kernel=(3, 3), num_filter=4).asnumpy()
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), np.maximum(conv, 0) + conv, rtol=1e-6)


def test_other_dtypes_run_the_separate_operators():
    """A float64 graph has a fused plan but runs each operator's own kernel (oneDNN's post-op
    kernels take float32 only): the values are float64 ones."""
    with mx.name.NameManager():
        x = mx.sym.Variable("data")
        net = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=3, name="f"),
                                act_type="tanh", name="t")
    ex = net.simple_bind(mx.cpu(), grad_req="null", type_dict={"data": np.float64}, data=(2, 4))
    rng = np.random.RandomState(0)
    for k, arr in ex.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
    assert len(_fused_lines(ex)) == 1
    out = ex.forward()[0]
    assert out.dtype == np.float64
    a = {k: v.asnumpy() for k, v in ex.arg_dict.items()}
    want = np.tanh(a["data"] @ a["f_weight"].T + a["f_bias"])
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-12)
