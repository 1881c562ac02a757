"""The optimizer update operators (``neomx/ops/optimizer_ops.py``) against MXNet 1.9.1
(``tools/make_golden_optimizer_ops.py``): consecutive steps with ``out=weight`` and the states
updated in place, the mixed-precision forms, the multi-tensor helpers, bad calls, and the same
steps through a bound executor (states are auxiliary states there)."""
from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "math" / "optimizer_ops.json")
                    .read_text())
STEPS = GOLDEN["steps"]
RTOL, ATOL = 1e-5, 1e-6


def _close(have, want, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(have, dtype=np.float64), np.array(want, dtype=np.float64),
                               rtol=rtol, atol=atol)


def _tol(case):
    return (1e-3, 1e-3) if case["dtype"] == "float16" else (RTOL, ATOL)


def _start(case):
    dt = case["dtype"]
    w = mx.nd.array(np.array(case["weight"], dtype=dt), dtype=dt)
    states = [mx.nd.array(s) for s in case["states"]]
    if case["mp"]:
        states.append(mx.nd.array(np.array(case["weight"], dtype=dt).astype(np.float32)))
    return w, states


def _params(case, k):
    return dict(case["params"], t=k + 1) if case["t_param"] else case["params"]


@pytest.mark.parametrize("case", STEPS, ids=[c["id"] for c in STEPS])
def test_update_steps_as_mxnet(case):
    dt = case["dtype"]
    w, states = _start(case)
    rtol, atol = _tol(case)
    for k, (g, want) in enumerate(zip(case["grads"], case["steps"])):
        res = getattr(mx.nd, case["op"])(w, mx.nd.array(np.array(g, dtype=dt), dtype=dt), *states,
                                         out=w, **_params(case, k))
        assert res is w and np.dtype(w.dtype) == np.dtype(dt)
        _close(w.asnumpy(), want["weight"], rtol, atol)
        for s, ws in zip(states, want["states"]):
            _close(s.asnumpy(), ws, rtol, atol)


EXEC = [c for c in STEPS if c["dtype"] == "float32"][::2]


@pytest.mark.parametrize("case", EXEC, ids=[c["id"] for c in EXEC])
def test_update_in_executor(case):
    """The symbol lists the states as auxiliary states (MXNet's mutated inputs); each forward
    updates them in place."""
    op = getattr(mx.sym, case["op"])
    names = case["state_names"]
    w, states = _start(case)
    first = _params(case, 0)
    sym = op(mx.sym.var("weight"), mx.sym.var("grad"), *[mx.sym.var(n) for n in names], **first)
    assert sym.list_arguments() == ["weight", "grad"]
    assert sym.list_auxiliary_states() == names
    g = mx.nd.array(case["grads"][0])
    ex = sym.bind(mx.cpu(), {"weight": w, "grad": g}, aux_states=dict(zip(names, states)))
    out = ex.forward()[0]
    _close(out.asnumpy(), case["steps"][0]["weight"])
    for n, ws in zip(names, case["steps"][0]["states"]):
        _close(ex.aux_dict[n].asnumpy(), ws)


@pytest.mark.parametrize("rec", GOLDEN["lamb"][:-1], ids=[r["id"] for r in GOLDEN["lamb"][:-1]])
def test_lamb_phase2_as_mxnet(rec):
    ins = [mx.nd.array(a) for a in rec["inputs"]]
    _close(mx.nd.lamb_update_phase2(*ins, **rec["params"]).asnumpy(), rec["out"])


def test_mp_lamb_as_mxnet():
    rec = GOLDEN["lamb"][-1]
    w32 = np.array(rec["weight32"], np.float32)
    nd = [mx.nd.array(w32, dtype="float16"), mx.nd.array(rec["grad"], dtype="float16"),
          mx.nd.zeros(w32.shape), mx.nd.zeros(w32.shape), mx.nd.array(w32)]
    g = mx.nd.mp_lamb_update_phase1(*nd, t=1, wd=0.01)
    assert np.dtype(g.dtype) == np.float32
    _close(g.asnumpy(), rec["g"], 1e-4, 1e-5)
    _close(nd[2].asnumpy(), rec["mean"], 1e-4, 1e-6)
    _close(nd[3].asnumpy(), rec["var"], 1e-4, 1e-6)
    r1 = mx.nd.array([np.linalg.norm(w32)])
    r2 = mx.nd.array([np.linalg.norm(g.asnumpy())])
    w = mx.nd.mp_lamb_update_phase2(nd[0], g, r1, r2, nd[4], lr=0.1, out=nd[0])
    assert np.dtype(w.dtype) == np.float16
    _close(w.asnumpy(), rec["weight"], 1e-3, 1e-3)
    # MXNet 1.9.1 leaves the master weight as it was
    _close(nd[4].asnumpy(), rec["weight32_after"], 0, 0)


def test_multi_tensor_helpers_as_mxnet():
    misc = GOLDEN["misc"]
    rec = misc["multi_sum_sq"]
    res = mx.nd.multi_sum_sq(*[mx.nd.array(a) for a in rec["inputs"]], num_arrays=3)
    assert res.shape == (3,) and np.dtype(res.dtype) == np.float32
    _close(res.asnumpy(), rec["out"])
    for rec in misc["multi_lars"]:
        _close(mx.nd.multi_lars(*[mx.nd.array(a) for a in rec["inputs"]], **rec["params"]).asnumpy(),
               rec["out"])
    for rec in misc["all_finite"]:
        a = mx.nd.array(rec["data"])
        assert mx.nd.all_finite(a).asnumpy().tolist() == rec["all_finite"]
        assert mx.nd.all_finite(a.astype("float16")).asnumpy().tolist() == rec["dtype16"]
    for rec in misc["multi_all_finite"]:
        res = mx.nd.multi_all_finite(*[mx.nd.array(v) for v in rec["data"]],
                                     num_arrays=len(rec["data"]))
        assert res.asnumpy().tolist() == rec["out"]
    a, b = mx.nd.ones((2, 3)), mx.nd.array([5.0, 6.0])
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert a.asnumpy().tolist() == misc["reset_arrays"]["a"]
    assert b.asnumpy().tolist() == misc["reset_arrays"]["b"]


def test_update_ops_have_no_gradient_rule():
    for name in ("sgd_update", "adam_update", "lamb_update_phase2", "multi_sum_sq"):
        assert mx.ops.get(name).gradient is None


ERRORS = [e for e in GOLDEN["errors"] if e["error"]]


@pytest.mark.parametrize("rec", ERRORS, ids=[e["code"][:40] for e in ERRORS])
def test_errors_as_mxnet(rec):
    want = re.sub(r"^Check failed: [^:]*: ", "", rec["error"])
    with pytest.raises(mx.base.MXNetError, match=re.escape(want)):
        eval(rec["code"], {"mx": mx}).asnumpy()


MULTI = GOLDEN["multi"]


@pytest.mark.parametrize("case", MULTI, ids=[c["id"] for c in MULTI])
def test_multi_sgd_forms_as_mxnet(case):
    dt = case["dtype"]
    ws = [mx.nd.array(np.array(w, dtype=dt), dtype=dt) for w in case["weights"]]
    moms = [mx.nd.zeros(w.shape) for w in ws]
    w32 = [mx.nd.array(np.array(w, dtype=dt).astype(np.float32)) for w in case["weights"]]
    tol = (1e-3, 1e-3) if dt == "float16" else (RTOL, ATOL)
    for gs, want in zip(case["grads"], case["steps"]):
        data = []
        for i in range(len(ws)):
            data += [ws[i], mx.nd.array(np.array(gs[i], dtype=dt), dtype=dt)]
            data += [moms[i]] if case["mom"] else []
            data += [w32[i]] if case["mp"] else []
        if case["preloaded"]:
            data += [mx.nd.array(case["lrs"]), mx.nd.array(case["wds"])]
        res = getattr(mx.nd, case["op"])(*data, out=ws, **case["params"])
        assert res is ws
        for w, wv in zip(ws, want["weights"]):
            assert np.dtype(w.dtype) == np.dtype(dt)
            _close(w.asnumpy(), wv, *tol)
        for m, mv in zip(moms, want["moms"]):
            _close(m.asnumpy(), mv)
        for w, wv in zip(w32, want["weight32"]):
            _close(w.asnumpy(), wv)


def test_multi_sgd_shape_errors():
    with pytest.raises(mx.base.MXNetError, match="Shape inconsistent"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((3,)), lrs=(0.1,), wds=(0.0,))


AMP = GOLDEN["amp"]
AMP_VALUES = [1.5, 2.25, -3.1, 0.5, -2.5]


@pytest.mark.parametrize("rec", AMP["cast"], ids=[r["src"] + ">" + r["dtype"] for r in AMP["cast"]])
def test_amp_cast_as_mxnet(rec):
    r = mx.nd.amp_cast(mx.nd.array(AMP_VALUES, dtype=rec["src"]), dtype=rec["dtype"])
    assert np.dtype(r.dtype).name == rec["out_dtype"]
    np.testing.assert_array_equal(r.asnumpy().astype(np.float64), rec["out"])


@pytest.mark.parametrize("rec", AMP["multicast"],
                         ids=["%s-%s" % ("_".join(r["types"]), r["cast_narrow"]) for r in AMP["multicast"]])
def test_amp_multicast_as_mxnet(rec):
    xs = [mx.nd.array(AMP_VALUES, dtype=t) for t in rec["types"]]
    rs = mx.nd.amp_multicast(*xs, num_outputs=len(xs), cast_narrow=rec["cast_narrow"])
    assert [np.dtype(r.dtype).name for r in rs] == rec["out_dtypes"]
    for r, x, t in zip(rs, xs, rec.get("out", [None] * len(rs))):
        want = t if t is not None else x.asnumpy().astype(r.dtype).astype(np.float64)
        np.testing.assert_array_equal(r.asnumpy().astype(np.float64), want)


def test_amp_symbols_and_gradients():
    with mx.name.NameManager():
        s = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
        c = mx.sym.amp_cast(mx.sym.var("a"), dtype="float16")
    assert s.list_outputs() == AMP["multicast_sym"]["outputs"]
    assert [np.dtype(t).name for t in s.infer_type(a="float32", b="float16")[1]] == \
        AMP["multicast_sym"]["types"]
    assert s.tojson() == AMP["multicast_sym"]["json"]
    assert c.tojson() == AMP["cast_json"]
    # gradients are cast back to each input's type (MXNet's _backward_amp_cast/_multicast)
    x, h = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0], dtype="float16")
    x.attach_grad()
    h.attach_grad()
    with mx.autograd.record():
        a, b = mx.nd.amp_multicast(x, h, num_outputs=2)
        y = a * 2 + b * 3 + mx.nd.amp_cast(x, dtype="float16").astype("float32")
    y.backward()
    assert np.dtype(x.grad.dtype) == np.float32 and np.dtype(h.grad.dtype) == np.float16
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(h.grad.asnumpy(), [3.0, 3.0])


ADAMW = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "math" / "contrib_optimizer.json")
                   .read_text())["adamw"]


@pytest.mark.parametrize("case", ADAMW, ids=[c["id"] for c in ADAMW])
def test_adamw_as_mxnet(case):
    """The operators behind mx.nd.contrib.adamw_update / mp_adamw_update (called by name, as
    MXNet's wrappers do); rescale_grad 0 or NaN skips the step."""
    dt = case["dtype"]
    w = mx.nd.array(np.array(case["weight"], dtype=dt), dtype=dt)
    mean, var = mx.nd.zeros(w.shape), mx.nd.zeros(w.shape)
    w32 = mx.nd.array(np.array(case["weight"], dtype=dt).astype(np.float32))
    tol = (1e-3, 1e-3) if dt == "float16" else (RTOL, ATOL)
    for g, rs, want in zip(case["grads"], case["rescales"], case["steps"]):
        kw = dict(weight=w, grad=mx.nd.array(np.array(g, dtype=dt), dtype=dt), mean=mean, var=var,
                  rescale_grad=mx.nd.array([rs]), out=w, **case["params"])
        if case["mp"]:
            mx.nd._internal._mp_adamw_update(weight32=w32, **kw)
        else:
            mx.nd._internal._adamw_update(**kw)
        _close(w.asnumpy(), want["weight"], *tol)
        _close(mean.asnumpy(), want["mean"])
        _close(var.asnumpy(), want["var"])
        _close(w32.asnumpy(), want["weight32"])


def test_mp_adamw_is_adamw_on_the_master_weight():
    """(MXNet's mp_adamw_update on float16 crashes the CPU oracle: checked against adamw.)"""
    case = ADAMW[1]
    w32 = mx.nd.array(case["weight"])
    w16 = w32.astype("float16")
    ref = w32.copy()
    states = [mx.nd.zeros(w32.shape) for _ in range(4)]
    for g, rs in zip(case["grads"], case["rescales"]):
        mx.nd._internal._adamw_update(weight=ref, grad=mx.nd.array(g).astype("float16").astype("float32"),
                                      mean=states[0], var=states[1], rescale_grad=mx.nd.array([rs]),
                                      out=ref, **case["params"])
        mx.nd._internal._mp_adamw_update(weight=w16, grad=mx.nd.array(g).astype("float16"),
                                         mean=states[2], var=states[3], weight32=w32,
                                         rescale_grad=mx.nd.array([rs]), out=w16, **case["params"])
        np.testing.assert_array_equal(w32.asnumpy(), ref.asnumpy())
        np.testing.assert_array_equal(w16.asnumpy(), ref.asnumpy().astype(np.float16))


MULTI_ADAMW = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "math" / "contrib_optimizer.json")
                         .read_text())["multi_adamw"]


@pytest.mark.parametrize("case", MULTI_ADAMW, ids=[c["id"] for c in MULTI_ADAMW])
def test_multi_adamw_as_mxnet(case):
    """_multi_adamw_update with MXNet's interleaved inputs, then rescale_grad (an infinite one
    skips the step); the float16 form is checked against it."""
    ws = [mx.nd.array(w) for w in case["weights"]]
    means, vars_ = [mx.nd.zeros(w.shape) for w in ws], [mx.nd.zeros(w.shape) for w in ws]
    w16 = [w.astype("float16") for w in ws]
    w32 = [mx.nd.array(np.array(w, dtype=np.float32).astype(np.float16).astype(np.float32))
           for w in case["weights"]]
    m16, v16 = [mx.nd.zeros(w.shape) for w in ws], [mx.nd.zeros(w.shape) for w in ws]
    for gs, want in zip(case["grads"], case["steps"]):
        data, data16 = [], []
        for i in range(len(ws)):
            data += [ws[i], mx.nd.array(gs[i]), means[i], vars_[i]]
            data16 += [w16[i], mx.nd.array(gs[i], dtype="float16"), m16[i], v16[i], w32[i]]
        rescale = mx.nd.array([case["rescale"]])
        mx.nd._internal._multi_adamw_update(*data, rescale, out=ws, num_weights=len(ws),
                                            **case["params"])
        mx.nd._internal._multi_mp_adamw_update(*data16, rescale, out=w16, num_weights=len(ws),
                                               **case["params"])
        for got, exp in [(ws, want["weights"]), (means, want["means"]), (vars_, want["vars"])]:
            for a, b in zip(got, exp):
                _close(a.asnumpy(), b)
        for a, b in zip(w16, w32):
            assert np.dtype(a.dtype) == np.float16
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy().astype(np.float16))


MULTI_LAMB = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "math" /
                         "contrib_optimizer.json").read_text())["multi_lamb"]


@pytest.mark.parametrize("case", MULTI_LAMB, ids=[c["id"] for c in MULTI_LAMB])
def test_multi_lamb_as_mxnet(case):
    ws = [mx.nd.array(w) for w in case["weights"]]
    means, vars_ = [mx.nd.zeros(w.shape) for w in ws], [mx.nd.zeros(w.shape) for w in ws]
    for k, (gs, want) in enumerate(zip(case["grads"], case["steps"])):
        data = []
        for i in range(len(ws)):
            data += [ws[i], mx.nd.array(gs[i]), means[i], vars_[i]]
        mx.nd._internal._multi_lamb_update(*data, out=ws, num_tensors=len(ws),
                                           step_count=(k + 1, k + 2), learning_rates=case["lrs"],
                                           wds=case["wds"], **case["params"])
        for got, exp in [(ws, want["weights"]), (means, want["means"]), (vars_, want["vars"])]:
            for a, b in zip(got, exp):
                _close(a.asnumpy(), b)
