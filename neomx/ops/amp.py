"""Mixed-precision (AMP) operators as MXNet 1.9.1 defines them: ``all_finite`` and
``multi_all_finite`` (the loss scaler's overflow check), ``amp_cast`` and ``amp_multicast``."""
from __future__ import annotations

import numpy as np
import torch

from ..base import bf16_truncate, bfloat16, dtype_np, dtype_torch
from .optimizer_ops import _arrays, _fixed_out, _float_out
from .registry import OpDef, Param, register, same_shape


# --- overflow checks ---------------------------------------------------------------------------
def _all_finite(ins):
    ok = all(bool(torch.isfinite(t).all()) for t in ins)
    dev = ins[0].device if ins else None
    return torch.full((1,), 1.0 if ok else 0.0, dtype=torch.float32, device=dev)


_INIT_OUTPUT = Param("init_output", "bool", True, "Initialize output to 1. (neomx always "
                     "returns a fresh result: False is accepted and computes the same.)")
register(OpDef("all_finite", lambda p, ins, oc: _all_finite(ins), _fixed_out(lambda p: (1,)),
               infer_type=_float_out, params=(_INIT_OUTPUT,),
               doc="1.0 (float32, shape (1,)) when every element of ``data`` is finite, else 0.0."))
register(OpDef("multi_all_finite", lambda p, ins, oc: _all_finite(ins), _fixed_out(lambda p: (1,)),
               infer_type=_float_out, inputs=_arrays, key_var_num_args="num_arrays",
               params=(Param("num_arrays", "int", 1, "Number of arrays."), _INIT_OUTPUT),
               doc="1.0 (float32, shape (1,)) when every element of every input is finite."))



# --- casts -------------------------------------------------------------------------------------------
# MXNet casts only between the low-precision floats (float16, bfloat16) and float32: other inputs
# (float64, integers) pass through unchanged. Cast to an integer type, float32 rounds to nearest
# (MXNet's CPU kernel for float32 is MKL-DNN's reorder) while float16 truncates (the plain kernel).
# float32 -> bfloat16 is MKL-DNN's reorder too: round to nearest even, bfloat16 denormals flushed
# to zero; float16 -> bfloat16 is mshadow's conversion (truncation).
_AMP_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), bfloat16)
_AMP_TORCH_FLOATS = (torch.float16, torch.float32, torch.bfloat16)
_AMP_DTYPES = tuple(dtype_np(d) for d in ("bfloat16", "float16", "float32", "float64", "int32",
                                          "int64", "int8", "uint8"))
_BF16_TINY = float(torch.finfo(torch.bfloat16).tiny)


def _amp_cast_type(p, ins, outs):
    t = ins[0]
    if t is None:
        return ins, outs
    return ins, [p.dtype if np.dtype(t) in _AMP_FLOATS else dtype_np(t)]


def _amp_cast(x, dtype):
    if x.dtype not in _AMP_TORCH_FLOATS or x.dtype == dtype:
        return x.clone()
    if dtype is torch.bfloat16:
        if x.dtype is torch.float16:
            return bf16_truncate(x)
        y = x.to(dtype)
        y = torch.where(y.abs() < _BF16_TINY, torch.zeros_like(y).copysign(y), y)
        return torch.where(torch.isnan(x), bf16_truncate(x), y)  # quiet NaN 0x7FC0, as MXNet
    if not dtype.is_floating_point and x.dtype == torch.float32:
        return torch.round(x).to(dtype)
    return x.to(dtype)


register(OpDef(
    "amp_cast", lambda p, ins, oc: _amp_cast(ins[0], dtype_torch(p.dtype)), same_shape,
    params=(Param("dtype", "dtype", doc="Output data type.", choices=_AMP_DTYPES),),
    infer_type=_amp_cast_type,
    gradient=lambda F, p, ins, outs, ograds: [F.amp_cast(ograds[0], dtype=ins[0].dtype)],
    doc="Cast between float16/bfloat16 and float32 used by AMP; other input types pass through."))


def _multicast_target(p, types):
    """MXNet's rule: widest -- float32 if any input is float32, else the first input's type;
    narrowest (``cast_narrow``) -- the last float16/bfloat16 input's type, else float32.
    None when the inputs' types leave nothing to cast."""
    types = [np.dtype(t) for t in types]
    if not any(t in _AMP_FLOATS for t in types):
        return None
    if p.cast_narrow:
        low = [t for t in types if t in (np.dtype(np.float16), bfloat16)]
        return low[-1] if low else np.dtype(np.float32)
    if np.dtype(np.float32) in types:
        return np.dtype(np.float32)
    return types[0] if types[0] in _AMP_FLOATS else None


def _amp_multicast_type(p, ins, outs):
    if any(t is None for t in ins):
        return ins, outs
    target = _multicast_target(p, ins)
    return ins, [dtype_np(target) if target is not None and np.dtype(t) in _AMP_FLOATS
                 else dtype_np(t) for t in ins]


def _amp_multicast(p, ins, oc):
    target = _multicast_target(p, [dtype_np(t.dtype) for t in ins])
    res = [_amp_cast(t, dtype_torch(target)) if target is not None else t.clone() for t in ins]
    return res[0] if len(res) == 1 else tuple(res)


def _amp_multicast_shape(p, ins, outs):
    return ins, list(ins)


register(OpDef(
    "amp_multicast", _amp_multicast, _amp_multicast_shape, infer_type=_amp_multicast_type,
    params=(Param("num_outputs", "int", doc="Number of input/output pairs to be casted to the "
                  "widest type."),
            Param("cast_narrow", "bool", False, "Whether to cast to the narrowest type")),
    inputs=lambda p: [f"data_{i}" for i in range(p.num_outputs)],
    outputs=lambda p: ["output"] if p.num_outputs == 1 else [f"output{i}" for i in range(p.num_outputs)],
    key_var_num_args="num_outputs",
    gradient=lambda F, p, ins, outs, ograds: [F.amp_cast(g, dtype=x.dtype) for x, g in zip(ins, ograds)],
    doc="Casts its float16/bfloat16/float32 inputs to their widest (``cast_narrow``: narrowest) type, "
        "as AMP does; other inputs pass through."))
