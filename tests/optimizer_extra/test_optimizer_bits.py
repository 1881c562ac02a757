"""MXNet 1.9.1's float32 update kernels (one step from zero states): the states bit for bit, which
pins down the constants
in float32 (``1.f - beta2`` is 9.99987e-4, not 1e-3) and the kernels' product order (Adam and
LAMB: ``(1 - b2) * g * g``; AdamW and FTML: ``g * g * (1 - b2)``). Golden values from
tools/make_golden_optimizer_bits.py."""
from pathlib import Path

import numpy as np

import neomx as mx

G = np.load(Path(__file__).resolve().parents[1] / "golden" / "optimizer_bits" / "cases.npz")
N = G["grad"].shape[1]


def _same(got, name):
    """States: the same bits. Updated weights (and LAMB's direction): within a float32 ulp or
    two (a few of 512 differ in the last bit: MXNet's compiled kernels contract some products
    into fused multiply-adds)."""
    want = G[name]
    if name.endswith(("_m", "_v")):
        assert np.array_equal(got.asnumpy().view(np.uint32), want.view(np.uint32)), (
            name, float(np.abs(got.asnumpy() - want).max()))
    else:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=3e-7, atol=1e-8, err_msg=name)


def _z():
    return mx.nd.zeros((1, N))


def test_adam_operator_and_optimizer():
    g = mx.nd.array(G["grad"])
    w, m, v = mx.nd.array(G["weight"]), _z(), _z()
    mx.nd.adam_update(w, g, m, v, out=w, lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.01)
    _same(w, "adam_w"), _same(m, "adam_m"), _same(v, "adam_v")
    w = mx.nd.array(G["weight"])
    opt = mx.optimizer.Adam(learning_rate=0.01, wd=0.01)
    st = opt.create_state(0, w)
    opt.update(0, w, g, st)
    _same(w, "opt_adam_w"), _same(st[0], "opt_adam_m"), _same(st[1], "opt_adam_v")


def test_adamw_lamb_ftml():
    g = mx.nd.array(G["grad"])
    w, m, v = mx.nd.array(G["weight"]), _z(), _z()
    mx.nd.contrib.adamw_update(w, g, m, v, mx.nd.array([1.0]), out=w, lr=0.01, eta=1.0, beta1=0.9,
                               beta2=0.999, epsilon=1e-8, wd=0.01)
    _same(w, "adamw_w"), _same(v, "adamw_v")
    w, m, v = mx.nd.array(G["weight"]), _z(), _z()
    r = mx.nd.lamb_update_phase1(w, g, m, v, t=1, beta1=0.9, beta2=0.999, epsilon=1e-6, wd=0.01)
    _same(r, "lamb_g"), _same(v, "lamb_v")
    w, d, v, zz = mx.nd.array(G["weight"]), _z(), _z(), _z()
    mx.nd.ftml_update(w, g, d, v, zz, out=w, lr=0.01, t=1, wd=0.01)
    _same(w, "ftml_w"), _same(v, "ftml_v")
