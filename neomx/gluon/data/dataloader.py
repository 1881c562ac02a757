"""``DataLoader``: mini-batches from a dataset, in this process, in worker processes or in
worker threads, as MXNet 1.9.1's ``gluon.data.DataLoader``.

Worker processes (``num_workers > 0``) are a ``multiprocessing`` pool (the ``fork`` context on
Linux, so the dataset is inherited, not pickled). Each worker builds whole batches; NDArrays in
a batch travel as torch tensors through shared memory (torch's ``multiprocessing`` reductions:
the worker's batch buffer is handed over, not copied through the pipe), everything else is
pickled. Workers run neomx synchronously (``NaiveEngine``) with one torch thread each.
Batches come back in order; ``prefetch`` batches are kept in flight; a batch not back within
``timeout`` seconds raises :class:`DataLoaderTimeoutError` (the pool is then replaced); an
exception in a worker is re-raised here with the worker's traceback attached.
"""
from __future__ import annotations

import io
import multiprocessing
import multiprocessing.pool
import multiprocessing.queues
import os
import pickle
import signal
import sys
import threading
import traceback

import numpy as np
import torch

from ... import context
from ... import ndarray as nd
from ...base import MXNetError
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn",
           "DataLoaderTimeoutError", "DataLoaderV1", "worker_loop_v1", "fetcher_loop_v1",
           "Queue", "SimpleQueue", "ConnectionWrapper", "reduce_ndarray", "rebuild_ndarray",
           "reduce_np_ndarray", "rebuild_np_ndarray"]


def default_batchify_fn(data):
    """Stacks a list of samples into a batch: NDArrays with ``nd.stack``, tuples element-wise
    (giving a list of batches), anything else through ``np.asarray`` into an NDArray of the
    same dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from neomx.gluon.data import default_batchify_fn
    >>> x, y = default_batchify_fn([(np.zeros(2), 1), (np.ones(2), 2)])
    >>> x.shape, y.asnumpy().tolist()
    ((2, 2), [1, 2])
    """
    first = data[0]
    if isinstance(first, nd.NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data):
    """The batchify function of worker processes: :func:`default_batchify_fn` (neomx hands
    the result to the main process through shared memory itself; MXNet's version allocates
    it in ``cpu_shared`` memory)."""
    return default_batchify_fn(data)


def _as_in_context(data, ctx):
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class DataLoaderTimeoutError(MXNetError, multiprocessing.TimeoutError):
    """A worker did not deliver a batch within the DataLoader's ``timeout``."""


class _RemoteTraceback(Exception):
    """Carries a worker's traceback text as the ``__cause__`` of a re-raised exception."""

    def __init__(self, tb):
        super().__init__(tb)
        self.tb = tb

    def __str__(self):
        return self.tb


# --- transport between processes -----------------------------------------------------------------
class _Packed:
    """An NDArray on its way from a worker: the torch tensor (pickled into shared memory by
    torch's reductions) and the context's type and id."""

    __slots__ = ("tensor", "devtype", "devid")

    def __init__(self, tensor, devtype, devid):
        self.tensor, self.devtype, self.devid = tensor, devtype, devid

    def __reduce__(self):
        return (_Packed, (self.tensor, self.devtype, self.devid))


def _pack(obj):
    if isinstance(obj, nd.NDArray):
        ctx = obj.context
        return _Packed(obj.to_torch(), ctx.device_type, ctx.device_id)
    if isinstance(obj, list):
        return [_pack(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_pack(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _pack(v) for k, v in obj.items()}
    return obj


def _unpack(obj):
    if isinstance(obj, _Packed):
        devtype = "cpu" if obj.devtype in ("cpu_shared", "cpu_pinned") else obj.devtype
        return nd.from_torch(obj.tensor, context.Context(devtype, obj.devid))
    if isinstance(obj, list):
        return [_unpack(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_unpack(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _unpack(v) for k, v in obj.items()}
    return obj


class _WorkerFailure:
    """What a worker returns instead of a batch when the batch raised."""

    def __init__(self, exc):
        self.tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.tb = f"Traceback of DataLoader worker (pid {os.getpid()}):\n" + self.tb
        try:
            self.exc = pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - an exception pickle cannot carry
            self.exc = None
        self.summary = f"{type(exc).__name__}: {exc}"

    def reraise(self):
        exc = self.exc
        if exc is None:
            exc = MXNetError(f"DataLoader worker failed with {self.summary}")
        if hasattr(exc, "add_note"):
            exc.add_note(self.tb)
        raise exc from _RemoteTraceback(self.tb)


_worker_dataset = None
_worker_batchify = None


def _worker_initializer(dataset, batchify_fn):
    """Runs once in each worker process (the dataset and batchify function are inherited
    through fork, so neither needs to be picklable)."""
    global _worker_dataset, _worker_batchify
    _worker_dataset, _worker_batchify = dataset, batchify_fn
    import torch.multiprocessing  # noqa: F401  registers the shared-memory tensor reductions
    from ... import engine
    # The parent's engine threads do not exist in a forked child: run neomx synchronously.
    engine._state["engine"] = engine.NaiveEngine()
    torch.set_num_threads(1)


def _worker_fn(samples, batchify_fn=None, dataset=None):
    """One batch (in a worker process: packed for the trip back; in a thread: as it is)."""
    in_process = dataset is None
    try:
        ds = _worker_dataset if in_process else dataset
        batchify_fn = _worker_batchify if in_process else batchify_fn
        batch = batchify_fn([ds[i] for i in samples])
        return _pack(batch) if in_process else batch
    except Exception as exc:  # noqa: BLE001 - handed to the main process, re-raised there
        return _WorkerFailure(exc)


class _MultiWorkerIter:
    """Iterator over the batches of one pass, computed by a worker pool, in order."""

    def __init__(self, loader, batch_sampler, prefetch):
        self._loader = loader
        self._pool = loader._get_pool()
        self._threads = loader._thread_pool
        self._buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(batch_sampler)
        self._len = len(batch_sampler)
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return self._len

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        args = (r, self._loader._batchify_fn, self._loader._dataset) if self._threads else (r,)
        self._buffer[self._sent_idx] = self._pool.apply_async(_worker_fn, args)
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            raise StopIteration
        ret = self._buffer.pop(self._rcvd_idx)
        timeout = self._loader._timeout
        try:
            batch = ret.get(timeout)
        except multiprocessing.TimeoutError:
            self._loader._reset_pool()
            kind = "thread" if self._threads else "process"
            raise DataLoaderTimeoutError(
                f"DataLoader worker {kind} did not deliver batch {self._rcvd_idx} within "
                f"timeout={timeout} seconds. The dataset's __getitem__ or the transform is too "
                "slow (raise `timeout`) or hangs; the workers were stopped.") from None
        self._rcvd_idx += 1
        if isinstance(batch, _WorkerFailure):
            batch.reraise()
        if not self._threads:
            batch = _unpack(batch)
        if self._loader._pin_memory:
            batch = _as_in_context(batch, context.cpu_pinned(self._loader._pin_device_id))
        return batch

    next = __next__

    def __iter__(self):
        return self


def _batch_sampler(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler, error):
    """The batch sampler a DataLoader's arguments describe, with MXNet's checks (raised as
    ``error``: DataLoader's and DataLoaderV1's differ)."""
    if batch_sampler is None:
        if batch_size is None:
            raise error("batch_size must be specified unless batch_sampler is specified")
        if sampler is None:
            sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                       else _sampler.SequentialSampler(len(dataset)))
        elif shuffle:
            raise error("shuffle must not be specified if sampler is specified")
        return _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
    if batch_size is not None or shuffle or sampler is not None or last_batch is not None:
        raise error("batch_size, shuffle, sampler and last_batch must not be specified if "
                    "batch_sampler is specified.")
    return batch_sampler


class DataLoader:
    """Loads mini-batches from ``dataset``.

    Parameters
    ----------
    dataset : Dataset
        Source dataset (NDArrays, numpy arrays and lists work directly).
    batch_size : int
        Size of mini-batch.
    shuffle : bool
        Whether to shuffle the samples (a new order each pass).
    sampler : Sampler
        The sampler to use; either specify sampler or shuffle, not both.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        How to handle a last batch smaller than ``batch_size``: return it, drop it, or roll
        its samples over to the next pass.
    batch_sampler : Sampler
        A sampler of index batches; then give none of batch_size, shuffle, sampler and
        last_batch.
    batchify_fn : callable
        Merges a list of samples into a batch (:func:`default_batchify_fn`).
    num_workers : int, default 0
        Worker processes (threads with ``thread_pool=True``) preparing batches; 0 prepares
        them in this process.
    pin_memory : bool, default False
        Return batches in ``cpu_pinned(pin_device_id)`` memory.
    pin_device_id : int, default 0
    prefetch : int, default 2 * num_workers
        Batches in flight ahead of the one being read (with workers).
    thread_pool : bool, default False
        Use a pool of threads instead of processes.
    timeout : int, default 120
        Seconds to wait for one batch from the workers.
    auto_reload : bool, default False
        Start the next pass's prefetch as soon as a pass ends (and at construction).

    Examples
    --------
    >>> import numpy as np
    >>> from neomx.gluon.data import ArrayDataset, DataLoader
    >>> ds = ArrayDataset(np.arange(10).reshape(5, 2), np.arange(5))
    >>> [y.asnumpy().tolist() for x, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    >>> len(DataLoader(ds, batch_size=2, last_batch='discard'))
    2
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise MXNetError(f"timeout must be positive, given {timeout}")
        self._timeout = timeout
        self._batch_sampler = _batch_sampler(dataset, batch_size, shuffle, sampler, last_batch,
                                             batch_sampler, MXNetError)
        self._num_workers = max(0, int(num_workers))
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        self._pool = None
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if self._num_workers else default_batchify_fn
        self._batchify_fn = batchify_fn
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    # --- the worker pool ------------------------------------------------------------------
    def _get_pool(self):
        if self._pool is None:
            if self._thread_pool:
                self._pool = multiprocessing.pool.ThreadPool(self._num_workers)
            else:
                nd.waitall()  # nothing may be in flight on the engine's threads at fork time
                method = "fork" if sys.platform.startswith("linux") else None
                ctx = multiprocessing.get_context(method)
                old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent's
                try:
                    self._pool = ctx.Pool(self._num_workers, initializer=_worker_initializer,
                                          initargs=(self._dataset, self._batchify_fn))
                finally:
                    signal.signal(signal.SIGINT, old)
        return self._pool

    def _reset_pool(self):
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()

    # --- iteration ------------------------------------------------------------------------
    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        return _MultiWorkerIter(self, self._batch_sampler, self._prefetch)

    def _same_process_iter(self):
        for batch in self._batch_sampler:
            ret = self._batchify_fn([self._dataset[idx] for idx in batch])
            if self._pin_memory:
                ret = _as_in_context(ret, context.cpu_pinned(self._pin_device_id))
            yield ret

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        it, self._iter = self._iter, None
        yield from it
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Start (prefetch) the next pass now."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop a prefetched pass; the next ``iter()`` starts a new one."""
        self._iter = None

    def close(self):
        """Stop the workers (also done when the loader is garbage collected)."""
        self._iter = None
        self._reset_pool()

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            try:
                pool.terminate()
            except Exception:  # noqa: BLE001 - interpreter shutdown: the pool is going anyway
                pass


# --- MXNet's legacy DataLoader (v1): explicit queues and worker loops -------------------------
# MXNet 1.x keeps its first multi-process DataLoader as ``DataLoaderV1``: worker processes run
# ``worker_loop_v1`` (index batches in through a ``Queue``, batches out through a
# ``SimpleQueue``), a thread runs ``fetcher_loop_v1`` (batches into a reorder buffer), and
# NDArrays cross processes in shared memory: ``reduce_ndarray`` is registered with
# multiprocessing's ForkingPickler, so pickling an NDArray for a queue or a ``ConnectionWrapper``
# moves its buffer into shared memory and sends a handle (torch's shared-memory tensor
# reductions), and ``rebuild_ndarray`` maps it on the other side.

def _shareable(data):
    """The CPU torch tensor of ``data`` in shared memory (moved there when it is not)."""
    import torch.multiprocessing  # noqa: F401  registers torch's shared-memory reductions
    t = data.to_torch()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.share_memory_()


def rebuild_ndarray(tensor, dev_type="cpu", dev_id=0):
    """The NDArray of a tensor received from another process (see :func:`reduce_ndarray`)."""
    devtype = "cpu" if dev_type in ("cpu_shared", "cpu_pinned") else dev_type
    return nd.from_torch(tensor, context.Context(devtype, dev_id))


def reduce_ndarray(data):
    """Pickle reduction of an NDArray for multiprocessing: its buffer in shared memory (torch's
    reductions then send a file-descriptor handle, not the bytes). Received as a CPU NDArray
    (MXNet moves it to ``cpu_shared`` memory too)."""
    return rebuild_ndarray, (_shareable(data), "cpu", 0)


def rebuild_np_ndarray(tensor, dev_type="cpu", dev_id=0):
    """:func:`rebuild_ndarray` for MXNet's numpy-style arrays (neomx has one NDArray class:
    the same)."""
    return rebuild_ndarray(tensor, dev_type, dev_id)


def reduce_np_ndarray(data):
    """:func:`reduce_ndarray` for MXNet's numpy-style arrays (neomx has one NDArray class)."""
    return rebuild_np_ndarray, (_shareable(data), "cpu", 0)


from multiprocessing.reduction import ForkingPickler  # noqa: E402

ForkingPickler.register(nd.NDArray, reduce_ndarray)


class ConnectionWrapper:
    """A multiprocessing ``Connection`` whose ``send``/``recv`` pickle with ForkingPickler
    (NDArrays through shared memory); everything else is the wrapped connection's."""

    def __init__(self, conn):
        self._conn = conn

    def send(self, obj):
        """Sends ``obj`` (NDArrays as shared-memory handles)."""
        buf = io.BytesIO()
        ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
        self.send_bytes(buf.getvalue())

    def recv(self):
        """Receives an object sent by :meth:`send`."""
        return pickle.loads(self.recv_bytes())

    def __getattr__(self, name):
        conn = self.__dict__.get("_conn", None)
        return getattr(conn, name)


class Queue(multiprocessing.queues.Queue):
    """A multiprocessing ``Queue`` passing NDArrays through shared memory."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, ctx=multiprocessing.get_context(), **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


class SimpleQueue(multiprocessing.queues.SimpleQueue):
    """A multiprocessing ``SimpleQueue`` (no feeder thread) passing NDArrays through shared
    memory."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, ctx=multiprocessing.get_context(), **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


def _worker_process_setup():
    """In a forked worker process: neomx synchronous, one torch thread (as the v2 workers)."""
    if multiprocessing.parent_process() is None:
        return
    from ... import engine
    engine._state["engine"] = engine.NaiveEngine()
    torch.set_num_threads(1)


def worker_loop_v1(dataset, key_queue, data_queue, batchify_fn):
    """A v1 worker: takes ``(idx, sample indices)`` from ``key_queue`` until ``idx`` is None
    and puts ``(idx, batchify_fn([dataset[i] ...]))`` on ``data_queue`` (an exception is put
    in place of the batch, to be re-raised by the reader)."""
    _worker_process_setup()
    while True:
        idx, samples = key_queue.get()
        if idx is None:
            break
        try:
            batch = batchify_fn([dataset[i] for i in samples])
        except Exception as exc:  # noqa: BLE001 - re-raised in the main process
            batch = _WorkerFailure(exc)
        data_queue.put((idx, batch))


def fetcher_loop_v1(data_queue, data_buffer, pin_memory=False, pin_device_id=0,
                    data_buffer_lock=None):
    """The v1 fetcher thread: moves ``(idx, batch)`` from ``data_queue`` into ``data_buffer``
    (a dict; under ``data_buffer_lock``, which waiters are notified through when it is a
    ``threading.Condition``) until ``idx`` is None. Batches are moved to ``cpu()`` (or to
    ``cpu_pinned(pin_device_id)``)."""
    while True:
        idx, batch = data_queue.get()
        if idx is None:
            break
        if not isinstance(batch, _WorkerFailure):
            ctx = context.cpu_pinned(pin_device_id) if pin_memory else context.cpu()
            batch = _as_in_context(batch, ctx)
        if data_buffer_lock is not None:
            with data_buffer_lock:
                data_buffer[idx] = batch
                if hasattr(data_buffer_lock, "notify_all"):
                    data_buffer_lock.notify_all()
        else:
            data_buffer[idx] = batch


class _MultiWorkerIterV1:
    """One pass of a :class:`DataLoaderV1` over ``num_workers`` worker processes: index
    batches go out through a Queue (``2 * num_workers`` ahead), batches come back through a
    SimpleQueue and a fetcher thread, and are returned in order."""

    def __init__(self, num_workers, dataset, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=worker_loop_v1):
        assert num_workers > 0, "_MultiWorkerIter is not for {} workers".format(num_workers)
        self._num_workers = num_workers
        self._dataset = dataset
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._key_queue = Queue()
        self._data_queue = SimpleQueue()
        self._data_buffer = {}
        self._data_buffer_lock = threading.Condition()
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._shutdown = False
        nd.waitall()  # nothing may be in flight on the engine's threads at fork time
        method = "fork" if sys.platform.startswith("linux") else None
        mp = multiprocessing.get_context(method)
        self._workers = []
        for _ in range(self._num_workers):
            worker = mp.Process(target=worker_fn, args=(self._dataset, self._key_queue,
                                                        self._data_queue, self._batchify_fn))
            worker.daemon = True
            worker.start()
            self._workers.append(worker)
        self._fetcher = threading.Thread(
            target=fetcher_loop_v1,
            args=(self._data_queue, self._data_buffer, pin_memory, pin_device_id,
                  self._data_buffer_lock))
        self._fetcher.daemon = True
        self._fetcher.start()
        for _ in range(2 * self._num_workers):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        self._key_queue.put((self._sent_idx, r))
        self._sent_idx += 1

    def __next__(self):
        assert not self._shutdown, "call __next__ after shutdown is forbidden"
        if self._rcvd_idx == self._sent_idx:
            assert not self._data_buffer, "Data buffer should be empty at this moment"
            self.shutdown()
            raise StopIteration
        with self._data_buffer_lock:
            while self._rcvd_idx not in self._data_buffer:
                if not self._data_buffer_lock.wait(timeout=1.0):
                    dead = [w for w in self._workers if w.exitcode not in (None, 0)]
                    if dead:
                        self.shutdown_now()
                        raise MXNetError(
                            f"DataLoaderV1 worker process (pid {dead[0].pid}) exited with code "
                            f"{dead[0].exitcode} before delivering batch {self._rcvd_idx}")
            batch = self._data_buffer.pop(self._rcvd_idx)
        self._rcvd_idx += 1
        self._push_next()
        if isinstance(batch, _WorkerFailure):
            self.shutdown()
            batch.reraise()
        return batch

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self

    def shutdown_now(self):
        """Stops the workers and the fetcher without waiting for queued batches."""
        if not self._shutdown:
            self._shutdown = True
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            self._data_queue.put((None, None))
            self._fetcher.join(timeout=5)

    def shutdown(self):
        """Stops the fetcher (first: it reads the data queue), then the workers."""
        if not self._shutdown:
            self._data_queue.put((None, None))
            self._fetcher.join()
            for _ in range(self._num_workers):
                self._key_queue.put((None, None))
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            self._key_queue.close()
            self._key_queue.join_thread()
            self._shutdown = True


class DataLoaderV1:
    """MXNet 1.x's first DataLoader: mini-batches of ``dataset`` built here
    (``num_workers=0``) or by ``num_workers`` worker processes (:func:`worker_loop_v1`) that
    receive index batches through a :class:`Queue` and send batches back through a
    :class:`SimpleQueue`, NDArrays in shared memory.

    Parameters are :class:`DataLoader`'s ``dataset``, ``batch_size``, ``shuffle``,
    ``sampler``, ``last_batch`` ('keep', 'discard', 'rollover'), ``batch_sampler``,
    ``batchify_fn`` (:func:`default_batchify_fn`; with workers
    :func:`default_mp_batchify_fn`), ``num_workers``, ``pin_memory`` and ``pin_device_id``.

    Examples
    --------
    >>> import numpy as np
    >>> from neomx.gluon.data import ArrayDataset
    >>> from neomx.gluon.data.dataloader import DataLoaderV1
    >>> ds = ArrayDataset(np.arange(10).reshape(5, 2), np.arange(5))
    >>> [y.asnumpy().tolist() for x, y in DataLoaderV1(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._batch_sampler = _batch_sampler(dataset, batch_size, shuffle, sampler, last_batch,
                                             batch_sampler, ValueError)
        self._num_workers = num_workers if num_workers >= 0 else 0
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn

    def __iter__(self):
        if self._num_workers == 0:
            def same_process_iter():
                for batch in self._batch_sampler:
                    ret = self._batchify_fn([self._dataset[idx] for idx in batch])
                    if self._pin_memory:
                        ret = _as_in_context(ret, context.cpu_pinned(self._pin_device_id))
                    yield ret
            return same_process_iter()
        return _MultiWorkerIterV1(self._num_workers, self._dataset, self._batchify_fn,
                                  self._batch_sampler, self._pin_memory, self._pin_device_id)

    def __len__(self):
        return len(self._batch_sampler)
