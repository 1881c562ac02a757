"""DataDesc, DataBatch, DataIter and NDArrayIter against MXNet 1.9.1 golden values."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import neomx as mx
import neomx.io as mio
from neomx.base import MXNetError

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "io")


def _load(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


DESC = _load("datadesc.json")
ITER = _load("ndarrayiter.json")


def make_input(spec):
    """Rebuild an input from its golden spec (mirror of make_input in tools/make_golden_io.py)."""
    kind = spec["kind"]
    if kind == "list":
        return [make_input(s) for s in spec["items"]]
    if kind == "dict":
        return {k: make_input(s) for k, s in spec["items"].items()}
    shape = tuple(spec["shape"])
    vals = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    vals = (vals * spec.get("scale", 1.0) + spec.get("start", 0.0)).astype(spec.get("dtype", "float64"))
    if kind == "nd":
        return mx.nd.array(vals, dtype=spec.get("dtype", "float32"))
    return vals


# --- DataDesc / DataBatch -------------------------------------------------------------------
def test_datadesc_golden():
    descs = {
        "default": mio.DataDesc("data", (2, 3)),
        "int32_nc": mio.DataDesc("x", (3,), np.int32, "NC"),
        "str_dtype_list_shape": mio.DataDesc("x", [3], "float32"),
        "tnc": mio.DataDesc("seq", (5, 2, 8), np.float32, "TNC"),
        "layout_none": mio.DataDesc("y", (4,), np.float64, None),
    }
    assert {k: repr(v) for k, v in descs.items()} == DESC["repr"]
    assert {k: str(v) for k, v in descs.items()} == DESC["str"]
    assert (mio.DataDesc("data", (2, 3)) == ("data", (2, 3))) == DESC["eq_tuple"]
    assert (mio.DataDesc("data", (2, 3)) == mio.DataDesc("data", (2, 3), np.int32)) == DESC["eq_other_dtype"]
    layouts = {"NCHW": "NCHW", "TNC": "TNC", "NTC": "NTC", "CHW": "CHW", "None": None}
    assert {k: mio.DataDesc.get_batch_axis(v) for k, v in layouts.items()} == DESC["batch_axis"]
    got = mio.DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("a", np.int32), ("b", np.float16)])
    assert [repr(d) for d in got] == DESC["get_list"]
    assert [repr(d) for d in mio.DataDesc.get_list([("a", (1, 2))], None)] == DESC["get_list_no_types"]


def test_datadesc_is_a_tuple():
    d = mio.DataDesc("data", (2, 3), np.int32, "NC")
    name, shape = d
    assert (name, shape, d.name, d.shape, d.dtype, d.layout) == ("data", (2, 3), "data", (2, 3), np.int32, "NC")
    assert isinstance(d, tuple) and len(d) == 2


def test_databatch_golden():
    b = mio.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))], pad=1)
    assert str(b) == DESC["batch_str"]
    assert str(mio.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((2, 5))])) == DESC["batch_str_nolabel"]
    empty = mio.DataBatch([])
    assert {k: getattr(empty, k) for k in DESC["batch_defaults"]} == DESC["batch_defaults"]
    with pytest.raises(AssertionError):
        mio.DataBatch(mx.nd.ones((2, 3)))


def test_dataiter_base_protocol():
    class Counter(mio.DataIter):
        """Three batches through the iter_next/getdata protocol of the base class."""

        def __init__(self):
            super().__init__(batch_size=2)
            self.i = 0

        def reset(self):
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 3

        def getdata(self):
            return [mx.nd.full((2,), self.i)]

        def getlabel(self):
            return [mx.nd.zeros((2,))]

        def getpad(self):
            return 0

    it = Counter()
    assert iter(it) is it
    got = [b.data[0].asnumpy()[0] for b in it]
    assert got == [1.0, 2.0, 3.0]
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    b = next(it)
    assert b.index is None and b.pad == 0 and b.data[0].asnumpy()[0] == 1.0


# --- NDArrayIter golden ---------------------------------------------------------------------
def _run_case(case):
    if case["seed"] is not None:
        np.random.seed(case["seed"])
    data = make_input(case["data"])
    label = make_input(case["label"]) if case["label"] is not None else None
    it = mio.NDArrayIter(data, label, **case["kwargs"])
    return it


def _check_batch(got, want, where):
    assert len(got.data) == len(want["data"]), where
    for i, (g, w) in enumerate(zip(got.data, want["data"])):
        assert np.dtype(g.dtype).name == want["data_dtype"][i], where
        np.testing.assert_array_equal(g.asnumpy(), np.asarray(w, dtype=g.dtype), err_msg=where)
    assert len(got.label) == len(want["label"]), where
    for i, (g, w) in enumerate(zip(got.label, want["label"])):
        assert np.dtype(g.dtype).name == want["label_dtype"][i], where
        np.testing.assert_array_equal(g.asnumpy(), np.asarray(w, dtype=g.dtype), err_msg=where)
    assert got.pad == want["pad"], where
    assert got.index == want["index"], where


@pytest.mark.parametrize("case", ITER["cases"], ids=[c["id"] for c in ITER["cases"]])
def test_ndarrayiter_golden(case):
    it = _run_case(case)
    assert [repr(d) for d in it.provide_data] == case["provide_data"]
    assert [repr(d) for d in it.provide_label] == case["provide_label"]
    assert it.num_data == case["num_data"] and it.batch_size == case["batch_size"]
    err = case.get("error")
    for epoch in range(case["epochs"]):
        if err is not None and epoch == err["epoch"]:
            with pytest.raises(MXNetError, match=r"Invalid end for end=\d+ as axis_size is \d+"):
                list(it)
            return
        batches = list(it)
        want = case["batches"][epoch]
        assert len(batches) == len(want), f"{case['id']} epoch {epoch}"
        for i, (g, w) in enumerate(zip(batches, want)):
            _check_batch(g, w, f"{case['id']} epoch {epoch} batch {i}")
        it.reset()


@pytest.mark.parametrize("key", sorted(ITER["construct_errors"]))
def test_ndarrayiter_construct_errors(key):
    entry = ITER["construct_errors"][key]
    want = entry["error"]
    exc = {"TypeError": TypeError, "AssertionError": AssertionError}[want["type"]]
    with pytest.raises(exc) as info:
        mio.NDArrayIter(eval(entry["src"]))  # noqa: S307  (fixture text written by our script)
    assert str(info.value) == want["message"]


# --- NDArrayIter behaviour beyond the golden cases ------------------------------------------
def test_batches_are_copies():
    src = mx.nd.array(np.arange(8.0).reshape(4, 2))
    it = mio.NDArrayIter(src, batch_size=2)
    b = next(it)
    b.data[0][:] = -1
    np.testing.assert_array_equal(src.asnumpy(), np.arange(8.0).reshape(4, 2))


def test_ndarray_input_is_kept_and_shuffle_makes_float32():
    src = mx.nd.array(np.arange(6).reshape(3, 2), dtype="int32")
    it = mio.NDArrayIter(src, batch_size=3)
    assert it.data[0][1] is src and it.provide_data[0].dtype == np.int32
    np.random.seed(0)
    it = mio.NDArrayIter(src, batch_size=3, shuffle=True)
    assert it.provide_data[0].dtype == np.float32
    assert sorted(next(it).data[0].asnumpy()[:, 0].tolist()) == [0.0, 2.0, 4.0]


def test_shuffle_keeps_data_and_labels_aligned():
    np.random.seed(123)
    x = np.arange(20.0).reshape(10, 2)
    it = mio.NDArrayIter({"a": x, "b": x[:, :1] * 10}, x[:, 0] / 2, batch_size=5, shuffle=True)
    for _ in range(3):
        seen = []
        for b in it:
            a, bb = b.data[0].asnumpy(), b.data[1].asnumpy()
            np.testing.assert_array_equal(bb[:, 0], a[:, 0] * 10)
            np.testing.assert_array_equal(b.label[0].asnumpy(), a[:, 0] / 2)
            seen.extend(a[:, 0].tolist())
        assert sorted(seen) == x[:, 0].tolist()
        it.reset()


def test_getpad_getindex_and_manual_protocol():
    it = mio.NDArrayIter(np.arange(5.0), np.arange(5.0), batch_size=2)
    assert it.getindex() is None
    pads = []
    while it.iter_next():
        pads.append(it.getpad())
        assert len(it.getdata()) == 1 and len(it.getlabel()) == 1
    assert pads == [0, 0, 1]
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    assert [b.pad for b in it] == [0, 0, 1]


def test_hard_reset_drops_roll_over():
    it = mio.NDArrayIter(np.arange(10.0), batch_size=4, last_batch_handle="roll_over")
    assert len(list(it)) == 2
    it.hard_reset()
    first = next(it)
    assert first.pad == 0 and first.data[0].asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_context_is_kept():
    src = mx.nd.array(np.arange(6.0).reshape(3, 2), ctx=mx.cpu(1))
    b = next(mio.NDArrayIter(src, batch_size=2))
    assert b.data[0].context == mx.cpu(1)


def test_epochs_have_stable_provide_data_and_batch_shapes():
    it = mio.NDArrayIter(np.zeros((7, 3, 2)), np.zeros((7,)), batch_size=3)
    for _ in range(2):
        for b in it:
            assert b.data[0].shape == it.provide_data[0].shape == (3, 3, 2)
            assert b.label[0].shape == it.provide_label[0].shape == (3,)
        it.reset()
