"""SoftmaxOutput's backward is ``softmax - onehot(label)`` with labels out of range changing
nothing; neomx computes it by a comparison (small inputs) or a scatter (large ones): both must
give exactly the bits of that formula."""
import numpy as np
import pytest

import neomx as mx
from neomx.ops import nn as _nn


@pytest.mark.parametrize("shape", [(64, 10), (32, 1000), (300, 300)])
def test_softmax_output_gradient_bits(shape):
    n, k = shape
    assert (n * k <= _nn._SMALL_ONE_HOT) == (shape == (64, 10))  # both formulations are covered
    rng = np.random.RandomState(n + k)
    x = mx.nd.array(rng.randn(n, k).astype(np.float32))
    labels = rng.randint(-2, k + 2, n).astype(np.float32)  # some out of range
    labels[:3] = [0, k - 1, 2.7]  # (2.7 truncates to 2)
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SoftmaxOutput(x, mx.nd.array(labels))
    out.backward()
    prob = out.asnumpy()
    lab = labels.astype(np.int64)
    onehot = np.zeros((n, k), np.float32)
    valid = (lab >= 0) & (lab < k)
    onehot[np.arange(n)[valid], lab[valid]] = 1.0
    want = prob - onehot  # float32 IEEE subtraction, as the kernels
    np.testing.assert_array_equal(x.grad.asnumpy().view(np.uint32), want.view(np.uint32))
