"""Bit-level golden values of MXNet 1.9.1's float32 update kernels (their constant arithmetic:
``1.f - beta`` in float32, and the order of the products), one step from zero states:
adam_update (the operator and mx.optimizer.Adam), contrib.adamw_update, lamb_update_phase1,
ftml_update.

    tools/mxnet-oracle tools/make_golden_optimizer_bits.py

writes ``tests/golden/optimizer_bits/cases.npz`` (read by tests/optimizer_extra/test_optimizer_bits.py)."""
import os

import _oracle_common as oc
import mxnet as mx
import numpy as np

N = 512


def main():
    rng = np.random.RandomState(0)
    g_np = rng.randn(1, N).astype(np.float32)
    w_np = rng.randn(1, N).astype(np.float32)
    out = {"grad": g_np, "weight": w_np}
    g = mx.nd.array(g_np)

    def z():
        return mx.nd.zeros((1, N))

    w, m, v = mx.nd.array(w_np), z(), z()
    mx.nd.adam_update(w, g, m, v, out=w, lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.01)
    out.update(adam_w=w.asnumpy(), adam_m=m.asnumpy(), adam_v=v.asnumpy())
    w = mx.nd.array(w_np)
    opt = mx.optimizer.Adam(learning_rate=0.01, wd=0.01)
    st = opt.create_state(0, w)
    opt.update(0, w, g, st)
    out.update(opt_adam_w=w.asnumpy(), opt_adam_m=st[0].asnumpy(), opt_adam_v=st[1].asnumpy())
    w, m, v = mx.nd.array(w_np), z(), z()
    mx.nd.contrib.adamw_update(w, g, m, v, mx.nd.array([1.0]), out=w, lr=0.01, eta=1.0, beta1=0.9,
                               beta2=0.999, epsilon=1e-8, wd=0.01)
    out.update(adamw_w=w.asnumpy(), adamw_v=v.asnumpy())
    w, m, v = mx.nd.array(w_np), z(), z()
    r = mx.nd.lamb_update_phase1(w, g, m, v, t=1, beta1=0.9, beta2=0.999, epsilon=1e-6, wd=0.01)
    out.update(lamb_g=r.asnumpy(), lamb_v=v.asnumpy())
    w, d, v, zz = mx.nd.array(w_np), z(), z(), z()
    mx.nd.ftml_update(w, g, d, v, zz, out=w, lr=0.01, t=1, wd=0.01)
    out.update(ftml_w=w.asnumpy(), ftml_v=v.asnumpy())
    path = os.path.join(oc.golden_dir("optimizer_bits"), "cases.npz")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez(tmp, **out)
    os.replace(tmp, path)
    print(f"{len(out)} arrays -> {path}")


if __name__ == "__main__":
    main()
