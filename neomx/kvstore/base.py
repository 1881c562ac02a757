"""``KVStoreBase`` (the abstract store interface and its registry), key checks and ``create``.

A store name is matched case-insensitively, as in MXNet 1.9.1:

* a name registered with ``KVStoreBase.register`` (e.g. ``'teststore'``) makes that class;
* a name containing ``dist`` is a distributed store on torch.distributed
  (:class:`~neomx.kvstore.dist.DistKVStore`; ``dist_async`` raises MXNetError);
* ``nccl`` needs NCCL, which neomx does not bind (MXNetError, MXNet's text);
* a name containing ``device`` makes a :class:`~neomx.kvstore.KVStore` reducing on the devices;
* **any other name** makes a local :class:`~neomx.kvstore.KVStore` whose ``type`` is that name.
"""
from __future__ import annotations

import warnings

from ..base import MXNetError, integer_types, string_types
from ..ndarray import NDArray

__all__ = ["KVStoreBase", "create"]


class KVStoreBase:
    """An abstract key-value store for data-parallel training (MXNet's ``KVStoreBase``).

    Subclasses implement ``broadcast``, ``pushpull``, ``set_optimizer``, ``is_capable``,
    ``save_optimizer_states``/``load_optimizer_states`` and the ``type``/``rank``/
    ``num_workers`` properties; ``register`` makes them available to :func:`create`.
    """

    OPTIMIZER = "optimizer"
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` (from rank 0) into ``out`` (an NDArray or a list)."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (a list is summed across devices) and write the result into ``out``
        (``value`` itself when ``out`` is None)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Install ``optimizer`` so that pushes update the stored values."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (and the optimizer when ``dump_optimizer``) to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Read updater states written by ``save_optimizer_states``."""
        raise NotImplementedError()

    @property
    def type(self):
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a KVStore class under its lowercased name, for :func:`create`.

        Examples
        --------
        >>> import neomx as mx
        >>> @mx.kvstore.KVStoreBase.register
        ... class MyKVStore(mx.kvstore.KVStoreBase):
        ...     pass
        >>> type(mx.kv.create('MyKVStore')).__name__
        'MyKVStore'
        """
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn("WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s"
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's store for testing: no state, no optimizer; ``pushpull`` sums, ``broadcast``
    copies."""

    def broadcast(self, key, value, out, priority=0):
        for o in (out if isinstance(out, list) else [out]):
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        if isinstance(value, NDArray):
            if out is not None:
                for o in (out if isinstance(out, list) else [out]):
                    o[:] = value
            return
        ctx = value[0].context
        reduced = sum(v.as_in_context(ctx) for v in value)
        for o in (value if out is None else (out if isinstance(out, list) else [out])):
            o[:] = reduced

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError("Unknown capability: {}".format(capability))

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()


# --- keys ----------------------------------------------------------------------------------
def key_value_pairs(keys, values):
    """Flatten ``(key(s), value(s))`` into ``([(key, [NDArray, ...]), ...], uses_str_keys)``.

    One key takes an NDArray or a list of NDArrays (one per device); a list of keys takes a
    list of such values. All keys of one call must be ints or all strs (MXNet's assertions).
    """
    if isinstance(keys, (tuple, list)):
        assert len(keys) == len(values)
        pairs, use_str = [], None
        for k, v in zip(keys, values):
            sub, s = key_value_pairs(k, v)
            pairs += sub
            use_str = s if use_str is None else use_str
            assert use_str == s, "inconsistent types of keys detected."
        return pairs, bool(use_str)
    assert isinstance(keys, integer_types + string_types) and not isinstance(keys, bool), \
        "unexpected type for keys: " + str(type(keys))
    use_str = isinstance(keys, string_types)
    key = keys if use_str else int(keys)
    if isinstance(values, NDArray):
        return [(key, [values])], use_str
    values = list(values)
    for v in values:
        assert isinstance(v, NDArray)
    return [(key, values)], use_str


def group_pairs(pairs):
    """Merge pairs with the same key, keeping the order in which keys first appear."""
    grouped: dict = {}
    for k, vals in pairs:
        grouped.setdefault(k, []).extend(vals)
    return list(grouped.items())


def __getattr__(name):
    """``create`` (MXNet defines it here) lives in the package, which imports this module."""
    if name == "create":
        from . import create
        return create
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
