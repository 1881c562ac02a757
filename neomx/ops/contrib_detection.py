"""Detection heads of ``mx.nd.contrib`` / ``mx.sym.contrib``: MultiBoxPrior, MultiBoxTarget and
MultiBoxDetection (SSD) and ROIAlign (Mask R-CNN).

Semantics, parameters and check messages follow MXNet 1.9.1 (``src/operator/contrib/
multibox_prior.cc``, ``multibox_target.cc``, ``multibox_detection.cc``, ``roi_align.cc``). The
MultiBox operators are float32-only legacy operators with zero gradients; their sequential
parts (greedy matching, hard-negative mining, suppression) run per image on the host in numpy
float32, the arithmetic MXNet's C loops do. ROIAlign's bilinear sampling is separable, so each
roi is two small matrices (rows and columns) applied to the feature map; its gradient replays
that under torch autograd, and ``rois`` get zeros, as MXNet writes.
"""
from __future__ import annotations

import ast
import math

import numpy as np
import torch

from ..base import MXNetError
from .contrib_boxes import greedy_nms
from .nn_layers import replay_op
from .registry import (OpDef, Param, ShapeError, TypeInferError, register, zero_gradient, _sh)

_F32 = np.dtype(np.float32)
_TYPE_FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
               "int64": 6, "bool": 7}


class FloatTupleParam(Param):
    """A ``tuple of <float>`` parameter (MXNet's ``Tuple<float>``)."""

    def parse(self, value, where):
        try:
            v = ast.literal_eval(value.strip()) if isinstance(value, str) else value
            if isinstance(v, (int, float, np.number)):
                v = (v,)
            return tuple(float(x) for x in v)
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError(f"Invalid Parameter format for {self.name} expect tuple of <float> "
                             f"but value='{value}', in operator {where}") from None

    def doc_line(self):
        return (f"{self.name} : tuple of <float>, optional, default={list(self.default)}\n"
                f"    {self.doc}")


def legacy_f32_type(n_out):
    """Type rule of MXNet's legacy (OperatorProperty) operators without a type function:
    float32 inputs only, float32 outputs."""
    def infer(p, ins, outs):
        for t in ins:
            if t is not None and np.dtype(t) != _F32:
                flag = _TYPE_FLAGS.get(np.dtype(t).name, -1)
                raise TypeInferError("Check failed: in_type->at(i) == mshadow::default_type_flag "
                                     f"|| in_type->at(i) == -1: Unsupported data type {flag}")
        return [_F32] * len(ins), [_F32] * n_out
    return infer


def _check(cond, text):
    if not cond:
        raise ShapeError("Check failed: " + text)


# --- MultiBoxPrior -------------------------------------------------------------------------------
_PRIOR_PARAMS = (
    FloatTupleParam("sizes", "shape", (1.0,), "List of sizes of generated MultiBoxPriores."),
    FloatTupleParam("ratios", "shape", (1.0,), "List of aspect ratios of generated "
                                               "MultiBoxPriores."),
    Param("clip", "bool", False, "Whether to clip out-of-boundary boxes."),
    FloatTupleParam("steps", "shape", (-1.0, -1.0), "Priorbox step across y and x, -1 for auto "
                                                    "calculation."),
    FloatTupleParam("offsets", "shape", (0.5, 0.5), "Priorbox center offsets, y and x "
                                                    "respectively"),
)


def _prior_infer_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    _check(len(d) >= 4, f"dshape.ndim() >= 4 ({len(d)} vs. 4) : Input data should be 4D: "
                        "batch-channel-y-x")
    _check(len(p.sizes) > 0, "sizes_.ndim() > 0 (0 vs. 0) : sizes must not be empty")
    _check(len(p.ratios) > 0, "ratios_.ndim() > 0 (0 vs. 0) : ratios must not be empty")
    num = len(p.sizes) + len(p.ratios) - 1
    return [tuple(d)], [(1, d[2] * d[3] * num, 4)]


def _prior_half_sizes(p, h, w):
    """Half widths and heights of the anchors at one position, float32 as MXNet computes."""
    f32 = np.float32
    sizes, ratios = np.array(p.sizes, f32), np.array(p.ratios, f32)
    fh, fw, two = f32(h), f32(w), f32(2)
    r0 = np.sqrt(ratios[0])
    hw = [s * fh / fw * r0 / two for s in sizes]
    hh = [s / r0 / two for s in sizes]
    for ratio in ratios[1:]:
        r = np.sqrt(ratio)
        hw.append(sizes[0] * fh / fw * r / two)
        hh.append(sizes[0] / r / two)
    return np.array(hw, f32), np.array(hh, f32)


def _multibox_prior(p, ins, oc):
    x = ins[0]
    f32 = np.float32
    h, w = x.shape[2], x.shape[3]
    step_y = f32(p.steps[0]) if p.steps[0] > 0 else f32(1) / f32(h)
    step_x = f32(p.steps[1]) if p.steps[1] > 0 else f32(1) / f32(w)
    cy = (np.arange(h, dtype=f32) + f32(p.offsets[0])) * step_y
    cx = (np.arange(w, dtype=f32) + f32(p.offsets[1])) * step_x
    hw, hh = _prior_half_sizes(p, h, w)
    cy, cx = cy[:, None, None], cx[None, :, None]
    shape = (h, w, len(hw))
    out = np.stack([np.broadcast_to(cx - hw, shape), np.broadcast_to(cy - hh, shape),
                    np.broadcast_to(cx + hw, shape), np.broadcast_to(cy + hh, shape)], axis=-1)
    if p.clip:
        out = np.clip(out, f32(0), f32(1))
    return torch.from_numpy(np.ascontiguousarray(out.reshape(1, -1, 4))).to(x.device)


register(OpDef(
    "_contrib_MultiBoxPrior", _multibox_prior, _prior_infer_shape, params=_PRIOR_PARAMS,
    infer_type=legacy_f32_type(1), gradient=zero_gradient, hint="multiboxprior",
    doc="Generate prior(anchor) boxes from data, sizes and ratios.\n\n"
        "For each position of the feature map ``data`` (B, C, H, W), one anchor per size (at\n"
        "the first ratio) and one per further ratio (at the first size), centred at\n"
        "``(x + offsets[1]) * steps[1]``, ``(y + offsets[0]) * steps[0]`` (steps 1/W, 1/H by\n"
        "default); output (1, H*W*(len(sizes)+len(ratios)-1), 4) corner boxes.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 1, 2)), sizes=(0.5,)).shape\n"
        "(1, 2, 4)"))


# --- MultiBoxTarget ------------------------------------------------------------------------------
_VARIANCES_DOC = "Variances to be encoded in box regression target."
_TARGET_PARAMS = (
    Param("overlap_threshold", "float", 0.5, "Anchor-GT overlap threshold to be regarded as a "
                                             "positive match."),
    Param("ignore_label", "float", -1.0, "Label for ignored anchors."),
    Param("negative_mining_ratio", "float", -1.0, "Max negative to positive samples ratio, use -1 "
                                                  "to disable mining"),
    Param("negative_mining_thresh", "float", 0.5, "Threshold used for negative mining."),
    Param("minimum_negative_samples", "int", 0, "Minimum number of negative samples."),
    FloatTupleParam("variances", "shape", (0.1, 0.1, 0.2, 0.2), _VARIANCES_DOC),
)


def _target_infer_shape(p, ins, outs):
    anchor, label, cls = ins
    if anchor is None or label is None or cls is None:
        return ins, outs
    _check(len(anchor) == 3, f"ashape.ndim() == 3 ({len(anchor)} vs. 3) : Anchor should be "
                             "batch shared N*4 tensor")
    _check(anchor[0] == 1, f"ashape[0] == 1 ({anchor[0]} vs. 1) : Anchors are shared across "
                           "batches, first dim=1")
    _check(anchor[1] > 0, f"ashape[1] > 0 ({anchor[1]} vs. 0) : Number boxes should > 0")
    _check(anchor[2] == 4, f"ashape[2] == 4 ({anchor[2]} vs. 4) : Box dimension should be 4: "
                           "[xmin, ymin, xmax, ymax]")
    _check(len(label) == 3, f"lshape.ndim() == 3 ({len(label)} vs. 3) : Label should be [batch, "
                            "num_labels, label_width] tensor")
    _check(label[1] > 0, f"lshape[1] > 0 ({label[1]} vs. 0) : Padded label should > 0")
    _check(label[2] >= 5, f"lshape[2] >= 5 ({label[2]} vs. 5) : Label width should be greater "
                          "than or equal to 5")
    _check(len(cls) == 3, f"pshape.ndim() == 3 ({len(cls)} vs. 3) : Prediction: [nbatch, "
                          "num_classes, num_anchors]")
    _check(cls[2] == anchor[1], f"pshape[2] == ashape[1] ({cls[2]} vs. {anchor[1]}) : Number of "
                                "anchors mismatch")
    n, a = label[0], anchor[1]
    return list(ins), [(n, a * 4), (n, a * 4), (n, a)]


def iou_matrix(a, b):
    """IoU (len(a), len(b)) of corner boxes, float32 as MXNet's CalculateOverlap (0 for an
    empty union)."""
    zero = a.dtype.type(0)
    w = np.maximum(zero, np.minimum(a[:, None, 2], b[None, :, 2]) -
                   np.maximum(a[:, None, 0], b[None, :, 0]))
    h = np.maximum(zero, np.minimum(a[:, None, 3], b[None, :, 3]) -
                   np.maximum(a[:, None, 1], b[None, :, 1]))
    inter = w * h
    union = ((a[:, None, 2] - a[:, None, 0]) * (a[:, None, 3] - a[:, None, 1]) +
             (b[None, :, 2] - b[None, :, 0]) * (b[None, :, 3] - b[None, :, 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union <= 0, zero, inter / union)


def _match(ov, overlap_threshold):
    """Anchors' matches (gt index, -1 none), their best overlaps and positive flags: first the
    greedy bipartite pass (largest overlap above 1e-6 first, anchor-major ties), then each
    other anchor's best gt when above ``overlap_threshold``."""
    na, ng = ov.shape
    match = np.full(na, -1, np.int64)
    best = np.full(na, -1, np.float32)
    pos = np.zeros(na, bool)
    free = ov.copy()
    for _ in range(min(na, ng)):
        k = int(np.argmax(free))
        i, j = divmod(k, ng)
        if not free[i, j] > np.float32(1e-6):
            break
        match[i], best[i], pos[i] = j, free[i, j], True
        free[i, :] = -np.inf
        free[:, j] = -np.inf
    if overlap_threshold > 0:
        rest = ~pos
        j = np.argmax(ov[rest], axis=1)
        match[rest] = j
        best[rest] = ov[rest][np.arange(j.size), j]
        pos |= rest & (best > np.float32(overlap_threshold))
    return match, best, pos


def _mine_negatives(p, cls_pred, best, pos):
    """Hard negatives: the non-positive anchors below ``negative_mining_thresh`` with the
    lowest background probability (softmax over classes), as many as the ratio asks."""
    num_pos = int(pos.sum())
    na = pos.size
    num_neg = int(num_pos * np.float32(p.negative_mining_ratio))
    num_neg = min(max(num_neg, p.minimum_negative_samples), na - num_pos)
    neg = np.zeros(na, bool)
    if num_neg <= 0:
        return neg
    cand = np.nonzero(~pos & (best < np.float32(p.negative_mining_thresh)))[0]
    logits = cls_pred[:, cand]
    e = np.exp(logits - logits.max(axis=0))
    prob = e[0] / e.sum(axis=0)
    order = np.argsort(prob, kind="stable")
    neg[cand[order[:num_neg]]] = True
    return neg


def _encode_loc(anchors, gt, var):
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) * np.float32(0.5), \
        (anchors[:, 1] + anchors[:, 3]) * np.float32(0.5)
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gx, gy = (gt[:, 0] + gt[:, 2]) * np.float32(0.5), (gt[:, 1] + gt[:, 3]) * np.float32(0.5)
    v = np.array(var, np.float32)
    return np.stack([(gx - ax) / aw / v[0], (gy - ay) / ah / v[1],
                     np.log(gw / aw) / v[2], np.log(gh / ah) / v[3]], axis=1)


def _multibox_target(p, ins, oc):
    if len(p.variances) != 4:
        raise MXNetError(f"Check failed: variances.ndim() == 4 ({len(p.variances)} vs. 4) : "
                         "variances must have 4 elements")
    anchor_t, label_t, cls_t = ins
    anchors = anchor_t.detach().cpu().numpy().reshape(-1, 4)
    labels, cls_pred = label_t.detach().cpu().numpy(), cls_t.detach().cpu().numpy()
    nb, na = labels.shape[0], anchors.shape[0]
    loc_target = np.zeros((nb, na, 4), np.float32)
    loc_mask = np.zeros((nb, na, 4), np.float32)
    cls_target = np.full((nb, na), np.float32(p.ignore_label), np.float32)
    for b in range(nb):
        ids = labels[b, :, 0]
        stop = np.nonzero(ids == -1)[0]
        num_gt = int(stop[0]) if stop.size else ids.size
        if num_gt == 0:
            continue
        gts = labels[b, :num_gt]
        match, best, pos = _match(iou_matrix(anchors, gts[:, 1:5]), p.overlap_threshold)
        if p.negative_mining_ratio > 0:
            if not p.negative_mining_thresh > 0:
                raise MXNetError(f"Check failed: negative_mining_thresh > 0 "
                                 f"({p.negative_mining_thresh:g} vs. 0) : ")
            neg = _mine_negatives(p, cls_pred[b], best, pos)
        else:
            neg = ~pos
        cls_target[b, neg] = 0
        cls_target[b, pos] = gts[match[pos], 0] + 1
        loc_mask[b, pos] = 1
        loc_target[b, pos] = _encode_loc(anchors[pos], gts[match[pos], 1:5], p.variances)
    dev = anchor_t.device
    return (torch.from_numpy(loc_target.reshape(nb, -1)).to(dev),
            torch.from_numpy(loc_mask.reshape(nb, -1)).to(dev), torch.from_numpy(cls_target).to(dev))


register(OpDef(
    "_contrib_MultiBoxTarget", _multibox_target, _target_infer_shape, params=_TARGET_PARAMS,
    inputs=("anchor", "label", "cls_pred"), outputs=("loc_target", "loc_mask", "cls_target"),
    infer_type=legacy_f32_type(3), gradient=zero_gradient, hint="multiboxtarget",
    doc="Compute Multibox training targets.\n\n"
        "``anchor`` (1, A, 4), ``label`` (B, L, 5+) rows ``[class, xmin, ymin, xmax, ymax]``\n"
        "padded with -1, ``cls_pred`` (B, classes, A). Anchors are matched to objects greedily\n"
        "by IoU, then to their best object above ``overlap_threshold``; negatives are all\n"
        "others, or the hardest ``negative_mining_ratio`` per positive. Returns ``loc_target``\n"
        "and ``loc_mask`` (B, A*4) and ``cls_target`` (B, A): class + 1, 0 for background,\n"
        "``ignore_label`` otherwise. Zero gradients."))


# --- MultiBoxDetection ---------------------------------------------------------------------------
_DET_PARAMS = (
    Param("clip", "bool", True, "Clip out-of-boundary boxes."),
    Param("threshold", "float", 0.01, "Threshold to be a positive prediction."),
    Param("background_id", "int", 0, "Background id."),
    Param("nms_threshold", "float", 0.5, "Non-maximum suppression threshold."),
    Param("force_suppress", "bool", False, "Suppress all detections regardless of class_id."),
    FloatTupleParam("variances", "shape", (0.1, 0.1, 0.2, 0.2), "Variances to be decoded from "
                                                                "box regression output."),
    Param("nms_topk", "int", -1, "Keep maximum top k detections before nms, -1 for no limit."),
)


def _det_infer_shape(p, ins, outs):
    cls, loc, anchor = ins
    if cls is None or loc is None or anchor is None:
        return ins, outs
    _check(len(cls) == 3, f"cshape.ndim() == 3U ({len(cls)} vs. 3) : Provided: {_sh(cls)}")
    _check(len(loc) == 2, f"lshape.ndim() == 2U ({len(loc)} vs. 2) : Provided: {_sh(loc)}")
    _check(len(anchor) == 3, f"ashape.ndim() == 3U ({len(anchor)} vs. 3) : Provided: "
                             f"{_sh(anchor)}")
    _check(cls[2] == anchor[1], f"cshape[2] == ashape[1] ({cls[2]} vs. {anchor[1]}) : Number of "
                                "anchors mismatch")
    _check(cls[2] * 4 == loc[1], f"cshape[2] * 4 == lshape[1] ({cls[2] * 4} vs. {loc[1]}) : # "
                                 "anchors mismatch with # loc")
    return list(ins), [(cls[0], cls[2], 6)]


def _decode_loc(anchors, loc, clip, var):
    f32 = np.float32
    v = np.array(var, f32)
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) / f32(2), (anchors[:, 1] + anchors[:, 3]) / f32(2)
    ox = loc[:, 0] * v[0] * aw + ax
    oy = loc[:, 1] * v[1] * ah + ay
    ow = np.exp(loc[:, 2] * v[2]) * aw / f32(2)
    oh = np.exp(loc[:, 3] * v[3]) * ah / f32(2)
    out = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
    return np.clip(out, f32(0), f32(1)) if clip else out


def _detect_one(p, probs, loc, anchors):
    """(A, 6) detections of one image: valid ones compacted in anchor order, then the first
    ``nms_topk`` by descending score (stable) with suppression; the rest of the valid rows keep
    their unsorted values with class -1, the others are all -1 (as MXNet's CPU kernel)."""
    na = anchors.shape[0]
    out = np.full((na, 6), -1, np.float32)
    if probs.shape[0] < 2:
        return out
    fg = probs[1:]
    cid = np.argmax(fg, axis=0)
    score = fg[cid, np.arange(na)]
    valid = np.nonzero(score >= np.float32(p.threshold))[0]
    nv = valid.size
    if nv == 0:
        return out
    rows = np.concatenate([cid[valid, None].astype(np.float32), score[valid, None],
                           _decode_loc(anchors[valid], loc[valid], p.clip, p.variances)], axis=1)
    out[:nv] = rows
    if not 0 < p.nms_threshold <= 1:
        return out
    order = np.argsort(-rows[:, 1], kind="stable")
    nkeep = nv if p.nms_topk <= 0 else min(nv, p.nms_topk)
    out[:nkeep] = rows[order[:nkeep]]
    out[nkeep:nv, 0] = -1
    keep = out[:nkeep]
    boxes = keep[:, 2:6]
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    ids = None if p.force_suppress else keep[:, 0].astype(np.int64)
    alive = greedy_nms(boxes, areas, ids, p.nms_threshold, "corner", inclusive=True,
                       empty_union_zero=True)
    keep[~alive, 0] = -1
    return out


def _multibox_detection(p, ins, oc):
    if len(p.variances) != 4:
        raise MXNetError(f"Check failed: variances.ndim() == 4 ({len(p.variances)} vs. 4) : "
                         "Variance size must be 4")
    cls_t, loc_t, anchor_t = ins
    cls_prob, loc = cls_t.detach().cpu().numpy(), loc_t.detach().cpu().numpy()
    anchors = anchor_t.detach().cpu().numpy().reshape(-1, 4)
    nb, na = cls_prob.shape[0], cls_prob.shape[2]
    out = np.stack([_detect_one(p, cls_prob[b], loc[b].reshape(na, 4), anchors)
                    for b in range(nb)]) if nb else np.zeros((0, na, 6), np.float32)
    return torch.from_numpy(out).to(cls_t.device)


register(OpDef(
    "_contrib_MultiBoxDetection", _multibox_detection, _det_infer_shape, params=_DET_PARAMS,
    inputs=("cls_prob", "loc_pred", "anchor"), infer_type=legacy_f32_type(1),
    gradient=zero_gradient, hint="multiboxdetection",
    doc="Convert multibox detection predictions.\n\n"
        "``cls_prob`` (B, classes, A) with class 0 the background, ``loc_pred`` (B, A*4),\n"
        "``anchor`` (1, A, 4). Each anchor's best foreground class at or above ``threshold``\n"
        "gives a row ``[class - 1, score, xmin, ymin, xmax, ymax]`` (boxes decoded with\n"
        "``variances``, clipped to [0, 1] with ``clip``); rows are sorted by score and\n"
        "suppressed (class set to -1) by IoU >= ``nms_threshold``. Output (B, A, 6), -1 padded.\n"
        "``background_id`` is accepted and, as in MXNet's CPU kernel, not used."))


# --- ROIAlign ------------------------------------------------------------------------------------
_ROIALIGN_PARAMS = (
    Param("pooled_size", "shape", doc="ROI Align output roi feature map height and width: (h, w)"),
    Param("spatial_scale", "float", doc="Ratio of input feature map height (or w) to raw image "
                                        "height (or w). Equals the reciprocal of total stride in "
                                        "convolutional layers"),
    Param("sample_ratio", "int", -1, "Optional sampling ratio of ROI align, using adaptive size "
                                     "by default."),
    Param("position_sensitive", "bool", False, "Whether to perform position-sensitive RoI "
                                               "pooling."),
    Param("aligned", "bool", False, "Center-aligned ROIAlign introduced in Detectron2. To enable, "
                                    "set aligned to True."),
)


def _roialign_infer_shape(p, ins, outs):
    data, rois = ins
    if data is None or rois is None:
        return ins, outs
    _check(len(data) == 4, f"dshape.ndim() == 4 ({len(data)} vs. 4) : data should be a 4D tensor")
    _check(len(rois) == 2, f"bshape.ndim() == 2 ({len(rois)} vs. 2) : bbox should be a 2D tensor "
                           "of shape [batch, 5]")
    _check(rois[1] == 5, f"bshape[1] == 5 ({rois[1]} vs. 5) : bbox should be a 2D tensor of shape "
                         "[batch, 5]")
    ph, pw = p.pooled_size
    c = data[1]
    if p.position_sensitive:
        _check(c % (ph * pw) == 0, f"dshape[1] % (param.pooled_size[0]*param.pooled_size[1]) == 0 "
                                   f"({c % (ph * pw)} vs. 0) : Input channels should be divided by "
                                   "pooled_size[0]*pooled_size[1]when position_sensitive is true.")
        c //= ph * pw
    return [tuple(data), tuple(rois)], [(rois[0], c, ph, pw)]


def _axis_weights(start, bin_size, grid, pooled, size, dtype):
    """(R, pooled, size): the summed bilinear weights of each bin's ``grid`` samples along one
    axis (MXNet's sample positions and border rules), and per sample whether it lies inside."""
    r = start.shape[0]
    gmax = int(grid.max()) if r else 0
    dev = start.device
    p_idx = torch.arange(pooled, device=dev, dtype=dtype)[None, :, None]
    g_idx = torch.arange(max(gmax, 1), device=dev, dtype=dtype)[None, None, :]
    gf = grid.to(dtype)[:, None, None]
    pos = start[:, None, None] + p_idx * bin_size[:, None, None] + \
        (g_idx + 0.5) * bin_size[:, None, None] / gf
    used = g_idx < gf
    inside = ~((pos < -1.0) | (pos > size))
    v = pos.clamp(min=0)
    low = v.floor().clamp(max=size - 1)
    v = torch.where(v.floor() >= size - 1, low, v)
    frac = v - low
    high = (low + 1).clamp(max=size - 1)
    wts = torch.where(used & inside, torch.ones_like(frac), torch.zeros_like(frac))
    out = torch.zeros((r, pooled, size), dtype=dtype, device=dev)
    out.scatter_add_(2, low.long(), (1 - frac) * wts)
    out.scatter_add_(2, high.long(), frac * wts)
    return out


def _roialign_compute(p, ins):
    x, rois = ins
    dtype = x.dtype
    ph, pw = p.pooled_size
    n, c, h, w = x.shape
    rois = rois.detach().to(dtype)
    offset = 0.5 if p.aligned else 0.0
    coords = rois[:, 1:5] * p.spatial_scale - offset
    rw, rh = coords[:, 2] - coords[:, 0], coords[:, 3] - coords[:, 1]
    if not p.aligned:
        rw, rh = rw.clamp(min=1.0), rh.clamp(min=1.0)
    bh, bw = rh / ph, rw / pw
    if p.sample_ratio > 0:
        gh = gw = torch.full_like(rw, p.sample_ratio, dtype=torch.int64)
    else:
        gh, gw = torch.ceil(rh / ph).long(), torch.ceil(rw / pw).long()
    wy = _axis_weights(coords[:, 1], bh, gh, ph, h, dtype)
    wx = _axis_weights(coords[:, 0], bw, gw, pw, w, dtype)
    count = (gh * gw).clamp(min=1).to(dtype)
    cout = c // (ph * pw) if p.position_sensitive else c
    out = x.new_zeros((rois.shape[0], cout, ph, pw))
    batch = rois[:, 0].long()
    for b in torch.unique(batch).tolist():
        if b < 0 or b >= n:
            continue
        sel = torch.nonzero(batch == b).flatten()
        if p.position_sensitive:
            fm = x[b].reshape(cout, ph, pw, h, w)
            res = torch.einsum("rih,cijhw,rjw->rcij", wy[sel], fm, wx[sel])
        else:
            res = torch.einsum("rih,chw,rjw->rcij", wy[sel], x[b], wx[sel])
        out = out.index_copy(0, sel, res / count[sel, None, None, None])
    return out


replay_op(
    "_contrib_ROIAlign", _roialign_compute, lambda p, ins, oc: _roialign_compute(p, ins),
    _roialign_infer_shape, params=_ROIALIGN_PARAMS, inputs=("data", "rois"), no_grad=(1,),
    zero_grad=True, hint="roialign",
    doc="Region of interest alignment (Mask R-CNN).\n\n"
        "Each row of ``rois`` is ``[batch_index, x1, y1, x2, y2]`` in image coordinates (scaled\n"
        "by ``spatial_scale``; rows with a negative batch index give zeros). Each of the\n"
        "``pooled_size`` bins averages ``sample_ratio`` x ``sample_ratio`` bilinear samples\n"
        "(adaptive: ``ceil(bin size)``) of ``data`` (N, C, H, W). ``aligned`` shifts by half a\n"
        "pixel (Detectron2); ``position_sensitive`` reads channel ``(c*ph + i)*pw + j`` for bin\n"
        "``(i, j)`` (R-FCN). Output (R, C, ph, pw); ``rois`` get zero gradients.")
