"""Max pooling runs ATen's channels-last kernel for inputs with many channels (faster on the
CPU): the same maxima, argmax (first maximum on ties) and gradients as the NCHW kernel."""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.ops import conv


@pytest.mark.parametrize("shape", [(4, 16, 9, 9), (3, 8, 12, 12)])
@pytest.mark.parametrize("k,s,pad", [(2, 2, 0), (3, 1, 0), (3, 2, 1)])
def test_channels_last_pooling_equals_nchw(shape, k, s, pad, monkeypatch):
    x = torch.randint(0, 3, shape).float().numpy()  # many ties
    head = np.random.RandomState(0).rand(64).astype(np.float32)
    res = []
    for threshold in (8, 10 ** 9):
        monkeypatch.setattr(conv, "_CL_MIN_CHANNELS", threshold)
        xx = mx.nd.array(x)
        xx.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xx, kernel=(k, k), stride=(s, s), pad=(pad, pad), pool_type="max")
        g = mx.nd.array(np.resize(head, y.shape))
        y.backward(g)
        res.append((y.asnumpy(), xx.grad.asnumpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
