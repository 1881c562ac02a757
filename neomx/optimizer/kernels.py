"""Update rules on torch tensors, in place: one function per MXNet update operator
(``sgd_update``, ``adam_update``, ...) and per Python-level MXNet update (AdaGrad, AdaDelta...).

Each follows the float32 operation order of MXNet 1.9.1's kernel, so results agree to rounding.
``clip`` is ``None`` for no clipping; the ``*_update`` operators ignore a negative bound (MXNet
passes -1 for "off"). Arguments are weight first, then gradient, then states, then scalars.

The tensor arithmetic these rules have in common with the update operators is
``neomx.ops.optimizer_kernels`` (one implementation for both). What stays here differs from the
operators (``neomx/ops/optimizer_ops.py``) and is kept so, as each is pinned by golden bits:

* scalars: these rules combine Python floats (``1 - lr*wd``, ``(1 - momentum) * wd`` in double,
  rounded once when applied to a tensor); the operators round each parameter to float32 first
  and combine in float32 (``1.f - lr*wd``). Adam's ``1 - beta`` is the one exception: float32
  arithmetic for float32 weights (``_one_minus``), as the operator.
* the unclipped gradient step is ``g * (lr * rescale)`` here, ``(g * rescale) * lr`` in the
  operators;
* Nesterov momentum and RMSProp (plain and centered) compute in other orders (see ``nag_mom``,
  ``rmsprop``);
* the rules after ``ftml`` are MXNet's Python-level updates, which have no operator.
"""
from __future__ import annotations

import numpy
import torch

from ..ops import optimizer_kernels as _K


_clip = _K.clip_  # MXNet's operator clip: ``clip(x, bound)`` when ``bound >= 0``, in place on x


def _pyclip(x: torch.Tensor, clip) -> torch.Tensor:
    """``mx.nd.clip(x, -clip, clip)`` as the Python-level optimizers call it (any non-None)."""
    return x if clip is None else torch.clamp(x, -clip, clip)


def _scaled(g: torch.Tensor, w: torch.Tensor, rescale, clip, lr) -> torch.Tensor:
    """``lr * clip(rescale * g)`` (a new tensor in ``w``'s dtype and device)."""
    g = g.to(w.device, w.dtype)
    if clip is not None and clip >= 0:
        return _K.rescaled(g, rescale, clip).mul_(lr)
    return g * (lr * rescale)  # (the operators: (g * rescale) * lr)


# --- the update operators ------------------------------------------------------------------------
def sgd(w, g, lr, wd, rescale, clip):
    """``w = (1 - lr*wd) * w - lr * clip(rescale * g)``."""
    _K.decayed(w, 1.0 - lr * wd, _scaled(g, w, rescale, clip, lr), out=w)


def sgd_mom(w, g, mom, lr, wd, momentum, rescale, clip):
    """``mom = momentum*mom - lr*wd*w - lr*clip(rescale*g)``; ``w += mom``."""
    _K.momentum_(mom, w, momentum, lr * wd, _scaled(g, w, rescale, clip, lr))
    w.add_(mom)


def mp_sgd(w, g, w32, lr, wd, rescale, clip):
    """``sgd`` on the float32 master copy ``w32``, then ``w = w32`` (cast)."""
    sgd(w32, g.float(), lr, wd, rescale, clip)
    w.copy_(w32)


def mp_sgd_mom(w, g, mom, w32, lr, wd, momentum, rescale, clip):
    sgd_mom(w32, g.float(), mom, lr, wd, momentum, rescale, clip)
    w.copy_(w32)


def nag_mom(w, g, mom, lr, wd, momentum, rescale, clip):
    """MXNet's in-place ``nag_mom_update`` (``out=weight``), with ``s = lr*clip(rescale*g)``::

        m' = momentum*mom - lr*wd*w - s
        w_new = w + momentum*m' - lr*wd*w - s
        mom = momentum*mom - lr*wd*w_new - s

    The stored momentum sees the *updated* weight in its decay term (the kernel's output
    aliases its weight input); with ``wd = 0`` this is plain Nesterov momentum. (The operator
    ``nag_mom_update`` computes the same update in another float32 order, kept as it is.)
    """
    step = _scaled(g, w, rescale, clip, lr)
    decay = w * (lr * wd)
    m_new = (mom * momentum).sub_(decay).sub_(step)
    w.add_(m_new.mul_(momentum)).sub_(decay).sub_(step)
    mom.mul_(momentum).sub_(w * (lr * wd)).sub_(step)


def mp_nag_mom(w, g, mom, w32, lr, wd, momentum, rescale, clip):
    nag_mom(w32, g.float(), mom, lr, wd, momentum, rescale, clip)
    w.copy_(w32)


def _grad_wd(g, w, rescale, wd, clip):
    """``clip(rescale * g + wd * w)`` (a new tensor)."""
    return _K.grad_wd(g.to(w.device, w.dtype), w, rescale, wd, clip)


def _one_minus(beta, dtype):
    """``1 - beta`` as MXNet's C++ kernels compute it for float32 arrays (``1.f - beta``);
    other types keep the exact difference."""
    if dtype is torch.float32:
        return float(numpy.float32(1.0) - numpy.float32(beta))
    return 1.0 - beta


def adam(w, g, mean, var, lr, wd, beta1, beta2, epsilon, rescale, clip):
    """``g = clip(rescale*g + wd*w)``; EMAs of ``g`` and ``g²``;
    ``w -= lr * mean / (sqrt(var) + epsilon)`` (``lr`` already bias-corrected)."""
    gg = _grad_wd(g, w, rescale, wd, clip)
    # MXNet's kernel takes 1 - beta in the weight's float type (1.f - 0.999f is 9.99987e-4, not
    # 1e-3) and multiplies (1 - beta2) * g * g left to right
    c1, c2 = _one_minus(beta1, w.dtype), _one_minus(beta2, w.dtype)
    _K.adam(w, gg, mean, var, lr, beta1, beta2, c1, c2, epsilon, out=w)


def rmsprop(w, g, n, lr, wd, gamma1, epsilon, rescale, clip, clip_weights):
    """Tieleman & Hinton: ``n = (1-g1)*g² + g1*n``; ``w -= lr * g / sqrt(n + epsilon)``.
    (``1 - g1`` in double, and ``(g / sqrt(n + eps)) * lr``: the operator ``rmsprop_update`` has
    float32 ``1 - g1`` and ``(g * lr) / sqrt(n + eps)``; both kept.)"""
    gg = _grad_wd(g, w, rescale, wd, clip)
    _K.ema_sq_(n, gg, gamma1, 1.0 - gamma1)
    w.sub_(gg.div_(n.add(epsilon).sqrt_()).mul_(lr))
    _clip(w, clip_weights)


def rmspropalex(w, g, n, gbar, delta, lr, wd, gamma1, gamma2, epsilon, rescale, clip, clip_weights):
    """Graves' centered RMSProp:
    ``delta = g2*delta - lr * g / sqrt(n - gbar² + epsilon)``; ``w += delta``."""
    gg = _grad_wd(g, w, rescale, wd, clip)
    _K.ema_sq_(n, gg, gamma1, 1.0 - gamma1)
    _K.ema_(gbar, gg, gamma1, 1.0 - gamma1)
    delta.mul_(gamma2).sub_(gg.div_((n - gbar.square()).add_(epsilon).sqrt_()).mul_(lr))
    w.add_(delta)
    _clip(w, clip_weights)


def ftrl(w, g, z, n, lr, wd, lamda1, beta, rescale, clip):
    """FTRL-proximal (McMahan et al.): ``z += g - (sqrt(n + g²) - sqrt(n)) * w / lr``;
    ``n += g²``; ``w = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``."""
    _K.ftrl(w, _K.rescaled(g.to(w.device, w.dtype), rescale, clip), z, n, lr, wd, lamda1, beta,
            out=w)


def signsgd(w, g, lr, wd):
    """``w = (1 - lr*wd) * w - lr * sign(g)`` (rescale and clip have no effect)."""
    _K.decayed(w, 1.0 - lr * wd, torch.sign(g.to(w.device, w.dtype)).mul_(lr), out=w)


def signum(w, g, mom, lr, wd, momentum, rescale, clip, wd_lh):
    """``mom = momentum*mom - (1-momentum)*(wd*w + clip(rescale*g))``;
    ``w = (1 - lr*wd_lh) * w + lr * sign(mom)``."""
    step = _scaled(g, w, rescale, clip, 1.0 - momentum)
    _K.momentum_(mom, w, momentum, (1.0 - momentum) * wd, step)
    _K.signum_weight(w, mom, 1.0 - lr * wd_lh, lr, out=w)


def ftml(w, g, d, v, z, lr, wd, beta1, beta2, epsilon, t, rescale, clip):
    """FTML (Zheng & Kwok, 2017) with ``d``, ``v``, ``z`` states at step ``t``."""
    _K.ftml(w, _grad_wd(g, w, rescale, wd, clip), d, v, z, beta1, beta2, 1.0 - beta1,
            1.0 - beta2, 1.0 - beta2 ** t, epsilon, (1.0 - beta1 ** t) / lr, out=w)


# --- MXNet's Python-level updates ---------------------------------------------------------------
def adagrad(w, g, history, lr, wd, eps, rescale, clip):
    """``history += g²``; ``w += (g / sqrt(history + eps) + w*wd) * -lr``."""
    gg = _pyclip(g.to(w.device, w.dtype) * rescale, clip)
    history.add_(gg.square())
    div = gg / (history + eps).sqrt_()
    w.add_((div + w * wd).mul_(-lr))


def adadelta(w, g, acc_g, acc_delta, wd, rho, epsilon, rescale, clip):
    """AdaDelta (no learning rate). As in MXNet, ``g`` itself is multiplied by ``rescale``."""
    g.mul_(rescale)
    gg = _pyclip(g.to(w.device, w.dtype), clip)
    acc_g.mul_(rho).add_(gg.mul(1.0 - rho).mul_(gg))
    cur = (acc_delta + epsilon).sqrt_().div_((acc_g + epsilon).sqrt_()).mul_(gg)
    acc_delta.mul_(rho).add_(cur.mul(1.0 - rho).mul_(cur))
    w.sub_(cur.add_(w * wd))


def adamax(w, g, m, u, lr, wd, beta1, beta2, rescale, clip):
    """``m = b1*m + (1-b1)*g``; ``u = max(b2*u, |g|)``; ``w -= lr * m / u``."""
    gg = _pyclip(g.to(w.device, w.dtype) * rescale + wd * w, clip)
    m.mul_(beta1).add_(gg * (1.0 - beta1))
    torch.maximum(u * beta2, gg.abs(), out=u)
    w.sub_((m * lr).div_(u))


def nadam(w, g, m, v, lr, wd, beta1, beta2, epsilon, rescale, clip, t, m_schedule,
          momentum_t, momentum_t_1):
    """Nesterov Adam; ``m_schedule`` is the running product of the momentum schedule."""
    gg = _pyclip(g.to(w.device, w.dtype) * rescale + wd * w, clip)
    m.mul_(beta1).add_(gg * (1.0 - beta1))
    v.mul_(beta2).add_(gg.mul(1.0 - beta2).mul_(gg))
    grad_prime = gg / (1.0 - m_schedule)
    m_prime = m / (1.0 - m_schedule * momentum_t_1)
    v_prime = v / (1.0 - pow(beta2, t))
    m_bar = grad_prime.mul_(1.0 - momentum_t).add_(m_prime.mul_(momentum_t_1))
    w.sub_((m_bar * lr).div_(v_prime.sqrt_().add_(epsilon)))


def dcasgd(w, g, mom, prev, lr, wd, lamda, rescale, clip, momentum):
    """Delay-compensated SGD; ``mom`` is None without momentum."""
    gg = _pyclip(g.to(w.device, w.dtype) * rescale, clip)
    step = (gg + w * wd + (gg * lamda).mul_(gg).mul_(w - prev)).mul_(-lr)
    if mom is not None:
        mom.mul_(momentum).add_(step)
        step = mom
    prev.copy_(w)
    w.add_(step)


def sgld(w, g, lr, wd, rescale, clip):
    """Langevin dynamics: ``w += -lr/2 * (g + wd*w) + N(0, sqrt(lr))``."""
    gg = _pyclip(g.to(w.device, w.dtype) * rescale, clip)
    w.add_((gg + w * wd).mul_(-lr / 2))
    w.add_(torch.randn_like(w).mul_(lr ** 0.5))
