"""Sampling and region layers: BilinearSampler, GridGenerator, SpatialTransformer, ROIPooling
and Correlation.

Parameter names, defaults, hidden outputs and check messages follow MXNet 1.9.1
(``src/operator/bilinear_sampler.cc``, ``grid_generator.cc``, ``spatial_transformer.cc``,
``roi_pooling.cc``, ``correlation.cc``). Gradients replay the forward
under torch autograd (:func:`neomx.ops.nn_layers.replay_op`), except ROIPooling's, which
scatters into the saved argmax as MXNet's does.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

from .nn_layers import replay_op, set_shape
from .registry import OpDef, Param, ShapeError, register, _sh


# --- GridGenerator -------------------------------------------------------------------------------
_GG_PARAMS = (
    Param("transform_type", "str", doc="The type of transformation. For `affine`, input data "
                                       "should be an affine matrix of size (batch, 6). For "
                                       "`warp`, input data should be an optical flow of size "
                                       "(batch, 2, h, w).", choices=("affine", "warp")),
    Param("target_shape", "shape", (0, 0), "Specifies the output shape (H, W). This is required "
                                           "if transformation type is `affine`. If "
                                           "transformation type is `warp`, this parameter is "
                                           "ignored."),
)


def _gg_infer_shape(p, ins, outs):
    data = ins[0]
    if p.transform_type == "affine":
        h, w = (tuple(p.target_shape) + (0, 0))[:2]
        if h <= 0:
            raise ShapeError(f"Check failed: param_.target_shape[0] > 0U ({h} vs. 0) : "
                             f"incorrect target_shape: {h}")
        if w <= 0:
            raise ShapeError(f"Check failed: param_.target_shape[1] > 0U ({w} vs. 0) : "
                             f"incorrect target_shape: {w}")
        if not data:
            return ins, outs
        if len(data) != 2:
            raise ShapeError(f"Check failed: lshape.ndim() == 2U ({len(data)} vs. 2) : incorrect "
                             "data shape, should be 2D")
        if data[1] != 6:
            raise ShapeError(f"Check failed: lshape[1] == 6U ({data[1]} vs. 6) : incorrect data "
                             "shape[1], should be 6")
        return [(data[0], 6)], [(data[0], 2, h, w), (3, h * w)]
    if not data:
        return ins, outs
    if len(data) != 4:
        raise ShapeError(f"Check failed: lshape.ndim() == 4U ({len(data)} vs. 4) : incorrect "
                         "data shape, should be 4D")
    if data[1] != 2:
        raise ShapeError(f"Check failed: lshape[1] == 2U ({data[1]} vs. 2) : incorrect data "
                         "shape[1], should be 2")
    return [tuple(data)], [tuple(data), (2, data[2], data[3])]


def _base_grid(h, w, like):
    """(3, h*w): normalized x, y in [-1, 1] (row-major over the target) and ones."""
    ys = torch.linspace(-1, 1, h, dtype=like.dtype, device=like.device) if h > 1 else \
        torch.full((1,), -1.0, dtype=like.dtype, device=like.device)
    xs = torch.linspace(-1, 1, w, dtype=like.dtype, device=like.device) if w > 1 else \
        torch.full((1,), -1.0, dtype=like.dtype, device=like.device)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([gx.reshape(-1), gy.reshape(-1), torch.ones_like(gx).reshape(-1)])


def _gg_compute(p, ins):
    x = ins[0]
    if p.transform_type == "affine":
        h, w = p.target_shape
        grid = torch.matmul(x.reshape(-1, 2, 3), _base_grid(h, w, x))
        return grid.reshape(x.shape[0], 2, h, w)
    n, _, h, w = x.shape
    xs = torch.arange(w, dtype=x.dtype, device=x.device).reshape(1, w)
    ys = torch.arange(h, dtype=x.dtype, device=x.device).reshape(h, 1)
    gx = (x[:, 0] + xs) / ((w - 1) / 2.0) - 1
    gy = (x[:, 1] + ys) / ((h - 1) / 2.0) - 1
    return torch.stack([gx, gy], dim=1)


def _gg_forward(p, ins, oc):
    x = ins[0]
    if p.transform_type == "affine":
        h, w = p.target_shape
        return _gg_compute(p, ins), _base_grid(h, w, x)
    return _gg_compute(p, ins), torch.zeros((2,) + tuple(x.shape[2:]), dtype=x.dtype,
                                             device=x.device)


replay_op(
    "GridGenerator", _gg_compute, _gg_forward, _gg_infer_shape, params=_GG_PARAMS,
    num_hidden_outputs=1,
    doc="Generates 2D sampling grid for bilinear sampling.\n\n"
        "``affine``: ``data`` ``(batch, 6)`` holds 2x3 matrices applied to the target's\n"
        "normalized coordinates (x, y in [-1, 1] over ``target_shape``); ``warp``: ``data``\n"
        "``(batch, 2, h, w)`` is a flow in pixels added to each pixel's position, then\n"
        "normalized. The output ``(batch, 2, h, w)`` holds x then y.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> theta = mx.nd.array([[1, 0, 0, 0, 1, 0]])\n"
        ">>> g = mx.nd.GridGenerator(theta, transform_type='affine', target_shape=(2, 2))\n"
        ">>> g.asnumpy()[0].tolist()\n"
        "[[[-1.0, 1.0], [-1.0, 1.0]], [[-1.0, -1.0], [1.0, 1.0]]]")


# --- BilinearSampler -----------------------------------------------------------------------------
_BS_PARAMS = (Param("cudnn_off", "bool", None, "whether to turn cudnn off (ignored)",
                    optional=True),)


def _bs_infer_shape(p, ins, outs):
    ins = list(ins)
    data, grid = ins
    if not data or not grid:
        return ins, outs
    if len(data) != 4:
        raise ShapeError(f"Check failed: dshape.ndim() == 4U ({len(data)} vs. 4) : input data "
                         "should be 4D in batch-num_filter-y-x")
    if len(grid) != 4:
        raise ShapeError(f"Check failed: lshape.ndim() == 4U ({len(grid)} vs. 4) : incorrect "
                         "grid shape, should be 4D in batch-2-y-x")
    if grid[0] != data[0]:
        raise ShapeError(f"Check failed: dshape[0] == lshape[0] ({data[0]} vs. {grid[0]}) :")
    if grid[1] != 2:
        raise ShapeError(f"Check failed: lshape[1] == 2U ({grid[1]} vs. 2) : incorrect grid "
                         "shape[1], should be 2")
    out = (data[0], data[1], grid[2], grid[3])
    return [tuple(data), tuple(grid)], [out, (data[0], grid[2], grid[3], 2)]


def bilinear_sample(x, grid):
    """MXNet's bilinear sampling: grid (N, 2, h, w) in [-1, 1] mapped to corners (align
    corners), zero outside the input."""
    return TF.grid_sample(x, grid.permute(0, 2, 3, 1), mode="bilinear", padding_mode="zeros",
                          align_corners=True)


replay_op(
    "BilinearSampler", lambda p, ins: bilinear_sample(*ins),
    lambda p, ins, oc: (bilinear_sample(*ins), ins[1].permute(0, 2, 3, 1).contiguous()),
    _bs_infer_shape, params=_BS_PARAMS, inputs=("data", "grid"), num_hidden_outputs=1,
    doc="Applies bilinear sampling to input feature map.\n\n"
        "``out[n, c, i, j]`` is ``data[n, c]`` sampled bilinearly at ``x = (grid[n, 0, i, j] +\n"
        "1) * (W - 1) / 2``, ``y = (grid[n, 1, i, j] + 1) * (H - 1) / 2``; samples outside the\n"
        "input count as zero.")


# --- SpatialTransformer --------------------------------------------------------------------------
_ST_PARAMS = (
    Param("target_shape", "shape", (0, 0), "output shape(h, w) of spatial transformer: (y, x)"),
    Param("transform_type", "str", doc="transformation type", choices=("affine",)),
    Param("sampler_type", "str", doc="sampling type", choices=("bilinear",)),
    Param("cudnn_off", "bool", None, "whether to turn cudnn off (ignored)", optional=True),
)


def _st_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if not data or not ins[1]:  # MXNet decides nothing without loc's shape
        return ins, outs
    if len(data) != 4:
        raise ShapeError(f"Check failed: dshape.ndim() == 4U ({len(data)} vs. 4) : input data "
                         "should be 4D in batch-num_filter-y-x")
    h, w = p.target_shape
    loc = ins[1]
    if len(loc) != 2:
        raise ShapeError(f"Check failed: lshape.ndim() == 2U ({len(loc)} vs. 2) : incorrect "
                         "locolisation network shape, should be 2D")
    if loc[1] != 6:
        raise ShapeError(f"Check failed: lshape[1] == 6U ({loc[1]} vs. 6) : incorrect "
                         "locolisation network shape[1], should be 6")
    for i, d in enumerate((h, w)):
        if d <= 0:
            raise ShapeError(f"Check failed: param_.target_shape[{i}] > 0U ({d} vs. 0) : "
                             f"incorrect target_shape: {d}")
    set_shape(ins, 1, (data[0], 6))
    return ins, [(data[0], data[1], h, w), (3, h * w), (data[0], 2, h, w)]


def _st_compute(p, ins):
    x, loc = ins
    h, w = p.target_shape
    grid = torch.matmul(loc.reshape(-1, 2, 3), _base_grid(h, w, x)).reshape(x.shape[0], 2, h, w)
    return bilinear_sample(x, grid)


def _st_forward(p, ins, oc):
    x, loc = ins
    h, w = p.target_shape
    dst = _base_grid(h, w, x)
    src = torch.matmul(loc.reshape(-1, 2, 3), dst).reshape(x.shape[0], 2, h, w)
    return bilinear_sample(x, src), dst, src


replay_op(
    "SpatialTransformer", _st_compute, _st_forward, _st_infer_shape, params=_ST_PARAMS,
    inputs=("data", "loc"), num_hidden_outputs=2,
    doc="Applies a spatial transformer to input feature map.\n\n"
        "``BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))``: ``loc`` holds\n"
        "one 2x3 affine matrix per sample.")


# --- ROIPooling ----------------------------------------------------------------------------------
_ROI_PARAMS = (
    Param("pooled_size", "shape", doc="ROI pooling output shape (h,w) "),
    Param("spatial_scale", "float", doc="Ratio of input feature map height (or w) to raw image "
                                        "height (or w). Equals the reciprocal of total stride in "
                                        "convolutional layers"),
)


def _roi_infer_shape(p, ins, outs):
    data, rois = ins
    if data is None:
        raise ShapeError("Check failed: dshape.ndim() == 4U (-1 vs. 4) : data should be a 4D "
                         "tensor")
    if rois is None:
        raise ShapeError("Check failed: bshape.ndim() == 2U (-1 vs. 2) : bbox should be a 2D "
                         "tensor of shape [batch, 5]")
    if len(data) != 4:
        raise ShapeError(f"Check failed: dshape.ndim() == 4U ({len(data)} vs. 4) : data should be "
                         "a 4D tensor")
    if len(rois) != 2:
        raise ShapeError(f"Check failed: bshape.ndim() == 2U ({len(rois)} vs. 2) : bbox should be "
                         "a 2D tensor of shape [batch, 5]")
    if rois[1] != 5:
        raise ShapeError(f"Check failed: bshape[1] == 5U ({rois[1]} vs. 5) : bbox should be a 2D "
                         "tensor of shape [batch, 5]")
    out = (rois[0], data[1]) + tuple(p.pooled_size)
    return [tuple(data), tuple(rois)], [out, out]


def _c_round(v):
    """C's round(): halves away from zero."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def _roi_bins(p, roi, height, width):
    """Bin bounds of one roi, in float32 as MXNet computes them: (hs, he) of shape (ph,) and
    (ws, we) of shape (pw,), clipped to the feature map."""
    f32 = np.float32
    scale = f32(p.spatial_scale)
    x1, y1, x2, y2 = (_c_round(float(f32(v) * scale)) for v in roi[1:5])
    rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    ph_n, pw_n = p.pooled_size
    bh, bw = f32(rh) / f32(ph_n), f32(rw) / f32(pw_n)
    ph, pw = np.arange(ph_n, dtype=f32), np.arange(pw_n, dtype=f32)
    hs = np.clip(np.floor(ph * bh).astype(np.int64) + y1, 0, height)
    he = np.clip(np.ceil((ph + 1) * bh).astype(np.int64) + y1, 0, height)
    ws = np.clip(np.floor(pw * bw).astype(np.int64) + x1, 0, width)
    we = np.clip(np.ceil((pw + 1) * bw).astype(np.int64) + x1, 0, width)
    return hs, he, ws, we


def _masked_max(t, mask):
    """Max over the last dim of ``t`` where ``mask`` holds (first maximum's index)."""
    return t.masked_fill(~mask, float("-inf")).max(dim=-1)


def _roi_pool_one(x, b, bins):
    """(C, ph, pw) maxima and flat argmax indices (-1 for empty bins) of one roi: a max over
    each bin's columns, then over its rows (the first maximum in row-major order wins, as in
    MXNet's loop)."""
    hs, he, ws, we = bins
    c, width = x.shape[1], x.shape[3]
    ph, pw = len(hs), len(ws)
    empty = torch.as_tensor((he <= hs)[:, None] | (we <= ws)[None, :], device=x.device)
    h0, h1, w0, w1 = int(hs.min()), int(he.max()), int(ws.min()), int(we.max())
    if h1 <= h0 or w1 <= w0:
        return (x.new_zeros((c, ph, pw)),
                torch.full((c, ph, pw), -1, dtype=torch.int64, device=x.device))
    dev = x.device
    region = x[b, :, h0:h1, w0:w1]  # (C, h, w)
    cols = torch.arange(w0, w1, device=dev)
    rows = torch.arange(h0, h1, device=dev)
    wmask = (cols >= torch.as_tensor(ws, device=dev)[:, None]) & \
        (cols < torch.as_tensor(we, device=dev)[:, None])  # (pw, w)
    hmask = (rows >= torch.as_tensor(hs, device=dev)[:, None]) & \
        (rows < torch.as_tensor(he, device=dev)[:, None])  # (ph, h)
    v1, i1 = _masked_max(region[:, :, None, :], wmask)  # (C, h, pw)
    v1, i1 = v1.transpose(1, 2), i1.transpose(1, 2)  # (C, pw, h)
    v2, i2 = _masked_max(v1[:, None], hmask[:, None, :])  # (C, ph, pw)
    col = torch.gather(i1[:, None].expand(c, ph, pw, h1 - h0), 3, i2[..., None]).squeeze(-1)
    arg = (h0 + i2) * width + w0 + col
    return (torch.where(empty, torch.zeros_like(v2), v2),
            torch.where(empty, torch.full_like(arg, -1), arg))


def _roi_pool(p, x, rois):
    """(output, argmax as flat index into the feature map, -1 for empty bins)."""
    height, width = x.shape[2], x.shape[3]
    vals, idxs = [], []
    for roi in rois.detach().cpu().tolist():
        v, i = _roi_pool_one(x, int(roi[0]), _roi_bins(p, roi, height, width))
        vals.append(v)
        idxs.append(i)
    if not vals:
        out = x.new_zeros((0, x.shape[1]) + tuple(p.pooled_size))
        return out, out.clone()
    return torch.stack(vals), torch.stack(idxs).to(x.dtype)


def _roi_backward(p, ins, oc):
    """d data: each bin's head gradient added at its saved argmax (none for empty bins);
    d rois: zeros, as MXNet writes."""
    g, x, rois, arg = ins
    c, hw = x.shape[1], x.shape[2] * x.shape[3]
    arg = arg.to(torch.int64)
    plane = rois[:, 0].to(torch.int64)[:, None] * c + torch.arange(c, device=x.device)[None, :]
    flat = plane[:, :, None, None] * hw + arg
    keep = arg >= 0
    gx = torch.zeros(x.numel(), dtype=g.dtype, device=g.device)
    gx.index_add_(0, flat[keep], g[keep])
    return gx.reshape(x.shape), torch.zeros_like(rois)


register(OpDef(
    "ROIPooling", lambda p, ins, oc: _roi_pool(p, *ins), _roi_infer_shape, params=_ROI_PARAMS,
    inputs=("data", "rois"), num_hidden_outputs=1,
    gradient=lambda F, p, ins, outs, ograds: list(
        F._backward_ROIPooling(ograds[0], ins[0], ins[1], outs[1], **p)),
    doc="Performs region of interest(ROI) pooling on the input array.\n\n"
        "Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]`` in image coordinates; it is\n"
        "scaled by ``spatial_scale``, rounded, split into ``pooled_size`` bins and each bin\n"
        "max-pooled (empty bins give 0). The output is ``(num_rois, channels, ph, pw)``; the\n"
        "gradient goes to each bin's first maximum, ``rois`` get zeros."))
register(OpDef(
    "_backward_ROIPooling", _roi_backward, lambda p, ins, outs: (ins, [ins[1], ins[2]]),
    params=_ROI_PARAMS, inputs=("out_grad", "data", "rois", "max_idx"),
    outputs=("data", "rois"), infer_type=lambda p, ins, outs: (ins, [ins[1], ins[2]]),
    public=False, doc="Gradient of ROIPooling."))


# --- Correlation ---------------------------------------------------------------------------------
_CORR_PARAMS = (
    Param("kernel_size", "int", 1, "kernel size for Correlation must be an odd number"),
    Param("max_displacement", "int", 1, "Max displacement of Correlation "),
    Param("stride1", "int", 1, "stride1 quantize data1 globally"),
    Param("stride2", "int", 1, "stride2 quantize data2 within the neighborhood centered around "
                               "data1"),
    Param("pad_size", "int", 0, "pad for Correlation"),
    Param("is_multiply", "bool", True, "operation type is either multiplication or subduction"),
)


def _corr_geometry(p, h, w):
    """(top_h, top_w, grid radius, grid width)."""
    kr = (p.kernel_size - 1) // 2
    border = p.max_displacement + kr
    top_w = int(math.ceil((w + 2 * p.pad_size - 2 * border) / p.stride1))
    top_h = int(math.ceil((h + 2 * p.pad_size - 2 * border) / p.stride1))
    radius = p.max_displacement // p.stride2
    return top_h, top_w, radius, 2 * radius + 1


def _corr_infer_shape(p, ins, outs):
    ins = list(ins)
    for i, s in enumerate(ins):
        if s is None or len(s) != 4:
            raise ShapeError(f"Check failed: dshape{i + 1}.ndim() == 4U "
                             f"({-1 if s is None else len(s)} vs. 4) : data should be a 4D tensor")
    a = tuple(ins[0])  # MXNet does not compare data2's shape with data1's
    top_h, top_w, _, gw = _corr_geometry(p, a[2], a[3])
    if top_w < 1:
        raise ShapeError(f"Check failed: top_width_ >= 1U ({max(top_w, 0)} vs. 1) : Correlation "
                         "cannot be done with current settings.Neighborhood and kernel don't fit "
                         "in blob")
    if top_h < 1:
        raise ShapeError(f"Check failed: top_height_ >= 1U ({max(top_h, 0)} vs. 1) : Correlation "
                         "cannot be done with current settings.Neighborhood and kernel don't fit "
                         "in blob")
    padded = (a[0], a[2] + 2 * p.pad_size, a[3] + 2 * p.pad_size, a[1])
    return ins, [(a[0], gw * gw, top_h, top_w), padded, padded]


def _corr_compute(p, ins):
    x1, x2 = ins
    pad = [p.pad_size] * 4
    a, b = TF.pad(x1, pad), TF.pad(x2, pad)
    c = x1.shape[1]
    top_h, top_w, radius, _ = _corr_geometry(p, x1.shape[2], x1.shape[3])
    k, md, s1 = p.kernel_size, p.max_displacement, p.stride1
    lh, lw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    win_a = a[:, :, md:md + lh, md:md + lw]
    planes = []
    for py in range(-radius, radius + 1):
        for px in range(-radius, radius + 1):
            dy, dx = py * p.stride2, px * p.stride2
            win_b = b[:, :, md + dy:md + dy + lh, md + dx:md + dx + lw]
            prod = win_a * win_b if p.is_multiply else (win_a - win_b).abs()
            planes.append(prod.sum(dim=1))
    stacked = torch.stack(planes, dim=1)  # (N, D, lh, lw)
    summed = TF.avg_pool2d(stacked, k, s1) if k > 1 or s1 > 1 else stacked
    return summed[:, :, :top_h, :top_w] / c


def _corr_forward(p, ins, oc):
    pad = [p.pad_size] * 4
    return (_corr_compute(p, ins), TF.pad(ins[0], pad).permute(0, 2, 3, 1).contiguous(),
            TF.pad(ins[1], pad).permute(0, 2, 3, 1).contiguous())


replay_op(
    "Correlation", _corr_compute, _corr_forward, _corr_infer_shape, params=_CORR_PARAMS,
    inputs=("data1", "data2"), num_hidden_outputs=2,
    doc="Applies correlation to inputs (FlowNet).\n\n"
        "For each displacement ``(dy, dx)`` (multiples of ``stride2`` up to\n"
        "``max_displacement``) and each output position (every ``stride1`` pixels of the\n"
        "``pad_size``-padded data1, inside the border), the mean over a ``kernel_size`` window\n"
        "and the channels of ``data1 * data2`` shifted (or ``|data1 - data2|`` when not\n"
        "``is_multiply``). Output: ``(batch, (2*(max_displacement//stride2)+1)**2, top_h,\n"
        "top_w)``.")

