"""``mx.nd.contrib`` / ``mx.sym.contrib`` operators (neomx/ops/contrib_*.py) against MXNet 1.9.1
golden values (tests/golden/contrib, written by tools/make_golden_contrib.py): forward and
backward through a bound executor, ``mx.nd.contrib`` vs MXNet's, shape inference and JSON
attributes, and MXNet's error texts for bad shapes.

Each case is rebuilt as the generator built it: ``mx.sym.contrib.<op>(*variables, name='op0',
**params)`` with one Variable per argument, in fresh name and attribute scopes.
"""
from __future__ import annotations

import functools
import json
import os
from collections import OrderedDict

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), "golden", "contrib")
TOL_DEFAULT = (1e-5, 1e-6)
TOL = {"ROIAlign": (1e-5, 1e-5)}


@functools.lru_cache(maxsize=None)
def _golden():
    with open(os.path.join(GOLDEN, "contrib.json")) as f:
        meta = json.load(f, object_pairs_hook=OrderedDict)
    with np.load(os.path.join(GOLDEN, "contrib.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


META, ARR = _golden()


def fn(ns, op):
    """``mx.<ns>.contrib.<op>`` (or ``mx.<ns>.<op>``), None if neomx lacks it."""
    mod = getattr(mx, ns)
    return getattr(mod.contrib, op, None) or getattr(mod, op, None)


def params_of(rec):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in rec["params"].items()}


def _ids(recs):
    return [pytest.param(r, id=r["id"], marks=() if fn("sym", r["op"]) else
                         pytest.mark.skip(reason=r["op"] + " not in neomx")) for r in recs]


def get(case, key):
    return ARR["%s/%s" % (case["id"], key)]


def inputs_of(case):
    return OrderedDict((n, get(case, "in/" + n)) for n in case["inputs"])


def build(op, names, params):
    with mx.name.NameManager(), mx.AttrScope():
        variables = [mx.sym.Variable(n) for n in names]
        return fn("sym", op)(*variables, name="op0", **params)


def close(got, want, tol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, MXNet %s" % (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol[0], atol=tol[1], err_msg=what)


CASES = META["cases"]


@pytest.mark.parametrize("case", _ids(CASES))
def test_forward_backward_match_mxnet(case):
    sym = build(case["op"], case["inputs"], params_of(case))
    assert sym.list_arguments() == case["inputs"]
    inputs = inputs_of(case)
    wanted = case["grad_inputs"]
    grads = {n: mx.nd.zeros(inputs[n].shape, dtype=inputs[n].dtype) for n in wanted}
    req = {n: ("write" if n in wanted else "null") for n in inputs}
    ex = sym.bind(mx.cpu(), args={n: mx.nd.array(a, dtype=a.dtype) for n, a in inputs.items()},
                  args_grad=grads, grad_req=req)
    tol = TOL.get(case["op"], TOL_DEFAULT)
    outs = ex.forward(is_train=True)
    assert len(outs) == len(case["out_shapes"])
    for i, o in enumerate(outs):
        assert o.dtype == np.dtype(case["out_dtypes"][i])
        close(o.asnumpy(), get(case, "out%d" % i), tol, "output %d" % i)
    if not wanted:
        return
    ex.backward([mx.nd.array(get(case, "head%d" % i), dtype=outs[i].dtype)
                 for i in range(len(outs))])
    for n in wanted:
        close(grads[n].asnumpy(), get(case, "grad/" + n), tol, "grad[%s]" % n)


@pytest.mark.parametrize("case", _ids([c for c in CASES if c["nd_outputs"]]))
def test_nd_matches_mxnet(case):
    res = fn("nd", case["op"])(*[mx.nd.array(a, dtype=a.dtype)
                                 for a in inputs_of(case).values()], **params_of(case))
    res = res if isinstance(res, (list, tuple)) else [res]
    assert len(res) == case["nd_outputs"]
    for i, o in enumerate(res):
        close(o.asnumpy(), get(case, "nd_out%d" % i), TOL.get(case["op"], TOL_DEFAULT),
              "nd output %d" % i)


@pytest.mark.parametrize("case", _ids(CASES))
def test_infer_shape_and_json_match_mxnet(case):
    sym = build(case["op"], case["inputs"], params_of(case))
    shapes = {n: a.shape for n, a in inputs_of(case).items()}
    res = sym.infer_shape(**shapes)
    assert [[list(s) for s in part] for part in res] == case["infer_shape"]
    assert sym.list_outputs() == case["list_outputs"]
    js = json.loads(sym.tojson())
    assert js["nodes"][-1].get("attrs", {}) == case["attrs"]
    ptr = js["node_row_ptr"]
    assert ptr[-1] - ptr[-2] == case["node_num_outputs"]


@pytest.mark.parametrize("rec", _ids([e for e in META["errors"] if "shapes" in e]))
def test_shape_errors_match_mxnet(rec):
    def run():
        sym = build(rec["op"], [n for n, _ in rec["shapes"]], params_of(rec))
        if rec.get("dtypes"):
            sym.infer_type(**rec["dtypes"])
        return sym.infer_shape(**{n: tuple(s) for n, s in rec["shapes"]})
    if rec.get("error") is None:
        run()
        return
    with pytest.raises(MXNetError) as info:
        run()
    want = rec["error_message"]
    if not want.startswith("Error in operator"):
        want = "Error in operator op0: " + want
    assert str(info.value) == want


@pytest.mark.parametrize("rec", _ids([e for e in META["errors"] if "inputs" in e]))
def test_nd_errors_match_mxnet(rec):
    args = [mx.nd.array(get(rec, "in/" + n), dtype=get(rec, "in/" + n).dtype)
            for n in rec["inputs"]]
    if rec.get("error") is None:
        fn("nd", rec["op"])(*args, **params_of(rec)).wait_to_read()
        return
    with pytest.raises(MXNetError) as info:
        fn("nd", rec["op"])(*args, **params_of(rec)).wait_to_read()
    assert str(info.value) == rec["error_message"]
