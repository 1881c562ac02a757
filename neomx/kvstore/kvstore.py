"""``KVStore``: the single-machine store (``'local'`` and ``'device'``), with the communication
steps as overridable hooks so that a distributed store can reuse everything else."""
from __future__ import annotations

from .. import engine
from .. import optimizer as opt
from ..base import MXNetError, shape_str
from ..context import Context, cpu
from ..ndarray.ndarray import NDArray, from_torch
from .base import KVStoreBase, group_pairs, key_value_pairs

__all__ = ["KVStore"]


class KVStore(KVStoreBase):
    """A key-value store synchronising values over the devices of one machine.

    ``init`` stores a copy of each value; ``push`` sums a list of values (one per device) and
    either replaces the stored value with the sum or, once an optimizer is set, runs
    ``updater(key, sum, stored)``; ``pull`` copies the stored value into arrays on any devices;
    ``pushpull`` is a push followed by a pull. Keys are ints or strs, never mixed.

    ``'local'`` sums on ``cpu(0)`` and keeps the stored values there; ``'device'`` sums on the
    first GPU among the pushed values' contexts (the first value's context when there is none)
    and, with an updater, moves the stored value there, so updates also run on the GPU.

    Subclasses (a distributed store) override the communication hooks, which everything else
    goes through:

    * ``_init_value(key, value)``: the value to store at ``init`` (rank 0's, in a dist store);
    * ``_reduce(key, values)``: the sum over this worker's devices;
    * ``_reduce_workers(key, merged)``: the sum over workers (identity here; ``all_reduce``
      for dist_sync); ``_reduce_workers_many(pairs)`` does it for all keys of one push;
    * ``_broadcast(key, stored, outs)``: copy the stored value into the pulled arrays;
    * ``rank`` and ``num_workers``.

    Examples
    --------
    >>> import neomx as mx
    >>> kv = mx.kv.create('local')
    >>> kv.init('w', mx.nd.zeros((2,)))
    >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
    >>> w = [mx.nd.zeros((2,), ctx=mx.cpu(0)), mx.nd.zeros((2,), ctx=mx.cpu(1))]
    >>> g = [mx.nd.ones((2,), ctx=mx.cpu(0)), mx.nd.ones((2,), ctx=mx.cpu(1))]
    >>> kv.pushpull('w', g, out=w)          # one SGD step on the summed gradient
    >>> w[1].asnumpy()
    array([-0.2, -0.2], dtype=float32)
    """

    def __init__(self, name: str = "local"):
        self._type = name
        self._use_device_comm = "device" in name
        self._store: dict = {}
        self._key_type = None  # 'int' or 'str' after the first operation
        self._updater = None
        self._compression_params = None

    # --- properties ---------------------------------------------------------------------------
    @property
    def type(self) -> str:
        """The name the store was created with (lowercased)."""
        return self._type

    @property
    def rank(self) -> int:
        """0: a local store has one worker."""
        return 0

    @property
    def num_workers(self) -> int:
        """1: a local store has one worker."""
        return 1

    def is_capable(self, capability):
        """Local stores run optimizers: ``is_capable('optimizer')`` is True."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError("Unknown capability: {}".format(capability))

    # --- keys ---------------------------------------------------------------------------------
    def _pairs(self, keys, values):
        pairs, use_str = key_value_pairs(keys, values)
        kind = "str" if use_str else "int"
        if self._key_type is None:
            self._key_type = kind
        elif self._key_type != kind:
            raise MXNetError("Mixed key types are not allowed")
        return pairs

    def _lookup(self, key) -> NDArray:
        try:
            return self._store[key]
        except KeyError:
            if isinstance(key, str):
                raise MXNetError(f"key {key} doesn't exist. Did you init?") from None
            raise MXNetError(f"key {key} has not been inited") from None

    # --- operations ---------------------------------------------------------------------------
    def init(self, key, value):
        """Store a copy of each value under its key; a key can be initialised only once.

        ``key`` is an int or str (or a list of them); ``value`` an NDArray (or a list).
        """
        for k, vals in self._pairs(key, value):
            for v in vals:  # several values for one key count as repeated inits, as in MXNet
                if k in self._store:
                    raise MXNetError(f"duplicate init of key {k}. Please double check if you "
                                     "called kv.init or kv.broadcast with this key multiple times")
                self._store[k] = self._init_value(k, v)

    def push(self, key, value, priority=0):
        """Sum the values pushed for each key, then update the stored value.

        With no updater the stored value is replaced by the sum; with one (``set_optimizer``
        or ``_set_updater``), ``updater(key, sum, stored)`` updates it in place. ``priority``
        is accepted for compatibility; work runs in call order.
        """
        pending = []
        for k, vals in group_pairs(self._pairs(key, value)):
            stored = self._lookup(k)
            for v in vals:
                if v.shape != stored.shape:
                    raise MXNetError(f"Check failed: from.shape() == to.shape(): operands shape "
                                     f"mismatch from.shape = {shape_str(v.shape)} "
                                     f"to.shape={shape_str(stored.shape)} (push to key {k})")
            pending.append((k, self._reduce(k, vals), stored))
        # all keys of one push cross the workers together (a dist store buckets them)
        merged = self._reduce_workers_many([(k, m) for k, m, _ in pending])
        for (k, _, stored), m in zip(pending, merged):
            self._apply(k, m, stored)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy each key's stored value into ``out`` (an NDArray or a list, on any devices)."""
        assert out is not None
        for k, outs in group_pairs(self._pairs(key, out)):
            self._broadcast(k, self._lookup(k), outs)

    def pushpull(self, key, value, out=None, priority=0):
        """``push(key, value)`` then ``pull(key, out)``; ``out=None`` writes back into ``value``."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """``init(key, value)`` then ``pull(key, out)`` (so a key is broadcast only once)."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` (an NDArray per ``out``, or one for all) of each key's
        stored value into the row_sparse arrays ``out``: each gets the sorted unique rows asked
        for (zero rows included), nothing else."""
        assert out is not None
        assert row_ids is not None
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        assert isinstance(row_ids, list), "row_ids should be NDArray or list of NDArray"
        first_out = out
        single_rowid = len(row_ids) == 1 and isinstance(out, list)
        if single_rowid:
            first_out = [out[0]]
        pairs = self._pairs(key, first_out)
        id_pairs = self._pairs(key, row_ids)
        outs = [o for _, vals in pairs for o in vals]
        ids = [r for _, vals in id_pairs for r in vals]
        assert len(ids) == len(outs), "the number of row_ids doesn't match the number of values"
        keys = [k for k, vals in pairs for _ in vals]
        for k, o, r in zip(keys, outs, ids):
            if o.stype != "row_sparse":
                raise MXNetError("Check failed: out->storage_type() == kRowSparseStorage: "
                                 "row_sparse_pull expects row_sparse storage type for out")
            from ..ndarray.sparse_grad import pull_rows
            pull_rows(self._lookup(k), r, o)
        if single_rowid:
            for o in out[1:]:
                out[0].copyto(o)

    def set_gradient_compression(self, compression_params):
        """Gradient compression: rejected for local stores (as in MXNet) and not implemented
        for 'device' stores (it would change the numbers silently)."""
        if "device" not in self.type and "dist" not in self.type:
            raise Exception("Gradient compression is not supported for this type of kvstore")
        raise MXNetError(f"gradient compression ({dict(compression_params)}) is not implemented "
                         "in neomx's KVStore")

    # --- optimizer ----------------------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Install ``optimizer``: pushes then run ``mx.optimizer.get_updater(optimizer)``."""
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Install ``updater(key, merged, stored)``, called by every push (str keys are passed
        as bytes, as MXNet's C API does)."""
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's pickled states (and the optimizer when ``dump_optimizer``)."""
        assert self._updater is not None, "Cannot save states for distributed training"
        with open(fname, "wb") as fout:
            fout.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Load states written by ``save_optimizer_states`` into the updater."""
        assert self._updater is not None, "Cannot load states for distributed training"
        with open(fname, "rb") as fin:
            self._updater.set_states(fin.read())

    def _barrier(self):
        """Global barrier among workers: nothing to wait for with one worker."""

    barrier = _barrier

    def _send_command_to_servers(self, head, body):
        raise MXNetError("a local KVStore has no servers")

    # --- communication hooks -------------------------------------------------------------------
    def _init_value(self, key, value: NDArray) -> NDArray:
        """The copy kept for ``key`` (on ``cpu(0)``, as MXNet keeps it in pinned memory)."""
        return value.copyto(cpu(0))

    def _reduce_context(self, values) -> Context:
        if self._use_device_comm:
            for v in values:
                if v.context.device_typeid == 2:
                    return v.context
            return values[0].context
        return cpu(0)

    def _reduce(self, key, values) -> NDArray:
        """The sum of ``values`` (one per device); a single value is passed through uncopied."""
        if len(values) == 1:
            return values[0]
        ctx = self._reduce_context(values)
        if any(v.__class__ is not NDArray for v in values):  # (row_sparse: the union of rows)
            from ..ndarray import add_n
            return add_n(*(v if v.context == ctx else v.copyto(ctx) for v in values))
        dev = ctx.torch_device
        srcs = [v._data for v in values]

        def _sum():
            acc = srcs[0].to(dev, copy=True)
            for t in srcs[1:]:
                acc.add_(t.to(dev))
            return acc
        return from_torch(engine.push(_sum, reads=values, ctx=ctx), ctx)

    def _reduce_workers(self, key, merged: NDArray) -> NDArray:
        """The sum over workers: the identity for a single-process store."""
        return merged

    def _reduce_workers_many(self, pairs) -> list:
        """``[_reduce_workers(key, merged) for key, merged in pairs]``: the keys of one push,
        in order (a distributed store sums them in a few bucketed all-reduces)."""
        return [self._reduce_workers(k, m) for k, m in pairs]

    def _broadcast(self, key, stored: NDArray, outs) -> None:
        for o in outs:
            if o is not stored:
                stored.copyto(o)

    def _apply(self, key, merged: NDArray, stored: NDArray) -> None:
        """Replace (no updater) or update the stored value with the reduced one."""
        if self._updater is None:
            merged.copyto(stored)
            return
        if merged.context.device_typeid == 2 and stored.context.device_typeid != 2:
            stored = self._store[key] = stored.copyto(merged.context)
        self._updater(key.encode() if isinstance(key, str) else key, merged, stored)
