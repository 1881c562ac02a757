"""``Module``: a Symbol bound on one or more contexts (data parallel), with parameters, an
optimizer and a KVStore."""
from __future__ import annotations

import logging
import os
import warnings

import numpy as np

from .. import context as ctx
from .. import kvstore as kvs
from .. import ndarray as nd
from .. import optimizer as opt
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..model import load_checkpoint
from .base_module import BaseModule, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


# --- KVStore helpers (MXNet keeps these in model.py) ------------------------------------------
def _create_kvstore(kvstore, num_device, arg_params):
    """``(kvstore or None, update_on_kvstore)`` for the ``kvstore`` argument of init_optimizer.

    A str on one device (and not 'dist') needs no store. ``update_on_kvstore`` is on whenever
    there is a store, unless ``MXNET_UPDATE_ON_KVSTORE=0`` or, for 'local', a parameter has
    more than 16M elements.
    """
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None  # no need for a kvstore on a single device and single machine
        else:
            kv = kvs.create(kvstore)
            if kvstore == 'local':
                max_size = max(np.prod(param.shape) for param in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be KVStore, str or None')
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return (kv, update_on_kvstore)


def _is_dist(kvstore) -> bool:
    return kvstore is not None and 'dist' in kvstore.type


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put the initial parameters into the store (and onto the devices when it updates).

    A dist store always broadcasts: every worker then starts from rank 0's parameters, also
    when the workers update on their devices."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        # (a row_sparse weight is only stored: devices get its rows from prepare's
        # row_sparse_pull, as in MXNet)
        if (not update_on_kvstore and not _is_dist(kvstore)) or arg_params[name].stype != 'default':
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Per parameter: push the device gradients (summed, one optimizer step in the store) and
    pull the new weight back to every device. A dist store gets all parameters in one
    ``pushpull``, so that it can all-reduce them in a few buckets."""
    batch = ([], [], []) if _is_dist(kvstore) else None
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if grad_list[0].stype != 'default' or arg_list[0].stype != 'default':
            # sparse gradients or weights: push, then pull what is dense (MXNet's pull skips
            # row_sparse weights: prepare() pulls the rows the next batch needs)
            kvstore.push(param_names[index], grad_list, priority=-index)
            if arg_list[0].stype == 'default':
                kvstore.pull(param_names[index], out=arg_list, priority=-index)
            continue
        if batch is None:
            kvstore.pushpull(param_names[index], grad_list, out=arg_list, priority=-index)
        else:
            for part, item in zip(batch, (param_names[index], grad_list, arg_list)):
                part.append(item)
    if batch and batch[0]:
        kvstore.pushpull(batch[0], batch[1], out=batch[2])


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Update on the devices: sum gradients through ``kvstore`` (if any; a dist store in one
    ``pushpull``), then each device runs ``updater`` on its own copy (index
    ``i * num_device + k`` for device k)."""
    updates = [[] for _ in range(num_device)]
    batch = ([], []) if _is_dist(kvstore) else None
    for i, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore and (grad_list[0].stype != 'default' or arg_list[0].stype != 'default'):
            kvstore.push(param_names[i], grad_list, priority=-i)
            kvstore.pull(param_names[i], out=grad_list, priority=-i)
        elif batch is not None:
            batch[0].append(param_names[i])
            batch[1].append(grad_list)
        elif kvstore:
            kvstore.pushpull(param_names[i], grad_list, priority=-i)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((i * num_device + k, g, w))
    if batch and batch[0]:
        kvstore.pushpull(batch[0], batch[1])
    for dev_updates in updates:
        if dev_updates:
            idx, grads, weights = zip(*dev_updates)
            updater(list(idx), list(grads), list(weights))


def _zeros_like_stype(a):
    """A CPU array of zeros with ``a``'s shape, dtype and storage type."""
    if a.stype != 'default':
        return nd.sparse.zeros(a.stype, a.shape, dtype=a.dtype)
    return nd.zeros(a.shape, dtype=a.dtype)


class Module(BaseModule):
    """A module wrapping a Symbol, bound on one or more contexts for data parallelism.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str, default ``('data',)``
        Must be arguments of ``symbol`` (ValueError otherwise).
    label_names : list of str, default ``('softmax_label',)``
        A name that is not an argument only warns.
    logger : Logger, default ``logging``
    context : Context or list of Context, default ``cpu()``
        One executor per context; each batch is split between them.
    work_load_list : list of numbers, optional
        Relative batch share of each context (default: equal).
    fixed_param_names : list of str, optional
        Parameters that are not updated (bound with ``grad_req='null'``).
    state_names : list of str, optional
        Inputs that are neither data nor labels; set with ``set_states``.
    group2ctxs : optional
        ``ctx_group`` placement for ``simple_bind``.
    compression_params : dict, optional
        Passed to ``KVStore.set_gradient_compression``.

    Parameters of the network are the arguments that are not data, labels or states.

    Examples
    --------
    >>> import numpy as np, neomx as mx
    >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2,
    ...                                                  name='fc'), name='softmax')
    >>> mod = mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(1)])
    >>> it = mx.io.NDArrayIter(np.ones((8, 3)), np.zeros(8), batch_size=4)
    >>> mod.fit(it, num_epoch=1)
    >>> mod.predict(it).shape
    (8, 2)
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        if isinstance(context, ctx.Context):
            context = [context]
        self._context = context
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        assert len(work_load_list) == len(self._context)
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol

        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # --- checkpoints ----------------------------------------------------------------------------
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from ``prefix-symbol.json`` and ``prefix-%04d.params`` (and the optimizer
        states in ``prefix-%04d.states`` when ``load_optimizer_states``; they are loaded at
        ``init_optimizer``). ``kwargs`` go to the constructor."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``."""
        self._symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # --- names and shapes -------------------------------------------------------------------------
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        assert self.binded
        return self._data_shapes

    @property
    def label_shapes(self):
        assert self.binded
        return self._label_shapes

    @property
    def output_shapes(self):
        assert self.binded
        return self._exec_group.get_output_shapes()

    # --- parameters -----------------------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)`` on the CPU: the mean over devices of each parameter."""
        assert self.params_initialized
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise parameters and aux states, then copy them to every device.

        Names are visited in sorted order; each is copied from ``arg_params``/``aux_params``
        when given there, else filled by ``initializer(InitDesc(name, attrs), array)``
        (``allow_missing``; otherwise a missing name raises RuntimeError
        ``'<name> is not presented'``). A second call is ignored (with a warning) unless
        ``force_init``.
        """
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        assert self.binded, 'call bind before initializing the parameters'

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    cache_arr = cache[name]
                    if cache_arr is not arr:  # the cached array may be the target itself
                        cache_arr.copyto(arr)
                else:
                    if not allow_missing:
                        raise RuntimeError("%s is not presented" % name)
                    if initializer is not None:
                        initializer(name, arr)
            else:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and aux state values (copied to every device)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True  # self._arg_params were not updated
        self.params_initialized = True

    def _sync_params_from_devices(self):
        """Average the devices' parameters into ``_arg_params``/``_aux_params`` (CPU); a
        row_sparse parameter updated in the KVStore is pulled from there whole."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        if self._kvstore and self._update_on_kvstore:
            for param_name, param_val in sorted(self._arg_params.items()):
                if param_val.stype == 'row_sparse':
                    row_ids = nd.arange(0, param_val.shape[0], dtype='int64')
                    self._kvstore.row_sparse_pull(param_name, param_val, row_ids=row_ids)
        self._params_dirty = False

    # --- binding --------------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind one executor per context for the given batch shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Shapes of a whole batch (typically ``data_iter.provide_data``/``provide_label``).
        for_training : bool, default True
            False binds without gradients.
        inputs_need_grad : bool, default False
            Whether data inputs get gradients (``get_input_grads``).
        force_rebind : bool, default False
            Rebind even if bound (parameters already initialised are kept).
        shared_module : Module, optional
            A bound, initialised module whose parameter arrays are shared (bucketing).
        grad_req : str, list or dict, default 'write'
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training:
            assert not inputs_need_grad
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        if shared_module is not None:
            assert isinstance(shared_module, Module) and \
                shared_module.binded and shared_module.params_initialized
            shared_group = shared_module._exec_group
            assert len(shared_group.execs) >= len(self._context)
        else:
            shared_group = None

        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # re-binding: copy the already initialised parameters to the new executors
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            assert self._arg_params is None and self._aux_params is None
            self._arg_params = {name: _zeros_like_stype(x[0])
                                for name, x in zip(self._param_names, self._exec_group.param_arrays)}
            self._aux_params = {name: nd.zeros(x[0].shape, dtype=x[0].dtype)
                                for name, x in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape the executors for new input shapes (parameters are kept)."""
        assert self.binded
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # --- optimizer ------------------------------------------------------------------------------
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an optimizer, and a KVStore when several devices (or a dist store) need one.

        With a str ``optimizer``, ``rescale_grad`` defaults to ``1/batch_size`` (the whole
        batch over all devices). With a store, updates run in it (``update_on_kvstore``);
        otherwise each device runs its own updater.
        """
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()

        (kvstore, update_on_kvstore) = _create_kvstore(kvstore, len(self._context),
                                                       self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore and 'dist' in kvstore.type and '_sync' in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size

        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(len(self._context)):
                idx2name.update({i * len(self._context) + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if 'rescale_grad' not in optimizer_params:
                optimizer_params['rescale_grad'] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            assert isinstance(optimizer, opt.Optimizer)
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad "
                    "is not normalized to 1.0/batch_size/num_workers (%s vs. %s). " % (
                        optimizer.rescale_grad, rescale_grad) + "Is this intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()

        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore=kvstore, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, KVStore and updater (bucketing)."""
        assert shared_module.optimizer_initialized
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Write the optimizer (updater) states to ``fname``."""
        assert self.optimizer_initialized
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, 'wb') as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Load optimizer (updater) states written by ``save_optimizer_states``."""
        assert self.optimizer_initialized
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, 'rb') as fin:
                self._updater.set_states(fin.read())

    # --- computation ----------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Run forward on every device; a batch of new shapes reshapes the executors first."""
        assert self.binded and self.params_initialized
        curr_data_shapes = tuple(i.shape for i in self._data_shapes)
        if isinstance(data_batch, list):
            assert data_batch is not None, "Encountered empty data batch"
            new_data_shapes = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    assert shape == db.data[i].shape, \
                        "All data batches in a list need to have the same shape"
                new_data_shapes.append((len(data_batch) * shape[0],) + shape[1:])
            new_data_shapes = tuple(new_data_shapes)
        else:
            new_data_shapes = tuple(i.shape for i in data_batch.data)

        if curr_data_shapes != new_data_shapes:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(i.name, shape, i.dtype, i.layout)
                              for i, shape in zip(self._data_shapes, new_data_shapes)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(i.name, j.shape, i.dtype, i.layout)
                              for i, j in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Run backward on every device (``out_grads`` for non-loss outputs)."""
        assert self.binded and self.params_initialized
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """One optimizer step: through the KVStore (``pushpull`` per parameter, priority
        ``-index``) or with the per-device updaters."""
        assert self.binded and self.params_initialized and self.optimizer_initialized
        self._params_dirty = True
        if self._update_on_kvstore:
            _update_params_on_kvstore(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                                      self._kvstore, self._exec_group.param_names)
        else:
            _update_params(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                           updater=self._updater, num_device=len(self._context),
                           kvstore=self._kvstore, param_names=self._exec_group.param_names)

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward (concatenated over devices onto the first one)."""
        assert self.binded and self.params_initialized
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        assert self.binded and self.params_initialized and self.inputs_need_grad
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        assert self.binded and self.params_initialized
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        assert self.binded and self.params_initialized
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` once per device with its outputs and label slice."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        assert self.binded
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the rows of row_sparse parameters that ``data_batch`` needs from the KVStore.

        ``sparse_row_id_fn(data_batch)`` returns ``{param name: row ids}``; each row_sparse
        parameter's device arrays then hold those rows of the stored (updated) weight
        (``kv.row_sparse_pull``). Without a store that updates, nothing is pulled (a warning).
        """
        assert self.binded
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. "
                                      "No need to call sparse_row_id_fn."))
            return
        row_ids = sparse_row_id_fn(data_batch)
        assert isinstance(row_ids, dict), "Expected dict output from sparse_row_id_fn"
        for param_name, row_id in row_ids.items():
            param_idx = self._exec_group.param_names.index(param_name)
            param_val = self._exec_group.param_arrays[param_idx]
            assert isinstance(param_val, (tuple, list))
            if param_val[0].stype != 'row_sparse':
                warnings.warn(UserWarning("%s.stype is not 'row_sparse'. No need to "
                                          "perform row_sparse_pull." % param_name))
            else:
                self._kvstore.row_sparse_pull(param_name, param_val, row_ids=row_id,
                                              priority=-param_idx)
