"""``mx.random``: sampling into NDArrays and seeding."""
from __future__ import annotations

import torch

from .context import Context
from .ndarray.random import (exponential, gamma, generalized_negative_binomial,  # noqa: F401
                             multinomial, negative_binomial, normal, poisson, randint, randn,
                             shuffle, uniform)

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"]


def seed(seed_state: int, ctx="all"):
    """Seed the generators of every device (``ctx='all'``) or of one context.

    Later draws are repeatable; the values differ from MXNet's (different generators).
    """
    s = int(seed_state)
    if ctx == "all":
        torch.manual_seed(s)  # seeds the CPU and every CUDA generator
        return
    ctx = ctx if isinstance(ctx, Context) else Context(str(ctx))
    if ctx.device_typeid == 2:
        ctx.torch_device  # raises MXNetError when the GPU is absent
        torch.cuda.default_generators[ctx.device_id].manual_seed(s)
    else:
        torch.default_generator.manual_seed(s)
