"""Property tests (hypothesis): shape inference equals the real output shape, and both equal
MXNet 1.9.1's rules (numpy broadcasting, ``InferReshapeShape``, ``ReduceAxesShapeImpl``), for
random shapes, reshape codes and reduction parameters."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import neomx as mx

from . import _helpers as H

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _data(shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


# ----------------------------------------------------------------------------- broadcasting
@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4,
                                                 min_side=1, max_side=4),
       op=st.sampled_from(["broadcast_add", "broadcast_mul"]))
def test_broadcast_shape_inference_is_numpy_broadcasting(shapes, op):
    a_shape, b_shape = shapes.input_shapes
    want = tuple(np.broadcast_shapes(a_shape, b_shape))
    lhs, rhs = mx.sym.Variable("lhs"), mx.sym.Variable("rhs")
    sym = getattr(mx.sym, op)(lhs=lhs, rhs=rhs)
    arg_shapes, out_shapes, _ = sym.infer_shape(lhs=a_shape, rhs=b_shape)
    assert [tuple(s) for s in arg_shapes] == [a_shape, b_shape]
    assert [tuple(s) for s in out_shapes] == [want]
    a, b = _data(a_shape, 1), _data(b_shape, 2)
    res = getattr(mx.nd, op)(mx.nd.array(a), mx.nd.array(b))
    assert res.shape == want
    ref = a + b if op == "broadcast_add" else a * b
    np.testing.assert_allclose(res.asnumpy(), ref, rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------------------- Reshape
@st.composite
def reshape_cases(draw, reverse, split=True):
    """(input shape, a shape code walking the input dims with 0/-1/-2/-3/-4/explicit, reverse)."""
    dshape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    dims = list(reversed(dshape)) if reverse else list(dshape)
    code, i, used_infer = [], 0, False
    while i < len(dims):
        choices = ["copy0", "explicit"] + (["split"] if split else [])
        if not used_infer:
            choices.append("infer")
        if i + 1 < len(dims):
            choices.append("merge")
        choices.append("rest")
        c = draw(st.sampled_from(choices))
        d = dims[i]
        if c == "copy0":
            code.append(0)
            i += 1
        elif c == "explicit":
            code.append(d)
            i += 1
        elif c == "infer":
            code.append(-1)
            used_infer = True
            i += 1
        elif c == "merge":
            code.append(-3)
            i += 2
        elif c == "split":
            divisors = [k for k in range(1, d + 1) if d % k == 0]
            left = draw(st.sampled_from(divisors))
            right = d // left
            form = draw(st.sampled_from(["both", "left_inferred", "right_inferred"]))
            code += [-4, -1 if form == "left_inferred" else left,
                     -1 if form == "right_inferred" else right]
            i += 1
        else:  # rest
            code.append(-2)
            i = len(dims)
    if reverse:
        # MXNet reverses the code and the input shape, runs the same left-to-right rules and
        # reverses the result: pass the code as the user writes it for reverse=True.
        code = list(reversed(code))
    return dshape, tuple(code), reverse


@pytest.mark.parametrize("reverse,split", [(False, True), (True, False)],
                         ids=["forward", "reverse"])
def test_reshape_codes_infer_the_real_output_shape(reverse, split):
    _check_reshape(reverse, split)


def test_reshape_reverse_with_split_code():
    """reverse=True with -4 codes. MXNet 1.9.1 (InferReshapeShape) reverses the code vector
    literally, runs the left-to-right rules on the reversed input shape (reading -4 then its two
    dims) and reverses the result: a user code (..., a, b, -4, ...) splits the matching input dim
    into (a, b), while a left-to-right (-4, a, b) becomes (b, a, -4) and fails MXNet's CHECK.
    Kept apart from the plain reverse property because it pins this literal rule."""
    _check_reshape(True, True)


def _check_reshape(reverse, split):
    @SETTINGS
    @given(case=reshape_cases(reverse, split))
    def check(case):
        _reshape_property(case)

    check()


def _reshape_property(case):
    dshape, code, reverse = case
    want = H.reshape_ref(code, dshape, reverse)
    assume(want is not None)
    data = mx.sym.Variable("data")
    sym = mx.sym.Reshape(data, shape=code, reverse=reverse)
    _, out_shapes, _ = sym.infer_shape(data=dshape)
    assert tuple(out_shapes[0]) == want, "infer_shape(%s, shape=%s, reverse=%s)" % (
        dshape, code, reverse)
    x = _data(dshape)
    res = mx.nd.Reshape(mx.nd.array(x), shape=code, reverse=reverse)
    assert res.shape == want
    np.testing.assert_array_equal(res.asnumpy(), x.reshape(want))


# ----------------------------------------------------------------------------- reductions
@st.composite
def reduce_cases(draw, kind):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    nd = len(shape)
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    exclude = False if kind == "none" else draw(st.booleans())  # see the test below
    return (shape, axis, draw(st.booleans()), exclude, draw(st.sampled_from(["sum", "mean"])))


@pytest.mark.parametrize("kind", ["none", "int", "tuple"], ids=lambda k: "axis_" + k)
def test_reduction_infer_shape_equals_output_shape(kind):
    @SETTINGS
    @given(case=reduce_cases(kind))
    def check(case):
        _reduce_property(case)

    check()


def _reduce_property(case):
    shape, axis, keepdims, exclude, op = case
    want, reduced = H.reduce_axes_ref(shape, axis, keepdims, exclude)
    params = {"keepdims": keepdims, "exclude": exclude}
    if axis is not None:
        params["axis"] = axis
    data = mx.sym.Variable("data")
    sym = getattr(mx.sym, op)(data, **params)
    _, out_shapes, _ = sym.infer_shape(data=shape)
    x = _data(shape)
    res = getattr(mx.nd, op)(mx.nd.array(x), **params)
    assert tuple(out_shapes[0]) == res.shape, "infer_shape vs real output shape"
    assert res.shape == want, "MXNet's ReduceAxesShapeImpl gives %s" % (want,)
    npf = np.sum if op == "sum" else np.mean
    ref = npf(x.astype(np.float64), axis=tuple(reduced), keepdims=True).reshape(want)
    np.testing.assert_allclose(res.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_reduction_axis_none_with_exclude_reduces_everything():
    """MXNet 1.9.1 ReduceAxesShapeImpl: without ``axis`` every axis is reduced, whatever
    ``exclude`` says: output (1,), or (1,)*ndim with keepdims."""
    for shape in [(2,), (1, 1), (2, 3, 4)]:
        for keepdims in (False, True):
            for op in ("sum", "mean"):
                _reduce_property((shape, None, keepdims, True, op))
