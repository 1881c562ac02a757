"""BatchNorm's fused ATen path (channel axis 1, float32/64) against the formula in float64:
output, saved mean and inverse std, and MXNet's moving statistics (biased variance)."""
import numpy as np
import pytest

import neomx as mx


@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 8), (2, 5, 3, 2, 2)])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_training_step_equals_formula(shape, fix_gamma):
    rng = np.random.RandomState(0)
    x = rng.uniform(-2, 3, shape).astype(np.float32)
    c = shape[1]
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.uniform(-1, 1, c).astype(np.float32)
    mm0, mv0 = rng.uniform(-1, 1, c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    mm, mv = mx.nd.array(mm0), mx.nd.array(mv0)
    with mx.autograd.train_mode():
        y, mean, invstd = mx.nd.BatchNorm(mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta),
                                          mm, mv, eps=1e-3, momentum=0.8, fix_gamma=fix_gamma,
                                          output_mean_var=True)
    red = tuple(d for d in range(len(shape)) if d != 1)
    xd = x.astype(np.float64)
    m, v = xd.mean(axis=red), xd.var(axis=red)  # biased, as MXNet
    b = [1, c] + [1] * (len(shape) - 2)
    g = np.ones(c) if fix_gamma else gamma
    want = (xd - m.reshape(b)) / np.sqrt(v.reshape(b) + 1e-3) * g.reshape(b) + beta.reshape(b)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(v + 1e-3), rtol=1e-5)
    np.testing.assert_allclose(mm.asnumpy(), 0.8 * mm0 + 0.2 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv.asnumpy(), 0.8 * mv0 + 0.2 * v, rtol=1e-5, atol=1e-6)
