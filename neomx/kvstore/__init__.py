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

from ..base import MXNetError, string_types
from .base import KVStoreBase, TestStore
from .kvstore import KVStore
from .dist import DistKVStore

__all__ = ["create", "KVStoreBase", "KVStore", "DistKVStore", "TestStore"]


# --- create ----------------------------------------------------------------------------------
def create(name="local"):
    """Create a KVStore.

    Parameters
    ----------
    name : str
        ``'local'`` (reduce and update on the CPU), ``'device'`` (reduce and update on the first
        GPU holding the values), a registered store's name, or any other name (a local store
        of that ``type``. ``dist_sync`` and ``dist_device_sync`` sum over the workers of a
        torch.distributed job (started by ``python -m neomx.launch``, torchrun or Slurm;
        MXNetError outside one); ``dist_async`` and ``nccl`` raise MXNetError.

    Examples
    --------
    >>> import neomx as mx
    >>> kv = mx.kv.create('local')
    >>> kv.type, kv.rank, kv.num_workers
    ('local', 0, 1)
    >>> kv.init(3, mx.nd.ones((2, 3)))
    >>> kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 2])   # summed: 3
    >>> out = mx.nd.zeros((2, 3))
    >>> kv.pull(3, out=out)
    >>> out.asnumpy()[0]
    array([3., 3., 3.], dtype=float32)
    """
    if not isinstance(name, string_types):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if "dist" in name:
        return DistKVStore(name)
    if "nccl" in name:
        raise MXNetError(f"compile with USE_NCCL=1 to use {name} (neomx has no NCCL store; "
                         "use 'device' to reduce on the GPUs)")
    return KVStore(name)
