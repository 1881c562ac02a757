"""Golden values for the elementwise math operators of ``neomx/ops/math.py``: forward values
(float32, float64, float16, edge values, integer inputs), gradients where MXNet defines them,
the symbols' JSON, and error messages of bad calls.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_math.py

Writes ``tests/golden/math/math.json``.
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import err_info, fresh_scopes, golden_dir, rng_for, write_json

import mxnet as mx

# op -> (low, high) of the random inputs (inside the op's domain, away from kinks)
UNARY = OrderedDict([
    ("sin", (-3, 3)), ("cos", (-3, 3)), ("tan", (-1.2, 1.2)), ("arcsin", (-0.9, 0.9)),
    ("arccos", (-0.9, 0.9)), ("arctan", (-3, 3)), ("sinh", (-2, 2)), ("cosh", (-2, 2)),
    ("arcsinh", (-3, 3)), ("arccosh", (1.1, 4)), ("arctanh", (-0.9, 0.9)),
    ("degrees", (-3, 3)), ("radians", (-200, 200)), ("erf", (-2, 2)), ("erfinv", (-0.9, 0.9)),
    ("gamma", (0.2, 5)), ("gammaln", (0.2, 8)), ("log1p", (-0.5, 3)), ("expm1", (-2, 2)),
    ("log2", (0.1, 5)), ("log10", (0.1, 5)), ("rsqrt", (0.2, 5)), ("cbrt", (-8, 8)),
    ("rcbrt", (0.2, 8)), ("trunc", (-4, 4)), ("rint", (-4, 4)), ("fix", (-4, 4)),
    ("softsign", (-3, 3)), ("logical_not", (-2, 2)),
    # already in neomx, checked here for MXNet's rounding and integer semantics
    ("round", (-4, 4)), ("ceil", (-4, 4)), ("floor", (-4, 4)),
])
PARAM_UNARY = [  # (id, op, params, low, high)
    ("smooth_l1_1", "smooth_l1", {"scalar": 1.0}, -3, 3),
    ("smooth_l1_half", "smooth_l1", {"scalar": 0.5}, -6, 6),
    ("smooth_l1_2", "smooth_l1", {"scalar": 2.0}, -1, 1),
    ("hard_sigmoid", "hard_sigmoid", {}, -4, 4),
    ("hard_sigmoid_ab", "hard_sigmoid", {"alpha": 0.3, "beta": 0.4}, -4, 4),
]
EDGE = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 100.0, -100.0, 1e-8,
        0.49999997, float("inf"), float("-inf"), float("nan")]
INTS = [-3, -2, -1, 0, 1, 2, 3, 7]
CONTRIB = [  # (id, op, params, low, high): mx.nd.contrib.<op without _contrib_>
    ("round_ste", "_contrib_round_ste", {}, -4, 4),
    ("sign_ste", "_contrib_sign_ste", {}, -2, 2),
    ("quadratic", "_contrib_quadratic", {"a": 1.5, "b": -2.0, "c": 0.5}, -3, 3),
    ("div_sqrt_dim", "_contrib_div_sqrt_dim", {}, -3, 3),
]
SCALAR_OPS = [  # (id, op, scalar)
    ("hypot_scalar", "_hypot_scalar", 2.5), ("hypot_scalar_0", "_hypot_scalar", 0.0),
    ("and_scalar_0", "_logical_and_scalar", 0.0), ("and_scalar_1", "_logical_and_scalar", 1.5),
    ("or_scalar_0", "_logical_or_scalar", 0.0), ("or_scalar_1", "_logical_or_scalar", -2.0),
    ("xor_scalar_0", "_logical_xor_scalar", 0.0), ("xor_scalar_1", "_logical_xor_scalar", 1.0),
]
BINARY = [  # (id, op, lhs shape, rhs shape)
    ("hypot", "_hypot", (3, 4), (3, 4)),
    ("broadcast_hypot", "broadcast_hypot", (3, 1), (1, 4)),
    ("broadcast_hypot_rank", "broadcast_hypot", (2, 3, 4), (4,)),
]
ERRORS = [
    "mx.nd.hard_sigmoid(mx.nd.array([1, 2], dtype='int32'))",
    "mx.nd.sin(mx.nd.ones((2,)), foo=1)",
    "mx.nd.smooth_l1(mx.nd.ones((2,)))",
    "mx.nd.hard_sigmoid(mx.nd.ones((2,)), alpha='x')",
    "mx.nd._internal._hypot(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))",
    "mx.nd.broadcast_hypot(mx.nd.ones((2, 3)), mx.nd.ones((4,)))",
    "mx.nd._internal._hypot(mx.nd.ones((2,)), mx.nd.ones((2,), dtype='float64'))",
]


def fn(op):
    if op.startswith("_contrib_"):
        return getattr(mx.nd.contrib, op[len("_contrib_"):])
    return getattr(mx.nd, op, None) or getattr(mx.nd._internal, op)


def symfn(op):
    if op.startswith("_contrib_"):
        return getattr(mx.sym.contrib, op[len("_contrib_"):])
    return getattr(mx.sym, op, None) or getattr(mx.sym._internal, op)


def run(op, arrays, params, grad):
    """forward (and backward with a seeded head gradient) -> record"""
    rec = OrderedDict()
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    try:
        y = fn(op)(*xs, **params)
        rec["out"] = y.asnumpy().tolist()
        rec["out_dtype"] = str(y.dtype.__name__ if hasattr(y.dtype, "__name__") else y.dtype)
    except mx.base.MXNetError as e:
        rec["error"] = err_info(e)["error_message"]
        return rec
    if grad:
        for x in xs:
            x.attach_grad()
        hg = rng_for(op + "/head" + str(y.shape)).uniform(-1, 1, y.shape).astype(arrays[0].dtype)
        rec["head_grad"] = hg.tolist()
        try:
            with mx.autograd.record():
                y = fn(op)(*xs, **params)
            y.backward(mx.nd.array(hg, dtype=hg.dtype))
            rec["grads"] = [x.grad.asnumpy().tolist() for x in xs]
        except mx.base.MXNetError as e:
            rec["grad_error"] = err_info(e)["error_message"]
    return rec


def unary_cases(cid, op, params, lo, hi):
    r = rng_for("math/" + cid)
    cases = []
    inputs = [("f32", r.uniform(lo, hi, (3, 4)).astype(np.float32), True),
              ("f64", r.uniform(lo, hi, (5,)).astype(np.float64), True),
              ("f16", r.uniform(lo, hi, (4,)).astype(np.float16), False),
              ("edge", np.array(EDGE, dtype=np.float32), False),
              ("int32", np.array(INTS, dtype=np.int32), False),
              ("int64", np.array(INTS, dtype=np.int64), False)]
    for kind, x, grad in inputs:
        rec = OrderedDict([("id", cid + "/" + kind), ("op", op), ("params", params),
                           ("inputs", [x.tolist()]), ("dtype", str(x.dtype))])
        rec.update(run(op, [x], params, grad))
        cases.append(rec)
    return cases


def main():
    out = OrderedDict([("mxnet_version", mx.__version__), ("generator", "tools/make_golden_math.py"),
                       ("cases", []), ("errors", []), ("json", OrderedDict())])
    for op, (lo, hi) in UNARY.items():
        out["cases"] += unary_cases(op, op, {}, lo, hi)
    for cid, op, params, lo, hi in PARAM_UNARY + CONTRIB:
        out["cases"] += unary_cases(cid, op, params, lo, hi)
    for cid, op, s in SCALAR_OPS:
        r = rng_for("math/" + cid)
        for kind, x, grad in [("f32", r.uniform(-3, 3, (3, 4)).astype(np.float32), True),
                              ("edge", np.array(EDGE, dtype=np.float32), False),
                              ("int32", np.array(INTS, dtype=np.int32), False)]:
            rec = OrderedDict([("id", cid + "/" + kind), ("op", op), ("params", {"scalar": s}),
                               ("inputs", [x.tolist()]), ("dtype", str(x.dtype))])
            rec.update(run(op, [x], {"scalar": s}, grad))
            out["cases"].append(rec)
    for cid, op, sa, sb in BINARY:
        r = rng_for("math/" + cid)
        for kind, dt in [("f32", np.float32), ("f64", np.float64)]:
            a, b = r.uniform(-3, 3, sa).astype(dt), r.uniform(-3, 3, sb).astype(dt)
            rec = OrderedDict([("id", cid + "/" + kind), ("op", op), ("params", {}),
                               ("inputs", [a.tolist(), b.tolist()]), ("dtype", str(a.dtype))])
            rec.update(run(op, [a, b], {}, True))
            out["cases"].append(rec)
        a, b = r.randint(-5, 6, sa).astype(np.int32), r.randint(-5, 6, sb).astype(np.int32)
        rec = OrderedDict([("id", cid + "/int32"), ("op", op), ("params", {}),
                           ("inputs", [a.tolist(), b.tolist()]), ("dtype", "int32")])
        rec.update(run(op, [a, b], {}, False))
        out["cases"].append(rec)
    for code in ERRORS:
        try:
            eval(code).asnumpy()
            out["errors"].append({"code": code, "error": None})
        except mx.base.MXNetError as e:
            out["errors"].append({"code": code, "error": err_info(e)["error_message"]})
    sym_ops = [(op, {}) for op in UNARY] + [(op, p) for _, op, p, _, _ in PARAM_UNARY[::2]]
    sym_ops += [(op, {"scalar": s}) for _, op, s in SCALAR_OPS[::2]]
    sym_ops += [("_hypot", None), ("broadcast_hypot", None)]
    sym_ops += [(op, p) for _, op, p, _, _ in CONTRIB]
    for op, params in sym_ops:
        with fresh_scopes():
            if params is None:
                s = symfn(op)(mx.sym.var("a"), mx.sym.var("b"))
            else:
                s = symfn(op)(mx.sym.var("x"), **params)
            out["json"][op + str(sorted((params or {}).items()))] = {
                "op": op, "params": params, "json": s.tojson()}
    d = golden_dir("math")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "math.json"), out)
    print("wrote", d, len(out["cases"]), "cases")


if __name__ == "__main__":
    main()
