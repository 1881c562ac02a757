"""check_format (MXNet's golden errors and random invalid structures) and round trips between
dense, csr and row_sparse storage."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neomx as mx
from neomx.base import MXNetError

from ._golden import load

CHECKS = load("check_format.json")["checks"]


@pytest.mark.parametrize("case", CHECKS, ids=lambda c: f"{c['stype']}-{c['args']}-{c['full_check']}")
def test_check_format_golden(case):
    make = mx.nd.sparse.csr_matrix if case["stype"] == "csr" else mx.nd.sparse.row_sparse_array
    a = make(eval(case["args"]), shape=tuple(case["shape"]))  # noqa: S307
    if case["error"] is None:
        a.check_format(full_check=case["full_check"])
        return
    with pytest.raises(MXNetError) as e:
        a.check_format(full_check=case["full_check"])
    assert str(e.value) == case["error"].split("MXNetError: ", 1)[-1]


def _dense(draw, shape_max=6):
    rows = draw(st.integers(1, shape_max))
    cols = draw(st.integers(1, shape_max))
    vals = draw(st.lists(st.sampled_from([0.0, 0.0, 0.0, 1.0, -2.5, 3.0]),
                         min_size=rows * cols, max_size=rows * cols))
    return np.array(vals, dtype=np.float32).reshape(rows, cols)


dense_arrays = st.composite(_dense)


@settings(max_examples=60, deadline=None)
@given(dense_arrays())
def test_round_trips(x):
    d = mx.nd.array(x)
    c = d.tostype("csr")
    r = d.tostype("row_sparse")
    c.check_format()
    r.check_format()
    np.testing.assert_array_equal(c.asnumpy(), x)
    np.testing.assert_array_equal(r.asnumpy(), x)
    np.testing.assert_array_equal(c.tostype("default").tostype("csr").asnumpy(), x)
    np.testing.assert_array_equal(mx.nd.cast_storage(r, stype="default").asnumpy(), x)
    # canonical parts: nonzeros only, row-major; rows that hold a nonzero
    rows, cols = np.nonzero(x)
    assert c.indices.asnumpy().tolist() == cols.tolist()
    np.testing.assert_array_equal(c.data.asnumpy(), x[rows, cols])
    assert c.indptr.asnumpy().tolist() == [0] + np.cumsum(np.bincount(rows, minlength=x.shape[0])).tolist()
    assert r.indices.asnumpy().tolist() == np.nonzero(np.abs(x).sum(1))[0].tolist()
    # from the parts again
    c2 = mx.nd.sparse.csr_matrix((c.data, c.indices, c.indptr), shape=c.shape)
    r2 = mx.nd.sparse.row_sparse_array((r.data, r.indices), shape=r.shape)
    np.testing.assert_array_equal(c2.asnumpy(), x)
    np.testing.assert_array_equal(r2.asnumpy(), x)


@st.composite
def broken_csr(draw):
    """A csr structure of a (rows, cols) matrix with one random defect."""
    x = _dense(draw)
    if x.shape[1] < 2:
        x = np.concatenate([x, x], axis=1)
    x[0, 0] = 1.0
    x[0, -1] = 2.0
    rows, cols = x.shape
    c = mx.nd.array(x).tostype("csr")
    data, idx, ptr = c.data.asnumpy(), c.indices.asnumpy(), c.indptr.asnumpy()
    defect = draw(st.sampled_from(["col_high", "col_negative", "unsorted", "ptr_start",
                                   "ptr_end", "ptr_decrease"]))
    if defect == "col_high":
        idx[draw(st.integers(0, len(idx) - 1))] = cols + draw(st.integers(0, 3))
    elif defect == "col_negative":
        idx[draw(st.integers(0, len(idx) - 1))] = -1
    elif defect == "unsorted":
        idx[0], idx[1] = idx[1], idx[0]
    elif defect == "ptr_start":
        ptr[0] = 1
    elif defect == "ptr_end":
        ptr[-1] += draw(st.integers(1, 3))
    else:
        ptr[1] = ptr[2] + 1 if len(ptr) > 2 else len(data) + 1
    return data, idx, ptr, (rows, cols)


@settings(max_examples=60, deadline=None)
@given(broken_csr())
def test_check_format_rejects_broken_csr(parts):
    data, idx, ptr, shape = parts
    a = mx.nd.sparse.csr_matrix((data, idx, ptr), shape=shape)
    with pytest.raises(MXNetError, match="csr NDArray should be"):
        a.check_format()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.lists(st.integers(-3, 12), min_size=1, max_size=6))
def test_check_format_row_sparse(n, rows):
    a = mx.nd.sparse.row_sparse_array((np.ones((len(rows), 2), np.float32), rows), shape=(n, 2))
    valid = all(0 <= r < n for r in rows) and all(a < b for a, b in zip(rows, rows[1:]))
    if valid:
        a.check_format()
    else:
        with pytest.raises(MXNetError, match="Indices of row_sparse NDArray"):
            a.check_format()
