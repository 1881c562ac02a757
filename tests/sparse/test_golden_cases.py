"""Sparse arrays and operators against MXNet 1.9.1: storage types, values, stored positions,
fallback warnings and errors of every expression in tests/golden/sparse/cases.json."""
from __future__ import annotations

import numpy as np
import pytest

from ._golden import describe, evaluate, inputs, load, positions

CASES = {k: v for k, v in load("cases.json")["cases"].items() if k != "__first__"}
# MXNet 1.9.1's RowSparseNDArray.retain forgets to pass the array on (gs_retain(*args)); the
# neomx method keeps the documented meaning, checked in test_arrays.py.
SKIP = {"r.retain(idx)", "mx.nd.sparse.gs_retain(r, idx)"}


@pytest.fixture(scope="module")
def env():
    return inputs()


@pytest.mark.parametrize("expr", [k for k in CASES if k not in SKIP])
def test_case(env, expr):
    want = CASES[expr]
    got, fallback = evaluate(expr, env)
    if "error" in want:
        assert isinstance(got, Exception), f"{expr}: MXNet raises {want['error']}, got {got!r}"
        assert type(got).__name__ == want["error"] or (
            want["error"] == "MXNetError" and type(got).__mro__[-3].__name__ == "RuntimeError"), \
            f"{expr}: {type(got).__name__} instead of {want['error']}: {got}"
        return
    assert not isinstance(got, Exception), f"{expr} raised {got!r}"
    have = describe(got)
    assert have["stype"] == want["stype"]
    assert have["class"] == want["class"]
    assert have["dtype"] == want["dtype"]
    assert have["shape"] == want["shape"]
    np.testing.assert_allclose(have["value"], np.array(want["value"], dtype=have["value"].dtype),
                               rtol=1e-5, atol=1e-5)
    assert positions(have) == positions(want)
    if want["stype"] == "csr":  # (order-free values: compare the dense form above, sizes here)
        assert have["indptr"] == want["indptr"]
    assert fallback == want["fallback"], f"{expr}: fallback warning {fallback}, MXNet {want['fallback']}"


def test_fallback_message_is_mxnets(env):
    """The warning's text is MXNet's log message (its parameters in MXNet's order)."""
    import warnings
    import neomx as mx
    for rec in load("cases.json")["fallback"].values():
        if not rec["text"]:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            eval(rec["expr"], env).asnumpy()  # noqa: S307
        texts = [str(w.message) for w in caught
                 if issubclass(w.category, mx.nd.sparse.StorageFallbackWarning)]
        want = rec["text"].split("\n", 1)[1].strip()  # (without MXNet's time and source line)
        assert [t.strip() for t in texts] == [want]
