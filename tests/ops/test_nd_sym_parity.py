"""nd vs sym parity for every golden case: the op called imperatively (``mx.nd.<op>``, internal
ops through ``mx.nd._internal``) gives the bound symbol's forward output, and the symbol's
``infer_shape`` / ``infer_type`` agree with the shapes and dtypes of the real outputs."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

from . import _helpers as H

ALL = H.cases()
OP_CASES = [pytest.param(c, id=c["id"]) for c in ALL if c["op"] != "_graph"]
ALL_CASES = [pytest.param(c, id=c["id"]) for c in ALL]
DTYPES = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]
PARITY_TOL = {np.dtype(np.float32): (1e-6, 1e-7), np.dtype(np.float64): (1e-12, 1e-14)}


def _sym_outputs(case, dtype):
    sym = H.build_symbol(case)
    ex = H.simple_bind(sym, H.case_inputs(case, dtype), grad_req="null", dtype=dtype)
    return [o.asnumpy() for o in ex.forward(is_train=False)]


def _as_list(res):
    return list(res) if isinstance(res, (list, tuple)) else [res]


def _check_parity(case, dtype, nd_outs):
    sym_outs = _sym_outputs(case, dtype)
    assert len(nd_outs) == len(sym_outs), "nd gives %d outputs, sym %d" % (
        len(nd_outs), len(sym_outs))
    rtol, atol = PARITY_TOL[np.dtype(dtype)]
    for i, (a, b) in enumerate(zip(nd_outs, sym_outs)):
        assert isinstance(a, mx.nd.NDArray)
        assert np.dtype(a.dtype) == np.dtype(b.dtype), "nd dtype %s, sym dtype %s" % (a.dtype,
                                                                                      b.dtype)
        H.assert_close(a.asnumpy(), b, rtol, atol, "%s nd vs sym output %d" % (case["id"], i))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", OP_CASES)
def test_nd_positional_matches_sym(case, dtype):
    inputs = H.case_inputs(case, dtype)
    arrays = [mx.nd.array(a, dtype=dtype) for a in inputs.values()]
    res = H.nd_fn(case["op"])(*arrays, **H._py_params(case["params"]))
    _check_parity(case, dtype, _as_list(res))


@pytest.mark.parametrize("case", OP_CASES)
def test_nd_keyword_inputs_match_sym(case):
    inputs = H.case_inputs(case, np.float32)
    arrays = {n: mx.nd.array(a) for n, a in inputs.items()}
    res = H.nd_fn(case["op"])(**arrays, **H._py_params(case["params"]))
    _check_parity(case, np.float32, _as_list(res))


@pytest.mark.parametrize("case", OP_CASES)
def test_nd_matches_mxnet_forward(case):
    """The imperative call reproduces MXNet's recorded forward output too."""
    inputs = H.case_inputs(case)
    res = _as_list(H.nd_fn(case["op"])(*[mx.nd.array(a) for a in inputs.values()],
                                       **H._py_params(case["params"])))
    rtol, atol = H.tol_for(case["op"])
    for i, (o, w) in enumerate(zip(res, H.case_outputs(case))):
        H.assert_close(o.asnumpy(), w, rtol, atol, "%s nd output %d" % (case["id"], i))


@pytest.mark.parametrize("case", ALL_CASES)
def test_infer_shape_matches_outputs(case):
    sym = H.build_symbol(case)
    inputs = H.case_inputs(case)
    shapes = {n: a.shape for n, a in inputs.items()}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    assert arg_shapes is not None, "infer_shape could not complete"
    assert [tuple(s) for s in arg_shapes] == [inputs[n].shape for n in sym.list_arguments()]
    assert [tuple(s) for s in aux_shapes] == []
    want = [tuple(s) for s in case["out_shapes"]]
    assert [tuple(s) for s in out_shapes] == want, "infer_shape outputs vs MXNet's"
    ex = H.simple_bind(sym, inputs, grad_req="null")
    real = [o.shape for o in ex.forward(is_train=False)]
    assert [tuple(s) for s in out_shapes] == [tuple(s) for s in real], \
        "infer_shape vs the real output shapes"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ALL_CASES)
def test_infer_type_matches_outputs(case, dtype):
    sym = H.build_symbol(case)
    inputs = H.case_inputs(case, dtype)
    arg_types, out_types, aux_types = sym.infer_type(
        **{n: np.dtype(dtype).name for n in inputs})
    assert arg_types is not None, "infer_type could not complete"
    assert [np.dtype(t) for t in arg_types] == [np.dtype(dtype)] * len(inputs)
    assert list(aux_types) == []
    ex = H.simple_bind(sym, inputs, grad_req="null", dtype=dtype)
    real = [np.dtype(o.dtype) for o in ex.forward(is_train=False)]
    assert [np.dtype(t) for t in out_types] == real, "infer_type vs the real output dtypes"
    if np.dtype(dtype) == np.float32:
        # MXNet's recorded outputs (float32 inputs) have these dtypes
        assert real == [np.dtype(o.dtype) for o in H.case_outputs(case)]
