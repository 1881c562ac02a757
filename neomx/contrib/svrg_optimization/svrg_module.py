"""``SVRGModule``: the Module API trained with SVRG (stochastic variance-reduced gradients).

Every ``update_freq`` epochs ``update_full_grads`` copies the current weights into an auxiliary
module (the snapshot) and averages its gradient over the whole training set. Each batch then
runs forward/backward on both modules and the update uses::

    grad = grad(batch, weights) - grad(batch, snapshot) + full_grad(snapshot)

With a KVStore (several devices or workers) the full gradients are summed in the store under
``<param>_full`` keys by :class:`~.svrg_optimizer._AssignmentOptimizer`.
"""
from __future__ import annotations

import logging
import time

from ... import context as _context
from ... import initializer as _init
from ... import metric as _metric
from ... import model as _model
from ... import ndarray as nd
from ... import optimizer as _opt
from ...base import _as_list
from ...module import Module
from ...module.module import _create_kvstore
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A Module trained with SVRG; it holds a second Module (``_mod_aux``) on the snapshot
    weights. Same arguments as :class:`~neomx.module.Module`, plus ``update_freq``.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str
        Defaults to ``('data',)``.
    label_names : list of str
        Defaults to ``('softmax_label',)``.
    logger : Logger
        Defaults to `logging`.
    context : Context or list of Context
        Defaults to ``mx.cpu()``.
    work_load_list : list of number
        Default ``None``, indicating uniform workload.
    fixed_param_names : list of str
        Default ``None``, indicating no network parameters are fixed.
    state_names : list of str
        Inputs that are not data or label (set by ``set_states()``).
    group2ctxs : dict of str to context or list of context, or list of dict of str to context
        Default is ``None``. Mapping the `ctx_group` attribute to the context assignment.
    compression_params : dict
        Gradient compression of the KVStore (see ``KVStore.set_gradient_compression``).
    update_freq : int
        The full gradients are recomputed every ``update_freq`` epochs (a positive int).

    Examples
    --------
    >>> import numpy as np
    >>> import neomx as mx
    >>> from neomx.contrib.svrg_optimization.svrg_module import SVRGModule
    >>> data = mx.sym.Variable('data')
    >>> label = mx.sym.Variable('lin_reg_label')
    >>> fc = mx.sym.FullyConnected(data, num_hidden=1, name='fc')
    >>> lro = mx.sym.LinearRegressionOutput(fc, label, name='lro')
    >>> x = np.arange(40, dtype=np.float32).reshape(20, 2) / 40
    >>> di = mx.io.NDArrayIter(x, x.sum(axis=1), batch_size=5, label_name='lin_reg_label')
    >>> mod = SVRGModule(lro, data_names=['data'], label_names=['lin_reg_label'], update_freq=2)
    >>> mod.fit(di, eval_metric='mse', optimizer='sgd', num_epoch=2,
    ...         optimizer_params=(('learning_rate', 0.1),), initializer=mx.init.Zero())
    >>> sorted(mod.get_params()[0])
    ['fc_bias', 'fc_weight']
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=_context.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the "
                            "frequency for calculating full gradients")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent "
                             "the frequency for calculating full gradients")
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None  # per device: parameter name -> full gradient at the snapshot
        self._ctx_len = len(self._context)

    # --- both modules ----------------------------------------------------------------------
    def _reset_bind(self):
        """Reset the bound state of both modules."""
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape both modules for new input shapes."""
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None, grad_req='write'):
        """Bind this module, and the auxiliary one when ``for_training``."""
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def forward(self, data_batch, is_train=None):
        """Forward on this module, and on the auxiliary one when ``is_train`` is true (as in
        MXNet, ``is_train=None`` runs this module only)."""
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on this module, and on the auxiliary one once it is bound."""
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch``."""
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # --- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an ``_SVRGOptimizer`` around ``optimizer``; with a KVStore, also the
        ``<param>_full`` keys that accumulate the full gradients."""
        self._param_dict = [{name: nd.zeros(shape=value.shape, ctx=self._context[i])
                             for name, value in self.get_params()[0].items()}
                            for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore,
                                                optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            for idx, param_on_devs in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(name + "_full", nd.zeros(shape=self._arg_params[name].shape))
                if self._update_on_kvstore:  # (MXNet's: this pulls the zeros into the weights)
                    self._kvstore.pull(name + "_full", param_on_devs, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer`` (named ``optimizer``) wrapping ``default_opt``, with
        Module's ``rescale_grad`` and ``param_idx2name`` plus the ``<param>_full`` names."""
        batch_size = self._exec_group.batch_size
        kv_store, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv_store and 'dist' in kv_store.type and '_sync' in kv_store.type:
            batch_size *= kv_store.num_workers
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(self._ctx_len):
                idx2name.update({i * self._ctx_len + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = name + "_full"
        optimizer_params = dict(optimizer_params)
        optimizer_params.setdefault('rescale_grad', 1.0 / batch_size)
        optimizer_params["default_optimizer"] = default_opt
        optimizer_params["param_idx2name"] = idx2name
        return _opt.create(optimizer, **optimizer_params)

    # --- SVRG ------------------------------------------------------------------------------
    def update(self):
        """Replace the batch gradients by SVRG's corrected ones, then take the optimizer step
        (see :meth:`Module.update`)."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Take the current weights as the snapshot and average the snapshot's gradients over
        all of ``train_data`` (padding of the last batch discounted); with a KVStore, sum them
        over devices and workers there.

        Parameters
        ----------
        train_data : DataIter
            Train data iterator (reset first).
        """
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch = 0
        padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    # (added to what the dict holds: MXNet never clears it between passes)
                    self._param_dict[ctx][name] = nd.broadcast_add(self._param_dict[ctx][name],
                                                                   grads, axis=0)
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the devices' (and workers') full gradients of ``key`` in the KVStore."""
        self._kvstore.push(key + "_full", value)
        self._kvstore._barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        """Each device's full gradient of ``key``: the pulled sum over the device count."""
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    def _svrg_grads_update_rule(self, g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """``g_curr_batch_curr_weight - g_curr_batch_special_weight +
        g_special_weight_all_batch``, computed in place in the first (returned)."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        """Overwrite this module's gradients with SVRG's on every device."""
        param_names = self._exec_group.param_names
        for ctx in range(self._ctx_len):
            for index, name in enumerate(param_names):
                g_curr_batch_reg = self._exec_group.grad_arrays[index][ctx]
                g_curr_batch_special = self._mod_aux._exec_group.grad_arrays[index][ctx]
                g_special_weight_all_batch = self._param_dict[ctx][name]
                g_svrg = self._svrg_grads_update_rule(g_curr_batch_reg, g_curr_batch_special,
                                                      g_special_weight_all_batch)
                self._exec_group.grad_arrays[index][ctx] = g_svrg

    # --- training --------------------------------------------------------------------------
    def fit(self, train_data, eval_data=None, eval_metric='acc',
            epoch_end_callback=None, batch_end_callback=None, kvstore='local',
            optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
            eval_end_callback=None,
            eval_batch_end_callback=None, initializer=_init.Uniform(0.01),
            arg_params=None, aux_params=None, allow_missing=False,
            force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train as :meth:`BaseModule.fit` does, recomputing the full gradients at the start
        of every ``update_freq``-th epoch (``epoch % update_freq == 0``)."""
        assert num_epoch is not None, 'please specify number of epochs'
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            eval_metric.reset()
            tic = time.time()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            eval_name_vals = self._fit_epoch(train_data, epoch, eval_metric, batch_end_callback,
                                             monitor, sparse_row_id_fn)
            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, (time.time() - tic))

            arg_params, aux_params = self.get_params()  # sync aux params across devices
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

    def _fit_epoch(self, train_data, epoch, eval_metric, batch_end_callback, monitor,
                   sparse_row_id_fn):
        """One pass over ``train_data`` (SVRG steps); the metric's values at its end."""
        train_data.reset()
        data_iter = iter(train_data)
        end_of_batch = False
        nbatch = 0
        next_data_batch = next(data_iter)
        eval_name_vals = []
        while not end_of_batch:
            data_batch = next_data_batch
            if monitor is not None:
                monitor.tic()
            self.forward_backward(data_batch)
            self.update()
            if isinstance(data_batch, list):
                self.update_metric(eval_metric, [db.label for db in data_batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, data_batch.label)
            try:
                next_data_batch = next(data_iter)  # pre-fetch the next batch
                self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                end_of_batch = True
            if monitor is not None:
                monitor.toc_print()
            if end_of_batch:
                eval_name_vals = eval_metric.get_name_value()
            if batch_end_callback is not None:
                batch_end_params = _model.BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                        eval_metric=eval_metric, locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(batch_end_params)
            nbatch += 1
        return eval_name_vals
