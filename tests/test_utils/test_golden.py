"""mx.test_utils against MXNet 1.9.1 (tests/golden/test_utils, tools/make_golden_test_utils.py):
mismatch reports, the symbol checkers passing and failing, chi-square p-values, the random
helpers and small utilities."""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx import test_utils as tu

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "test_utils"
                     / "test_utils.json").read_text())


def run(f):
    """Like the generator's: raised?, str of the AssertionError, captured stdout."""
    out = io.StringIO()
    raised, message = False, ""
    with contextlib.redirect_stdout(out):
        try:
            f()
        except AssertionError as e:
            raised, message = True, str(e)
    return {"raised": raised, "message": message, "stdout": out.getvalue()}


def arrays(case):
    return (np.array(case["a"], dtype=case["a_dtype"]), np.array(case["b"], dtype=case["b_dtype"]))


MISMATCH = {k: v for k, v in GOLDEN["mismatch"].items() if "a" in v}


@pytest.mark.parametrize("key", sorted(MISMATCH))
def test_assert_almost_equal_report_as_mxnet(key):
    case = MISMATCH[key]
    a, b = arrays(case)
    kwargs = dict(case["kwargs"])
    if "names" in kwargs:
        kwargs["names"] = tuple(kwargs["names"])
    if "mismatches" in kwargs:
        kwargs["mismatches"] = tuple(kwargs["mismatches"])
    if key.endswith("_nd"):
        a, b = mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype)
    assert run(lambda: tu.assert_almost_equal(a, b, **kwargs)) == case["result"]


def test_assert_allclose_as_mxnet():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    for key, delta in (("allclose_1e-7", 1e-7), ("allclose_1e-5", 1e-5)):
        got = run(lambda: tu.assert_allclose(a, a + delta))
        assert got == GOLDEN["mismatch"][key]["result"], key


def test_report_leaves_numpy_print_options_alone():
    before = np.get_printoptions()
    run(lambda: tu.assert_almost_equal(np.zeros(9), np.ones(9)))
    assert np.get_printoptions() == before


# --- checkers --------------------------------------------------------------------------------
def checker_cases():
    inputs = GOLDEN["checkers"]["inputs"]
    xv, yv, og = (np.array(inputs[k], dtype=np.float32) for k in ("x", "y", "out_grad"))
    with mx.name.NameManager():
        x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
        mul = x * y
    return {
        "numeric_mul": lambda: tu.check_numeric_gradient(mul, [xv, yv]),
        "numeric_mul_f64": lambda: tu.check_numeric_gradient(mul, [xv, yv], dtype=np.float64),
        "numeric_exp_add_null": lambda: tu.check_numeric_gradient(
            mx.sym.exp(x) + y, {"x": xv, "y": yv}, grad_nodes={"x": "add", "y": "null"}),
        "numeric_blockgrad_wrong": lambda: tu.check_numeric_gradient(
            mx.sym.BlockGrad(x) * y, [xv, yv]),
        "forward_right": lambda: tu.check_symbolic_forward(mul, [xv, yv], [xv * yv]),
        "forward_wrong": lambda: tu.check_symbolic_forward(mul, [xv, yv], [xv * yv + 1]),
        "forward_dict": lambda: tu.check_symbolic_forward(
            mul, {"x": xv, "y": yv}, {mul.list_outputs()[0]: xv * yv}),
        "backward_right": lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], [og * yv, og * xv]),
        "backward_add": lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], {"x": og * yv, "y": og * xv}, grad_req="add"),
        "backward_null": lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], {"x": og * yv, "y": og * xv},
            grad_req={"x": "write", "y": "null"}),
        "backward_wrong": lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], [og * xv, og * xv]),
    }


CHECKERS = sorted(k for k in GOLDEN["checkers"] if k not in ("inputs", "forward_wrong_full"))


@pytest.mark.parametrize("key", CHECKERS)
def test_checkers_pass_and_fail_as_mxnet(key):
    expected = GOLDEN["checkers"][key]
    np.random.seed(0)
    got = run(checker_cases()[key])
    assert got["raised"] == expected["raised"]
    head = "\n".join(got["message"].split("\n")[:3])
    if key.startswith("numeric"):  # finite differences in float32 differ in the last bits
        pattern = re.sub(r"Error [\d.]+ ", r"Error [\\d.]+ ", re.escape(expected["message_head"]))
        assert re.fullmatch(pattern, head), head
    else:
        assert head == expected["message_head"]


def test_forward_report_in_full():
    np.random.seed(0)
    assert run(checker_cases()["forward_wrong"]) == GOLDEN["checkers"]["forward_wrong_full"]


def test_numeric_gradient_report_names_the_argument():
    with mx.name.NameManager():
        x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
        s = mx.sym.BlockGrad(x) * y
    got = run(lambda: tu.check_numeric_gradient(s, [np.ones((2, 2)), np.ones((2, 2))]))
    assert "NUMERICAL_x=" in got["message"] and "BACKWARD_x=" in got["message"]


# --- chi-square, random helpers, small utilities ---------------------------------------------
@pytest.mark.parametrize("key", ["continuous", "discrete_wrong"])
def test_chi_square_check_as_scipy(key):
    case = GOLDEN["chisquare"][key]
    rs = np.random.RandomState(case["samples_seed"])
    n = case["nsamples"]
    samples = rs.normal(size=n) if key == "continuous" else rs.randint(0, 3, size=n)
    buckets = [tuple(b) for b in case["buckets"]] if key == "continuous" else case["buckets"]
    p, obs, exp = tu.chi_square_check(lambda k: samples[:k], buckets, case["probs"], nsamples=n)
    assert obs.tolist() == case["obs"] and exp.tolist() == case["exp"]
    assert p == pytest.approx(case["p"], rel=1e-9, abs=1e-300)


def test_random_helpers_draw_as_mxnet():
    g = GOLDEN["random"]
    np.random.seed(11)
    assert list(tu.rand_shape_2d()) == g["rand_shape_2d"]
    assert list(tu.rand_shape_3d(4, 5, 6)) == g["rand_shape_3d"]
    assert list(tu.rand_shape_nd(4, 7)) == g["rand_shape_nd"]
    assert list(tu.rand_shape_nd(5, 2, allow_zero_size=True)) == g["rand_shape_nd_zero"]
    arrays_ = tu.random_arrays((2,), (1, 2))
    assert [a.dtype for a in arrays_] == [np.float32, np.float32]
    assert [a.tolist() for a in arrays_] == g["random_arrays"]
    assert tu.random_sample(list(range(10)), 4) == g["random_sample"]
    np.random.seed(12)
    nd = tu.rand_ndarray((2, 2))
    assert isinstance(nd, mx.nd.NDArray) and nd.asnumpy().tolist() == g["rand_ndarray"]


def test_small_utilities_as_mxnet():
    g = GOLDEN["misc"]
    dat = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert tu.np_reduce(dat, (0, 2), True, np.sum).tolist() == g["np_reduce_sum_02_keep"]
    assert tu.np_reduce(dat, 1, False, np.max).tolist() == g["np_reduce_max_1"]
    assert tu.np_reduce(dat, None, False, np.sum).tolist() == g["np_reduce_all"]
    assert tu.collapse_sum_like(dat, (3, 1)).tolist() == g["collapse_sum_like"]
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: 2 * q - 1, 4)
    assert [list(b) for b in buckets] == g["buckets"][0] and probs == g["buckets"][1]
    assert str(mx.base.NotImplementedForSymbol(len, "len", 1, "a")) == \
        g["not_implemented_for_symbol"]
    assert str(mx.base.NotImplementedForSymbol(len, None)) == g["not_implemented_no_alias"]
    assert mx.util.is_np_shape() is g["is_np_shape"]
    assert mx.util.set_np_shape(False) is g["set_np_shape_false"]
    assert [list(mx.base._as_list(v)) for v in (1, [1], (1,))] == g["as_list"]
    assert mx.base.py_str(b"abc") == g["py_str"]
    assert [tu.same(np.ones(2), np.ones(2)), tu.same(np.ones(2), np.ones(3))] == g["same"]
    assert [tu.almost_equal(np.ones(2), np.ones(2) + 1e-9),
            tu.almost_equal(np.ones(2), np.ones(2) + 1e-3)] == g["almost_equal"]
