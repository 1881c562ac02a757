"""Gluon parameters: ``Parameter``, ``Constant`` and ``ParameterDict`` (MXNet 1.9.1's semantics).

A ``Parameter`` holds one copy of its value per context (data parallelism) and, unless its
``grad_req`` is ``'null'``, a gradient buffer per copy, marked for autograd. Shapes may be
partly unknown (0) until the first forward fills them in (deferred initialization).

Checks that MXNet makes with ``assert`` raise :class:`GluonAssertionError`, which is both an
``AssertionError`` (what MXNet raises) and an ``MXNetError``.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer, ndarray, symbol
from ..base import MXNetError
from ..context import Context, cpu, current_context
from ..ndarray import NDArray
from .utils import _brief_print_list, _indent, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types", "GluonAssertionError"]

tensor_types = (symbol.Symbol, NDArray)

_NAMING_URL = ("For more info on naming, please see "
               "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html")


class DeferredInitializationError(MXNetError):
    """A parameter's value is asked for before its deferred initialization happened."""


class GluonAssertionError(MXNetError, AssertionError):
    """A failed Gluon check (an ``AssertionError`` in MXNet 1.9.1, an ``MXNetError`` too)."""


def _check(cond, msg):
    if not cond:
        raise GluonAssertionError(msg)


def _np_dtype(dtype):
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    return np.dtype(dtype)


class Parameter:
    """A Block's weight: values on one or more contexts, their gradients, and how to
    initialize and train them (``lr_mult``, ``wd_mult``, ``grad_req``).

    Examples
    --------
    >>> import neomx as mx
    >>> w = mx.gluon.Parameter('w', shape=(2, 3))
    >>> w.initialize(mx.init.One())
    >>> w.data().asnumpy().sum()
    6.0
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        valid = ("default", "row_sparse", "csr")
        _check(grad_stype in valid, f"grad_stype for Parameter '{name}' must be one of 'default', "
               f"'row_sparse', or 'csr', but got '{grad_stype}'")
        _check(stype in valid, f"stype for Parameter '{name}' must be one of 'default', "
               f"'row_sparse', or 'csr', but got '{stype}'")
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # --- attributes ---------------------------------------------------------------------------
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        _check(req in ("write", "add", "null"),
               f"grad_req must be one of 'write', 'add', or 'null', but got '{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(new_shape) if new_shape is not None else None
        if self._shape is None:
            self._shape = new_shape
            return
        _check(len(self._shape) == len(new_shape)
               and all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape)),
               f"Expected shape {new_shape} is incompatible with given shape {self._shape}.")
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    def _set_trainer(self, trainer):
        if (self._stype != "default" and self._trainer and trainer
                and self._trainer is not trainer):
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because it "
                               "was already set. More than one trainers for a "
                               f"{self._stype} Parameter is not supported.")
        self._trainer = trainer

    # --- access -------------------------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            ctx_list = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(ctx_list):
                idx = ctx_list[ctx.device_id]
                if idx is not None:
                    return arr_list[idx]
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                               f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter '{self.name}' has not been initialized. Note that you "
                           "should initialize parameters and create Trainer with "
                           "Block.collect_params() instead of Block.params because the later "
                           "does not include Parameters of nested child Blocks")

    def data(self, ctx=None):
        """This parameter's value on ``ctx`` (the only one, or the current context's)."""
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via "
                               f"data() because its storage type is {self._stype}. Please use "
                               "row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                               f"via list_data() because its storage type is {self._stype}. "
                               "Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def _get_row_sparse(self, arr_list, ctx, row_id):
        if not isinstance(row_id, ndarray.NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if not self._trainer:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no "
                               "Trainer is created with it.")
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)  # (from the trainer's store)
        return results

    def row_sparse_data(self, row_id):
        """A row_sparse copy on ``row_id``'s context holding the rows ``row_id`` (pulled
        from the Trainer's KVStore)."""
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via "
                               "row_sparse_data() because its storage type is "
                               f"{self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """``row_sparse_data`` on every context, in creation order."""
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                               "via list_row_sparse_data() because its storage type is "
                               f"{self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, list, row_id)

    # --- initialization -----------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the value on each of ``ctx`` (default: the current context) with ``init``
        (else this parameter's own ``init``, else ``default_init``). Unknown shapes defer the
        work to the first forward when ``allow_deferred_init``."""
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        _check(shape_is_known(self.shape),
               f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
               f"{self.shape}. Please specify in_units, in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            if self._stype != "default":
                data = data.tostype(self._stype)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, ctx in enumerate(self._ctx_list):
            dev_list = self._ctx_map[ctx.device_typeid & 1]
            while len(dev_list) <= ctx.device_id:
                dev_list.append(None)
            dev_list[ctx.device_id] = i
        self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(i.shape, dtype=i.dtype, ctx=i.context, stype=self._grad_stype)
                      for i in self._data]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad, self.grad_req)

    def _reduce(self):
        """The value averaged over contexts, on the CPU (what is saved)."""
        if self._stype != "default":  # (every row, from the trainer's store)
            data = ndarray.zeros(self.shape, stype=self._stype, ctx=cpu())
            self._trainer._row_sparse_pull(self, data, ndarray.arange(0, self.shape[0],
                                                                      dtype="int64", ctx=cpu()),
                                           full_idx=True)
            return data
        block = self.list_data()
        if len(block) > 1:
            return ndarray.add_n(*(w.copyto(cpu()) for w in block)) / len(block)
        return self.data().copyto(cpu())

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        if cast_dtype:
            _check(dtype_source in ("current", "saved"),
                   f"dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        if self.shape:
            for self_dim, data_dim in zip(self.shape, data.shape):
                _check(self_dim in (0, data_dim),
                       f"Failed loading Parameter '{self.name}' from saved params: shape "
                       f"incompatible expected {self.shape} vs saved {data.shape}")
            self.shape = tuple(i if i != 0 else j for i, j in zip(self.shape, data.shape))
        if self.dtype:
            if cast_dtype and _np_dtype(self.dtype) != data.dtype:
                if dtype_source == "current":
                    data = data.astype(self.dtype)
                else:
                    self.dtype = data.dtype
            else:
                _check(_np_dtype(self.dtype) == data.dtype,
                       f"Failed loading Parameter '{self.name}' from saved params: dtype "
                       f"incompatible expected {np.dtype(self.dtype)} vs saved {data.dtype}. "
                       "Set cast_dtype=True to cast the dtype of saved params.")
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                _check(ctx is None or set(ctx) == set(self._deferred_init[1]),
                       f"Failed to load Parameter '{self.name}' on {ctx} because it was "
                       f"previous initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            _check(ctx is None or set(ctx) == set(self.list_ctx()),
                   f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                   f"initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Move the value (averaged over the old contexts) to the context(s) ``ctx``."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has "
                             "not been initialized.")

    def set_data(self, data):
        """Set the value on every context (before initialization: the value to start from)."""
        self.shape = data.shape
        if self._data is None:
            _check(bool(self._deferred_init), f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, "_kv_initialized", False) \
                and getattr(trainer, "_update_on_kvstore", False):
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    def zero_grad(self):
        """Set the gradient buffers to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def var(self):
        """The Symbol variable standing for this parameter in hybridized graphs."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast value and gradient to ``dtype``."""
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A parameter that is never trained (``grad_req='null'``) whose value is given."""

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = ndarray.array(value)
        self.value = value

        class Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)

        init_name = f"Constant_{name}_{id(self)}"
        initializer.alias(init_name)(Init)
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other than '
                          f'"null", and new value "{req}" is ignored.')


class ParameterDict:
    """Parameters by name, all starting with ``prefix``; ``shared`` is looked up first when a
    name is asked for (parameter sharing between Blocks)."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` when it does not exist;
        when it does, ``kwargs`` must agree with it (unknown dims 0 are filled in)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if hasattr(param, k) and getattr(param, k) is not None:
                existing = getattr(param, k)
                if k == "shape" and v is not None:
                    v = (v,) if isinstance(v, int) else tuple(v)
                    if len(v) == len(existing):
                        inferred, matched = [], True
                        for d1, d2 in zip(v, existing):
                            if d1 != d2 and d1 > 0 and d2 > 0:
                                matched = False
                                break
                            inferred.append(d1 if d1 == d2 or d1 not in (0, -1) else d2)
                        if matched:
                            param._shape = tuple(inferred)
                            continue
                elif k == "dtype" and _np_dtype(v) == _np_dtype(existing):
                    continue
                _check(v is None or v == existing,
                       f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                       f"match with stored for attribute '{k}': desired '{v}' vs stored "
                       f"'{getattr(param, k)}'.")
            else:
                setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The constant ``prefix + name`` (created from ``value`` when new)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want to "
                               "create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            _check(isinstance(param, Constant),
                   f"Parameter '{name}' already exists but it is not a constant.")
            if isinstance(value, NDArray):
                value = value.asnumpy()
            _check(param.shape == np.shape(value) and (param.value.asnumpy() == value).all(),
                   f"Constant '{name}' already exists but it's value doesn't match new value")
        return param

    def update(self, other):
        """Add ``other``'s parameters (the same name must mean the same Parameter)."""
        for k, v in other.items():
            if k in self._params:
                _check(self._params[k] is v, "Cannot update self with other because they have "
                       f"different Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter (see :meth:`Parameter.initialize`)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for _, v in self.items():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for i in self.values():
            i.reset_ctx(ctx)

    def list_ctx(self):
        s = set()
        for i in self.values():
            s.update(i.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set an attribute (``grad_req``, ``lr_mult``...) on every parameter."""
        for i in self.values():
            setattr(i, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the values (averaged over contexts) with ``strip_prefix`` removed from names."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'. this may be due "
                    "to your Block shares parameters from other Blocks or you forgot to use "
                    "'with name_scope()' when creating child blocks. " + _NAMING_URL)
            arg_dict[param.name[len(strip_prefix):]] = weight
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by :meth:`save` (or an exported ``.params`` file)."""
        if restore_prefix:
            for name in self.keys():
                _check(name.startswith(restore_prefix),
                       f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' does "
                       f"not start with '{restore_prefix}'. " + _NAMING_URL)
        loaded = ndarray.load(filename)
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        lprefix = len(restore_prefix)
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v)
                      for k, v in param_dict.items()]
        else:
            loaded = param_dict
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        error_str = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                _check(name in arg_dict,
                       f"Parameter '{name[lprefix:]}' is missing in {error_str}, which contains "
                       f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                       "source and target networks have the same prefix." + _NAMING_URL)
        for name in arg_dict:
            if name not in self._params:
                _check(ignore_extra,
                       f"Parameter '{name[lprefix:]}' loaded from {error_str} is not present in "
                       f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}. "
                       "Set ignore_extra to True to ignore. Please make sure source and target "
                       "networks have the same prefix." + _NAMING_URL)
                continue
            self[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                  dtype_source=dtype_source)

