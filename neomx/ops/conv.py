"""Spatial layers: Convolution and Pooling (1-D, 2-D and 3-D), with their fused backward ops.

Both work on channel-first data (``NCW``/``NCHW``/``NCDHW``); the channel-last layouts are
handled by permuting to channel-first around the same kernels. Parameter names, defaults and
checks follow MXNet 1.9.1 (``src/operator/nn/convolution.cc``, ``pooling.cc``).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from .registry import merge_shape, OpDef, Param, ShapeError, TypeInferError, register, _sh

_CHANNEL_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_CHANNEL_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


# --- shared helpers ------------------------------------------------------------------------------
def _tshape(s) -> str:
    """MXNet's tuple text in check messages, e.g. ``(6,4,3,3)``."""
    return "(" + ",".join(str(int(d)) for d in s) + ")"


def _spatial(p, name, nsp, default):
    """A per-dimension parameter (stride, dilate, pad) expanded to ``nsp`` entries."""
    v = tuple(p[name])
    if not v:
        return (default,) * nsp
    if len(v) != nsp:
        raise ShapeError(f"Check failed: param_.kernel.ndim() == param_.{name}.ndim() ({nsp} vs. "
                         f"{len(v)}) : {name.capitalize()} must have the same number of dimensions "
                         f"with kernel_size,but kernel_size is set to {_sh(p.kernel)} while "
                         f"{name} is {_sh(v)}")
    return v


def _layout_is_last(layout, nsp, op) -> bool:
    """True for channel-last layouts; raises for a layout that doesn't fit the data rank."""
    if layout is None or layout == _CHANNEL_FIRST[nsp]:
        return False
    if layout == _CHANNEL_LAST.get(nsp):
        return True
    raise ShapeError(f"{op}: layout {layout} does not fit {nsp + 2}-D data "
                     f"(use {_CHANNEL_FIRST[nsp]} or {_CHANNEL_LAST[nsp]})")


def _to_first(t, nsp):
    """N, *spatial, C -> N, C, *spatial."""
    return t.movedim(-1, 1)


def _to_last(t, nsp):
    return t.movedim(1, -1).contiguous()


def _check_given(ins, i, want, tuple_style=True):
    if ins[i] is not None and merge_shape(ins[i], want) is None:  # 0 dims: unknown
        shown = _tshape(want) if tuple_style else _sh(want)
        raise ShapeError(f"Shape inconsistent, Provided = {_sh(ins[i])}, inferred shape={shown}")


def _float_types(p, ins, outs):
    """Every input and output shares the first known type (hidden int outputs excluded)."""
    known = next((t for t in list(ins) + list(outs[:1]) if t is not None), None)
    if known is None:
        return ins, outs
    for i, t in enumerate(ins):
        if t is not None and np.dtype(t) != np.dtype(known):
            raise TypeInferError(f"at {i}-th input: expected {np.dtype(known).name}, "
                                 f"got {np.dtype(t).name}")
    return [known] * len(ins), [known] * len(outs)


# --- Convolution ---------------------------------------------------------------------------------
_CONV_PARAMS = (
    Param("kernel", "shape", doc="Convolution kernel size: (w,), (h, w) or (d, h, w)."),
    Param("stride", "shape", (), "Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 "
                                 "for each dimension."),
    Param("dilate", "shape", (), "Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 "
                                 "for each dimension."),
    Param("pad", "shape", (), "Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to "
                              "no padding."),
    Param("num_filter", "int", doc="Convolution filter(channel) number."),
    Param("num_group", "int", 1, "Number of group partitions."),
    Param("workspace", "int", 1024, "Maximum temporary workspace allowed (MB) (ignored)."),
    Param("no_bias", "bool", False, "Whether to disable bias parameter."),
    Param("cudnn_tune", "str", None, "Whether to pick convolution algo by running performance test "
                                     "(ignored).", choices=("fastest", "limited_workspace", "off"),
          optional=True),
    Param("cudnn_off", "bool", False, "Turn off cudnn for this layer (ignored)."),
    Param("layout", "str", None, "Set layout for input, output and weight. Empty for default "
                                 "layout: NCW for 1d, NCHW for 2d and NCDHW for 3d.",
          choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC"), optional=True),
)


def _conv_geometry(p):
    """(nsp, stride, dilate, pad), validated the way MXNet's ConvolutionParam checks them."""
    nsp = len(p.kernel)
    if nsp not in (1, 2, 3):
        raise ShapeError(f"Convolution: kernel must be 1-D, 2-D or 3-D, got {_sh(p.kernel)}")
    stride = _spatial(p, "stride", nsp, 1)
    dilate = _spatial(p, "dilate", nsp, 1)
    pad = _spatial(p, "pad", nsp, 0)
    for name, v in (("kernel", p.kernel), ("stride", stride), ("dilate", dilate)):
        if any(d <= 0 for d in v):
            raise ShapeError(f"Check failed: param_.{name}.Size() > 0U (0 vs. 0) : "
                             f"incorrect {name} size: {_sh(v)}")
    if p.num_filter <= 0:
        raise ShapeError(f"Convolution: num_filter must be positive, got {p.num_filter}")
    if p.num_group <= 0:
        raise ShapeError(f"Convolution: num_group must be positive, got {p.num_group}")
    return nsp, stride, dilate, pad


def _conv_inputs(p):
    return ("data", "weight") if p.no_bias else ("data", "weight", "bias")


def _conv_infer_shape(p, ins, outs):
    ins = list(ins)
    nsp, stride, dilate, pad = _conv_geometry(p)
    data = ins[0]
    if data is None:
        return ins, outs
    data = tuple(data)
    last = _layout_is_last(p.layout, nsp, "Convolution")
    if len(data) != nsp + 2:
        axes = {1: "x", 2: "y-x", 3: "d-y-x"}[nsp]
        raise ShapeError(f"Check failed: dshp.ndim() == {nsp + 2}U ({len(data)} vs. {nsp + 2}) : "
                         f"Input data should be {nsp + 2}D in batch-num_filter-{axes}")
    chan = data[-1] if last else data[1]
    sp = data[1:-1] if last else data[2:]
    g, f = p.num_group, p.num_filter
    if chan % g:
        raise ShapeError(f"Check failed: dshape[1] % param_.num_group == 0U ({chan % g} vs. 0) : "
                         "input num_filter must divide group size")
    if f % g:
        raise ShapeError(f"Check failed: param_.num_filter % param_.num_group == 0U ({f % g} vs. 0)"
                         " : output num_filter must divide group size")
    weight = (f,) + tuple(p.kernel) + (chan // g,) if last else (f, chan // g) + tuple(p.kernel)
    if not chan and ins[1] is not None:  # unknown channels: a given weight completes its own
        weight = merge_shape(weight, ins[1]) or weight
    _check_given(ins, 1, weight)
    ins[1] = weight
    if not p.no_bias:
        _check_given(ins, 2, (f,))
        ins[2] = (f,)
    osp = []
    for h, k, s, d, pd in zip(sp, p.kernel, stride, dilate, pad):
        dk = d * (k - 1) + 1
        if h and dk > h + 2 * pd:
            raise ShapeError(f"Check failed: dilated_ksize <= AddPad(dshape, pad) ({dk} vs. "
                             f"{h + 2 * pd}) : kernel size exceed input")
        osp.append((h + 2 * pd - dk) // s + 1 if h else 0)
    out = (data[0],) + tuple(osp) + (f,) if last else (data[0], f) + tuple(osp)
    return ins, [out]


from .conv_kernels import conv_backward, conv_forward  # noqa: E402

_CONV_FN = {1: TF.conv1d, 2: TF.conv2d, 3: TF.conv3d}


def _conv_forward(p, ins, oc):
    nsp, stride, dilate, pad = _conv_geometry(p)
    x, w = ins[0], ins[1]
    b = None if p.no_bias else ins[2]
    last = _layout_is_last(p.layout, nsp, "Convolution")
    if last:
        x, w = _to_first(x, nsp), _to_first(w, nsp)
    y = conv_forward(_CONV_FN[nsp], x, w, b, stride, pad, dilate, p.num_group, nsp)
    return _to_last(y, nsp) if last else y


def _conv_backward(p, ins, oc):
    """(d data, d weight[, d bias]); see conv_kernels for the formulations used."""
    nsp, stride, dilate, pad = _conv_geometry(p)
    g, x, w = ins
    last = _layout_is_last(p.layout, nsp, "Convolution")
    if last:
        g, x, w = _to_first(g, nsp), _to_first(x, nsp), _to_first(w, nsp)
    dx, dw, db = conv_backward(g, x, w, not p.no_bias, stride, pad, dilate, p.num_group, nsp,
                               p.need_data)
    if dx is None:  # not wanted: a zero-stride stand-in of the right shape, nothing computed
        dx = x.new_zeros(()).expand(x.shape)
    if last:
        dx, dw = _to_last(dx, nsp), _to_last(dw, nsp)
    return (dx, dw) if p.no_bias else (dx, dw, db)


def _conv_backward_infer_shape(p, ins, outs):
    _, data, weight = ins
    outs = [data, weight] + ([] if p.no_bias else [(p.num_filter,)])
    return ins, outs


def _conv_gradient(F, p, ins, outs, ograds):
    wanted = F.wanted
    need = wanted is None or wanted[0]  # (the input batch of the first layer needs none)
    grads = list(F._backward_Convolution(ograds[0], ins[0], ins[1], need_data=need, **p))
    if not need:
        grads[0] = None
    return grads


register(OpDef(
    "Convolution", _conv_forward, _conv_infer_shape, params=_CONV_PARAMS, inputs=_conv_inputs,
    infer_type=_float_types, gradient=_conv_gradient, fresh_output=True,
    doc="Compute *N*-D convolution (cross-correlation) on *(N+2)*-D input.\n\n"
        "For 2-D data of shape ``(batch, channel, height, width)`` and weight of shape\n"
        "``(num_filter, channel/num_group, kh, kw)`` the output has shape\n"
        "``(batch, num_filter, out_h, out_w)`` with\n"
        "``out = floor((x + 2*pad - dilate*(kernel-1) - 1) / stride) + 1``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.ones((1, 1, 3, 3))\n"
        ">>> w = mx.nd.ones((1, 1, 2, 2))\n"
        ">>> mx.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True).shape\n"
        "(1, 1, 2, 2)"))
register(OpDef(
    "_backward_Convolution", _conv_backward, _conv_backward_infer_shape,
    params=_CONV_PARAMS + (Param("need_data", "bool", True, "Whether the data gradient is "
                                 "computed (otherwise the first output is a zero stand-in)."),),
    inputs=("out_grad", "data", "weight"),
    outputs=lambda p: ("data", "weight") if p.no_bias else ("data", "weight", "bias"),
    infer_type=_float_types, fresh_output=True, public=False, doc="Gradient of Convolution."))


# --- Pooling -------------------------------------------------------------------------------------
_POOL_PARAMS = (
    Param("kernel", "shape", (), "Pooling kernel size: (y, x) or (d, y, x)."),
    Param("pool_type", "str", "max", "Pooling type to be applied.",
          choices=("avg", "lp", "max", "sum")),
    Param("global_pool", "bool", False, "Ignore kernel size, do global pooling based on current "
                                        "input feature map."),
    Param("cudnn_off", "bool", False, "Turn off cudnn pooling and use MXNet pooling operator "
                                      "(ignored)."),
    Param("pooling_convention", "str", "valid", "Pooling convention to be applied.",
          choices=("full", "same", "valid")),
    Param("stride", "shape", (), "Stride: for pooling (y, x) or (d, y, x). Defaults to 1 for "
                                 "each dimension."),
    Param("pad", "shape", (), "Pad for pooling: (y, x) or (d, y, x). Defaults to no padding."),
    Param("p_value", "int", None, "Value of p for Lp pooling, can be 1, 2 or 3.", optional=True),
    Param("count_include_pad", "bool", None, "Only used for AvgPool, specify whether to count "
                                             "padding elements for average calculation (default "
                                             "True).", optional=True),
    Param("layout", "str", None, "Set layout for input and output. Empty for default layout: NCW "
                                 "for 1d, NCHW for 2d and NCDHW for 3d.",
          choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC"), optional=True),
)


def _pool_workspace(p) -> bool:
    """Whether MXNet (oneDNN build) gives this Pooling a hidden 'workspace' output.

    neomx keeps the hidden output so graph JSON (``node_row_ptr``) matches MXNet; it holds
    the argmax indices, which the backward op uses.
    """
    return (p.pool_type == "max" and len(p.kernel) in (1, 2, 3)
            and p.layout in (None, "NCW", "NCHW", "NCDHW"))


class _PoolGeom:
    """Window geometry of one Pooling call on channel-first data of spatial shape ``sp``.

    ``lo``/``hi``: zero (or lowest-value) padding added before/after each dim so that every
    output window lies inside the padded array; ``clip_hi``: where MXNet clips a window for
    ``count_include_pad`` (the input end plus the declared pad).
    """

    def __init__(self, p, sp):
        nsp = len(sp)
        if p.global_pool:
            self.kernel, self.stride, self.pad = tuple(sp), (1,) * nsp, (0,) * nsp
            self.out = (1,) * nsp
        else:
            self.kernel = tuple(p.kernel)
            self.stride = _spatial(p, "stride", nsp, 1)
            self.pad = _spatial(p, "pad", nsp, 0)
            self.out = tuple(_pool_out_size(p.pooling_convention, h, k, s, pd)
                             for h, k, s, pd in zip(sp, self.kernel, self.stride, self.pad))
        self.lo, self.hi, self.clip_hi = [], [], []
        for h, k, s, pd, o in zip(sp, self.kernel, self.stride, self.pad, self.out):
            lo = pd
            if not p.global_pool and p.pooling_convention == "same":
                lo = max((o - 1) * s + k - h, 0) // 2
            need = (o - 1) * s + k - h - lo  # padding needed after the input
            self.lo.append(lo)
            self.hi.append(max(need, 0))
            self.clip_hi.append(h + (pd if p.pooling_convention != "same" else max(need, 0)))
        self.sp = tuple(sp)

    def divisor(self, include_pad, dtype, device):
        """Per-window element counts (MXNet's clipping rules), at least 1."""
        div = None
        for d, (h, k, s, o) in enumerate(zip(self.sp, self.kernel, self.stride, self.out)):
            start = torch.arange(o, device=device) * s - self.lo[d]
            end = torch.clamp(start + k, max=self.clip_hi[d])
            if not include_pad:
                end = torch.clamp(end, max=h)
                start = torch.clamp(start, min=0)
            n = torch.clamp(end - start, min=0)
            shape = [1] * len(self.sp)
            shape[d] = o
            n = n.reshape(shape)
            div = n if div is None else div * n
        return torch.clamp(div, min=1).to(dtype)


def _pool_out_size(conv, h, k, s, pd):
    if conv == "valid":
        return (h + 2 * pd - k) // s + 1
    if conv == "full":
        return int(math.ceil((h + 2 * pd - k) / s)) + 1
    return (h + s - 1) // s  # same


def _pool_check(p, data):
    """MXNet's Pooling shape checks; returns (channel-last?, number of spatial dims)."""
    nd = len(data)
    if nd < 3 or nd > 5:
        raise ShapeError(f"Check failed: dshape.ndim() {'>= 3' if nd < 3 else '<= 5'} ({nd} vs. "
                         f"{3 if nd < 3 else 5}) : Pooling: Input data should be  3D in (batch, "
                         "channel, x) Or 4D in (batch, channel, y, x)  Or 5D in (batch, channel, "
                         "d, y, x)")
    nsp = nd - 2
    if p.pool_type == "lp":
        if p.p_value is None:
            raise ShapeError("Check failed: param.p_value.has_value(): Pooling: pool_type 'lp' "
                             "needs p_value")
        if p.p_value not in (1, 2, 3):
            raise ShapeError(f"p value of {p.p_value} is not supported yet...")
    last = _layout_is_last(p.layout, nsp, "Pooling")
    if p.global_pool:
        return last, nsp
    nk = len(p.kernel)
    if nk == 0:
        raise ShapeError(f"Check failed: param.kernel.ndim() == {nsp}U (0 vs. {nsp}) : "
                         "0D pooling not supported")
    if nk != nsp:
        want = {1: "3D in (batch, channel, x)", 2: "4D in (batch, channel, y, x)",
                3: "5D in (batch, channel, d, y, x)"}[nk]
        raise ShapeError(f"Check failed: dshape.ndim() == {nk + 2}U ({nd} vs. {nk + 2}) : "
                         f"Pooling: Input data should be {want}")
    stride = _spatial(p, "stride", nsp, 1)
    pad = _spatial(p, "pad", nsp, 0)
    if any(s <= 0 for s in stride) or any(k <= 0 for k in p.kernel):
        raise ShapeError(f"value {_sh(stride)}for Parameter stride is invalid, the input shape "
                         "must be nonzero in all dimensions")
    if p.pooling_convention == "same":
        if nsp != 1:
            raise ShapeError(f"Check failed: dshape.ndim() == 3U ({nd} vs. 3) : Pooling: Input "
                             "data should be 3D in (batch, channel, x). Currently 'same' supports "
                             "Max Pooling 1-D")
        if any(pad):
            raise ShapeError("Check failed: param.pad[0] == 0: Same pooling convention disables "
                             "the use of pad parameter.")
    sp = data[1:-1] if last else data[2:]
    for h, k, pd in zip(sp, p.kernel, pad):
        if h and k > h + 2 * pd:
            raise ShapeError(f"Check failed: param.kernel[0] <= dshape[2] + 2 * param.pad[0]: "
                             f"kernel size ({k}) exceeds input ({h} padded to {h + 2 * pd})")
    return last, nsp


def _pool_infer_shape(p, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    data = tuple(data)
    last, nsp = _pool_check(p, data)
    sp = data[1:-1] if last else data[2:]
    if any(h == 0 for h in sp):
        return ins, outs
    geo = _PoolGeom(p, sp)
    out = (data[0],) + geo.out + (data[-1],) if last else data[:2] + geo.out
    return [data], [out] * (2 if _pool_workspace(p) else 1)


def _pool_infer_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    if t is None:
        return ins, outs
    return [t], [t] + ([np.int64] if _pool_workspace(p) else [])


_MAXPOOL = {1: TF.max_pool1d, 2: TF.max_pool2d, 3: TF.max_pool3d}
_CL_MIN_CHANNELS = 8
_CL_MAX_ELEMENTS = 4 << 20


def _max_pool_2x2(x, out, need_indices):
    """2x2 max pooling with stride 2 (CNNs' most common pooling) on large NCHW CPU tensors: the
    maximum of the four strided quarter views, three elementwise passes over quarter-size data
    (ATen's NCHW kernel took ~2.5x longer at 32x64x56x56 with the indices, ~20x without; its
    channels-last one needs two layout conversions). The argmax indices, as ATen's (flat ``h * W + w``, the first maximum in
    row-major window order), come from the same comparisons."""
    oh, ow = out
    a = x[:, :, 0:2 * oh:2, 0:2 * ow:2]
    b = x[:, :, 0:2 * oh:2, 1:2 * ow:2]
    c = x[:, :, 1:2 * oh:2, 0:2 * ow:2]
    d = x[:, :, 1:2 * oh:2, 1:2 * ow:2]
    ab = torch.maximum(a, b)
    cd = torch.maximum(c, d)
    y = torch.maximum(ab, cd)
    if not need_indices:
        return y, None
    w = x.shape[3]
    dev = x.device
    base = ((torch.arange(oh, device=dev) * (2 * w))[:, None]
            + (torch.arange(ow, device=dev) * 2)[None, :])
    base = base.to(torch.int32)
    # offset in the window: top = (a < b), bottom = w + (c < d), the top row unless ab < cd
    # (ties: the first); int32 arithmetic on bools, one int64 result (torch.where with scalar
    # branches was ~10x slower on the CPU). (NaN: ATen keeps a window's first NaN; here a later
    # one may win.)
    top = torch.lt(a, b).to(torch.int32)
    off = torch.lt(c, d).to(torch.int32).add_(w).sub_(top).mul_(torch.lt(ab, cd)).add_(top)
    return y, off.add_(base).to(torch.int64)


def _aten_pads(geo) -> bool:
    """Whether ATen's 2-D max pooling, padding by itself, gives MXNet's windows: pads of at
    most half a window, and the same output size (floor mode)."""
    return all(lo <= k // 2 and (h + 2 * lo - k) // s + 1 == o
               for h, k, s, lo, o in zip(geo.sp, geo.kernel, geo.stride, geo.lo, geo.out))


def _flat(t):
    """``t``'s elements as one vector, without a copy when it is dense in memory (contiguous or
    channels-last: reductions over a permuted view take ATen's slow strided path, ~4-9x)."""
    if t.dim() == 4 and not t.is_contiguous() and t.is_contiguous(memory_format=torch.channels_last):
        return t.permute(0, 2, 3, 1).reshape(-1)
    return t.reshape(-1)


def _pool_compute(p, x, need_indices=False):
    """Pooling on channel-first ``x``; returns (output, argmax indices or None): into the
    unpadded input where ATen pads by itself (``_aten_pads``), else into the padded input."""
    nsp = x.dim() - 2
    geo = _PoolGeom(p, tuple(x.shape[2:]))
    pads = []
    for lo, hi in zip(reversed(geo.lo), reversed(geo.hi)):
        pads += [lo, hi]
    crop = (slice(None), slice(None)) + tuple(slice(0, o) for o in geo.out)
    if p.pool_type == "max":
        # MXNet starts each window at the lowest finite value and a NaN never wins its
        # comparisons: pads never win, and a window of padding, -inf or NaN gives that value.
        floating = x.is_floating_point()
        low = torch.finfo(x.dtype).min if floating else torch.iinfo(x.dtype).min
        native = nsp == 2 and any(geo.lo) and _aten_pads(geo)
        xp = x if native or not any(pads) else TF.pad(x, pads, value=low)
        if (nsp == 2 and not native and geo.kernel == (2, 2) and geo.stride == (2, 2)
                and xp.device.type == "cpu" and xp.numel() > _CL_MAX_ELEMENTS and floating
                and xp.is_contiguous()):
            y, idx = _max_pool_2x2(xp, geo.out, need_indices)
        else:
            if (nsp == 2 and xp.device.type == "cpu" and xp.shape[1] >= _CL_MIN_CHANNELS
                    and xp.numel() <= _CL_MAX_ELEMENTS):
                # ATen's channels-last max pooling is ~5x faster on the CPU than its NCHW
                # kernel (the same maxima and argmax indices); the result stays channels-last,
                # which the next convolution wants anyway. For large inputs the conversion and
                # the channels-last tensors downstream cost more than they save (LeNet at batch
                # 1024: 10% slower step; at 256: 4% faster); inputs already channels-last
                # (ResNet's) keep their layout at any size.
                xp = xp.contiguous(memory_format=torch.channels_last)
            # symmetric pads within half a window that give MXNet's output size are ATen's own
            # (no padded copy; argmax indices into the unpadded input, see _pool_backward)
            pad = list(geo.lo) if native else 0
            y, idx = _MAXPOOL[nsp](xp, geo.kernel, geo.stride, pad, return_indices=True)
            if not native:
                y, idx = y[crop], idx[crop]
        if floating and y.numel() and y.device.type != "cpu":
            # (no host read on accelerators, which would wait for the device at every pooling:
            # -inf windows take the lowest value; NaN propagates, as ATen's CUDA kernel has it)
            y = y.clamp_(min=low)
        elif floating and y.numel():
            least = torch.amin(_flat(y)).item()  # (one pass, one read; NaN if any)
            if least != least:  # ATen's kernels propagate NaN: again without
                return _pool_compute(p, x.nan_to_num(nan=float("-inf"), posinf=float("inf"),
                                                     neginf=float("-inf")), need_indices)
            if least < low:
                # windows of -inf alone. (Where such a window also covers padding, MXNet's
                # gradient goes to the padding, ATen's indices to its first input cell.)
                y = y.clamp_(min=low)
        return y, (idx if need_indices else None)
    if p.pool_type == "lp" and p.p_value != 1:
        x = x * x if p.p_value == 2 else x * x * x
    xp = TF.pad(x, pads) if any(pads) else x
    for d in range(nsp):
        xp = xp.unfold(2 + d, geo.kernel[d], geo.stride[d])
    y = xp.sum(dim=tuple(range(-nsp, 0)))[crop]
    if p.pool_type == "avg":
        include = p.count_include_pad is None or p.count_include_pad
        y = y / geo.divisor(include, y.dtype, y.device)
    elif p.pool_type == "lp" and p.p_value == 2:
        y = torch.sqrt(y)
    elif p.pool_type == "lp" and p.p_value == 3:
        y = torch.sign(y) * torch.abs(y).pow(1.0 / 3)
    return y, None


def _pool_forward(p, ins, oc):
    x = ins[0]
    last = _layout_is_last(p.layout, x.dim() - 2, "Pooling")
    if last:
        x = _to_first(x, x.dim() - 2)
    ws = _pool_workspace(p)
    y, idx = _pool_compute(p, x, need_indices=ws)
    if last:
        y = _to_last(y, x.dim() - 2)
    return (y, idx) if ws else y


def _pool_backward_inputs(p):
    return ("out_grad", "data", "workspace") if _pool_workspace(p) else ("out_grad", "data")


def _pool_backward(p, ins, oc):
    """Max pooling with a workspace scatters into the argmax cells; every other kind replays
    the forward under torch autograd (the first maximum wins, as in MXNet)."""
    g, x = ins[0], ins[1]
    if _pool_workspace(p):
        idx = ins[2]
        geo = _PoolGeom(p, tuple(x.shape[2:]))
        if x.dim() == 4 and _aten_pads(geo):
            # 2-D windows ATen pads itself: its own kernel (the same sums as the scatter below)
            fmt = (torch.channels_last if x.is_contiguous(memory_format=torch.channels_last)
                   and not x.is_contiguous() else torch.contiguous_format)
            return torch.ops.aten.max_pool2d_with_indices_backward(  # (fast with one format)
                g.contiguous(memory_format=fmt), x.contiguous(memory_format=fmt),
                list(geo.kernel), list(geo.stride), list(geo.lo), [1, 1], False, idx)
        padded = [h + lo + hi for h, lo, hi in zip(geo.sp, geo.lo, geo.hi)]
        n, c = x.shape[:2]
        gx = torch.zeros((n, c, math.prod(padded)), dtype=g.dtype, device=g.device)
        gx.scatter_add_(2, idx.reshape(n, c, -1), g.reshape(n, c, -1))
        gx = gx.reshape((n, c) + tuple(padded))
        crop = tuple(slice(lo, lo + h) for lo, h in zip(geo.lo, geo.sp))
        return gx[(slice(None), slice(None)) + crop].contiguous()
    nsp = x.dim() - 2
    last = _layout_is_last(p.layout, nsp, "Pooling")
    with torch.enable_grad():
        xg = x.detach().requires_grad_(True)
        xin = _to_first(xg, nsp) if last else xg
        y, _ = _pool_compute(p, xin)
        if last:
            y = _to_last(y, nsp)
        (gx,) = torch.autograd.grad(y, xg, g)
    return gx.clone() if gx.data_ptr() == g.data_ptr() else gx  # fresh: never the input itself


def _pool_gradient(F, p, ins, outs, ograds):
    extra = (outs[1],) if _pool_workspace(p) else ()
    return [F._backward_Pooling(ograds[0], ins[0], *extra, **p)]


register(OpDef(
    "Pooling", _pool_forward, _pool_infer_shape, params=_POOL_PARAMS, infer_type=_pool_infer_type,
    num_hidden_outputs=lambda p: 1 if _pool_workspace(p) else 0, gradient=_pool_gradient,
    doc="Performs pooling on the input.\n\n"
        "``pool_type``: max, avg, sum or lp (``p_value`` 1, 2 or 3). Output size per spatial dim:\n"
        "valid ``floor((x + 2*pad - kernel) / stride) + 1``; full ``ceil(...) + 1``; same (1-D\n"
        "only) ``ceil(x / stride)``; ``global_pool`` reduces every spatial dim to 1. ``stride``\n"
        "defaults to 1. Max pooling never picks a pad; average pooling divides by the window\n"
        "clipped to ``[-pad, x + pad)`` (``count_include_pad``) or by its real cells.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))\n"
        ">>> mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2)).asnumpy().ravel().tolist()\n"
        "[5.0, 7.0, 13.0, 15.0]"))
register(OpDef(
    "_backward_Pooling", _pool_backward, lambda p, ins, outs: (ins, [ins[1]]),
    params=_POOL_PARAMS, inputs=_pool_backward_inputs, fresh_output=True,
    infer_type=lambda p, ins, outs: (ins, [ins[0] if ins[0] is not None else ins[1]]),
    public=False, doc="Gradient of Pooling."))
