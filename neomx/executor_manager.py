"""``mx.executor_manager``: the data-parallel executors of the pre-Module training loop
(MXNet's ``model._train_multi_device``), on neomx's Symbol.bind executors.

* :class:`DataParallelExecutorManager` -- one executor group per bucket key, parameters shared.
* :class:`DataParallelExecutorGroup` -- one executor per device, each on its slice of the batch.

``mx.mod.Module`` uses the newer ``mx.module.DataParallelExecutorGroup`` instead.
"""
from __future__ import annotations

import logging

import numpy as np

from . import ndarray as nd
from .context import cpu
from .io import DataDesc
from .module.executor_group import _split_input_slice

__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]

_REAL = np.float32  # MXNet's mx_real_t


def _check_arguments(symbol):
    """Raise ValueError (MXNet's messages) for duplicated argument or auxiliary names."""
    arg_names = symbol.list_arguments()
    if len(set(arg_names)) != len(arg_names):
        name = next(n for i, n in enumerate(arg_names) if n in arg_names[:i])
        raise ValueError(('Find duplicated argument name "%s", please make the weight name '
                          'non-duplicated(using name arguments), arguments are %s')
                         % (name, str(arg_names)))
    aux_names = symbol.list_auxiliary_states()
    if len(set(aux_names)) != len(aux_names):
        name = next(n for i, n in enumerate(aux_names) if n in aux_names[:i])
        raise ValueError(('Find duplicated auxiliary param name "%s", please make the weight '
                          'name non-duplicated(using name arguments), arguments are %s, '
                          'auxiliary params are %s') % (name, str(arg_names), str(aux_names)))


def _load_general(data, targets):
    """Copy each source array into its target: one NDArray, or ``(slice, array)`` pairs."""
    for d_src, d_targets in zip(data, targets):
        if isinstance(d_targets, nd.NDArray):
            d_src.copyto(d_targets)
        else:
            assert d_targets[-1][0].stop == d_src.shape[0], \
                "Batch size miss match. Expected %d, got %d" % (
                    d_targets[-1][0].stop, d_src.shape[0])
            for slice_idx, d_dst in d_targets:
                d_src[slice_idx].copyto(d_dst)


def _load_data(batch, targets):
    """Load ``batch.data`` into the sliced arrays."""
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    """Load ``batch.label`` into the sliced arrays."""
    _load_general(batch.label, targets)


def _input_array(name, shape, dtype, ctx, shared_data_arrays, logger):
    """A data/label array, reusing (a reshaped view of) the bucket-shared one when it is big
    enough."""
    if shared_data_arrays is None or name not in shared_data_arrays:
        arr = nd.zeros(shape, ctx, dtype=dtype)
        if shared_data_arrays is not None:
            shared_data_arrays[name] = arr
        return arr
    arr = shared_data_arrays[name]
    if np.prod(arr.shape) >= np.prod(shape):
        assert dtype == arr.dtype
        return arr.reshape(shape)
    logger.warning(('bucketing: data "%s" has a shape %s' % (name, shape)) +
                   ', which is larger than already allocated ' +
                   ('shape %s' % (arr.shape,)) +
                   '. Need to re-allocate. Consider putting default_bucket_key to be the '
                   'bucket taking the largest input for better memory sharing.')
    arr = nd.zeros(shape, ctx, dtype=dtype)
    shared_data_arrays[name] = arr  # the bigger one replaces it
    return arr


def _bind_exec(sym, ctx, input_shapes, param_names, need_grad=False,
               base_exec=None, shared_data_arrays=None, input_types=None, logger=logging):
    """Bind ``sym`` on ``ctx`` for bucketing: parameters (and gradients, aux states) borrowed
    from ``base_exec`` when given, data arrays shared through ``shared_data_arrays``."""
    arg_shape, _, aux_shape = sym.infer_shape(**input_shapes)
    assert arg_shape is not None
    if input_types is None:
        input_types = {k: _REAL for k in input_shapes.keys()}
    arg_types, _, aux_types = sym.infer_type(**input_types)
    assert arg_types is not None

    arg_names = sym.list_arguments()
    grad_arrays = {} if need_grad is not False else None
    if need_grad is False:
        need_grad = set()
    elif need_grad is True:
        need_grad = set(arg_names) - set(input_shapes.keys())
    elif not isinstance(need_grad, set):
        raise AssertionError("need_grad must be boolean or set.")
    grad_req = {name: ('write' if name in need_grad else 'null') for name in arg_names}

    arg_arrays = []
    for i, name in enumerate(arg_names):
        if name not in param_names:  # data or label
            arg_arrays.append(_input_array(name, arg_shape[i], arg_types[i], ctx,
                                           shared_data_arrays, logger))
        elif base_exec is None:
            arg_arrays.append(nd.zeros(arg_shape[i], ctx, dtype=arg_types[i]))
            if name in need_grad:
                grad_arrays[name] = nd.zeros(arg_shape[i], ctx, dtype=arg_types[i])
        else:
            arg_arr = base_exec.arg_dict[name]
            assert arg_arr.shape == arg_shape[i]
            assert arg_arr.dtype == arg_types[i]
            if name in need_grad:
                grad_arrays[name] = base_exec.grad_dict[name]
            arg_arrays.append(arg_arr)

    if base_exec is None:
        aux_arrays = [nd.zeros(s, ctx, dtype=t) for s, t in zip(aux_shape, aux_types)]
    else:
        for i, a in enumerate(base_exec.aux_arrays):
            assert aux_shape[i] == a.shape
            assert aux_types[i] == a.dtype
        aux_arrays = list(base_exec.aux_arrays)
    return sym.bind(ctx=ctx, args=arg_arrays, args_grad=grad_arrays, aux_states=aux_arrays,
                    grad_req=grad_req, shared_exec=base_exec)


class DataParallelExecutorGroup:
    """A group of executors living on different devices, for data parallelization.

    Parameters
    ----------
    sym : Symbol
        The network configuration.
    arg_names : list of str
        Equals `sym.list_arguments()`
    param_names : list of str
        List of names of all trainable parameters.
    ctx : list of Context
        List of devices for training (data parallelization).
    slices : list of slice
        How the batch is split over the devices.
    train_data : DataIter (or DataBatch)
        Anything with ``provide_data`` and ``provide_label``.
    shared_group : DataParallelExecutorGroup
        An existing executor group, if to share parameters with it.
    """

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        _check_arguments(sym)
        if shared_group is None:
            self.shared_data_arrays = [{} for _ in ctx]
        else:
            self.shared_data_arrays = shared_group.shared_data_arrays
        self.data_names = [x[0] for x in train_data.provide_data]
        self.label_names = [x[0] for x in train_data.provide_label]
        self.aux_names = sym.list_auxiliary_states()
        self.param_idx = [i for i in range(len(arg_names)) if arg_names[i] in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]

        self.train_execs = []
        for i, ctxi in enumerate(ctx):
            data_shapes, data_types = {}, {}
            for x in train_data.provide_data + train_data.provide_label:
                data_shapes[x[0]] = tuple([slices[i].stop - slices[i].start] + list(x[1][1:]))
                data_types[x[0]] = x.dtype if isinstance(x, DataDesc) else _REAL
            shared_exec = None if shared_group is None else shared_group.train_execs[i]
            self.train_execs.append(_bind_exec(sym, ctxi, data_shapes, self.param_names,
                                               need_grad=True, base_exec=shared_exec,
                                               shared_data_arrays=self.shared_data_arrays[i],
                                               input_types=data_types))

        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                            for name in self.data_names]
        self.label_arrays = [[(slices[i], e.arg_dict[name])
                              for i, e in enumerate(self.train_execs)]
                             for name in self.label_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs]
                           for i in range(len(self.aux_names))]
        self.slices = slices

    def load_data_batch(self, data_batch):
        """Load data and labels into arrays."""
        _load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        """Perform a forward pass on each executor."""
        for texec in self.train_execs:
            texec.forward(is_train=is_train)

    def backward(self):
        """Perform a backward pass on each executor."""
        for texec in self.train_execs:
            texec.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update evaluation metric with label and current outputs."""
        for current_exec, (texec, islice) in enumerate(zip(self.train_execs, self.slices)):
            if not pre_sliced:
                labels_slice = [label[islice] for label in labels]
            else:
                labels_slice = labels[current_exec]
            metric.update(labels_slice, texec.outputs)


class DataParallelExecutorManager:
    """Helper class to manage multiple executors for data parallelism.

    Parameters
    ----------
    symbol : Symbol
        Output symbol.
    ctx : list of Context
        Devices to run on.
    train_data : DataIter
        Training data iterator.
    arg_names : list of str
        Name of all arguments of the network.
    param_names : list of str
        Name of all trainable parameters of the network.
    aux_names : list of str
        Name of all auxiliary states of the network.
    work_load_list : list of float or int, optional
        The list of work load for different devices, in the same order as ctx.
    logger : logging logger
        When not specified, default logger will be used.
    sym_gen : callable, optional
        Bucketing: the Symbol of a bucket key.

    Examples
    --------
    >>> import numpy as np
    >>> import neomx as mx
    >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    >>> net = mx.sym.SoftmaxOutput(net, name='softmax')
    >>> it = mx.io.NDArrayIter(np.ones((4, 3)), np.zeros(4), batch_size=4)
    >>> m = mx.executor_manager.DataParallelExecutorManager(
    ...     net, [mx.cpu(0), mx.cpu(1)], it, net.list_arguments(), ['fc_weight', 'fc_bias'], [])
    >>> m.slices
    [slice(0, 2, None), slice(2, 4, None)]
    """

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None):
        if logger is None:
            logger = logging
        num_device = len(ctx)
        logger.info('Start training with %s', str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        assert isinstance(work_load_list, list) and len(work_load_list) == num_device, \
            "Invalid settings for work load. "
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, self.arg_names, self.param_names,
                                                 self.ctx, self.slices, train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = None  # set when data is loaded
        if self.sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        """Install monitor on all executors."""
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        for train_exec in self.execgrp.train_execs:
            monitor.install(train_exec)

    def set_params(self, arg_params, aux_params):
        """Copy ``arg_params``/``aux_params`` (dicts of name to NDArray) into every executor."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Write the devices' average of each parameter and aux state into ``arg_params`` and
        ``aux_params`` (in place)."""
        for name, block in zip(self.param_names, self.param_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(arg_params[name].dtype).copyto(arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(aux_params[name].dtype).copyto(aux_params[name])

    @property
    def param_arrays(self):
        """Shared parameter arrays."""
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        """Shared gradient arrays."""
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        """Shared aux states."""
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Load data and labels into the current group's arrays (a new bucket key binds a new
        group sharing the parameters)."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                symbol = self.sym_gen(key)
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    symbol, self.arg_names, self.param_names, self.ctx, self.slices,
                    data_batch, shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        """Run forward on the current executor."""
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        """Run backward on the current executor."""
        self.curr_execgrp.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update metric with the current executor."""
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)
