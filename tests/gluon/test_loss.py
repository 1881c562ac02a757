"""gluon.loss against MXNet 1.9.1 (fixtures from tools/make_golden_gluon_loss.py): every loss,
with weight and sample_weight, forward and input gradients, imperative and hybridized; reprs and
errors."""
import json
import os

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.gluon import loss as gloss
from neomx.gluon.parameter import GluonAssertionError

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "gluon_loss")
with open(os.path.join(GOLDEN, "gluon_loss.json")) as f:
    SPEC = json.load(f)
ARR = np.load(os.path.join(GOLDEN, "gluon_loss.npz"))
CASES = {c["id"]: c for c in SPEC["cases"]}
ERRORS = {e["id"]: e for e in SPEC["errors"]}


def _run(case, hybridize):
    cid = case["id"]
    loss = getattr(gloss, case["cls"])(**case["kwargs"])
    if hybridize:
        loss.hybridize()
    inputs = []
    for name, present in case["inputs"]:
        if not present:
            inputs.append(None)
            continue
        x = mx.nd.array(ARR[f"{cid}/in/{name}"])
        if name in case["grads"] and case["record"]:
            x.attach_grad()
        inputs.append(x)
    if not case["record"]:
        return loss(*inputs).asnumpy(), {}
    head = mx.nd.array(ARR[f"{cid}/head"])
    for _ in range(2 if hybridize else 1):  # the second hybridized call runs the cached graph
        with mx.autograd.record():
            out = loss(*inputs)
        out.backward(head)
    grads = {name: x.grad.asnumpy() for (name, _), x in zip(case["inputs"], inputs)
             if name in case["grads"] and x is not None}
    return out.asnumpy(), grads


def _close(got, want, what):
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("cid", sorted(CASES))
def test_imperative(cid):
    case = CASES[cid]
    out, grads = _run(case, False)
    _close(out, ARR[f"{cid}/out"], "out")
    for name in grads:
        _close(grads[name], ARR[f"{cid}/grad/{name}"], f"grad of {name}")


@pytest.mark.parametrize("cid", sorted(c for c in CASES if CASES[c]["hybrid"]))
def test_hybridized(cid):
    case = CASES[cid]
    out, grads = _run(case, True)
    _close(out, ARR[f"{cid}/hy_out"], "out")
    for name in grads:
        _close(grads[name], ARR[f"{cid}/hy_grad/{name}"], f"grad of {name}")


def test_every_loss_is_covered():
    covered = {gloss.__dict__[c["cls"]] for c in SPEC["cases"]}
    every = {getattr(gloss, n) for n in gloss.__all__ if n != "Loss"}
    assert every <= covered, every - covered
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    assert mx.gluon.loss is gloss
    assert issubclass(gloss.Loss, mx.gluon.HybridBlock)


@pytest.mark.parametrize("cls,kwargs,text", SPEC["reprs"])
def test_repr(cls, kwargs, text):
    assert repr(getattr(gloss, cls)(**kwargs)) == text


def test_symbolic_call_composes():
    """Called on Symbols a loss builds a graph whose inputs are the given variables."""
    pred, label = mx.sym.var("pred"), mx.sym.var("label")
    out = gloss.SoftmaxCrossEntropyLoss()(pred, label)
    assert out.list_arguments() == ["pred", "label"]
    ex = out.bind(mx.cpu(), {"pred": mx.nd.array(ARR["sce_sparse/in/pred"]),
                             "label": mx.nd.array(ARR["sce_sparse/in/label"])})
    _close(ex.forward()[0].asnumpy(), ARR["sce_sparse/out"], "out")


def _err(eid):
    return ERRORS[eid]["error_message"]


def test_errors():
    a = mx.nd.ones((2, 3))
    with pytest.raises(GluonAssertionError, match=_err("weight_not_number")):
        gloss.L1Loss(weight="2")(a, a)
    with pytest.raises(AssertionError, match=_err("ctc_layout")):
        gloss.CTCLoss(layout="NCT")
    with pytest.raises(GluonAssertionError, match=_err("ctc_label_layout")):
        gloss.CTCLoss(label_layout="TT")
    with pytest.raises(ValueError, match=_err("logistic_label_format")):
        gloss.LogisticLoss(label_format="one")
    with pytest.raises(AssertionError):
        gloss.SDMLLoss()(a, mx.nd.ones((3, 2)))


def test_sdml_needs_shapes():
    s = gloss.SDMLLoss()
    s.hybridize()
    with pytest.raises(AttributeError, match="shape"):
        s(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))


def test_poisson_compute_full_in_place_as_mxnet():
    """MXNet adds the Stirling term in place: impossible under record() and on Symbols."""
    a = mx.nd.ones((2, 3))
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with pytest.raises(MXNetError, match="Assigning to NDArrays that are already in a "
                                         "computational graph"):
        with mx.autograd.record():
            gloss.PoissonNLLLoss(compute_full=True)(x, a * 2)
    p = gloss.PoissonNLLLoss(compute_full=True)
    p.hybridize()
    with pytest.raises(MXNetError, match=r"\*="):
        p(a, a * 2)


def test_label_size_mismatch():
    a = mx.nd.ones((2, 3))
    with pytest.raises((ValueError, MXNetError)):
        gloss.L2Loss()(a, mx.nd.ones((2, 4)))
