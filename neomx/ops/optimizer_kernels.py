"""Tensor arithmetic of the optimizer updates, shared by the update operators
(``optimizer_ops``: ``sgd_mom_update``, ``adam_update``, ...) and by ``mx.optimizer``'s rules
(``neomx/optimizer/kernels.py``), in MXNet 1.9.1's float32 operation order.

Only the tensor operations are here. The scalars arrive already formed by the caller, which
keeps its own convention: the operators round their parameters to float32 and combine them in
float32 (``1.f - lr*wd``), the Python-level rules combine Python floats (``1 - lr*wd`` in double,
rounded once when applied); see each caller. The orders that differ between the two (Nesterov
momentum, RMSProp's weight step, the unclipped SGD step) stay with the callers.

Each function updates its state arguments in place; a weight result is written to ``out``
(``out=weight``: in place) or, with ``out=None``, returned as a new tensor (the operators must
leave their ``weight`` input unchanged).
"""
from __future__ import annotations

import torch


def clip_(x: torch.Tensor, bound) -> torch.Tensor:
    """``clip(x, -bound, bound)`` in place on ``x`` when ``bound`` is not None and ``>= 0``
    (MXNet's operators: a negative bound means no clipping)."""
    if bound is not None and bound >= 0:
        x.clamp_(-bound, bound)
    return x


def rescaled(g: torch.Tensor, rescale, bound) -> torch.Tensor:
    """``clip(rescale * g)`` (a new tensor)."""
    return clip_(g * rescale, bound)


def grad_wd(g: torch.Tensor, w: torch.Tensor, rescale, wd, bound) -> torch.Tensor:
    """``clip(rescale * g + wd * w)`` (a new tensor): Adam's, RMSProp's and FTML's gradient."""
    return clip_(g * rescale + w * wd, bound)


def ema_(acc: torch.Tensor, x: torch.Tensor, decay, weight) -> torch.Tensor:
    """``acc = decay * acc + weight * x`` in place (first moments)."""
    return acc.mul_(decay).add_(x * weight)


def ema_sq_(acc: torch.Tensor, x: torch.Tensor, decay, weight) -> torch.Tensor:
    """``acc = decay * acc + (x * x) * weight`` in place (RMSProp's, FTML's, AdamW's order)."""
    return acc.mul_(decay).add_(x.square().mul_(weight))


def adam_var_(acc: torch.Tensor, x: torch.Tensor, decay, weight) -> torch.Tensor:
    """``acc = decay * acc + (weight * x) * x`` in place (Adam's and LAMB's order: MXNet's
    ``(1 - beta2) * g * g``)."""
    return acc.mul_(decay).add_(x.mul(weight).mul_(x))


def decayed(w: torch.Tensor, keep, step: torch.Tensor, out=None) -> torch.Tensor:
    """``keep * w - step`` (SGD and signSGD, ``keep = 1 - lr*wd``)."""
    return torch.mul(w, keep, out=out).sub_(step)


def momentum_(mom: torch.Tensor, w: torch.Tensor, momentum, decay, step) -> torch.Tensor:
    """``mom = momentum * mom - decay * w - step`` in place (SGD momentum, Signum)."""
    return mom.mul_(momentum).sub_(w * decay).sub_(step)


def signum_weight(w: torch.Tensor, mom: torch.Tensor, keep, lr, out=None) -> torch.Tensor:
    """``keep * w + lr * sign(mom)`` (Signum, ``keep = 1 - lr*wd_lh``)."""
    return torch.mul(w, keep, out=out).add_(torch.sign(mom).mul_(lr))


def adam(w, gr, mean, var, lr, beta1, beta2, one_minus_beta1, one_minus_beta2, epsilon,
         out=None):
    """Adam's moments of the gradient ``gr`` (in place) and ``w - lr * mean / (sqrt(var) +
    epsilon)``."""
    ema_(mean, gr, beta1, one_minus_beta1)
    adam_var_(var, gr, beta2, one_minus_beta2)
    return torch.sub(w, (mean * lr).div_(var.sqrt().add_(epsilon)), out=out)


def ftrl(w, gr, z, n, lr, wd, lamda1, beta, out=None):
    """FTRL-proximal on the gradient ``gr``: ``z += gr - (sqrt(n + gr²) - sqrt(n)) * w / lr``,
    ``n += gr²`` (in place); the weight ``(sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)``
    where ``|z| > lamda1``, else 0."""
    g2 = gr.square()
    z.add_(gr - ((n + g2).sqrt_() - n.sqrt()).mul_(w).div_(lr))
    n.add_(g2)
    num = torch.sign(z).mul_(lamda1).sub_(z)
    den = n.sqrt().add_(beta).div_(lr).add_(wd)
    res = num.div_(den).mul_(z.abs() > lamda1)
    return res if out is None else out.copy_(res)


def ftml(w, gr, d, v, z, beta1, beta2, one_minus_beta1, one_minus_beta2, bias2, epsilon,
         d_scale, out=None):
    """FTML on the gradient ``gr`` (used up): ``v`` EMA of ``gr²``; ``d_t = (sqrt(v / bias2) +
    epsilon) * d_scale`` (``bias2 = 1 - beta2**t``, ``d_scale = (1 - beta1**t) / lr``);
    ``z = beta1*z + (1-beta1)*gr - (d_t - beta1*d) * w``; ``d = d_t``; the weight ``-z / d_t``."""
    ema_sq_(v, gr, beta2, one_minus_beta2)
    d_t = (v / bias2).sqrt_().add_(epsilon).mul_(d_scale)
    z.mul_(beta1).add_(gr.mul_(one_minus_beta1)).sub_((d_t - d * beta1).mul_(w))
    d.copy_(d_t)
    res = -z / d_t
    return res if out is None else out.copy_(res)
