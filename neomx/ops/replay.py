"""Gradients of a forward replayed under torch autograd: the kernel behind the internal
``_backward_<op>`` operators whose derivative is best left to torch (``compute`` must be the
differentiable torch form of the op's forward)."""
from __future__ import annotations

import torch


def replay_vjp(compute, xs, grads, wanted=None):
    """``d<outputs, grads>/d x`` for each ``x`` in ``xs``: ``compute(leaves)`` returns one tensor
    or a tuple (matched with ``grads`` in order). Inputs not ``wanted`` (a bool per input) and
    inputs no gradient reaches get zeros."""
    with torch.enable_grad():
        leaves = [x.detach().requires_grad_(True if wanted is None else bool(w))
                  for x, w in zip(xs, wanted if wanted is not None else xs)]
        ys = compute(leaves)
        ys = ys if isinstance(ys, (tuple, list)) else (ys,)
        pairs = [(y, g) for y, g in zip(ys, grads) if y.requires_grad]
        wrt = [x for x in leaves if x.requires_grad]
        got = iter(torch.autograd.grad([y for y, _ in pairs], wrt, [g for _, g in pairs],
                                       allow_unused=True) if wrt and pairs else ())
    res = []
    for x in leaves:
        v = next(got) if x.requires_grad and pairs else None
        res.append(torch.zeros_like(x) if v is None else v.detach())
    return res
