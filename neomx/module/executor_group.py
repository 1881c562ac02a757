"""``DataParallelExecutorGroup``: one executor per context, each running a slice of the batch.

Batches are split along their batch axis (the ``N`` of a DataDesc's layout) by
:func:`_split_input_slice`; parameters live once per executor and are summed/updated by the
Module (through a KVStore or per-device updaters); outputs are merged by concatenation.
"""
from __future__ import annotations

import logging
from collections import OrderedDict

from .. import ndarray as nd
from ..context import Context, cpu
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup"]


def _split_input_slice(batch_size, work_load_list):
    """Split ``batch_size`` examples into one slice per device, proportional to the workload.

    Device ``i`` gets ``round(w_i * B / sum(w))`` examples (Python's round: half to even); the
    last device takes any shortfall; slices are clipped to ``B``.

    Raises
    ------
    ValueError
        ``'Too many slices. Some splits are empty.'`` when a slice is empty.

    Examples
    --------
    >>> _split_input_slice(10, [1, 1, 1, 1])
    [slice(0, 2, None), slice(2, 4, None), slice(4, 6, None), slice(6, 10, None)]
    >>> _split_input_slice(9, [1, 2])
    [slice(0, 3, None), slice(3, 9, None)]
    >>> _split_input_slice(6, [1, 1, 1, 1])
    Traceback (most recent call last):
    ...
    ValueError: Too many slices. Some splits are empty.
    """
    total_work_load = sum(work_load_list)
    batch_num_list = [round(work_load * batch_size / total_work_load)
                      for work_load in work_load_list]
    batch_num_sum = sum(batch_num_list)
    if batch_num_sum < batch_size:
        batch_num_list[-1] += batch_size - batch_num_sum
    slices = []
    end = 0
    for batch_num in batch_num_list:
        begin = int(min((end, batch_size)))
        end = int(min((begin + batch_num, batch_size)))
        if begin >= end:
            raise ValueError('Too many slices. Some splits are empty.')
        slices.append(slice(begin, end))
    return slices


def _as_nd(x):
    return x if isinstance(x, nd.NDArray) else nd.array(x)


def _load_general(data, targets, major_axis):
    """Copy each source array into its targets: whole (one device) or sliced per device."""
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        if isinstance(d_targets, nd.NDArray):
            _as_nd(d_src).copyto(d_targets)
        elif isinstance(d_src, (list, tuple)):
            for src, dst in zip(d_src, d_targets):
                _as_nd(src).copyto(dst)
        else:
            d_src = _as_nd(d_src)
            for slice_idx, d_dst in d_targets:
                if axis < 0 or (slice_idx.start == 0 and d_src.shape[axis] == slice_idx.stop):
                    d_src.copyto(d_dst)
                elif axis == 0:
                    d_src[slice_idx.start:slice_idx.stop].copyto(d_dst)
                else:
                    nd.slice_axis(d_src, axis=axis, begin=slice_idx.start,
                                  end=slice_idx.stop).copyto(d_dst)


def _load_data(batch, targets, major_axis):
    """Load a batch's data (or a list of pre-sliced batches) into the executors' arrays."""
    if isinstance(batch, list):
        new_batch = [[b.data[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in d_target] for d_target in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.data, targets, major_axis)


def _load_label(batch, targets, major_axis):
    """Load a batch's labels into the executors' arrays."""
    if isinstance(batch, list):
        new_batch = [[b.label[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in d_target] for d_target in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.label, targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """Concatenate per-device arrays along their batch axis onto the first one's device; an
    output without a batch axis (axis < 0) is taken from the first device."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            ctx = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(ctx) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One ``{ctx_group: Context}`` dict (or None) per device."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        assert len(group2ctxs) == ctx_len, "length of group2ctxs should be %d" % ctx_len
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for k, v in group2ctxs.items():
            if isinstance(v, Context):
                ctxs = [v] * ctx_len
            elif len(v) == 1:
                ctxs = list(v) * ctx_len
            else:
                assert len(v) == ctx_len, "length of group2ctxs[%s] should be %d or 1" % (k, ctx_len)
                ctxs = v
            for i in range(ctx_len):
                ret[i][k] = ctxs[i]
        return ret
    raise AssertionError("group2ctxs should be list of dict of str to context, "
                         "or dict of str to context or list of context")


class DataParallelExecutorGroup:
    """A group of executors, one per context, splitting each batch between them.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of numbers
        Relative share of each context in a batch (see :func:`_split_input_slice`).
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        Shapes of the whole batch; ``label_shapes`` may be None.
    param_names : list of str
        Arguments that are parameters (shared across buckets, updated by the optimizer).
    for_training : bool
        False binds every argument with ``grad_req='null'``.
    inputs_need_grad : bool
        Whether data arguments get gradients.
    shared_group : DataParallelExecutorGroup, optional
        A group (another bucket) whose parameter arrays the executors reuse.
    fixed_param_names : list of str, optional
        Parameters bound with ``grad_req='null'``.
    grad_req : str, list or dict
        A str applies to parameters (and to data when ``inputs_need_grad``); a list gives one
        req per argument; a dict overrides the defaults per name.
    state_names : list of str, optional
    group2ctxs : optional
        ``ctx_group`` placement, passed to ``simple_bind``.

    After binding: ``execs``, ``slices``, ``batch_size``, and per-name lists over devices:
    ``data_arrays``/``label_arrays`` (``(slice, array)`` pairs), ``param_arrays``,
    ``grad_arrays``, ``aux_arrays``, ``state_arrays``, ``input_grad_arrays``.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])

        if not for_training:
            grad_req = 'null'
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        self.grad_req = self._grad_req_dict(grad_req, [x.name for x in data_shapes])

        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in contexts]

        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = None
        self.label_arrays = None
        self.param_arrays = None
        self.state_arrays = None
        self.grad_arrays = None
        self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = None
        self.label_shapes = None
        self.data_names = None
        self.label_names = None
        self.data_layouts = None
        self.label_layouts = None
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[i].attr('__layout__'))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_req_dict(self, grad_req, data_names):
        """``{arg: req}``: params get ``grad_req`` (fixed ones 'null'), data only with
        ``inputs_need_grad``, labels and states 'null'."""
        def default(k, req):
            if k in self.param_names:
                return 'null' if k in self.fixed_param_names else req
            if k in data_names:
                return req if self.inputs_need_grad else 'null'
            return 'null'
        if isinstance(grad_req, str):
            return {k: default(k, grad_req) for k in self.arg_names}
        if isinstance(grad_req, (list, tuple)):
            assert len(grad_req) == len(self.arg_names)
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            reqs = {k: default(k, 'write') for k in self.arg_names}
            reqs.update(grad_req)
            return reqs
        raise ValueError("grad_req must be one of str, list, tuple, or dict.")

    # --- binding ------------------------------------------------------------------------------
    def decide_slices(self, data_shapes):
        """Set ``batch_size`` and ``slices`` from the shapes; returns each input's batch axis."""
        assert len(data_shapes) > 0
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                assert batch_size == self.batch_size, (
                    "all data must have the same batch size: "
                    + ("batch_size = %d, but " % self.batch_size)
                    + ("%s has shape %s" % (name, shape)))
            else:
                self.batch_size = batch_size
                self.slices = _split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self):
        """Gather the executors' arrays into the per-name, per-device lists."""
        if self.slices:
            self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                                for name, _ in self.data_shapes]
        else:
            self.data_arrays = [[(slice(i, i + 1), e.arg_dict[name])
                                 for i, e in enumerate(self.execs)]
                                for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        param_idx = [i for i, name in enumerate(self.arg_names) if name in self.param_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.execs] for i in param_idx]
        if self.for_training:
            self.grad_arrays = [[e.grad_arrays[i] for e in self.execs] for i in param_idx]
        else:
            self.grad_arrays = None
        data_names = [x[0] for x in self.data_shapes]
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in self.execs]
                                      for name in data_names if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in self.execs] for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind one executor per context (or reshape the default ones when ``reshape``)."""
        assert reshape or not self.execs
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)  # checks the batch size
        for i in range(len(self.contexts)):
            data_shapes_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_shapes_i = ([] if label_shapes is None else
                              self._sliced_shape(label_shapes, i, self.label_layouts))
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(
                    allow_up_sizing=True, **dict(data_shapes_i + label_shapes_i))
            else:
                self.execs.append(self._bind_ith_exec(i, data_shapes_i, label_shapes_i,
                                                      shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [i.name for i in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [i.name for i in self.label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Reshape the executors for new input shapes (parameters stay shared)."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        """``simple_bind`` the i-th executor, sharing parameters with ``shared_group``'s."""
        shared_exec = None if shared_group is None else shared_group.execs[i]
        input_shapes = dict(data_shapes)
        if label_shapes is not None:
            input_shapes.update(dict(label_shapes))
        input_types = {x.name: x.dtype for x in data_shapes}
        attr_dict = self.symbol.attr_dict()
        for name in self.symbol.list_inputs():
            dtype_code = attr_dict.get(name, {}).get("__dtype__")
            if name in input_types and dtype_code is not None and dtype_code != "-1":
                from ..base import dtype_from_code
                input_types[name] = dtype_from_code(int(dtype_code))
        if label_shapes is not None:
            input_types.update({x.name: x.dtype for x in label_shapes})
        return self.symbol.simple_bind(ctx=self.contexts[i], grad_req=self.grad_req,
                                       type_dict=input_types, shared_arg_names=self.param_names,
                                       shared_exec=shared_exec, group2ctx=self.group2ctxs[i],
                                       shared_buffer=self.shared_data_arrays[i], **input_shapes)

    def _sliced_shape(self, shapes, i, major_axis):
        """The i-th executor's (name, shape) DataDescs: the batch axis cut to its slice."""
        sliced = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            sliced.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return sliced

    # --- parameters ---------------------------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy the given parameters into every executor."""
        for exec_ in self.execs:
            exec_.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write the mean over devices of each parameter and aux state into the given (CPU)
        arrays, in place."""
        for name, block in zip(self.param_names, self.param_arrays):
            if block[0].stype != 'default':  # (sparse: the mean of the devices' dense forms)
                weight = sum(nd.array(w.asnumpy()) for w in block) / len(block)
                weight = weight.tostype(block[0].stype) if len(block) > 1 else block[0].copyto(cpu())
            else:
                weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(arg_params[name].dtype).copyto(arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(aux_params[name].dtype).copyto(aux_params[name])

    # --- computation --------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Load the batch slices into the executors and run forward on every device."""
        _load_data(data_batch, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if isinstance(data_batch, list):
            if self.label_arrays is not None and data_batch and data_batch[0].label:
                _load_label(data_batch, self.label_arrays, self.label_layouts)
        elif self.label_arrays is not None and data_batch.label:
            _load_label(data_batch, self.label_arrays, self.label_layouts)
        for exec_ in self.execs:
            exec_.forward(is_train=is_train)

    def get_output_shapes(self):
        """``[(name, shape)]`` of the merged outputs."""
        shapes = [out.shape for out in self.execs[0].outputs]
        concat_shapes = []
        for key, the_shape, axis in zip(self.symbol.list_outputs(), shapes, self.output_layouts):
            the_shape = list(the_shape)
            if axis >= 0:
                the_shape[axis] = self.batch_size
            concat_shapes.append((key, tuple(the_shape)))
        return concat_shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``[begin, end)`` of the last forward, merged or ``[[out_dev1, ...], ...]``."""
        if end is None:
            end = self.num_outputs
        outputs = [[exec_.outputs[i] for exec_ in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts)
        return outputs

    def get_states(self, merge_multi_context=True):
        assert not merge_multi_context, \
            "merge_multi_context=True is not supported for get_states yet."
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the state arrays from per-device lists, or all to one scalar ``value``."""
        if states is not None:
            assert value is None, "Only one of states & value can be specified."
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            assert value is not None, "At least one of states & value must be specified."
            for d_dst in self.state_arrays:
                for dst in d_dst:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (needs ``inputs_need_grad``)."""
        assert self.inputs_need_grad
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Run backward on every device, slicing ``out_grads`` like the batch."""
        assert self.for_training, 're-bind with for_training=True to run backward'
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        for i, (exec_, islice) in enumerate(zip(self.execs, self.slices)):
            out_grads_slice = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0:
                    og = nd.slice_axis(grad, axis=axis, begin=islice.start, end=islice.stop)
                    out_grads_slice.append(og.as_in_context(self.contexts[i]))
                else:
                    out_grads_slice.append(grad.copyto(self.contexts[i]))
            exec_.backward(out_grads=out_grads_slice or None)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` once per device with that device's outputs and label slice."""
        for current_exec, (texec, islice) in enumerate(zip(self.execs, self.slices)):
            if not pre_sliced:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0:
                        labels_slice.append(label[islice])  # a view, no copy
                    elif axis > 0:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=islice.start,
                                                          end=islice.stop))
                    else:
                        labels_slice.append(label)
            else:
                labels_slice = labels[current_exec]
            labels_ = OrderedDict(zip(self.label_names or [], labels_slice))
            preds = OrderedDict(zip(self.output_names, texec.outputs))
            _update_dict(eval_metric, labels_, preds)

    def install_monitor(self, mon):
        """Install a monitor (``mon.install(executor)``) on every executor."""
        for exe in self.execs:
            mon.install(exe)


def _update_dict(eval_metric, labels, preds):
    """``eval_metric.update_dict`` (or its MXNet definition for metrics without one)."""
    if hasattr(eval_metric, "update_dict"):
        eval_metric.update_dict(labels, preds)
        return
    output_names = getattr(eval_metric, "output_names", None)
    label_names = getattr(eval_metric, "label_names", None)
    pred = [preds[n] for n in output_names] if output_names is not None else list(preds.values())
    label = [labels[n] for n in label_names] if label_names is not None else list(labels.values())
    eval_metric.update(label, pred)
