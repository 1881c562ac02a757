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
                 "multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update", "rand_zipfian"]


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


def _make(op, short):
    return _function_for(op)


_prefixed.fill(globals(), "_contrib_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_contrib_", _make)
