"""Networks and data shared by the Module tests."""
from __future__ import annotations

import pathlib

import numpy as np

import neomx as mx
from examples import mixed_programming

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "module"


def mlp(num_hidden=8, num_classes=3):
    """fc1 -> relu -> fc2 -> SoftmaxOutput('softmax')."""
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=num_hidden)
    act = mx.sym.Activation(fc1, name="relu1", act_type="relu")
    fc2 = mx.sym.FullyConnected(act, name="fc2", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def lenet():
    """The seed tutorial's LeNet (examples/mixed_programming.py), built with fresh names."""
    with mx.name.NameManager():
        return mixed_programming.lenet()


def blobs(n, d=5, k=3, seed=0):
    """``n`` float32 examples of ``d`` features in ``k`` separable clusters, float32 labels."""
    rng = np.random.RandomState(seed)
    centers = rng.randn(k, d) * 3
    y = rng.randint(0, k, n)
    x = centers[y] + rng.randn(n, d) * 0.5
    return x.astype(np.float32), y.astype(np.float32)


def fixed_params(sym, data_shape, seed=1, scale=0.3, **shapes):
    """Deterministic arg params (no RNG of neomx involved) for every non-input argument."""
    rng = np.random.RandomState(seed)
    arg_shapes, _, _ = sym.infer_shape(data=data_shape, **shapes)
    inputs = {"data"} | set(shapes) | {n for n in sym.list_arguments() if n.endswith("label")}
    return {n: mx.nd.array(rng.uniform(-scale, scale, s))
            for n, s in zip(sym.list_arguments(), arg_shapes) if n not in inputs}


def as_numpy(params):
    return {k: v.asnumpy() for k, v in params.items()}


def assert_params_close(a, b, rtol=1e-5, atol=1e-6):
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)
