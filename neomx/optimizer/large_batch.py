"""Large-batch optimizers of MXNet 1.9.1: ``LARS``, ``LBSGD`` and ``LAMB``.

They are written, as in MXNet, on the update operators of the op table (``multi_sum_sq``,
``multi_lars``, ``preloaded_multi_sgd_*``, ``sgd_*update``, ``lamb_update_phase1/2``,
``multi_lamb_update`` ...), so each step computes what MXNet's does. The classes live in
``neomx.optimizer.optimizer`` (re-exported there, ``__module__`` set) because pickled
optimizers name them ``mxnet.optimizer.optimizer.<Class>``.
"""
from __future__ import annotations

import logging
import math
import os

import numpy

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, _zeros_like, register

__all__ = ["LARS", "LBSGD", "LAMB"]

_NO_LARS = ("gamma", "beta", "bias")  # names whose learning rate LARS leaves unscaled


def _flatten(nested):
    return [x for group in nested for x in group]


@register
class LARS(Optimizer):
    """LARS, layer-wise adaptive rate scaling (You et al., 2017, arXiv:1708.03888).

    SGD with momentum and weight decay whose learning rate is scaled per layer, except for
    parameters whose name ends in ``gamma``, ``beta`` or ``bias``::

        w_norm = L2norm(weight); g_norm = L2norm(rescale_grad * grad)
        lr_layer = lr * eta * w_norm / (g_norm + wd * w_norm + eps)  if both norms > 0
                   lr                                                  otherwise

    Parameters
    ----------
    momentum : float, optional
    lazy_update : bool, optional
        Only for sparse arrays (neomx has none).
    eta : float, default 0.001
        The LARS coefficient.
    eps : float, default 0
        Added to the denominator.
    momentum_correction : bool, default True
        Scale the momentum by ``lr / previous lr`` when a scheduler changes the rate (Goyal et
        al., 2017).

    Examples
    --------
    >>> import neomx as mx
    >>> opt = mx.optimizer.LARS(learning_rate=0.1, eta=0.5)
    >>> w, g = mx.nd.ones((4,)), mx.nd.ones((4,))
    >>> opt.update([0], [w], [g], [opt.create_state(0, w)])
    >>> w.asnumpy()  # lr * eta * |w| / |g| = 0.05
    array([0.95, 0.95, 0.95, 0.95], dtype=float32)
    """

    _sparse_updates = True  # (row_sparse gradients: lazy sgd(_mom)_update, one at a time)

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        """Learning rates of ``indices``; remembers the previous base rate (momentum
        correction)."""
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._mults(indices, lr, self.lr_mult, "lr_mult")

    def set_wd_mult(self, args_wd_mult):
        """As the base class, except that only names ending in ``_weight`` keep weight decay."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith("_weight"):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype(numpy.float32)
            return (self.create_state(index, master), master)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            import warnings
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "SGD optimizer")
        return self.create_state(index, weight)

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _l2norm(self, v, rescale=False):
        """The L2 norm of ``v`` (times ``rescale_grad`` when ``rescale``), a float."""
        v = v.astype("float32")
        if rescale:
            v *= self.rescale_grad
        return nd.norm(v).asnumpy()[0]

    def _get_lars(self, i, weight, g, lr, wd):
        """``lr`` scaled for index ``i`` (unscaled for gamma/beta/bias)."""
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if name.endswith(_NO_LARS):
            return lr
        w_norm = self._l2norm(weight)
        g_norm = self._l2norm(g, rescale=True)
        lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps) \
            if w_norm > 0.0 and g_norm > 0.0 else 1.0
        return lars * lr

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = (self.momentum * (self.cur_lr / self.last_lr)) \
                if (self.momentum_correction and self.last_lr != 0) else self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if any(w.stype != "default" or g.stype != "default" for w, g in zip(weights, grads)):
            # sparse arrays go one at a time, as in MXNet: sgd(_mom)_update, lazily on a
            # row_sparse gradient's rows with lazy_update
            for i, w, g, s, lr, wd in zip(indices, weights, grads, states, lrs, wds):
                lr = self._get_lars(i, w, g, lr, wd)
                if not multi_precision:
                    if s is not None:
                        nd.sgd_mom_update(w, g, s, out=w, lazy_update=self.lazy_update, lr=lr,
                                          wd=wd, **kwargs)
                    else:
                        nd.sgd_update(w, g, out=w, lazy_update=self.lazy_update, lr=lr, wd=wd,
                                      **kwargs)
                elif s[0] is not None:
                    nd.mp_sgd_mom_update(w, g, s[0], s[1], out=w, lr=lr, wd=wd, **kwargs)
                else:
                    nd.mp_sgd_update(w, g, s[1], out=w, lr=lr, wd=wd, **kwargs)
            return
        # LARS-scaled weights first, then gamma/beta/bias, as MXNet orders them
        names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
        lars_idx = [i for i, n in enumerate(names) if not n.endswith(_NO_LARS)]
        full_idx = lars_idx + [i for i, n in enumerate(names) if n.endswith(_NO_LARS)]
        nb_lars = len(lars_idx)
        ctx = weights[0].context
        new_lrs = nd.array([lrs[i] for i in full_idx], ctx=ctx, dtype="float32")
        new_wds = nd.array([wds[i] for i in full_idx], ctx=ctx, dtype="float32")
        new_weights = [weights[i] for i in full_idx]
        new_grads = [grads[i] for i in full_idx]
        new_states = [states[i] for i in full_idx]
        if nb_lars > 0:
            w_sum_sq = nd.multi_sum_sq(*new_weights[:nb_lars], num_arrays=nb_lars)
            g_sum_sq = nd.multi_sum_sq(*new_grads[:nb_lars], num_arrays=nb_lars)
            nd.multi_lars(new_lrs[:nb_lars], w_sum_sq, g_sum_sq, new_wds[:nb_lars],
                          eta=self.eta, eps=self.eps, rescale_grad=self.rescale_grad,
                          out=new_lrs[:nb_lars])
        for start in range(0, len(indices), self.aggregate_num or len(indices)):
            sl = slice(start, start + (self.aggregate_num or len(indices)))
            ws, gs, ss = new_weights[sl], new_grads[sl], new_states[sl]
            tail = [new_lrs[sl], new_wds[sl]]
            if not multi_precision:
                if self.momentum > 0:
                    nd.preloaded_multi_sgd_mom_update(*(_flatten(zip(ws, gs, ss)) + tail),
                                                      out=ws, num_weights=len(ws), **kwargs)
                else:
                    nd.preloaded_multi_sgd_update(*(_flatten(zip(ws, gs)) + tail),
                                                  out=ws, num_weights=len(ws), **kwargs)
            elif self.momentum > 0:
                moms, masters = zip(*ss)
                nd.preloaded_multi_mp_sgd_mom_update(
                    *(_flatten(zip(ws, gs, moms, masters)) + tail),
                    out=ws, num_weights=len(ws), **kwargs)
            else:
                masters = [s[1] for s in ss]
                nd.preloaded_multi_mp_sgd_update(*(_flatten(zip(ws, gs, masters)) + tail),
                                                 out=ws, num_weights=len(ws), **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == numpy.float16)


@register
class LBSGD(Optimizer):
    """Large-batch SGD with momentum, weight decay and a warm-up of the learning rate.

    Gradients are accumulated over ``batch_scale`` updates (a large batch emulated by small
    ones); every ``batch_scale``-th update applies SGD with their mean and the learning rate
    times a multiplier: the warm-up schedule ``warmup_strategy`` ('linear', 'power2', 'sqrt':
    from 1 to ``batch_scale`` over ``warmup_epochs * updates_per_epoch`` updates) or, with
    'lars', the LARS ratio ``sqrt(|w|^2 / (|g|^2 + wd |w|^2))`` clipped to [0.01, 100]. The
    other updates leave the weight unchanged.

    Parameters
    ----------
    momentum : float, optional
    multi_precision : bool, optional
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}, default 'linear'
    warmup_epochs : int, default 5
    batch_scale : int, default 1
    updates_per_epoch : int, default 32
    begin_epoch : int, default 0
    num_epochs : int, default 60
    """

    _sparse_updates = True  # (row_sparse gradients: sgd(_mom)_update's lazy update)

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        logging.info("Running Large-Batch SGD Algorithm")
        logging.info("(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, "
                     "updates_per_epoch=%d)", batch_scale, warmup_epochs, warmup_strategy,
                     updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        momentum = None
        if self.multi_precision and weight.dtype == numpy.float16:
            master = nd.array(weight, ctx=weight.context, dtype=numpy.float32)
            if self.momentum != 0.0:
                momentum = _zeros_like(weight, numpy.float32)
            return (momentum, master)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            import warnings
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "SGD optimizer")
        if self.momentum != 0.0:
            momentum = _zeros_like(weight)
        return momentum

    def _get_lbmult(self, nup):
        """The warm-up multiplier after ``nup`` updates."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        strategy = self.warmup_strategy
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight, g, wd):
        """The LARS multiplier, clipped to [0.01, 100]."""
        weight2 = self._l2norm(weight)
        grad2 = self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _l2norm(self, v):
        """The squared L2 norm (MXNet's name)."""
        return nd.multiply(v, v).asnumpy().sum()

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]["cum_grad"] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        """Add ``grad`` to index's accumulated gradient; counts the accumulated updates."""
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad["num_cums"] > 0:
            cum_grad = cgrad["cum_grad"] + grad
            num_cums = cgrad["num_cums"] + 1
        else:
            cum_grad = grad
            num_cums = self.init_updates + 1
        cgrad = {"cum_grad": cum_grad, "num_cums": num_cums}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad["num_cums"] % self.batch_scale != 0:
            nd.sgd_update(weight, grad, out=weight, lr=0.0, wd=wd)  # (leaves the weight)
            return
        grad = cgrad["cum_grad"] / self.batch_scale
        if self.warmup_strategy == "lars":
            lbmult = self._get_lars(weight, grad, wd)
        else:
            lbmult = self._get_lbmult(cgrad["num_cums"])
        lr = lr * lbmult
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if not isinstance(state, (list, tuple)):
            if state is not None:
                nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                                 **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)
        self._reset_cum_gradient(index)


@register
class LAMB(Optimizer):
    """LAMB, layer-wise adaptive moments for large batches (You et al., 2019)::

        g = clip(rescale_grad * grad); m = beta1 m + (1-beta1) g; v = beta2 v + (1-beta2) g^2
        r = m_hat / (sqrt(v_hat) + epsilon) + wd * weight       (bias-corrected by step t)
        r1 = clip(|weight|, lower_bound, upper_bound); r2 = |r|
        weight -= lr * (r1 / r2 if r1 and r2 else 1) * r

    A list of indices (the Updater's aggregated call, ``aggregate_num`` 45) goes through the
    fused ``multi_lamb_update``; one index through ``lamb_update_phase1``/``phase2``.
    ``multi_precision`` keeps a float32 master copy: state ``(master, (mean, var))``.

    Examples
    --------
    >>> import neomx as mx
    >>> opt = mx.optimizer.LAMB(learning_rate=0.1)
    >>> w, g = mx.nd.ones((4,)), mx.nd.ones((4,))
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([0.9, 0.9, 0.9, 0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE",
                                                          "45"))))

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, var

    def _bounds(self):
        out = {}
        if self.lower_bound:
            out["lower_bound"] = self.lower_bound
        if self.upper_bound:
            out["upper_bound"] = self.upper_bound
        return out

    def _update_one(self, index, weight, grad, state, kwargs, multi_precision):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = dict(kwargs, t=self._index_update_count[index])
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if multi_precision:
            weight32, (mean, var) = state
            g = nd.mp_lamb_update_phase1(weight, grad, mean, var, weight32, wd=wd, **kwargs)
            nd.mp_lamb_update_phase2(weight, g, weight32.norm(), g.norm(), weight32, lr=lr,
                                     out=weight, **self._bounds())
        else:
            mean, var = state
            g = nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
            nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight,
                                  **self._bounds())

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad}
        if self.aggregate_num <= 1 or not isinstance(index, (tuple, list)):
            if isinstance(index, (tuple, list)):
                assert len(index) == self.aggregate_num
                index, weight, grad, state = index[0], weight[0], grad[0], state[0]
            self._update_one(index, weight, grad, state, kwargs, multi_precision)
            return
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        kwargs.update(self._bounds())
        step_count, lrs, wds = [], [], []
        for i, w_i, g_i in zip(index, weight, grad):
            assert isinstance(w_i, NDArray)
            assert isinstance(g_i, NDArray)
            self._update_count(i)
            step_count.append(self._index_update_count[i])
            lrs.append(self._get_lr(i))
            wds.append(self._get_wd(i))
        for sidx in range(0, len(weight), self.aggregate_num):
            sl = slice(sidx, min(sidx + self.aggregate_num, len(weight)))
            if not multi_precision:
                mean, var = list(zip(*state[sl]))
                nd.contrib.multi_lamb_update(weight[sl], grad[sl], mean, var, out=weight[sl],
                                             step_count=step_count[sl], lrs=lrs[sl],
                                             wds=wds[sl], **kwargs)
            else:
                self._multi_mp_lamb(weight[sl], grad[sl], state[sl], step_count[sl], lrs[sl],
                                    wds[sl], kwargs)

    def _multi_mp_lamb(self, weights, grads, states, steps, lrs, wds, kwargs):
        """MXNet's fused ``multi_mp_lamb_update``, tensor by tensor: the step is applied to the
        float32 master copy, which the weight then copies. (The single-index path's
        ``mp_lamb_update_phase2`` writes only the weight and leaves the master copy, as in
        MXNet 1.9.1: the two paths differ from the second step on.)"""
        bounds = {k: kwargs[k] for k in ("lower_bound", "upper_bound") if k in kwargs}
        phase1 = {k: v for k, v in kwargs.items() if k not in bounds}
        for w, g, (w32, (mean, var)), t, lr, wd in zip(weights, grads, states, steps, lrs, wds):
            r = nd.mp_lamb_update_phase1(w, g, mean, var, w32, wd=wd, t=t, **phase1)
            nd.lamb_update_phase2(w32, r, w32.norm(), r.norm(), lr=lr, out=w32, **bounds)
            nd.cast(w32, dtype=w.dtype, out=w)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == numpy.float16)


for _cls in (LARS, LBSGD, LAMB):  # pickles name them mxnet.optimizer.optimizer.<Class>
    _cls.__module__ = "neomx.optimizer.optimizer"
