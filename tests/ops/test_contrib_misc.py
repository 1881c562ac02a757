"""The smaller ``mx.nd.contrib`` operators (neomx/ops/contrib_misc.py) beyond the golden cases
(tests/ops/test_contrib_golden.py): float64 numerical gradients, references for the attention
products, the docstring examples, and the Python wrappers of ``mx.sym.contrib``.
"""
from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import assert_almost_equal, check_numeric_gradient

DOC_OPS = ["_contrib_arange_like", "_contrib_index_copy", "_contrib_index_array",
           "_contrib_allclose", "_contrib_gradientmultiplier", "_contrib_BilinearResize2D",
           "_contrib_AdaptiveAvgPooling2D", "_contrib_interleaved_matmul_selfatt_qk"]


@pytest.mark.parametrize("name", DOC_OPS)
def test_doc_examples_run(name):
    op = mx.ops.get(name)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(op.doc, {}, name, None, 0))
    assert runner.summarize(verbose=False).failed == 0


def _var(*names):
    return [mx.sym.Variable(n) for n in names]


R = np.random.RandomState(0)
NUMERIC = [
    ("index_copy", lambda: mx.sym.contrib.index_copy(*_var("old", "idx", "new")),
     [R.uniform(-1, 1, (5, 3)), np.array([4, 0, 2.0]), R.uniform(-1, 1, (3, 3))], ["old", "new"]),
    ("resize_align", lambda: mx.sym.contrib.BilinearResize2D(*_var("data"), height=5, width=3),
     [R.uniform(-1, 1, (1, 2, 3, 4))], None),
    ("resize_noalign", lambda: mx.sym.contrib.BilinearResize2D(
        *_var("data"), scale_height=1.5, scale_width=2.0, align_corners=False),
     [R.uniform(-1, 1, (1, 2, 4, 3))], None),
    ("resize_like", lambda: mx.sym.contrib.BilinearResize2D(*_var("data", "like"), mode="like"),
     [R.uniform(-1, 1, (1, 1, 3, 3)), np.zeros((1, 1, 5, 2))], ["data"]),
    ("adaptive_avg", lambda: mx.sym.contrib.AdaptiveAvgPooling2D(*_var("data"),
                                                                  output_size=(2, 3)),
     [R.uniform(-1, 1, (2, 2, 5, 7))], None),
    ("selfatt_qk", lambda: mx.sym.contrib.interleaved_matmul_selfatt_qk(*_var("qkv"), heads=2),
     [R.uniform(-1, 1, (3, 2, 12))], None),
    ("selfatt_valatt", lambda: mx.sym.contrib.interleaved_matmul_selfatt_valatt(
        *_var("qkv", "att"), heads=2), [R.uniform(-1, 1, (3, 2, 12)), R.uniform(0, 1, (4, 3, 3))],
     None),
    ("encdec_qk", lambda: mx.sym.contrib.interleaved_matmul_encdec_qk(*_var("q", "kv"), heads=2),
     [R.uniform(-1, 1, (2, 2, 4)), R.uniform(-1, 1, (3, 2, 8))], None),
    ("encdec_valatt", lambda: mx.sym.contrib.interleaved_matmul_encdec_valatt(
        *_var("kv", "att"), heads=2), [R.uniform(-1, 1, (3, 2, 8)), R.uniform(0, 1, (4, 2, 3))],
     None),
]


@pytest.mark.parametrize("make, location, nodes", [c[1:] for c in NUMERIC],
                         ids=[c[0] for c in NUMERIC])
def test_numeric_gradient_float64(make, location, nodes):
    check_numeric_gradient(make(), location, grad_nodes=nodes, numeric_eps=1e-6, rtol=1e-6,
                           atol=1e-8, dtype=np.float64)


def test_gradientmultiplier_scales_the_gradient():
    x = mx.nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.gradientmultiplier(x, scalar=-0.25) * 2
    y.backward()
    assert_almost_equal(y, x * 2)
    assert_almost_equal(x.grad, np.full(3, -0.5))


def test_attention_products_match_reference():
    """selfatt_qk and valatt compose to softmax-free multi-head attention as the doc's
    reshape/transpose code computes it."""
    L, B, H, D = 4, 2, 3, 5
    qkv = R.uniform(-1, 1, (L, B, H * D * 3))
    tmp = qkv.reshape(L, B, H, 3, D)

    def heads(i):
        return tmp[:, :, :, i, :].transpose(1, 2, 0, 3).reshape(B * H, L, D)
    q, k, v = heads(0) / math.sqrt(D), heads(1), heads(2)
    att = q @ k.transpose(0, 2, 1)
    got = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(qkv, dtype="float64"), heads=H)
    assert_almost_equal(got, att, rtol=1e-12, atol=1e-12)
    out = (att @ v).reshape(B, H, L, D).transpose(2, 0, 1, 3).reshape(L, B, H * D)
    got = mx.nd.contrib.interleaved_matmul_selfatt_valatt(
        mx.nd.array(qkv, dtype="float64"), mx.nd.array(att, dtype="float64"), heads=H)
    assert_almost_equal(got, out, rtol=1e-12, atol=1e-12)


def test_arange_like_and_index_array_in_executor():
    x = mx.sym.Variable("x")
    grp = mx.sym.Group([mx.sym.contrib.arange_like(x, axis=0, repeat=2),
                        mx.sym.contrib.index_array(x, axes=(1,))])
    ex = grp.simple_bind(mx.cpu(), x=(4, 2))
    a, idx = ex.forward()
    assert a.asnumpy().tolist() == [0, 0, 1, 1]
    assert idx.dtype == np.int64 and idx.shape == (4, 2, 1)
    assert idx.asnumpy()[..., 0].tolist() == [[0, 1]] * 4


def test_sym_contrib_adamw_wrappers():
    """mx.sym.contrib.adamw_update / mp_adamw_update as MXNet 1.9.1's Python functions: a
    number rescale_grad becomes a full((1,)) symbol; the values equal mx.nd.contrib's. (MXNet
    1.9.1's own calls fail composing the node: "Not enough argument to call operator
    _adamw_update"; neomx builds the graph its Python code means.)"""
    names = ("weight", "grad", "mean", "var")
    r = np.random.RandomState(3)
    vals = {n: r.uniform(0.1, 1, (3, 2)) for n in names}
    upd = mx.sym.contrib.adamw_update(*_var(*names), rescale_grad=0.5, lr=0.1, eta=0.7, wd=0.01)
    # mean and var are mutated: auxiliary states, as MXNet lists them
    assert upd.list_arguments() == ["weight", "grad"]
    assert upd.list_auxiliary_states() == ["mean", "var"]
    ex = upd.bind(mx.cpu(), {n: mx.nd.array(vals[n]) for n in names[:2]},
                  aux_states={n: mx.nd.array(vals[n]) for n in names[2:]})
    got = ex.forward()[0].asnumpy()
    want = mx.nd.contrib.adamw_update(*[mx.nd.array(vals[n]) for n in names], rescale_grad=0.5,
                                      lr=0.1, eta=0.7, wd=0.01)
    assert_almost_equal(got, want)
    mp = mx.sym.contrib.mp_adamw_update(*_var(*names, "weight32"), rescale_grad=mx.sym.Variable(
        "rg"), lr=0.1, eta=1.0)
    assert mp.list_arguments() == ["weight", "grad", "rg"]
