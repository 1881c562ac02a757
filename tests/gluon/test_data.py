"""gluon.data datasets, samplers and the DataLoader in this process, against MXNet 1.9.1
(``tools/make_golden_gluon_data.py``): batches of unshuffled loaders (last_batch keep/discard/
rollover, tuples, NDArray/numpy/list samples, batch_sampler), samplers and Dataset helpers."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import data as gdata

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "gluon_data" /
                     "gluon_data.json").read_text())
X = np.arange(24, dtype=np.float32).reshape(8, 3)
Y = np.arange(8, dtype=np.int32) * 10


def encode(b):
    if isinstance(b, (list, tuple)):
        return [encode(p) for p in b]
    assert isinstance(b, mx.nd.NDArray)
    return {"dtype": np.dtype(b.dtype).name, "value": b.asnumpy().tolist()}


def batches(loader, epochs=1):
    return [[encode(b) for b in loader] for _ in range(epochs)]


def make_loaders():
    ds = gdata.ArrayDataset(X, Y)
    return {
        "keep": (gdata.DataLoader(ds, batch_size=3), 1),
        "discard": (gdata.DataLoader(ds, batch_size=3, last_batch="discard"), 1),
        "rollover": (gdata.DataLoader(ds, batch_size=3, last_batch="rollover"), 3),
        "nd_samples": (gdata.DataLoader(gdata.ArrayDataset(mx.nd.array(X), mx.nd.array(Y)),
                                        batch_size=4), 1),
        "single": (gdata.DataLoader(gdata.SimpleDataset(list(range(5))), batch_size=2), 1),
        "floats": (gdata.DataLoader([0.5, 1.5, 2.5], batch_size=2), 1),
        "uint8": (gdata.DataLoader(gdata.ArrayDataset(X.astype(np.uint8)), batch_size=5), 1),
        "batch_sampler": (gdata.DataLoader(ds, batch_sampler=gdata.BatchSampler(
            gdata.SequentialSampler(5, 2), 2, "keep")), 1),
        "transform_first": (gdata.DataLoader(ds.transform_first(lambda x: x * 2),
                                             batch_size=4), 1),
        "nested": (gdata.DataLoader(ds.transform(lambda x, y: (x, (y, -y))), batch_size=4), 1),
    }


@pytest.mark.parametrize("name", list(GOLDEN["loaders"]))
def test_loader_batches_as_mxnet(name):
    loader, epochs = make_loaders()[name]
    assert batches(loader, epochs) == GOLDEN["loaders"][name]


def test_loader_len_as_mxnet():
    ds = gdata.ArrayDataset(X, Y)
    got = {k: len(gdata.DataLoader(ds, batch_size=3, last_batch=k)) for k in GOLDEN["loader_lens"]}
    assert got == GOLDEN["loader_lens"]


def test_samplers_and_dataset_helpers_as_mxnet():
    want = GOLDEN["samplers"]
    seq = gdata.SequentialSampler(10)
    for lb in ("keep", "discard", "rollover"):
        bs = gdata.BatchSampler(seq, 4, lb)
        assert [list(map(int, b)) for b in bs] + ["|"] + [list(map(int, b)) for b in bs] == \
            want["batch_" + lb]
        assert len(bs) == want["len_" + lb]
    assert list(gdata.SequentialSampler(4, 3)) == want["seq_start"]
    ds = gdata.SimpleDataset(list(range(11)))
    assert [list(ds.shard(4, i)) for i in range(4)] == want["shard"]
    assert [list(ds.take(3)), len(ds.take(None)), len(ds.take(50))] == want["take"]
    assert list(ds.filter(lambda x: x % 3 == 0)) == want["filter"]
    assert list(ds.sample(gdata.SequentialSampler(3, 5))) == want["sample"]
    assert list(ds.transform(lambda x: x + 1, lazy=False)) == want["transform_eager"]


def test_random_sampler_and_shuffle_are_permutations():
    np.random.seed(0)
    order = [int(i) for i in gdata.RandomSampler(20)]
    assert sorted(order) == list(range(20)) and order != list(range(20))
    loader = gdata.DataLoader(gdata.ArrayDataset(np.arange(20)), batch_size=6, shuffle=True)
    epochs = [np.concatenate([b.asnumpy() for b in loader]) for _ in range(2)]
    assert all(sorted(e.tolist()) == list(range(20)) for e in epochs)
    assert epochs[0].tolist() != epochs[1].tolist()


def test_interval_and_filter_samplers():
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(gdata.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    assert len(gdata.IntervalSampler(7, 3, rollover=False)) == 3
    fs = gdata.FilterSampler(lambda s: s[1] > 30, gdata.ArrayDataset(X, Y))
    assert list(fs) == [4, 5, 6, 7] and len(fs) == 4


def test_transforms_of_datasets_are_lazy_and_keep_labels():
    calls = []

    def fn(x):
        calls.append(1)
        return x + 1

    ds = gdata.ArrayDataset(X, Y).transform_first(fn)
    assert not calls
    x, y = ds[2]
    assert calls and np.array_equal(x, X[2] + 1) and y == Y[2]
    assert gdata.SimpleDataset([1, 2]).transform(fn, lazy=False)[1] == 3


def test_array_dataset_holds_1d_ndarrays_as_numpy():
    ds = gdata.ArrayDataset(mx.nd.array([1, 2, 3]), mx.nd.ones((3, 2)))
    a, b = ds[1]
    assert isinstance(a, np.float32) and isinstance(b, mx.nd.NDArray)
    assert gdata.ArrayDataset([5, 6])[1] == 6


def test_pin_memory_gives_cpu_pinned_batches():
    loader = gdata.DataLoader(gdata.ArrayDataset(X, Y), batch_size=4, pin_memory=True)
    x, y = next(iter(loader))
    assert x.context == mx.cpu_pinned(0) and y.context == mx.cpu_pinned(0)
    np.testing.assert_array_equal(x.asnumpy(), X[:4])


def test_custom_batchify_and_auto_reload():
    loader = gdata.DataLoader(gdata.SimpleDataset(list(range(5))), batch_size=2,
                              batchify_fn=lambda samples: sum(samples), auto_reload=True)
    assert list(loader) == [1, 5, 4] and list(loader) == [1, 5, 4]


@pytest.mark.parametrize("kwargs,match", [
    (dict(), "batch_size must be specified"),
    (dict(batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(8)),
     "shuffle must not be specified"),
    (dict(batch_sampler=gdata.BatchSampler(gdata.SequentialSampler(8), 2), batch_size=2),
     "must not be specified if batch_sampler"),
    (dict(batch_size=2, last_batch="sometimes"), "last_batch must be one of"),
    (dict(batch_size=2, timeout=0), "timeout must be positive"),
    (dict(batch_size=0), "batch_size must be a positive integer"),
])
def test_loader_bad_arguments(kwargs, match):
    with pytest.raises(mx.base.MXNetError, match=match):
        gdata.DataLoader(gdata.ArrayDataset(X, Y), **kwargs)


def test_dataset_bad_arguments():
    with pytest.raises(mx.base.MXNetError, match="same length"):
        gdata.ArrayDataset(X, Y[:3])
    with pytest.raises(mx.base.MXNetError, match="Shard index out of bound"):
        gdata.SimpleDataset([1, 2]).shard(2, 2)
    with pytest.raises(TypeError, match="Invalid sampler type"):
        gdata.SimpleDataset([1, 2]).sample([0, 1])
    with pytest.raises(mx.base.MXNetError, match="does not exist"):
        gdata.RecordFileDataset("/nonexistent/x.rec")


def test_record_file_dataset(tmp_path):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(5):
        w.write_idx(i, f"record-{i}".encode() * (i + 1))
    w.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 5 and ds[3] == b"record-3" * 4
    assert list(gdata.DataLoader(ds, batch_size=2, batchify_fn=list))[2] == [b"record-4" * 5]


@pytest.mark.parametrize("module", ["dataset", "sampler", "dataloader"])
def test_doc_examples(module):
    import doctest
    import importlib
    mod = importlib.import_module(f"neomx.gluon.data.{module}")
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    tests = [t for t in finder.find(mod) if t.examples]
    for t in tests:
        runner.run(t)
    assert tests and runner.summarize(verbose=False).failed == 0
