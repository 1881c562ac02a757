"""``DistKVStore``: MXNet's ``dist_sync`` and ``dist_device_sync`` stores on torch.distributed.

MXNet 1.9.1 sends every push to parameter servers, which sum the pushes of all workers, apply
the optimizer once and serve the new weight to every pull. Here there are no servers: each
worker sums the gradients of all workers with an all-reduce (Gloo for CPU tensors, NCCL for
CUDA tensors when each local worker has its own GPU) and applies the *same* optimizer to the
*same* sum, so every worker holds identical weights after every step -- the same numbers
dist_sync computes, without the server round trip.

Everything else is the local :class:`~neomx.kvstore.KVStore`: keys, ``init`` (rank 0's value
wins, as in MXNet), ``push``/``pull``/``pushpull``, updaters and optimizer states. All keys of
one push travel together, flattened into buckets of at most ``MXNET_KVSTORE_BUCKET_MB`` MiB
(default 25) per dtype and device, each summed by one all-reduce; a checksum of the keys rides
along, so workers that push different keys get an MXNetError instead of wrong sums.

As with MXNet's dist_sync, every worker must make the same pushes in the same order. A
collective that fails -- a worker died (connection lost) or hangs (no answer within
``MXNET_KVSTORE_TIMEOUT`` seconds, default 300) -- raises MXNetError naming the store, the rank,
the operation and the keys; the store refuses further collectives afterwards.
"""
from __future__ import annotations

import contextlib
import math
import os
import time
import zlib

import torch
import torch.distributed as dist

from .. import engine
from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import NDArray, from_torch
from ..ndarray.sparse import _wrap
from ..ops.sparse import Sparse
from . import process_group
from .kvstore import KVStore

__all__ = ["DistKVStore"]

# dtypes whose bucket can carry an integer checksum of the keys: (modulus, largest exact sum)
_TAGGED = {torch.float32: (4096, 1 << 24), torch.float64: (1 << 20, 1 << 53),
           torch.int32: (1 << 16, (1 << 31) - 1), torch.int64: (1 << 20, 1 << 62)}


def _keys_text(keys) -> str:
    keys = list(keys)
    shown = ", ".join(repr(k) for k in keys[:4])
    more = f", ... ({len(keys)} keys)" if len(keys) > 4 else ""
    return f"key{'s' if len(keys) > 1 else ''} {shown}{more}"


def _describe(keys) -> str:
    return f" of {_keys_text(keys)}" if list(keys) else ""


def _leaf_metrics(metric):
    subs = getattr(metric, "metrics", None)
    if isinstance(subs, list):
        return [m for s in subs for m in _leaf_metrics(s)]
    return [metric]


def _optimizer_fields(optimizer) -> dict:
    """The scalar settings of an optimizer (what must agree across workers)."""
    fields = {"class": type(optimizer).__name__}
    for k, v in sorted(vars(optimizer).items()):
        if isinstance(v, (bool, int, float, str, type(None))) and k != "num_update":
            fields[k] = v
    return fields


class DistKVStore(KVStore):
    """A KVStore whose pushes are summed over all workers (``dist_sync``, ``dist_device_sync``).

    Created by ``mx.kv.create('dist_sync')`` in a process started by ``python -m neomx.launch``,
    torchrun or Slurm (see :mod:`neomx.kvstore.process_group`). ``rank``/``num_workers`` come
    from the process group; ``barrier()`` waits for every worker. ``dist_sync`` sums on the CPU
    (as MXNet's dist_sync does); ``dist_device_sync`` sums on the first GPU of the pushed values
    and all-reduces there.

    Parameters
    ----------
    name : str
        ``'dist_sync'``, ``'dist_device_sync'`` (any name containing ``dist`` but not
        ``_async``).
    timeout : float, optional
        Seconds each start-up step and each collective may wait (default
        ``MXNET_KVSTORE_TIMEOUT`` or 300). Only the first store of a process sets it.
    bucket_mb : float, optional
        Largest all-reduce bucket in MiB (default ``MXNET_KVSTORE_BUCKET_MB`` or 25).

    ``comm_stats`` counts the pushes, buckets, bytes and seconds spent in worker reductions
    (``sparse_bytes`` and ``rows``: the part of the bytes and the rows sent for row_sparse
    pushes, which carry their stored rows only). ``row_sparse_pull`` sends nothing: every
    worker holds the same values (see above), so it reads the rows from its own copy.

    Examples
    --------
    In each worker (``python -m neomx.launch -n 2 python train.py``)::

        kv = mx.kv.create('dist_sync')
        kv.init('w', mx.nd.zeros((2,)))               # rank 0's value on every worker
        kv.push('w', mx.nd.ones((2,)) * (kv.rank + 1))
        out = mx.nd.zeros((2,)); kv.pull('w', out=out)  # [3, 3] with 2 workers
    """

    def __init__(self, name: str = "dist_sync", timeout: float | None = None,
                 bucket_mb: float | None = None):
        if "_async" in name:
            raise MXNetError(_ASYNC_MESSAGE.format(name=name))
        super().__init__(name)
        self._session = process_group.join(name, timeout)
        if bucket_mb is None:
            bucket_mb = float(os.environ.get("MXNET_KVSTORE_BUCKET_MB", "25"))
        if bucket_mb <= 0:
            raise MXNetError(f"kvstore '{name}': bucket size must be positive, got {bucket_mb} MiB")
        self._bucket_bytes = int(bucket_mb * (1 << 20))
        self.comm_stats = {"pushes": 0, "buckets": 0, "bytes": 0, "seconds": 0.0,
                           "sparse_bytes": 0, "rows": 0}

    # --- properties ---------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        """This worker's rank in ``[0, num_workers)``."""
        return self._session.rank

    @property
    def num_workers(self) -> int:
        """The number of workers in the process group."""
        return self._session.world_size

    @property
    def timeout(self) -> float:
        """Seconds a collective may wait for the other workers."""
        return self._session.timeout

    # --- error translation ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _comm(self, op: str, keys=()):
        """Run torch.distributed calls; their failures become MXNetError (and stick)."""
        s = self._session
        where = f"kvstore '{self.type}' (rank {s.rank} of {s.world_size})"
        if s.failure is not None:
            raise MXNetError(f"{where}: {op}{_describe(keys)} refused: an earlier collective "
                             f"failed ({s.failure}); restart all the workers")
        try:
            yield
        except MXNetError:
            raise
        except RuntimeError as e:  # DistError, DistBackendError and Gloo's plain RuntimeErrors
            text = str(e).strip()
            if "timed out" in text.lower() or "timeout" in text.lower():
                why = (f"no answer from the other workers within {s.timeout:g} s: a worker hangs, "
                       "died without closing its connections, or is far behind "
                       "(MXNET_KVSTORE_TIMEOUT sets the limit)")
            else:
                why = ("the connection to another worker was lost: a worker died or exited "
                       "early (see its log)")
            s.failure = f"{op}{_describe(keys)}: {why}"
            first = text.splitlines()[0] if text else type(e).__name__
            raise MXNetError(f"{where}: {op}{_describe(keys)} failed: {why}. "
                             f"[torch.distributed: {first}]") from e

    def _on_wire(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` where the backend can reduce it: CUDA tensors stage on the CPU without NCCL,
        CPU tensors go to the GPU in an NCCL-only group (one the program built itself)."""
        backend = self._session.backend
        if t.is_cuda and "nccl" not in backend:
            return t.cpu()
        if not t.is_cuda and "gloo" not in backend and "nccl" in backend:
            return t.cuda()
        return t

    # --- communication hooks ----------------------------------------------------------------------
    def _init_value(self, key, value: NDArray) -> NDArray:
        """Rank 0's value, on every worker (MXNet: only rank 0's init reaches the servers)."""
        stored = super()._init_value(key, value)
        if stored.stype == "row_sparse":
            engine.push(lambda: stored._set(self._bcast_rows(key, stored._sparse())),
                        reads=(stored,), writes=(stored,))
            return stored

        def _bcast():
            t = stored._data
            wire = self._on_wire(t)
            with self._comm("init (broadcast from rank 0)", [key]):
                dist.broadcast(wire, src=0)
            if wire is not t:
                t.copy_(wire)
        engine.push(_bcast, reads=(stored,), writes=(stored,))
        return stored

    def _reduce_workers(self, key, merged: NDArray) -> NDArray:
        return self._reduce_workers_many([(key, merged)])[0]

    def _reduce_workers_many(self, pairs) -> list:
        """Sum each array over the workers: dense ones in buckets per (dtype, device), one
        all-reduce each; row_sparse ones by gathering their rows (:meth:`_reduce_rows`)."""
        if not pairs:
            return []
        keys = [k for k, _ in pairs]
        arrays = [m for _, m in pairs]
        device_comm = self._use_device_comm
        rows_idx = [i for i, a in enumerate(arrays) if a.stype == "row_sparse"]
        dense_idx = [i for i, a in enumerate(arrays) if a.stype != "row_sparse"]

        def _run():
            t0 = time.perf_counter()
            outs = [None] * len(arrays)
            if dense_idx:
                tensors = [arrays[i]._data if device_comm else arrays[i]._data.to("cpu")
                           for i in dense_idx]
                summed = self._allreduce_buckets([keys[i] for i in dense_idx], tensors)
                for i, t in zip(dense_idx, summed):
                    outs[i] = t
            for i in rows_idx:
                s = arrays[i]._sparse()
                if not device_comm:
                    s = Sparse(s.stype, s.data.to("cpu"), tuple(a.to("cpu") for a in s.aux),
                               s.shape)
                outs[i] = self._reduce_rows(keys[i], s)
            st = self.comm_stats
            st["pushes"] += 1
            st["seconds"] += time.perf_counter() - t0
            return outs
        outs = engine.push(_run, reads=arrays)
        res = []
        for t, a in zip(outs, arrays):
            ctx = a.context if device_comm else cpu(0)
            res.append(_wrap(t, ctx) if isinstance(t, Sparse) else from_torch(t, ctx))
        return res

    # --- row_sparse traffic: the stored rows only ----------------------------------------------
    def _gather(self, t: torch.Tensor, op: str, keys) -> list:
        """Every worker's ``t`` (same shape everywhere), in rank order; counts the bytes sent."""
        wire = self._on_wire(t.contiguous())
        parts = [torch.empty_like(wire) for _ in range(self.num_workers)]
        with self._comm(op, keys):
            dist.all_gather(parts, wire)
        st = self.comm_stats
        st["bytes"] += wire.numel() * wire.element_size()
        st["sparse_bytes"] += wire.numel() * wire.element_size()
        return [p.to(t.device) for p in parts]

    def _reduce_rows(self, key, s: Sparse) -> Sparse:
        """The sum over workers of a row_sparse value, sending only its stored rows: each worker
        gathers the row counts (with a checksum of the key and shape), then the padded row
        indices, then the padded rows, and adds them up (the union of the rows, sorted), as
        MXNet's servers sum row_sparse pushes. Bytes sent per worker: 16 + the largest row
        count times (8 + the row size)."""
        rows, data = s.aux[0].to(torch.int64), s.data
        tag = zlib.crc32(repr((key, tuple(s.shape), str(data.dtype))).encode()) & 0x7FFFFFFF
        head = torch.tensor([rows.numel(), tag], dtype=torch.int64, device=rows.device)
        heads = self._gather(head, "push (row_sparse: row counts)", [key])
        if any(int(h[1]) != tag for h in heads):
            self._session.failure = "workers pushed different keys"
            self._check_tag(-1, tag, [key])
        counts = [int(h[0]) for h in heads]
        width = max(counts)
        if width == 0:
            return Sparse("row_sparse", data[:0], (rows[:0],), s.shape)
        pad_rows = torch.zeros(width, dtype=torch.int64, device=rows.device)
        pad_rows[:rows.numel()] = rows
        pad_data = torch.zeros((width,) + tuple(data.shape[1:]), dtype=data.dtype,
                               device=data.device)
        pad_data[:rows.numel()] = data
        all_rows = self._gather(pad_rows, "push (row_sparse: row indices)", [key])
        all_data = self._gather(pad_data, "push (row_sparse: rows)", [key])
        self.comm_stats["rows"] += rows.numel()
        idx = torch.cat([r[:c] for r, c in zip(all_rows, counts)])
        vals = torch.cat([d[:c] for d, c in zip(all_data, counts)])
        uniq, inv = torch.unique(idx, sorted=True, return_inverse=True)
        out = torch.zeros((uniq.numel(),) + tuple(data.shape[1:]), dtype=data.dtype,
                          device=data.device)
        out.index_add_(0, inv, vals)
        return Sparse("row_sparse", out, (uniq,), s.shape)

    def _bcast_rows(self, key, s: Sparse) -> Sparse:
        """Rank 0's row_sparse value on every worker: its row count, then its rows."""
        rows, data = s.aux[0].to(torch.int64), s.data
        n = self._on_wire(torch.tensor([rows.numel()], dtype=torch.int64))
        with self._comm("init (broadcast from rank 0)", [key]):
            dist.broadcast(n, src=0)
            k = int(n.item())
            if self.rank != 0:
                rows = torch.zeros(k, dtype=torch.int64, device=rows.device)
                data = torch.zeros((k,) + tuple(data.shape[1:]), dtype=data.dtype,
                                   device=data.device)
            if k:
                wr, wd = self._on_wire(rows.contiguous()), self._on_wire(data.contiguous())
                dist.broadcast(wr, src=0)
                dist.broadcast(wd, src=0)
                rows, data = wr.to(rows.device), wd.to(data.device)
        return Sparse("row_sparse", data, (rows,), s.shape)

    def _buckets(self, tensors) -> list:
        """Index lists: consecutive keys of one dtype and device, up to the bucket size."""
        groups: dict = {}
        for i, t in enumerate(tensors):
            groups.setdefault((t.dtype, t.device), []).append(i)
        buckets = []
        for idx in groups.values():
            cur, size = [], 0
            for i in idx:
                nbytes = tensors[i].numel() * tensors[i].element_size()
                if cur and size + nbytes > self._bucket_bytes:
                    buckets.append(cur)
                    cur, size = [], 0
                cur.append(i)
                size += nbytes
            buckets.append(cur)
        return buckets

    def _allreduce_buckets(self, keys, tensors) -> list:
        buckets = self._buckets(tensors)
        flats, tags, works = [], [], []
        for idx in buckets:
            parts = [tensors[i].reshape(-1) for i in idx]
            dtype = parts[0].dtype
            tag = None
            modulus, exact = _TAGGED.get(dtype, (0, 0))
            if modulus and modulus * self.num_workers <= exact:
                sig = repr([(keys[i], tuple(tensors[i].shape)) for i in idx]).encode()
                tag = zlib.crc32(sig) % modulus + 1
                parts.append(torch.full((1,), tag, dtype=dtype, device=parts[0].device))
            flat = self._on_wire(torch.cat(parts))
            with self._comm("push (all-reduce)", [keys[i] for i in idx]):
                works.append(dist.all_reduce(flat, async_op=True))
            flats.append(flat)
            tags.append(tag)
            self.comm_stats["buckets"] += 1
            self.comm_stats["bytes"] += flat.numel() * flat.element_size()
        outs = [None] * len(tensors)
        for idx, flat, tag, work in zip(buckets, flats, tags, works):
            with self._comm("push (all-reduce)", [keys[i] for i in idx]):
                work.wait()
            if tag is not None:
                self._check_tag(flat[-1].item(), tag, [keys[i] for i in idx])
            if flat.device != tensors[idx[0]].device:
                flat = flat.to(tensors[idx[0]].device)
            off = 0
            for i in idx:
                n = tensors[i].numel()
                outs[i] = flat[off:off + n].view(tensors[i].shape)
                off += n
        return outs

    def _check_tag(self, got, tag, keys) -> None:
        if got != tag * self.num_workers:
            self._session.failure = "workers pushed different keys"
            raise MXNetError(
                f"kvstore '{self.type}' (rank {self.rank} of {self.num_workers}): the workers "
                f"pushed different keys or shapes in the same step (this worker: "
                f"{_keys_text(keys)}): every worker must push the same keys in the same order")

    # --- worker-level operations -----------------------------------------------------------------
    def _barrier(self):
        """Wait until every worker reaches the barrier (MXNetError after the timeout)."""
        with self._comm("barrier"):
            dist.barrier()

    barrier = _barrier

    def set_optimizer(self, optimizer):
        """Install ``optimizer`` on this worker; every worker must install an equal one (their
        scalar settings are compared, MXNetError otherwise), so updates agree everywhere."""
        mine = _optimizer_fields(optimizer)
        gathered = [None] * self.num_workers
        with self._comm("set_optimizer (compare settings)"):
            dist.all_gather_object(gathered, mine)
        for r, theirs in enumerate(gathered):
            if theirs != mine:
                diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
                raise MXNetError(
                    f"kvstore '{self.type}' (rank {self.rank}): rank {r} set a different "
                    f"optimizer ({', '.join(f'{k}: {theirs.get(k)!r} vs {mine.get(k)!r} here' for k in diff)}): "
                    "dist_sync needs the same optimizer (and batch size) on every worker")
        super().set_optimizer(optimizer)

    def total_metric(self, eval_metric) -> list:
        """``[(name, value)]`` of ``eval_metric`` over all workers: each metric's sums and
        instance counts (its global ones when it keeps them) added up across workers."""
        leaves = [m for m in _leaf_metrics(eval_metric) if isinstance(m.name, str)]
        stats = []
        for m in leaves:
            if getattr(m, "_has_global_stats", False):
                stats.append([float(m.global_sum_metric), float(m.global_num_inst)])
            else:
                stats.append([float(m.sum_metric), float(m.num_inst)])
        t = self._on_wire(torch.tensor(stats, dtype=torch.float64).reshape(-1, 2))
        with self._comm("metric (all-reduce)"):
            dist.all_reduce(t)
        return [(m.name, s / n if n else math.nan) for m, (s, n) in zip(leaves, t.tolist())]

    def _send_command_to_servers(self, head, body):
        raise MXNetError(f"kvstore '{self.type}' has no servers: neomx's dist stores all-reduce "
                         "among the workers")


_ASYNC_MESSAGE = (
    "kvstore '{name}' is not supported: neomx's distributed stores run on torch.distributed "
    "collectives (all-reduce), in which every worker takes part in every step. Asynchronous "
    "SGD needs parameter servers that apply each worker's push as it arrives, and neomx has "
    "none. Use 'dist_sync' (or 'dist_device_sync'): same scripts, synchronous updates.")
