"""``BaseModule``: the Module API (state machine, fit/score/predict) independent of how a module
computes."""
from __future__ import annotations

import logging
import sys
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray
from ..context import cpu
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam

__all__ = ["BaseModule"]


def _as_list(obj):
    """``obj`` if it is a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def _check_input_names(symbol, names, typename, throw):
    """Check that every name is an argument of ``symbol`` (ValueError or a warning)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args if not arg.endswith(('_weight', '_bias', '_gamma', '_beta'))]
        msg = ("\033[91mYou created Module with Module(..., %s_names=%s) but input with name "
               "'%s' is not found in symbol.list_arguments(). Did you mean one of:\n\t%s\033[0m"
               % (typename, str(names), name, '\n\t'.join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _check_names_match(data_names, data_shapes, name, throw):
    """Check that the names of the given shapes match ``data_names``."""
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = "Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)" % (
            name, name, str(data_shapes), str(data_names))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """DataDescs for the data and label shapes, checked against the module's names."""
    data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
    _check_names_match(data_names, data_shapes, 'data', True)
    if label_shapes is not None:
        label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        _check_names_match(label_names, label_shapes, 'label', False)
    else:
        _check_names_match(label_names, [], 'label', False)
    return data_shapes, label_shapes


def _progress(epoch, total):
    """A tqdm bar for one epoch when stderr is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="Epoch[%d]" % epoch, unit="batch", leave=False)


def _metric_global(eval_metric):
    getter = getattr(eval_metric, "get_global_name_value", eval_metric.get_name_value)
    return getter()


def _worker_totals(module, eval_metric):
    """``[(name, value)]`` of ``eval_metric`` summed over the workers of the module's dist
    store (a collective: every worker calls it); empty without one."""
    kv = getattr(module, "_kvstore", None)
    total = getattr(kv, "total_metric", None)
    if total is None or kv.num_workers < 2:
        return []
    return total(eval_metric)


class BaseModule:
    """The base class of modules: a computation that binds to shapes, holds parameters and can
    be trained.

    **States.** A module moves through these states; each call needs the ones before it::

        created --bind()--> binded --init_params()/set_params()--> params_initialized
                --init_optimizer()--> optimizer_initialized

    * ``binded``: ``bind(data_shapes, label_shapes, for_training, inputs_need_grad,
      force_rebind, shared_module, grad_req)`` has allocated executors; ``for_training`` and
      ``inputs_need_grad`` tell how. ``bind(..., force_rebind=True)`` rebinds (keeping
      initialised parameters); another ``bind`` without it is ignored with a warning.
    * ``params_initialized``: parameters hold values (``init_params``, ``set_params``, a
      ``shared_module`` at bind, or ``Module.load``, which sets it before binding).
      ``forward``/``backward``/``get_outputs``/``get_params``/``score``/``predict`` need it.
    * ``optimizer_initialized``: ``init_optimizer(kvstore, optimizer, optimizer_params)``
      installed an optimizer (and a KVStore); ``update`` needs it. A second call is ignored
      unless ``force_init``.

    ``fit`` runs bind -> init_params -> init_optimizer, skipping the steps already done.

    **Before binding** a module reports ``data_names`` and ``output_names``; **after**, also
    ``data_shapes``, ``label_shapes``, ``output_shapes``, and parameters via ``get_params()``
    (CPU copies) / ``set_params()``.

    **Computation**: ``forward(data_batch, is_train)``, ``backward(out_grads)``, ``update()``,
    ``get_outputs()``, ``get_input_grads()``, ``update_metric(metric, labels)``; high level:
    ``fit``, ``score``, ``predict``, ``iter_predict``.

    Examples
    --------
    >>> import neomx as mx
    >>> data = mx.sym.Variable('data')
    >>> fc = mx.sym.FullyConnected(data, name='fc', num_hidden=3)
    >>> mod = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name='softmax'))
    >>> mod.binded, mod.params_initialized, mod.optimizer_initialized
    (False, False, False)
    >>> mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
    >>> mod.init_params()
    >>> mod.init_optimizer()
    >>> mod.binded, mod.params_initialized, mod.optimizer_initialized
    (True, True, True)
    >>> mod.output_shapes
    [('softmax_output', (4, 3))]
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # --- high level API -------------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run inference on ``eval_data`` and evaluate ``eval_metric``.

        Returns ``eval_metric.get_name_value()``: a list of ``(name, value)``. Padding rows of
        the last batch are counted, as in MXNet.
        """
        assert self.binded and self.params_initialized
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch, eval_metric=eval_metric,
                                   locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch, outputs without the padding rows."""
        assert self.binded and self.params_initialized
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Run inference and collect the outputs, without the padding rows.

        With ``merge_batches`` (default) returns ``[out1, out2, ...]``, each concatenated over
        the batches -- or just ``out1`` for a one-output network unless
        ``always_output_list``; otherwise ``[[out1_batch1, ...], [out1_batch2, ...], ...]``.
        ``eval_data`` may also be an NDArray or numpy array (one forward, first output).
        """
        assert self.binded and self.params_initialized
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be of type NDArray or DataIter')
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy() for out in self.get_outputs()])
        if len(output_list) == 0:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                assert len(out) == num_outputs, \
                    'Cannot merge batches, as num of outputs is not the same ' + \
                    'in mini-batches. Maybe bucketing is used?'
            merged = [ndarray.concatenate([out[i] for out in output_list])
                      for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train the module's parameters on ``train_data`` for epochs ``[begin_epoch, num_epoch)``.

        Binds, initialises parameters (``initializer``, or ``arg_params``/``aux_params``) and
        the optimizer, unless already done. Each epoch: for each batch ``forward_backward``,
        ``update``, ``update_metric`` (padding rows counted), then the batch-end callbacks with
        ``BatchEndParam(epoch, nbatch, eval_metric, locals())``; then it logs
        ``Epoch[%d] Train-<metric>=%f`` and ``Epoch[%d] Time cost=%.3f``, syncs parameters
        across devices (``get_params`` -> ``set_params``), calls the epoch-end callbacks with
        ``(epoch, symbol, arg_params, aux_params)``, scores ``eval_data`` (logging
        ``Epoch[%d] Validation-<metric>=%f``) and resets ``train_data``. When stderr is a
        terminal a tqdm bar shows the epoch's progress.

        With a dist KVStore (``kvstore='dist_sync'``) each worker trains on its own batches
        (shard the data with ``num_parts=kv.num_workers, part_index=kv.rank``); the metric
        lines above are this worker's, and ``Epoch[%d] Train-total-<metric>=%f`` /
        ``Validation-total-...`` follow with the metric summed over all workers.

        Parameters
        ----------
        train_data : DataIter
        eval_data : DataIter, optional
        eval_metric : str or EvalMetric, default 'acc'
        epoch_end_callback, batch_end_callback : callable or list, optional
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or pairs, default ``(('learning_rate', 0.01),)``
        eval_end_callback, eval_batch_end_callback : callable or list, optional
        initializer : Initializer, default ``Uniform(0.01)``
        arg_params, aux_params : dict, optional
        allow_missing, force_rebind, force_init : bool
        begin_epoch : int, default 0
        num_epoch : int (required)
        validation_metric : str or EvalMetric, optional (default: ``eval_metric``)
        monitor : Monitor, optional
        """
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
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        if eval_data is not None and not isinstance(validation_metric, metric.EvalMetric):
            validation_metric = metric.create(validation_metric)  # one object: totals read it

        batches_per_epoch = None
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            bar = _progress(epoch, batches_per_epoch)
            nbatch, eval_name_vals = self._fit_epoch(train_data, eval_metric, epoch,
                                                     batch_end_callback, monitor,
                                                     sparse_row_id_fn, bar)
            batches_per_epoch = nbatch
            if bar is not None:
                bar.close()
            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            for name, val in _worker_totals(self, eval_metric):
                self.logger.info('Epoch[%d] Train-total-%s=%f', epoch, name, val)
            toc = time.time()
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, (toc - tic))

            # sync aux params across devices
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)
                for name, val in _worker_totals(self, validation_metric):
                    self.logger.info('Epoch[%d] Validation-total-%s=%f', epoch, name, val)
            # end of 1 epoch, reset the data-iter for another epoch
            train_data.reset()

    def _fit_epoch(self, train_data, eval_metric, epoch, batch_end_callback, monitor,
                   sparse_row_id_fn, bar):
        """One training epoch (MXNet's loop, prefetching the next batch).

        Returns the number of batches and the metric's global values, read after the last
        batch's update and before its batch-end callbacks."""
        nbatch = 0
        data_iter = iter(train_data)
        end_of_batch = False
        next_data_batch = next(data_iter)
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
                next_data_batch = next(data_iter)  # pre fetch next batch
                self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                end_of_batch = True
            if monitor is not None:
                monitor.toc_print()
            if end_of_batch:
                eval_name_vals = _metric_global(eval_metric)
            if batch_end_callback is not None:
                batch_end_params = BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                 eval_metric=eval_metric, locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(batch_end_params)
            if bar is not None:
                bar.update(1)
            nbatch += 1
        return nbatch, eval_name_vals

    # --- symbol information ---------------------------------------------------------------------
    @property
    def data_names(self):
        """Names of the data inputs."""
        raise NotImplementedError()

    @property
    def output_names(self):
        """Names of the outputs."""
        raise NotImplementedError()

    # --- input/output information ----------------------------------------------------------------
    @property
    def data_shapes(self):
        """``[(name, shape)]`` of the data inputs."""
        raise NotImplementedError()

    @property
    def label_shapes(self):
        """``[(name, shape)]`` of the labels (None without labels)."""
        raise NotImplementedError()

    @property
    def output_shapes(self):
        """``[(name, shape)]`` of the outputs."""
        raise NotImplementedError()

    # --- parameters -------------------------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name -> NDArray on the CPU."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise parameters and aux states (from the dicts, else ``initializer``)."""
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and aux state values."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Save the parameters to ``fname`` (keys ``arg:<name>``/``aux:<name>``)."""
        arg_params, aux_params = self.get_params()
        save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray.save(fname, save_dict)

    def load_params(self, fname):
        """Load parameters saved by ``save_params`` and ``set_params`` them."""
        save_dict = ndarray.load(fname)
        arg_params, aux_params = {}, {}
        for k, value in save_dict.items():
            arg_type, name = k.split(':', 1)
            if arg_type == 'arg':
                arg_params[name] = value
            elif arg_type == 'aux':
                aux_params[name] = value
            else:
                raise ValueError("Invalid param file " + fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """State arrays (none for a BaseModule)."""
        assert self.binded and self.params_initialized
        assert not merge_multi_context
        return []

    def set_states(self, states=None, value=None):
        """Set state arrays (none for a BaseModule)."""
        assert self.binded and self.params_initialized
        assert not states and not value

    def install_monitor(self, mon):
        """Install a monitor on all executors."""
        raise NotImplementedError()

    # --- computations --------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for ``data_batch`` (switch bucket, reshape); nothing to do here."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."))

    def forward(self, data_batch, is_train=None):
        """Forward computation (``is_train=None`` means ``self.for_training``)."""
        raise NotImplementedError()

    def backward(self, out_grads=None):
        """Backward computation (``out_grads`` only for outputs that are not losses)."""
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward."""
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the inputs from the last backward."""
        raise NotImplementedError()

    def update(self):
        """Update parameters with the installed optimizer and the last gradients."""
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` on the last outputs and ``labels``."""
        raise NotImplementedError()

    # --- module setup ------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind executors for the given shapes."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an optimizer (and a KVStore)."""
        raise NotImplementedError()

    # --- misc ----------------------------------------------------------------------------------
    @property
    def symbol(self):
        """The module's symbol (the current bucket's for a BucketingModule)."""
        return self._symbol
