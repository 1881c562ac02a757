"""Sparse data pipelines against MXNet 1.9.1: LibSVMIter's csr batches, NDArrayIter over
CSRNDArray / SciPy CSR data, and mx.test_utils' random sparse arrays (golden fixtures in
tests/golden/sparse_io, written by tools/make_golden_sparse_io.py)."""
from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import neomx as mx
import neomx.test_utils as tu
from .._golden import assert_error_matches

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sparse_io"
with open(GOLDEN / "cases.json") as _f:
    _FILE = json.load(_f)
CASES = _FILE["cases"]
with open(GOLDEN / "test_utils.json") as _f:
    TU = json.load(_f)["records"]

OK = [c for c in CASES if "error_type" not in c]
ERR = [c for c in CASES if "error_type" in c]


def _env():
    env = dict(mx=mx, np=np, sp=sp)
    exec(_FILE["inputs"].replace("'GOLDEN/'", repr(str(GOLDEN) + "/")), env)
    return env


def _make(case):
    env = _env()
    if case["seed"] is not None:
        np.random.seed(case["seed"])
    return eval(case["src"], env)


def _check_array(got, want, where):
    assert type(got).__name__ == want["cls"], where
    assert got.stype == want["stype"], where
    assert np.dtype(got.dtype).name == want["dtype"], where
    assert list(got.shape) == want["shape"], where
    np.testing.assert_array_equal(got.asnumpy(), np.asarray(want["value"], want["dtype"]),
                                  err_msg=where)
    if want["stype"] == "csr":
        assert got.indptr.asnumpy().tolist() == want["indptr"], where
        assert got.indices.asnumpy().tolist() == want["indices"], where
        np.testing.assert_array_equal(got.data.asnumpy(), np.asarray(want["data"], np.float64)
                                      .astype(want["dtype"]), err_msg=where)


@pytest.mark.parametrize("case", OK, ids=[c["name"] for c in OK])
def test_batches_equal_mxnet(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (MXNet's storage fallback warning for slice_axis)
        it = _make(case)
        assert [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_data] == \
            case["provide_data"]
        assert [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_label] == \
            case["provide_label"]
        for e, want_batches in enumerate(case["epochs_out"]):
            batches = list(it)
            assert len(batches) == len(want_batches), f"epoch {e}"
            for j, (b, want) in enumerate(zip(batches, want_batches)):
                where = f"{case['name']} epoch {e} batch {j}"
                assert b.pad == want["pad"], where
                if want["index"] is not None:
                    assert np.asarray(b.index).tolist() == want["index"], where
                assert len(b.data) == len(want["data"]) and len(b.label) == len(want["label"])
                for got, w in zip(b.data + b.label, want["data"] + want["label"]):
                    _check_array(got, w, where)
            it.reset()


@pytest.mark.parametrize("case", ERR, ids=[c["name"] for c in ERR])
def test_errors_as_mxnet(case):
    record = {k: v.replace("GOLDEN/", str(GOLDEN) + "/") if isinstance(v, str) else v
              for k, v in case.items()}
    with pytest.raises(Exception) as info:
        it = _make(case)
        for _ in it:
            pass
    assert_error_matches(info.value, record)


# -- LibSVMIter beyond the fixtures ------------------------------------------------------------

@pytest.mark.parametrize("text, line, what", [
    ("1 0:1\n2 x:3\n", 2, "not a number"),
    ("1 0:1\nfoo 1:3\n", 2, "not a number"),
    ("1 0:1\n\n1 1:\n", 3, "expected index:value"),
    ("1 0 2\n", 1, "expected index:value"),
    ("1 0:1\n0 -1:1\n", 2, "out of range"),
    ("1 0:1\n0 3:1\n", 2, "out of range"),
    ("1 0:1\n0 1.5:1\n", 2, "not an integer"),
    ("1 0:1:2\n", 1, "expected index:value"),
])
def test_libsvm_bad_file_names_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "bad.t"
    path.write_text(text)
    with pytest.raises(mx.MXNetError) as info:
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=1)
    msg = str(info.value)
    assert str(path) in msg and f"line {line}" in msg and what in msg, msg


def test_libsvm_dtype_and_keyword_errors(tmp_path):
    path = tmp_path / "d.t"
    path.write_text("1 0:1\n0 1:2\n")
    with pytest.raises(mx.MXNetError, match="float32"):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=1, dtype="int32")
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=1,
                          dtype="float32")
    assert it.next().data[0].dtype == np.float32
    with pytest.raises(TypeError, match="keyword"):
        mx.io.LibSVMIter(str(path), (3,), 1)


def test_libsvm_parse_is_vectorised_and_fast(tmp_path):
    """100k rows x 20 features (1M-feature space) parse in well under a second per 10 MB."""
    rng = np.random.RandomState(0)
    rows, k, width = 100_000, 20, 1_000_000
    cols = np.sort(rng.randint(0, width, (rows, k)), axis=1)
    vals = rng.randint(1, 100, (rows, k)) / 8.0
    lines = ["%d %s" % (i % 2, " ".join(f"{c}:{v:g}" for c, v in zip(cols[i], vals[i])))
             for i in range(0, rows, 1000)]
    # (repeat a small block: the parser's speed, not Python's formatting, is under test)
    text = ("\n".join(lines) + "\n") * 100
    path = tmp_path / "big.t"
    path.write_text(text)
    t = time.perf_counter()
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(width,), batch_size=1000)
    took = time.perf_counter() - t
    b = it.next()
    assert b.data[0].shape == (1000, width) and b.data[0].stype == "csr"
    assert b.data[0].indptr.asnumpy()[-1] == 1000 * k
    np.testing.assert_array_equal(b.data[0].indices.asnumpy()[:k], cols[0])
    assert took < 10.0, f"parsing {len(text) / 1e6:.0f} MB took {took:.1f} s"


def test_libsvm_batches_feed_sparse_dot(tmp_path):
    path = tmp_path / "d.t"
    path.write_text("1 0:1 2:2\n0 1:3\n1 2:-1\n")
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=3)
    b = it.next()
    w = mx.nd.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(mx.nd.sparse.dot(b.data[0], w).asnumpy().ravel(), [7, 6, -3])


# -- NDArrayIter beyond the fixtures -----------------------------------------------------------

def test_ndarrayiter_csr_shuffle_keeps_rows_together():
    x = np.arange(60, dtype=np.float32).reshape(20, 3)
    x[::3] = 0
    it = mx.io.NDArrayIter(mx.nd.array(x).tostype("csr"), np.arange(20), batch_size=4,
                           shuffle=True, last_batch_handle="discard")
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in it:
            d, lab = b.data[0].asnumpy(), b.label[0].asnumpy().astype(int)
            np.testing.assert_array_equal(d, x[lab])
            seen += lab.tolist()
    assert sorted(seen) == list(range(20))
    assert it.data[0][1].stype == "csr"


def test_ndarrayiter_csr_parts():
    x = np.eye(6, dtype=np.float32)
    it = mx.io.NDArrayIter(mx.nd.array(x).tostype("csr"), np.arange(6), batch_size=3,
                           last_batch_handle="discard", num_parts=2, part_index=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (b,) = list(it)
    np.testing.assert_array_equal(b.data[0].asnumpy(), x[3:])


# -- test_utils --------------------------------------------------------------------------------

def _kind(x):
    return type(x).__name__


@pytest.mark.parametrize("key", [k for k in TU if k.startswith("powerlaw")])
def test_powerlaw_layout_as_mxnet(key):
    rec = TU[key]
    if "error_type" in rec:
        with pytest.raises(ValueError) as info:
            tu.rand_sparse_ndarray(tuple(rec["shape"]), "csr", density=rec["density"],
                                   distribution="powerlaw")
        assert_error_matches(info.value, rec)
        return
    a, (ptr, idx, dat) = tu.rand_sparse_ndarray(tuple(rec["shape"]), "csr",
                                                density=rec["density"], distribution="powerlaw")
    assert _kind(a) == rec["cls"] and [_kind(ptr), _kind(idx), _kind(dat)] == rec["parts"]
    assert ptr.asnumpy().tolist() == rec["indptr"]
    assert idx.asnumpy().tolist() == rec["indices"]
    d = dat.asnumpy()
    assert d.min() >= 1.001 and d.max() <= 3.0


@pytest.mark.parametrize("key", [k for k in TU if k.startswith("uniform")])
def test_uniform_csr_as_mxnet(key):
    rec = TU[key]
    a, parts = tu.rand_sparse_ndarray(tuple(rec["shape"]), "csr", density=rec["density"],
                                      dtype=rec["dtype"])
    assert _kind(a) == rec["cls"] and [_kind(p) for p in parts] == rec["parts"]
    assert int(a.indptr.asnumpy()[-1]) == rec["nnz"]
    assert np.dtype(a.dtype).name == rec["out_dtype"]
    d = a.data.asnumpy()
    assert bool(((d >= 0) & (d < 1)).all()) == rec["data_in_01"]
    a.check_format()
    dense = a.asnumpy()
    assert int((dense != 0).sum()) <= rec["nnz"]


def test_row_sparse_forms_as_mxnet():
    rec = TU["rsp_indices"]
    a, (val, idx) = tu.rand_sparse_ndarray((6, 3, 2), "row_sparse", rsp_indices=np.array([1, 4]),
                                           data_init=2.5, dtype="float64")
    assert _kind(a) == rec["cls"] and [_kind(val), _kind(idx)] == rec["parts"]
    assert idx.tolist() == rec["indices"] and a.asnumpy().tolist() == rec["value"]
    assert np.dtype(a.dtype).name == rec["dtype"] and val.dtype.name == rec["val_dtype"]
    rec = TU["rsp_empty"]
    a, (val, idx) = tu.rand_sparse_ndarray((4, 3), "row_sparse", density=0.0)
    assert _kind(a) == rec["cls"] and [_kind(val), _kind(idx)] == rec["parts"]
    assert val.dtype.name == rec["val_dtype"] and idx.dtype.name == rec["idx_dtype"]
    assert a.indices.shape[0] == rec["nnz"]
    a = tu.create_sparse_array_zd((5, 3), "row_sparse", 0.9, rsp_indices=[3, 0, 2])
    assert a.indices.asnumpy().tolist() == TU["zd_rsp"]["indices"]
    assert _kind(a) == TU["zd_rsp"]["cls"]
    assert tu.create_sparse_array_zd((5, 3), "row_sparse", 0.9).indices.shape[0] == \
        TU["zd_rsp_none"]["nnz"]
    a = tu.create_sparse_array((6, 5), "csr", data_init=3.0, density=0.5)
    assert _kind(a) == TU["create_csr"]["cls"]
    assert int(a.indptr.asnumpy()[-1]) == TU["create_csr"]["nnz"]
    assert sorted(set(a.data.asnumpy().tolist())) == TU["create_csr"]["data"]


@pytest.mark.parametrize("stype", ["default", "csr", "row_sparse"])
def test_rand_ndarray_stypes(stype):
    rec = TU["rand_ndarray_" + stype]
    a = tu.rand_ndarray((4, 5), stype, density=0.5)
    assert [_kind(a), a.stype, list(a.shape), np.dtype(a.dtype).name] == \
        [rec["cls"], rec["stype"], rec["shape"], rec["dtype"]]


@pytest.mark.parametrize("key", [k for k in TU if k.startswith("err_")])
def test_test_utils_errors_as_mxnet(key):
    calls = {
        "err_density": lambda: tu.rand_sparse_ndarray((3, 3), "csr", density=1.5),
        "err_rows": lambda: tu.rand_sparse_ndarray((0, 3), "csr", density=0.5),
        "err_powerlaw_sparse": lambda: tu.rand_sparse_ndarray((10, 10), "csr", density=0.1,
                                                              distribution="powerlaw"),
        "err_rsp_powerlaw": lambda: tu.rand_sparse_ndarray((3, 3), "row_sparse", density=0.5,
                                                           distribution="powerlaw"),
        "err_stype": lambda: tu.create_sparse_array((3, 3), "dense"),
    }
    with pytest.raises(Exception) as info:
        calls[key]()
    assert_error_matches(info.value, TU[key])


def test_shuffle_csr_indices_and_big_uniform():
    np.random.seed(1)
    a = tu.rand_ndarray((30, 40), "csr", density=0.3, shuffle_csr_indices=True)
    ptr, idx = a.indptr.asnumpy(), a.indices.asnumpy()
    rows_sorted = [bool((np.diff(idx[ptr[i]:ptr[i + 1]]) > 0).all()) for i in range(30)]
    assert not all(rows_sorted)  # some row was shuffled
    assert all(len(set(idx[ptr[i]:ptr[i + 1]])) == ptr[i + 1] - ptr[i] for i in range(30))
    m = sp.csr_matrix(np.eye(4, dtype=np.float32) + np.eye(4, k=1, dtype=np.float32))
    before = m.toarray()
    tu.shuffle_csr_column_indices(m)
    assert sorted(m.indices.tolist()) == sorted(sp.csr_matrix(before).indices.tolist())
    # a 1M-column uniform csr does not build the dense positions
    big = tu.rand_ndarray((1000, 1_000_000), "csr", density=0.0001)
    assert int(big.indptr.asnumpy()[-1]) == 100_000
    big.check_format()


def test_sparse_linear_example_quick(tmp_path, capsys):
    """examples/sparse_linear.py --quick: a 1M-feature LibSVM file, row_sparse_pull, lazy Adam;
    the test accuracy beats chance clearly (0.82 at the time of writing)."""
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "examples" / "sparse_linear.py"
    spec = importlib.util.spec_from_file_location("sparse_linear", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    acc = mod.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "1,000,000 features" in out and "epoch 1: train loss" in out
    assert acc > 0.7, out
    with open(tmp_path / "train.libsvm") as f:
        first = f.readline().split()
    assert first[0] in ("0", "1") and all(":" in t for t in first[1:])


@pytest.mark.parametrize("w_stype, g_stype", [("default", "row_sparse"),
                                              ("row_sparse", "row_sparse")])
def test_compare_optimizer_with_sparse_storage(w_stype, g_stype):
    """MXNet's form: opt2 updates the sparse arrays, opt1 their dense copies."""
    for name in ("sgd", "adam"):
        tu.compare_optimizer(mx.optimizer.create(name, learning_rate=0.1),
                             mx.optimizer.create(name, learning_rate=0.1), (6, 3), np.float32,
                             w_stype=w_stype, g_stype=g_stype)
    np.random.seed(1)  # (a seed whose random gradient density stores some rows)
    with pytest.raises(AssertionError):  # a different update is caught
        tu.compare_optimizer(mx.optimizer.create("sgd", learning_rate=0.1),
                             mx.optimizer.create("sgd", learning_rate=0.3), (6, 3), np.float32,
                             w_stype=w_stype, g_stype=g_stype)


def test_nd_array_of_a_scipy_csr_matrix():
    """mx.nd.array(scipy csr) is a CSRNDArray of the matrix's dtype (MXNet 1.9.1: float64 for
    np.eye's, float16 when asked)."""
    m = sp.csr_matrix(np.array([[0, 1.5, 0], [2, 0, 0]]))
    a = mx.nd.array(m)
    assert type(a).__name__ == "CSRNDArray" and a.dtype == np.float64
    np.testing.assert_array_equal(a.asnumpy(), m.toarray())
    assert a.indptr.asnumpy().tolist() == [0, 1, 2]
    assert mx.nd.array(m.astype(np.float32), dtype="float16").dtype == np.float16
