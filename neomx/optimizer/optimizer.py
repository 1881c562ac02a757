"""Optimizers (``mx.optimizer``), as in MXNet 1.9.1.

An optimizer turns ``(index, weight, grad, state)`` into an in-place weight update:

* ``create_state(index, weight)`` makes the per-weight state (momentum, moments...; ``None``,
  an NDArray or a tuple); ``create_state_multi_precision`` adds a float32 master copy for
  float16 weights when ``multi_precision=True``.
* ``update(index, weight, grad, state)`` counts the update (``num_update``), looks up the
  learning rate and weight decay of ``index`` and applies the rule. ``update_multi_precision``
  is what ``Updater`` calls.

Learning rate of ``index``: ``lr_scheduler(num_update)`` (or ``learning_rate``) times
``lr_mult``; weight decay: ``wd`` times ``wd_mult``. Multipliers come, in order of precedence,
from ``param_dict[index]``, the index itself in ``set_lr_mult``/``set_wd_mult``, or the name
``param_idx2name[index]``. With ``param_idx2name`` every name not ending in ``_weight`` or
``_gamma`` has ``wd_mult`` 0; ``__lr_mult__``/``__wd_mult__`` attributes of ``sym`` override.

Rules run as torch operations on the arrays' tensors, pushed through the engine (reads: the
gradient; writes: the weight and states). Registered names (case-insensitive): sgd, ccsgd, nag,
signum, adam, adamax, nadam, adagrad, rmsprop, adadelta, ftrl, ftml, dcasgd, sgld, test, and
(from ``large_batch.py``, re-exported here) lars, lbsgd, lamb.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy

from .. import engine
from ..base import MXNetError
from ..ndarray import NDArray, zeros
from ..ndarray import abs as NDabs  # noqa: N812  (MXNet's optimizer module exports it)
from . import kernels as K
from . import sparse as _sparse

__all__ = ["Optimizer", "register", "create", "SGD", "ccSGD", "NAG", "Signum", "Adam", "Adamax",
           "Nadam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "FTML", "DCASGD", "SGLD", "Test",
           "LARS", "LBSGD", "LAMB", "NDabs", "Updater", "get_updater"]


def _arrays(state):
    """The NDArrays inside a (possibly nested) state."""
    if isinstance(state, NDArray):
        return [state]
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _arrays(s)]
    return []


def _push(fn, weight, grad, state, grad_written=False):
    """Run ``fn`` after pending work on the arrays (the weight and states are written)."""
    writes = [weight, *_arrays(state)] + ([grad] if grad_written else [])
    engine.push(fn, reads=(grad,), writes=writes)


class Optimizer:
    """The base class of optimizers.

    Parameters
    ----------
    rescale_grad : float, default 1.0
        Gradients are multiplied by this first (Module sets ``1/batch_size``).
    param_idx2name : dict of int to str, optional
        Names of the weight indices (enables the ``_weight``/``_gamma`` weight-decay rule).
    wd : float, default 0.0
        Weight decay (L2) coefficient.
    clip_gradient : float, optional
        Clip gradients to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        Overrides ``lr_scheduler.base_lr``; 0.01 when neither is given.
    lr_scheduler : LRScheduler, optional
    sym : Symbol, optional
        Its ``__lr_mult__``/``__wd_mult__`` attributes set multipliers.
    begin_num_update : int, default 0
    multi_precision : bool, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to Parameter-like, optional
        Objects with ``lr_mult``/``wd_mult`` (not pickled).
    """

    opt_registry: dict = {}

    def __init__(self, rescale_grad=1.0, param_idx2name=None, wd=0.0, clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                print(UserWarning("learning rate from ``lr_scheduler`` has been "
                                  "overwritten by ``learning_rate`` in optimizer."))
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        assert isinstance(param_idx2name, dict), \
            "param_idx2name should be a dict of param indexes to names."
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # --- registry -------------------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Register an Optimizer subclass under its lowercased class name (a decorator)."""
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}")
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An instance of the optimizer registered as ``name`` (case-insensitive).

        Examples
        --------
        >>> import neomx as mx
        >>> type(mx.optimizer.create('adam', learning_rate=0.1)).__name__
        'Adam'
        """
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # --- states ---------------------------------------------------------------------------------
    def create_state(self, index, weight):
        """The auxiliary state of one weight (``None`` by default)."""

    def create_state_multi_precision(self, index, weight):
        """``(float32 master copy, create_state(master))`` for float16 weights with
        ``multi_precision``; otherwise ``create_state``."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype(numpy.float32)
            return (master,) + (self.create_state(index, master),)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "optimizer")
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, through the float32 master copy for float16 weights with
        ``multi_precision``."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master, original_state = state[0], state[1]
            self.update(index, master, grad.astype(numpy.float32), original_state)
            src, dst = master._data, weight._data
            engine.push(lambda: dst.copy_(src), reads=(master,), writes=(weight,))
        else:
            self.update(index, weight, grad, state)

    # --- learning rate and weight decay --------------------------------------------------------
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate (not allowed with an lr_scheduler: raises UserWarning)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been "
                              "defined. Note that set_learning_rate can mutate "
                              "the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """[Deprecated] Use ``set_lr_mult``."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Set learning-rate multipliers by name or index (after ``sym``'s ``__lr_mult__``)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set weight-decay multipliers by name or index. With ``param_idx2name``, names not
        ending in ``_weight`` or ``_gamma`` get 0 first; ``sym``'s ``__wd_mult__`` overrides."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Keep update counts per device (each device's updater counts its own updates)."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one update of each index; ``num_update`` is the largest count."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _mults(self, indices, base, mults, attr):
        out = [base for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                out[i] *= getattr(self.param_dict[index], attr)
            elif index in mults:
                out[i] *= mults[index]
            elif index in self.idx2name:
                out[i] *= mults.get(self.idx2name[index], 1.0)
        return out

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return self._mults(indices, lr, self.lr_mult, "lr_mult")

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        return self._mults(indices, self.wd, self.wd_mult, "wd_mult")

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _kernel_clip(self):
        """The clip bound MXNet passes to its update operators (only when truthy)."""
        return self.clip_gradient if self.clip_gradient else None

    def __getstate__(self):
        ret = self.__dict__.copy()
        del ret["param_dict"]  # set again by the owner
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _fallback(weight, grad):
    """MXNet's dense fallback for the rules without a sparse kernel: a sparse gradient's dense
    form; a row_sparse weight gets every row stored (its data is then the dense layout the
    rule updates in place)."""
    if weight.__class__ is not NDArray and weight.stype == "row_sparse":
        from ..ndarray.sparse import _fill_sparse_states
        _fill_sparse_states([weight])
    return grad if grad.__class__ is NDArray else _sparse.dense_grad(grad)


def _zeros_like(weight, dtype=None):
    return zeros(weight.shape, weight.context, dtype=weight.dtype if dtype is None else dtype)


def _mp_state_first(opt, index, weight, label):
    """SGD/NAG's multi-precision state: ``(create_state(master), master)``."""
    if opt.multi_precision and weight.dtype == numpy.float16:
        master = weight.astype(numpy.float32)
        return (opt.create_state(index, master), master)
    if weight.dtype == numpy.float16 and not opt.multi_precision:
        warnings.warn("Accumulating with float16 in optimizer can lead to "
                      "poor accuracy or slow convergence. "
                      f"Consider using multi_precision=True option of the {label} optimizer")
    return opt.create_state(index, weight)


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay::

        rescaled_grad = lr * (rescale_grad * clip(grad, clip_gradient) + wd * weight)
        state = momentum * state + rescaled_grad
        weight = weight - state

    ``lazy_update``: with a row_sparse gradient only its rows are updated. With ``multi_precision``
    the state of a float16 weight is ``(momentum or None, float32 master copy)``. Lists of
    indices are accepted (MXNet's aggregated update; ``aggregate_num`` per call).

    Examples
    --------
    >>> import neomx as mx
    >>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    >>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state)
    >>> w.asnumpy()
    array([0.9, 0.9], dtype=float32)
    """

    _sparse_updates = True  # (row_sparse gradients: neomx/optimizer/sparse.py)

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "SGD")

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for w, g in zip(weights, grads):
            assert isinstance(w, NDArray) and isinstance(g, NDArray)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        rescale, clip, momentum = self.rescale_grad, self._kernel_clip(), self.momentum
        for w, g, s, lr, wd in zip(weights, grads, states, lrs, wds):
            if g.__class__ is not NDArray or w.__class__ is not NDArray:  # (sparse)
                self._sparse_update(w, g, s, lr, wd, multi_precision)
                continue
            wt, gt = w._data, g._data
            if not multi_precision:
                if momentum > 0:
                    mt = s._data
                    fn = (lambda wt=wt, gt=gt, mt=mt, lr=lr, wd=wd:
                          K.sgd_mom(wt, gt, mt, lr, wd, momentum, rescale, clip))
                else:
                    fn = lambda wt=wt, gt=gt, lr=lr, wd=wd: K.sgd(wt, gt, lr, wd, rescale, clip)
            else:
                w32 = s[1]._data
                if momentum > 0:
                    mt = s[0]._data
                    fn = (lambda wt=wt, gt=gt, mt=mt, w32=w32, lr=lr, wd=wd:
                          K.mp_sgd_mom(wt, gt, mt, w32, lr, wd, momentum, rescale, clip))
                else:
                    fn = (lambda wt=wt, gt=gt, w32=w32, lr=lr, wd=wd:
                          K.mp_sgd(wt, gt, w32, lr, wd, rescale, clip))
            _push(fn, w, g, s)

    def _sparse_update(self, w, g, s, lr, wd, multi_precision):
        """A row_sparse gradient: lazy (its rows only) or standard (MXNet's sgd_*update)."""
        if multi_precision:
            s = s[0]
        if not _sparse.is_sparse(g):
            g = g.tostype("default")
        args = (lr, wd, self.momentum, self.rescale_grad, self._kernel_clip())
        if self.momentum > 0:
            fn = lambda: _sparse.run(K.sgd_mom, w, g, [s], args, self.lazy_update)  # noqa: E731
        else:
            fn = lambda: _sparse.run(  # noqa: E731
                lambda wt, gt, *a: K.sgd(wt, gt, a[0], a[1], a[3], a[4]), w, g, [], args,
                self.lazy_update)
        _push(fn, w, g, s)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == numpy.float16)


@register
class ccSGD(SGD):
    """[Deprecated] The same as SGD."""


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        state = momentum * state - lr * (clip(rescale_grad * grad) + wd * weight)
        weight = weight + momentum * state - lr * (clip(rescale_grad * grad) + wd * weight)
    """

    _sparse_updates = True  # (row_sparse gradients: lazy sgd_update without momentum)

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "NAG")

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        rescale, clip = self.rescale_grad, self._kernel_clip()
        momentum = self.momentum if self.momentum > 0 else 0.0  # else the operator's default
        if state is None and not multi_precision and grad.stype == "row_sparse":
            # MXNet's sgd_update: lazy on the gradient's rows (nag_mom_update has no sparse
            # kernel: with momentum, the dense fallback below)
            _push(lambda: _sparse.run(lambda w, g, *a: K.sgd(w, g, *a), weight, grad, [],
                                      (lr, wd, rescale, clip)), weight, grad, state)
            return
        if grad.__class__ is not NDArray:
            grad = _sparse.dense_grad(grad)
        wt, gt = weight._data, grad._data
        if not multi_precision:
            if state is not None:
                mt = state._data
                fn = lambda: K.nag_mom(wt, gt, mt, lr, wd, momentum, rescale, clip)
            else:
                fn = lambda: K.sgd(wt, gt, lr, wd, rescale, clip)
        else:
            w32 = state[1]._data
            if state[0] is not None:
                mt = state[0]._data
                fn = lambda: K.mp_nag_mom(wt, gt, mt, w32, lr, wd, momentum, rescale, clip)
            else:
                fn = lambda: K.mp_sgd(wt, gt, w32, lr, wd, rescale, clip)
        _push(fn, weight, grad, state)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_mp = (self.multi_precision and weight.dtype == numpy.float16
                  and isinstance(state, (tuple, list)))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)


@register
class Signum(Optimizer):
    """signSGD / Signum (Bernstein et al., 2018)::

        state = momentum * state + (1 - momentum) * (rescale_grad * clip(grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    Without momentum: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        wt, gt = weight._data, grad._data
        if state is not None:
            mt, momentum = state._data, self.momentum if self.momentum > 0 else 0.0
            rescale, clip, wd_lh = self.rescale_grad, self._kernel_clip(), self.wd_lh or 0.0
            fn = lambda: K.signum(wt, gt, mt, lr, wd, momentum, rescale, clip, wd_lh)
        else:
            fn = lambda: K.signsgd(wt, gt, lr, wd)
        _push(fn, weight, grad, state)


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba)::

        rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * rescaled_grad
        v = beta2 * v + (1 - beta2) * rescaled_grad**2
        lr_t = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr_t * m / (sqrt(v) + epsilon)

    ``t`` counts this weight's updates (on this device). The gradient is clipped *after*
    weight decay is added.
    """

    _sparse_updates = True  # (row_sparse gradients: neomx/optimizer/sparse.py)

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        args = (lr, wd, self.beta1, self.beta2, self.epsilon, self.rescale_grad,
                self._kernel_clip())
        if grad.__class__ is not NDArray or weight.__class__ is not NDArray:  # (sparse)
            _push(lambda: _sparse.run(K.adam, weight, grad, list(state), args,
                                      self.lazy_update and _sparse.is_sparse(grad)),
                  weight, grad, state)
            return
        wt, gt, mt, vt = weight._data, grad._data, state[0]._data, state[1]._data
        _push(lambda: K.adam(wt, gt, mt, vt, *args), weight, grad, state)


@register
class Adamax(Optimizer):
    """AdaMax, Adam with the infinity norm::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad
        u = maximum(beta2 * u, abs(grad))
        weight -= lr / (1 - beta1**t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        lr /= 1.0 - self.beta1 ** self._index_update_count[index]
        args = (lr, wd, self.beta1, self.beta2, self.rescale_grad, self.clip_gradient)
        wt, gt, mt, ut = weight._data, grad._data, state[0]._data, state[1]._data
        _push(lambda: K.adamax(wt, gt, mt, ut, *args), weight, grad, state)


@register
class Nadam(Optimizer):
    """Nesterov Adam (Dozat, 2015) with momentum schedule
    ``beta1 * (1 - 0.5 * 0.96 ** (t * schedule_decay))``.

    ``m_schedule`` is one running product shared by all weights, as in MXNet.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        momentum_t = self.beta1 * (1.0 - 0.5 * pow(0.96, t * self.schedule_decay))
        momentum_t_1 = self.beta1 * (1.0 - 0.5 * pow(0.96, (t + 1) * self.schedule_decay))
        self.m_schedule = self.m_schedule * momentum_t
        args = (lr, wd, self.beta1, self.beta2, self.epsilon, self.rescale_grad,
                self.clip_gradient, t, self.m_schedule, momentum_t, momentum_t_1)
        wt, gt, mt, vt = weight._data, grad._data, state[0]._data, state[1]._data
        _push(lambda: K.nadam(wt, gt, mt, vt, *args), weight, grad, state)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011)::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += square(grad)
        weight += (grad / sqrt(history + eps) + weight * wd) * -lr
    """

    _sparse_updates = True  # (row_sparse gradients: neomx/optimizer/sparse.py)

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)  # history (float32)

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        args = (lr, wd, self.float_stable_eps, self.rescale_grad, self.clip_gradient)
        if grad.__class__ is not NDArray and grad.stype == "row_sparse":
            if wd != 0:  # (MXNet's sparse adagrad_update)
                raise MXNetError("Check failed: param.wd == 0.0f (" + f"{wd:g}" + " vs. 0) : "
                                 "sparse adagrad_update does not support wd.")
            rule_args = (lr, self.float_stable_eps, self.rescale_grad, self.clip_gradient)
            _push(lambda: _sparse.run(_sparse.adagrad_rows, weight, grad, [state], rule_args),
                  weight, grad, state)
            return
        if grad.__class__ is not NDArray:
            grad = _sparse.dense_grad(grad)
        wt, gt, ht = weight._data, grad._data, state._data
        _push(lambda: K.adagrad(wt, gt, ht, *args), weight, grad, state)


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``centered=False``, state ``(n,)``) or Graves' centered
    version (state ``(n, g, delta)``), with optional ``clip_weights``::

        grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * grad**2 + gamma1 * n
        weight -= lr * grad / sqrt(n + epsilon)                        # centered=False
        g = (1 - gamma1) * grad + gamma1 * g                            # centered=True
        delta = gamma2 * delta - lr * grad / sqrt(n - g**2 + epsilon)
        weight += delta
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context) for _ in range(n))

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        clip = self._kernel_clip()
        clip_w = self.clip_weights if self.clip_weights else None
        wt, gt = weight._data, grad._data
        st = [s._data for s in state]
        if not self.centered:
            args = (lr, wd, self.gamma1, self.epsilon, self.rescale_grad, clip, clip_w)
            fn = lambda: K.rmsprop(wt, gt, st[0], *args)
        else:
            args = (lr, wd, self.gamma1, self.gamma2, self.epsilon, self.rescale_grad, clip, clip_w)
            fn = lambda: K.rmspropalex(wt, gt, st[0], st[1], st[2], *args)
        _push(fn, weight, grad, state)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012); the learning rate is not used::

        grad = clip(grad * rescale_grad, clip_gradient)
        acc_grad = rho * acc_grad + (1 - rho) * grad**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    As in MXNet, the ``grad`` array itself is multiplied by ``rescale_grad``.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        args = (wd, self.rho, self.epsilon, self.rescale_grad, self.clip_gradient)
        wt, gt, at, dt = weight._data, grad._data, state[0]._data, state[1]._data
        _push(lambda: K.adadelta(wt, gt, at, dt, *args), weight, grad, state, grad_written=True)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al., 2013), ``learning_rate`` 0.1 by default::

        rescaled_grad = clip(grad * rescale_grad, clip_gradient)
        z += rescaled_grad - (sqrt(n + rescaled_grad**2) - sqrt(n)) * weight / learning_rate
        n += rescaled_grad**2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / learning_rate + wd) * (abs(z) > lamda1)
    """

    _sparse_updates = True  # (row_sparse gradients: neomx/optimizer/sparse.py)

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))  # z, n

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        self._update_count(index)
        wd, lr = self._get_wd(index), self._get_lr(index)
        args = (lr, wd, self.lamda1, self.beta, self.rescale_grad, self._kernel_clip())
        if grad.__class__ is not NDArray or weight.__class__ is not NDArray:  # (sparse)
            lazy = weight.stype == "row_sparse" and grad.stype == "row_sparse"
            _push(lambda: _sparse.run(K.ftrl, weight, grad, list(state), args, lazy),
                  weight, grad, state)
            return
        wt, gt, zt, nt = weight._data, grad._data, state[0]._data, state[1]._data
        _push(lambda: K.ftrl(wt, gt, zt, nt, *args), weight, grad, state)


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok, 2017); state ``(d, v, z)``."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(_zeros_like(weight) for _ in range(3))

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        args = (lr, wd, self.beta1, self.beta2, self.epsilon, t, self.rescale_grad,
                self._kernel_clip())
        wt, gt = weight._data, grad._data
        d, v, z = (s._data for s in state)
        _push(lambda: K.ftml(wt, gt, d, v, z, *args), weight, grad, state)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016); state
    ``(momentum or None, previous weight)``.

    As in MXNet 1.9.1, the momentum state is tested with ``if mom:``, so with momentum only
    one-element weights work (others raise the NDArray truth-value ValueError).
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return (None, weight.copy())
        return (_zeros_like(weight), weight.copy())

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        mom, previous = state
        if mom:  # MXNet's test (NDArray truthiness)
            mt = mom._data
        else:
            assert self.momentum == 0.0
            mt = None
        args = (lr, wd, self.lamda, self.rescale_grad, self.clip_gradient, self.momentum)
        wt, gt, pt = weight._data, grad._data, previous._data
        _push(lambda: K.dcasgd(wt, gt, mt, pt, *args), weight, grad, state)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics:
    ``weight += -lr/2 * (grad + wd * weight) + N(0, sqrt(lr))``."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray) and isinstance(grad, NDArray)
        grad = _fallback(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        args = (lr, wd, self.rescale_grad, self.clip_gradient)
        wt, gt = weight._data, grad._data
        _push(lambda: K.sgld(wt, gt, *args), weight, grad, state)


@register
class Test(Optimizer):
    """MXNet's test optimizer: ``weight += grad * rescale_grad``; the state copies the weight."""

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        grad = _fallback(weight, grad)
        wt, gt, st, rescale = weight._data, grad._data, state._data, self.rescale_grad

        def fn():
            wt.add_(gt.to(wt.device, wt.dtype) * rescale)
            st.copy_(wt)
        _push(fn, weight, grad, state)


# Defined in their own modules, named here as in MXNet (pickles say mxnet.optimizer.optimizer.X).
from .large_batch import LAMB, LARS, LBSGD  # noqa: E402
from .updater import Updater, get_updater  # noqa: E402
