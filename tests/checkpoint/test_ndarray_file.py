"""``mx.nd.save``/``mx.nd.load`` against files written and read by MXNet 1.9.1, round trips,
and hostile inputs (truncated, corrupt, absurd headers)."""
from __future__ import annotations

import os
import random
import struct
import time
import tracemalloc
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import neomx as mx
from neomx.ndarray import serialization as ser

from ._helpers import FILES, GOLDEN_DIR, assert_matches, golden_bytes, make_array

SEVEN_HEX = ("12010000 00000000 00000000 00000000 01000000 00000000 c9fa93f9 00000000 01000000 "
             "01000000 00000000 01000000 00000000 00000000 0000e040 00000000 00000000")
BAD = "Invalid NDArray file format"


def _saved_data(entry: dict):
    saved = entry["saved"]
    arrays = [make_array(d) for d in saved["arrays"]]
    if saved["kind"] == "dict":
        return dict(zip(saved["names"], arrays))
    return arrays[0] if saved["kind"] == "ndarray" else arrays


# --- neomx writes MXNet's bytes ---------------------------------------------------------------
WRITTEN_BY_MXNET = sorted(n for n, e in FILES.items() if "saved" in e
                          and not n.startswith(("row_sparse", "csr")))  # neomx has no sparse


@pytest.mark.parametrize("name", WRITTEN_BY_MXNET)
def test_save_matches_mxnet_bytes(name, tmp_path):
    data = _saved_data(FILES[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 0-d file warns
        mx.nd.save(str(tmp_path / name), data)
    assert (tmp_path / name).read_bytes() == golden_bytes(name)


def test_seven_is_the_68_byte_example(tmp_path):
    mx.nd.save(str(tmp_path / "x"), [mx.nd.array([7.])])
    raw = (tmp_path / "x").read_bytes()
    assert len(raw) == 68 and raw == bytes.fromhex(SEVEN_HEX.replace(" ", ""))


def test_empty_dict_saves_as_empty_list(tmp_path):
    mx.nd.save(str(tmp_path / "d"), {})
    assert (tmp_path / "d").read_bytes() == golden_bytes("empty_list.nd")
    assert mx.nd.load(str(tmp_path / "d")) == []


def test_zero_d_save_warns_and_neomx_reads_it_back(tmp_path):
    with pytest.warns(UserWarning, match="0-d"):
        mx.nd.save(str(tmp_path / "s"), [mx.nd.array(np.float32(2.5))])
    (a,) = mx.nd.load(str(tmp_path / "s"))
    assert a.shape == () and a.asscalar() == 2.5
    assert "mxnet_load_error" in FILES["scalar0d.nd"]  # MXNet cannot read its own 0-d files


# --- neomx reads what MXNet reads -------------------------------------------------------------
LOADED_BY_MXNET = sorted(n for n, e in FILES.items() if "mxnet_load" in e)


@pytest.mark.parametrize("name", LOADED_BY_MXNET)
def test_load_matches_mxnet(name):
    want = FILES[name]["mxnet_load"]
    got = mx.nd.load(str(GOLDEN_DIR / name))
    if want["kind"] == "dict":
        assert isinstance(got, dict) and list(got) == want["names"]
        arrays = list(got.values())
    else:
        assert isinstance(got, list)
        arrays = got
    assert len(arrays) == len(want["arrays"])
    for arr, desc in zip(arrays, want["arrays"]):
        assert_matches(arr, desc)
        if name != "gpu.nd":
            assert arr.context == mx.cpu(0)


def test_load_frombuffer_equals_load():
    for name in ("dict.nd", "list.nd", "v1.nd"):
        a, b = mx.nd.load(str(GOLDEN_DIR / name)), mx.nd.load_frombuffer(golden_bytes(name))
        a = list(a.values()) if isinstance(a, dict) else a
        b = list(b.values()) if isinstance(b, dict) else b
        assert [x.asnumpy().tobytes() for x in a] == [x.asnumpy().tobytes() for x in b]
    assert mx.nd.load_frombuffer(bytearray(golden_bytes("seven.nd")))[0].asscalar() == 7.0


def test_zero_d_written_by_mxnet_loads_in_neomx():
    (a,) = mx.nd.load(str(GOLDEN_DIR / "scalar0d.nd"))
    assert a.shape == () and a.dtype == np.float32 and a.asscalar() == 2.5


def test_loaded_arrays_are_independent_and_writable():
    buf = bytearray(golden_bytes("seven.nd"))
    (a,) = mx.nd.load_frombuffer(buf)
    buf[-20:-16] = b"\0\0\0\0"
    a[:] = 3
    assert a.asscalar() == 3.0


def test_gpu_records_load_on_that_gpu_when_present():
    got = mx.nd.load(str(GOLDEN_DIR / "gpu.nd"))
    assert got["g0"].context == (mx.gpu(0) if mx.num_gpus() >= 1 else mx.cpu(0))
    assert got["g5"].context == (mx.gpu(5) if mx.num_gpus() >= 6 else mx.cpu(0))


@pytest.mark.gpu
def test_gpu_array_saves_dev_type_2_and_loads_back_on_gpu(tmp_path):
    a = mx.nd.array([1.0, 2.0], ctx=mx.gpu(0))
    mx.nd.save(str(tmp_path / "g"), {"g0": a})
    raw = (tmp_path / "g").read_bytes()
    assert struct.unpack_from("<ii", raw, 24 + 4 + 4 + 4 + 8) == (2, 0)
    back = mx.nd.load(str(tmp_path / "g"))["g0"]
    assert back.context == mx.gpu(0)
    np.testing.assert_array_equal(back.asnumpy(), [1.0, 2.0])


def test_other_contexts_load_on_cpu0():
    for name in ("cpu1.nd", "pinned.nd"):
        assert mx.nd.load(str(GOLDEN_DIR / name))["w"].context == mx.cpu(0)


# --- argument handling ------------------------------------------------------------------------
def test_save_argument_errors(tmp_path):
    f = str(tmp_path / "x")
    with pytest.raises(TypeError, match="save only accept dict str->NDArray or list of NDArray"):
        mx.nd.save(f, [mx.nd.ones(1), 1])
    with pytest.raises(TypeError, match="save only accept dict str->NDArray or list of NDArray"):
        mx.nd.save(f, {1: mx.nd.ones(1)})
    with pytest.raises(TypeError, match="save only accept dict str->NDArray or list of NDArray"):
        mx.nd.save(f, {"a": np.ones(1)})
    for bad in ((mx.nd.ones(1),), 3, None, "x"):  # MXNet raises ValueError for these
        with pytest.raises(ValueError, match="data needs to either be a NDArray"):
            mx.nd.save(f, bad)
    assert not os.path.exists(f)


def test_save_single_ndarray_is_a_list(tmp_path):
    mx.nd.save(str(tmp_path / "x"), mx.nd.ones((2,)))
    got = mx.nd.load(str(tmp_path / "x"))
    assert isinstance(got, list) and got[0].shape == (2,)


def test_save_accepts_pathlike_and_unsupported_dtype_raises(tmp_path):
    mx.nd.save(tmp_path / "p", [mx.nd.ones(1)])
    assert mx.nd.load(tmp_path / "p")[0].asscalar() == 1.0
    with pytest.raises(mx.MXNetError, match="no type code"):
        mx.nd.save(str(tmp_path / "q"), [mx.nd.ones((2,), dtype="int16")])


def test_load_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="fname required to be a string"):
        mx.nd.load(3)
    with pytest.raises(TypeError, match="buf required"):
        mx.nd.load_frombuffer("abc")
    with pytest.raises(mx.MXNetError, match="cannot open"):
        mx.nd.load(str(tmp_path / "missing.params"))
    with pytest.raises(mx.MXNetError, match="cannot write"):
        mx.nd.save(str(tmp_path / "no" / "dir.params"), [mx.nd.ones(1)])


def test_loading_never_unpickles(monkeypatch):
    import pickle

    def boom(*a, **k):
        raise AssertionError("pickle used")
    monkeypatch.setattr(pickle, "loads", boom)
    monkeypatch.setattr(pickle, "load", boom)
    for name in LOADED_BY_MXNET:
        mx.nd.load(str(GOLDEN_DIR / name))


# --- round trips ------------------------------------------------------------------------------
_DTYPES = ["float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool", "bfloat16"]


def _random_array(draw_dtype, shape, rng):
    if draw_dtype == "bfloat16":
        t = torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(torch.bfloat16)
        return mx.nd.NDArray(t, mx.cpu(0))
    vals = (rng.standard_normal(shape) * 50).astype(np.float64)
    return mx.nd.array(vals.astype(draw_dtype) if draw_dtype != "bool" else vals > 0,
                       dtype=draw_dtype)


def _raw(a):
    t = a._data.reshape(-1)
    return t.contiguous().view(torch.uint8) if t.numel() else torch.empty(0, dtype=torch.uint8)


_array_spec = st.tuples(st.sampled_from(_DTYPES),
                        st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(_array_spec, max_size=4),
       names=st.one_of(st.none(), st.lists(st.text(max_size=6), min_size=4, max_size=4,
                                           unique=True)),
       seed=st.integers(0, 2**31 - 1))
def test_round_trip(specs, names, seed):
    rng = np.random.default_rng(seed)
    arrays = [_random_array(dt, shape, rng) for dt, shape in specs]
    data = dict(zip(names, arrays)) if names is not None else arrays
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = ser.to_bytes(data)
    got = mx.nd.load_frombuffer(raw)
    if names is not None and arrays:
        assert isinstance(got, dict) and list(got) == list(data)
        got = list(got.values())
    else:
        assert isinstance(got, list) and len(got) == len(arrays)
    for a, b in zip(arrays, got):
        assert a._data.dtype == b._data.dtype and a.shape == b.shape
        assert torch.equal(_raw(a), _raw(b))  # bit-exact, NaNs included
    # the header says what MXNet expects
    assert struct.unpack_from("<QQQ", raw) == (0x112, 0, len(arrays))


def test_round_trip_through_a_file_keeps_dtypes(tmp_path):
    data = {dt: _random_array(dt, (2, 3), np.random.default_rng(0)) for dt in _DTYPES}
    mx.nd.save(str(tmp_path / "all"), data)
    got = mx.nd.load(str(tmp_path / "all"))
    for k, v in data.items():
        assert got[k]._data.dtype == v._data.dtype
        assert torch.equal(got[k]._data, v._data)


def test_save_waits_for_pending_writes(tmp_path):
    a = mx.nd.zeros((100,))
    a += 1
    b = a * 2
    mx.nd.save(str(tmp_path / "w"), [b])
    np.testing.assert_array_equal(mx.nd.load(str(tmp_path / "w"))[0].asnumpy(), np.full(100, 2.0))


def test_save_non_contiguous_view(tmp_path):
    base = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = base[1:2]
    mx.nd.save(str(tmp_path / "v"), [view, base.T])
    got = mx.nd.load(str(tmp_path / "v"))
    np.testing.assert_array_equal(got[0].asnumpy(), [[4, 5, 6, 7]])
    np.testing.assert_array_equal(got[1].asnumpy(), np.arange(12).reshape(3, 4).T)


# --- hostile and corrupt files ----------------------------------------------------------------
def _expect_invalid(raw, match=BAD):
    start = time.perf_counter()
    with pytest.raises(mx.MXNetError, match=match):
        mx.nd.load_frombuffer(raw)
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize("name", ["dict.nd", "list.nd", "zero_size.nd", "v1.nd", "pre_v1.nd",
                                  "row_sparse.nd", "csr.nd", "scalar0d.nd", "bfloat16.nd"])
def test_every_truncation_is_invalid(name):
    raw = golden_bytes(name)
    start = time.perf_counter()
    for n in range(len(raw)):
        with pytest.raises(mx.MXNetError, match=BAD):
            mx.nd.load_frombuffer(raw[:n])
    assert time.perf_counter() - start < 2.0


def _seven_with(offset, fmt, value):
    raw = bytearray(golden_bytes("seven.nd"))
    struct.pack_into(fmt, raw, offset, value)
    return bytes(raw)


# Byte offsets in seven.nd: 0 list magic, 8 reserved, 16 N, 24 record magic, 28 stype, 32 ndim,
# 36 dim0, 44 dev_type, 48 dev_id, 52 dtype, 56 data, 60 M.
HOSTILE = {
    "list magic": (0, "<Q", 0x113),
    "N = 10**12": (16, "<Q", 10**12),
    "N = 2**64-1": (16, "<Q", 2**64 - 1),
    "N = 2": (16, "<Q", 2),
    "record magic": (24, "<I", 0xDEADBEEF),
    "stype 7": (28, "<i", 7),
    "stype -1": (28, "<i", -1),
    "ndim -1": (32, "<i", -1),
    "ndim 2**31-1": (32, "<i", 2**31 - 1),
    "dim 10**12": (36, "<q", 10**12),
    "dim 2**62": (36, "<q", 2**62),
    "dim -5": (36, "<q", -5),
    "dtype 99": (52, "<i", 99),
    "dtype 8 (int16, unknown to MXNet 1.9.1)": (52, "<i", 8),
    "dtype 6 (8 bytes, file has 4)": (52, "<i", 6),
    "M = 2 for 1 array": (60, "<Q", 2),
    "M = 10**12": (60, "<Q", 10**12),
}


@pytest.mark.parametrize("field", sorted(HOSTILE))
def test_hostile_header_fields_are_rejected_without_allocating(field):
    raw = _seven_with(*HOSTILE[field])
    tracemalloc.start()
    try:
        _expect_invalid(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_hostile_name_length_and_bad_utf8():
    raw = golden_bytes("dict.nd")
    tail = struct.pack("<QQ", 1, 2**62) + b"ab"
    one = golden_bytes("seven.nd")[:-8] + tail
    _expect_invalid(one)
    _expect_invalid(golden_bytes("seven.nd")[:-8] + struct.pack("<QQ", 1, 2) + b"\xff\xfe", "utf-8")
    assert mx.nd.load_frombuffer(raw)  # the untouched file loads


def test_dims_whose_product_overflows_int64_are_rejected():
    rec = struct.pack("<IiI", ser.V2_MAGIC, 0, 3) + struct.pack("<3q", 2**40, 2**40, 2**40)
    rec += struct.pack("<iii", 1, 0, 0) + b"\0" * 16
    _expect_invalid(struct.pack("<QQQ", 0x112, 0, 1) + rec + struct.pack("<Q", 0))


def test_hostile_sparse_records():
    def rsp(shape, rows, dense_shape_rows=None):
        rec = struct.pack("<Ii", ser.V2_MAGIC, 1) + struct.pack("<i2q", 2, 0, 3)
        rec += struct.pack("<i2q", 2, dense_shape_rows or shape, 3) + struct.pack("<iii", 1, 0, 0)
        rec += struct.pack("<ii", 6, 1) + struct.pack("<q", len(rows))
        rec += np.ones((len(rows), 3), np.float32).tobytes() + np.array(rows, "<i8").tobytes()
        return struct.pack("<QQQ", 0x112, 0, 1) + rec + struct.pack("<Q", 0)
    assert mx.nd.load_frombuffer(rsp(4, [0, 3]))[0].asnumpy().sum() == 6
    _expect_invalid(rsp(4, [0, 4]))            # row index out of range
    _expect_invalid(rsp(4, [-1]))
    # a tiny file with a huge shape stays sparse: nothing of the dense size is allocated
    big = mx.nd.load_frombuffer(rsp(4, [0], dense_shape_rows=10**12))[0]
    assert big.stype == "row_sparse" and big.shape == (10**12, 3)
    assert big.data.shape == (1, 3) and big.indices.asnumpy().tolist() == [0]


def test_random_corruption_never_escapes_as_another_error():
    rng = random.Random(1234)
    sources = [golden_bytes(n) for n in ("dict.nd", "list.nd", "csr.nd", "row_sparse.nd")]
    start = time.perf_counter()
    for _ in range(1500):
        raw = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(raw))
            raw[i] = rng.choice([0, 1, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        t = time.perf_counter()
        try:
            mx.nd.load_frombuffer(bytes(raw))
        except mx.MXNetError:
            pass
        assert time.perf_counter() - t < 0.5
    assert time.perf_counter() - start < 8.0


def test_trailing_bytes_and_reserved_field_are_ignored_like_mxnet():
    raw = golden_bytes("seven.nd")
    assert mx.nd.load_frombuffer(raw + b"junk")[0].asscalar() == 7.0
    assert mx.nd.load_frombuffer(_seven_with(8, "<Q", 99))[0].asscalar() == 7.0


# --- atomic save ------------------------------------------------------------------------------
def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    from neomx import util
    fname = str(tmp_path / "model.params")
    mx.nd.save(fname, {"w": mx.nd.ones((3,))})
    before = (tmp_path / "model.params").read_bytes()

    def crash(fd):
        raise KeyboardInterrupt("simulated crash in the middle of the write")
    monkeypatch.setattr(util.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        mx.nd.save(fname, {"w": mx.nd.zeros((1000,))})
    monkeypatch.undo()
    assert (tmp_path / "model.params").read_bytes() == before
    assert os.listdir(tmp_path) == ["model.params"]  # no temp file left behind
    np.testing.assert_array_equal(mx.nd.load(fname)["w"].asnumpy(), np.ones(3))


def test_bad_input_raises_before_touching_the_file(tmp_path):
    fname = str(tmp_path / "model.params")
    mx.nd.save(fname, [mx.nd.ones((2,))])
    before = (tmp_path / "model.params").read_bytes()
    with pytest.raises(mx.MXNetError):
        mx.nd.save(fname, [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="int16")])
    assert (tmp_path / "model.params").read_bytes() == before
