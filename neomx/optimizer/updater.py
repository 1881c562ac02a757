"""``Updater``: the ``updater(index, grad, weight)`` callable that KVStore and Module use.

It creates each index's optimizer state on first use (``create_state_multi_precision``) and
calls ``optimizer.update_multi_precision``. Indices may be single or lists; for optimizers with
``aggregate_num > 0`` (SGD: 4) lists are grouped by weight dtype and passed in chunks of
``aggregate_num``, as MXNet does. Update counts are kept per device of the weights.

States files: ``get_states`` pickles ``states`` (or ``(states, optimizer)``) with neomx's
classes. ``set_states`` also reads the pickles MXNet 1.9.1 writes (``Module``/``KVStore``
``save_optimizer_states``, ``gluon.Trainer.save_states``): their ``mxnet.*`` classes are read
as their ``neomx.*`` namesakes and MXNet's NDArray pickles (raw NDArray-file records) as
NDArrays. ``_mxnet_pickle`` writes the other way, for files MXNet reads.
"""
from __future__ import annotations

import io
import pickle

from ..ndarray import NDArray

__all__ = ["Updater", "get_updater"]


class Updater:
    """Applies ``optimizer`` to ``(index, grad, weight)``, keeping states in ``states``.

    Examples
    --------
    >>> import neomx as mx
    >>> updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.5))
    >>> w = mx.nd.ones((2,))
    >>> updater(0, mx.nd.ones((2,)), w)
    >>> w.asnumpy()
    array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), grad, weight
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode()
            if idx not in self.states:
                w = weights[i]
                if w.__class__ is not NDArray:  # (a row_sparse weight: dense states)
                    w = w.tostype("default")
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, w)
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if not getattr(self.optimizer, "_sparse_updates", False):
            grads = [g if g.__class__ is NDArray else g.tostype("default") for g in grads]
        if self.aggregate_updates:
            self._aggregated(indices, weights, grads)
        else:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def _aggregated(self, indices, weights, grads):
        """Group by dtype (in first-seen order), then chunks of ``aggregate_num``."""
        by_dtype: dict = {}
        for i, w, g in zip(indices, weights, grads):
            by_dtype.setdefault(w.dtype, []).append((i, w, g))
        n = self.optimizer.aggregate_num
        for group in by_dtype.values():
            idxs, ws, gs = zip(*group)
            for start in range(0, len(idxs), n):
                sl = slice(start, start + n)
                self.optimizer.update_multi_precision(idxs[sl], ws[sl], gs[sl],
                                                      [self.states[i] for i in idxs[sl]])

    def sync_state_context(self, state, context):
        """``state`` with its arrays moved to ``context`` (tuples/lists kept)."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = (self.sync_state_context(s, context) for s in state)
            return tuple(synced) if isinstance(state, tuple) else list(synced)
        return state

    def set_states(self, states):
        """Load pickled states (from ``get_states``, or written by MXNet 1.9.1);
        ``(states, optimizer)`` also restores the optimizer. Arrays move to the weights'
        context on their next update."""
        states = _loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
            # MXNet keeps the old flag, which loops forever when switching from SGD to a
            # non-aggregating optimizer
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The pickled states (with the optimizer when ``dump_optimizer``)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)


# --- MXNet-written states files -------------------------------------------------------------
class _MXNetNDArray:
    """What MXNet pickles as ``mxnet.ndarray.ndarray.NDArray``: ``NDArray(None)``, then
    ``__setstate__({'handle': <one array in MXNet's NDArray file record format>})``."""

    def __init__(self, handle=None):
        self.array = None

    def __setstate__(self, state):
        from ..ndarray.serialization import _read_record, _Reader
        if state.get("handle") is not None:
            self.array = _read_record(_Reader(bytes(state["handle"])))


class _MXNetUnpickler(pickle.Unpickler):
    """Reads ``mxnet.*`` classes as their ``neomx.*`` namesakes (and NumPy 1's paths)."""

    def find_class(self, module, name):
        if module == "mxnet.ndarray.ndarray" and name == "NDArray":
            return _MXNetNDArray
        if module == "mxnet" or module.startswith("mxnet."):
            module = "neomx" + module[len("mxnet"):]
        elif module.startswith("numpy.core"):
            module = "numpy._core" + module[len("numpy.core"):]
        return super().find_class(module, name)


def _unwrap(obj):
    if isinstance(obj, _MXNetNDArray):
        return obj.array
    if isinstance(obj, tuple):
        return tuple(_unwrap(o) for o in obj)
    if isinstance(obj, list):
        return [_unwrap(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


class _MXNetPickler(pickle._Pickler):  # (the Python pickler: its save_global can be changed)
    """Pickles as MXNet 1.9.1 does: ``neomx.X`` classes under their ``mxnet.X`` names and
    NDArrays as ``mxnet.ndarray.ndarray.NDArray`` with MXNet's raw-bytes state."""

    def reducer_override(self, obj):
        from ..ndarray import NDArray
        from ..ndarray.serialization import _record_bytes
        if isinstance(obj, NDArray):
            return _MXNetNDArray, (None,), {"handle": bytearray(_record_bytes(obj))}
        return NotImplemented

    def save_global(self, obj, name=None):
        if obj is _MXNetNDArray:
            module, qualname = "mxnet.ndarray.ndarray", "NDArray"
        else:
            module = getattr(obj, "__module__", None) or ""
            qualname = name or getattr(obj, "__qualname__", None)
            if not (module.startswith("neomx.") or module.startswith("numpy._core")):
                return super().save_global(obj, name)
            if module.startswith("neomx."):
                module = "mxnet." + module[len("neomx."):]
            else:  # NumPy 2's module paths, which NumPy 1 (MXNet's) reads as numpy.core
                module = "numpy.core" + module[len("numpy._core"):]
        self.save(module)
        self.save(qualname)
        self.write(pickle.STACK_GLOBAL)
        self.memoize(obj)


def _mxnet_pickle(obj):
    buf = io.BytesIO()
    _MXNetPickler(buf, protocol=4).dump(obj)
    return buf.getvalue()


def _loads(data):
    """Unpickle neomx's or MXNet's states bytes into neomx objects."""
    return _unwrap(_MXNetUnpickler(io.BytesIO(data)).load())


def _neomx_pickle(data):
    """Updater states as neomx pickles them: MXNet-written bytes are re-pickled with neomx's
    classes, neomx's own are returned unchanged."""
    if b"mxnet" not in data:
        return data
    loaded = _MXNetUnpickler(io.BytesIO(data)).load()
    return pickle.dumps(_unwrap(loaded))
