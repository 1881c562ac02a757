"""The fused ``RNN`` operator against MXNet 1.9.1 (``tests/golden/rnn``, written by
``tools/make_golden_rnn.py``), float64 numeric gradients, nd-vs-sym parity, shape inference of
the parameter vector, state clipping, dropout and errors."""
import json
import pathlib

import numpy as np
import pytest
import torch

import neomx as mx
from neomx.base import MXNetError
from neomx.ops import Params, rnn as rnn_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "rnn"
SPEC = json.loads((GOLDEN / "rnn.json").read_text())
ARR = dict(np.load(GOLDEN / "rnn.npz"))
CASES = {c["id"]: c for c in SPEC["cases"]}


def _close(a, b, rtol, atol, what):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def _inputs(cid):
    return {n: ARR[f"{cid}/in/{n}"] for n in CASES[cid]["inputs"]}


@pytest.mark.parametrize("cid", sorted(CASES))
def test_golden_executor(cid):
    """sym.RNN bound on cpu, forward(is_train=True) and backward with MXNet's head gradients."""
    case = CASES[cid]
    ins = _inputs(cid)
    sym = mx.sym.RNN(name="rnn0", **{n: mx.sym.Variable(n) for n in ins}, **case["params"])
    assert sym.list_arguments() == case["list_arguments"]
    assert sym.list_outputs() == case["list_outputs"]
    if "attrs" in case:
        assert json.loads(sym.tojson())["nodes"][-1].get("attrs", {}) == case["attrs"]
    args = {n: mx.nd.array(a) for n, a in ins.items()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in ins.items()}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req="write")
    train = case.get("train", True)
    outs = ex.forward(is_train=train)
    assert [list(o.shape) for o in outs] == case["out_shapes"]
    for i, o in enumerate(outs):
        _close(o.asnumpy(), ARR[f"{cid}/out{i}"], 1e-4, 1e-5, f"{cid} out{i}")
    if not train:
        return
    ex.backward([mx.nd.array(ARR[f"{cid}/head{i}"]) for i in range(len(outs))])
    for n in ins:
        if n != "sequence_length":
            _close(ex.grad_dict[n].asnumpy(), ARR[f"{cid}/grad/{n}"], 1e-3, 1e-4, f"{cid} d{n}")


@pytest.mark.parametrize("cid", sorted(CASES))
def test_golden_autograd(cid):
    """mx.nd.RNN under autograd: MXNet's outputs (predict mode) and gradients."""
    case = CASES[cid]
    if not case.get("train", True):
        pytest.skip("dropout: forward in predict mode only (test_golden_executor)")
    ins = _inputs(cid)
    arrays = {n: mx.nd.array(a) for n, a in ins.items()}
    for n, a in arrays.items():
        if n != "sequence_length":
            a.attach_grad()
    with mx.autograd.record():
        res = mx.nd.RNN(**arrays, **case["params"])
    res = res if isinstance(res, list) else [res]
    for i, o in enumerate(res):
        key = f"{cid}/nd_out{i}" if f"{cid}/nd_out{i}" in ARR else f"{cid}/out{i}"
        _close(o.asnumpy(), ARR[key], 1e-4, 1e-5, f"{cid} nd out{i}")
    mx.autograd.backward(res, [mx.nd.array(ARR[f"{cid}/head{i}"]) for i in range(len(res))])
    for n, a in arrays.items():
        if n != "sequence_length":
            _close(a.grad.asnumpy(), ARR[f"{cid}/grad/{n}"], 1e-3, 1e-4, f"{cid} nd d{n}")


@pytest.mark.parametrize("rec", SPEC["infer"], ids=lambda r: json.dumps(r["shapes"]))
def test_infer_shape(rec):
    """The parameter vector's length (and the states) from the data shape alone."""
    sym = mx.sym.RNN(mx.sym.Variable("data"), name="rnn0", **rec["params"])
    assert sym.list_arguments() == rec["arguments"]
    got = sym.infer_shape_partial(**{k: tuple(v) for k, v in rec["shapes"].items()})
    want = rec["infer_shape"]
    assert [[list(s) if s else [] for s in part] for part in got] == want


def _core(msg):
    """MXNet's message without the node prefix and the echoed parameters (their order is the
    registry's business)."""
    return msg.split("Error in operator rnn0: ", 1)[-1].split("\n")[0].split(", in operator")[0]


@pytest.mark.parametrize("rec", SPEC["errors"], ids=lambda r: r["id"])
def test_errors(rec):
    params = dict(state_size=3, num_layers=1, mode="gru")
    var = mx.sym.Variable("data")
    calls = {
        "data_ndim": lambda: mx.sym.RNN(var, name="rnn0", **params).infer_shape(data=(2, 3, 4, 5)),
        "params_shape": lambda: mx.sym.RNN(var, name="rnn0", **params).infer_shape(
            data=(2, 3, 4), rnn0_parameters=(7,)),
        "state_shape": lambda: mx.sym.RNN(var, name="rnn0", **params).infer_shape(
            data=(2, 3, 4), rnn0_state=(1, 2, 3)),
        "state_cell_shape": lambda: mx.sym.RNN(
            var, name="rnn0", state_size=3, num_layers=2, mode="lstm").infer_shape(
            data=(2, 3, 4), rnn0_state_cell=(2, 3, 4)),
        "seqlen_shape": lambda: mx.sym.RNN(
            var, name="rnn0", use_sequence_length=True, **params).infer_shape(
            data=(2, 3, 4), rnn0_sequence_length=(2,)),
        "params_type": lambda: mx.sym.RNN(var, name="rnn0", **params).infer_type(
            data="float32", rnn0_parameters="float64"),
        "p_bound": lambda: mx.sym.RNN(var, name="rnn0", p=1.5, **params),
        "bad_mode": lambda: mx.sym.RNN(var, name="rnn0", state_size=3, num_layers=1, mode="foo"),
        "no_num_layers": lambda: mx.sym.RNN(var, name="rnn0", state_size=3, mode="gru"),
        "nd_missing_state": lambda: mx.nd.RNN(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((81,)),
                                              **params),
    }
    with pytest.raises(MXNetError) as info:
        calls[rec["id"]]()
    if rec["id"] == "nd_missing_state":
        assert "state" in str(info.value)
    elif rec["id"] == "no_num_layers":
        assert "Required parameter num_layers" in str(info.value)
    else:
        assert _core(rec["error_message"]) in str(info.value)


# --- numeric gradients (float64) ------------------------------------------------------------------
def _random_inputs(params, t=3, n=2, c=2, seed=0, dtype="float64"):
    sym = mx.sym.RNN(mx.sym.Variable("data"), name="r", **params)
    shapes = sym.infer_shape(data=(t, n, c))[0]
    rng = np.random.RandomState(seed)
    names = [a[2:] if a.startswith("r_") else a for a in sym.list_arguments()]
    ins = {nm: rng.uniform(-1, 1, s).astype(dtype) for nm, s in zip(names, shapes)}
    if params.get("use_sequence_length"):
        ins["sequence_length"] = np.array([t] + [1 + i % t for i in range(n - 1)], dtype)
    return ins


def _run(params, ins):
    """The outputs of mx.nd.RNN (a list) for numpy inputs."""
    res = mx.nd.RNN(**{k: mx.nd.array(v, dtype=v.dtype) for k, v in ins.items()}, **params)
    res = res if isinstance(res, list) else [res]
    return res


NUMERIC = [
    dict(mode="rnn_tanh", num_layers=2, bidirectional=True, state_outputs=True),
    dict(mode="rnn_relu", num_layers=1, state_outputs=True),
    dict(mode="gru", num_layers=2, bidirectional=True, state_outputs=True),
    dict(mode="lstm", num_layers=2, bidirectional=True, state_outputs=True),
    dict(mode="lstm", num_layers=2, projection_size=2, state_outputs=True),
    dict(mode="lstm", num_layers=1, projection_size=3, state_outputs=True),  # P == H: the loop
    dict(mode="lstm", num_layers=1, state_outputs=True, lstm_state_clip_min=-0.3,
         lstm_state_clip_max=0.35),
    dict(mode="gru", num_layers=2, bidirectional=True, state_outputs=True,
         use_sequence_length=True),
    dict(mode="lstm", num_layers=1, bidirectional=True, state_outputs=True,
         use_sequence_length=True, lstm_state_clip_min=-0.5, lstm_state_clip_max=0.5),
]


@pytest.mark.parametrize("params", NUMERIC,
                         ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_numeric_gradient_float64(params):
    """<head, d out> in a random direction against central differences, per input."""
    params = dict(params, state_size=3)
    ins = _random_inputs(params)
    rng = np.random.RandomState(1)
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in ins.items()}
    for k, a in arrays.items():
        if k != "sequence_length":
            a.attach_grad()
    with mx.autograd.record():
        res = mx.nd.RNN(**arrays, **params)
    heads = [rng.uniform(-1, 1, o.shape) for o in res]
    mx.autograd.backward(res, [mx.nd.array(h, dtype="float64") for h in heads])

    def f(vals):
        return sum(float((o.asnumpy() * h).sum()) for o, h in zip(_run(params, vals), heads))

    eps = 1e-6
    for k in ins:
        if k == "sequence_length":
            continue
        d = rng.uniform(-1, 1, ins[k].shape)
        plus = f(dict(ins, **{k: ins[k] + eps * d}))
        minus = f(dict(ins, **{k: ins[k] - eps * d}))
        numeric = (plus - minus) / (2 * eps)
        analytic = float((arrays[k].grad.asnumpy() * d).sum())
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(numeric)), (k, numeric, analytic)


# --- semantics without an MXNet CPU reference ---------------------------------------------------
def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _lstm_reference(x, flat, h0, c0, hidden, lo, hi):
    """One-layer LSTM with the cell state clipped to [lo, hi] at every step (cuDNN's clip)."""
    c_in = x.shape[2]
    g = 4 * hidden
    w = flat[:g * c_in].reshape(g, c_in)
    r = flat[g * c_in:g * (c_in + hidden)].reshape(g, hidden)
    bi, bh = np.split(flat[g * (c_in + hidden):], 2)
    h, c, outs = h0, c0, []
    for t in range(x.shape[0]):
        i, f, gg, o = np.split(x[t] @ w.T + bi + h @ r.T + bh, 4, axis=1)
        c = np.clip(_sigmoid(f) * c + _sigmoid(i) * np.tanh(gg), lo, hi)
        h = _sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def test_lstm_state_clip():
    params = dict(mode="lstm", num_layers=1, state_size=4, state_outputs=True,
                  lstm_state_clip_min=-0.2, lstm_state_clip_max=0.25)
    ins = _random_inputs(params, t=4, n=3, c=3, dtype="float64")
    res = _run(params, ins)
    ref = _lstm_reference(ins["data"], ins["parameters"], ins["state"][0], ins["state_cell"][0],
                          4, -0.2, 0.25)
    for o, want in zip(res, (ref[0], ref[1][None], ref[2][None])):
        _close(o.asnumpy(), want, 1e-10, 1e-12, "clip")
    assert np.abs(res[2].asnumpy()).max() <= 0.25
    nan = dict(ins, state_cell=np.full_like(ins["state_cell"], np.nan))
    kept = _run(dict(params, lstm_state_clip_nan=True), nan)[2].asnumpy()
    assert not np.isnan(kept).any()
    assert np.isnan(_run(params, nan)[2].asnumpy()).any()
    with pytest.raises(MXNetError, match="together"):
        _run(dict(params, lstm_state_clip_max=None), ins)


def test_sequence_length_masks_and_last_states():
    params = dict(mode="gru", num_layers=1, state_size=3, state_outputs=True,
                  use_sequence_length=True)
    ins = _random_inputs(params, t=4, n=2, c=2)
    ins["sequence_length"] = np.array([4, 2], "float64")
    out, hy = (o.asnumpy() for o in _run(params, ins))
    assert (out[2:, 1] == 0).all() and (out[:, 0] != 0).all()
    short = dict(ins, data=ins["data"][:2, 1:], state=ins["state"][:, 1:],
                 sequence_length=np.array([2.0]))
    out2, hy2 = (o.asnumpy() for o in _run(params, short))
    _close(out[:2, 1:], out2, 1e-12, 1e-12, "prefix")
    _close(hy[:, 1:], hy2, 1e-12, 1e-12, "last state")
    with pytest.raises(MXNetError, match="sequence_length"):
        _run(params, dict(ins, sequence_length=np.array([5.0, 1.0])))


def test_nd_sym_parity_and_dtype():
    params = dict(mode="lstm", num_layers=2, bidirectional=True, state_size=5, state_outputs=True)
    ins = _random_inputs(params, t=3, n=4, c=2, dtype="float32")
    nd = _run(params, ins)
    sym = mx.sym.RNN(**{k: mx.sym.Variable(k) for k in ins}, **params)
    ex = sym.bind(mx.cpu(), args={k: mx.nd.array(v) for k, v in ins.items()})
    for a, b in zip(nd, ex.forward()):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    t = sym.infer_type(data="float64")
    assert set(t[0]) == {np.float64} and set(t[1]) == {np.float64}


def test_projection_only_for_lstm():
    params = dict(mode="gru", num_layers=1, state_size=3, projection_size=2)
    ins = _random_inputs(params)
    with pytest.raises(MXNetError, match="projection"):
        _run(params, ins)


def test_dropout_between_layers():
    """Train mode drops the outputs of every layer but the last; the backward replays the same
    masks (the forward's seed is found again from its output), in autograd and the executor."""
    params = dict(mode="lstm", num_layers=2, state_size=8, p=0.5)
    ins = _random_inputs(params, t=3, n=4, c=3, dtype="float32")
    plain = _run(params, ins)[0].asnumpy()
    arrays = {k: mx.nd.array(v) for k, v in ins.items()}
    for a in arrays.values():
        a.attach_grad()
    mx.random.seed(3)
    with mx.autograd.record(train_mode=True):
        out = mx.nd.RNN(**arrays, **params)
    assert not np.allclose(out.asnumpy(), plain)
    assert rnn_op._fingerprint(torch.from_numpy(out.asnumpy())) in rnn_op._SEEDS
    out.backward()
    g1 = arrays["parameters"].grad.asnumpy()
    # the same forward again (same seed) gives the same masks, so the same gradient
    mx.random.seed(3)
    with mx.autograd.record(train_mode=True):
        out2 = mx.nd.RNN(**arrays, **params)
    out2.backward()
    np.testing.assert_array_equal(out.asnumpy(), out2.asnumpy())
    np.testing.assert_allclose(arrays["parameters"].grad.asnumpy(), g1, rtol=1e-6)
    # the executor's backward finds the seed of its forward too
    sym = mx.sym.RNN(**{k: mx.sym.Variable(k) for k in ins}, **params)
    ex = sym.simple_bind(mx.cpu(), data=ins["data"].shape)
    for k, v in ins.items():
        ex.arg_dict[k][:] = v
    mx.random.seed(3)
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(out.shape))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), out.asnumpy())
    np.testing.assert_allclose(ex.grad_dict["parameters"].asnumpy(), g1, rtol=1e-5, atol=1e-6)


def test_param_size_formula():
    p = Params(state_size=4, num_layers=2, bidirectional=True, mode="lstm",
                      projection_size=None)
    assert rnn_op.rnn_param_size(p, 6) == 832
    flat = torch.arange(832.0)
    views = rnn_op.unpack_params(p, flat, 6)
    assert [tuple(v.shape) for v in views[2]] == [(16, 8), (16, 4), (16,), (16,)]
    assert views[0][0].data_ptr() == flat.data_ptr()  # views, not copies
