"""Region-based detection layers of ``mx.nd.contrib``: ``DeformableConvolution``,
``ModulatedDeformableConvolution``, ``PSROIPooling``, ``DeformablePSROIPooling``, ``Proposal`` and
``MultiProposal``.

Semantics and parameters follow MXNet 1.9.1 (``src/operator/contrib/deformable_convolution``,
``modulated_deformable_convolution``, ``psroi_pooling``, ``deformable_psroi_pooling``,
``proposal``, ``multi_proposal``), including their bilinear sampling rules at the borders (the
deformable convolution of DCN v1 samples inside ``[0, H) x [0, W)`` and clamps the far edge; the
modulated one of DCN v2 samples in ``(-1, H) x (-1, W)`` with zeros outside). The kernels are
vectorised torch (gathers and one grouped matrix product); gradients replay them under torch
autograd. Proposal and MultiProposal have zero gradients, as in MXNet.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .nn_layers import replay_op
from .registry import OpDef, Param, ShapeError, register, zero_gradient


def _check(cond, text):
    if not cond:
        raise ShapeError("Check failed: " + text)


# --- bilinear sampling ---------------------------------------------------------------------------
def _gather2d(img, h, w):
    """``img`` (B, C, H, W) at integer positions ``h``, ``w`` (B, P), zeros where outside."""
    B, C, H, W = img.shape
    ok = (h >= 0) & (h < H) & (w >= 0) & (w < W)
    idx = (h.clamp(0, H - 1) * W + w.clamp(0, W - 1)).long()
    vals = torch.gather(img.reshape(B, C, H * W), 2, idx[:, None, :].expand(B, C, idx.shape[1]))
    return vals * ok[:, None, :].to(img.dtype)


def _bilinear(img, h, w, mode):
    """Sample ``img`` (B, C, H, W) at real positions ``h``, ``w`` (B, P) -> (B, C, P).

    ``mode`` 'dcn1': MXNet's deformable_im2col (inside [0, H) x [0, W) only; a position at or
    past the last row/column uses that row/column); 'dcn2': modulated_deformable_im2col (inside
    (-1, H) x (-1, W), corners outside read zero)."""
    H, W = img.shape[2], img.shape[3]
    if mode == "dcn1":
        valid = (h >= 0) & (w >= 0) & (h < H) & (w < W)
        hl, wl = torch.floor(h), torch.floor(w)
        hl_edge, wl_edge = hl >= H - 1, wl >= W - 1
        h = torch.where(hl_edge, torch.full_like(h, H - 1), h)
        w = torch.where(wl_edge, torch.full_like(w, W - 1), w)
        hl = torch.where(hl_edge, torch.full_like(hl, H - 1), hl)
        wl = torch.where(wl_edge, torch.full_like(wl, W - 1), wl)
        hh = torch.where(hl_edge, hl, hl + 1)
        wh = torch.where(wl_edge, wl, wl + 1)
    else:
        valid = (h > -1) & (w > -1) & (h < H) & (w < W)
        hl, wl = torch.floor(h), torch.floor(w)
        hh, wh = hl + 1, wl + 1
    lh, lw = h - hl, w - wl
    v1, v2 = _gather2d(img, hl, wl), _gather2d(img, hl, wh)
    v3, v4 = _gather2d(img, hh, wl), _gather2d(img, hh, wh)
    lh, lw = lh[:, None, :], lw[:, None, :]
    val = (1 - lh) * (1 - lw) * v1 + (1 - lh) * lw * v2 + lh * (1 - lw) * v3 + lh * lw * v4
    return val * valid[:, None, :].to(img.dtype)


# --- deformable convolution ----------------------------------------------------------------------
def _dconv_params(modulated):
    extra = () if modulated else ()
    return (
        Param("kernel", "shape", doc="Convolution kernel size: (h, w) or (d, h, w)"),
        Param("stride", "shape", (), "Convolution stride: (h, w) or (d, h, w). Defaults to 1 for "
                                     "each dimension."),
        Param("dilate", "shape", (), "Convolution dilate: (h, w) or (d, h, w). Defaults to 1 for "
                                     "each dimension."),
        Param("pad", "shape", (), "Zero pad for convolution: (h, w) or (d, h, w). Defaults to no "
                                  "padding."),
        Param("num_filter", "int", doc="Convolution filter(channel) number"),
        Param("num_group", "int", 1, "Number of group partitions."),
        Param("num_deformable_group", "int", 1, "Number of deformable group partitions."),
        Param("workspace", "int", 1024, "Maximum temperal workspace allowed for convolution "
                                        "(MB)."),
        Param("no_bias", "bool", False, "Whether to disable bias parameter."),
    ) + ((Param("im2col_step", "int", 64, "Maximum number of images per im2col computation; The "
                                          "total batch size should be divisable by this value or "
                                          "smaller than this value; if you face out of memory "
                                          "problem, you can try to use a smaller value here."),)
         if modulated else ()) + (
        Param("layout", "str", None, "Set layout for input, output and weight. Empty for default "
                                     "layout: NCW for 1d, NCHW for 2d and NCDHW for 3d.",
              choices=("NCDHW", "NCHW", "NCW"), optional=True),) + extra


def _geom(p):
    k = tuple(p.kernel)
    n = len(k)
    stride = tuple(p.stride) or (1,) * n
    dilate = tuple(p.dilate) or (1,) * n
    pad = tuple(p.pad) or (0,) * n
    return k, stride, dilate, pad


def _dconv_inputs(modulated):
    def names(p):
        base = ("data", "offset") + (("mask",) if modulated else ()) + ("weight",)
        return base if p.no_bias else base + ("bias",)
    return names


def _dconv_shape(modulated):
    def infer(p, ins, outs):
        ins = list(ins)
        k, s, d, pd = _geom(p)
        _check(len(k) == 2, f"Only 2D deformable convolution is supported, got kernel {k}")
        data = ins[0]
        if data is None:
            return ins, outs
        _check(len(data) == 4, f"Input data should be 4D in batch-num_filter-y-x, got {data}")
        n, c, h, w = data
        g, dg = p.num_group, p.num_deformable_group
        _check(c % g == 0, "input num_filter must divide group size")
        _check(p.num_filter % g == 0, "output num_filter must divide group size")
        _check(c % dg == 0, "input num_filter must divide deformable group size")
        oh = (h + 2 * pd[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
        ow = (w + 2 * pd[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
        kk = k[0] * k[1]
        want = [(n, c, h, w), (n, 2 * kk * dg, oh, ow)]
        if modulated:
            want.append((n, kk * dg, oh, ow))
        want.append((p.num_filter, c // g) + k)
        if not p.no_bias:
            want.append((p.num_filter,))
        for i, shp in enumerate(want):
            if ins[i] is not None and 0 not in ins[i] and tuple(ins[i]) != shp:
                raise ShapeError(f"Shape inconsistent, Provided = [{','.join(map(str, ins[i]))}],"
                                 f" inferred shape=[{','.join(map(str, shp))}]")
            ins[i] = shp
        return ins, [(n, p.num_filter, oh, ow)]
    return infer


def _dconv_compute(modulated):
    def compute(p, ins):
        k, s, d, pd = _geom(p)
        x, off = ins[0], ins[1]
        mask = ins[2] if modulated else None
        wt = ins[3 if modulated else 2]
        bias = None if p.no_bias else ins[4 if modulated else 3]
        N, C, H, W = x.shape
        g, dg = p.num_group, p.num_deformable_group
        kk = k[0] * k[1]
        oh, ow = off.shape[2], off.shape[3]
        dev, dt = x.device, x.dtype
        ki = torch.arange(k[0], device=dev, dtype=dt).repeat_interleave(k[1]) * d[0]
        kj = torch.arange(k[1], device=dev, dtype=dt).repeat(k[0]) * d[1]
        base_h = (torch.arange(oh, device=dev, dtype=dt) * s[0] - pd[0])
        base_w = (torch.arange(ow, device=dev, dtype=dt) * s[1] - pd[1])
        off = off.reshape(N, dg, kk, 2, oh, ow)
        ph = base_h[None, None, None, :, None] + ki[None, None, :, None, None] + off[:, :, :, 0]
        pw = base_w[None, None, None, None, :] + kj[None, None, :, None, None] + off[:, :, :, 1]
        L = kk * oh * ow
        img = x.reshape(N * dg, C // dg, H, W)
        cols = _bilinear(img, ph.reshape(N * dg, L), pw.reshape(N * dg, L),
                         "dcn2" if modulated else "dcn1")  # (N*dg, C/dg, kk*oh*ow)
        cols = cols.reshape(N, dg, C // dg, kk, oh * ow)
        if modulated:
            cols = cols * mask.reshape(N, dg, 1, kk, oh * ow)
        cols = cols.reshape(N, g, (C // g) * kk, oh * ow)
        wmat = wt.reshape(g, p.num_filter // g, (C // g) * kk)
        out = torch.einsum("gfk,ngkl->ngfl", wmat, cols).reshape(N, p.num_filter, oh, ow)
        if bias is not None:
            out = out + bias[None, :, None, None]
        return out
    return compute


for _mod in (False, True):
    _name = "_contrib_ModulatedDeformableConvolution" if _mod else "_contrib_DeformableConvolution"
    _compute = _dconv_compute(_mod)
    replay_op(
        _name, _compute, (lambda c: (lambda p, ins, oc: c(p, ins)))(_compute),
        _dconv_shape(_mod), params=_dconv_params(_mod), inputs=_dconv_inputs(_mod),
        hint=_name[len("_contrib_"):].lower(),
        doc=("Modulated deformable convolution (DCN v2): the offsets move each kernel tap, the "
             "mask scales it; " if _mod else
             "Deformable convolution (DCN v1): the offsets move each kernel tap; ") +
            "``offset`` holds (dy, dx) per kernel position and deformable group, shaped "
            "(N, 2*kh*kw*num_deformable_group, out_h, out_w)" +
            (", ``mask`` (N, kh*kw*num_deformable_group, out_h, out_w)." if _mod else "."))


def _c_round(x):
    """C's round(): halves away from zero (torch.round goes to even)."""
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


# --- PSROIPooling --------------------------------------------------------------------------------
_PSROI_PARAMS = (
    Param("spatial_scale", "float", doc="Ratio of input feature map height (or w) to raw image "
                                        "height (or w). Equals the reciprocal of total stride in "
                                        "convolutional layers"),
    Param("output_dim", "int", doc="fix output dim"),
    Param("pooled_size", "int", doc="fix pooled size"),
    Param("group_size", "int", 0, "fix group size"),
)


def _group(p):
    return p.group_size if p.group_size > 0 else p.pooled_size


def _psroi_shape(p, ins, outs):
    data, rois = ins
    if data is None or rois is None:
        return ins, outs
    _check(len(data) == 4, "data should be a 4D tensor")
    _check(len(rois) == 2, "rois should be a 2D tensor of shape [batch, 5]")
    _check(rois[1] == 5, "rois should be a 2D tensor of shape [batch, 5]")
    g = _group(p)
    _check(data[1] == p.output_dim * g * g,
           f"input channels ({data[1]}) must equal output_dim * group_size^2 "
           f"({p.output_dim * g * g})")
    return ins, [(rois[0], p.output_dim, p.pooled_size, p.pooled_size)]


def _psroi_compute(p, ins):
    data, rois = ins
    N, C, H, W = data.shape
    P, G, od = p.pooled_size, _group(p), p.output_dim
    dev, dt = data.device, data.dtype
    b = rois[:, 0].long()
    r = _c_round(rois[:, 1:5])
    sw, sh = r[:, 0] * p.spatial_scale, r[:, 1] * p.spatial_scale
    ew, eh = (r[:, 2] + 1) * p.spatial_scale, (r[:, 3] + 1) * p.spatial_scale
    rw = torch.clamp(ew - sw, min=0.1)
    rh = torch.clamp(eh - sh, min=0.1)
    bh, bw = rh / P, rw / P
    idx = torch.arange(P, device=dev, dtype=dt)
    hs = torch.floor(idx[None] * bh[:, None] + sh[:, None]).clamp(0, H)
    he = torch.ceil((idx[None] + 1) * bh[:, None] + sh[:, None]).clamp(0, H)
    ws = torch.floor(idx[None] * bw[:, None] + sw[:, None]).clamp(0, W)
    we = torch.ceil((idx[None] + 1) * bw[:, None] + sw[:, None]).clamp(0, W)
    hh = torch.arange(H, device=dev, dtype=dt)
    ww = torch.arange(W, device=dev, dtype=dt)
    mh = ((hh[None, None] >= hs[..., None]) & (hh[None, None] < he[..., None])).to(dt)
    mw = ((ww[None, None] >= ws[..., None]) & (ww[None, None] < we[..., None])).to(dt)
    area = (he - hs)[:, :, None] * (we - ws)[:, None, :]  # (R, P, P)
    gi = torch.clamp(torch.floor(idx * G / P), 0, G - 1).long()
    x = data[b].reshape(-1, od, G, G, H, W)[:, :, gi][:, :, :, gi]  # (R, od, P, P, H, W)
    s = torch.einsum("rcpqhw,rph,rqw->rcpq", x, mh, mw)
    empty = area <= 0
    return torch.where(empty[:, None], torch.zeros_like(s), s / torch.where(
        empty, torch.ones_like(area), area)[:, None])


replay_op(
    "_contrib_PSROIPooling", _psroi_compute, lambda p, ins, oc: _psroi_compute(p, ins),
    _psroi_shape, params=_PSROI_PARAMS, inputs=("data", "rois"), no_grad=(1,), zero_grad=True,
    hint="psroipooling",
    doc="Position-sensitive ROI pooling (R-FCN): bin (ph, pw) of output channel c averages "
        "channel (c * group_size + gh) * group_size + gw of ``data`` over the bin. ``rois`` "
        "(R, 5) are [batch_index, x1, y1, x2, y2] in image coordinates.")


# --- DeformablePSROIPooling ----------------------------------------------------------------------
_DPSROI_PARAMS = (
    Param("spatial_scale", "float", doc="Ratio of input feature map height (or w) to raw image "
                                        "height (or w). Equals the reciprocal of total stride in "
                                        "convolutional layers"),
    Param("output_dim", "int", doc="fix output dim"),
    Param("group_size", "int", doc="fix group size"),
    Param("pooled_size", "int", doc="fix pooled size"),
    Param("part_size", "int", 0, "fix part size"),
    Param("sample_per_part", "int", 1, "fix samples per part"),
    Param("trans_std", "float", 0.0, "fix transition std"),
    Param("no_trans", "bool", False, "Whether to disable trans parameter."),
)


def _dpsroi_inputs(p):
    return ("data", "rois") if p.no_trans else ("data", "rois", "trans")


def _dpsroi_shape(p, ins, outs):
    data, rois = ins[0], ins[1]
    if data is None or rois is None:
        return ins, outs
    _check(len(data) == 4, "data should be a 4D tensor")
    _check(len(rois) == 2 and rois[1] == 5, "rois should be a 2D tensor of shape [batch, 5]")
    out = (rois[0], p.output_dim, p.pooled_size, p.pooled_size)
    return ins, [out, out]


def _dpsroi_compute(p, ins, with_count=False):
    data, rois = ins[0], ins[1]
    trans = None if p.no_trans else ins[2]
    N, C, H, W = data.shape
    P, G, od, S = p.pooled_size, p.group_size, p.output_dim, p.sample_per_part
    part = p.part_size if p.part_size > 0 else P
    dev, dt = data.device, data.dtype
    R = rois.shape[0]
    b = rois[:, 0].long()
    r = _c_round(rois[:, 1:5])
    sw, sh = r[:, 0] * p.spatial_scale - 0.5, r[:, 1] * p.spatial_scale - 0.5
    ew, eh = (r[:, 2] + 1) * p.spatial_scale - 0.5, (r[:, 3] + 1) * p.spatial_scale - 0.5
    rw, rh = torch.clamp(ew - sw, min=0.1), torch.clamp(eh - sh, min=0.1)
    bh, bw = rh / P, rw / P
    sbh, sbw = bh / S, bw / S
    idx = torch.arange(P, device=dev)
    part_i = torch.floor(idx.to(dt) / P * part).long()
    if trans is None:
        tx = torch.zeros(R, od, P, P, device=dev, dtype=dt)
        ty = tx
    else:
        ncls = trans.shape[1] // 2
        per_cls = od // ncls
        cls = torch.arange(od, device=dev) // per_cls
        t = trans.reshape(R, ncls, 2, part, part)[:, cls]  # (R, od, 2, part, part)
        t = t[:, :, :, part_i][:, :, :, :, part_i] * p.trans_std  # (R, od, 2, P, P)
        tx, ty = t[:, :, 0], t[:, :, 1]
    pidx = idx.to(dt)
    wstart = pidx[None, None, None, :] * bw[:, None, None, None] + sw[:, None, None, None] \
        + tx * rw[:, None, None, None]
    hstart = pidx[None, None, :, None] * bh[:, None, None, None] + sh[:, None, None, None] \
        + ty * rh[:, None, None, None]
    si = torch.arange(S, device=dev, dtype=dt)
    # samples: (R, od, P, P, S, S)
    hs = hstart[..., None, None] + si[:, None] * sbh[:, None, None, None, None, None]
    ws = wstart[..., None, None] + si[None, :] * sbw[:, None, None, None, None, None]
    hs, ws = hs.expand(R, od, P, P, S, S), ws.expand(R, od, P, P, S, S)
    ok = (ws >= -0.5) & (ws <= W - 0.5) & (hs >= -0.5) & (hs <= H - 0.5)
    hc, wc = hs.clamp(0, H - 1), ws.clamp(0, W - 1)
    gi = torch.clamp(torch.floor(pidx * G / P), 0, G - 1).long()
    chan = ((torch.arange(od, device=dev)[:, None, None] * G + gi[None, :, None]) * G
            + gi[None, None, :])  # (od, P, P)
    y1, x1 = torch.floor(hc), torch.floor(wc)
    y2, x2 = torch.ceil(hc), torch.ceil(wc)
    dy, dx = hc - y1, wc - x1
    flat = data.reshape(N, C, H * W)
    base = (b[:, None, None, None] * C + chan[None]) * (H * W)  # (R, od, P, P)
    src = flat.reshape(-1)

    def at(y, x):
        return src[(base[..., None, None] + (y * W + x).long()).reshape(-1)].reshape(y.shape)

    val = ((1 - dx) * (1 - dy) * at(y1, x1) + (1 - dx) * dy * at(y2, x1)
           + dx * (1 - dy) * at(y1, x2) + dx * dy * at(y2, x2))
    okf = ok.to(dt)
    total = (val * okf).sum((-1, -2))
    count = okf.sum((-1, -2))
    out = torch.where(count > 0, total / torch.clamp(count, min=1), torch.zeros_like(total))
    return (out, count) if with_count else out


replay_op(
    "_contrib_DeformablePSROIPooling", _dpsroi_compute,
    lambda p, ins, oc: _dpsroi_compute(p, ins, with_count=True), _dpsroi_shape,
    params=_DPSROI_PARAMS, inputs=_dpsroi_inputs, no_grad=(1,), zero_grad=True,
    outputs=("output",), num_hidden_outputs=1, hint="deformablepsroipooling",
    doc="Deformable position-sensitive ROI pooling: each bin of PSROIPooling moved by "
        "``trans`` (R, 2*num_classes, part_size, part_size) times ``trans_std`` and the ROI size, "
        "averaging ``sample_per_part``^2 bilinear samples.")


# --- Proposal / MultiProposal --------------------------------------------------------------------
_PROPOSAL_PARAMS = (
    Param("rpn_pre_nms_top_n", "int", 6000, "Number of top scoring boxes to keep before applying "
                                            "NMS to RPN proposals"),
    Param("rpn_post_nms_top_n", "int", 300, "Number of top scoring boxes to keep after applying "
                                            "NMS to RPN proposals"),
    Param("threshold", "float", 0.7, "NMS value, below which to suppress."),
    Param("rpn_min_size", "int", 16, "Minimum height or width in proposal"),
    Param("scales", "str", "(4,8,16,32)", "Used to generate anchor windows by enumerating scales"),
    Param("ratios", "str", "(0.5,1,2)", "Used to generate anchor windows by enumerating ratios"),
    Param("feature_stride", "int", 16, "The size of the receptive field each unit in the "
                                       "convolution layer of the rpn,for example the product of "
                                       "all stride's prior to this layer."),
    Param("output_score", "bool", False, "Add score to outputs"),
    Param("iou_loss", "bool", False, "Usage of IoU Loss"),
)


def _floats(v):
    import ast
    if isinstance(v, str):
        v = ast.literal_eval(v.strip())
    if isinstance(v, (int, float)):
        v = (v,)
    return tuple(float(x) for x in v)


def _anchors(p):
    """MXNet's GenerateAnchors (ratios outer, scales inner) around [0, 0, stride-1, stride-1]."""
    f32 = np.float32
    base = [0.0, 0.0, p.feature_stride - 1.0, p.feature_stride - 1.0]
    out = []
    w = f32(base[2] - base[0] + 1.0)
    h = f32(base[3] - base[1] + 1.0)
    xc, yc = f32(base[0] + 0.5 * (w - 1.0)), f32(base[1] + 0.5 * (h - 1.0))
    for ratio in _floats(p.ratios):
        for scale in _floats(p.scales):
            size = f32(w * h)
            size_ratios = f32(math.floor(f32(size / f32(ratio))))
            new_w = f32(math.floor(f32(math.sqrt(size_ratios)) + f32(0.5))) * f32(scale)
            new_h = f32(math.floor(f32(new_w / f32(scale) * f32(ratio)) + f32(0.5))) * f32(scale)
            out.append([xc - f32(0.5) * (new_w - 1), yc - f32(0.5) * (new_h - 1),
                        xc + f32(0.5) * (new_w - 1), yc + f32(0.5) * (new_h - 1)])
    return np.array(out, dtype=np.float32)


def _proposal_one(p, cls, bbox, info):
    """The proposals (post_nms, 4) and scores (post_nms,) of one image."""
    dev = cls.device
    A = cls.shape[0] // 2
    H, W = cls.shape[1], cls.shape[2]
    stride = p.feature_stride
    anchors = torch.from_numpy(_anchors(p)).to(dev)
    _check(anchors.shape[0] == A, f"num_anchors == param_.ratios.ndim() * param_.scales.ndim() "
                                  f"({A} vs. {anchors.shape[0]}) ")
    sy = torch.arange(H, device=dev, dtype=torch.float32) * stride
    sx = torch.arange(W, device=dev, dtype=torch.float32) * stride
    # index = h * (W * A) + w * A + a
    boxes = anchors[None, None] + torch.stack([sx[None, :].expand(H, W), sy[:, None].expand(H, W),
                                               sx[None, :].expand(H, W), sy[:, None].expand(H, W)],
                                              -1)[:, :, None, :]
    boxes = boxes.reshape(-1, 4)
    scores = cls[A:].permute(1, 2, 0).reshape(-1).float()
    d = bbox.reshape(A, 4, H, W).permute(2, 3, 0, 1).reshape(-1, 4).float()
    im_h, im_w, im_scale = float(info[0]), float(info[1]), float(info[2])
    if p.iou_loss:
        x1, y1 = boxes[:, 0] + d[:, 0], boxes[:, 1] + d[:, 1]
        x2, y2 = boxes[:, 2] + d[:, 2], boxes[:, 3] + d[:, 3]
    else:
        bw = boxes[:, 2] - boxes[:, 0] + 1.0
        bh = boxes[:, 3] - boxes[:, 1] + 1.0
        cx = boxes[:, 0] + 0.5 * (bw - 1.0)
        cy = boxes[:, 1] + 0.5 * (bh - 1.0)
        pcx, pcy = d[:, 0] * bw + cx, d[:, 1] * bh + cy
        pw, ph = torch.exp(d[:, 2]) * bw, torch.exp(d[:, 3]) * bh
        x1, y1 = pcx - 0.5 * (pw - 1.0), pcy - 0.5 * (ph - 1.0)
        x2, y2 = pcx + 0.5 * (pw - 1.0), pcy + 0.5 * (ph - 1.0)
    x1, x2 = x1.clamp(0, im_w - 1.0), x2.clamp(0, im_w - 1.0)
    y1, y2 = y1.clamp(0, im_h - 1.0), y2.clamp(0, im_h - 1.0)
    real_h, real_w = int(im_h / stride), int(im_w / stride)
    hh = torch.arange(H, device=dev)[:, None, None].expand(H, W, A).reshape(-1)
    ww = torch.arange(W, device=dev)[None, :, None].expand(H, W, A).reshape(-1)
    scores = torch.where((hh >= real_h) | (ww >= real_w), torch.full_like(scores, -1.0), scores)
    # FilterBox
    min_size = p.rpn_min_size * im_scale
    small = ((x2 - x1 + 1) < min_size) | ((y2 - y1 + 1) < min_size)
    half = min_size / 2
    x1, y1 = torch.where(small, x1 - half, x1), torch.where(small, y1 - half, y1)
    x2, y2 = torch.where(small, x2 + half, x2), torch.where(small, y2 + half, y2)
    scores = torch.where(small, torch.full_like(scores, -1.0), scores)
    dets = torch.stack([x1, y1, x2, y2], 1)
    count = dets.shape[0]
    pre = p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count
    pre = min(pre, count)
    order = torch.sort(scores, descending=True, stable=True).indices[:pre]
    dets, scores = dets[order], scores[order]
    keep = _nms(dets, p.threshold, p.rpn_post_nms_top_n)
    post = p.rpn_post_nms_top_n
    sel = torch.tensor([keep[i % len(keep)] for i in range(post)], device=dev, dtype=torch.long)
    return dets[sel], scores[sel]


def _nms(dets, thresh, top_n):
    """MXNet's greedy NMS (areas with +1) over boxes already sorted by score."""
    x1, y1, x2, y2 = dets.unbind(1)
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    n = dets.shape[0]
    suppressed = torch.zeros(n, dtype=torch.bool, device=dets.device)
    keep = []
    for i in range(n):
        if bool(suppressed[i]):
            continue
        keep.append(i)
        if len(keep) == top_n:
            break
        xx1, yy1 = torch.maximum(x1[i], x1[i + 1:]), torch.maximum(y1[i], y1[i + 1:])
        xx2, yy2 = torch.minimum(x2[i], x2[i + 1:]), torch.minimum(y2[i], y2[i + 1:])
        w = torch.clamp(xx2 - xx1 + 1, min=0)
        h = torch.clamp(yy2 - yy1 + 1, min=0)
        inter = w * h
        ovr = inter / (area[i] + area[i + 1:] - inter)
        suppressed[i + 1:] |= ovr > thresh
    return keep


def _proposal_shape(multi):
    def infer(p, ins, outs):
        cls, bbox, info = ins
        if cls is None:
            return ins, outs
        n, c, h, w = cls
        _check(multi or n == 1, f"Sorry, multiple images each device is not implemented "
                                f"({n} vs. 1) ")
        ins = [tuple(cls), (n, c * 2, h, w), (n, 3)]
        if bbox is not None:
            _check(tuple(bbox) == ins[1], f"bbox_pred shape {list(bbox)} must be "
                                          f"{list(ins[1])}")
        rows = (n if multi else 1) * p.rpn_post_nms_top_n
        return ins, [(rows, 5), (rows, 1)]
    return infer


def _proposal_forward(multi):
    def forward(p, ins, oc):
        cls, bbox, info = ins
        rois, scores = [], []
        for i in range(cls.shape[0] if multi else 1):
            d, s = _proposal_one(p, cls[i], bbox[i], info[i])
            col = torch.full((d.shape[0], 1), float(i), device=d.device, dtype=d.dtype)
            rois.append(torch.cat([col, d], 1))
            scores.append(s[:, None])
        return (torch.cat(rois).to(cls.dtype), torch.cat(scores).to(cls.dtype))
    return forward


for _multi in (False, True):
    _pname = "_contrib_MultiProposal" if _multi else "_contrib_Proposal"
    register(OpDef(
        _pname, _proposal_forward(_multi), _proposal_shape(_multi), params=_PROPOSAL_PARAMS,
        inputs=("cls_prob", "bbox_pred", "im_info"),
        outputs=lambda p: ("output", "score") if p.output_score else ("output",),
        num_hidden_outputs=lambda p: 0 if p.output_score else 1, gradient=zero_gradient,
        hint=_pname[len("_contrib_"):].lower(),
        doc="Generate region proposals (Faster R-CNN's RPN): anchors of the given scales and "
            "ratios on every feature-map cell, moved by ``bbox_pred``, clipped to the image, "
            "sorted by the foreground score of ``cls_prob``, non-maximum suppressed; returns "
            "``rpn_post_nms_top_n`` rois [batch_index, x1, y1, x2, y2] per image" +
            (" of the batch" if _multi else "") + " (and their scores with ``output_score``)."))
