"""Automatic mixed precision as MXNet 1.9.1's ``mxnet.contrib.amp``.

``init`` installs hooks in the imperative dispatch (``neomx.ndarray.register``) and in symbol
creation (``neomx.symbol.register``) that cast the inputs of the operators in AMP's lists as
MXNet's wrapped functions do (low-precision ops to the target dtype, float32 ops to float32,
widest-type ops to their widest input type), so ``mx.nd``/``mx.sym`` functions (``contrib``,
``linalg``, ``op``...), fluent methods and the arithmetic operators all cast; bfloat16 is
MXNet's structured stand-in dtype (``neomx.base.bfloat16``), computed as torch.bfloat16;
``init_trainer``/``scale_loss``/``unscale`` add dynamic loss scaling to a Gluon Trainer;
``convert_symbol``/``convert_model``/``convert_hybrid_block`` insert ``amp_cast`` and
``amp_multicast`` nodes into a float32 graph as MXNet's ReducePrecision pass does.
"""
import contextlib
import logging

import numpy as np

from ... import ndarray, symbol
from ...base import bfloat16 as _bfloat16, dtype_code, dtype_from_code
from ...context import gpu
from ...ndarray import NDArray
from ...ndarray.register import set_amp_hook as set_ndarray_amp_hook
from ...symbol.register import set_amp_hook as set_symbol_amp_hook
from ...symbol import Symbol
from . import lists
from ._pass import reduce_precision
from .loss_scaler import LossScaler

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops',
           'list_lp16_fp32_ops', 'list_conditional_fp32_ops',
           'list_widest_type_cast', 'list_loss_output_functions', 'list_lp16_use_fp32_params',
           'convert_symbol', 'convert_bucketing_module']

# MXNet's stand-in numpy dtype for bfloat16 (neomx.base.bfloat16)
bfloat16 = _bfloat16

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None


def _lists(target_dtype):
    if isinstance(target_dtype, str) and target_dtype == 'float16' or \
            (not isinstance(target_dtype, str) and np.dtype(target_dtype) == np.float16):
        return lists.symbol_fp16
    assert target_dtype in ('bfloat16', bfloat16), "not supported type"
    return lists.symbol_bf16


def list_lp16_ops(target_dtype):
    """Get the default list of LP16 ops for AMP"""
    m = _lists(target_dtype)
    return m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS


def list_fp32_ops(target_dtype):
    """Get the default list of FP32 ops for AMP"""
    return _lists(target_dtype).FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """Get the default list of ops which run in both LP16 and FP32"""
    m = _lists(target_dtype)
    return m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype):
    """Get the conditional fp32 ops list"""
    return _lists(target_dtype).CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """Get the widest type cast ops list"""
    return _lists(target_dtype).WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """Get loss function list"""
    return _lists(target_dtype).LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """Get the params restrict for LP16"""
    m = _lists(target_dtype)
    return None if m is lists.symbol_fp16 else m.BF16_USE_FP32_PARAMS


# --- init(): wrapping the operator functions ------------------------------------------------------
_CPU_FLOATS = (bfloat16, np.float32)   # the input types MXNet's AMP casts on CPU ...
_GPU_FLOATS = (np.float16, np.float32)  # ... and on GPU


def _cast(x, dtype):
    """Cast a Symbol (always) or an NDArray (float32 and, on CPU, bfloat16 / on GPU, float16
    inputs: MXNet's rule) to ``dtype``."""
    if isinstance(x, Symbol):
        return symbol.amp_cast(x, dtype=dtype)
    if isinstance(x, NDArray):
        ok = _CPU_FLOATS if x.context.device_type == 'cpu' else _GPU_FLOATS
        if x.dtype != dtype and x.dtype in ok:
            return ndarray.amp_cast(x, dtype=dtype)
    return x


def _cast_args(args, kwargs, dtype, fp32_param=None, cond=None):
    """The inputs of one call as MXNet's NDArray wrapper casts them (``fp32_param``: per
    position / keyword, inputs kept as they are; ``cond``: (parameter, values) that make the
    op run in float32, only when given by keyword)."""
    if cond is not None and (cond[0] not in kwargs or kwargs[cond[0]] not in cond[1]):
        return args, kwargs
    args = tuple(x if fp32_param and i < len(fp32_param) and fp32_param[i] else _cast(x, dtype)
                 for i, x in enumerate(args))
    kwargs = {k: v if fp32_param and k in fp32_param else _cast(v, dtype)
              for k, v in kwargs.items()}
    return args, kwargs


def _widest_args(args, kwargs, target_dtype):
    """NDArray inputs of the target dtype cast to float32 when any input is float32."""
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, NDArray)]
    widest = np.float32 if any(a.dtype == np.float32 for a in arrays) else target_dtype

    def cast(a):
        if isinstance(a, NDArray) and a.dtype != widest and a.dtype == target_dtype:
            return ndarray.amp_cast(a, dtype=widest)
        return a
    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


def _rules(target_dtype, low_ops, conditional_fp32_ops, fp32_ops):
    """id(op) -> the casts MXNet's ``amp.init`` wraps the op's functions with, outermost
    first (as nested wrappers run): (dtype, fp32 params, condition) or None (widest type)."""
    from ...ops import registry as _reg
    rules = {}

    def add(name, rule):
        try:
            op = _reg.get(name)
        except Exception:  # noqa: BLE001 -- an op neomx lacks (the lists keep only neomx's)
            return
        have = rules.setdefault(id(op), [])
        if rule not in have:  # (aliases listed apiece: a call goes through one wrapper)
            have.insert(0, rule)
    fp32_params = list_lp16_use_fp32_params(target_dtype) or {}
    for name in (low_ops if low_ops is not None else list_lp16_ops(target_dtype)):
        add(name, (target_dtype, fp32_params.get(name), None))
    for name in (fp32_ops if fp32_ops is not None else list_fp32_ops(target_dtype)):
        add(name, (np.float32, None, None))
    for name, arg, values in (conditional_fp32_ops if conditional_fp32_ops is not None
                              else list_conditional_fp32_ops(target_dtype)):
        add(name, (np.float32, None, (arg, values)))
    for name in list_widest_type_cast(target_dtype):
        add(name, None)
    return rules


def _ndarray_hook(target_dtype, rules):
    """The imperative dispatch's AMP hook (``neomx.ndarray.register``): the inputs of a call
    cast as MXNet's wrapped ``mx.nd`` functions cast them."""
    def hook(op, args, kwargs):
        todo = rules.get(id(op))
        if todo is None:
            return args, kwargs
        for rule in todo:
            if rule is None:
                args, kwargs = _widest_args(args, kwargs, target_dtype)
            else:
                args, kwargs = _cast_args(args, kwargs, *rule)
        return args, kwargs
    return hook


def _recast_inputs(sym, dtype, fp32_param):
    """The op node of ``sym`` again, its inputs (but auxiliary states and ``fp32_param``
    positions) through ``amp_cast`` nodes (MXNet's symbol wrapper)."""
    children = sym.get_children()
    aux = set(sym.list_auxiliary_states())
    inputs = [] if children is None else list(children)
    inputs = [x if x.name in aux or (fp32_param and i < len(fp32_param) and fp32_param[i])
              else _cast(x, dtype) for i, x in enumerate(inputs)]
    node = sym._outputs[0][0]
    new = node.replace(inputs=tuple(s._outputs[0] for s in inputs), attrs=dict(node.attrs))
    return Symbol([(new, i) for _, i in sym._outputs])


def _multicast_args(args, kwargs):
    """Symbol (and NDArray) inputs through one ``amp_multicast`` node."""
    args = list(args)
    kwargs = dict(kwargs)
    slots = [(args, i, a) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
    slots += [(kwargs, k, a) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
    cast = symbol.amp_multicast(*[a for _, _, a in slots], num_outputs=len(slots))
    for (holder, key, _), c in zip(slots, cast):
        holder[key] = c
    return tuple(args), kwargs


def _symbol_hook(rules):
    """Symbol creation's AMP hook (``neomx.symbol.register``): the node made, then its inputs
    cast, as MXNet's wrapped ``mx.sym`` functions do."""
    def call(todo, build, args, kwargs, name, attr):
        if not todo:
            return build(args, kwargs, name, attr)
        rule, rest = todo[0], todo[1:]
        if rule is None:
            if any(isinstance(a, Symbol) for a in list(args) + list(kwargs.values())):
                args, kwargs = _multicast_args(args, kwargs)
            return call(rest, build, args, kwargs, name, attr)
        dtype, fp32_param, cond = rule
        if cond is not None and (cond[0] not in kwargs or kwargs[cond[0]] not in cond[1]):
            return call(rest, build, args, kwargs, name, attr)
        return _recast_inputs(call(rest, build, args, kwargs, name, attr), dtype, fp32_param)

    def hook(op, build, args, kwargs, name, attr):
        todo = rules.get(id(op))
        if todo is None:
            return build(args, kwargs, name, attr)
        return call(todo, build, args, kwargs, name, attr)
    return hook


def _wrap_loss_outputs(module, scaler, target_dtype):
    for name in list_loss_output_functions(target_dtype):
        f = getattr(module, name, None)
        if f is None:
            continue
        if module is ndarray:
            def wrapped(*args, _f=f, **kwargs):
                kwargs['grad_scale'] = kwargs.get('grad_scale', 1.0) * scaler.loss_scale
                return _f(*args, **kwargs)
        else:
            def wrapped(*args, _f=f, **kwargs):
                logging.warning("%s does not support dynamic loss scaling "
                                "in symbolic and hybridized execution.", _f.__name__)
                return _f(*args, **kwargs)
        wrapped.__name__, wrapped.__doc__, wrapped.__module__ = f.__name__, f.__doc__, f.__module__
        setattr(module, name, wrapped)


def init(target_dtype='float16', target_precision_ops=None,
         conditional_fp32_ops=None, fp32_ops=None):
    """Initialize AMP (automatic mixed precision). Call it before creating the model.

    Parameters
    ----------
    target_dtype : {'float16', 'bfloat16'}
        Target low precision type for AMP.
    target_precision_ops : list of string
        Override the list of functions casted to target_dtype.
    conditional_fp32_ops : list of (string, string, list of string)
        Override the list of functions conditionally casted to FP32: (name of the function,
        name of the parameter, values of the parameter that make it run in FP32).
    fp32_ops : list of string
        Override the list of functions casted to FP32.
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    assert target_dtype in ['float16', np.float16, 'bfloat16', bfloat16], \
        "AMP currently supports only float16 or bfloat16 as a target_dtype"
    _amp_initialized = True
    logging.info("Using AMP")
    target_dtype = bfloat16 if target_dtype == "bfloat16" else np.dtype(target_dtype)
    rules = _rules(target_dtype, target_precision_ops, conditional_fp32_ops, fp32_ops)
    set_ndarray_amp_hook(_ndarray_hook(target_dtype, rules))
    set_symbol_amp_hook(_symbol_hook(rules))
    _loss_scaler = LossScaler()
    _wrap_loss_outputs(ndarray, _loss_scaler, target_dtype)
    _wrap_loss_outputs(symbol, _loss_scaler, target_dtype)


# --- loss scaling ---------------------------------------------------------------------------------
def _is_trainer(x):
    from ...gluon import trainer
    return isinstance(x, trainer.Trainer)


def _not_trainer(x):
    from ... import optimizer as opt
    if isinstance(x, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    raise TypeError("optimizer_or_trainer should be a Gluon Trainer or "
                    "an optimizer, instead is %s" % type(x))


def init_trainer(optimizer_or_trainer):
    """Initialize a Gluon Trainer for AMP dynamic loss scaling."""
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        scaler = _loss_scaler
    else:
        scaler = LossScaler()
    if not _is_trainer(optimizer_or_trainer):
        _not_trainer(optimizer_or_trainer)
    optimizer_or_trainer._amp_loss_scaler = scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Scale the loss (a list: each) by the trainer's current loss scale for ``backward``."""
    assert optimizer_or_trainer._amp_loss_scaler is not None, \
        'Loss scaler is not initialized, did you forget to call amp.init_trainer()?'
    scale = optimizer_or_trainer._amp_loss_scaler.loss_scale
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scale
    if isinstance(loss, (list, tuple)):
        yield [l * scale for l in loss]
    else:
        yield scale * loss


def unscale(optimizer_or_trainer):
    """Unscale the gradients now (e.g. before clipping them)."""
    if not _is_trainer(optimizer_or_trainer):
        _not_trainer(optimizer_or_trainer)
    for p in optimizer_or_trainer._params:
        if p._grad is not None:
            for g in p._grad:
                g[:] *= optimizer_or_trainer._scale
    optimizer_or_trainer._scale = 1.


# --- graph conversion -----------------------------------------------------------------------------
def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None,
                   fp32_ops=None, conditional_fp32_ops=None,
                   excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """Add amp_cast/amp_multicast layers to a float32 symbol per the AMP op lists.

    Parameters
    ----------
    sym : Symbol
        FP32 neural network symbol
    target_dtype : {'float16', 'bfloat16'}
    target_dtype_ops, fp32_ops : list of str, optional
        Override the lists of operators run in target_dtype / float32.
    conditional_fp32_ops : list of (str, str, list of str), optional
        Override the list of operators run in float32 for some parameter values.
    excluded_sym_names : list of str, optional
        Names of nodes to keep in float32.
    data_names : list of str, optional
        Input data names (the other inputs are parameters, their dtype is recorded).
    cast_optional_params : bool
        Store the parameters that feed only low-precision ops in the low precision.
    """
    assert isinstance(sym, Symbol), "First argument to convert_symbol should be Symbol"
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    if target_dtype_ops is not None:
        assert isinstance(target_dtype_ops, list), "target_dtype_ops should be a list of strs"
    else:
        target_dtype_ops = list_lp16_ops(target_dtype)
    if fp32_ops is not None:
        assert isinstance(fp32_ops, list), "fp32_ops should be a list of strs"
    else:
        fp32_ops = list_fp32_ops(target_dtype)
    if conditional_fp32_ops is not None:
        assert isinstance(conditional_fp32_ops, list), "conditional_fp32_ops should be a list"
    else:
        conditional_fp32_ops = list_conditional_fp32_ops(target_dtype)
    conditional = {}
    for op in conditional_fp32_ops:
        assert isinstance(op[0], str) and isinstance(op[1], str) and isinstance(op[2], list), \
            "conditional_fp32_ops should be a list of (str, str, list of str)"
        conditional.setdefault(op[0], []).append((op[1], op[2]))
    if excluded_sym_names is not None:
        assert isinstance(excluded_sym_names, list), "excluded_sym_names should be a list of strs"
    else:
        excluded_sym_names = []
    _check_lists(target_dtype, target_dtype_ops, fp32_ops, list(conditional))

    attr_dict = sym.attr_dict()
    if data_names is None:
        data_names = [n for n in sym.list_inputs() if "__dtype__" not in attr_dict.get(n, {})]
    param_names = set(sym.list_inputs()) - set(data_names)
    out = reduce_precision(
        sym._outputs, target=target_dtype, low_ops=_canonical(target_dtype_ops),
        fp32_ops=_canonical(fp32_ops), widest_ops=_canonical(list_widest_type_cast(target_dtype)),
        conditional={_canon(k): v for k, v in conditional.items()},
        excluded=excluded_sym_names, data_names=data_names, cast_optional=cast_optional_params,
        output_named=_canonical(_lists(target_dtype).OUTPUT_NAMED_OPS))
    result = Symbol(out)
    _annotate_param_dtypes(result, data_names, param_names, target_dtype)
    return result


def _canon(name):
    from ...ops import registry
    op = registry.find(name)
    return op.name if op is not None else name


def _canonical(names):
    return {_canon(n) for n in names}


def _check_lists(target_dtype, low, fp32, cond):
    for a, b, what in ((low, fp32, "target_dtype_ops and fp32_ops"),
                       (low, cond, "target_dtype_ops and conditional_fp32_ops"),
                       (cond, fp32, "fp32_ops and conditional_fp32_ops")):
        common = set(a) & set(b)
        assert not common, "Ops cannot be in two or more lists. " \
                           "Common ops in {} {}".format(what, common)
    legal = set(list_lp16_ops(target_dtype) + list_fp32_ops(target_dtype)
                + list_lp16_fp32_ops(target_dtype)
                + [c[0] for c in list_conditional_fp32_ops(target_dtype)])
    illegal = set(low + fp32 + cond) - legal
    assert not illegal, '''Can only choose ops from one of the three lists
                            for lp16_ops and fp32_ops
                            1. amp.list_lp16_ops(target_dtype)
                            2. amp.list_fp32_ops(target_dtype)
                            3. amp.list_lp16_fp32_ops(target_dtype)
                            4. amp.list_conditional_fp32_ops(target_dtype)
                            Op %s not in any of them''' % (illegal)


def _annotate_param_dtypes(sym, data_names, param_names, target_dtype):
    """Record each parameter's inferred dtype as ``__dtype__`` (data inputs float32)."""
    if not param_names:
        return
    try:
        arg_t, _, aux_t = sym.infer_type_partial(**{n: np.float32 for n in data_names
                                                   if n in sym.list_inputs()})
    except Exception:  # noqa: BLE001 -- MXNet leaves -1 where inference fails
        return
    types = dict(zip(sym.list_arguments(), arg_t or []))
    types.update(zip(sym.list_auxiliary_states(), aux_t or []))
    for node in sym._topo():
        if node.op is None and node.name in param_names:
            t = types.get(node.name)
            code = 0 if t is None else dtype_code(t)  # a float32 model: unknown is float32
            node.annotate(__dtype__=str(code))


def _cast_param(arr, code):
    """A parameter in the dtype the converted graph records for it (as MXNet: bfloat16 through
    AMP's NDArray cast, ``amp_cast``; other types with ``astype``)."""
    if code == 12:
        return _cast(arr, bfloat16)
    return arr.astype(dtype_from_code(code))


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """Convert a float32 model (symbol and parameters) to mixed precision.

    Returns the converted symbol and the parameter dicts with each parameter cast to the
    dtype the converted symbol records for it.
    """
    if excluded_sym_names is None:
        excluded_sym_names = []
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    assert isinstance(sym, Symbol), "First argument to convert_model should be Symbol"
    assert isinstance(arg_params, dict), "Second argument to convert_model should be a dict of name to ndarray"
    assert isinstance(aux_params, dict), "Third argument to convert_model should be a dict of name to ndarray"
    param_names = list(arg_params) + list(aux_params)
    data_names = list(set(sym.list_inputs()) - set(param_names))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    attrs = sym.attr_dict()
    for names, params in ((sym.list_arguments(), arg_params),
                          (sym.list_auxiliary_states(), aux_params)):
        for name in names:
            code = attrs.get(name, {}).get("__dtype__")
            if code is not None and code != "-1" and name in params:
                params[name] = _cast_param(params[name], int(code))
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None,
                         excluded_sym_names=None, ctx=gpu(0),
                         cast_optional_params=False):
    """A SymbolBlock running a hybridized (and once run) HybridBlock in mixed precision."""
    from ...gluon import HybridBlock, SymbolBlock
    assert isinstance(block, HybridBlock), "block input should be a HybridBlock"
    if not block._cached_graph:
        raise RuntimeError(
            "Please first call block.hybridize() and then run forward with "
            "this block at least once before calling export.")
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    aux_names = set(converted.list_auxiliary_states())
    attrs = converted.attr_dict()
    values = {}
    for name, param in block.collect_params().items():
        kind = 'arg' if name in arg_names else 'aux'
        assert kind == 'arg' or name in aux_names
        value = param._reduce()
        code = attrs.get(name, {}).get("__dtype__")
        if code is not None and code != "-1":
            value = _cast_param(value, int(code))
        values['%s:%s' % (kind, name)] = value
    ret = SymbolBlock(converted, inputs)
    for key, param in ret.collect_params().items():
        for kind in ('arg', 'aux'):
            v = values.get('%s:%s' % (kind, key))
            if v is not None and param.dtype != v.dtype:
                param.cast(v.dtype)
    ret.collect_params().load_dict(values, ctx=ctx)
    for key, param in ret.collect_params().items():  # loading may have cast back to float32
        for kind in ('arg', 'aux'):
            v = values.get('%s:%s' % (kind, key))
            if v is not None and np.dtype(param.data().dtype) != np.dtype(v.dtype):
                param.cast(v.dtype)
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None,
                             excluded_sym_names=None, cast_optional_params=False):
    """Convert every bucket's symbol of a BucketingModule (and its parameters)."""
    from ...module import BucketingModule
    assert isinstance(bucketing_mod, BucketingModule), "module should be instance of bucketing module"
    assert len(bucketing_mod._buckets) > 0, "Bucketing Module should not be empty"
    assert bucketing_mod.params_initialized, \
        "bucketing_mod params should be initialized for mixed precision conversion"
    arg_params = bucketing_mod._curr_module._arg_params
    aux_params = bucketing_mod._curr_module._aux_params
    syms = {}
    for key, mod in bucketing_mod._buckets.items():
        syms[key], res_args, res_aux = convert_model(
            mod._symbol, arg_params, aux_params, target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops,
            conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        syms, sym_gen=bucketing_mod._sym_gen, arg_params=res_args, aux_params=res_aux,
        default_bucket_key=bucketing_mod._default_bucket_key, logger=bucketing_mod.logger,
        context=bucketing_mod._context, work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)
