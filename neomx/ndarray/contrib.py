"""``mx.nd.contrib``: the operators named ``_contrib_<X>`` as ``mx.nd.contrib.<X>`` (MXNet's prefix
namespace), and MXNet 1.9.1's Python functions of ``mxnet.ndarray.contrib`` over other operators
(``isinf``, ``isfinite``, ``isnan``, the AdamW and multi-tensor LAMB updates)."""
from __future__ import annotations

import math

import numpy as np

from ..ops import namespaces as _prefixed
from .ndarray import NDArray
from .register import function_for as _function_for
from ..ops import registry as _reg

__all__: list = ["isinf", "isfinite", "isnan", "adamw_update", "mp_adamw_update",
                 "multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update",
                 "multi_mp_lamb_update", "rand_zipfian",
                 "foreach", "while_loop", "cond"]


def _op(name):
    return _function_for(_reg.get(name))


def _get_rescale_grad(rescale_grad, ctx):
    if not isinstance(rescale_grad, NDArray):
        from . import full
        return full(shape=(1,), val=rescale_grad, ctx=ctx)
    return rescale_grad.as_in_context(ctx)


def _flatten_list(nested):
    return [x for group in nested for x in group]


def isinf(data):
    """1 where ``data`` is +-inf, else 0."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where ``data`` is neither inf nor NaN, else 0."""
    from .functions import logical_and
    return logical_and(data.abs() != np.inf, data == data)


def isnan(data):
    """1 where ``data`` is NaN, else 0."""
    return data != data


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes from the approximately log-uniform (Zipfian) distribution
    on ``[0, range_max)``; returns (sampled classes (int64), expected counts of
    ``true_classes``, expected counts of the sampled classes) (float64), as MXNet's."""
    from ..context import current_context
    from .random import uniform
    if ctx is None:
        ctx = current_context()
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_cls = true_classes.as_in_context(ctx).astype("float64")
    expected_count_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled_cls_fp64 = sampled_classes.astype("float64")
    expected_prob_sampled = ((sampled_cls_fp64 + 2.0) / (sampled_cls_fp64 + 1.0)).log() / log_range
    expected_count_sampled = expected_prob_sampled * num_sampled
    return sampled_classes, expected_count_true, expected_count_sampled


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``); a number ``rescale_grad`` becomes a 1-element array."""
    rescale_grad = _get_rescale_grad(rescale_grad, ctx=weight.context)
    return _op("_adamw_update")(weight=weight, grad=grad, mean=mean, var=var,
                                rescale_grad=rescale_grad, lr=lr, eta=eta, beta1=beta1,
                                beta2=beta2, epsilon=epsilon, wd=wd,
                                clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """Mixed-precision AdamW step (``_mp_adamw_update``)."""
    rescale_grad = _get_rescale_grad(rescale_grad, ctx=weight.context)
    return _op("_mp_adamw_update")(weight=weight, grad=grad, mean=mean, var=var,
                                   weight32=weight32, rescale_grad=rescale_grad, lr=lr, eta=eta,
                                   beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                   clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """AdamW steps of several weights (``_multi_adamw_update``, interleaved inputs)."""
    if not size:
        size = len(weights)
    rescale_grad = _get_rescale_grad(rescale_grad, ctx=weights[0].context)
    temp_list = _flatten_list(zip(weights, grads, mean, var)) + [rescale_grad]
    return _op("_multi_adamw_update")(*temp_list, out=out, num_weights=size, lrs=lrs, wds=wds,
                                      etas=etas, name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """Mixed-precision AdamW steps of several weights (``_multi_mp_adamw_update``)."""
    if not size:
        size = len(weights)
    rescale_grad = _get_rescale_grad(rescale_grad, ctx=weights[0].context)
    temp_list = _flatten_list(zip(weights, grads, mean, var, weights32)) + [rescale_grad]
    return _op("_multi_mp_adamw_update")(*temp_list, out=out, num_weights=size, lrs=lrs,
                                         wds=wds, etas=etas, name=name, **kwargs)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0,
                      **kwargs):
    """LAMB steps of several tensors (``_multi_lamb_update``)."""
    if not num_tensors:
        num_tensors = len(weights)
    temp_list = _flatten_list(zip(weights, grads, mean, var))
    return _op("_multi_lamb_update")(*temp_list, out=out, num_tensors=num_tensors,
                                     step_count=step_count, learning_rates=lrs, wds=wds,
                                     **kwargs)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None,
                         num_tensors=0, **kwargs):
    """Mixed-precision LAMB steps of several tensors (``_multi_mp_lamb_update``)."""
    if not num_tensors:
        num_tensors = len(weights)
    temp_list = _flatten_list(zip(weights, grads, mean, var, weights32))
    return _op("_multi_mp_lamb_update")(*temp_list, out=out, num_tensors=num_tensors,
                                        step_count=step_count, learning_rates=lrs, wds=wds,
                                        **kwargs)


def _make(op, short):
    return _function_for(op)


_prefixed.fill(globals(), "_contrib_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_contrib_", _make)


# --- control flow (MXNet 1.9.1's python/mxnet/ndarray/contrib.py: plain Python loops, recorded
# by autograd like any other NDArray computation) ----------------------------------------------
def _cf_flatten(args, inout_str):
    if isinstance(args, NDArray):
        return [args], int(0)
    assert isinstance(args, (list, tuple)), \
        "%s must be (nested) list of NDArray, but got %s of type %s" % (inout_str, str(args),
                                                                         str(type(args)))
    flat, fmts = [], []
    for i in args:
        arg, fmt = _cf_flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _cf_regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    assert isinstance(args, (list, tuple)), \
        "output must be (nested) list of NDArray, but got %s of type %s" % (str(args),
                                                                           str(type(args)))
    ret = []
    for i in fmt:
        res, args = _cf_regroup(args, i)
        ret.append(res)
    return ret, args


def _to_python_scalar(inputs, type_, name):
    if isinstance(inputs, NDArray):
        inputs = inputs.asscalar()
    try:
        inputs = type_(inputs)
    except Exception:
        raise ValueError("Cannot convert %s to python %s" % (name, type_.__name__))
    return inputs


def foreach(body, data, init_states):
    """Run a for loop over the first axis of ``data``: ``outputs, states = body(data[i],
    states)`` per step; returns (the outputs stacked along a new first axis, the final states),
    nested as ``body`` returns them.

    Examples
    --------
    >>> import neomx as mx
    >>> step = lambda x, states: (x + states[0], [x + states[0]])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.arange(3), [mx.nd.zeros((1,))])
    >>> outs.asnumpy().ravel().tolist(), float(states[0].asscalar())
    ([0.0, 1.0, 3.0], 3.0)
    """
    from . import stack

    def check_input(inputs, in_type, msg):
        is_NDArray_or_list = True
        if isinstance(inputs, list):
            for i in inputs:
                if not isinstance(i, in_type):
                    is_NDArray_or_list = False
                    break
        else:
            is_NDArray_or_list = isinstance(inputs, in_type)
        assert is_NDArray_or_list, msg

    flatten, _ = _cf_flatten(data, "foreach input")
    check_input(flatten, NDArray, "data should be an NDArray or a nested list of NDArrays")
    flatten, _ = _cf_flatten(init_states, "foreach states")
    check_input(flatten, NDArray, "init_states should be an NDArray or a nested list of NDArrays")

    not_data_list = isinstance(data, NDArray)
    num_iters = data.shape[0] if not_data_list else data[0].shape[0]
    states = init_states
    outputs = []
    out_fmt = None
    for i in range(num_iters):
        eles = data[i] if not_data_list else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = _cf_flatten(outs, "foreach output")
        outputs.append(outs)
    outputs = [stack(*out) for out in zip(*outputs)]
    if out_fmt is not None:
        outputs, _ = _cf_regroup(outputs, out_fmt)
    return (outputs, states)


def while_loop(cond, func, loop_vars, max_iterations=None):
    """``step_output, loop_vars = func(*loop_vars)`` while ``cond(*loop_vars)`` is true, at most
    ``max_iterations`` times; returns (the step outputs stacked along a new first axis and
    padded to ``max_iterations`` rows, whose extra rows are undefined; the final loop
    variables).

    Examples
    --------
    >>> import neomx as mx
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> outs, (i, s) = mx.nd.contrib.while_loop(cond, func, [mx.nd.array([0]), mx.nd.array([1])],
    ...                                         max_iterations=10)
    >>> outs[0].shape, float(i.asscalar()), float(s.asscalar())
    ((10, 1), 6.0, 16.0)
    """
    from . import concat, empty

    def _func_wrapper(loop_vars):
        step_output, new_loop_vars = func(*loop_vars)
        if step_output is None:
            step_output = []
        if new_loop_vars is None:
            new_loop_vars = []
        if isinstance(step_output, tuple):
            step_output = list(step_output)
        if isinstance(new_loop_vars, tuple):
            new_loop_vars = list(new_loop_vars)
        new_loop_vars = new_loop_vars if isinstance(new_loop_vars, list) else [new_loop_vars]
        if len(loop_vars) != len(new_loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        return step_output, new_loop_vars

    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _to_python_scalar(max_iterations, int, "max_iteration")
    if len(loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")

    steps = 0
    outputs = []
    out_fmt = None
    not_loop_var_list = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if not_loop_var_list else list(loop_vars)
    while steps < max_iterations and \
            _to_python_scalar(cond(*loop_vars), bool, "Return value of cond"):
        step_output, loop_vars = _func_wrapper(loop_vars)
        step_output, out_fmt = _cf_flatten(step_output, "while output")
        outputs.append(step_output)
        steps += 1
        if len(outputs) != steps or len(step_output) != len(outputs[0]):
            raise ValueError("Number of elements in step_output should be the same in each step")
    stacked_outputs = []
    for i_th, items in enumerate(zip(*outputs), 1):
        items = [x.expand_dims(0) for x in items]
        if steps != max_iterations and items:
            pad_shape = [max_iterations - steps] + list(items[0].shape[1:])
            pad = empty(shape=pad_shape, ctx=items[0].context, dtype=items[0].dtype)
            items = list(items) + [pad]
        try:
            stacked_outputs.append(concat(*items, dim=0))
        except Exception:
            raise ValueError("\n".join(
                ["Shapes of %d-th elements in step_outputs are inconsistent, which are:" % i_th]
                + ["  Step %d, shape is %s" % (i, str(x.shape)) for i, x in enumerate(items)]))
    if out_fmt is not None:
        stacked_outputs, _ = _cf_regroup(stacked_outputs, out_fmt)
    if not_loop_var_list:
        loop_vars = loop_vars[0]
    return stacked_outputs, loop_vars


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (a one-element NDArray or a number) is true, else
    ``else_func()``.

    Examples
    --------
    >>> import neomx as mx
    >>> a, b = mx.nd.array([1]), mx.nd.array([2])
    >>> out = mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    >>> out.asnumpy().tolist()
    [42.0]
    """
    branch = _to_python_scalar(pred, bool, "pred")
    if branch:
        return then_func()
    return else_func()
