"""``Updater``: the ``updater(index, grad, weight)`` callable that KVStore and Module use.

It creates each index's optimizer state on first use (``create_state_multi_precision``) and
calls ``optimizer.update_multi_precision``. Indices may be single or lists; for optimizers with
``aggregate_num > 0`` (SGD: 4) lists are grouped by weight dtype and passed in chunks of
``aggregate_num``, as MXNet does. Update counts are kept per device of the weights.
"""
from __future__ import annotations

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
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
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
        """Load pickled states (from ``get_states``); ``(states, optimizer)`` also restores
        the optimizer. Arrays move to the weights' context on their next update."""
        states = pickle.loads(states)
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
