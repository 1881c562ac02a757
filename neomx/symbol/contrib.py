"""``mx.sym.contrib``: the operators named ``_contrib_<X>`` as ``mx.sym.contrib.<X>`` (MXNet's
prefix namespace; unnamed nodes are named after ``<X>``, as MXNet's: ``x0``), and MXNet 1.9.1's
Python functions ``rand_zipfian``, ``adamw_update`` and ``mp_adamw_update``."""
from __future__ import annotations

import math

from ..ops import namespaces as _prefixed
from .register import make_function as _make
from .symbol import Symbol

__all__: list = ["rand_zipfian", "adamw_update", "mp_adamw_update"]


def rand_zipfian(true_classes, num_sampled, range_max):
    """Draw ``num_sampled`` classes from the approximately log-uniform (Zipfian) distribution
    on ``[0, range_max)``; returns three Symbols (sampled classes, expected counts of
    ``true_classes``, expected counts of the sampled classes), as MXNet's."""
    from .random import uniform
    assert isinstance(true_classes, Symbol), "unexpected type %s" % type(true_classes)
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_classes = true_classes.astype("float64")
    expected_prob_true = ((true_classes + 2.0) / (true_classes + 1.0)).log() / log_range
    expected_count_true = expected_prob_true * num_sampled
    sampled_cls_fp64 = sampled_classes.astype("float64")
    expected_prob_sampled = ((sampled_cls_fp64 + 2.0) / (sampled_cls_fp64 + 1.0)).log() / log_range
    expected_count_sampled = expected_prob_sampled * num_sampled
    return sampled_classes, expected_count_true, expected_count_sampled


def _with_out(out, kwargs):
    """MXNet's wrappers pass ``out`` on; a symbol has no output array, so only a given one."""
    return kwargs if out is None else dict(kwargs, out=out)


def _rescale_grad_symbol(rescale_grad):
    if isinstance(rescale_grad, Symbol):
        return rescale_grad
    from . import full
    return full(shape=(1,), val=rescale_grad)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``); a number ``rescale_grad`` becomes a ``full((1,))``
    symbol, as MXNet 1.9.1's."""
    from . import _internal
    return _internal._adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                   rescale_grad=_rescale_grad_symbol(rescale_grad), lr=lr,
                                   eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                   clip_gradient=clip_gradient, name=name,
                                   **_with_out(out, kwargs))


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """Mixed-precision AdamW step (``_mp_adamw_update``)."""
    from . import _internal
    return _internal._mp_adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                      weight32=weight32,
                                      rescale_grad=_rescale_grad_symbol(rescale_grad), lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                      clip_gradient=clip_gradient, name=name,
                                      **_with_out(out, kwargs))

_prefixed.fill(globals(), "_contrib_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_contrib_", _make)
