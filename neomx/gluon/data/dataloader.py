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

import multiprocessing
import multiprocessing.pool
import os
import pickle
import signal
import sys
import traceback

import numpy as np
import torch

from ... import context
from ... import ndarray as nd
from ...base import MXNetError
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn",
           "DataLoaderTimeoutError"]


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
        if batch_sampler is None:
            if batch_size is None:
                raise MXNetError("batch_size must be specified unless batch_sampler is "
                                 "specified")
            if sampler is None:
                sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                           else _sampler.SequentialSampler(len(dataset)))
            elif shuffle:
                raise MXNetError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise MXNetError("batch_size, shuffle, sampler and last_batch must not be "
                             "specified if batch_sampler is specified.")
        self._batch_sampler = batch_sampler
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
