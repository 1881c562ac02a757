"""Every single-op / small-graph case recorded from MXNet 1.9.1 (tests/golden/foundation/ops.*):
rebuild the symbol the way the generator did, simple_bind on cpu with the recorded grad_req,
forward(is_train=True), backward with the recorded head gradients, and compare outputs and
gradients (plus which gradient buffers MXNet leaves untouched, and the op node's attrs)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import neomx as mx

from . import _helpers as H

ALL = H.cases()
OP_CASES = [c for c in ALL if c["op"] != "_graph"]
GRAPH_CASES = [c for c in ALL if c["op"] == "_graph"]

# (case, how the symbol is built): graph cases run both from the stored code and from MXNet's JSON
BUILDS = ([pytest.param(c, "code", id=c["id"]) for c in ALL]
          + [pytest.param(c, "json", id=c["id"] + "-json") for c in GRAPH_CASES])


def _run(case, how):
    sym = H.build_symbol(case, how)
    assert sym.list_arguments() == case["inputs"], "list_arguments differs from MXNet's"
    assert sym.list_auxiliary_states() == case["aux"]
    inputs = H.case_inputs(case)
    ex = H.simple_bind(sym, inputs, grad_req=case["grad_req"])
    inits = H.case_grad_inits(case)
    for n, g in inits.items():
        ex.grad_dict[n][:] = g
    heads = H.case_heads(case)
    for _ in range(case["backward_runs"]):
        ex.forward(is_train=True)
        if H.grad_enabled(case):
            ex.backward([mx.nd.array(h) for h in heads])
    return ex


@pytest.mark.parametrize("case,how", BUILDS)
def test_forward_matches_mxnet(case, how):
    ex = _run(case, how)
    outs = H.outputs_np(ex)
    want = H.case_outputs(case)
    assert len(outs) == len(want), "number of outputs"
    rtol, atol = H.tol_for(case["op"])
    for i, (o, w) in enumerate(zip(outs, want)):
        assert np.dtype(o.dtype) == np.dtype(w.dtype), "output %d dtype %s, MXNet %s" % (
            i, o.dtype, w.dtype)
        H.assert_close(o, w, rtol, atol, "%s output %d" % (case["id"], i))


@pytest.mark.parametrize("case,how", BUILDS)
def test_forward_only_matches_mxnet(case, how):
    """The same forward with grad_req='null' (no gradient graph built): isolates forward bugs
    from gradient-construction failures at bind time."""
    sym = H.build_symbol(case, how)
    ex = H.simple_bind(sym, H.case_inputs(case), grad_req="null")
    outs = ex.forward(is_train=False)
    rtol, atol = H.tol_for(case["op"])
    for i, (o, w) in enumerate(zip(outs, H.case_outputs(case))):
        H.assert_close(o.asnumpy(), w, rtol, atol, "%s output %d (grad_req=null)" % (case["id"], i))


GRAD_BUILDS = [p for p in BUILDS if H.grad_enabled(p.values[0])]


@pytest.mark.parametrize("case,how", GRAD_BUILDS)
def test_backward_matches_mxnet(case, how):
    ex = _run(case, how)
    rtol, atol = H.tol_for(case["op"])
    grads = ex.grad_dict
    for n, want in H.case_grads(case).items():
        got = grads[n]
        assert got is not None, "no gradient array for %s" % n
        H.assert_close(got.asnumpy(), want, rtol, atol, "%s grad[%s]" % (case["id"], n))


SENTINEL_CASES = [pytest.param(c, id=c["id"]) for c in ALL
                  if H.grad_enabled(c) and c["grad_req"] == "write"]


@pytest.mark.parametrize("case", SENTINEL_CASES)
def test_grads_written_or_left_untouched(case):
    """bind with sentinel-filled gradient arrays: MXNet leaves exactly ``grads_not_written``
    untouched (e.g. SoftmaxOutput's label) and writes the golden gradient into the others."""
    sym = H.build_symbol(case)
    inputs = H.case_inputs(case)
    args = {n: mx.nd.array(a) for n, a in inputs.items()}
    grads = {n: mx.nd.full(a.shape, H.SENTINEL) for n, a in inputs.items()}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req="write")
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(h) for h in H.case_heads(case)])
    rtol, atol = H.tol_for(case["op"])
    golden = H.case_grads(case)
    for n in case["inputs"]:
        got = grads[n].asnumpy()
        if n in case["grads_not_written"]:
            assert np.all(got == H.SENTINEL), (
                "MXNet leaves grad[%s] untouched; neomx wrote into it:\n%s" % (n, got))
        else:
            H.assert_close(got, golden[n], rtol, atol, "%s grad[%s] (bind)" % (case["id"], n))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in OP_CASES])
def test_node_attrs_match_mxnet(case):
    sym = H.build_symbol(case)
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["op"] == case["op"]
    assert node["name"] == "op0"
    assert node.get("attrs", {}) == case["attrs"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ALL
                                  if "bind_error_with_grad" in c])
def test_non_differentiable_op_refuses_grad_bind(case):
    """MXNet refuses simple_bind(grad_req='write') for ops without FGradient (argmax_channel)."""
    sym = H.build_symbol(case)
    shapes = {n: a.shape for n, a in H.case_inputs(case).items()}
    with pytest.raises(mx.MXNetError) as ei:
        sym.simple_bind(mx.cpu(), grad_req="write", **shapes)
    msg = case["bind_error_with_grad"]["error_message"]
    core = msg.split(" because")[0]  # "Operator argmax_channel is non-differentiable"
    assert core in str(ei.value)


def test_every_golden_case_is_covered():
    assert len(ALL) == 143
    assert {c["op"] for c in GRAPH_CASES} == {"_graph"}
