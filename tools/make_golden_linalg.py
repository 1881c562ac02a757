"""Golden values for MXNet 1.9.1's linear-algebra operators (``neomx/ops/linalg.py``): forward
values (float32, float64, batched, transposes, ``axis``, offsets), gradients with a seeded head
gradient for every visible output, the symbols' JSON and output names, and error messages.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_linalg.py

Writes ``tests/golden/linalg/linalg.json``.
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import err_info, fresh_scopes, golden_dir, rng_for, write_json

import mxnet as mx


def gen(r, shape):
    return r.uniform(-1, 1, shape)


def spd(r, shape):
    """Symmetric positive definite matrices (batched)."""
    x = r.uniform(-1, 1, shape)
    n = shape[-1]
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def chol(r, shape):
    """Lower triangular with a positive diagonal (a Cholesky factor); the upper triangle is
    filled with noise (operators must read only the lower triangle)."""
    return tri(r, shape, True, noise=True)


def tri(r, shape, lower, noise=False):
    x = r.uniform(-1, 1, shape)
    n = shape[-1]
    mask = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    d = np.eye(n) * (1.5 + r.uniform(0, 1, shape))
    x = x * mask * (1 - np.eye(n)) + d
    if noise:
        x = x + (1 - mask) * 7.0
    return x


def sym(r, shape):
    x = r.uniform(-1, 1, shape)
    return x + np.swapaxes(x, -1, -2)


def wellcond(r, shape):
    n = shape[-1]
    return r.uniform(-1, 1, shape) + 2.5 * np.eye(n)


def posdiag(r, shape):
    n = shape[-1]
    return r.uniform(-1, 1, shape) * (1 - np.eye(n)) + np.eye(n) * r.uniform(0.5, 2, shape)


# (id, op, params, [input generators (fn, shape)], differentiable)
CASES = [
    ("gemm", "_linalg_gemm", {}, [(gen, (2, 3)), (gen, (3, 4)), (gen, (2, 4))], True),
    ("gemm_ab", "_linalg_gemm", {"alpha": 2.0, "beta": 0.5}, [(gen, (2, 3)), (gen, (3, 4)), (gen, (2, 4))], True),
    ("gemm_ta", "_linalg_gemm", {"transpose_a": True, "beta": -1.5}, [(gen, (3, 2)), (gen, (3, 4)), (gen, (2, 4))], True),
    ("gemm_tb_batch", "_linalg_gemm", {"transpose_b": True, "alpha": 0.7},
     [(gen, (2, 2, 3)), (gen, (2, 4, 3)), (gen, (2, 2, 4))], True),
    ("gemm_tatb", "_linalg_gemm", {"transpose_a": True, "transpose_b": True},
     [(gen, (3, 2)), (gen, (4, 3)), (gen, (2, 4))], True),
    ("gemm_axis", "_linalg_gemm", {"axis": 0}, [(gen, (2, 3, 4)), (gen, (4, 3, 5)), (gen, (2, 3, 5))], True),
    ("gemm2", "_linalg_gemm2", {}, [(gen, (2, 3)), (gen, (3, 4))], True),
    ("gemm2_alpha_ta", "_linalg_gemm2", {"transpose_a": True, "alpha": -1.5}, [(gen, (3, 2)), (gen, (3, 4))], True),
    ("gemm2_tb_batch", "_linalg_gemm2", {"transpose_b": True}, [(gen, (2, 2, 2, 3)), (gen, (2, 2, 4, 3))], True),
    ("gemm2_axis", "_linalg_gemm2", {"axis": -3, "transpose_a": True}, [(gen, (3, 2, 4)), (gen, (3, 2, 5))], True),
    ("gemm2_axis1", "_linalg_gemm2", {"axis": 1}, [(gen, (2, 3, 2, 4)), (gen, (2, 4, 2, 5))], True),
    ("potrf", "_linalg_potrf", {}, [(spd, (3, 3))], True),
    ("potrf_batch", "_linalg_potrf", {}, [(spd, (2, 4, 4))], True),
    ("potri", "_linalg_potri", {}, [(chol, (3, 3))], True),
    ("potri_batch", "_linalg_potri", {}, [(chol, (2, 3, 3))], True),
    ("trsm", "_linalg_trsm", {}, [(chol, (3, 3)), (gen, (3, 4))], True),
    ("trsm_t_alpha", "_linalg_trsm", {"transpose": True, "alpha": 2.0}, [(chol, (3, 3)), (gen, (3, 4))], True),
    ("trsm_right_upper", "_linalg_trsm", {"rightside": True, "lower": False},
     [(lambda r, s: tri(r, s, False, True), (3, 3)), (gen, (2, 3))], True),
    ("trsm_batch_rt", "_linalg_trsm", {"rightside": True, "transpose": True},
     [(chol, (2, 3, 3)), (gen, (2, 4, 3))], True),
    ("trmm", "_linalg_trmm", {}, [(chol, (3, 3)), (gen, (3, 4))], True),
    ("trmm_t_alpha", "_linalg_trmm", {"transpose": True, "alpha": -0.5}, [(chol, (3, 3)), (gen, (3, 4))], True),
    ("trmm_right_upper", "_linalg_trmm", {"rightside": True, "lower": False},
     [(lambda r, s: tri(r, s, False, True), (3, 3)), (gen, (2, 3))], True),
    ("trmm_batch_rt", "_linalg_trmm", {"rightside": True, "transpose": True},
     [(chol, (2, 3, 3)), (gen, (2, 4, 3))], True),
    ("syrk", "_linalg_syrk", {}, [(gen, (2, 3))], True),
    ("syrk_t_alpha", "_linalg_syrk", {"transpose": True, "alpha": 1.5}, [(gen, (2, 3))], True),
    ("syrk_batch", "_linalg_syrk", {}, [(gen, (2, 3, 4))], True),
    ("inverse", "_linalg_inverse", {}, [(wellcond, (3, 3))], True),
    ("inverse_batch", "_linalg_inverse", {}, [(wellcond, (2, 2, 3, 3))], True),
    ("det", "_linalg_det", {}, [(wellcond, (3, 3))], True),
    ("det_batch", "_linalg_det", {}, [(wellcond, (2, 3, 3))], True),
    ("slogdet", "_linalg_slogdet", {}, [(gen, (3, 3))], True),
    ("slogdet_batch", "_linalg_slogdet", {}, [(gen, (2, 2, 3, 3))], True),
    ("sumlogdiag", "_linalg_sumlogdiag", {}, [(posdiag, (3, 3))], True),
    ("sumlogdiag_batch", "_linalg_sumlogdiag", {}, [(posdiag, (2, 4, 4))], True),
    ("extractdiag", "_linalg_extractdiag", {}, [(gen, (3, 3))], True),
    ("extractdiag_off", "_linalg_extractdiag", {"offset": 1}, [(gen, (2, 4, 4))], True),
    ("extractdiag_neg", "_linalg_extractdiag", {"offset": -2}, [(gen, (4, 4))], True),
    ("makediag", "_linalg_makediag", {}, [(gen, (3,))], True),
    ("makediag_off", "_linalg_makediag", {"offset": 2}, [(gen, (2, 3))], True),
    ("makediag_neg", "_linalg_makediag", {"offset": -1}, [(gen, (2, 2, 2))], True),
    ("extracttrian", "_linalg_extracttrian", {}, [(gen, (4, 4))], True),
    ("extracttrian_upper", "_linalg_extracttrian", {"lower": False}, [(gen, (4, 4))], True),
    ("extracttrian_off", "_linalg_extracttrian", {"offset": 1}, [(gen, (2, 4, 4))], True),
    ("extracttrian_neg", "_linalg_extracttrian", {"offset": -1, "lower": False}, [(gen, (4, 4))], True),
    ("maketrian", "_linalg_maketrian", {}, [(gen, (6,))], True),
    ("maketrian_upper", "_linalg_maketrian", {"lower": False}, [(gen, (2, 6))], True),
    ("maketrian_off", "_linalg_maketrian", {"offset": 1}, [(gen, (6,))], True),
    ("maketrian_neg", "_linalg_maketrian", {"offset": -2, "lower": False}, [(gen, (2, 3))], True),
    ("gelqf", "_linalg_gelqf", {}, [(gen, (2, 3))], True),
    ("gelqf_batch", "_linalg_gelqf", {}, [(gen, (2, 3, 3))], True),
    ("syevd", "_linalg_syevd", {}, [(sym, (3, 3))], True),
    ("syevd_batch", "_linalg_syevd", {}, [(sym, (2, 4, 4))], True),
]

ERRORS = [
    "mx.nd.linalg_gemm(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), mx.nd.ones((2, 5)))",
    "mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))",
    "mx.nd.linalg_gemm2(mx.nd.ones((2, 3, 4)), mx.nd.ones((3, 4, 2)))",
    "mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)), axis=1)",
    "mx.nd.linalg_gemm2(mx.nd.ones((2, 3), dtype='int32'), mx.nd.ones((3, 2), dtype='int32'))",
    "mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((3, 2), dtype='float64'))",
    "mx.nd.linalg_potrf(mx.nd.ones((2, 3)))",
    "mx.nd.linalg_potrf(mx.nd.array([[1, 2], [2, 1]]))",
    "mx.nd.linalg_potrf(mx.nd.array([[1, 2], [2, 1]], dtype='float64'))",
    "mx.nd.linalg_potri(mx.nd.ones((2, 3)))",
    "mx.nd.linalg_trsm(mx.nd.ones((2, 2)), mx.nd.ones((3, 2)))",
    "mx.nd.linalg_trsm(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))",
    "mx.nd.linalg_trmm(mx.nd.ones((2, 2)), mx.nd.ones((2, 3)), rightside=True)",
    "mx.nd.linalg_syrk(mx.nd.ones((3,)))",
    "mx.nd.linalg_inverse(mx.nd.zeros((2, 2)))",
    "mx.nd.linalg_inverse(mx.nd.ones((2, 2, 3)))",
    "mx.nd.linalg_det(mx.nd.ones((2, 3)))",
    "mx.nd.linalg_slogdet(mx.nd.ones((3,)))",
    "mx.nd.linalg_sumlogdiag(mx.nd.ones((2, 3)))",
    "mx.nd.linalg_extractdiag(mx.nd.ones((3,)))",
    "mx.nd.linalg_extractdiag(mx.nd.ones((3, 3)), offset=3)",
    "mx.nd.linalg_extracttrian(mx.nd.ones((3, 3)), offset=-3)",
    "mx.nd.linalg_maketrian(mx.nd.ones((4,)))",
    "mx.nd.linalg_makediag(mx.nd.ones((2,), dtype='int32'))",
    "mx.nd.linalg_makediag(mx.nd.ones((2,)), offset='x')",
    "mx.nd.linalg_gelqf(mx.nd.ones((3, 2)))",
    "mx.nd.linalg.syevd(mx.nd.ones((2, 3)))",
    "mx.nd.linalg.syevd(mx.nd.ones((3,)))",
    "mx.nd.linalg_gemm(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), mx.nd.ones((2, 4)), foo=1)",
]


def fn(op):
    # mx.nd.linalg_gemm (== mx.nd.linalg.gemm); syevd is only mx.nd.linalg.syevd
    return getattr(mx.nd, op[1:], None) or getattr(mx.nd.linalg, op[len("_linalg_"):])


def symfn(op):
    return getattr(mx.sym, op[1:], None) or getattr(mx.sym.linalg, op[len("_linalg_"):])


def as_list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def run(cid, op, arrays, params, grad):
    rec = OrderedDict()
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    try:
        ys = as_list(fn(op)(*xs, **params))
        rec["outs"] = [y.asnumpy().tolist() for y in ys]
        rec["out_dtypes"] = [np.dtype(y.dtype).name for y in ys]
    except mx.base.MXNetError as e:
        rec["error"] = err_info(e)["error_message"]
        return rec
    if grad:
        for x in xs:
            x.attach_grad()
        hgs = [rng_for(cid + "/head%d" % i).uniform(-1, 1, y.shape).astype(arrays[0].dtype)
               for i, y in enumerate(ys)]
        rec["head_grads"] = [h.tolist() for h in hgs]
        try:
            with mx.autograd.record():
                ys = as_list(fn(op)(*xs, **params))
            mx.autograd.backward(ys, [mx.nd.array(h, dtype=h.dtype) for h in hgs])
            rec["grads"] = [x.grad.asnumpy().tolist() for x in xs]
        except mx.base.MXNetError as e:
            rec["grad_error"] = err_info(e)["error_message"]
    return rec


def main():
    out = OrderedDict([("mxnet_version", mx.__version__), ("generator", "tools/make_golden_linalg.py"),
                       ("cases", []), ("errors", []), ("symbols", [])])
    for cid, op, params, gens, grad in CASES:
        r = rng_for("linalg/" + cid)
        base = [g(r, s) for g, s in gens]
        for dt in ("float32", "float64"):
            arrays = [b.astype(dt) for b in base]
            rec = OrderedDict([("id", cid + "/" + dt), ("op", op), ("params", params),
                               ("inputs", [a.tolist() for a in arrays]), ("dtype", dt)])
            rec.update(run(cid + "/" + dt, op, arrays, params, grad))
            out["cases"].append(rec)
    for code in ERRORS:
        try:
            res = eval(code)
            for y in as_list(res):
                y.asnumpy()
            out["errors"].append({"code": code, "error": None})
        except mx.base.MXNetError as e:
            out["errors"].append({"code": code, "error": err_info(e)["error_message"]})
    seen = set()
    for cid, op, params, gens, grad in CASES:
        if op in seen:
            continue
        seen.add(op)
        names = ["a", "b", "c"][:len(gens)]
        with fresh_scopes():
            s = symfn(op)(*[mx.sym.var(n) for n in names], **params)
            out["symbols"].append({"op": op, "params": params, "inputs": names, "json": s.tojson(),
                                   "outputs": s.list_outputs()})
    d = golden_dir("linalg")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "linalg.json"), out)
    print("wrote", d, len(out["cases"]), "cases")


if __name__ == "__main__":
    main()
