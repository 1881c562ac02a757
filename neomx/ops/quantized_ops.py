"""The quantized operators of MXNet's INT8 inference: ``quantized_conv``,
``quantized_fully_connected``, ``quantized_pooling``, ``quantized_act``, ``quantized_flatten``,
``quantized_concat``, ``quantized_elemwise_add``/``_mul``, ``quantized_batch_norm`` and
``quantized_embedding`` (``mx.nd.contrib.*`` / ``mx.sym.contrib.*``).

Each takes int8/uint8 data with its ``min``/``max`` range scalars and returns its data with the
output's range; the arithmetic follows MXNet 1.9.1's CPU (MKLDNN) kernels, see
:mod:`neomx.ops.quantization` for the shared conventions. Convolution and fully-connected
layers accumulate exactly in int32 (int8 products summed in float32 while every partial sum
stays below 2**24, else in float64) and return the int32 range
``max|data| * max|weight| * INT32_MAX / (Qd * 127)``. ``quantized_batch_norm`` on uint8 data
is within one quantization step of MXNet's (its int8 path is exact).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from .conv import _CONV_PARAMS, _POOL_PARAMS, _pool_compute, _pool_infer_shape
from .norm import _BN_PARAMS, _EMBED_PARAMS, _embed_indices
from .quantization import (_CALIB, _F32, _MX_TYPE_CODE, _QTYPES, _RANGE1, INT32_MAX, _f32,
                           _maxabs, _need_quantized, _range_shapes, _saturate, _scalar,
                           _type_inconsistent)
from .registry import OpDef, Param, ShapeError, TypeInferError, get, register


# --- quantized GEMM / convolution ---------------------------------------------------------------
def _q_range(t) -> float:
    return 255.0 if t.dtype == torch.uint8 else 127.0


def _acc_dtype(k: int):
    """The float type that sums ``k`` int8 x (u)int8 products exactly in any order: float32
    while every partial sum stays within 2**24 (|product| <= 255 * 128), else float64."""
    return torch.float32 if k * 255 * 128 <= (1 << 24) else torch.float64


def _int32_result(acc, bias_i32=None):
    acc = acc.to(torch.float64)
    if bias_i32 is not None:
        acc = acc + bias_i32
    return acc.round_().clamp_(-INT32_MAX - 1, INT32_MAX).to(torch.int32)


def _bias_int32(bias, lo_b, hi_b, data_scale, weight_scale):
    """The int8 bias in the int32 accumulator's units (``data_scale * weight_scale``), truncated
    toward zero as oneDNN's float-to-int conversion of the rescaled bias does."""
    unit = _F32(_F32(data_scale) * _F32(weight_scale))
    rescale = _F32(unit * _F32(_maxabs(lo_b, hi_b))) / _F32(127.0)
    return torch.trunc(bias.to(torch.float32) * float(rescale)).to(torch.float64)


def _mult_range(d_range, qd, w_range):
    """The real value of INT32_MAX in an int8 x int8 (or uint8 x int8) product accumulator,
    computed in float32 as MKLDNN's QuantizationRangeForS8S8/S8U8Multiplication does."""
    unit = _F32(_F32(d_range) / _F32(qd)) * _F32(_F32(w_range) / _F32(127.0))
    return float(_F32(unit * _F32(INT32_MAX)))


def _fc_type_message(name):
    return (f"QuantizedFullyConnected only supports int8/uint8 input, while "
            f"{_MX_TYPE_CODE.get(name, -1)} is given.")


def _qfc_forward(p, ins, oc):
    n = 2 if p.no_bias else 3
    data, weight = ins[0], ins[1]
    if data.dtype not in (torch.int8, torch.uint8):
        raise TypeInferError(_fc_type_message(str(data.dtype).replace("torch.", "")))
    _need_quantized("quantized_fully_connected", weight, (torch.int8,))
    lo_d, hi_d, lo_w, hi_w = (_scalar(t) for t in ins[n:n + 4])
    d_range, w_range = _maxabs(lo_d, hi_d), _maxabs(lo_w, hi_w)
    qd = _q_range(data)
    data_scale, weight_scale = (qd + 0.5) / d_range, 127.0 / w_range
    ft = _acc_dtype(weight.shape[1])
    x = data.to(ft)
    if p.flatten:
        x = x.reshape(x.shape[0], -1)
    acc = torch.matmul(x, weight.to(ft).t())
    bias = None
    if not p.no_bias:
        _need_quantized("quantized_fully_connected", ins[2], (torch.int8,))
        bias = _bias_int32(ins[2], _scalar(ins[n + 4]), _scalar(ins[n + 5]), data_scale,
                           weight_scale)
    out_range = _mult_range(d_range, qd, w_range)
    return _int32_result(acc, bias), _f32(-out_range), _f32(out_range)


def _qfc_inputs(p):
    names = ["data", "weight"] + ([] if p.no_bias else ["bias"])
    names += ["min_data", "max_data", "min_weight", "max_weight"]
    return names + ([] if p.no_bias else ["min_bias", "max_bias"])


def _wrapped_shape(base_name, n_data):
    """Shape rule of a quantized op whose data inputs follow the float op ``base_name``."""
    base = get(base_name)

    def rule(p, ins, outs):
        nd = n_data(p)
        hidden = [None] * (base.num_outputs(p) - 1)
        bins, bouts = base.infer_shape(p, list(ins[:nd]), [outs[0]] + hidden)
        ins = list(bins) + list(ins[nd:])
        ins = _range_shapes(ins, nd, len(ins) - nd)
        return ins, [bouts[0], _RANGE1, _RANGE1]
    return rule


def _qgemm_type(p, ins, outs):
    ins = list(ins)
    nd = 2 if p.no_bias else 3
    if ins[0] is not None and np.dtype(ins[0]) not in _QTYPES:
        name = np.dtype(ins[0]).name
        if "kernel" in p:
            raise TypeInferError(f"quantized_conv op only supports uint8 and int8 as input type, "
                                 f"got {name}")
        raise TypeInferError(_fc_type_message(name))
    for i in range(1, nd):
        if ins[i] is not None and np.dtype(ins[i]) != np.int8:
            raise _type_inconsistent(np.dtype(ins[i]).name, "int8")
        ins[i] = np.int8
    for i in range(nd, len(ins)):
        ins[i] = np.float32
    return ins, [np.int32, np.float32, np.float32]


register(OpDef(
    "_contrib_quantized_fully_connected", _qfc_forward,
    _wrapped_shape("FullyConnected", lambda p: 2 if p.no_bias else 3),
    infer_type=_qgemm_type, params=get("FullyConnected").params, inputs=_qfc_inputs,
    outputs=("output", "min_output", "max_output"), hint="quantized_fully_connected",
    doc="FullyConnected on int8/uint8 data and int8 weight (and int8 bias), accumulated exactly "
        "in int32. The output range is ``max|data| * max|weight| * INT32_MAX / (Qd * 127)`` "
        "(``Qd`` = 127 for int8 data, 255 for uint8); the bias is rescaled into the "
        "accumulator's units.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.array([[1, 2]], dtype='int8'); w = mx.nd.array([[3, 4]], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> y, lo, hi = mx.nd.contrib.quantized_fully_connected(d, w, *r, *r, num_hidden=1,\n"
        "...                                                     no_bias=True)\n"
        ">>> y.asnumpy().tolist(), y.dtype.__name__\n"
        "([[11]], 'int32')"))


def _qconv_forward(p, ins, oc):
    n = 2 if p.no_bias else 3
    data, weight = ins[0], ins[1]
    # (MXNet's imperative oneDNN kernel takes uint8 data only; its graph executor fuses the
    # preceding requantize+relu into uint8, and the non-oneDNN kernels take int8: both are run)
    _need_quantized("quantized_conv", data)
    _need_quantized("quantized_conv", weight, (torch.int8,))
    lo_d, hi_d, lo_w, hi_w = (_scalar(t) for t in ins[n:n + 4])
    d_range, w_range = _maxabs(lo_d, hi_d), _maxabs(lo_w, hi_w)
    conv = get("Convolution")
    ft = _acc_dtype(int(np.prod(weight.shape[1:])))
    x = data.to(ft)
    w = weight.to(ft)
    zeros = torch.zeros(weight.shape[0], dtype=ft)
    acc = conv.forward(p, [x, w] if p.no_bias else [x, w, zeros], oc)
    bias = None
    if not p.no_bias:
        _need_quantized("quantized_conv", ins[2], (torch.int8,))
        # MKLDNN's quantized convolution adds the int8 bias as it is (no rescaling)
        b = ins[2].to(torch.float64)
        nsp = acc.dim() - 2
        bias = b.reshape((1, -1) + (1,) * nsp)
    out_range = _mult_range(d_range, 127.0, w_range)  # the S8S8 range even for uint8 data
    return _int32_result(acc, bias), _f32(-out_range), _f32(out_range)


register(OpDef(
    "_contrib_quantized_conv", _qconv_forward,
    _wrapped_shape("Convolution", lambda p: 2 if p.no_bias else 3),
    infer_type=_qgemm_type, params=_CONV_PARAMS, inputs=_qfc_inputs,
    outputs=("output", "min_output", "max_output"), hint="quantized_conv",
    doc="Convolution on uint8 or int8 data and int8 weight/bias, accumulated exactly in int32; "
        "the output range is "
        "``max|data| * max|weight| * INT32_MAX / (127 * 127)``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.ones((1, 1, 2, 2), dtype='uint8')\n"
        ">>> w = mx.nd.ones((1, 1, 2, 2), dtype='int8')\n"
        ">>> r = [mx.nd.array([0.0]), mx.nd.array([1.0])]\n"
        ">>> y, lo, hi = mx.nd.contrib.quantized_conv(d, w, *r, *r, kernel=(2, 2), num_filter=1,\n"
        "...                                          no_bias=True)\n"
        ">>> y.asnumpy().tolist()\n"
        "[[[[4]]]]"))


# --- shape-preserving quantized ops ---------------------------------------------------------------
_POOL_TYPES = "mkldnn_quantized_pooling op only supports uint8 and int8 as input type"
_ACT_TYPES = "_contrib_quantized_act op only supports uint8 and int8 as input type"
def _same_q_type_for(message):
    """Type rule of an op whose output has its data's type: int8 or uint8 (``message`` names
    the op in MXNet's words), any type when ``message`` is None (quantized_flatten)."""
    def rule(p, ins, outs):
        ins = list(ins)
        t = ins[0] if ins[0] is not None else outs[0]
        if message and t is not None and np.dtype(t) not in _QTYPES:
            raise TypeInferError(f"{message}, got {np.dtype(t).name}")
        return [t] + [np.float32] * (len(ins) - 1), [t, np.float32, np.float32]
    return rule


def _qpool_shape(p, ins, outs):
    pins, pouts = _pool_infer_shape(p, [ins[0]], [outs[0], None])
    return _range_shapes(list(pins) + list(ins[1:]), 1, 2), [pouts[0], _RANGE1, _RANGE1]


def _qpool_forward(p, ins, oc):
    data, lo_t, hi_t = ins
    _need_quantized("quantized_pooling", data, message=_POOL_TYPES)
    if p.pool_type not in ("max", "avg"):
        raise ShapeError("QuantizedPoolingOp only supports pool_type=max/avg for now")
    if p.layout not in (None, "NCHW"):
        raise ShapeError(f"quantized_pooling: only NCHW layout is supported, got {p.layout}")
    y, _ = _pool_compute(p, data.to(torch.float64))
    return _saturate(y, data.dtype), lo_t.clone(), hi_t.clone()


register(OpDef(
    "_contrib_quantized_pooling", _qpool_forward,
    lambda p, ins, outs: _qpool_shape(p, ins, outs),
    infer_type=_same_q_type_for(_POOL_TYPES), params=_POOL_PARAMS,
    inputs=("data", "min_data", "max_data"),
    outputs=("output", "min_output", "max_output"), hint="quantized_pooling",
    doc="Max or average pooling on int8/uint8 data (averages rounded half to even); the range "
        "passes through.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.array([[[[1, 2], [3, 5]]]], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> y = mx.nd.contrib.quantized_pooling(d, *r, kernel=(2, 2), pool_type='avg')[0]\n"
        ">>> y.asnumpy().tolist()\n"
        "[[[[3]]]]"))


def _qact_forward(p, ins, oc):
    data, lo_t, hi_t = ins
    _need_quantized("quantized_act", data, message=_ACT_TYPES)
    if p.act_type != "relu":
        raise ShapeError("_contrib_quantized_act only supports act_type=relu for now")
    out = data.clamp(min=0) if data.dtype == torch.int8 else data.clone()
    return out, lo_t.clone(), hi_t.clone()


def _same_q_shape(p, ins, outs):
    ins = _range_shapes(ins, 1, len(ins) - 1)
    d = ins[0] if ins[0] is not None else outs[0]
    return [d] + ins[1:], [d, _RANGE1, _RANGE1]


register(OpDef(
    "_contrib_quantized_act", _qact_forward, _same_q_shape, infer_type=_same_q_type_for(_ACT_TYPES),
    params=get("Activation").params, inputs=("data", "min_data", "max_data"),
    outputs=("output", "min_output", "max_output"), hint="quantized_act",
    doc="Activation (relu only) on int8/uint8 data; the range passes through.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.array([-3, 0, 4], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> mx.nd.contrib.quantized_act(d, *r, act_type='relu')[0].asnumpy().tolist()\n"
        "[0, 0, 4]"))


def _qflatten_shape(p, ins, outs):
    ins = _range_shapes(ins, 1, 2)
    d = ins[0]
    if d is None:
        return ins, [outs[0], _RANGE1, _RANGE1]
    return ins, [(d[0], int(np.prod(d[1:], dtype=np.int64))) if len(d) else (1,), _RANGE1, _RANGE1]


register(OpDef(
    "_contrib_quantized_flatten",
    lambda p, ins, oc: (ins[0].reshape(ins[0].shape[0], -1).clone(), ins[1].clone(),
                        ins[2].clone()),
    _qflatten_shape, infer_type=_same_q_type_for(None), inputs=("data", "min_data", "max_data"),
    outputs=("output", "min_output", "max_output"), hint="quantized_flatten",
    doc="Flatten int8/uint8 data to 2-D; the range passes through.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.zeros((2, 3, 4), dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> mx.nd.contrib.quantized_flatten(d, *r)[0].shape\n"
        "(2, 12)"))


# --- concat, elemwise add/mul ---------------------------------------------------------------------
def _qconcat_inputs(p):
    names = [f"arg{i}" for i in range(p.num_args)]
    for i in range(p.num_args):
        names += [f"arg{i}_min", f"arg{i}_max"]
    return names


def _qconcat_forward(p, ins, oc):
    n = p.num_args
    datas = ins[:n]
    for d in datas:
        _need_quantized("quantized_concat", d)
    ranges = [(_scalar(ins[n + 2 * i]), _scalar(ins[n + 2 * i + 1])) for i in range(n)]
    lo = min(r[0] for r in ranges)
    hi = max(r[1] for r in ranges)
    out_dt = torch.uint8 if all(d.dtype == torch.uint8 for d in datas) else torch.int8
    out_range = _maxabs(lo, hi)
    q_out = 255.0 if out_dt == torch.uint8 else 127.0
    parts = []
    for d, (a, b) in zip(datas, ranges):
        r = _maxabs(a, b)
        if d.dtype == out_dt and r == out_range:
            parts.append(d)
            continue
        scale = float(_F32(r / _q_range(d)) * _F32(q_out / out_range)) if out_range else 0.0
        parts.append(_saturate(d.to(torch.float32) * scale, out_dt))
    return torch.cat(parts, dim=p.dim), _f32(lo), _f32(hi)


def _qconcat_shape(p, ins, outs):
    n = p.num_args
    cins, couts = get("Concat").infer_shape(p, list(ins[:n]), [outs[0]])
    ins = _range_shapes(list(cins) + list(ins[n:]), n, 2 * n)
    return ins, [couts[0], _RANGE1, _RANGE1]


def _qconcat_type(p, ins, outs):
    n = p.num_args
    ts = [t for t in ins[:n] if t is not None]
    for t in ts:
        if np.dtype(t) not in _QTYPES:
            raise TypeInferError(f"quantized_concat: inputs must be int8 or uint8, got "
                                 f"{np.dtype(t).name}")
    out = None
    if len(ts) == n:
        out = np.uint8 if all(np.dtype(t) == np.uint8 for t in ts) else np.int8
    return list(ins[:n]) + [np.float32] * (2 * n), [out, np.float32, np.float32]


register(OpDef(
    "_contrib_quantized_concat", _qconcat_forward, _qconcat_shape, infer_type=_qconcat_type,
    params=get("Concat").params, inputs=_qconcat_inputs, key_var_num_args="num_args",
    outputs=("output", "min_output", "max_output"), hint="quantized_concat",
    doc="Concatenate int8/uint8 arrays (inputs: the arrays, then each one's min and max). The "
        "output range spans all inputs' ranges; inputs are rescaled into it.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> a = mx.nd.array([10], dtype='int8'); b = mx.nd.array([10], dtype='int8')\n"
        ">>> ra = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> rb = [mx.nd.array([-2.0]), mx.nd.array([2.0])]\n"
        ">>> y, lo, hi = mx.nd.contrib.quantized_concat(a, b, *ra, *rb, num_args=2, dim=0)\n"
        ">>> y.asnumpy().tolist(), float(lo.asscalar()), float(hi.asscalar())\n"
        "([5, 10], -2.0, 2.0)"))


def _binary_ranges(ins):
    a, b = ins[0], ins[1]
    ra = _maxabs(_scalar(ins[2]), _scalar(ins[3]))
    rb = _maxabs(_scalar(ins[4]), _scalar(ins[5]))
    return a, b, ra, rb


def _qadd_forward(p, ins, oc):
    """oneDNN's sum: each input times (output scale / its scale) in float32, rounded, saturated;
    scales are ``(Q + 0.5) / max|range|`` (Q = 127 or 255) and ``INT32_MAX / range`` for int32."""
    a, b, ra, rb = _binary_ranges(ins)
    _need_quantized("quantized_elemwise_add", a)
    _need_quantized("quantized_elemwise_add", b)
    sa = _F32(_q_range(a) + 0.5) / _F32(ra)
    sb = _F32(_q_range(b) + 0.5) / _F32(rb)
    if p.min_calib_range is not None and p.max_calib_range is not None:
        lo, hi = float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range))
        dt = torch.uint8 if lo >= 0 else torch.int8
        out_scale = _F32(255.5 if dt == torch.uint8 else 127.5) / _F32(_maxabs(lo, hi))
        out_lo, out_hi = lo, hi
    else:
        dt = torch.int32
        out_hi = float(_F32(_F32(ra) + _F32(rb)))
        out_lo = -out_hi
        out_scale = _F32(INT32_MAX) / _F32(out_hi)
    s0, s1 = float(_F32(out_scale / sa)), float(_F32(out_scale / sb))
    v = a.to(torch.float32) * s0 + b.to(torch.float32) * s1
    return _saturate(v.to(torch.float64), dt), _f32(out_lo), _f32(out_hi)


def _binary_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is not None and ins[1] is not None and tuple(ins[0]) != tuple(ins[1]):
        a, b = (f"[{','.join(map(str, s))}]" for s in ins[:2])
        raise ShapeError(f"Check failed: (*in_shape)[0] == (*in_shape)[1] ({a} vs. {b}) : ")
    known = next((s for s in ins[:2] + [outs[0]] if s is not None), None)
    ins[0] = ins[1] = known
    ins = _range_shapes(ins, 2, 4)
    return ins, [known, _RANGE1, _RANGE1]


def _qadd_type(p, ins, outs):
    ins = list(ins)
    if p.min_calib_range is not None and p.max_calib_range is not None:
        out = np.uint8 if p.min_calib_range >= 0 else np.int8
    else:
        out = np.int32
    return ins[:2] + [np.float32] * 4, [out, np.float32, np.float32]


_BINARY_INPUTS = ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max")

register(OpDef(
    "_contrib_quantized_elemwise_add", _qadd_forward, _binary_shape, infer_type=_qadd_type,
    params=_CALIB, inputs=_BINARY_INPUTS, outputs=("output", "min_output", "max_output"),
    hint="quantized_elemwise_add",
    doc="Add two int8/uint8 arrays with their ranges: an int32 result with range "
        "``+-(max|lhs| + max|rhs|)``, or, with a calibrated range, int8 (uint8 when its minimum "
        "is >= 0).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> a = mx.nd.array([51], dtype='int8'); r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> y, lo, hi = mx.nd.contrib.quantized_elemwise_add(a, a, *r, *r, min_calib_range=-1.0,\n"
        "...                                                  max_calib_range=1.0)\n"
        ">>> y.asnumpy().tolist(), float(lo.asscalar()), float(hi.asscalar())\n"
        "([102], -1.0, 1.0)"))


def _qmul_forward(p, ins, oc):
    a, b, ra, rb = _binary_ranges(ins)
    _need_quantized("quantized_elemwise_mul", a)
    _need_quantized("quantized_elemwise_mul", b)
    prod = a.to(torch.float64) * b.to(torch.float64)
    unit = (ra / _q_range(a)) * (rb / _q_range(b))  # real value of one product unit
    if p.enable_float_output:
        return (prod * unit).to(torch.float32), _f32(0.0), _f32(0.0)
    if p.min_calib_range is not None and p.max_calib_range is not None:
        lo, hi = float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range))
        out_range = _maxabs(lo, hi)
        out = _saturate(prod * (unit * 127.0 / out_range), torch.int8)
        return out, _f32(-out_range), _f32(out_range)
    out_range = float(_F32(ra * rb * INT32_MAX / (_q_range(a) * _q_range(b))))
    return _int32_result(prod), _f32(-out_range), _f32(out_range)


def _qmul_type(p, ins, outs):
    if p.enable_float_output:
        out = np.float32
    elif p.min_calib_range is not None and p.max_calib_range is not None:
        out = np.int8
    else:
        out = np.int32
    return list(ins[:2]) + [np.float32] * 4, [out, np.float32, np.float32]


register(OpDef(
    "_contrib_quantized_elemwise_mul", _qmul_forward, _binary_shape, infer_type=_qmul_type,
    params=_CALIB + (Param("enable_float_output", "bool", False,
                           "Whether to enable float32 output"),),
    inputs=_BINARY_INPUTS, outputs=("output", "min_output", "max_output"),
    hint="quantized_elemwise_mul",
    doc="Multiply two int8/uint8 arrays elementwise: the exact int32 product with range "
        "``max|lhs| * max|rhs| * INT32_MAX / (Qa * Qb)``; int8 with a calibrated range; float32 "
        "with ``enable_float_output``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> a = mx.nd.array([3, -4], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> mx.nd.contrib.quantized_elemwise_mul(a, a, *r, *r)[0].asnumpy().tolist()\n"
        "[9, 16]"))


# --- batch norm, embedding ---------------------------------------------------------------------
_BN_TYPES = ("QuantizedBatchNorm with MKLDNN backend only supports int8/uint8 input, while {} "
             "is given.")


def _qbn_forward(p, ins, oc):
    data, gamma, beta, mean, var, lo_t, hi_t = ins
    if data.dtype not in (torch.int8, torch.uint8):
        raise TypeInferError(_BN_TYPES.format(_MX_TYPE_CODE.get(str(data.dtype)[6:], -1)))
    if p.min_calib_range is None or p.max_calib_range is None:
        raise ShapeError("min_calib_range or max_calib_range is not available. Quantized BN "
                         "currently don't support calib_mode=None")
    d_range = _maxabs(_scalar(lo_t), _scalar(hi_t))
    o_range = _maxabs(float(_F32(p.min_calib_range)), float(_F32(p.max_calib_range)))
    axis = p.axis % data.dim()
    shape = [1] * data.dim()
    shape[axis] = -1
    g = (torch.ones_like(gamma) if p.fix_gamma else gamma).to(torch.float64)
    inv = 1.0 / torch.sqrt(var.to(torch.float64) + p.eps)
    # oneDNN's batch norm gets the folded scale/shift with mean 0 and variance 1, so the data
    # term is divided by sqrt(1 + eps) once more; scales are (127 + 0.5) / max|range|
    in_scale = (255.5 if data.dtype == torch.uint8 else 127.5) / d_range
    out_scale = 127.5 / o_range
    w = g * inv * (out_scale / in_scale) / math.sqrt(1.0 + p.eps)
    b = (beta.to(torch.float64) - mean.to(torch.float64) * g * inv) * out_scale
    y = data.to(torch.float64) * w.reshape(shape) + b.reshape(shape)
    return _saturate(y, torch.int8), _f32(-o_range), _f32(o_range)


def _qbn_type(p, ins, outs):
    t = ins[0]
    if t is not None and np.dtype(t) not in _QTYPES:
        raise TypeInferError(_BN_TYPES.format(_MX_TYPE_CODE.get(np.dtype(t).name, -1)))
    return [t] + [np.float32] * 6, [np.int8, np.float32, np.float32]


def _qbn_shape(p, ins, outs):
    ins = list(ins)
    d = ins[0] if ins[0] is not None else outs[0]
    if d is not None:
        c = d[p.axis % len(d)]
        for i in range(1, 5):
            ins[i] = (c,)
    ins = _range_shapes(ins, 5, 2)
    return [d] + ins[1:], [d, _RANGE1, _RANGE1]


register(OpDef(
    "_contrib_quantized_batch_norm", _qbn_forward, _qbn_shape,
    infer_type=_qbn_type,
    params=_BN_PARAMS, inputs=("data", "gamma", "beta", "moving_mean", "moving_var", "min_data",
                               "max_data"),
    outputs=("output", "min_output", "max_output"), hint="quantized_batch_norm",
    doc="BatchNorm with global statistics on int8 data; needs the calibrated output range "
        "(``min_calib_range``/``max_calib_range``) and returns int8 in it.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> d = mx.nd.array([[[[100]]]], dtype='int8')\n"
        ">>> one, zero = mx.nd.ones((1,)), mx.nd.zeros((1,))\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> y, lo, hi = mx.nd.contrib.quantized_batch_norm(d, one, zero, zero, one, *r, eps=0.0,\n"
        "...                                                min_calib_range=-2.0,\n"
        "...                                                max_calib_range=2.0)\n"
        ">>> y.asnumpy().tolist()\n"
        "[[[[50]]]]"))


def _qembed_forward(p, ins, oc):
    data, weight, lo_t, hi_t = ins
    _need_quantized("quantized_embedding", weight, (torch.int8,))
    return TF.embedding(_embed_indices(data, p.input_dim), weight), lo_t.clone(), hi_t.clone()


def _qembed_shape(p, ins, outs):
    ins = list(ins)
    ins[1] = (p.input_dim, p.output_dim)
    ins = _range_shapes(ins, 2, 2)
    if ins[0] is None:
        return ins, [outs[0], _RANGE1, _RANGE1]
    return ins, [tuple(ins[0]) + (p.output_dim,), _RANGE1, _RANGE1]


register(OpDef(
    "_contrib_quantized_embedding", _qembed_forward, _qembed_shape,
    infer_type=lambda p, ins, outs: ([ins[0] if ins[0] is not None else np.float32, np.int8,
                                      np.float32, np.float32], [np.int8, np.float32, np.float32]),
    params=_EMBED_PARAMS, inputs=("data", "weight", "min_weight", "max_weight"),
    outputs=("output", "min_output", "max_output"), hint="quantized_embedding",
    doc="Embedding lookup in an int8 weight; the weight's range passes through.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> w = mx.nd.array([[1, 2], [3, 4]], dtype='int8')\n"
        ">>> r = [mx.nd.array([-1.0]), mx.nd.array([1.0])]\n"
        ">>> mx.nd.contrib.quantized_embedding(mx.nd.array([1]), w, *r, input_dim=2,\n"
        "...                                   output_dim=2)[0].asnumpy().tolist()\n"
        "[[3, 4]]"))
