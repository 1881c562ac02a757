"""The rest of MXNet 1.9.1's operator table (issue 10): ``mx.nd.op`` / ``mx.sym.op``, ``nanprod``,
the ``random_pdf_*`` densities, ``contrib.BatchNormWithReLU``, ``contrib.SyncBatchNorm``,
``contrib.RROIAlign``, and the GPU-only ``contrib.fft``/``ifft``/``count_sketch``.

Golden values (forward, gradients, symbolic shapes, error texts) come from the real MXNet 1.9.1
through ``tools/make_golden_ops_rest.py`` (``tests/golden/ops_rest``); float64 numeric gradient
checks and nd-vs-sym parity complete them.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx


# --- mx.nd.op / mx.sym.op ------------------------------------------------------------------------
def test_op_modules_are_the_generated_functions():
    import neomx.ndarray.op as ndop
    import neomx.symbol.op as symop
    assert mx.nd.op is ndop and mx.sym.op is symop
    for name in ("broadcast_add", "FullyConnected", "Convolution", "softmax", "sum", "take"):
        assert getattr(mx.nd.op, name) is getattr(mx.nd, name)
        assert getattr(mx.sym.op, name) is getattr(mx.sym, name)
        assert name in mx.nd.op.__all__ and name in mx.sym.op.__all__
    # internal (underscore) operators and Python-level wrappers are not in MXNet's op modules
    for name in ("_plus", "maximum", "power", "zeros", "array"):
        assert not hasattr(mx.nd.op, name), name
    assert not hasattr(mx.sym.op, "_plus") and not hasattr(mx.sym.op, "Variable")
    out = mx.nd.op.broadcast_add(mx.nd.ones((2, 1)), mx.nd.array([1, 2, 3]))
    np.testing.assert_array_equal(out.asnumpy(), [[2, 3, 4], [2, 3, 4]])
    s = mx.sym.op.FullyConnected(mx.sym.var("x"), num_hidden=4, name="fc")
    assert s.list_arguments() == ["x", "fc_weight", "fc_bias"]
    # every public op of the table is reachable there
    from neomx.ops import registry
    public = {n for n, op in registry.all_ops().items() if op.public and not n.startswith("_")}
    assert public <= set(dir(mx.nd.op)) and public <= set(dir(mx.sym.op))


# --- MXNet 1.9.1's values and gradients ------------------------------------------------------------
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "ops_rest"
ARR = np.load(GOLDEN / "ops_rest.npz")
META = json.loads((GOLDEN / "ops_rest.json").read_text())
CASES, ERRORS, INFER = META["cases"], META["errors"], META["infer"]


def _fn(ns, name):
    obj = ns
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _inputs(cid):
    return [ARR[f"{cid}/in{k}"] for k in range(CASES[cid]["n_in"])]


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _tol(a):
    return (1e-10, 1e-12) if a.dtype == np.float64 else (2e-5, 2e-6)


def _grad_tol(a):
    # (float64: MXNet's digamma is a series accurate to ~1e-7 relative)
    return (1e-6, 1e-9) if a.dtype == np.float64 else (1e-4, 1e-5)


@pytest.mark.parametrize("cid", list(CASES))
def test_golden(cid):
    c = CASES[cid]
    ins = [_nd(a) for a in _inputs(cid)]
    for k in c["grads"]:
        ins[k].attach_grad()
    with mx.autograd.record(train_mode=c["train"]):
        out = _fn(mx.nd, c["fn"])(*ins, **c["params"])
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == c["n_out"]
    if c["grads"]:
        mx.autograd.backward(outs, [_nd(ARR[f"{cid}/head{k}"]) for k in range(len(outs))])
    for k, o in enumerate(outs):
        want = ARR[f"{cid}/out{k}"]
        assert o.dtype == want.dtype and o.shape == want.shape
        rtol, atol = _tol(want)
        np.testing.assert_allclose(o.asnumpy(), want, rtol=rtol, atol=atol, err_msg=f"out{k}")
    for k in c["grads"]:
        want = ARR[f"{cid}/grad{k}"]
        rtol, atol = _tol(want)
        rtol, atol = _grad_tol(want)
        np.testing.assert_allclose(ins[k].grad.asnumpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"grad{k}")
    for j in range(c["n_aux"]):
        got = ins[c["n_in"] - c["n_aux"] + j].asnumpy()
        np.testing.assert_allclose(got, ARR[f"{cid}/aux{j}"], rtol=1e-5, atol=1e-6,
                                   err_msg=f"aux{j}")


@pytest.mark.parametrize("cid", list(CASES))
def test_sym_infer_shape_and_parity(cid):
    """mx.sym's inferred shapes are MXNet's; an executor's forward equals mx.nd's (MXNet's)."""
    c = CASES[cid]
    vs = [mx.sym.var(f"x{k}") for k in range(c["n_in"])]
    sym = _fn(mx.sym, c["fn"])(*vs, **c["params"])
    ins = _inputs(cid)
    _, shapes, _ = sym.infer_shape_partial(**{f"x{k}": a.shape for k, a in enumerate(ins)})
    assert [list(s) if s is not None else [] for s in shapes] == c["sym_shapes"]
    n_arg = c["n_in"] - c["n_aux"]
    args = {f"x{k}": _nd(a) for k, a in enumerate(ins[:n_arg])}
    aux = {f"x{k}": _nd(a) for k, a in enumerate(ins) if k >= n_arg}
    grads = {f"x{k}": mx.nd.zeros(ins[k].shape, dtype=ins[k].dtype) for k in c["grads"]}
    ex = sym.bind(mx.cpu(), args, args_grad=grads or None,
                  grad_req={k: ("write" if k in grads else "null") for k in args},
                  aux_states=aux or None)
    ex.forward(is_train=c["train"])
    for k, o in enumerate(ex.outputs):
        want = ARR[f"{cid}/out{k}"]
        rtol, atol = _tol(want)
        np.testing.assert_allclose(o.asnumpy(), want, rtol=rtol, atol=atol)
    if grads:
        ex.backward([_nd(ARR[f"{cid}/head{k}"]) for k in range(c["n_out"])])
        for k in c["grads"]:
            want = ARR[f"{cid}/grad{k}"]
            rtol, atol = _grad_tol(want)
            np.testing.assert_allclose(grads[f"x{k}"].asnumpy(), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("iid", list(INFER))
def test_sym_infer(iid):
    c = INFER[iid]
    vs = [mx.sym.var(f"x{k}") for k in range(len(c["shapes"]))]
    sym = _fn(mx.sym, c["fn"])(*vs, **c["params"])
    _, shapes, _ = sym.infer_shape_partial(**{f"x{k}": tuple(s) for k, s in enumerate(c["shapes"])})
    assert [list(s) if s else [] for s in shapes] == c["out"]
    if "dtype" in c:
        _, types, _ = sym.infer_type(**{f"x{k}": np.float32 for k in range(len(c["shapes"]))})
        assert np.dtype(types[0]).name == c["dtype"]


_ERROR_CALLS = {
    "pdf_param_mismatch": lambda o: mx.nd.random_pdf_normal(o(2, 3), o(2), o(3)),
    "pdf_sample_mismatch": lambda o: mx.nd.random_pdf_normal(o(2, 3), o(3), o(3)),
    "pdf_ndim": lambda o: mx.nd.random_pdf_normal(o(2), o(2, 3), o(2, 3)),
    "pdf_dirichlet_mismatch": lambda o: mx.nd.random_pdf_dirichlet(o(2, 3), o(4)),
    "pdf_dtype": lambda o: mx.nd.random_pdf_normal(mx.nd.ones((2, 3), dtype="float64"), o(2),
                                                   o(2)),
    "bnrelu_2d": lambda o: mx.nd.contrib.BatchNormWithReLU(o(4, 3), *[o(3)] * 4),
    "bnrelu_axis": lambda o: mx.nd.contrib.BatchNormWithReLU(o(2, 4, 5, 3), *[o(3)] * 4, axis=3),
    "bnrelu_f64": lambda o: mx.nd.contrib.BatchNormWithReLU(
        *[mx.nd.ones(s, dtype="float64") for s in ((2, 3, 4, 5), 3, 3, 3, 3)]),
    "syncbn_nokey": lambda o: mx.nd.contrib.SyncBatchNorm(o(2, 3), *[o(3)] * 4),
    "fft_cpu": lambda o: mx.nd.contrib.fft(o(2, 4)),
    "ifft_cpu": lambda o: mx.nd.contrib.ifft(o(2, 4)),
    "count_sketch_cpu": lambda o: mx.nd.contrib.count_sketch(
        o(2, 3), mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]), out_dim=5),
}


def _rroi_backward(o):
    x = o(1, 1, 4, 4)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.RROIAlign(x, mx.nd.array([[0, 2, 2, 2, 2, 0]]), pooled_size=(1, 1),
                                    spatial_scale=1.0)
    y.backward()


_ERROR_CALLS["rroialign_backward"] = _rroi_backward


@pytest.mark.parametrize("eid", list(ERRORS))
def test_errors_as_mxnet(eid):
    with pytest.raises(mx.base.MXNetError) as info:
        r = _ERROR_CALLS[eid](lambda *s: mx.nd.ones(s))
        if r is not None:
            r.asnumpy()
    assert ERRORS[eid] in str(info.value)


# --- float64 numeric gradients (central differences along a random direction) ---------------------
def _numeric_check(fn, arrays, wrt, params, seed=0, eps=1e-6, rtol=1e-5):
    rng = np.random.RandomState(seed)
    ins = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for k in wrt:
        ins[k].attach_grad()
    with mx.autograd.record():
        out = fn(*ins, **params)
    head = rng.normal(size=out.shape)
    out.backward(mx.nd.array(head, dtype="float64"))

    def f(vals):
        res = fn(*[mx.nd.array(v, dtype=v.dtype) for v in vals], **params)
        return float((res.asnumpy() * head).sum())

    for k in wrt:
        d = rng.normal(size=arrays[k].shape)
        plus = [a.copy() for a in arrays]
        minus = [a.copy() for a in arrays]
        plus[k] = plus[k] + eps * d
        minus[k] = minus[k] - eps * d
        numeric = (f(plus) - f(minus)) / (2 * eps)
        analytic = float((ins[k].grad.asnumpy() * d).sum())
        assert abs(numeric - analytic) <= rtol * max(1.0, abs(numeric)), (k, numeric, analytic)


def _pos(rng, shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("dist", ["uniform", "normal", "gamma", "exponential", "poisson",
                                  "negative_binomial", "generalized_negative_binomial",
                                  "dirichlet"])
def test_pdf_numeric_gradient(dist, is_log):
    rng = np.random.RandomState(1)
    x = _pos(rng, (2, 3, 4))
    prm = {"uniform": [_pos(rng, (2, 3), -1, 0), _pos(rng, (2, 3), 2, 3)],
           "normal": [rng.normal(size=(2, 3)), _pos(rng, (2, 3))],
           "gamma": [_pos(rng, (2, 3), 1.5, 3), _pos(rng, (2, 3))],
           "exponential": [_pos(rng, (2, 3))], "poisson": [_pos(rng, (2, 3))],
           "negative_binomial": [_pos(rng, (2, 3), 1, 3), _pos(rng, (2, 3), 0.2, 0.8)],
           "generalized_negative_binomial": [_pos(rng, (2, 3)), _pos(rng, (2, 3), 0.2, 1.5)],
           "dirichlet": [_pos(rng, (2, 4), 0.5, 3)]}[dist]
    discrete = dist in ("poisson", "negative_binomial", "generalized_negative_binomial")
    if discrete:
        x = rng.randint(0, 5, (2, 3, 4)).astype(np.float64)
    if dist == "dirichlet":
        x = x / x.sum(-1, keepdims=True)
    wrt = range(1 if discrete else 0, 1 + len(prm))
    _numeric_check(getattr(mx.nd, f"random_pdf_{dist}"), [x] + prm, list(wrt),
                   {"is_log": is_log})


def test_pdf_discrete_sample_gradient_is_zero():
    x = mx.nd.array([[1, 2, 3]], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.random_pdf_poisson(x, mx.nd.array([2.0], dtype="float64"))
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), 0)


def test_nanprod_numeric_gradient():
    rng = np.random.RandomState(2)
    x = _pos(rng, (3, 4))
    x[1, 2] = np.nan
    ins = mx.nd.array(x, dtype="float64")
    ins.attach_grad()
    with mx.autograd.record():
        y = mx.nd.nanprod(ins, axis=1)
    y.backward()
    g = ins.grad.asnumpy()
    assert g[1, 2] == 0
    clean = np.where(np.isnan(x), 1.0, x)
    np.testing.assert_allclose(g[~np.isnan(x)], (clean.prod(1, keepdims=True) / clean)[~np.isnan(x)],
                               rtol=1e-12)
    _numeric_check(mx.nd.nanprod, [np.where(np.isnan(x), 1.5, x)], [0], {"axis": 1})


# --- SyncBatchNorm across devices ------------------------------------------------------------------
def _bind_bn(sym, ctx, x, gamma, beta):
    args = {"x": mx.nd.array(x, ctx=ctx), "g": mx.nd.array(gamma, ctx=ctx),
            "b": mx.nd.array(beta, ctx=ctx)}
    grads = {k: mx.nd.zeros(v.shape, ctx=ctx) for k, v in args.items()}
    aux = {"mm": mx.nd.zeros(3, ctx=ctx), "mv": mx.nd.ones(3, ctx=ctx)}
    return sym.bind(ctx, args, args_grad=grads, aux_states=aux)


def test_syncbatchnorm_synchronises_executors_of_two_devices():
    """Two devices' executors (their passes run concurrently in the engine's per-device threads)
    normalise with the statistics of the whole batch: outputs, data gradients and moving
    statistics equal one BatchNorm over the concatenated batch; gamma/beta gradients are each
    device's own (their sum is the whole batch's)."""
    rng = np.random.RandomState(0)
    x = rng.randn(4, 3, 2, 5).astype(np.float32)
    gamma = (rng.rand(3) + 0.5).astype(np.float32)
    beta = rng.randn(3).astype(np.float32)
    head = rng.randn(4, 3, 2, 5).astype(np.float32)
    X, G, B, MM, MV = [mx.sym.var(n) for n in ("x", "g", "b", "mm", "mv")]
    sync = mx.sym.contrib.SyncBatchNorm(X, G, B, MM, MV, key="sync_test", ndev=2, fix_gamma=False)
    ctxs = [mx.cpu(0), mx.cpu(1)]
    exes = [_bind_bn(sync, c, x[2 * i:2 * i + 2], gamma, beta) for i, c in enumerate(ctxs)]
    for e in exes:
        e.forward(is_train=True)
    for i, (e, c) in enumerate(zip(exes, ctxs)):
        e.backward([mx.nd.array(head[2 * i:2 * i + 2], ctx=c)])
    ref = _bind_bn(mx.sym.BatchNorm(X, G, B, MM, MV, fix_gamma=False), mx.cpu(0), x, gamma, beta)
    ref.forward(is_train=True)
    ref.backward([mx.nd.array(head)])
    out = np.concatenate([e.outputs[0].asnumpy() for e in exes])
    np.testing.assert_allclose(out, ref.outputs[0].asnumpy(), rtol=1e-5, atol=1e-5)
    gx = np.concatenate([e.grad_dict["x"].asnumpy() for e in exes])
    np.testing.assert_allclose(gx, ref.grad_dict["x"].asnumpy(), rtol=1e-5, atol=1e-5)
    for k in ("g", "b"):
        np.testing.assert_allclose(sum(e.grad_dict[k].asnumpy() for e in exes),
                                   ref.grad_dict[k].asnumpy(), rtol=1e-5, atol=1e-5)
        assert not np.allclose(exes[0].grad_dict[k].asnumpy(), ref.grad_dict[k].asnumpy())
    for e in exes:
        for k in ("mm", "mv"):
            np.testing.assert_allclose(e.aux_dict[k].asnumpy(), ref.aux_dict[k].asnumpy(),
                                       rtol=1e-5, atol=1e-6)


def test_syncbatchnorm_several_devices_imperatively_is_a_clear_error():
    one = mx.nd.ones(3)
    with pytest.raises(mx.base.MXNetError, match=r"ndev=2.*executors"):
        with mx.autograd.record():
            mx.nd.contrib.SyncBatchNorm(mx.nd.ones((2, 3)), one, one, one, one, key="imp",
                                        ndev=2).asnumpy()


def test_syncbatchnorm_incomplete_group_times_out(monkeypatch):
    monkeypatch.setenv("MXNET_SYNCBN_TIMEOUT", "0.2")
    X, G, B, MM, MV = [mx.sym.var(n) for n in ("x", "g", "b", "mm", "mv")]
    sync = mx.sym.contrib.SyncBatchNorm(X, G, B, MM, MV, key="lonely", ndev=2)
    e = _bind_bn(sync, mx.cpu(0), np.ones((2, 3), np.float32), np.ones(3, np.float32),
                 np.zeros(3, np.float32))
    e.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match=r"1 of ndev=2 devices"):
        e.outputs[0].asnumpy()


# --- fft / ifft / count_sketch kernels (MXNet has them on GPUs only) -------------------------------
def test_fft_ifft_count_sketch_kernels():
    import torch
    from neomx.ops import contrib_rest as cr
    rng = np.random.RandomState(3)
    x = rng.randn(3, 5)
    got = cr.fft_interleaved(torch.from_numpy(x)).numpy()
    want = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(got[:, 0::2], want.real, atol=1e-12)
    np.testing.assert_allclose(got[:, 1::2], want.imag, atol=1e-12)
    z = rng.randn(2, 3, 4, 10)
    got = cr.ifft_interleaved(torch.from_numpy(z)).numpy()
    zc = z[..., 0::2] + 1j * z[..., 1::2]
    np.testing.assert_allclose(got, np.fft.ifft(zc, axis=-1).real * 5, atol=1e-12)
    # MXNet's GPU tests: d fft / d x = n * Re(ifft(g)); d ifft / d re = Re(fft(g))
    g = rng.randn(3, 10)
    gx = cr.get_op_kernel_for_tests("_backward__contrib_fft")(
        torch.from_numpy(g), torch.from_numpy(x)).numpy()
    gc = g[:, 0::2] + 1j * g[:, 1::2]
    np.testing.assert_allclose(gx, 5 * np.fft.ifft(gc, axis=-1).real, atol=1e-12)
    g2 = rng.randn(2, 3, 4, 5)
    gz = cr.get_op_kernel_for_tests("_backward__contrib_ifft")(
        torch.from_numpy(g2), torch.from_numpy(z)).numpy()
    np.testing.assert_allclose(gz[..., 0::2], np.fft.fft(g2, axis=-1).real, atol=1e-12)
    np.testing.assert_allclose(gz[..., 1::2], np.fft.fft(g2, axis=-1).imag, atol=1e-12)
    data = np.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    h, s = np.array([[0, 3, 4]], np.float64), np.array([[1, -1, 1]], np.float64)
    got = cr.count_sketch(*[torch.from_numpy(a) for a in (data, h, s)], 5).numpy()
    np.testing.assert_allclose(got, [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]])


@pytest.mark.skipif(mx.context.num_gpus() == 0, reason="MXNet's fft/ifft/count_sketch are GPU-only")
def test_fft_ifft_count_sketch_on_gpu():
    rng = np.random.RandomState(4)
    ctx = mx.gpu(0)
    x = mx.nd.array(rng.randn(3, 4), ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.fft(x)
    g = rng.randn(3, 8).astype(np.float32)
    y.backward(mx.nd.array(g, ctx=ctx))
    want = np.fft.fft(x.asnumpy(), axis=-1)
    np.testing.assert_allclose(y.asnumpy()[:, 0::2], want.real, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * np.fft.ifft(g[:, 0::2] + 1j * g[:, 1::2]).real,
                               rtol=1e-4, atol=1e-5)
    back = mx.nd.contrib.ifft(y)
    np.testing.assert_allclose(back.asnumpy(), 4 * x.asnumpy(), rtol=1e-4, atol=1e-5)
    d = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]], ctx=ctx)
    out = mx.nd.contrib.count_sketch(d, mx.nd.array([[0, 3, 4]], ctx=ctx),
                                     mx.nd.array([[1, -1, 1]], ctx=ctx), out_dim=5)
    np.testing.assert_allclose(out.asnumpy(), [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]],
                               rtol=1e-6)


# --- the op micro-benchmark's fixes ------------------------------------------------------------------
def test_large_2x2_max_pooling_fast_path_matches_aten(monkeypatch):
    """2x2/2 max pooling of a large NCHW input (over the channels-last path's 4M elements) takes
    the strided-maximum kernel: the same maxima, argmax workspace and gradient as ATen's, ties
    going to the first cell in row-major order."""
    import torch
    from neomx.ops import conv
    calls = []
    kernel = conv._max_pool_2x2
    monkeypatch.setattr(conv, "_max_pool_2x2", lambda *a: calls.append(1) or kernel(*a))
    rng = np.random.RandomState(5)
    x = rng.randint(0, 4, (2, 8, 512, 513)).astype(np.float32)  # many ties; odd width
    head = rng.randn(2, 8, 256, 256).astype(np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max")
    y.backward(mx.nd.array(head))
    t = torch.from_numpy(x).requires_grad_(True)
    ty = torch.nn.functional.max_pool2d(t, 2, 2)
    ty.backward(torch.from_numpy(head))
    np.testing.assert_array_equal(y.asnumpy(), ty.detach().numpy())
    np.testing.assert_array_equal(a.grad.asnumpy(), t.grad.numpy())
    assert calls
