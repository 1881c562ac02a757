"""Random sampling and array creation operators (no inputs; they run on the op's device)."""
from __future__ import annotations

import torch

from ..base import dtype_torch
from .registry import OpDef, Param, register


def _creation_infer_shape(p, ins, outs):
    # MXNet 1.x's legacy shapes: () is an unknown shape and 0 an unknown dimension, so
    # ``mx.sym.zeros(())`` cannot be bound (as in MXNet 1.9.1)
    shape = tuple(p.shape)
    return ins, [shape if shape else None]


def _creation_infer_type(p, ins, outs):
    import numpy as np
    return ins, [p.dtype or np.float32]


_SHAPE = Param("shape", "shape", (), "Shape of the output.")
_CTX = Param("ctx", "str", "", "Context of output, in format [cpu|gpu|cpu_pinned](n).")
_DTYPE = Param("dtype", "dtype", None, "Output data type (float32 when None).", optional=True)


def _sampler(fill):
    def forward(p, ins, oc):
        out = torch.empty(tuple(p.shape), dtype=dtype_torch(p.dtype), device=oc.device)
        return fill(out, p)
    return forward


for _name, _params, _fill, _aliases, _doc in (
        ("_random_uniform", (Param("low", "float", 0.0, "Lower bound of the distribution."),
                             Param("high", "float", 1.0, "Upper bound of the distribution.")),
         lambda t, p: t.uniform_(p.low, p.high), ("uniform", "random_uniform"),
         "Draw samples from a uniform distribution on [low, high)."),
        ("_random_normal", (Param("loc", "float", 0.0, "Mean of the distribution."),
                            Param("scale", "float", 1.0, "Standard deviation of the distribution.")),
         lambda t, p: t.normal_(p.loc, p.scale), ("normal", "random_normal"),
         "Draw random samples from a normal (Gaussian) distribution."),
        ("_zeros", (), lambda t, p: t.zero_(), (), "An array of zeros."),
        ("_ones", (), lambda t, p: t.fill_(1), (), "An array of ones."),
        ("_full", (Param("value", "float", 0.0, "Value to fill."),), lambda t, p: t.fill_(p.value), (),
         "An array filled with ``value``."),
):
    # MXNet's parameter order (positional calls): _full lists its value last
    _all = (_SHAPE, _CTX, _DTYPE) + _params if _name == "_full" else _params + (_SHAPE, _CTX, _DTYPE)
    register(OpDef(_name, _sampler(_fill), _creation_infer_shape, params=_all,
                   inputs=(), infer_type=_creation_infer_type, aliases=_aliases, doc=_doc,
                   deterministic=not _name.startswith("_random"),
                   gradient=lambda F, p, ins, outs, ograds: []))
