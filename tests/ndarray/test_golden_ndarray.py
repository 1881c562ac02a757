"""NDArray behaviour against MXNet 1.9.1 (ndarray.json): exec ``setup``, eval ``expr``, compare
value/shape/dtype exactly, or the error class and the core of MXNet's message."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

from ._helpers import assert_error_matches, load_golden

CASES = load_golden("ndarray.json")["cases"]

# MXNet texts that come from numpy rather than MXNet: only the parts naming the shapes are
# required (numpy's "operands could not be broadcast together with remapped shapes
# [original->remapped]: (4,) and requested shape (3,)" from np.broadcast_to in __setitem__).
FRAGMENTS = {
    "a.__setitem__(0, nd.ones((4,)))": ["(4,)", "(3,)"],
}


def _id(case):
    setup = case["setup"].replace("\n", "; ")
    return (f"{setup} => " if setup else "") + case["expr"]


def _check_value(got, rec, where="result"):
    kind = rec["type"]
    if kind == "NDArray":
        assert isinstance(got, mx.nd.NDArray), f"{where}: expected an NDArray, got {got!r}"
        assert list(got.shape) == rec["shape"], f"{where}: shape"
        assert np.dtype(got.dtype).name == rec["dtype"], f"{where}: dtype"
        value = got.asnumpy()
        want = np.array(rec["value"], dtype=rec["dtype"])
        assert value.shape == want.shape
        assert np.array_equal(value, want), f"{where}: {value.tolist()} != {rec['value']}"
    elif kind == "type":
        assert isinstance(got, type), f"{where}: expected a numpy type class, got {got!r}"
        assert np.dtype(got).name == rec["value"]
    elif kind == "tuple":
        assert isinstance(got, tuple) and len(got) == len(rec["value"]), f"{where}: {got!r}"
        for i, (g, r) in enumerate(zip(got, rec["value"])):
            _check_value(g, r, f"{where}[{i}]")
    else:
        assert type(got).__name__ == kind, f"{where}: expected {kind}, got {type(got).__name__}"
        assert got == rec["value"], f"{where}: {got!r} != {rec['value']!r}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_ndarray_golden(case):
    ns = {"mx": mx, "nd": mx.nd, "np": np}
    if "error_type" in case:
        with pytest.raises(Exception) as ei:
            exec(case["setup"], ns)
            res = eval(case["expr"], ns)
            if isinstance(res, mx.nd.NDArray):
                res.asnumpy()  # reading the result surfaces asynchronous errors, as recorded
        assert_error_matches(ei.value, case, FRAGMENTS.get(case["expr"]))
    else:
        exec(case["setup"], ns)
        _check_value(eval(case["expr"], ns), case)
