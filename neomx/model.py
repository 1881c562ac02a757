"""``mx.model``: checkpoints as MXNet writes them (``prefix-symbol.json`` + ``prefix-%04d.params``).

A checkpoint's ``.params`` file is an NDArray dict whose keys are ``arg:<name>`` for arguments
and ``aux:<name>`` for auxiliary states, all saved from CPU copies.
"""
from __future__ import annotations

import logging

from . import ndarray as nd
from . import symbol as sym
from .context import cpu

__all__ = ["save_checkpoint", "load_params", "load_checkpoint"]


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Checkpoint the model data into files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        The epoch number of the model.
    symbol : Symbol or None
        The network; written to ``prefix-symbol.json`` unless None.
    arg_params : dict of str to NDArray
        The network's weights.
    aux_params : dict of str to NDArray
        The network's auxiliary states.
    remove_amp_cast : bool, optional
        Whether to remove the amp_cast and amp_multicast operators before saving the symbol.

    Notes
    -----
    - ``prefix-symbol.json`` is written for the symbol.
    - ``prefix-%04d.params`` (e.g. ``prefix-0003.params``) is written for the parameters.

    Examples
    --------
    >>> import os, tempfile
    >>> import neomx as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    >>> mx.model.save_checkpoint(prefix, 3, net, {'fc_weight': mx.nd.ones((2, 4)),
    ...                                           'fc_bias': mx.nd.zeros((2,))}, {})
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['net-0003.params', 'net-symbol.json']
    >>> _, arg, aux = mx.model.load_checkpoint(prefix, 3)
    >>> sorted(arg), aux
    (['fc_bias', 'fc_weight'], {})
    """
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """Load ``prefix-%04d.params`` into ``(arg_params, aux_params)``.

    Each key is split at its first ``:``; keys with another prefix than ``arg``/``aux`` are
    skipped, as in MXNet. An empty file logs a warning and gives two empty dicts.
    """
    fname = '%s-%04d.params' % (prefix, epoch)
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise ValueError(f"Params file '{fname}' holds {len(save_dict)} unnamed arrays; "
                         "a checkpoint needs 'arg:<name>' / 'aux:<name>' keys")
    for k, v in save_dict.items():
        tp, sep, name = k.partition(':')
        if not sep:
            raise ValueError(f"Params file '{fname}': key '{k}' has no 'arg:' or 'aux:' prefix")
        if tp == 'arg':
            arg_params[name] = v
        if tp == 'aux':
            aux_params[name] = v
    return (arg_params, aux_params)


def load_checkpoint(prefix, epoch):
    """Load a model checkpoint written by ``save_checkpoint``.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        Epoch number of the model to load.

    Returns
    -------
    symbol : Symbol
        The network, from ``prefix-symbol.json``.
    arg_params : dict of str to NDArray
        The network's weights, from ``prefix-%04d.params``.
    aux_params : dict of str to NDArray
        The network's auxiliary states.
    """
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return (symbol, arg_params, aux_params)


# --- Training callbacks' argument (added with the Module issue) -----------------------------
from collections import namedtuple  # noqa: E402

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
BatchEndParam.__doc__ = """What ``Module.fit``/``score`` pass to each batch-end callback: the epoch,
the batch number within it, the metric being accumulated and the caller's ``locals()``."""
__all__.append("BatchEndParam")


# --- FeedForward: the pre-Module training API -----------------------------------------------
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from . import io, metric  # noqa: E402
from . import optimizer as opt  # noqa: E402
from .base import mx_real_t  # noqa: E402
from .callback import LogValidationMetricsCallback  # noqa: E402
from .context import Context  # noqa: E402
from .initializer import Uniform  # noqa: E402

BASE_ESTIMATOR = object
SKLEARN_INSTALLED = False  # (MXNet subclasses sklearn's BaseEstimator when it imports)
__all__ += ["FeedForward", "BASE_ESTIMATOR", "SKLEARN_INSTALLED"]


def _check_arguments(symbol):
    """MXNet's check: argument and auxiliary-state names are unique."""
    for kind, names in (("argument", symbol.list_arguments()),
                        ("auxiliary", symbol.list_auxiliary_states())):
        seen = set()
        for name in names:
            if name in seen:
                raise ValueError(f"Find duplicated {kind} name \"{name}\", please make the "
                                 f"weight name non-duplicated(using name arguments), "
                                 f"arguments are {names}")
            seen.add(name)


def _multiple_callbacks(callbacks, *args, **kwargs):
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
    elif callbacks:
        callbacks(*args, **kwargs)


class FeedForward(BASE_ESTIMATOR):
    """Model class of MXNet for training and predicting feedforward nets (deprecated in MXNet
    for ``mx.mod.Module``, which neomx's ``fit`` runs on: one data input, one label).

    Parameters
    ----------
    symbol : Symbol or callable
        The network (a callable ``sym_gen(bucket_key)`` is called with the training iterator's
        ``default_bucket_key``).
    ctx : Context or list of Context, optional
        Devices for training (data parallel) and prediction (the first one); ``cpu()``.
    num_epoch : int, optional
    epoch_size : int, optional
        Batches per epoch; by default one pass over the data (other values: not supported).
    optimizer : str or Optimizer, default 'sgd'
    initializer : Initializer, default Uniform(0.01)
    numpy_batch_size : int, default 128
        Batch size when ``X`` is a numpy array or NDArray.
    arg_params, aux_params : dict of str to NDArray, optional
        Initial parameters (kept over the initializer).
    allow_extra_params : bool, default False
        Drop parameters the symbol does not use instead of failing.
    begin_epoch : int, default 0
    **kwargs
        Passed to the optimizer when ``optimizer`` is a name.
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("\033[91mmxnet.model.FeedForward has been deprecated. "
                      "Please use mxnet.mod.Module instead.\033[0m",
                      DeprecationWarning, stacklevel=2)
        if isinstance(symbol, sym.Symbol):
            self.symbol, self.sym_gen = symbol, None
        else:
            assert callable(symbol)
            self.symbol, self.sym_gen = None, symbol
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        if self.argument_checked:
            return
        assert self.symbol is not None
        self.argument_checked = True
        _check_arguments(self.symbol)
        if self.allow_extra_params:
            if self.arg_params:
                names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items() if k in names}
            if self.aux_params:
                names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items() if k in names}

    @staticmethod
    def _is_data_arg(name):
        return name.endswith("data") or name.endswith("label")

    def _init_params(self, inputs, overwrite=False):
        """Parameters for ``inputs`` (DataDescs): given ones copied, others initialized."""
        inputs = [x if isinstance(x, io.DataDesc) else io.DataDesc(*x) for x in inputs]
        input_shapes = {item.name: item.shape for item in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        assert arg_shapes is not None
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(
            **{item.name: item.dtype for item in inputs})
        assert arg_dtypes is not None
        arg_names = self.symbol.list_arguments()
        param_names = [key for key in arg_names if key not in input_shapes]
        aux_names = self.symbol.list_auxiliary_states()
        arg_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(arg_names, arg_shapes, arg_dtypes) if k in param_names}
        aux_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(aux_names, aux_shapes, aux_dtypes)}
        for new, old in ((arg_params, self.arg_params), (aux_params, self.aux_params)):
            for k, v in new.items():
                if old and k in old and not overwrite:
                    v[:] = old[k][:]
                else:
                    self.initializer(k, v)
        self.arg_params = arg_params
        self.aux_params = aux_params
        return (arg_names, list(param_names), aux_names)

    def __getstate__(self):
        this = self.__dict__.copy()
        this["_pred_exec"] = None
        return this

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _init_predictor(self, input_shapes, type_dict=None):
        """Bind (or keep) the prediction executor for ``input_shapes``."""
        shapes = {name: self.arg_params[name].shape for name in self.arg_params}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            assert arg_shapes is not None, "Incomplete input shapes"
            if arg_shapes == [x.shape for x in self._pred_exec.arg_arrays]:
                return
        pred_exec = self.symbol.simple_bind(self.ctx[0], grad_req="null", type_dict=type_dict,
                                            **shapes)
        pred_exec.copy_params_from(self.arg_params, self.aux_params)
        _check_arguments(self.symbol)
        self._pred_exec = pred_exec

    def _init_iter(self, X, y, is_train):
        """An iterator over ``X`` (DataIter, or arrays with labels ``y``)."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError("y must be ndarray when X is numpy.ndarray")
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.flatten()
            if y.ndim != 1:
                raise ValueError("Label must be 1D or 2D (with 2nd dimension being 1)")
            batch = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch, shuffle=True, last_batch_handle="roll_over")
            return io.NDArrayIter(X, y, batch, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError("X must be DataIter, NDArray or numpy.ndarray")
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None:
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is None:
                raise ValueError("Eval data is NONE")
            if eval_data[1] is None and isinstance(eval_data[0], io.DataIter):
                return eval_data[0]
            data = np.array(eval_data[0]) if isinstance(eval_data[0], list) else eval_data[0]
            label = np.array(eval_data[1]) if isinstance(eval_data[1], list) else eval_data[1]
            return self._init_iter(data, label, is_train=True)
        if not isinstance(eval_data, io.DataIter):
            raise TypeError("Eval data must be DataIter, or "
                            "NDArray/numpy.ndarray/list pair (i.e. tuple/list of length 2)")
        return eval_data

    def _prepare_eval(self, X, reset):
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        type_dict = {key: value.dtype for key, value in self.arg_params.items()}
        for x in X.provide_data:
            type_dict[x[0]] = x.dtype if isinstance(x, io.DataDesc) else mx_real_t
        self._init_predictor(X.provide_data, type_dict)
        return X, [self._pred_exec.arg_dict[x[0]] for x in X.provide_data]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Outputs for ``X`` as numpy arrays (padding dropped); with ``return_data`` also the
        data and labels seen."""
        X, data_arrays = self._prepare_eval(X, reset)
        batch_size = X.batch_size
        outs = [[] for _ in self._pred_exec.outputs]
        datas = [[] for _ in X.provide_data]
        labels = [[] for _ in X.provide_label]
        for i, batch in enumerate(X):
            for src, dst in zip(batch.data, data_arrays):
                src.copyto(dst)
            self._pred_exec.forward(is_train=False)
            real = batch_size - batch.pad
            for lst, out in zip(outs, self._pred_exec.outputs):
                lst.append(out[0:real].asnumpy())
            if return_data:
                for lst, x in zip(datas, batch.data):
                    lst.append(x[0:real].asnumpy())
                for lst, x in zip(labels, batch.label):
                    lst.append(x[0:real].asnumpy())
            if num_batch is not None and i + 1 == num_batch:
                break
        outputs = [np.concatenate(x) for x in outs]
        outputs = outputs[0] if len(outputs) == 1 else outputs
        if not return_data:
            return outputs
        data = [np.concatenate(x) for x in datas]
        label = [np.concatenate(x) for x in labels]
        return (outputs, data[0] if len(data) == 1 else data,
                label[0] if len(label) == 1 else label)

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None, reset=True):
        """The metric's value over ``X`` (the first ``num_batch`` batches)."""
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X, data_arrays = self._prepare_eval(X, reset)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            for src, dst in zip(batch.data, data_arrays):
                src.copyto(dst)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback, BatchEndParam(
                    epoch=0, nbatch=i, eval_metric=eval_metric, locals=locals()))
        return eval_metric.get()[1]

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=LogValidationMetricsCallback(),
            eval_batch_end_callback=None):
        """Train ``num_epoch - begin_epoch`` epochs on ``X`` (a DataIter, or arrays and
        labels ``y``, shuffled, in batches of ``numpy_batch_size``)."""
        from .module import Module
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        if self.epoch_size is not None:
            raise NotImplementedError("FeedForward.fit: epoch_size (a fixed number of batches "
                                      "per epoch) is not supported by neomx; leave it None")
        self.kwargs["sym"] = self.symbol
        _, param_names, _ = self._init_params(data.provide_data + data.provide_label)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        param_idx2name = dict(enumerate(param_names))  # (one store or device: no copies)
        self.kwargs["param_idx2name"] = param_idx2name
        if isinstance(self.optimizer, str):
            batch_size = data.batch_size
            kv_type = kvstore if isinstance(kvstore, str) else getattr(kvstore, "type", "")
            if kv_type and "dist" in kv_type and "_async" not in kv_type:
                batch_size *= kvstore.num_workers
            optimizer = opt.create(self.optimizer, rescale_grad=(1.0 / batch_size),
                                   **self.kwargs)
        else:
            optimizer = self.optimizer
            if not optimizer.idx2name:
                optimizer.idx2name = param_idx2name.copy()
        mod = Module(self.symbol, data_names=[x[0] for x in data.provide_data],
                     label_names=[x[0] for x in data.provide_label], context=self.ctx,
                     logger=logger or logging, work_load_list=work_load_list)
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=optimizer, arg_params=self.arg_params,
                aux_params=self.aux_params, begin_epoch=self.begin_epoch,
                num_epoch=self.num_epoch, monitor=monitor, eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback)
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_exec = None

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Checkpoint to ``prefix-symbol.json`` and ``prefix-%04d.params`` (``num_epoch`` when
        ``epoch`` is None)."""
        if epoch is None:
            epoch = self.num_epoch
        assert epoch is not None
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params,
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from a checkpoint (MXNet's files too), continuing at ``epoch``."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=Uniform(0.01), eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local", logger=None,
               work_load_list=None, eval_end_callback=LogValidationMetricsCallback(),
               eval_batch_end_callback=None, **kwargs):
        """Construct a FeedForward and ``fit`` it."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
