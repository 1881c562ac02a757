"""MXNet 1.x's legacy DataLoader internals in mx.gluon.data.dataloader: DataLoaderV1 (in this
process and with worker processes), worker_loop_v1 / fetcher_loop_v1, the Queue / SimpleQueue /
ConnectionWrapper that pass NDArrays between processes through shared memory, and the
reduce_ndarray / rebuild_ndarray pickle reductions (and their _np_ forms)."""
from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
import threading

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import data as gdata
from neomx.gluon.data import dataloader as dl

X = np.random.RandomState(0).uniform(0, 1, (23, 4, 3)).astype(np.float32)
Y = np.arange(23, dtype=np.int32)
DS = gdata.ArrayDataset(mx.nd.array(X), Y)

FORK = multiprocessing.get_context("fork")


@pytest.fixture(autouse=True)
def _deadline():
    """A hung worker process must fail its test, not hang the suite: blocking reads on pipes
    and queues are interrupted after 120 s."""
    def expired(signum, frame):
        raise TimeoutError("test_dataloader_v1: no answer from a worker process in 120 s")
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    prev = signal.signal(signal.SIGALRM, expired)
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, prev)


def _flatten(batch):
    if isinstance(batch, (list, tuple)):
        return [a for b in batch for a in _flatten(b)]
    return [batch.asnumpy() if isinstance(batch, mx.nd.NDArray) else np.asarray(batch)]


def _same(a, b):
    assert len(a) == len(b)
    for ba, bb in zip(a, b):
        fa, fb = _flatten(ba), _flatten(bb)
        assert len(fa) == len(fb)
        for x, y in zip(fa, fb):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("num_workers", [0, 1, 3])
@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
def test_dataloader_v1_same_batches_as_dataloader(num_workers, last_batch):
    ref = gdata.DataLoader(DS, batch_size=5, last_batch=last_batch)
    loader = dl.DataLoaderV1(DS, batch_size=5, last_batch=last_batch, num_workers=num_workers)
    assert len(loader) == len(ref)
    for _ in range(2):  # (rollover: the second pass starts with the first's leftovers)
        got = list(loader)
        _same(got, list(ref))
    if num_workers:
        assert all(isinstance(b[0], mx.nd.NDArray) and b[0].context == mx.cpu() for b in got)


def test_dataloader_v1_shuffle_sampler_and_batch_sampler():
    got = np.concatenate([y.asnumpy() for _, y in
                          dl.DataLoaderV1(DS, batch_size=4, shuffle=True, num_workers=2)])
    assert sorted(got.tolist()) == Y.tolist()
    bs = gdata.BatchSampler(gdata.SequentialSampler(23), 6, "discard")
    got = [y.asnumpy().tolist() for _, y in dl.DataLoaderV1(DS, batch_sampler=bs,
                                                            num_workers=2)]
    assert got == [list(range(i, i + 6)) for i in (0, 6, 12)]
    # a custom batchify_fn runs in the workers; plain Python results come back pickled (the
    # fetcher turns tuples into lists, as MXNet's)
    loader = dl.DataLoaderV1(list(range(10)), batch_size=4, num_workers=2,
                             batchify_fn=lambda s: ("sum", sum(s)))
    assert list(loader) == [["sum", 6], ["sum", 22], ["sum", 17]]


def test_dataloader_v1_pin_memory():
    for nw in (0, 2):
        x, _ = next(iter(dl.DataLoaderV1(DS, batch_size=4, num_workers=nw, pin_memory=True)))
        assert x.context == mx.cpu_pinned(0)
        np.testing.assert_array_equal(x.asnumpy(), X[:4])


def test_dataloader_v1_argument_errors():
    with pytest.raises(ValueError, match="batch_size must be specified unless batch_sampler"):
        dl.DataLoaderV1(DS)
    with pytest.raises(ValueError, match="shuffle must not be specified if sampler"):
        dl.DataLoaderV1(DS, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(23))
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        dl.DataLoaderV1(DS, batch_size=2,
                        batch_sampler=gdata.BatchSampler(gdata.SequentialSampler(3), 1))


class _Broken(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"no sample {i}")
        return np.float32(i)


def test_dataloader_v1_worker_error_is_reraised():
    it = iter(dl.DataLoaderV1(_Broken(), batch_size=2, num_workers=2))
    assert next(it).asnumpy().tolist() == [0, 1]
    assert next(it).asnumpy().tolist() == [2, 3]
    with pytest.raises(KeyError, match="no sample 5"):
        next(it)


def test_multi_worker_iter_shutdown():
    it = iter(dl.DataLoaderV1(DS, batch_size=5, num_workers=2))
    workers = list(it._workers)
    assert len(it) == 5
    next(it)
    it.shutdown()
    for w in workers:
        w.join(5)
        assert not w.is_alive()
    with pytest.raises(AssertionError, match="after shutdown"):
        next(it)


# -- NDArrays between processes -------------------------------------------------------------------

def test_reduce_rebuild_ndarray_shares_memory():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    fn, args = dl.reduce_ndarray(a)
    assert fn is dl.rebuild_ndarray
    b = fn(*args)
    assert isinstance(b, mx.nd.NDArray) and b.shape == (3, 4) and b.dtype == np.float32
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    b[:] = 7  # the rebuilt array maps the same shared buffer
    np.testing.assert_array_equal(fn(*args).asnumpy(), np.full((3, 4), 7, np.float32))
    fn, args = dl.reduce_np_ndarray(mx.nd.ones((2,), dtype="int64"))
    assert fn is dl.rebuild_np_ndarray
    c = fn(*args)
    assert c.dtype == np.int64 and c.asnumpy().tolist() == [1, 1]


def test_forking_pickler_sends_a_handle_not_the_bytes():
    from multiprocessing.reduction import ForkingPickler
    big = mx.nd.ones((512, 1024))  # 2 MiB of float32
    payload = bytes(ForkingPickler.dumps(big))
    assert len(payload) < 4096
    # plain pickle (no ForkingPickler) still carries the values
    assert pickle.loads(pickle.dumps(big)).shape == (512, 1024)


def _child_setup():
    # a forked child must not use the parent's torch thread pool (it does not exist there):
    # one torch thread and neomx's synchronous engine, as the DataLoader workers set up
    dl._worker_process_setup()


def _child_send(conn, done):
    _child_setup()
    w = dl.ConnectionWrapper(conn)
    w.send({"x": mx.nd.arange(6).reshape((2, 3)) * 2, "tag": "ok",
            "list": [mx.nd.ones((2,), dtype="int32")]})
    w.send(mx.nd.array(np.arange(300000, dtype=np.float32)))
    # the receiver fetches the shared-memory handles from this process: stay until it has
    done.wait(30)
    conn.close()


def test_connection_wrapper_between_processes():
    r, w = FORK.Pipe(duplex=False)
    done = FORK.Event()
    p = FORK.Process(target=_child_send, args=(w, done))
    p.start()
    try:
        reader = dl.ConnectionWrapper(r)
        first = reader.recv()
        assert first["tag"] == "ok"
        np.testing.assert_array_equal(first["x"].asnumpy(), np.arange(6).reshape(2, 3) * 2)
        assert first["list"][0].dtype == np.int32
        # the large array arrives as a shared-memory handle: a few hundred bytes on the pipe
        raw = reader.recv_bytes()
        assert len(raw) < 4096
        big = pickle.loads(raw)
        np.testing.assert_array_equal(big.asnumpy(), np.arange(300000, dtype=np.float32))
        assert reader.poll() is False  # other attributes are the wrapped connection's
        done.set()
        p.join(10)
        assert p.exitcode == 0
    finally:
        if p.is_alive():
            p.terminate()


def _child_queues(q_in, q_out):
    _child_setup()
    while True:
        item = q_in.get()
        if item is None:
            break
        q_out.put([item * 10, item.shape])


@pytest.mark.parametrize("kind", ["Queue", "SimpleQueue"])
def test_queues_carry_ndarrays(kind):
    q_in, q_out = getattr(dl, kind)(), getattr(dl, kind)()
    p = FORK.Process(target=_child_queues, args=(q_in, q_out))
    p.start()
    try:
        for n in (1, 5):
            q_in.put(mx.nd.ones((n, 2)))
            arr, shape = q_out.get()
            assert shape == (n, 2)
            np.testing.assert_array_equal(arr.asnumpy(), np.full((n, 2), 10, np.float32))
        q_in.put(None)
        p.join(10)
        assert p.exitcode == 0
    finally:
        if p.is_alive():
            p.terminate()


def test_worker_and_fetcher_loops_in_threads():
    key_q, data_q = queue.Queue(), queue.Queue()
    buf, lock = {}, threading.Lock()
    worker = threading.Thread(target=dl.worker_loop_v1,
                              args=(DS, key_q, data_q, dl.default_batchify_fn))
    fetcher = threading.Thread(target=dl.fetcher_loop_v1, args=(data_q, buf, False, 0, lock))
    worker.start()
    fetcher.start()
    key_q.put((1, [4, 5]))
    key_q.put((0, [0, 2, 3]))
    key_q.put((None, None))
    worker.join(10)
    data_q.put((None, None))
    fetcher.join(10)
    assert sorted(buf) == [0, 1]
    np.testing.assert_array_equal(buf[0][0].asnumpy(), X[[0, 2, 3]])
    assert buf[1][1].asnumpy().tolist() == [4, 5]
    # pin_memory: the fetcher moves batches to cpu_pinned
    data_q.put((0, mx.nd.ones((2,))))
    data_q.put((None, None))
    pinned = {}
    dl.fetcher_loop_v1(data_q, pinned, pin_memory=True)
    assert pinned[0].context == mx.cpu_pinned(0)
