"""khatri_rao, boolean_mask, hawkesll, multi_mp_lamb_update (neomx/ops/contrib_more.py) and the
detection layers Proposal, MultiProposal, PSROIPooling, DeformableConvolution,
ModulatedDeformableConvolution, DeformablePSROIPooling (neomx/ops/contrib_deform.py): MXNet 1.9.1's
values and gradients (tests/golden/contrib_extra, from tools/make_golden_contrib_extra.py), the
output shapes MXNet's symbols infer, nd/sym parity through an executor, and float64 numeric
gradients (the reference for ModulatedDeformableConvolution, whose backward MXNet 1.9.1 has
only on GPUs).
"""
from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "contrib_extra"
ARR = np.load(GOLDEN / "contrib_extra.npz")
CASES = json.loads((GOLDEN / "contrib_extra.json").read_text())["cases"]
OP_CASES = [c for c in CASES if c != "multi_mp_lamb"]


def _fn(ns, name):
    obj = ns
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _inputs(cid):
    return [ARR[f"{cid}/in{k}"] for k in range(CASES[cid]["n_in"])]


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


@pytest.mark.parametrize("cid", OP_CASES)
def test_golden(cid):
    c = CASES[cid]
    ins = [_nd(a) for a in _inputs(cid)]
    for k in c["grads"]:
        ins[k].attach_grad()
    with mx.autograd.record():
        out = _fn(mx.nd, c["fn"])(*ins, **c["params"])
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == c["n_out"]
    if c["grads"]:
        mx.autograd.backward(outs, [_nd(ARR[f"{cid}/head{k}"]) for k in range(len(outs))])
    for k, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), ARR[f"{cid}/out{k}"], rtol=1e-5, atol=1e-5)
    for k in c["grads"]:
        np.testing.assert_allclose(ins[k].grad.asnumpy(), ARR[f"{cid}/grad{k}"], rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("cid", OP_CASES)
def test_sym_infer_shape_and_parity(cid):
    c = CASES[cid]
    vs = [mx.sym.var(f"x{k}") for k in range(c["n_in"])]
    sym = _fn(mx.sym, c["fn"])(*vs, **c["params"])
    ins = _inputs(cid)
    _, shapes, _ = sym.infer_shape_partial(**{f"x{k}": a.shape for k, a in enumerate(ins)})
    assert [list(s) if s is not None else [] for s in shapes] == c["sym_shapes"]
    if any(not s for s in shapes):
        return  # (boolean_mask: unknown length, as in MXNet: no executor)
    ex = sym.bind(mx.cpu(), {f"x{k}": _nd(a) for k, a in enumerate(ins)}, grad_req="null")
    ex.forward()
    for k, o in enumerate(ex.outputs):
        np.testing.assert_allclose(o.asnumpy(), ARR[f"{cid}/out{k}"], rtol=1e-5, atol=1e-5)


def test_multi_mp_lamb_update():
    c = CASES["multi_mp_lamb"]["params"]
    W, G, M, V, W32 = [[_nd(ARR[f"multi_mp_lamb/in_{n}{k}"]) for k in range(2)]
                       for n in ("w", "g", "m", "v", "w32")]
    mx.nd.contrib.multi_mp_lamb_update(W, G, M, V, W32, step_count=c["step_count"], lrs=c["lrs"],
                                       wds=c["wds"], out=W, clip_gradient=c["clip_gradient"],
                                       rescale_grad=c["rescale_grad"])
    for k in range(2):
        assert W[k].dtype == np.float16
        np.testing.assert_array_equal(W[k].asnumpy(), ARR[f"multi_mp_lamb/out_w{k}"])
        np.testing.assert_allclose(M[k].asnumpy(), ARR[f"multi_mp_lamb/out_m{k}"], rtol=1e-6)
        np.testing.assert_allclose(V[k].asnumpy(), ARR[f"multi_mp_lamb/out_v{k}"], rtol=1e-6)
        # (the second tensor's trust ratio differs from MXNet's by ~2e-5 relative)
        np.testing.assert_allclose(W32[k].asnumpy(), ARR[f"multi_mp_lamb/out_w32{k}"], rtol=1e-5,
                                   atol=2e-6)


def test_errors_as_mxnet():
    with pytest.raises(mx.base.MXNetError, match=r"axis == 0 \(1 vs. 0\) : Not supported yet"):
        mx.nd.contrib.boolean_mask(mx.nd.ones((2, 4)), mx.nd.array([0, 1, 1, 0]),
                                   axis=1).asnumpy()
    a = mx.nd.ones((2, 3))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.khatri_rao(a, a)
    with pytest.raises(mx.base.MXNetError, match="khatri_rao is non-differentiable"):
        y.backward()


# --- float64 numeric gradients (random direction) --------------------------------------------
def _numeric_check(fn, arrays, wrt, params, seed=0, eps=1e-6, rtol=1e-5):
    rng = np.random.RandomState(seed)
    ins = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for k in wrt:
        ins[k].attach_grad()
    with mx.autograd.record():
        out = fn(*ins, **params)
    outs = out if isinstance(out, (list, tuple)) else [out]
    heads = [rng.normal(size=o.shape) for o in outs[:1]]
    mx.autograd.backward(outs[:1], [mx.nd.array(h, dtype="float64") for h in heads])

    def f(vals):
        res = fn(*[mx.nd.array(v, dtype=v.dtype) for v in vals], **params)
        res = res if isinstance(res, (list, tuple)) else [res]
        return float((res[0].asnumpy() * heads[0]).sum())

    for k in wrt:
        t = rng.normal(size=arrays[k].shape)
        plus, minus = list(arrays), list(arrays)
        plus[k], minus[k] = arrays[k] + eps * t, arrays[k] - eps * t
        num = (f(plus) - f(minus)) / (2 * eps)
        np.testing.assert_allclose((ins[k].grad.asnumpy() * t).sum(), num, rtol=rtol, atol=1e-7,
                                   err_msg=f"input {k}")


def _f64(cid):
    return [a.astype(np.float64) if a.dtype == np.float32 else a for a in _inputs(cid)]


@pytest.mark.parametrize("cid,wrt", [
    ("deformconv", (0, 1, 2, 3)), ("deformconv_dil", (0, 1, 2)), ("mdeformconv", (0, 1, 2, 3, 4)),
    ("psroipooling", (0,)), ("dpsroi", (0, 2)), ("dpsroi_notrans", (0,)), ("hawkesll", (0, 1, 2))])
def test_numeric_gradient(cid, wrt):
    c = CASES[cid]
    _numeric_check(_fn(mx.nd, c["fn"]), _f64(cid), wrt, c["params"])


def test_modulated_with_unit_mask_is_deformable():
    """ModulatedDeformableConvolution with mask 1 equals DeformableConvolution away from the
    borders (their sampling rules differ only within a pixel of the edge)."""
    rng = np.random.RandomState(3)
    x = mx.nd.array(rng.uniform(-1, 1, (1, 2, 7, 7)))
    w = mx.nd.array(rng.uniform(-1, 1, (3, 2, 3, 3)))
    off = mx.nd.array(rng.uniform(-0.4, 0.4, (1, 18, 5, 5)))
    a = mx.nd.contrib.DeformableConvolution(x, off, w, kernel=(3, 3), num_filter=3, no_bias=True)
    b = mx.nd.contrib.ModulatedDeformableConvolution(x, off, mx.nd.ones((1, 9, 5, 5)), w,
                                                     kernel=(3, 3), num_filter=3, no_bias=True)
    np.testing.assert_allclose(a.asnumpy()[:, :, 1:-1, 1:-1], b.asnumpy()[:, :, 1:-1, 1:-1],
                               rtol=1e-5, atol=1e-6)
    # zero offsets: a plain convolution
    c = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True)
    z = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 18, 5, 5)), w, kernel=(3, 3),
                                            num_filter=3, no_bias=True)
    np.testing.assert_allclose(z.asnumpy(), c.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["khatri_rao", "_contrib_boolean_mask"])
def test_doc_examples_run(name):
    op = mx.ops.get(name)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(op.doc, {}, name, None, 0))
    assert runner.summarize(verbose=False).failed == 0
