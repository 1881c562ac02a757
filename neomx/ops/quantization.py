"""MXNet's INT8 quantization: ``quantize``, ``quantize_v2``, ``quantize_asym``, ``dequantize``,
``requantize`` and ``calibrate_entropy`` here; the quantized layers (``quantized_conv``, ...) in
:mod:`neomx.ops.quantized_ops`, registered on import of this module.

A quantized tensor travels with its real-valued range: every quantized operator takes the data
plus ``min``/``max`` scalars (shape ``(1,)``, float32) for each quantized input, and returns its
data plus the output's ``min``/``max``. int8 data is symmetric (``q = x * 127 / max|range|``),
uint8 data is non-negative; GEMM and convolution accumulate exactly in int32 (int8 products
summed in float32 or float64, exact in either, then cast to int32), and
``requantize`` brings an int32 result back to int8/uint8 with a calibrated range.

The reference is MXNet 1.9.1's CPU build with MKLDNN (oneDNN kernels), whose arithmetic these
kernels follow: round half to even, saturation to the type's limits, ``quantize_v2``/
``dequantize`` scale by ``127.5``/``255.5`` per unit of range, ``quantize`` by ``127``/``255``,
int32 results carry the range ``max|data| * max|weight| * INT32_MAX / (127 * 127)``;
MXNet's unfused quantized convolution adds the int8 bias without rescaling it and reports that
S8S8 range even for uint8 data (both kept: the oracle's op results are matched bit for bit).
Deliberate differences (MKLDNN defects that give garbage): ``requantize`` without a calibrated
range rescales by the data's actual range (oneDNN's path negates it), ``quantized_act`` on uint8
data keeps uint8 (oneDNN reinterprets it as int8), ``quantized_elemwise_mul`` works imperatively
(MXNet's shape inference fails there), and ``quantize_asym`` computes MXNet's documented result
(the oracle crashes).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .registry import OpDef, Param, ShapeError, TypeInferError, register

INT32_MAX = 2147483647.0
_F32 = np.float32
_RANGE1 = (1,)
_QTYPES = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8"}
_UNNAMED3 = ("output0", "output1", "output2")  # ops without MXNet output names: "<name>_output<i>"


def _check(cond, text):
    if not cond:
        raise ShapeError("Check failed: " + text)


def _scalar(t) -> float:
    """A ``(1,)`` min/max tensor as a Python float (float32-rounded)."""
    return float(_F32(t.reshape(-1)[0].item()))


def _maxabs(a, b) -> float:
    return float(_F32(max(abs(a), abs(b))))


def _f32(v):
    return torch.tensor(v, dtype=torch.float32).reshape(1)


def _saturate(v, dtype):
    """Round half to even and saturate to ``dtype``'s limits (oneDNN's conversion); NaN (a
    zero range: 0 * inf) becomes 0."""
    info = torch.iinfo(dtype)
    return torch.nan_to_num(torch.round(v), nan=0.0).clamp_(info.min, info.max).to(dtype)


def _scale(q, real):
    """``q / real`` in float32 (inf for a zero range, which quantizes everything to 0)."""
    with np.errstate(divide="ignore"):
        return float(_F32(q) / _F32(real))


def _qtype_name(t) -> str:
    names = {torch.int8: "int8", torch.uint8: "uint8", torch.int32: "int32"}
    return names.get(t.dtype, str(t.dtype).replace("torch.", ""))


_MX_TYPE_CODE = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
                 "int64": 6, "bool": 7}


def _type_inconsistent(provided, inferred):
    return TypeInferError(f"Type inconsistent, Provided = {provided}, inferred type = {inferred}")


def _need_quantized(name, t, allowed=(torch.int8, torch.uint8), message=None):
    """Check an input's type: one allowed type gives MXNet's "Type inconsistent" error, the
    int8/uint8 pair ``message`` (default: "<name> op only supports uint8 and int8 ...")."""
    if t.dtype in allowed:
        return
    got = _qtype_name(t)
    if len(allowed) == 1:
        raise _type_inconsistent(got, _qtype_name(torch.empty(0, dtype=allowed[0])))
    raise TypeInferError((message or f"{name} op only supports uint8 and int8 as input type")
                         + f", got {got}")


def _range_shapes(ins, first, count):
    """Set the ``count`` min/max inputs from ``first`` on to shape (1,)."""
    ins = list(ins)
    for i in range(first, first + count):
        if ins[i] is not None and tuple(ins[i]) != _RANGE1:
            raise ShapeError(f"Shape inconsistent, Provided = [{','.join(map(str, ins[i]))}], "
                             f"inferred shape=[1]")
        ins[i] = _RANGE1
    return ins


def _q_dtype(out_type, lo):
    """int8/uint8 for ``out_type`` ('auto': uint8 when the range's minimum is >= 0)."""
    if out_type == "auto":
        return torch.uint8 if lo >= 0 else torch.int8
    return torch.uint8 if out_type == "uint8" else torch.int8


def _np_q(out_type, p):
    if out_type == "auto":
        lo = getattr(p, "min_calib_range", None)
        if lo is None:
            return None  # decided by the data
        return np.uint8 if lo >= 0 else np.int8
    return np.uint8 if out_type == "uint8" else np.int8


# --- quantize (v1), quantize_v2, quantize_asym, dequantize, requantize ---------------------
def _quantize_forward(p, ins, oc):
    data, lo_t, hi_t = ins
    lo, hi = _scalar(lo_t), _scalar(hi_t)
    x = data.to(torch.float32)
    if p.out_type == "uint8":
        return _saturate(x * _scale(255.0, _maxabs(lo, hi)), torch.uint8), _f32(lo), _f32(hi)
    real = _maxabs(lo, hi)
    return _saturate(x * _scale(127.0, real), torch.int8), _f32(-real), _f32(real)


def _quantize_shape(p, ins, outs):
    ins = _range_shapes(ins, 1, 2)
    return ins, [ins[0], _RANGE1, _RANGE1]


def _float_in_type(p, ins, outs):
    ins = list(ins)
    if ins[0] is not None and np.dtype(ins[0]) != np.float32:
        raise _type_inconsistent(np.dtype(ins[0]).name, "float32")
    ins = [np.float32] * len(ins)
    return ins, [_np_q(p.out_type, p) or np.int8] + [np.float32] * (len(outs) - 1)


register(OpDef(
    "_contrib_quantize", _quantize_forward, _quantize_shape, infer_type=_float_in_type,
    params=(Param("out_type", "str", "uint8", "Output data type.", choices=("int8", "uint8")),),
    inputs=("data", "min_range", "max_range"), outputs=_UNNAMED3, hint="quantize",
    doc="Quantize float32 ``data`` into int8 or uint8 with the given range: int8 uses "
        "``round(x * 127 / max(|min_range|, |max_range|))`` and returns the symmetric range, uint8 "
        "``round(x * 255 / max(|min_range|, |max_range|))`` (saturated) and returns the range as "
        "given.\n\nExamples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> q, lo, hi = mx.nd.contrib.quantize(mx.nd.array([-1, 0.5, 1]), mx.nd.array([-1]),\n"
        "...                                    mx.nd.array([1]), out_type='int8')\n"
        ">>> q.asnumpy().tolist(), float(lo.asscalar()), float(hi.asscalar())\n"
        "([-127, 64, 127], -1.0, 1.0)"))


def _v2_range(p, x):
    if p.min_calib_range is not None and p.max_calib_range is not None:
        return float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range))
    if x.numel() == 0:
        return 0.0, 0.0
    return float(x.min().item()), float(x.max().item())


def _quantize_v2_forward(p, ins, oc):
    x = ins[0]
    if x.dtype in (torch.int8, torch.uint8):
        # already quantized: the bytes pass through (as the output type) with the calibrated
        # range, else the type's own: (-127.5, 127.5) for int8, (0, 255.5) for uint8
        if p.min_calib_range is not None and p.max_calib_range is not None:
            lo, hi = float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range))
        else:
            lo, hi = (0.0, 255.5) if x.dtype == torch.uint8 else (-127.5, 127.5)
        dt = _q_dtype(p.out_type, lo if p.out_type == "auto" else -1.0)
        return x.clone().view(dt), _f32(lo), _f32(hi)
    x = x.to(torch.float32)
    lo, hi = _v2_range(p, x)
    calibrated = p.min_calib_range is not None and p.max_calib_range is not None
    # 'auto' looks at the calibrated minimum only; without one it quantizes to int8 (MKLDNN)
    dt = _q_dtype(p.out_type, lo if calibrated else -1.0)
    if dt == torch.uint8:
        return _saturate(x * _scale(255.5, _maxabs(lo, hi)), torch.uint8), _f32(lo), _f32(hi)
    real = _maxabs(lo, hi)
    return _saturate(x * _scale(127.5, real), torch.int8), _f32(-real), _f32(real)


def _quantize_v2_type(p, ins, outs):
    if ins[0] is not None and np.dtype(ins[0]) not in (np.dtype(np.float32), np.dtype(np.int8),
                                                       np.dtype(np.uint8)):
        raise TypeInferError("Check failed: in_attrs->at(0) == mshadow::kFloat32 || "
                             "in_attrs->at(0) == mshadow::kUint8 || in_attrs->at(0) == "
                             f"mshadow::kInt8: got {np.dtype(ins[0]).name}")
    t = _np_q(p.out_type, p) or np.int8  # 'auto' without a calibrated range: int8
    return [ins[0] if ins[0] is not None else np.float32], [t, np.float32, np.float32]


_CALIB = (
    Param("min_calib_range", "float", None, "The minimum scalar value in the form of float32. If "
          "present, it will be used to quantize the fp32 data into int8 or uint8.", optional=True),
    Param("max_calib_range", "float", None, "The maximum scalar value in the form of float32. If "
          "present, it will be used to quantize the fp32 data into int8 or uint8.", optional=True),
)

register(OpDef(
    "_contrib_quantize_v2", _quantize_v2_forward,
    lambda p, ins, outs: (ins, [ins[0], _RANGE1, _RANGE1]), infer_type=_quantize_v2_type,
    params=(Param("out_type", "str", "int8", "Output data type. 'auto' can be specified to "
                  "automatically determine output type according to min_calib_range.",
                  choices=("auto", "int8", "uint8")),) + _CALIB,
    outputs=_UNNAMED3, hint="quantize_v2",
    doc="Quantize float32 ``data`` into int8 or uint8. The range is ``min_calib_range``/"
        "``max_calib_range`` when both are given, else the data's own minimum and maximum. int8: "
        "``round(x * 127.5 / max|range|)`` saturated, range returned as ``(-max|range|, "
        "max|range|)``; uint8: ``round(x * 255.5 / max|range|)`` saturated, range as found. "
        "``out_type='auto'`` picks uint8 when the range's minimum is >= 0.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([-1, 0.5, 1]))\n"
        ">>> q.asnumpy().tolist(), float(lo.asscalar()), float(hi.asscalar())\n"
        "([-128, 64, 127], -1.0, 1.0)"))


def _quantize_asym_forward(p, ins, oc):
    x = ins[0].to(torch.float32)
    lo, hi = _v2_range(p, x)
    if hi - lo <= 0:
        scale, shift = 1.0, 0.0
    else:
        scale = float(_F32(255.0) / _F32(hi - lo))
        shift = float(_F32(255.0) - _F32(hi) * _F32(scale))
    return _saturate(x * scale + shift, torch.uint8), _f32(scale), _f32(shift)


register(OpDef(
    "_contrib_quantize_asym", _quantize_asym_forward,
    lambda p, ins, outs: (ins, [ins[0], _RANGE1, _RANGE1]),
    infer_type=lambda p, ins, outs: ([np.float32], [np.uint8, np.float32, np.float32]),
    params=_CALIB, outputs=("output", "scale", "shift"), hint="quantize_asym",
    doc="Asymmetric quantization of float32 ``data`` into uint8: ``scale = 255 / (max - min)``, "
        "``shift = 255 - max * scale``, output ``round(x * scale + shift)`` (saturated); the range "
        "is the calibrated one when given, else the data's.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> q, s, b = mx.nd.contrib.quantize_asym(mx.nd.array([-1, 0, 1]))\n"
        ">>> q.asnumpy().tolist(), float(s.asscalar()), float(b.asscalar())\n"
        "([0, 128, 255], 127.5, 127.5)"))


def _dequantize_forward(p, ins, oc):
    data, lo_t, hi_t = ins
    if data.dtype not in (torch.int8, torch.uint8):
        raise TypeInferError(_DEQUANTIZE_TYPE_ERROR)
    real = _maxabs(_scalar(lo_t), _scalar(hi_t))
    q = 255.5 if data.dtype == torch.uint8 else 127.5
    scale = _F32(real) / _F32(q)
    return data.to(torch.float32) * float(scale)


_DEQUANTIZE_TYPE_ERROR = ("Check failed: in_attrs->at(0) == mshadow::kUint8 || in_attrs->at(0) == "
                          "mshadow::kInt8: the input data type of dequantize op must be provided, "
                          "either uint8 or int8")


def _dequantize_type(p, ins, outs):
    ins = list(ins)
    if ins[0] is not None and np.dtype(ins[0]) not in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise TypeInferError(_DEQUANTIZE_TYPE_ERROR)
    return [ins[0], np.float32, np.float32], [np.float32]


register(OpDef(
    "_contrib_dequantize", _dequantize_forward,
    lambda p, ins, outs: (_range_shapes(ins, 1, 2), [ins[0]]), infer_type=_dequantize_type,
    params=(Param("out_type", "str", "float32", "Output data type.", choices=("float32",)),),
    inputs=("data", "min_range", "max_range"), hint="dequantize",
    doc="Dequantize int8/uint8 ``data`` with its range into float32: ``x * max|range| / 127.5`` "
        "(int8), ``/ 255.5`` (uint8).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> q = mx.nd.array([-51, 0, 102], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.25]), mx.nd.array([1.25])]\n"
        ">>> mx.nd.contrib.dequantize(q, *r).asnumpy().tolist()\n"
        "[-0.5, 0.0, 1.0]"))


def _requantize_forward(p, ins, oc):
    data, lo_t, hi_t = ins
    _need_quantized("requantize", data, (torch.int32,))  # ("Type inconsistent")
    in_range = _maxabs(_scalar(lo_t), _scalar(hi_t))
    real = data.to(torch.float64) * (in_range / INT32_MAX)
    if p.min_calib_range is not None and p.max_calib_range is not None:
        lo, hi = float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range))
    else:  # the data's actual range
        if data.numel():
            lo, hi = float(real.min().item()), float(real.max().item())
        else:
            lo = hi = 0.0
    dt = _q_dtype(p.out_type, lo)
    out_range = _maxabs(lo, hi)
    if dt == torch.uint8:
        scale = 255.0 / out_range if out_range else 0.0
        return _saturate(real * scale, torch.uint8), _f32(0.0), _f32(out_range)
    scale = 127.0 / out_range if out_range else 0.0
    return _saturate(real * scale, torch.int8), _f32(-out_range), _f32(out_range)


def _requantize_type(p, ins, outs):
    ins = list(ins)
    if ins[0] is not None and np.dtype(ins[0]) != np.int32:
        raise _type_inconsistent(np.dtype(ins[0]).name, "int32")
    t = _np_q(p.out_type, p)
    if t is None:
        t = outs[0] if outs[0] is not None else np.int8
    return [np.int32, np.float32, np.float32], [t, np.float32, np.float32]


register(OpDef(
    "_contrib_requantize", _requantize_forward,
    lambda p, ins, outs: (_range_shapes(ins, 1, 2), [ins[0], _RANGE1, _RANGE1]),
    infer_type=_requantize_type,
    params=(Param("out_type", "str", "int8", "Output data type. 'auto' can be specified to "
                  "automatically determine output type according to min_calib_range.",
                  choices=("auto", "int8", "uint8")),) + _CALIB,
    inputs=("data", "min_range", "max_range"), outputs=_UNNAMED3, hint="requantize",
    doc="Requantize int32 ``data`` (range ``min_range``/``max_range`` for +-INT32_MAX) into int8 "
        "or uint8 with the calibrated range (or, without one, the data's actual range).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([-2**30, 2**29], dtype='int32')\n"
        ">>> q, lo, hi = mx.nd.contrib.requantize(x, mx.nd.array([-2]), mx.nd.array([2]),\n"
        "...                                      min_calib_range=-1.0, max_calib_range=1.0)\n"
        ">>> q.asnumpy().tolist(), float(lo.asscalar()), float(hi.asscalar())\n"
        "([-127, 64], -1.0, 1.0)"))


# --- calibrate_entropy ----------------------------------------------------------------------------
def _smooth(p, eps=0.0001):
    """Zeros replaced by ``eps``, the mass taken off the non-zero entries (None: all zero);
    float32 arithmetic, as MXNet's SmoothDistribution."""
    is_zero = (p == 0)
    n_zeros = int(is_zero.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = _F32(_F32(eps) * _F32(n_zeros) / _F32(n_nonzeros))
    if eps1 >= 1.0:
        return None
    return p.astype(_F32) + np.where(is_zero, _F32(eps), -eps1).astype(_F32)


def _kl(p, q):
    """MXNet's ComputeEntropy: both normalized, sum of p * log(p / q), accumulated in float32
    in order (np.cumsum in float32 adds sequentially, as std::accumulate does)."""
    p = p / np.cumsum(p, dtype=_F32)[-1]
    q = q / np.cumsum(q, dtype=_F32)[-1]
    terms = (p * np.log(p / q)).astype(_F32)
    return float(np.cumsum(terms, dtype=_F32)[-1])


def _divergence(hist, cs, nzs, zero, i, nq):
    """KL divergence of the histogram clipped to the 2i+1 middle bins (outliers folded into the
    end bins) against its quantization into ``nq`` bins. As MXNet's CalibrateComputeCPU, the
    quantized bins are built from the clipped slice *without* its first bin (that bin only goes
    into the reference distribution's first entry). ``cs``/``nzs``: cumulative sums of the
    histogram and of its non-zero indicator (block sums and counts by differences)."""
    start, stop = zero - i, zero + i + 1
    pd = hist[start:stop].copy()
    pd[0] = cs[start + 1]
    pd[-1] += cs[-1] - cs[stop]
    n = stop - start
    merged = n // nq
    bounds = np.arange(nq + 1) * merged
    bounds[-1] = n  # the last block takes the remainder
    sums = cs[start + bounds[1:]] - cs[start + bounds[:-1]]
    norms = nzs[start + bounds[1:]] - nzs[start + bounds[:-1]]
    sums[0] -= hist[start]  # the slice's first bin is left out
    norms[0] -= hist[start] != 0
    per = np.divide(sums, norms, out=np.zeros(nq), where=norms != 0)
    qd = np.repeat(per.astype(_F32), np.diff(bounds))
    qd[pd == 0] = 0
    ps, qs = _smooth(pd), _smooth(qd)
    if ps is None or qs is None:
        return math.inf
    return _kl(ps, qs)


def _calibrate_entropy(p, ins, oc):
    hist = ins[0].detach().to(torch.float64).cpu().numpy()
    edges = ins[1].detach().to(torch.float64).cpu().numpy()
    nq = p.num_quantized_bins
    num_bins = hist.size
    _check(num_bins % 2 == 1, f"num_bins % 2 == 1 ({num_bins % 2} vs. 1) : num_bins must be odd")
    _check(edges.size == num_bins + 1, f"hist_edges.Size() == num_bins + 1 ({edges.size} vs. "
                                       f"{num_bins + 1}) ")
    zero = num_bins // 2
    hist = np.trunc(hist)  # (MXNet keeps the slice as integer counts)
    cs = np.concatenate(([0.0], np.cumsum(hist)))
    nzs = np.concatenate(([0], np.cumsum(hist != 0)))
    best_i, best = None, math.inf
    for i in range(nq // 2, zero + 1):
        d = _divergence(hist, cs, nzs, zero, i, nq)
        if best_i is None or d < best:
            best_i, best = i, d
    return (torch.tensor([edges[zero + best_i + 1]], dtype=torch.float32),
            torch.tensor([best], dtype=torch.float32))


register(OpDef(
    "_contrib_calibrate_entropy", _calibrate_entropy,
    lambda p, ins, outs: (ins, [_RANGE1, _RANGE1]),
    infer_type=lambda p, ins, outs: ([np.float32, np.float32], [np.float32, np.float32]),
    params=(Param("num_quantized_bins", "int", 255, "The number of quantized bins."),),
    inputs=("hist", "hist_edges"), outputs=("threshold", "divergence"), hint="calibrate_entropy",
    doc="The threshold minimizing the KL divergence between a histogram (odd number of bins, "
        "symmetric about zero) and its quantization into ``num_quantized_bins`` bins (TensorRT's "
        "entropy calibration). Returns ``(threshold, divergence)``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx, numpy as np\n"
        ">>> hist = mx.nd.array(np.ones(9)); edges = mx.nd.array(np.linspace(-1, 1, 10))\n"
        ">>> th, div = mx.nd.contrib.calibrate_entropy(hist, edges, num_quantized_bins=3)\n"
        ">>> round(float(th.asscalar()), 4)\n"
        "1.0"))


# the quantized operators (they use the helpers above)
from . import quantized_ops  # noqa: E402,F401
