"""Bounding-box operators of ``mx.nd.contrib`` / ``mx.sym.contrib``: box_iou, box_nms (alias
box_non_maximum_suppression), bipartite_matching, box_encode and box_decode.

Semantics, parameters and check messages follow MXNet 1.9.1
(``src/operator/contrib/bounding_box-inl.h``): IoU without the ``+1`` pixel convention, the
greedy suppression in descending score order (stable for ties), suppressed and filtered boxes
compacted away and the rest filled with -1. Arithmetic is done in the input's dtype in MXNet's
order, so float32 results match bit for bit. Only box_nms has a gradient (the output gradient
goes back to each kept box's original position); the others have zero gradients, as MXNet's.
"""
from __future__ import annotations

import numpy as np
import torch

from .nn_layers import set_shape
from .registry import OpDef, Param, ShapeError, register, zero_gradient, _sh

_FORMATS = ("center", "corner")


def _fmt_param(default, doc):
    return Param("format", "str", default, f"The box encoding type. {doc}", choices=_FORMATS)


def _tuple(s):
    return "[" + ",".join(str(int(d)) for d in s) + "]"


def box_edges(b, fmt):
    """(left, top, right, bottom) of boxes ``b[..., 0:4]`` in ``fmt`` (MXNet's arithmetic)."""
    if fmt == "corner":
        return b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    hw, hh = b[..., 2] / 2, b[..., 3] / 2
    return b[..., 0] - hw, b[..., 1] - hh, b[..., 0] + hw, b[..., 1] + hh


def box_area(b, fmt):
    """Width * height, 0 when either is negative (MXNet's BoxArea)."""
    if fmt == "corner":
        w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    else:
        w, h = b[..., 2], b[..., 3]
    area = w * h
    return torch.where((w < 0) | (h < 0), torch.zeros_like(area), area)


def _overlap(a0, a1, b0, b1):
    w = torch.minimum(a1, b1) - torch.maximum(a0, b0)
    return torch.where(w > 0, w, torch.zeros_like(w))


def pairwise_intersection(a, b, fmt):
    """Intersection areas (..., n) of boxes ``a`` (..., 4) with ``b`` (..., n, 4) broadcast."""
    al, at, ar, ab = box_edges(a, fmt)
    bl, bt, br, bb = box_edges(b, fmt)
    return _overlap(al, ar, bl, br) * _overlap(at, ab, bt, bb)


# --- box_iou -------------------------------------------------------------------------------------
def _iou_infer_shape(p, ins, outs):
    lhs, rhs = ins
    for name, s in (("lhs", lhs), ("rhs", rhs)):
        if s is None:
            return ins, outs
        if len(s) < 2:
            raise ShapeError(f"Check failed: {name[0]}shape.ndim() >= 2 ({len(s)} vs. 2) : {name} "
                             f"must have dim >= 2 {len(s)} provided")
        if s[-1] != 4:
            raise ShapeError(f"Check failed: {name[0]}dim == 4 ({s[-1]} vs. 4) : last dimension "
                             f"of {name} must be 4 {s[-1]} provided")
    return [tuple(lhs), tuple(rhs)], [tuple(lhs[:-1]) + tuple(rhs[:-1])]


def _box_iou(p, ins, oc):
    lhs, rhs = ins
    a = lhs.reshape(-1, 1, 4)
    b = rhs.reshape(1, -1, 4)
    inter = pairwise_intersection(a, b, p.format)
    union = box_area(a, p.format) + box_area(b, p.format) - inter
    iou = torch.where(inter > 0, inter / union, torch.zeros_like(inter))
    return iou.reshape(tuple(lhs.shape[:-1]) + tuple(rhs.shape[:-1]))


register(OpDef(
    "_contrib_box_iou", _box_iou, _iou_infer_shape, inputs=("lhs", "rhs"),
    params=(_fmt_param("corner", '"corner" means boxes are encoded as [xmin, ymin, xmax, ymax], '
                                 '"center" means boxes are encodes as [x, y, width, height].'),),
    gradient=zero_gradient, hint="box_iou",
    doc="Bounding box overlap of two arrays: Intersection-over-Union.\n\n"
        "``lhs`` (a_1, ..., a_n, 4) and ``rhs`` (b_1, ..., b_m, 4) give (a_1, ..., a_n, b_1,\n"
        "..., b_m). Zero gradients are back-propagated, as MXNet's.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]])\n"
        ">>> y = mx.nd.array([[0.25, 0.25, 0.75, 0.75]])\n"
        ">>> mx.nd.contrib.box_iou(x, y).asnumpy().astype('float64').round(4).tolist()\n"
        "[[0.1429], [0.1429]]"))


# --- box_nms -------------------------------------------------------------------------------------
_NMS_PARAMS = (
    Param("overlap_thresh", "float", 0.5, "Overlapping(IoU) threshold to suppress object with "
                                          "smaller score."),
    Param("valid_thresh", "float", 0.0, "Filter input boxes to those whose scores greater than "
                                        "valid_thresh."),
    Param("topk", "int", -1, "Apply nms to topk boxes with descending scores, -1 to no "
                             "restriction."),
    Param("coord_start", "int", 2, "Start index of the consecutive 4 coordinates."),
    Param("score_index", "int", 1, "Index of the scores/confidence of boxes."),
    Param("id_index", "int", -1, "Optional, index of the class categories, -1 to disable."),
    Param("background_id", "int", -1, "Optional, id of the background class which will be "
                                      "ignored in nms."),
    Param("force_suppress", "bool", False, "Optional, if set false and id_index is provided, nms "
                                           "will only apply to boxes belongs to the same "
                                           "category"),
    Param("in_format", "str", "corner", "The input box encoding type.", choices=_FORMATS),
    Param("out_format", "str", "corner", "The output box encoding type.", choices=_FORMATS),
)


def _nms_infer_shape(p, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    if len(data) < 2:
        raise ShapeError(f"Check failed: indim >= 2: input must have dim >= 2 the last two "
                         f"dimensions are num_box and box_width {_tuple(data)} provided")
    width = data[-1]
    expected = 5 + (p.id_index >= 0)
    if width < expected:
        raise ShapeError(f"Check failed: width_elem >= expected ({width} vs. {expected}) : the "
                         f"last dimension must have at least 5 elements namely (score, "
                         f"coordinates x 4) {width} provided, {expected} expected.")
    cs, ce = p.coord_start, p.coord_start + 3
    if not (cs >= 0 and ce < width):
        raise ShapeError(f"Check failed: coord_start >= 0 && coord_end < width_elem: "
                         f"coordinates: ({cs}, {ce}) out of range:: (0, {width})")
    si = p.score_index
    if not (si >= 0 and si < width):
        raise ShapeError(f"Check failed: score_index >= 0 && score_index < width_elem: "
                         f"score_index: {si} out of range: (0, {width})")
    if not (si < cs or si > ce):
        raise ShapeError(f"Check failed: score_index < coord_start || score_index > coord_end: "
                         f"score_index: {si} conflict with coordinates: ({cs}, {ce}).")
    ii = p.id_index
    if ii >= 0:
        if ii >= width:
            raise ShapeError(f"Check failed: id_index >= 0 && id_index < width_elem: id_index: "
                             f"{ii} out of range: (0, {width})")
        if not (ii < cs or ii > ce):
            raise ShapeError(f"Check failed: id_index < coord_start || id_index > coord_end: "
                             f"id_index: {ii} conflict with coordinates: ({cs}, {ce}).")
        if ii == si:
            raise ShapeError(f"Check failed: id_index != score_index: id_index: {ii} conflict "
                             f"with score_index: {si}")
    return [tuple(data)], [tuple(data), tuple(data[:-1]) + (1,)]


def sort_desc_stable(score, valid):
    """Per row of ``score`` (B, N): indices of the ``valid`` entries in descending score order
    (ties keep their order, as MXNet's stable sorts), then the invalid ones; and the number
    of valid entries per row."""
    order = torch.sort(score, dim=1, descending=True, stable=True).indices
    invalid = (~valid).gather(1, order).to(torch.int8)
    order = order.gather(1, torch.sort(invalid, dim=1, stable=True).indices)
    return order, valid.sum(dim=1)


def greedy_nms(boxes, areas, ids, thresh, fmt, inclusive=False, empty_union_zero=False):
    """Greedy suppression over boxes in their given (score) order, numpy arrays of one image:
    ``boxes`` (n, 4), ``areas`` (n,), ``ids`` (n,) ints or None (all one class). A kept box
    suppresses each later box of its class whose IoU is above ``thresh`` (at least it with
    ``inclusive``; an empty union counts as IoU 0 with ``empty_union_zero``). Returns the kept
    mask. Loops over the kept boxes only, each step one
    vectorised IoU against the later ones."""
    n = boxes.shape[0]
    alive = np.ones(n, dtype=bool)
    if fmt == "corner":
        l, t, r, b = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    else:
        hw, hh = boxes[:, 2] / 2, boxes[:, 3] / 2
        l, t, r, b = boxes[:, 0] - hw, boxes[:, 1] - hh, boxes[:, 0] + hw, boxes[:, 1] + hh
    zero = boxes.dtype.type(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(n - 1):
            if not alive[i]:
                continue
            rest = slice(i + 1, n)
            w = np.minimum(r[i], r[rest]) - np.maximum(l[i], l[rest])
            h = np.minimum(b[i], b[rest]) - np.maximum(t[i], t[rest])
            inter = np.where(w > 0, w, zero) * np.where(h > 0, h, zero)
            union = areas[i] + areas[rest] - inter
            iou = inter / union
            if empty_union_zero:
                iou = np.where(union <= 0, zero, iou)
            hit = iou >= thresh if inclusive else iou > thresh
            if ids is not None:
                hit &= ids[rest] == ids[i]
            alive[rest] &= ~hit
    return alive


def _convert_format(c, fin, fout):
    """Coordinates (..., 4) from ``fin`` to ``fout`` (MXNet's arithmetic)."""
    if fin == fout:
        return c
    if fin == "corner":
        return torch.stack([(c[..., 0] + c[..., 2]) / 2, (c[..., 1] + c[..., 3]) / 2,
                            c[..., 2] - c[..., 0], c[..., 3] - c[..., 1]], dim=-1)
    return torch.stack(box_edges(c, "center"), dim=-1)


def _box_nms(p, ins, oc):
    x = ins[0]
    shape = x.shape
    n, width = shape[-2], shape[-1]
    data = x.reshape(-1, n, width)
    cs = p.coord_start
    score = data[..., p.score_index]
    valid = score > p.valid_thresh
    if p.id_index >= 0 and p.background_id >= 0:
        valid &= data[..., p.id_index] != p.background_id
    order, counts = sort_desc_stable(score, valid)
    keep_n = counts.clamp(max=p.topk) if p.topk > 0 else counts
    use_ids = p.id_index >= 0 and not p.force_suppress
    # the greedy pass runs on the host in numpy (same float arithmetic as MXNet's C loop)
    order_np, keep_np = order.cpu().numpy(), keep_n.cpu().numpy()
    data_np = data.detach().cpu().numpy()
    out = torch.full_like(data, -1)
    record = torch.full(data.shape[:2], -1, dtype=x.dtype, device=x.device)
    for bi in range(data.shape[0]):
        idx = order_np[bi, :keep_np[bi]]
        if idx.size == 0:
            continue
        rows = data_np[bi, idx]
        boxes = rows[:, cs:cs + 4]
        areas = box_area(torch.from_numpy(boxes), p.in_format).numpy()
        ids = rows[:, p.id_index].astype(np.int64) if use_ids else None
        kept = torch.as_tensor(idx[greedy_nms(boxes, areas, ids, p.overlap_thresh, p.in_format)],
                               device=x.device)
        k = kept.numel()
        out[bi, :k] = data[bi, kept]
        record[bi, :k] = kept.to(x.dtype)
    if p.in_format != p.out_format:
        live = record >= 0
        conv = _convert_format(out[..., cs:cs + 4], p.in_format, p.out_format)
        out[..., cs:cs + 4] = torch.where(live[..., None], conv, out[..., cs:cs + 4])
    return out.reshape(shape), record.reshape(tuple(shape[:-1]) + (1,))


def _nms_backward(p, ins, oc):
    """d data: each output row's gradient back at its box's original position."""
    g, record = ins
    shape = g.shape
    n, width = shape[-2], shape[-1]
    g3 = g.reshape(-1, n, width)
    rec = record.reshape(-1, n).to(torch.int64)
    gx = torch.zeros_like(g3)
    live = rec >= 0
    b = torch.arange(g3.shape[0], device=g.device)[:, None].expand_as(rec)
    gx[b[live], rec[live]] = g3[live]
    return gx.reshape(shape)


register(OpDef(
    "_contrib_box_nms", _box_nms, _nms_infer_shape, params=_NMS_PARAMS,
    outputs=("output0",), num_hidden_outputs=1, hint="box_nms",
    aliases=("_contrib_box_non_maximum_suppression",),
    gradient=lambda F, p, ins, outs, ograds: [F._backward_contrib_box_nms(ograds[0], outs[1], **p)],
    doc="Apply non-maximum suppression to input.\n\n"
        "The rows of ``data`` (..., n, k) are boxes ``[id, score, xmin, ymin, xmax, ymax,\n"
        "...]`` (positions set by ``coord_start``, ``score_index``, ``id_index``). Boxes with a\n"
        "score above ``valid_thresh`` (and not of ``background_id``) are sorted by descending\n"
        "score, the first ``topk`` kept, and each box suppresses the later ones (of its class\n"
        "unless ``force_suppress``) overlapping it by more than ``overlap_thresh``. The kept\n"
        "boxes come first in score order, the remaining rows are -1. The gradient goes back to\n"
        "each kept box's original row.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],\n"
        "...                  [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]])\n"
        ">>> mx.nd.contrib.box_nms(x, overlap_thresh=0.1, id_index=0,\n"
        "...                       force_suppress=True).asnumpy()[:, :2].tolist()\n"
        "[[2.0, 0.6000000238418579], [0.0, 0.5], [-1.0, -1.0], [-1.0, -1.0]]"))
register(OpDef(
    "_backward_contrib_box_nms", _nms_backward,
    lambda p, ins, outs: (ins, [ins[0]]), params=_NMS_PARAMS, inputs=("out_grad", "record"),
    outputs=("data",), infer_type=lambda p, ins, outs: (ins, [ins[0]]), public=False,
    doc="Gradient of box_nms."))


# --- bipartite_matching --------------------------------------------------------------------------
_BM_PARAMS = (
    Param("is_ascend", "bool", False, "Use ascend order for scores instead of descending. Please "
                                      "set threshold accordingly."),
    Param("threshold", "float", doc="Ignore matching when score < thresh, if is_ascend=false, or "
                                    "ignore score > thresh, if is_ascend=true."),
    Param("topk", "int", -1, "Limit the number of matches to topk, set -1 for no limit"),
)


def _bm_infer_shape(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    if len(d) < 2:
        raise ShapeError(f"Check failed: dshape.ndim() >= 2 ({len(d)} vs. 2) : score matrix must "
                         f"have dim >= 2 {len(d)} provided")
    return [tuple(d)], [tuple(d[:-1]), tuple(d[:-2]) + (d[-1],)]


def _bipartite(p, ins, oc):
    """Greedy matching, best score first: repeatedly the best entry whose row and column are
    both free (ties: the first in row-major order), until it fails the threshold. MXNet checks
    ``count > topk`` before each match, so ``topk`` allows topk + 1 matches; kept as MXNet."""
    x = ins[0]
    n, m = x.shape[-2], x.shape[-1]
    s = x.reshape(-1, n * m)
    bsz = s.shape[0]
    fill = float("inf") if p.is_ascend else float("-inf")
    rows = torch.full((bsz, n), -1, dtype=torch.int64, device=x.device)
    cols = torch.full((bsz, m), -1, dtype=torch.int64, device=x.device)
    free = torch.ones_like(s, dtype=torch.bool)
    active = torch.ones(bsz, dtype=torch.bool, device=x.device)
    ar = torch.arange(bsz, device=x.device)
    limit = min(n, m) if p.topk <= 0 else min(n, m, p.topk + 1)
    for _ in range(limit):
        masked = torch.where(free, s, torch.full_like(s, fill))
        best, at = (masked.min(dim=1) if p.is_ascend else masked.max(dim=1))
        ok = best < p.threshold if p.is_ascend else best > p.threshold
        active &= ok & free.any(dim=1)
        if not bool(active.any()):
            break
        r, c = at // m, at % m
        b = ar[active]
        rows[b, r[active]] = c[active]
        cols[b, c[active]] = r[active]
        fr = free.view(bsz, n, m)
        fr[b, r[active], :] = False
        fr[b, :, c[active]] = False
    return (rows.to(x.dtype).reshape(x.shape[:-1]),
            cols.to(x.dtype).reshape(tuple(x.shape[:-2]) + (m,)))


register(OpDef(
    "_contrib_bipartite_matching", _bipartite, _bm_infer_shape, params=_BM_PARAMS,
    outputs=("output0", "output1"), gradient=zero_gradient, hint="bipartite_matching",
    doc="Compute bipartite matching.\n\n"
        "Greedy matching on the score matrix ``data`` (B, N, M): the best remaining score\n"
        "(highest, or lowest with ``is_ascend``) whose row and column are both unmatched is\n"
        "matched, until a score fails ``threshold``. Returns the matched column of each row and\n"
        "the matched row of each column (-1 for none). Zero gradients.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> s = mx.nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]])\n"
        ">>> x, y = mx.nd.contrib.bipartite_matching(s, threshold=1e-12)\n"
        ">>> x.asnumpy().tolist(), y.asnumpy().tolist()\n"
        "([1.0, -1.0, 0.0], [2.0, 0.0])"))


# --- box_encode / box_decode ---------------------------------------------------------------------
def _enc_infer_shape(p, ins, outs):
    """MXNet checks the anchors and refs (its refs message says "anchors" too) and sets means
    and stds to (4,); samples and matches are not checked."""
    ins = list(ins)
    anchors, refs = ins[2], ins[3]
    for name, s in (("a", anchors), ("r", refs)):
        if s is None:
            continue
        if len(s) != 3:
            raise ShapeError(f"Check failed: {name}shape.ndim() == 3 ({len(s)} vs. 3) : input "
                             f"must have dim == 3 {len(s)} provided")
        if s[2] != 4:
            raise ShapeError(f"Check failed: ldim == 4 ({s[2]} vs. 4) : last dimension of "
                             f"anchors must be 4, {s[2]} provided")
    set_shape(ins, 4, (4,))
    set_shape(ins, 5, (4,))
    if anchors is None:
        return ins, outs
    return ins, [tuple(anchors)] * 2


def _box_encode(p, ins, oc):
    samples, matches, anchors, refs, means, stds = ins
    m = refs.shape[1]
    idx = matches.to(torch.int64).clamp(0, max(m - 1, 0))
    ref = refs.gather(1, idx[..., None].expand(idx.shape + (4,)))
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    rx, ry = ref[..., 0] + rw * 0.5, ref[..., 1] + rh * 0.5
    aw, ah = anchors[..., 2] - anchors[..., 0], anchors[..., 3] - anchors[..., 1]
    ax, ay = anchors[..., 0] + aw * 0.5, anchors[..., 1] + ah * 0.5
    t = torch.stack([((rx - ax) / aw - means[0]) / stds[0], ((ry - ay) / ah - means[1]) / stds[1],
                     (torch.log(rw / aw) - means[2]) / stds[2],
                     (torch.log(rh / ah) - means[3]) / stds[3]], dim=-1)
    valid = (samples > 0.5)[..., None]
    mask = valid.to(anchors.dtype).expand(t.shape).contiguous()
    return torch.where(valid, t, torch.zeros_like(t)), mask


register(OpDef(
    "_contrib_box_encode", _box_encode, _enc_infer_shape,
    inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    outputs=("output0", "output1"), gradient=zero_gradient, hint="box_encode",
    doc="Encode bounding boxes training target with normalized center offsets.\n\n"
        "``samples`` (B, N): +1 positive, -1 negative, 0 ignore; ``matches`` (B, N): index into\n"
        "``refs`` (B, M, 4); ``anchors`` (B, N, 4), corner format. Returns the targets\n"
        "``((dx, dy, log dw, log dh) - means) / stds`` of the positive anchors (0 elsewhere)\n"
        "and their masks, both (B, N, 4). Zero gradients."))

_DEC_PARAMS = tuple(Param(f"std{i}", "float", 1.0, f"value to be divided from the {k} encoded "
                                                   "values")
                    for i, k in enumerate(("1st", "2nd", "3rd", "4th"))) + (
    Param("clip", "float", -1.0, "If larger than 0, bounding box target will be clipped to this "
                                 "value."),
    _fmt_param("center", '"corner" means boxes are encoded as [xmin, ymin, xmax, ymax], '
                         '"center" means boxes are encodes as [x, y, width, height].'),
)


def _dec_infer_shape(p, ins, outs):
    data, anchors = ins
    if data is None:
        return ins, outs
    if len(data) != 3:
        raise ShapeError(f"Check failed: dshape.ndim() == 3 ({len(data)} vs. 3) : data must be "
                         f"3d, {len(data)} provided")
    if data[2] != 4:
        raise ShapeError(f"Check failed: ldim == 4 ({data[2]} vs. 4) : last dimension of data "
                         f"must be 4, {data[2]} provided")
    return list(ins), [tuple(data)]


def _box_decode(p, ins, oc):
    x, anchors = ins
    a = anchors.reshape(-1, 4)[: x.shape[1]]
    if p.format == "corner":
        aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
        ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    else:
        ax, ay, aw, ah = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    ox = x[..., 0] * p.std0 * aw + ax
    oy = x[..., 1] * p.std1 * ah + ay
    dw, dh = x[..., 2] * p.std2, x[..., 3] * p.std3
    if p.clip > 0:
        dw, dh = dw.clamp(max=p.clip), dh.clamp(max=p.clip)
    ow, oh = torch.exp(dw) * aw / 2, torch.exp(dh) * ah / 2
    return torch.stack([ox - ow, oy - oh, ox + ow, oy + oh], dim=-1)


register(OpDef(
    "_contrib_box_decode", _box_decode, _dec_infer_shape, params=_DEC_PARAMS,
    inputs=("data", "anchors"), gradient=zero_gradient, hint="box_decode",
    doc="Decode bounding boxes training target with normalized center offsets.\n\n"
        "``data`` (B, N, 4) holds offsets ``(dx, dy, dw, dh)`` (scaled by ``std0..3``) of the\n"
        "``anchors`` (1, N, 4) in ``format``; the output is corner boxes (B, N, 4). ``dw`` and\n"
        "``dh`` are clipped to ``clip`` when it is positive. Zero gradients."))
