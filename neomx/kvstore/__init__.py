"""``mx.kv`` / ``mx.kvstore``: key-value stores that sum values across devices and apply the
optimizer (MXNet 1.9.1's ``local`` and ``device`` stores).

* :func:`create` -- a store by name (``'local'``, ``'device'``, registered names, ...).
* :class:`KVStoreBase` -- the abstract interface and its registry.
* :class:`KVStore` -- the single-machine store; its communication hooks are where a
  distributed store plugs in.
* :class:`DistKVStore` -- ``dist_sync``/``dist_device_sync`` on torch.distributed
  (:mod:`~neomx.kvstore.process_group` joins the workers).
"""
from __future__ import annotations

from .base import KVStoreBase, TestStore, create
from .kvstore import KVStore
from .dist import DistKVStore

__all__ = ["create", "KVStoreBase", "KVStore", "DistKVStore", "TestStore"]
