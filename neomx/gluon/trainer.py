"""``gluon.Trainer``: applies an Optimizer to a set of Parameters (MXNet 1.9.1's semantics).

State machine (as MXNet's): the KVStore is created lazily, on the first ``step``,
``allreduce_grads``, ``update``, ``save_states`` or ``load_states``:

* ``_kv_initialized`` False -> ``_init_kvstore()`` picks the store (``mx.kv.create(kvstore)``
  for several contexts or a 'dist' store, none for one context) and ``update_on_kvstore``
  (on by default when there is a store; ``MXNET_UPDATE_ON_KVSTORE=0`` or the argument turns it
  off) -> ``_kv_initialized`` True.
* ``_params_to_init`` non-empty -> ``_init_params()`` broadcasts each initialized parameter's
  first copy into the store and onto every context (parameters still waiting for deferred
  initialization stay in the list).
* ``step(batch_size)``: ``rescale_grad = scale / batch_size``; gradients are summed across
  contexts through the store (``pushpull``); then either the store ran the optimizer and the
  new weights were pulled onto every context (``update_on_kvstore``), or one Updater per
  context updates that context's copy with the summed gradient.

Changing a parameter's value with ``set_data`` while the store holds the weights resets the
store (``_reset_kvstore``) so that the next step broadcasts the new value.
"""
from __future__ import annotations

from .. import optimizer as opt
from ..kvstore import KVStoreBase
from ..module.module import _create_kvstore
from ..optimizer.updater import _mxnet_pickle, _neomx_pickle  # MXNet's states-file format
from .parameter import GluonAssertionError, Parameter, ParameterDict

__all__ = ["Trainer"]


def _check(cond, msg):
    if not cond:
        raise GluonAssertionError(msg)


class Trainer:
    """Applies an ``Optimizer`` on a set of Parameters; use it with ``autograd``.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        The parameters to optimize (a dict is taken in sorted key order).
    optimizer : str or Optimizer
        An optimizer name (``'sgd'``, ``'adam'``...) or instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer's constructor, e.g. ``{'learning_rate': 0.1}``
        (only with a name).
    kvstore : str or KVStore or None, default 'device'
        How gradients are summed across contexts (and workers, for ``'dist_sync'``).
    compression_params : dict, optional
        Gradient compression settings handed to the KVStore.
    update_on_kvstore : bool, optional
        Whether the store runs the optimizer (None: MXNet's choice, see the module doc).

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> with mx.autograd.record():
    ...     loss = net(mx.nd.ones((4, 2))).sum()
    >>> loss.backward()
    >>> trainer.step(4)
    >>> net.weight.data().asnumpy()
    array([[0.9, 0.9]], dtype=float32)
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, "
                             f"got {type(params)}.")
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, "
                                 f"got list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default":
                self._contains_sparse_weight = True
            if param._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            _check(contexts is None or contexts == ctx,
                   "All Parameters must be initialized on the same set of contexts, but "
                   f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                   f"are initialized on {contexts}.")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        # not copied: later changes of a parameter's lr_mult/wd_mult take effect
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            _check(not optimizer_params, "optimizer_params must be None if optimizer is an "
                   "instance of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # --- the KVStore ------------------------------------------------------------------------
    def _init_params(self):
        """Broadcast the initialized parameters into the store (deferred ones wait)."""
        _check(self._kv_initialized,
               "Cannot initialize parameters in KVStore when KVStore is not initialized.")
        pending = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    pending.append(param)
                    continue
                arrays = param._check_and_get(param._data, list)
                idx = self._param2idx[param.name]
                if param._stype != "default":
                    self._kvstore.init(idx, arrays[0])
                else:
                    self._kvstore.broadcast(idx, arrays[0], arrays)
        self._params_to_init = pending

    def _reset_kvstore(self):
        """Forget the store: the next step creates it again and re-broadcasts the weights."""
        if self._kvstore and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        """Create the store and decide ``update_on_kvstore`` (MXNet's rules and errors)."""
        config = self._kvstore_params
        wanted = config["update_on_kvstore"]
        if self._contains_sparse_weight or self._contains_sparse_grad:
            self._init_sparse_kvstore(config)
            return
        arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
        kvstore, update_on_kvstore = _create_kvstore(config["kvstore"], len(self._contexts),
                                                     arg_arrays)
        self._distributed = "dist" in kvstore.type if kvstore else False
        if self._distributed and "async" in kvstore.type:
            update_on_kvstore = True
            if wanted is False:
                raise ValueError("Please set update_on_kvstore=True when training in async "
                                 "mode.")
        if wanted is not None:
            update_on_kvstore = wanted
        # (with kvstore=None and update_on_kvstore=True MXNet fails here on None, and so do we)
        if update_on_kvstore and not kvstore.is_capable(KVStoreBase.OPTIMIZER):
            if wanted:
                raise ValueError("Please set update_on_kvstore=False when training with "
                                 f"{type(kvstore)}")
            update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_sparse_kvstore(self, config):
        """MXNet's stores for sparse training: row_sparse weights live in a store that runs
        the optimizer (row_sparse_pull before forward, push of the gradients after backward);
        dense weights with sparse gradients update locally unless the store is distributed."""
        from .. import kvstore as kvs
        wanted = config["update_on_kvstore"]
        if self._contains_sparse_weight:
            kvstore = config["kvstore"]
            if isinstance(kvstore, str):
                kvstore = kvs.create(kvstore)
            elif not isinstance(kvstore, KVStoreBase):
                raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. "
                                "The type must be KVStore or str.")
            update_on_kvstore = True
            self._distributed = "dist" in kvstore.type
            if wanted is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                                 "present.")
        else:
            arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, _ = _create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            update_on_kvstore = self._distributed
            if wanted is not None:
                if wanted is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                     "sparse gradients are present.")
                update_on_kvstore = wanted
        if kvstore:
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore, self._update_on_kvstore = kvstore, update_on_kvstore
        else:
            self._kvstore, self._update_on_kvstore = None, None
        self._kv_initialized = True

    def _init_kv_and_params(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # --- learning rate -----------------------------------------------------------------------
    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (UserWarning when it has an lr_scheduler)."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is "
                              "mutated.")
        self._optimizer.set_learning_rate(lr)

    # --- training ---------------------------------------------------------------------------
    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        self._init_kv_and_params()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            _check(row_id.size == out.shape[0], "")
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning("Possible change in the `batch_size` from previous `step` "
                                  "detected. Optimizer gradient normalizing factor will not "
                                  "change w.r.t new batch_size when update_on_kvstore=True "
                                  "and when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """One update: gradients summed across contexts, scaled by ``1/batch_size``, then
        applied. Call it after ``backward()``, outside ``record()``.

        ``ignore_stale_grad``: skip parameters whose gradient no backward wrote since the last
        step (else UserWarning)."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._init_kv_and_params()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each parameter's gradients across contexts (for a later :meth:`update`); not
        available when the store runs the optimizer."""
        self._init_kv_and_params()
        _check(not (self._kvstore and self._update_on_kvstore),
               "allreduce_grads() when parameters are updated on kvstore is not supported. "
               "Try setting `update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if grads[0].stype != "default":  # (sparse: push, then pull what is dense)
                self._kvstore.push(i, grads, priority=-i)
                if param._stype == "default":
                    pull = param.list_data() if self._update_on_kvstore else grads
                    self._kvstore.pull(i, pull, priority=-i, ignore_sparse=self._distributed)
            elif self._update_on_kvstore:
                # push the gradients, pull the updated weights
                self._kvstore.pushpull(i, grads, out=param.list_data(), priority=-i)
            else:
                self._kvstore.pushpull(i, grads, priority=-i)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of :meth:`step` (after :meth:`allreduce_grads`); not available
        when the store runs the optimizer."""
        self._init_kv_and_params()
        _check(not (self._kvstore and self._update_on_kvstore),
               "update() when parameters are updated on kvstore is not supported. Try "
               "setting `update_on_kvstore` to False when creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        loss_scaler = getattr(self, "_amp_loss_scaler", None)
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return  # skip the step on overflow
        on_kvstore = bool(self._kvstore and self._update_on_kvstore)
        updates = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):
                    if not data._fresh_grad:
                        raise UserWarning(
                            f"Gradient of Parameter `{param.name}` on context {data.context} "
                            "has not been updated by backward since last `step`. This could "
                            "mean a bug in your model that made it only use a subset of the "
                            "Parameters (Blocks) for this iteration. If you are intentionally "
                            "only using a subset, call step with ignore_stale_grad=True to "
                            "suppress this warning and skip updating of Parameters with stale "
                            "gradient")
            if on_kvstore:
                continue  # (MXNet leaves the gradients marked fresh here)
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
        if on_kvstore:
            return
        for updater, upd in zip(self._updaters, updates):
            if upd:
                indices, grads, weights = zip(*upd)
                updater(indices, grads, weights)

    # --- states -------------------------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer and its states (momentum...) to ``fname``: the pickled
        ``(states, optimizer)`` of the Updater, as MXNet's Trainer writes, with MXNet's class
        names and NDArray pickles so that MXNet 1.9.1's ``Trainer.load_states`` reads the file
        too (a parameter's ``lr_mult``/``wd_mult`` are not saved)."""
        _check(self._optimizer is not None, "")
        self._init_kv_and_params()
        if self._update_on_kvstore:
            _check(not self._params_to_init, "Cannot save trainer states when some parameters "
                   "are not yet initialized in kvstore.")
            updater = getattr(self._kvstore, "_updater", None)
            if updater is None:  # a custom store keeps its own states
                self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
                return
        else:
            updater = self._updaters[0]
        data = _mxnet_pickle((updater.states, updater.optimizer))
        with open(fname, "wb") as fout:
            fout.write(data)

    def load_states(self, fname):
        """Load what :meth:`save_states` wrote (files written by MXNet 1.9.1's Trainer too:
        their ``mxnet`` classes are read as neomx's)."""
        self._init_kv_and_params()
        with open(fname, "rb") as f:
            states = _neomx_pickle(f.read())
        if self._update_on_kvstore:
            updater = getattr(self._kvstore, "_updater", None)
            if updater is None:
                self._kvstore.load_optimizer_states(fname)
            else:
                updater.set_states(states)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
