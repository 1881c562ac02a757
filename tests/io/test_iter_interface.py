"""MXNet's ``MXDataIter`` interface on neomx's iterators (``iter_next``, ``getdata``,
``getlabel``, ``getindex``, ``getpad``, ``debug_skip_load``) and ``DataDesc``/``DataBatch``
details, as MXNet 1.9.1."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx


def _mnist(tmp_path, n=10):
    from neomx.io.idx import write_idx
    rng = np.random.RandomState(0)
    write_idx(tmp_path / "img", rng.randint(0, 255, (n, 28, 28)).astype(np.uint8))
    write_idx(tmp_path / "lbl", (np.arange(n) % 10).astype(np.uint8))
    return mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lbl"),
                           batch_size=4, shuffle=False)


def test_ndarrayiter_accessors_follow_iter_next():
    it = mx.io.NDArrayIter(np.arange(10.).reshape(10, 1), np.arange(10.), batch_size=4)
    seen = []
    while it.iter_next():
        data, label = it.getdata(), it.getlabel()
        assert isinstance(data, list) and isinstance(label, list)  # NDArrayIter: lists
        seen.append((data[0].asnumpy().ravel().tolist(), it.getpad(), it.getindex()))
    assert seen[-1] == ([8.0, 9.0, 0.0, 1.0], 2, None)
    assert it.iter_next() is False
    it.reset()
    assert it.iter_next() and it.getpad() == 0


def test_mnistiter_is_an_mxdataiter(tmp_path):
    it = _mnist(tmp_path)
    assert isinstance(it, mx.io.MXDataIter) and isinstance(it, mx.io.DataIter)
    assert it.iter_next()
    assert isinstance(it.getdata(), mx.nd.NDArray)  # C++ iterators: one array
    assert it.getdata().shape == (4, 1, 28, 28) and it.getlabel().shape == (4,)
    assert it.getpad() == 0 and it.getindex().tolist() == [0, 1, 2, 3]


def test_debug_skip_load_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12.).reshape(6, 2), batch_size=2)
    it.debug_skip_load()
    batches = [next(it) for _ in range(5)]  # past the end of the data: never stops
    assert all(b is batches[0] for b in batches)
    assert batches[0].data[0].asnumpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    it.reset()
    first = next(iter(it))  # a new iteration loads once more
    assert first.data[0].asnumpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]


class _Counting(mx.io.MXDataIter):
    """A C++-style iterator: 3 batches of one number each."""

    def __init__(self):
        super().__init__(batch_size=1)
        self.cur, self.loads = -1, 0

    def reset(self):
        super().reset()
        self.cur = -1

    def iter_next(self):
        self.loads += 1
        self.cur += 1
        return self.cur < 3

    def getdata(self):
        return mx.nd.array([self.cur])

    def getlabel(self):
        return mx.nd.array([-self.cur])

    def getindex(self):
        return np.array([self.cur], dtype=np.uint64)

    def getpad(self):
        return 0


def test_mxdataiter_next_and_debug_skip_load():
    it = _Counting()
    batches = list(it)
    assert [b.data[0].asnumpy()[0] for b in batches] == [0, 1, 2]
    assert isinstance(batches[0].data, list) and batches[0].index.tolist() == [0]
    it.reset()
    it.debug_skip_load()
    got = [it.next().data[0].asnumpy()[0] for _ in range(4)]
    assert got == [0, 0, 0, 0] and it.loads == 5  # one real load after the reset
    it.reset()
    assert it.next().data[0].asnumpy()[0] == 0 and it.loads == 6


def test_base_dataiter_defaults():
    it = mx.io.DataIter(batch_size=3)
    assert it.batch_size == 3 and it.getindex() is None and it.iter_next() is None
    with pytest.raises(StopIteration):
        it.next()


def test_datadesc_details():
    d = mx.io.DataDesc("data", (2, 3, 4), layout="NTC")
    assert repr(d) == "DataDesc[data,(2, 3, 4),<class 'numpy.float32'>,NTC]"
    assert d == ("data", (2, 3, 4)) and d.dtype is np.float32
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    assert mx.io.DataDesc.get_batch_axis("TC") == -1
    descs = mx.io.DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("a", "float16"), ("b", "int32")])
    assert [(x.name, x.shape, x.dtype, x.layout) for x in descs] == \
        [("a", (1, 2), "float16", "NCHW"), ("b", (3,), "int32", "NCHW")]
    assert [x.dtype for x in mx.io.DataDesc.get_list([("a", (1,))], None)] == [np.float32]
    with pytest.raises(KeyError):
        mx.io.DataDesc.get_list([("a", (1,))], [("b", "int32")])


def test_databatch_details():
    b = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=1)
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    assert b.pad == 1 and b.index is None and b.bucket_key is None
    assert b.provide_data is None and b.provide_label is None
    assert str(mx.io.DataBatch([mx.nd.zeros((1,))])) == \
        "DataBatch: data shapes: [(1,)] label shapes: None"
    with pytest.raises(AssertionError, match="Data must be list of NDArrays"):
        mx.io.DataBatch(mx.nd.zeros((1,)))
    with pytest.raises(AssertionError, match="Label must be list of NDArrays"):
        mx.io.DataBatch([mx.nd.zeros((1,))], mx.nd.zeros((1,)))
