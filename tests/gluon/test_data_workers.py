"""DataLoader with worker processes and threads: the same batches as num_workers=0, in order,
for every last_batch mode and shuffled passes' contents; worker errors re-raised with the
worker's traceback text; a hung worker raises past ``timeout``; NDArray transforms and
RecordIO datasets inside workers."""
from __future__ import annotations

import time
import traceback

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import data as gdata
from neomx.gluon.data.dataloader import DataLoaderTimeoutError
from neomx.gluon.data.vision import transforms as T

X = np.random.RandomState(0).randint(0, 256, (23, 6, 5, 3)).astype(np.uint8)
Y = np.arange(23, dtype=np.int32)


def _flatten(batch):
    if isinstance(batch, (list, tuple)):
        return [a for b in batch for a in _flatten(b)]
    return [batch.asnumpy() if isinstance(batch, mx.nd.NDArray) else np.asarray(batch)]


def _run(loader, epochs=1):
    return [[_flatten(b) for b in loader] for _ in range(epochs)]


def _same(a, b):
    assert len(a) == len(b)
    for ea, eb in zip(a, b):
        assert len(ea) == len(eb)
        for ba, bb in zip(ea, eb):
            assert len(ba) == len(bb)
            for x, y in zip(ba, bb):
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(x, y)


def _to_tensor_normalized(x):
    return mx.nd.image.normalize(mx.nd.image.to_tensor(x), 0.5, 0.25)


def test_block_transforms_in_worker_threads():
    ds = gdata.ArrayDataset(mx.nd.array(X, dtype="uint8"), Y).transform_first(
        T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25)]))
    want = _run(gdata.DataLoader(ds, batch_size=2))
    for _ in range(3):
        _same(_run(gdata.DataLoader(ds, batch_size=2, num_workers=4, thread_pool=True)), want)


@pytest.mark.parametrize("thread_pool", [False, True], ids=["processes", "threads"])
@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
def test_workers_give_the_batches_of_one_process(thread_pool, last_batch):
    # (Blocks in worker threads: see test_block_transforms_in_worker_threads)
    fn = _to_tensor_normalized if thread_pool else T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25)])
    ds = gdata.ArrayDataset(mx.nd.array(X, dtype="uint8"), Y).transform_first(fn)
    kw = dict(batch_size=4, last_batch=last_batch)
    want = _run(gdata.DataLoader(ds, **kw), 2)
    loader = gdata.DataLoader(ds, num_workers=2, thread_pool=thread_pool, **kw)
    _same(_run(loader, 2), want)
    assert isinstance(next(iter(loader))[0], mx.nd.NDArray)


def test_workers_prefetch_zero_and_custom_batchify():
    ds = gdata.SimpleDataset(list(range(10)))
    loader = gdata.DataLoader(ds, batch_size=3, num_workers=2, prefetch=0,
                              batchify_fn=lambda s: (sum(s), np.array(s)))
    got = [(a, b.tolist()) for a, b in loader]
    assert got == [(3, [0, 1, 2]), (12, [3, 4, 5]), (21, [6, 7, 8]), (9, [9])]


def test_shuffled_workers_cover_the_dataset():
    loader = gdata.DataLoader(gdata.ArrayDataset(Y), batch_size=5, shuffle=True, num_workers=2)
    seen = np.concatenate([b.asnumpy() for b in loader])
    assert sorted(seen.tolist()) == Y.tolist()


def test_workers_pin_memory():
    loader = gdata.DataLoader(gdata.ArrayDataset(X, Y), batch_size=8, num_workers=1,
                              pin_memory=True)
    x, y = next(iter(loader))
    assert x.context == mx.cpu_pinned(0)
    np.testing.assert_array_equal(x.asnumpy(), X[:8])


class _Failing(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 5:
            raise ValueError(f"sample {idx} is corrupt")
        return np.float32(idx)


class _Unpicklable(Exception):
    def __init__(self, a, b):  # (pickle cannot rebuild it from its args)
        super().__init__(f"{a}/{b}")


class _FailingOddly(_Failing):
    def __getitem__(self, idx):
        raise _Unpicklable(1, 2)


@pytest.mark.parametrize("thread_pool", [False, True], ids=["processes", "threads"])
def test_worker_errors_propagate_with_the_worker_traceback(thread_pool):
    loader = gdata.DataLoader(_Failing(), batch_size=2, num_workers=2, thread_pool=thread_pool)
    with pytest.raises(ValueError, match="sample 5 is corrupt") as info:
        list(loader)
    text = "".join(traceback.format_exception(info.value))
    assert "Traceback of DataLoader worker" in text and "in __getitem__" in text
    assert 'raise ValueError(f"sample {idx} is corrupt")' in text


def test_unpicklable_worker_error_becomes_mxnet_error():
    loader = gdata.DataLoader(_FailingOddly(), batch_size=2, num_workers=1)
    with pytest.raises(mx.base.MXNetError, match="_Unpicklable: 1/2") as info:
        list(loader)
    assert "in __getitem__" in "".join(traceback.format_exception(info.value))


class _Slow(gdata.Dataset):
    def __init__(self, delay):
        self.delay = delay

    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 2:
            time.sleep(self.delay)
        return np.float32(idx)


@pytest.mark.parametrize("thread_pool", [False, True], ids=["processes", "threads"])
def test_hung_worker_times_out(thread_pool):
    # (a hung thread cannot be stopped: keep its sleep short)
    loader = gdata.DataLoader(_Slow(2.5 if thread_pool else 60), batch_size=1, num_workers=1,
                              timeout=1, thread_pool=thread_pool)
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0.0]
    next(it)
    start = time.time()
    with pytest.raises(DataLoaderTimeoutError, match="timeout=1 seconds"):
        next(it)
    assert time.time() - start < 10
    # the loader is usable again: a fresh pool
    loader._dataset = gdata.SimpleDataset([np.float32(1)] * 3)
    loader._batch_sampler = gdata.BatchSampler(gdata.SequentialSampler(3), 3)
    assert [b.shape for b in loader] == [(3,)]


def test_record_file_dataset_in_workers(tmp_path):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(12):
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), bytes([i]) * 7))
    w.close()
    ds = gdata.RecordFileDataset(rec).transform(
        lambda r: np.frombuffer(mx.recordio.unpack(r)[1], dtype=np.uint8).astype(np.float32))
    want = _run(gdata.DataLoader(ds, batch_size=5))
    _same(_run(gdata.DataLoader(ds, batch_size=5, num_workers=2)), want)
