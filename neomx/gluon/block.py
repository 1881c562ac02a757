"""Gluon's Blocks: ``Block`` (imperative), ``HybridBlock`` (imperative, or once hybridized a
cached graph run by neomx's executor) and ``SymbolBlock`` (a Block around a Symbol).

Naming follows MXNet 1.9.1 exactly: a Block made outside any ``name_scope`` takes a prefix from
the global name manager (``dense0_``); a child made inside its parent's ``name_scope()`` takes
``<parent prefix><alias><count>_`` with counts per parent (``hybridsequential0_conv0_``), and
parameters are named ``<prefix><name>`` (``dense0_weight``).

Hybridizing traces ``hybrid_forward`` once with ``F = mx.sym`` into a Symbol; calls then run a
:class:`~neomx.executor.cached_op.CachedOp` over it (one compiled program per input signature),
which autograd records as one node whose backward is the graph's own gradient pass.
"""
from __future__ import annotations

import copy
import json
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .. import initializer, ndarray, symbol
from ..base import MXNetError
from ..executor.cached_op import CachedOp
from ..ndarray import NDArray
from ..symbol import Symbol
from ..symbol.scope import NameManager, Prefix
from .parameter import (DeferredInitializationError, GluonAssertionError, Parameter,
                        ParameterDict)
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


class _BlockScope:
    """The scope of a Block's ``name_scope()``: children created inside get prefixes counted
    per parent, and symbols the parent's prefix."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new Block."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = NameManager.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix,
                                                                                 params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


# --- nested inputs and outputs -----------------------------------------------------------------
def _flatten(args, inout_str):
    """Flatten nested lists of NDArrays/Symbols; the format says how to regroup them."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be (nested) "
                         f"list of Symbol or NDArray, but got {args} of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """The inverse of :func:`_flatten`."""
    def merge(args, fmt):
        if isinstance(fmt, int):
            if fmt < -1:
                raise ValueError(f"Unsupported encoded format {fmt}.")
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                if args[0] is not None:
                    raise ValueError("We do not support passing types that are not None when the "
                                     "initial HybridBlock has received NoneType and has been "
                                     f"hybridized. Received arg = {args[0]}, fmt = {fmt}.")
                return None, args[1:]
            return args[:fmt], args[fmt:]
        if not isinstance(args, (list, tuple)):
            raise ValueError("When hybridized, the output of HybridBlock must be (nested) list of "
                             f"Symbol or NDArray, but got {args} of type {type(args)}")
        ret = []
        for f in fmt:
            r, args = merge(args, f)
            ret.append(r)
        return ret, args
    return merge(args, fmt)[0]


def _gather_type_ctx_info(args):
    """(has Symbol, has NDArray, contexts, first context) of nested ``args``."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if isinstance(args, Symbol):
        return True, False, set(), None
    if isinstance(args, (list, tuple)):
        has_sym = has_nd = False
        ctxs, first = set(), None
        for a in args:
            s, n, c, f = _gather_type_ctx_info(a)
            has_sym, has_nd = has_sym or s, has_nd or n
            if first is None and f is not None:
                first = f
            ctxs |= c
            if has_sym and has_nd:
                break
        return has_sym, has_nd, ctxs, first
    return False, False, set(), None


# --- Block -------------------------------------------------------------------------------------
class Block:
    """The base class of all layers and models: children registered by attribute assignment,
    parameters in a ParameterDict, ``forward`` on NDArrays.

    Examples
    --------
    >>> import neomx as mx
    >>> from neomx.gluon import nn
    >>> class Model(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense0 = nn.Dense(20)
    ...     def forward(self, x):
    ...         return self.dense0(x)
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        """Registers Blocks as children and Parameters as this block's parameters."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise GluonAssertionError(
                    f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                    "parameters between blocks, please set 'params' at Block construction "
                    "instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and data not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if unregistered(v):
                    warnings.warn(
                        f'"{self.__class__.__name__}.{k}" is an unregistered container with '
                        "Blocks. Note that Blocks inside the list, tuple or dict will not be "
                        "registered automatically. Make sure to register them using "
                        "register_child() or switching to nn.Sequential/nn.HybridSequential "
                        "instead. ", stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """The prefix of this block's parameter and child names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        return self._name

    def name_scope(self):
        """The scope in which children get prefixes under this block's."""
        return self._scope

    @property
    def params(self):
        """This block's own parameters (not its children's: see :meth:`collect_params`)."""
        return self._params

    def collect_params(self, select=None):
        """This block's and its descendants' parameters, optionally those whose names match
        the regular expression ``select``."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({n: v for n, v in self.params.items() if pattern.match(n)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + k: v for k, v in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    # --- saving and loading --------------------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Save parameters by structural name (``features.0.weight``), MXNet's format."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        ndarray.save(filename, {k: v._reduce() for k, v in params.items()})

    def save_params(self, filename):
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For details, "
                      "see https://mxnet.apache.org/tutorials/gluon/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may resolve "
                             "this error.") from None

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by :meth:`save_parameters` (or, for files without structural
        names, by ``save_params``/``ParameterDict.save``, as MXNet falls back to)."""
        loaded = ndarray.load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError(f"load_parameters: {filename} holds an unnamed list of arrays, not "
                             "named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            # legacy files keyed by full parameter names
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            inverse = defaultdict(list)
            for k, v in params.items():
                inverse[v].append(k)
            for name, param in params.items():
                if not any(p in loaded for p in inverse[param]):
                    raise GluonAssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which contains "
                        f"parameters: {_brief_print_list(loaded.keys())}. Set allow_missing=True "
                        "to ignore missing parameters.")
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    f"Parameter '{name}' loaded from file '{filename}' is not present in "
                    "ParameterDict, which contains parameters "
                    f"{_brief_print_list(self._params.keys())}. Set ignore_extra=True to "
                    "ignore. ")
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                        dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # --- structure -------------------------------------------------------------------------
    def register_child(self, block, name=None):
        """Register ``block`` as a child (attribute assignment does it for you)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` before each forward; returns a handle with ``detach()``."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` after each forward; returns a handle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Apply ``fn`` to every descendant, then to this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize this block's and its descendants' parameters on ``ctx`` (a Context or a
        list: one copy per device)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlocks among this block's descendants."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast this block's and its descendants' parameters to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def zero_grad(self):
        """Set the gradients of every parameter to 0."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        self.collect_params().reset_ctx(ctx)

    def share_parameters(self, shared):
        """Use the Parameters of ``shared`` (a dict of structural name -> Parameter, as
        :meth:`_collect_params_with_prefix` gives) in place of this block's own."""
        if shared is None:
            return self
        if not isinstance(shared, (dict, OrderedDict)):
            raise ValueError("'shared' should be in type of Dict. Get a type "
                             f"{type(shared)} instead.")
        mine = self._collect_params_with_prefix()
        for name, param in shared.items():
            if name not in mine:
                warnings.warn(f"Parameter name {name} is not in the current model!")
                continue
            self._set_structural_param(name, param)
        return self

    def _set_structural_param(self, name, param):
        block = self
        parts = name.split(".")
        for p in parts[:-1]:
            block = block._children[p]
        attr = parts[-1]
        old = block._reg_params[attr]
        block._reg_params[attr] = param
        object.__setattr__(block, attr, param)
        for k, v in list(block._params.items()):
            if v is old:
                block._params._params[k] = param
        if isinstance(block, HybridBlock):
            block._clear_cached_op()

    # --- running ---------------------------------------------------------------------------
    def __call__(self, *args):
        """Run the pre-hooks, :meth:`forward`, then the hooks."""
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation, on NDArrays: override it."""
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        """Install ``callback(node_name, op_name, NDArray)`` on the hybridized descendants."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and parameter counts for one forward of ``inputs``
        (the block must not be hybridized)."""
        from .summary import print_summary
        print_summary(self, inputs)

    # --- the cached graph of the whole model (Block.save/Block.load) ----------------------------
    def save(self, prefix):
        """Save the structure (and cached graphs) as ``prefix-model.json`` and the parameters
        as ``prefix-model.params``."""
        model = {}

        def walk(blk, index, structure):
            mdl = {"orig_name": blk.name}
            structure[type(blk).__name__.lower() + str(index[0])] = mdl
            if isinstance(blk, HybridBlock):
                if blk._cached_graph:
                    mdl["in_format"], mdl["out_format"] = blk._in_format, blk._out_format
                    syms, out = blk._cached_graph
                    mdl["inputs"] = [s.tojson() for s in syms]
                    mdl["symbol"] = out.tojson()
                    mdl["hybridized"] = True
                else:
                    mdl["hybridized"] = False
            children = {}
            mdl["children"] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                walk(child, index, mdl)

        walk(self, [0], model)
        from ..util import atomic_write_text
        atomic_write_text(prefix + "-model.json", json.dumps(model))
        self.save_parameters(prefix + "-model.params")

    def load(self, prefix):
        """Load what :meth:`save` wrote into this (same-structured) block."""
        with open(prefix + "-model.json") as fp:
            model = json.load(fp)

        def walk(blk, index, structure):
            mdl = structure[type(blk).__name__.lower() + str(index[0])]
            blk._name = mdl["orig_name"]
            if isinstance(blk, HybridBlock) and mdl["hybridized"]:
                blk._in_format, blk._out_format = mdl["in_format"], mdl["out_format"]
                blk._cached_graph = ([symbol.load_json(i) for i in mdl["inputs"]],
                                     symbol.load_json(mdl["symbol"]))
                blk._active = True
            for p in list(blk.params.keys()):
                param = blk.params._params.pop(p)
                blk.params._params[blk.name + "_" + p[len(blk.params._prefix):]] = param
            for _, child in blk._children.items():
                index[0] += 1
                walk(child, index, mdl)
            children = mdl["children"]
            for ch_name in list(blk._children.keys()):
                child = blk._children.pop(ch_name)
                blk._children[children[child.name]] = child

        walk(self, [0], model)
        self.load_parameters(prefix + "-model.params")


# --- HybridBlock -------------------------------------------------------------------------------
class HybridBlock(Block):
    """A Block whose computation is written once, in ``hybrid_forward(F, x, *args, **params)``,
    for both ``F = mx.nd`` (imperative) and ``F = mx.sym`` (after :meth:`hybridize`, traced into
    a graph that neomx's executor runs)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block} has "
                             f"type {type(block)}. If you are using Sequential, please try "
                             "HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Run this block (and its descendants) as a cached graph from the next call on."""
        if backend is not None:
            raise MXNetError(f"hybridize: backend {backend!r} is not available in neomx "
                             "(subgraph backends were MXNet's MKLDNN/TensorRT integrations)")
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/pre-hook. '
                          f'If "{self}" is a child of HybridBlock, the hooks will not take effect.')
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                            inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                            backward_bulk_size=backward_bulk_size)

    def optimize_for(self, x, *args, backend=None, **kwargs):
        raise MXNetError(f"optimize_for: backend {backend!r} is not available in neomx")

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []

    # --- the graph -------------------------------------------------------------------------
    def _get_graph(self, *args):
        if not self._cached_graph:
            flat, self._in_format = _flatten(args, "input")
            real = sum(a is not None for a in flat)
            if real == 0:
                raise ValueError("All args are None and we do not support such a case. Received "
                                 f"args={args}")
            inputs, sym_inputs, cnt = [], [], 0
            for a in flat:
                if a is None:
                    inputs.append(None)
                    continue
                v = symbol.var(f"data{cnt}" if real > 1 else "data")
                cnt += 1
                inputs.append(v)
                sym_inputs.append(v)
            grouped = _regroup(inputs, self._in_format)
            params = {k: p.var() for k, p in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped, **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = (sym_inputs, symbol.Group(out) if len(out) > 1 else out[0])
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data)}
        params = self.collect_params()
        input_names = out.list_inputs()
        expected = set(input_names)
        for name in expected:
            if name not in params and name not in data_names:
                raise GluonAssertionError(f"Unknown input to HybridBlock: {name}")
        unused = [f"{i}-th" for name, i in data_names.items() if name not in expected]
        if unused:
            warnings.warn(f"The {', '.join(unused)} input to HybridBlock is not used by any "
                          "computation. Is this intended?", stacklevel=4)
        unused_params = [n for n in params.keys() if n not in expected]
        if unused_params:
            warnings.warn(f"Parameter {', '.join(unused_params)} is not used by any computation. "
                          "Is this intended?", stacklevel=4)
        flat, _ = _flatten(args, "input")
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*flat)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()
        self._cached_op_args = [(True, data_names[name]) if name in data_names
                                else (False, params[name]) for name in input_names]
        flags = [("data_indices", [i for i, n in enumerate(input_names) if n in data_names]),
                 ("param_indices", [i for i, n in enumerate(input_names)
                                    if n not in data_names])] + self._flags
        self._cached_op = CachedOp(out, flags)

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:  # noqa: BLE001  (MXNet wraps every failure the same way)
            raise ValueError("Deferred initialization failed because shape cannot be inferred. "
                             f"{e}") from None

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache(*args)
        if self._callback:
            self._cached_op._register_op_hook(self._callback, self._monitor_all)
        args, fmt = _flatten(args, "input")
        if fmt != self._in_format:
            n_in, n = len(self._in_format), len(fmt)
            if n_in > n:
                valid = (all(self._in_format[i] == -1 for i in range(n, n_in))
                         and fmt == self._in_format[:n])
            elif n_in < n:
                valid = all(fmt[i] == -1 for i in range(n_in, n)) and fmt[:n_in] == self._in_format
            else:
                valid = False
            if not valid:
                raise ValueError("The argument structure of HybridBlock does not match the cached "
                                 f"version. Stored format = {fmt}, input format = "
                                 f"{self._in_format}")
        given = [a for a in args if a is not None]
        ctx = given[0].context
        cargs = [given[i] if is_arg else i.data(ctx) for is_arg, i in self._cached_op_args]
        out = self._cached_op(*cargs)
        if isinstance(out, NDArray):
            out = [out]
        return _regroup(out, self._out_format)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat, _ = _flatten(args, "input")
        given = [a for a in flat if a is not None]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{i.name: getattr(j, attr) for i, j in zip(inputs, given)})
            if arg_attrs is None:
                raise ValueError(str(w[0].message) if w else
                                 f"{infer_fn} cannot decide every parameter")
        sdict = dict(zip(out.list_arguments(), arg_attrs))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs))
        for p in self.collect_params().values():
            if p.name in sdict:
                setattr(p, attr, sdict[p.name])

    def infer_shape(self, *args):
        """Fill in the unknown dimensions of the parameters from input shapes."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Set the parameters' dtypes from input dtypes."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` names) for
        ``SymbolBlock.imports`` or ``mx.mod.Module`` (needs one hybridized forward first)."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with "
                               "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym.save(f"{path}-symbol.json", remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for is_arg, param in self._cached_op_args:
            if is_arg:
                continue
            if param.name in arg_names:
                arg_dict[f"arg:{param.name}"] = param._reduce()
            elif param.name in aux_names:
                arg_dict[f"aux:{param.name}"] = param._reduce()
            else:
                warnings.warn(f'Parameter "{param.name}" is not found in the graph. ',
                              stacklevel=3)
        ndarray.save("%s-%04d.params" % (path, epoch), arg_dict)

    def register_op_hook(self, callback, monitor_all=False):
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    def forward(self, x, *args):
        """Run ``hybrid_forward``: imperatively, through the cached graph when hybridized, or
        symbolically when called with Symbols."""
        has_sym, has_nd, ctx_set, first_ctx = _gather_type_ctx_info([x] + list(args))
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types "
                             "for the input. Please check the type of the args.\n")
        if not has_sym and not has_nd:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        if has_nd:
            ctx = first_ctx
            if self._active:
                if len(ctx_set) > 1:
                    raise ValueError(
                        "Find multiple contexts in the input, After hybridized, the HybridBlock "
                        "only supports one input context. You can print the ele.ctx in the input "
                        f"arguments to inspect their contexts. Find all contexts = {ctx_set}")
                with ctx:
                    return self._call_cached_op(x, *args)
            with ctx:
                try:
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for _, v in self.params.items():
                        v._finish_deferred_init()
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                return self.hybrid_forward(ndarray, x, *args, **params)
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation, for ``F = mx.nd`` and ``F = mx.sym``: override it."""
        raise NotImplementedError


# --- SymbolBlock -------------------------------------------------------------------------------
def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _infer_param_types(in_params, out, arg_params, aux_params, default_dtype=np.float32):
    """Parameter dtypes inferred from the inputs' dtype attributes (float32 when undecided)."""
    arg_types = aux_types = None
    known = {}
    for p in in_params:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = p.infer_type()[0]
        if not t or t[0] is None:
            known = None
            break
        known[p.name] = t[0]
    if known is not None:
        try:
            arg_types, _, aux_types = out.infer_type(**known)
        except MXNetError:
            arg_types = aux_types = None
    if arg_types is None or len(arg_types) != len(arg_params) or None in arg_types:
        arg_types = [default_dtype] * len(arg_params)
    if aux_types is None or len(aux_types) != len(aux_params) or None in aux_types:
        aux_types = [default_dtype] * len(aux_params)
    return arg_types, aux_types


class SymbolBlock(HybridBlock):
    """A HybridBlock that runs a given Symbol: ``SymbolBlock(outputs, inputs, params=None)``,
    or :meth:`imports` for exported files."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``symbol_file`` (``-symbol.json``) with inputs ``input_names``,
        parameters loaded from ``param_file`` onto ``ctx``."""
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self):
        sym, inputs = self._cached_graph[1], self._cached_graph[0]
        return (f"{self.__class__.__name__}(\n{sym} : {len(inputs)} -> "
                f"{len(sym.list_outputs())}\n)")

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise GluonAssertionError(f"Input symbols must be variable, but {s} is an output "
                                          "of operators")
            input_names.add(s.name)
        out = symbol.Group(out) if len(out) > 1 else out[0]
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for name, t in zip(arg_params, arg_types):
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True, dtype=t)
        for name, t in zip(aux_params, aux_types):
            if name not in input_names:
                self.params.get(name, grad_req="null", allow_deferred_init=True, dtype=t)
        self._cached_graph = (syms, out)
        n = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[n:]: v for k, v in self._params.items()}

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise GluonAssertionError("HybridBlock requires the first argument to forward be "
                                      f"either Symbol or NDArray, but got {type(x)}")
        flat, in_fmt = _flatten([x] + list(args), "input")
        if in_fmt != self._in_format:
            raise GluonAssertionError("Invalid input format")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        keep = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = keep

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name == "float16":  # batch-norm statistics stay float32, as MXNet
            names = self._cached_graph[1].get_internals().list_inputs()
            for node in names:
                for var, stats in (("running_var", ("running_mean", "gamma", "beta")),
                                   ("moving_var", ("moving_mean", "gamma", "beta"))):
                    if node.endswith(var):
                        prefix = node[:-len(var)]
                        sibs = [prefix + t for t in stats]
                        if all(s in names for s in sibs):
                            for n in [node] + sibs:
                                self.params.get(n).cast("float32")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError
