"""Golden steps of MXNet 1.9.1's optimizer update operators (``neomx/ops/optimizer_ops.py``):
a few consecutive imperative steps of each op (``out=weight``, states updated in place) for
several parameter sets, the mixed-precision ``mp_`` forms on float16 weights, ``multi_sum_sq``,
``multi_lars``, ``all_finite``, ``multi_all_finite``, ``reset_arrays``, and bad calls.

Run inside the oracle, from the repository root (this CPU build of MXNet sometimes crashes at
the end of a run after its float16 kernels fail: run it again if no "wrote" line appears)::

    tools/mxnet-oracle tools/make_golden_optimizer_ops.py

Writes ``tests/golden/math/optimizer_ops.json``; with ``--adamw`` (a separate run, see
``main_adamw``) ``tests/golden/math/contrib_optimizer.json``.
"""
import os
from collections import OrderedDict

import numpy as np

from _oracle_common import err_info, golden_dir, rng_for, write_json

import mxnet as mx

SHAPE = (3, 4)
COMMON = [{}, {"wd": 0.01, "rescale_grad": 0.5}, {"wd": 0.1, "clip_gradient": 0.3}]
# (op, states (name, init: 'zeros' | 'pos' | 'rand'), base params, extra param sets)
OPS = [
    ("sgd_update", [], {"lr": 0.1}, COMMON),
    ("sgd_mom_update", [("mom", "zeros")], {"lr": 0.1, "momentum": 0.9}, COMMON),
    ("nag_mom_update", [("mom", "rand")], {"lr": 0.1, "momentum": 0.9}, COMMON),
    ("adam_update", [("mean", "zeros"), ("var", "zeros")], {"lr": 0.01},
     COMMON + [{"beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6}]),
    ("rmsprop_update", [("n", "zeros")], {"lr": 0.01},
     COMMON + [{"gamma1": 0.8, "clip_weights": 0.5}]),
    ("rmspropalex_update", [("n", "pos"), ("g", "zeros"), ("delta", "zeros")], {"lr": 0.01},
     COMMON + [{"gamma1": 0.8, "gamma2": 0.7, "clip_weights": 0.5}]),
    ("ftrl_update", [("z", "zeros"), ("n", "zeros")], {"lr": 0.1},
     COMMON + [{"lamda1": 0.2, "beta": 0.5}]),
    ("signsgd_update", [], {"lr": 0.1}, COMMON),
    ("signum_update", [("mom", "zeros")], {"lr": 0.1, "momentum": 0.9},
     COMMON + [{"wd_lh": 0.05}]),
]
# ops whose params differ by step (t)
FTML = ("ftml_update", [("d", "zeros"), ("v", "zeros"), ("z", "zeros")], {"lr": 0.1},
        [{}, {"wd": 0.01, "rescale_grad": 0.5}, {"wd": 0.1, "clip_grad": 0.3},
         {"beta1": 0.5, "beta2": 0.9, "epsilon": 1e-6}])
LAMB1 = ("lamb_update_phase1", [("mean", "zeros"), ("var", "zeros")], {"wd": 0.01},
         [{}, {"rescale_grad": 0.5, "clip_gradient": 0.3}, {"bias_correction": False},
          {"beta1": 0.8, "beta2": 0.9, "epsilon": 1e-4}])
MP = [  # (op, float32 states, params)
    ("mp_sgd_update", [], {"lr": 0.1, "wd": 0.01}),
    ("mp_sgd_mom_update", [("mom", "zeros")], {"lr": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("mp_nag_mom_update", [("mom", "zeros")], {"lr": 0.1, "momentum": 0.9, "clip_gradient": 0.3}),
]
STEPS = 3


def init_state(r, kind, dtype=np.float32):
    if kind == "zeros":
        return np.zeros(SHAPE, dtype)
    if kind == "pos":
        return r.uniform(0.1, 1, SHAPE).astype(dtype)
    return r.uniform(-1, 1, SHAPE).astype(dtype)


def run_steps(cid, op, states, params, dtype=np.float32, mp=False, t_param=False):
    r = rng_for("optimizer/" + cid)
    w0 = r.uniform(-1, 1, SHAPE).astype(dtype)
    st0 = [init_state(r, kind) for _, kind in states]
    grads = [r.uniform(-2, 2, SHAPE).astype(dtype) for _ in range(STEPS)]
    rec = OrderedDict([("id", cid), ("op", op), ("params", params), ("dtype", np.dtype(dtype).name),
                       ("state_names", [n for n, _ in states]), ("weight", w0.tolist()),
                       ("states", [s.tolist() for s in st0]), ("grads", [g.tolist() for g in grads]),
                       ("t_param", t_param), ("mp", mp), ("steps", [])])
    w = mx.nd.array(w0, dtype=dtype)
    st = [mx.nd.array(s) for s in st0]
    if mp:
        st.append(mx.nd.array(w0.astype(np.float32)))
    for k, g in enumerate(grads):
        p = dict(params, t=k + 1) if t_param else params
        getattr(mx.nd, op)(w, mx.nd.array(g, dtype=dtype), *st, out=w, **p)
        rec["steps"].append({"weight": w.asnumpy().tolist(),
                             "states": [s.asnumpy().tolist() for s in st]})
    return rec


def lamb_cases():
    out = []
    for i, extra in enumerate([{}, {"lower_bound": 0.5, "upper_bound": 1.0},
                               {"lower_bound": 10.0}, {"upper_bound": 0.1}]):
        r = rng_for("optimizer/lamb2/%d" % i)
        w, g = r.uniform(-1, 1, SHAPE).astype(np.float32), r.uniform(-1, 1, SHAPE).astype(np.float32)
        r1 = np.array([np.linalg.norm(w)], np.float32)
        r2 = np.array([np.linalg.norm(g)], np.float32)
        if i == 3:
            r2 = np.zeros(1, np.float32)
        params = dict({"lr": 0.1}, **extra)
        res = mx.nd.lamb_update_phase2(*[mx.nd.array(a) for a in (w, g, r1, r2)], **params)
        out.append({"id": "lamb_update_phase2/%d" % i, "params": params,
                    "inputs": [a.tolist() for a in (w, g, r1, r2)], "out": res.asnumpy().tolist()})
    # the whole LAMB step in mixed precision
    r = rng_for("optimizer/mp_lamb")
    w32 = r.uniform(-1, 1, SHAPE).astype(np.float32)
    g = r.uniform(-1, 1, SHAPE).astype(np.float16)
    mean, var = np.zeros(SHAPE, np.float32), np.zeros(SHAPE, np.float32)
    nd = [mx.nd.array(w32, dtype="float16"), mx.nd.array(g, dtype="float16"), mx.nd.array(mean),
          mx.nd.array(var), mx.nd.array(w32)]
    gup = mx.nd.mp_lamb_update_phase1(*nd, t=1, wd=0.01)
    r1, r2 = mx.nd.norm(nd[4]), mx.nd.norm(gup)
    w = mx.nd.mp_lamb_update_phase2(nd[0], gup, r1.reshape((1,)), r2.reshape((1,)), nd[4], lr=0.1,
                                    out=nd[0])
    out.append({"id": "mp_lamb", "weight32": w32.tolist(), "grad": g.astype(np.float32).tolist(),
                "g": gup.asnumpy().tolist(), "mean": nd[2].asnumpy().tolist(),
                "var": nd[3].asnumpy().tolist(), "weight": w.asnumpy().astype(np.float32).tolist(),
                "weight32_after": nd[4].asnumpy().tolist()})
    return out


def misc_cases():
    r = rng_for("optimizer/misc")
    arrays = [r.uniform(-1, 1, s).astype(np.float32) for s in [(3, 4), (5,), (2, 2, 2)]]
    out = OrderedDict()
    out["multi_sum_sq"] = {"inputs": [a.tolist() for a in arrays],
                           "out": mx.nd.multi_sum_sq(*[mx.nd.array(a) for a in arrays],
                                                     num_arrays=3).asnumpy().tolist()}
    lrs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    wsq = np.array([1.0, 0.0, 4.0, 2.0], np.float32)
    gsq = np.array([0.5, 1.0, 0.0, 3.0], np.float32)
    wds = np.array([0.01, 0.0, 0.1, 0.001], np.float32)
    out["multi_lars"] = []
    for params in [{"eta": 0.001, "eps": 1e-8}, {"eta": 0.01, "eps": 0.1, "rescale_grad": 0.5}]:
        res = mx.nd.multi_lars(*[mx.nd.array(a) for a in (lrs, wsq, gsq, wds)], **params)
        out["multi_lars"].append({"params": params, "inputs": [a.tolist() for a in (lrs, wsq, gsq, wds)],
                                  "out": res.asnumpy().tolist()})
    finite = []
    for vals in [[1.0, 2.0], [1.0, float("inf")], [float("nan"), 0.0], [-float("inf")]]:
        a = mx.nd.array(vals)
        finite.append({"data": vals, "all_finite": mx.nd.all_finite(a).asnumpy().tolist(),
                       "dtype16": mx.nd.all_finite(a.astype("float16")).asnumpy().tolist()})
    out["all_finite"] = finite
    multi = []
    for vals in [[[1.0], [2.0, 3.0]], [[1.0], [float("nan"), 3.0]], [[float("inf")], [2.0]]]:
        res = mx.nd.multi_all_finite(*[mx.nd.array(v) for v in vals], num_arrays=len(vals))
        multi.append({"data": vals, "out": res.asnumpy().tolist()})
    out["multi_all_finite"] = multi
    a, b = mx.nd.ones((2, 3)), mx.nd.array([5.0, 6.0])
    res = mx.nd.reset_arrays(a, b, num_arrays=2)
    out["reset_arrays"] = {"a": a.asnumpy().tolist(), "b": b.asnumpy().tolist(),
                           "returns": repr(type(res).__name__) if res is not None else None}
    return out


MULTI_SHAPES = [(2, 3), (4,)]


def multi_cases():
    """The multi-tensor SGD forms: two weights of different shapes, two steps each."""
    out = []
    for pre in (False, True):
        for mp in (False, True):
            for mom in (False, True):
                op = ("preloaded_" if pre else "") + "multi_" + ("mp_" if mp else "") + \
                    ("sgd_mom_update" if mom else "sgd_update")
                for v, extra in enumerate([{}, {"rescale_grad": 0.5, "clip_gradient": 0.4}]):
                    cid = "%s/%d" % (op, v)
                    r = rng_for("optimizer/" + cid)
                    dt = np.float16 if mp else np.float32
                    lrs, wds = (0.1, 0.05), (0.01, 0.0)
                    params = dict(extra, num_weights=2)
                    if mom:
                        params["momentum"] = 0.9
                    if not pre:
                        params.update(lrs=lrs, wds=wds)
                    ws = [r.uniform(-1, 1, s).astype(dt) for s in MULTI_SHAPES]
                    grads = [[r.uniform(-2, 2, s).astype(dt) for s in MULTI_SHAPES] for _ in range(2)]
                    w_nd = [mx.nd.array(w, dtype=dt) for w in ws]
                    moms = [mx.nd.zeros(s) for s in MULTI_SHAPES]
                    w32 = [mx.nd.array(w.astype(np.float32)) for w in ws]
                    rec = OrderedDict([("id", cid), ("op", op), ("params", params),
                                       ("dtype", np.dtype(dt).name), ("mp", mp), ("mom", mom),
                                       ("preloaded", pre), ("lrs", lrs), ("wds", wds),
                                       ("weights", [w.tolist() for w in ws]),
                                       ("grads", [[g.tolist() for g in gs] for gs in grads]),
                                       ("steps", [])])
                    for gs in grads:
                        data = []
                        for i in range(2):
                            data += [w_nd[i], mx.nd.array(gs[i], dtype=dt)]
                            if mom:
                                data.append(moms[i])
                            if mp:
                                data.append(w32[i])
                        if pre:
                            data += [mx.nd.array(lrs), mx.nd.array(wds)]
                        getattr(mx.nd, op)(*data, out=w_nd, **params)
                        rec["steps"].append({"weights": [w.asnumpy().tolist() for w in w_nd],
                                             "moms": [m.asnumpy().tolist() for m in moms],
                                             "weight32": [w.asnumpy().tolist() for w in w32]})
                    out.append(rec)
    return out


def adamw_cases():
    """mx.nd.contrib.adamw_update / mp_adamw_update (the _adamw_update operators): steps with a
    rescale_grad array, including 0 and NaN (no update)."""
    out = []
    variants = [("adamw/0", {"lr": 0.01, "eta": 1.0}, [0.5, 1.0, 2.0], False),
                ("adamw/1", {"lr": 0.1, "eta": 0.5, "wd": 0.1, "clip_gradient": 0.3,
                             "beta1": 0.8, "beta2": 0.9, "epsilon": 1e-6}, [1.0, 0.0, 1.0], False),
                ("adamw/2", {"lr": 0.01, "eta": 1.0, "wd": 0.01}, [float("nan"), 1.0, 0.25], False),
]  # (mp_adamw_update on float16 crashes this CPU build of MXNet: tested against adamw)
    for cid, params, rescales, mp in variants:
        r = rng_for("optimizer/" + cid)
        dt = np.float16 if mp else np.float32
        w0 = r.uniform(-1, 1, SHAPE).astype(dt)
        grads = [r.uniform(-2, 2, SHAPE).astype(dt) for _ in rescales]
        w = mx.nd.array(w0, dtype=dt)
        mean, var = mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)
        w32 = mx.nd.array(w0.astype(np.float32))
        rec = OrderedDict([("id", cid), ("params", params), ("mp", mp), ("dtype", np.dtype(dt).name),
                           ("weight", w0.tolist()), ("grads", [g.tolist() for g in grads]),
                           ("rescales", rescales), ("steps", [])])
        for g, rs in zip(grads, rescales):
            gnd, rnd = mx.nd.array(g, dtype=dt), mx.nd.array([rs])
            if mp:
                mx.nd.contrib.mp_adamw_update(w, gnd, mean, var, w32, rnd, out=w, **params)
            else:
                mx.nd.contrib.adamw_update(w, gnd, mean, var, rnd, out=w, **params)
            rec["steps"].append({"weight": w.asnumpy().astype(np.float64).tolist(),
                                 "mean": mean.asnumpy().tolist(), "var": var.asnumpy().tolist(),
                                 "weight32": w32.asnumpy().tolist()})
        out.append(rec)
    return out


def amp_cases():
    """amp_cast / amp_multicast: result dtypes and values, symbol outputs and types. float64 is
    left out: this CPU build's MKL-DNN kernels reject it (and an asynchronous failure there can
    hang the process)."""
    vals = [1.5, 2.25, -3.1, 0.5, -2.5]
    out = OrderedDict([("cast", []), ("multicast", [])])
    for src in ("float32", "float16", "int32"):
        for dt in ("float16", "float32", "int32"):
            x = mx.nd.array(vals, dtype=src)
            try:
                r = mx.nd.amp_cast(x, dtype=dt)
                res = r.asnumpy().astype(np.float64).tolist()
            except mx.base.MXNetError as e:  # float64 in this build's MKL-DNN kernel
                out["cast"].append({"src": src, "dtype": dt,
                                    "error": err_info(e)["error_message"]})
                continue
            out["cast"].append({"src": src, "dtype": dt, "out_dtype": np.dtype(r.dtype).name,
                                "out": res})
    for types in (("float32", "float16"), ("float32", "int32"),
                  ("float16", "int32"), ("int32", "int32"), ("float16", "float16", "float32")):
        for narrow in (False, True):
            xs = [mx.nd.array(vals, dtype=t) for t in types]
            rs = mx.nd.amp_multicast(*xs, num_outputs=len(xs), cast_narrow=narrow)
            rec = {"types": types, "cast_narrow": narrow,
                   "out_dtypes": [np.dtype(r.dtype).name for r in rs]}
            try:
                rec["out"] = [r.asnumpy().astype(np.float64).tolist() for r in rs]
            except mx.base.MXNetError as e:  # float64 in this build's MKL-DNN kernel
                rec["error"] = err_info(e)["error_message"]
            out["multicast"].append(rec)
    s = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
    out["multicast_sym"] = {"outputs": s.list_outputs(),
                            "types": [np.dtype(t).name for t in s.infer_type(a="float32", b="float16")[1]],
                            "json": s.tojson()}
    out["cast_json"] = mx.sym.amp_cast(mx.sym.var("a"), dtype="float16").tojson()
    return out


ERRORS = [
    "mx.nd.sgd_update(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))",
    "mx.nd.sgd_update(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)), lr=0.1)",
    "mx.nd.sgd_mom_update(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)), mx.nd.ones((3,)), lr=0.1)",
    "mx.nd.adam_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((2,)), lr='a')",
    "mx.nd.ftml_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((2,)), "
    "mx.nd.ones((2,)), lr=0.1)",
]


def main():
    out = OrderedDict([("mxnet_version", mx.__version__),
                       ("generator", "tools/make_golden_optimizer_ops.py"), ("steps", [])])
    for op, states, base, extras in OPS + [FTML, LAMB1]:
        for i, extra in enumerate(extras):
            out["steps"].append(run_steps("%s/%d" % (op, i), op, states, dict(base, **extra),
                                          t_param=op in ("ftml_update", "lamb_update_phase1")))
    for op, states, params in MP:
        out["steps"].append(run_steps(op, op, states, params, dtype=np.float16, mp=True))
    out["lamb"] = lamb_cases()
    out["misc"] = misc_cases()
    out["multi"] = multi_cases()
    out["errors"] = []
    for code in ERRORS:
        try:
            eval(code).asnumpy()
            out["errors"].append({"code": code, "error": None})
        except mx.base.MXNetError as e:
            out["errors"].append({"code": code, "error": err_info(e)["error_message"]})
    out["amp"] = amp_cases()  # (last: its float16 failures in this build can upset later work)
    d = golden_dir("math")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "optimizer_ops.json"), out)
    print("wrote", d, len(out["steps"]), "step cases")


def multi_adamw_cases():
    """mx.nd.contrib.multi_adamw_update (the _multi_adamw_update operator), float32."""
    out = []
    for v, (rescale, extra) in enumerate([(1.0, {}), (0.5, {"clip_gradient": 0.3, "beta1": 0.8}),
                                          (float("inf"), {})]):
        r = rng_for("optimizer/multi_adamw/%d" % v)
        ws = [r.uniform(-1, 1, s).astype(np.float32) for s in MULTI_SHAPES]
        grads = [[r.uniform(-2, 2, s).astype(np.float32) for s in MULTI_SHAPES] for _ in range(2)]
        params = dict(extra, lrs=(0.01, 0.02), wds=(0.0, 0.1), etas=(1.0, 0.5))
        w_nd = [mx.nd.array(w) for w in ws]
        means = [mx.nd.zeros(s) for s in MULTI_SHAPES]
        vars_ = [mx.nd.zeros(s) for s in MULTI_SHAPES]
        rec = OrderedDict([("id", "multi_adamw/%d" % v), ("params", params), ("rescale", rescale),
                           ("weights", [w.tolist() for w in ws]),
                           ("grads", [[g.tolist() for g in gs] for gs in grads]), ("steps", [])])
        for gs in grads:
            mx.nd.contrib.multi_adamw_update(w_nd, [mx.nd.array(g) for g in gs], means, vars_,
                                             rescale, out=w_nd, **params)
            rec["steps"].append({"weights": [w.asnumpy().tolist() for w in w_nd],
                                 "means": [m.asnumpy().tolist() for m in means],
                                 "vars": [m.asnumpy().tolist() for m in vars_]})
        out.append(rec)
    return out


def multi_lamb_cases():
    """mx.nd.contrib.multi_lamb_update (the _multi_lamb_update operator), float32."""
    out = []
    for v, extra in enumerate([{}, {"lower_bound": 0.5, "upper_bound": 2.0, "rescale_grad": 0.5},
                               {"bias_correction": False, "clip_gradient": 0.3, "beta1": 0.8}]):
        r = rng_for("optimizer/multi_lamb/%d" % v)
        ws = [r.uniform(-1, 1, s).astype(np.float32) for s in MULTI_SHAPES]
        grads = [[r.uniform(-2, 2, s).astype(np.float32) for s in MULTI_SHAPES] for _ in range(2)]
        w_nd = [mx.nd.array(w) for w in ws]
        means = [mx.nd.zeros(s) for s in MULTI_SHAPES]
        vars_ = [mx.nd.zeros(s) for s in MULTI_SHAPES]
        rec = OrderedDict([("id", "multi_lamb/%d" % v), ("params", extra),
                           ("lrs", [0.1, 0.05]), ("wds", [0.01, 0.0]),
                           ("weights", [w.tolist() for w in ws]),
                           ("grads", [[g.tolist() for g in gs] for gs in grads]), ("steps", [])])
        for k, gs in enumerate(grads):
            mx.nd.contrib.multi_lamb_update(w_nd, [mx.nd.array(g) for g in gs], means, vars_,
                                            step_count=[k + 1, k + 2], lrs=rec["lrs"],
                                            wds=rec["wds"], out=w_nd, **extra)
            rec["steps"].append({"weights": [w.asnumpy().tolist() for w in w_nd],
                                 "means": [m.asnumpy().tolist() for m in means],
                                 "vars": [m.asnumpy().tolist() for m in vars_]})
        out.append(rec)
    return out


def main_adamw():
    """The contrib optimizers (AdamW, multi-tensor AdamW and LAMB) in a process of its own: after it, this CPU build of MXNet 1.9.1 crashes in later
    work (heap corruption), so it cannot share the run with the other cases."""
    out = OrderedDict([("mxnet_version", mx.__version__),
                       ("generator", "tools/make_golden_optimizer_ops.py --adamw"),
                       ("adamw", adamw_cases()), ("multi_adamw", multi_adamw_cases()),
                       ("multi_lamb", multi_lamb_cases())])
    write_json(os.path.join(golden_dir("math"), "contrib_optimizer.json"), out)
    print("wrote contrib_optimizer.json")


if __name__ == "__main__":
    import sys
    main_adamw() if "--adamw" in sys.argv else main()
