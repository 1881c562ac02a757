"""Matrix, softmax and loss-head operators and the nd/sym dispatch functions.

* Golden cases from MXNet 1.9.1 (``tests/golden/matrix/``, written by
  ``tools/make_golden_matrix.py``): forward, backward, untouched gradient buffers, output names,
  node attrs, infer_shape/infer_type against the real outputs, nd-vs-sym parity, inference
  results and error texts, and the ``mx.nd.<fn>``/``mx.sym.<fn>`` dispatch functions.
* Numerical gradients in float64: per-element central differences on tiny shapes and a
  random-direction VJP check (JAX ``check_vjp``); loss heads against their closed forms.
"""
from __future__ import annotations

import functools
import json
import os
import re
import warnings
import zlib
from collections import OrderedDict

import numpy as np
import pytest

import neomx as mx
from neomx.ndarray import functions as ndf
from neomx.ops import registry
from neomx.ops.registry import ShapeError
from neomx.symbol import functions as symf

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "golden", "matrix")
SENTINEL = 12345.0
F32_TOL = (1e-5, 1e-6)
LOOSE_F32 = {"softmax": (1e-5, 1e-6), "log_softmax": (1e-5, 1e-5), "softmin": (1e-5, 1e-6),
             "LogisticRegressionOutput": (1e-5, 1e-6)}


# ----------------------------------------------------------------------------- golden data
@functools.lru_cache(maxsize=None)
def _load(stem, with_npz=True):
    with open(os.path.join(GOLDEN, stem + ".json")) as f:
        meta = json.load(f, object_pairs_hook=OrderedDict)
    arrays = {}
    if with_npz:
        with np.load(os.path.join(GOLDEN, stem + ".npz")) as z:
            arrays = {k: z[k] for k in z.files}
    return meta, arrays


def _arr(key, stem="ops"):
    return _load(stem)[1][key]


def _has(key, stem="ops"):
    return key in _load(stem)[1]


CASES = _load("ops")[0]["cases"]
INFER = _load("infer", False)[0]
FUNCS = _load("functions")[0]["cases"]


def _ids(records):
    return [pytest.param(r, id=r["id"]) for r in records]


def _inputs(case):
    return OrderedDict((n, _arr("%s/in/%s" % (case["id"], n))) for n in case["inputs"])


def _outputs(case):
    return [_arr("%s/out%d" % (case["id"], i)) for i in range(case["outputs"])]


def _heads(case):
    return [_arr("%s/head%d" % (case["id"], i)) for i in range(case["outputs"])]


def _grads(case):
    return OrderedDict((n, _arr("%s/grad/%s" % (case["id"], n))) for n in case["grad_inputs"])


def _tol(case):
    return LOOSE_F32.get(case["op"], F32_TOL)


def _params(params):
    """JSON lists back to tuples. An explicit None is passed as the string 'None': neomx's
    generated functions drop None-valued keyword arguments (see test_explicit_none_param)."""
    return {k: (tuple(v) if isinstance(v, list) else ("None" if v is None else v))
            for k, v in params.items()}


def _fresh():
    class _Scopes:
        def __enter__(self):
            self.nm = mx.name.NameManager()
            self.at = mx.AttrScope()
            self.nm.__enter__()
            self.at.__enter__()

        def __exit__(self, *exc):
            self.at.__exit__(*exc)
            self.nm.__exit__(*exc)
    return _Scopes()


def _fn(module, op):
    f = getattr(module, op, None)
    return f if f is not None else getattr(module._internal, op)


def build_symbol(case):
    params = _params(case["params"])
    with _fresh():
        if case["variadic"]:
            return _fn(mx.sym, case["op"])(*[mx.sym.Variable(n) for n in case["inputs"]],
                                           name="op0", **params)
        variables = {n: mx.sym.Variable(n) for n in case["inputs"]}
        return _fn(mx.sym, case["op"])(name="op0", **variables, **params)


def assert_close(actual, expected, rtol, atol, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, "%s: shape %s, MXNet %s" % (what, actual.shape,
                                                                        expected.shape)
    if not np.allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol,
                       atol=atol, equal_nan=True):
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        raise AssertionError("%s mismatch: max |diff| %.3g\ngot:\n%s\nwant:\n%s"
                             % (what, diff.max(), actual, expected))


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _run(case, backward=True):
    sym = build_symbol(case)
    inputs = _inputs(case)
    types = {n: a.dtype for n, a in inputs.items()}
    ex = sym.simple_bind(mx.cpu(), grad_req=case["grad_req"], type_dict=types,
                         **{n: a.shape for n, a in inputs.items()})
    for n, a in inputs.items():
        ex.arg_dict[n][:] = a
    ex.forward(is_train=True)
    if backward and case["grad_inputs"]:
        ex.backward([_nd(h) for h in _heads(case)])
    return ex


# ----------------------------------------------------------------------------- golden tests
@pytest.mark.parametrize("case", _ids(CASES))
def test_forward_matches_mxnet(case):
    ex = _run(case, backward=False)
    outs = [o.asnumpy() for o in ex.outputs]
    assert len(outs) == case["outputs"]
    for i, (o, w) in enumerate(zip(outs, _outputs(case))):
        assert o.dtype.name == case["output_dtypes"][i], "output %d dtype" % i
        assert_close(o, w, *_tol(case), "%s output %d" % (case["id"], i))


@pytest.mark.parametrize("case", _ids([c for c in CASES if c["grad_inputs"]]))
def test_backward_matches_mxnet(case):
    ex = _run(case)
    for n, want in _grads(case).items():
        got = ex.grad_dict[n].asnumpy()
        assert got.dtype == want.dtype, "grad[%s] dtype %s, MXNet %s" % (n, got.dtype, want.dtype)
        if n in case["grads_not_written"]:
            continue  # MXNet leaves it alone: zero from simple_bind on both sides
        assert_close(got, want, *_tol(case), "%s grad[%s]" % (case["id"], n))


@pytest.mark.parametrize("case", _ids([c for c in CASES if c["grad_inputs"]]))
def test_grads_written_or_left_untouched(case):
    sym = build_symbol(case)
    inputs = _inputs(case)
    golden = _grads(case)
    grads = {n: mx.nd.full(a.shape, SENTINEL, dtype=golden[n].dtype) for n, a in inputs.items()}
    ex = sym.bind(mx.cpu(), args={n: _nd(a) for n, a in inputs.items()}, args_grad=grads,
                  grad_req="write")
    ex.forward(is_train=True)
    ex.backward([_nd(h) for h in _heads(case)])
    for n in case["inputs"]:
        got = grads[n].asnumpy()
        if n in case["grads_not_written"]:
            assert np.all(got == SENTINEL), "MXNet leaves grad[%s] untouched" % n
        else:
            assert_close(got, golden[n], *_tol(case), "%s grad[%s] (bind)" % (case["id"], n))


@pytest.mark.parametrize("case", _ids(CASES))
def test_output_names_and_attrs(case):
    sym = build_symbol(case)
    assert sym.list_arguments() == case["inputs"]
    assert sym.list_outputs() == case["output_names"]
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["name"] == "op0"
    assert node.get("attrs", {}) == case["attrs"]


@pytest.mark.parametrize("case", _ids(CASES))
def test_infer_shape_and_type_match_outputs(case):
    sym = build_symbol(case)
    inputs = _inputs(case)
    arg_shapes, out_shapes, aux = sym.infer_shape(**{n: a.shape for n, a in inputs.items()})
    assert [list(s) for s in out_shapes] == case["out_shapes"]
    assert [tuple(s) for s in arg_shapes] == [a.shape for a in inputs.values()]
    arg_types, out_types, _ = sym.infer_type(**{n: a.dtype for n, a in inputs.items()})
    assert [np.dtype(t).name for t in out_types] == case["output_dtypes"]


@pytest.mark.parametrize("case", _ids(CASES))
def test_nd_matches_sym(case):
    """``mx.nd.<op>`` on the golden inputs gives MXNet's (and so the executor's) outputs."""
    inputs = _inputs(case)
    f = _fn(mx.nd, case["op"])
    params = _params(case["params"])
    if case["variadic"]:
        res = f(*[_nd(a) for a in inputs.values()], **params)
    else:
        res = f(**{n: _nd(a) for n, a in inputs.items()}, **params)
    res = res if isinstance(res, list) else [res]
    want = _outputs(case)
    assert len(res) == len(want)
    for i, (r, w) in enumerate(zip(res, want)):
        assert r.dtype == w.dtype
        assert_close(r.asnumpy(), w, *_tol(case), "%s nd output %d" % (case["id"], i))


def test_every_golden_case_is_covered():
    ops = {c["op"] for c in CASES}
    assert {"Concat", "concat", "stack", "SliceChannel", "split", "transpose", "expand_dims",
            "squeeze", "slice_axis", "slice", "crop", "tile", "repeat", "clip", "where", "one_hot",
            "topk", "Cast", "cast", "softmax", "log_softmax", "softmin",
            "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
            "MakeLoss", "make_loss"} <= ops
    assert len(CASES) == 97


def test_explicit_none_param():
    x = mx.sym.var("x")
    s = mx.sym.topk(x, k=2, axis=None)
    assert json.loads(s.tojson())["nodes"][-1]["attrs"]["axis"] == "None"
    assert mx.nd.topk(mx.nd.array([[1, 5], [3, 2]]), k=2, axis=None).shape == (2,)


# ----------------------------------------------------------------------------- inference records
def _core_message(msg):
    """The human part of an MXNet error: after 'Error in operator X: ' and any 'Check failed:
    <condition>: ' prefix."""
    msg = msg.strip()
    if msg.endswith(":"):  # no human part (transpose's bare CHECK): the operator prefix only
        return msg.split(":", 1)[0]
    return msg.rsplit(": ", 1)[-1].strip()


# A zero-size slice, (1, 0), reads as "unknown" in neomx's legacy shape convention (0 = unknown).
INFER_DEVIATIONS = {
    "slice_empty": (None, None),
}
# Records whose code passes a Python None that neomx's generated functions drop.


def _run_code(code):
    ns = {"mx": mx}
    with _fresh():
        exec(code, ns)
    return ns["sym"]


def _fmt(res, method):
    if method == "infer_type":
        return [None if ts is None else [None if t is None else np.dtype(t).name for t in ts]
                for ts in res]
    return [None if ss is None else [None if s is None else list(s) for s in ss] for ss in res]


@pytest.mark.parametrize("rec", _ids(INFER["infer"]))
def test_inference_matches_mxnet(rec):
    sym = _run_code(rec["code"])
    assert sym.list_arguments() == rec["arguments"]
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in rec["kwargs"].items()}
    method = getattr(sym, rec["method"])
    if "error_message" in rec:
        with pytest.raises(mx.MXNetError) as ei:
            method(**kwargs)
        core = _core_message(rec["error_message"])
        assert core in str(ei.value), "MXNet: %r\nneomx: %s" % (rec["error_message"], ei.value)
        return
    if rec["id"] in INFER_DEVIATIONS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = method(**kwargs)
        args, outs = INFER_DEVIATIONS[rec["id"]]
        if args is None:
            assert res[0] is None and res[1] is None
        else:
            assert [tuple(s) for s in res[0]] == args and [tuple(s) for s in res[1]] == outs
        return
    res = method(**kwargs)
    assert _fmt(res, rec["method"]) == rec["result"]


# MXNet names a node after the Python function used (the alias), neomx after the op's hint.


@pytest.mark.parametrize("rec", _ids(INFER["names"]))
def test_names_match_mxnet(rec):
    sym = _run_code(rec["code"])
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["op"] == rec["op"]
    assert node.get("attrs", {}) == rec["attrs"]
    assert sym.list_arguments() == rec["list_arguments"]
    assert sym.list_outputs() == rec["list_outputs"]


@pytest.mark.parametrize("op,params,ins,outs", [
    ("SliceChannel", {"num_outputs": 2}, [(2, 5)], [None, None]),
    ("Concat", {"num_args": 2, "dim": 0}, [(2, 3), (2, 4)], [None]),
    ("stack", {"num_args": 2}, [(2, 3), (2, 4)], [None]),
    ("transpose", {"axes": (0, 0)}, [(2, 3)], [None]),
    ("transpose", {"axes": (1, -1, 0)}, [(2, 3, 4)], [None]),
    ("expand_dims", {"axis": 3}, [(2, 3)], [None]),
    ("squeeze", {"axis": (0, 0)}, [(1, 3, 1)], [None]),
    ("slice", {"begin": (0,), "end": (1, 1)}, [(2, 3)], [None]),
    ("topk", {"k": 4}, [(2, 3)], [None]),
    ("where", {}, [(3,), (2, 3), (2, 3)], [None]),
    ("where", {}, [None, (2, 3), (2, 4)], [None]),
    ("softmax", {"use_length": True, "axis": 0}, [(2, 4), (2,)], [None]),
    ("LinearRegressionOutput", {}, [(4, 3), (4, 2)], [None]),
    ("MAERegressionOutput", {}, [(4, 3), (3, 4)], [None]),
])
def test_bad_shapes_raise_shape_error(op, params, ins, outs):
    """Shape rules raise ShapeError themselves (the executor adds the node name)."""
    opdef = registry.get(op)
    p, _ = opdef.parse_params(params)
    with pytest.raises(ShapeError):
        opdef.infer_shape(p, ins, outs)


def test_backward_shape_inference():
    """Shapes flow from outputs back to inputs where the rule allows it."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.elemwise_add(mx.sym.Concat(a, b, dim=0), mx.sym.var("c"))
    # MXNet 1.9.1's Concat never infers an input's concatenated dimension backwards, and counts
    # a wholly unknown input as size 0 (so the sum here is 2, against c's 5): MXNet raises this
    with pytest.raises(mx.MXNetError, match=r"Incompatible attr in node elemwise_add0 at 1-th "
                                            r"input: expected \[2,3\], got \[5,3\]"):
        with mx.name.NameManager():
            a, b = mx.sym.var("a"), mx.sym.var("b")
            mx.sym.elemwise_add(mx.sym.Concat(a, b, dim=0), mx.sym.var("c")).infer_shape(
                a=(2, 3), c=(5, 3))
    t = mx.sym.elemwise_add(mx.sym.transpose(a, axes=(1, 0, 2)), mx.sym.var("c"))
    assert t.infer_shape(c=(4, 2, 3))[0] == [(2, 4, 3), (4, 2, 3)]
    e = mx.sym.elemwise_add(mx.sym.expand_dims(a, axis=1), mx.sym.var("c"))
    assert e.infer_shape(c=(2, 1, 3))[0] == [(2, 3), (2, 1, 3)]


# ----------------------------------------------------------------------------- dispatch functions
def _fn_operand(rec, side, stem="functions"):
    v = rec[side]
    if v == "array" and "error_type" not in rec:
        return mx.nd.array(_arr("%s/%s" % (rec["id"], side), stem))
    return v


@pytest.mark.parametrize("rec", _ids([r for r in FUNCS if r.get("module") == "nd"]))
def test_nd_functions_match_mxnet(rec):
    fn = getattr(ndf, rec["fn"])
    lhs, rhs = _fn_operand(rec, "lhs"), _fn_operand(rec, "rhs")
    if "error_type" in rec:
        lhs, rhs = mx.nd.ones((2,)), rec["rhs"]
        with pytest.raises(TypeError, match=re.escape(rec["error"])):
            fn(lhs, rhs)
        return
    out = fn(lhs, rhs)
    if rec["result"] == "array":
        want = _arr("%s/out" % rec["id"], "functions")
        assert isinstance(out, mx.nd.NDArray)
        assert out.dtype == want.dtype
        assert_close(out.asnumpy(), want, 1e-5, 1e-6, rec["id"])
    else:
        assert out == rec["result"] and type(out).__name__ == rec["result_type"]


# MXNet's hint comes from the alias the Python wrapper calls (_internal._RPowerScalar ->
# '_rpowerscalar'); neomx uses one hint per op.


@pytest.mark.parametrize("rec", _ids([r for r in FUNCS if r.get("module") == "sym"]))
def test_sym_functions_match_mxnet(rec):
    fn = getattr(symf, rec["fn"])
    args = [mx.sym.var(n) if rec[side] == "symbol" else rec[side]
            for n, side in (("a", "lhs"), ("b", "rhs"))]
    with _fresh():
        out = fn(*args)
    if rec["result"] != "symbol":
        assert out == rec["result"] and type(out).__name__ == rec["result_type"]
        return
    assert isinstance(out, mx.sym.Symbol)
    nodes = json.loads(out.tojson())["nodes"]
    assert [(n["op"], n.get("attrs", {})) for n in nodes] == [
        (n["op"], n["attrs"]) for n in rec["nodes"]]
    assert out.list_arguments() == rec["list_arguments"]
    feed = {n: mx.nd.array(_arr("%s/%s" % (rec["id"], n), "functions"))
            for n in rec["list_arguments"]}
    got = out.bind(mx.cpu(), feed).forward()[0].asnumpy()
    assert_close(got, _arr("%s/out" % rec["id"], "functions"), 1e-5, 1e-6, rec["id"])
    names = [n["name"] for n in nodes]
    want = [n["name"] for n in rec["nodes"]]
    assert names == want


def test_function_type_errors():
    with pytest.raises(TypeError):
        symf.maximum(mx.sym.var("a"), "x")
    with pytest.raises(TypeError):
        symf.pow([1], mx.sym.var("a"))
    with pytest.raises(TypeError):
        ndf.subtract(mx.nd.ones((2,)), None)


def test_nd_function_scalar_forms_and_logical_fallback():
    a = mx.nd.array([[0, 1, -2], [3, 0, 0.5]])
    assert np.array_equal(ndf.subtract(1, a).asnumpy(), 1 - a.asnumpy())
    assert np.array_equal(ndf.greater(1, a).asnumpy(), (1 > a.asnumpy()).astype(np.float32))
    assert np.array_equal(ndf.power(2, a).asnumpy(), np.power(2, a.asnumpy()))
    for s in (0, 2.0):
        an = a.asnumpy() != 0
        assert np.array_equal(ndf.logical_and(a, s).asnumpy(), (an & bool(s)).astype(np.float32))
        assert np.array_equal(ndf.logical_or(s, a).asnumpy(), (an | bool(s)).astype(np.float32))
        assert np.array_equal(ndf.logical_xor(a, s).asnumpy(), (an ^ bool(s)).astype(np.float32))
    i32 = mx.nd.array([1, 2, 3], dtype="int32")
    assert ndf.maximum(i32, 2).dtype == np.int32
    out = mx.nd.zeros((3, 4))
    ndf.onehot_encode(mx.nd.array([1, 3, 0]), out)
    assert np.array_equal(out.asnumpy(), np.eye(4, dtype=np.float32)[[1, 3, 0]])
    assert set(ndf.__all__) >= {"maximum", "minimum", "power", "add", "equal", "logical_xor"}
    assert set(symf.__all__) == {"pow", "power", "maximum", "minimum", "hypot", "split_v2",
                                 "histogram"}


# ----------------------------------------------------------------------------- numeric gradients
def _r(key):
    return np.random.RandomState(zlib.crc32(key.encode()) & 0x7FFFFFFF)


def _distinct(r, shape):
    n = int(np.prod(shape))
    return r.permutation(n).reshape(shape) * 0.3 - n * 0.1


def _away(r, shape, bounds, gap=0.05):
    """Values in [-1.5, 1.5] at least ``gap`` away from each bound (clip's kinks)."""
    x = r.uniform(-1.5, 1.5, shape)
    for b in bounds:
        near = np.abs(x - b) < gap
        x[near] = b + np.where(x[near] >= b, gap, -gap) * 2
    return x


# id, op, params, {input: (generator(r) -> float64 array or (array, dtype))}, variadic
NUMERIC = [
    ("concat", "Concat", {"dim": 1}, lambda r: [r.randn(2, 2), r.randn(2, 3)], True),
    ("concat_neg", "Concat", {"dim": -1}, lambda r: [r.randn(2, 1, 2), r.randn(2, 1, 1)], True),
    ("stack", "stack", {"axis": 1}, lambda r: [r.randn(2, 3), r.randn(2, 3)], True),
    ("split", "SliceChannel", {"num_outputs": 2}, lambda r: {"data": r.randn(2, 4)}, False),
    ("split_squeeze", "SliceChannel", {"num_outputs": 3, "axis": 0, "squeeze_axis": True},
     lambda r: {"data": r.randn(3, 2)}, False),
    ("transpose", "transpose", {"axes": (1, 2, 0)}, lambda r: {"data": r.randn(2, 3, 2)}, False),
    ("transpose_rev", "transpose", {}, lambda r: {"data": r.randn(2, 3)}, False),
    ("expand_dims", "expand_dims", {"axis": -1}, lambda r: {"data": r.randn(2, 3)}, False),
    ("squeeze", "squeeze", {"axis": 0}, lambda r: {"data": r.randn(1, 3, 1)}, False),
    ("slice_axis", "slice_axis", {"axis": 1, "begin": -3, "end": None},
     lambda r: {"data": r.randn(2, 4)}, False),
    ("slice", "slice", {"begin": (None, 3), "end": (1, None), "step": (1, -2)},
     lambda r: {"data": r.randn(3, 4)}, False),
    ("slice_step", "slice", {"begin": (0, 1), "end": (3, 4), "step": (2, 2)},
     lambda r: {"data": r.randn(3, 4)}, False),
    ("tile", "tile", {"reps": (2, 1, 2)}, lambda r: {"data": r.randn(2, 3)}, False),
    ("repeat_flat", "repeat", {"repeats": 2}, lambda r: {"data": r.randn(2, 3)}, False),
    ("repeat_axis", "repeat", {"repeats": 3, "axis": -2}, lambda r: {"data": r.randn(2, 2, 2)},
     False),
    ("clip", "clip", {"a_min": -0.5, "a_max": 0.7},
     lambda r: {"data": _away(r, (3, 4), (-0.5, 0.7))}, False),
    ("where", "where", {}, lambda r: {"condition": (r.randint(-1, 2, (3, 2)), None),
                                      "x": r.randn(3, 2), "y": r.randn(3, 2)}, False),
    ("where_1d", "where", {}, lambda r: {"condition": (np.array([0., 2., -1.]), None),
                                         "x": r.randn(3, 2), "y": r.randn(3, 2)}, False),
    ("topk_value", "topk", {"k": 2, "ret_typ": "value"}, lambda r: {"data": _distinct(r, (3, 4))},
     False),
    ("topk_both_axis0", "topk", {"k": 2, "ret_typ": "both", "axis": 0},
     lambda r: {"data": _distinct(r, (3, 4))}, False),
    ("topk_flat", "topk", {"k": 3, "ret_typ": "value", "axis": "None", "is_ascend": True},
     lambda r: {"data": _distinct(r, (2, 3))}, False),
    ("cast", "Cast", {"dtype": "float64"}, lambda r: {"data": r.randn(2, 3)}, False),
    ("softmax", "softmax", {}, lambda r: {"data": r.randn(2, 4)}, False),
    ("softmax_axis0_t", "softmax", {"axis": 0, "temperature": 2.0},
     lambda r: {"data": r.randn(3, 2, 2)}, False),
    ("softmax_length", "softmax", {"use_length": True},
     lambda r: {"data": r.randn(3, 4), "length": (np.array([2, 4, 1]), np.int32)}, False),
    ("log_softmax", "log_softmax", {"axis": 1, "temperature": 0.5},
     lambda r: {"data": r.randn(2, 3, 2)}, False),
    ("softmin", "softmin", {"temperature": 1.5}, lambda r: {"data": r.randn(2, 4)}, False),
    ("chain", "_chain", {}, lambda r: {"a": r.randn(2, 3), "b": r.randn(2, 3)}, False),
]


def _numeric_symbol(op, params, names, variadic):
    if op == "_chain":  # a small graph mixing several of the ops
        a, b = mx.sym.var("a"), mx.sym.var("b")
        c = mx.sym.Concat(a, mx.sym.clip(b, a_min=-5.0, a_max=5.0), dim=0)
        s = mx.sym.softmax(mx.sym.transpose(c), axis=0)
        parts = mx.sym.SliceChannel(mx.sym.tile(s, reps=(1, 2)), num_outputs=2, axis=1)
        return mx.sym.elemwise_mul(parts[0], mx.sym.slice_axis(parts[1], axis=0, begin=0,
                                                               end=None))
    with _fresh():
        if variadic:
            return _fn(mx.sym, op)(*[mx.sym.var(n) for n in names], name="op0", **params)
        return _fn(mx.sym, op)(name="op0", **{n: mx.sym.var(n) for n in names}, **params)


class _Problem:
    """A float64 executor plus f(x) = sum_i <out_i, head_i> over float outputs."""

    def __init__(self, cid, op, params, gen, variadic):
        r = _r(cid)
        raw = gen(r)
        if isinstance(raw, list):
            raw = {"arg%d" % i: a for i, a in enumerate(raw)}
        self.inputs, self.wrt = OrderedDict(), []
        for n, v in raw.items():
            if isinstance(v, tuple):  # (array, dtype or None): not differentiated
                arr, dt = v
                self.inputs[n] = np.asarray(arr, dtype=dt or np.float64)
            else:
                self.inputs[n] = np.asarray(v, dtype=np.float64)
                self.wrt.append(n)
        self.sym = _numeric_symbol(op, params, list(self.inputs), variadic)
        assert self.sym.list_arguments() == list(self.inputs)
        self.ex = self.sym.simple_bind(
            mx.cpu(), grad_req={n: "write" if n in self.wrt else "null" for n in self.inputs},
            type_dict={n: a.dtype for n, a in self.inputs.items()},
            **{n: a.shape for n, a in self.inputs.items()})
        outs = self.value_outputs(self.inputs)
        self.heads = [r.randn(*o.shape) if o.dtype == np.float64 else np.zeros(o.shape, o.dtype)
                      for o in outs]

    def value_outputs(self, values):
        for n, a in values.items():
            self.ex.arg_dict[n][:] = a
        return [o.asnumpy() for o in self.ex.forward(is_train=True)]

    def f(self, values):
        return sum(float(np.sum(o.astype(np.float64) * h))
                   for o, h in zip(self.value_outputs(values), self.heads))

    def grads(self):
        self.value_outputs(self.inputs)
        self.ex.backward([mx.nd.array(h, dtype=h.dtype) for h in self.heads])
        return {n: self.ex.grad_dict[n].asnumpy() for n in self.wrt}


NUMERIC_IDS = [pytest.param(*c, id=c[0]) for c in NUMERIC]


@pytest.mark.parametrize("cid,op,params,gen,variadic", NUMERIC_IDS)
def test_numeric_gradient_per_element(cid, op, params, gen, variadic):
    pb = _Problem(cid, op, params, gen, variadic)
    analytic = pb.grads()
    eps = 1e-6
    for n in pb.wrt:
        assert analytic[n].dtype == np.float64
        num = np.zeros_like(pb.inputs[n])
        for idx in np.ndindex(*pb.inputs[n].shape):
            vals = OrderedDict((k, v.copy()) for k, v in pb.inputs.items())
            vals[n][idx] += eps
            fp = pb.f(vals)
            vals[n][idx] -= 2 * eps
            fm = pb.f(vals)
            num[idx] = (fp - fm) / (2 * eps)
        assert_close(analytic[n], num, 1e-6, 1e-8, "%s d/d%s" % (cid, n))


@pytest.mark.parametrize("cid,op,params,gen,variadic", NUMERIC_IDS)
def test_numeric_gradient_random_direction(cid, op, params, gen, variadic):
    """<t, vjp(head)> == <head, (f(x + eps t) - f(x - eps t)) / 2eps> for a random t."""
    pb = _Problem(cid, op, params, gen, variadic)
    analytic = pb.grads()
    r = _r(cid + "/dir")
    t = {n: r.randn(*pb.inputs[n].shape) for n in pb.wrt}
    eps = 1e-6
    plus = OrderedDict((k, v + eps * t[k] if k in t else v) for k, v in pb.inputs.items())
    minus = OrderedDict((k, v - eps * t[k] if k in t else v) for k, v in pb.inputs.items())
    lhs = sum(float(np.sum(t[n] * analytic[n])) for n in pb.wrt)
    rhs = (pb.f(plus) - pb.f(minus)) / (2 * eps)
    assert abs(lhs - rhs) <= 1e-7 + 1e-6 * abs(rhs), (lhs, rhs)


def test_non_differentiable_inputs_get_zero_grads():
    """where's condition and one_hot's indices get a written zero gradient, as in MXNet."""
    c, x, y = mx.sym.var("c"), mx.sym.var("x"), mx.sym.var("y")
    for sym, shapes in ((mx.sym.where(c, x, y), {"c": (3,), "x": (3, 2), "y": (3, 2)}),
                        (mx.sym.one_hot(c, depth=3), {"c": (4,)})):
        grads = {n: mx.nd.full(s, SENTINEL) for n, s in shapes.items()}
        args = {n: mx.nd.array(np.arange(np.prod(s)).reshape(s) % 2) for n, s in shapes.items()}
        ex = sym.bind(mx.cpu(), args=args, args_grad=grads)
        out = ex.forward(is_train=True)[0]
        ex.backward(mx.nd.ones(out.shape))
        assert np.all(grads["c"].asnumpy() == 0)


# ----------------------------------------------------------------------------- loss heads
def _loss_grad(op, params, data, label):
    x, lab = mx.sym.var("data"), mx.sym.var("label")
    s = _fn(mx.sym, op)(data=x, label=lab, **params)
    ex = s.simple_bind(mx.cpu(), grad_req={"data": "write", "label": "null"},
                       type_dict={"data": np.float64, "label": np.float64},
                       data=data.shape, label=label.shape)
    ex.arg_dict["data"][:] = data
    ex.arg_dict["label"][:] = label
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward(mx.nd.array(np.full(out.shape, 7.0)))  # ignored by loss heads
    return out, ex.grad_dict["data"].asnumpy()


@pytest.mark.parametrize("op,gs,dshape,lshape", [
    ("LinearRegressionOutput", 1.0, (4, 3), (4, 3)),
    ("LinearRegressionOutput", 2.0, (4, 1), (4,)),
    ("LogisticRegressionOutput", 0.5, (3, 2, 2), (3, 2, 2)),
    ("LogisticRegressionOutput", 1.0, (5, 1), (5,)),
    ("MAERegressionOutput", 3.0, (2, 5), (2, 5)),
])
def test_regression_heads_closed_form_float64(op, gs, dshape, lshape):
    r = _r(op + str(dshape))
    data, label = r.randn(*dshape), r.randn(*lshape)
    out, grad = _loss_grad(op, {"grad_scale": gs}, data, label)
    m = label.size / label.shape[0]
    y = 1 / (1 + np.exp(-data)) if op.startswith("Logistic") else data
    diff = y - label.reshape(dshape)
    want = gs / m * (np.where(diff > 0, 1.0, -1.0) if op.startswith("MAE") else diff)
    assert_close(out, y, 1e-12, 1e-14, "forward")
    assert_close(grad, want, 1e-12, 1e-14, "grad")


@pytest.mark.parametrize("params,scale", [
    ({}, 1.0), ({"grad_scale": 2.0}, 2.0), ({"normalization": "batch"}, 1 / 3),
    ({"normalization": "valid", "valid_thresh": 0.5}, None),
])
def test_makeloss_in_a_graph(params, scale):
    """MakeLoss on top of a computation: d/dx of sum(MakeLoss(f(x))) = scale * f'(x)."""
    x = mx.sym.var("x")
    s = mx.sym.MakeLoss(mx.sym.square(x), **params)
    data = _r("makeloss").randn(3, 4)
    ex = s.simple_bind(mx.cpu(), type_dict={"x": np.float64}, x=data.shape)
    ex.arg_dict["x"][:] = data
    ex.forward(is_train=True)
    ex.backward()
    if scale is None:
        scale = 1.0 / max(1, int(np.sum(data ** 2 > 0.5)))
    assert_close(ex.grad_dict["x"].asnumpy(), scale * 2 * data, 1e-12, 1e-14, "grad")
    m = mx.sym.make_loss(mx.sym.square(x))
    ex = m.simple_bind(mx.cpu(), type_dict={"x": np.float64}, x=data.shape)
    ex.arg_dict["x"][:] = data
    ex.forward(is_train=True)
    ex.backward()
    assert_close(ex.grad_dict["x"].asnumpy(), 2 * data, 1e-12, 1e-14, "make_loss grad")
