"""Image operators of MXNet 1.9.1 (``mx.nd.image.*`` / ``mx.sym.image.*``, registered as
``_image_<name>``): ``to_tensor``, ``normalize``, ``resize``, ``crop``, the flips, the random
colour jitters (brightness, contrast, saturation, hue, all four at once), ``adjust_lighting`` and
``random_lighting``.

Layouts, parameters, dtypes and check messages follow MXNet 1.9.1
(``src/operator/image/image_random-inl.h``, ``resize-inl.h``, ``crop-inl.h``): images are HWC
(``to_tensor``, ``resize`` and ``crop`` also take NHWC batches; the flips and colour operators
one HWC image with 1 or 3 channels), ``to_tensor`` gives float32 CHW in [0, 1] and
``normalize`` works on CHW/NCHW tensors. Integer images keep their dtype: results are cast by
truncation, and uint8 ones are clamped to [0, 255] first, as MXNet's ``saturate_cast``.
``resize`` uses OpenCV's ``cv2.resize`` as MXNet does (a torch interpolation without OpenCV).

Gradients are MXNet's: ``normalize`` divides the head gradient by ``std``, ``crop`` pads it with
zeros, and the flips and colour operators pass it through unchanged (MXNet registers them with
``_copy`` as gradient, so e.g. ``flip_left_right``'s gradient is *not* flipped). ``to_tensor`` and
``resize`` have none (MXNet's fails with a shape error).

Random choices come from torch's generator (``mx.random.seed`` makes them repeatable); the
values differ from MXNet's draws, the distributions are the same.
"""
from __future__ import annotations

import ast

import numpy as np
import torch
import torch.nn.functional as TF

from ..base import MXNetError
from .registry import OpDef, Param, ShapeError, register, _sh

_F32 = np.dtype(np.float32)


# --- parameters ----------------------------------------------------------------------------------
class _FloatTuple(Param):
    """A ``tuple of <float>`` parameter (a number counts as a 1-tuple)."""

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
        dflt = "required" if self.required else f"optional, default={list(self.default)}"
        return f"{self.name} : tuple of <float>, {dflt}\n    {self.doc}"


class _NonNegFloat(Param):
    """A float parameter with MXNet's ``set_lower_bound(0)``."""

    def parse(self, value, where):
        out = super().parse(value, where)
        if out is not None and out < 0:
            raise MXNetError(f"value {value} for Parameter {self.name} should be greater equal to "
                             f"0\n{self.name}: {self.doc}, in operator {where}")
        return out


def _factor_params():
    return (_NonNegFloat("min_factor", "float", doc="Minimum factor."),
            _NonNegFloat("max_factor", "float", doc="Maximum factor."))


# --- shared checks, casts and draws --------------------------------------------------------------
def _hwc_image(shape):
    """One HWC image with 1 or 3 channels (the flips and colour operators)."""
    if len(shape) != 3:
        raise ShapeError(f"Check failed: dshape.ndim() == 3 ({len(shape)} vs. 3) : Input image "
                         f"must have shape (height, width, channels), but got {_sh(shape)}")
    if shape[2] not in (1, 3):
        raise ShapeError("Check failed: nchannels == 3 || nchannels == 1: The last dimension of "
                         "input image must be the channel dimension with either 1 or 3 elements, "
                         f"but got input with shape {_sh(shape)}")


def _image_infer_shape(p, ins, outs):
    if ins[0] is None:
        return ins, outs
    _hwc_image(ins[0])
    return [tuple(ins[0])], [tuple(ins[0])]


def _store(val, like, saturate=True):
    """``val`` (float) in ``like``'s dtype as MXNet's ``saturate_cast``: clamp for uint8, then
    truncate for every integer type (``saturate=False``: a C cast, wrapping around)."""
    if like.dtype.is_floating_point:
        return val.to(like.dtype)
    if like.dtype == torch.uint8:
        if saturate:
            val = val.clamp(0, 255)
        else:
            return val.trunc().to(torch.int64).to(torch.uint8)
    return val.trunc().to(like.dtype)


def _work(x):
    """The float tensor an operator computes in (the image's own float dtype, else float32)."""
    return x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float32)


def _uniform(lo, hi):
    return float(lo + (hi - lo) * torch.rand(()).item())


def _through(F, p, ins, outs, ograds):
    """MXNet's gradient of the flips and colour operators: the head gradient, unchanged."""
    return [F._copy(ograds[0])]


def _op(name, forward, infer_shape, doc, params=(), gradient=_through, **kw):
    register(OpDef("_image_" + name, forward, infer_shape, params=params, gradient=gradient,
                   hint=name, doc=doc, **kw))


# --- to_tensor -----------------------------------------------------------------------------------
def _to_tensor_infer_shape(p, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    if len(s) not in (3, 4):
        raise ShapeError("Check failed: (shp.ndim() == 3) || (shp.ndim() == 4): Input image must "
                         "have shape (height, width, channels), or (N, height, width, channels) "
                         f"but got {_sh(s)}")
    out = (s[2], s[0], s[1]) if len(s) == 3 else (s[0], s[3], s[1], s[2])
    return [tuple(s)], [out]


def _to_tensor(p, ins, oc):
    x = ins[0]
    perm = (2, 0, 1) if x.dim() == 3 else (0, 3, 1, 2)
    return (x.permute(perm).to(torch.float32) / 255.0).contiguous()


_op("to_tensor", _to_tensor, _to_tensor_infer_shape, gradient=None,
    infer_type=lambda p, ins, outs: (ins, [_F32]), fresh_output=True,
    doc="Converts an image NDArray of shape (H x W x C) or (N x H x W x C) with values in the "
        "range [0, 255] to a tensor NDArray of shape (C x H x W) or (N x C x H x W) with values "
        "in the range [0, 1] (float32).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> img = mx.nd.array([[[0, 51, 255]]], dtype='uint8')\n"
        ">>> mx.nd.image.to_tensor(img).asnumpy().ravel().tolist()\n"
        "[0.0, 0.20000000298023224, 1.0]")


# --- normalize -----------------------------------------------------------------------------------
_NORM_PARAMS = (
    _FloatTuple("mean", "float", (0.0, 0.0, 0.0, 0.0),
                "Sequence of means for each channel. Default value is 0."),
    _FloatTuple("std", "float", (1.0, 1.0, 1.0, 1.0),
                "Sequence of standard deviations for each channel. Default value is 1."),
)


def _norm_infer_shape(p, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    if len(s) not in (3, 4):
        raise ShapeError("Check failed: (dshape.ndim() == 3) || (dshape.ndim() == 4): Input "
                         "tensor must have shape (channels, height, width), or (N, channels, "
                         f"height, width), but got {_sh(s)}")
    c = s[0] if len(s) == 3 else s[1]
    if c not in (1, 3):
        raise ShapeError("Check failed: nchannels == 3 || nchannels == 1: The first dimension of "
                         "input tensor must be the channel dimension with either 1 or 3 "
                         f"elements, but got input with shape {_sh(s)}")
    for key, cond in (("mean", "(param.mean.ndim() == 1) || (param.mean.ndim() == nchannels)"),
                      ("std", "param.std.ndim() == 1 || param.std.ndim() == nchannels")):
        v = p[key]
        if len(v) not in (1, c):
            vals = ",".join(f"{x:g}" for x in v)
            raise ShapeError(f"Check failed: {cond}: Invalid {key} for input with shape {_sh(s)}."
                             f" {key} must have either 1 or 3 elements, but got [{vals}]")
    return [tuple(s)], [tuple(s)]


def _channel_vec(values, x, ndim):
    """``values`` as a tensor broadcasting over the channel axis of a (N)CHW tensor."""
    t = torch.tensor(values, dtype=_work(x).dtype, device=x.device)
    return t.reshape((-1, 1, 1) if ndim == 3 else (1, -1, 1, 1))


def _normalize(p, ins, oc):
    x = ins[0]
    mean, std = _channel_vec(p.mean, x, x.dim()), _channel_vec(p.std, x, x.dim())
    return _store((_work(x) - mean) / std, x, saturate=False)


def _normalize_backward(p, ins, oc):
    g = ins[0]
    return _store(_work(g) / _channel_vec(p.std, g, g.dim()), g, saturate=False)


_op("normalize", _normalize, _norm_infer_shape, params=_NORM_PARAMS, fresh_output=True,
    gradient=lambda F, p, ins, outs, ograds: [F._backward_image_normalize(ograds[0], **p)],
    doc="Normalizes a tensor of shape (C x H x W) or (N x C x H x W) with per-channel mean "
        "and standard deviation: ``out[c] = (data[c] - mean[c]) / std[c]``; a 1-element mean or "
        "std applies to every channel. C must be 1 or 3.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.ones((3, 1, 1))\n"
        ">>> mx.nd.image.normalize(x, mean=(0, 0.5, 1), std=(1, 2, 4)).asnumpy().ravel().tolist()\n"
        "[1.0, 0.25, 0.0]")
register(OpDef("_backward_image_normalize", _normalize_backward, lambda p, ins, outs: (ins, ins),
               params=_NORM_PARAMS, inputs=("out_grad",), public=False,
               doc="Gradient of _image_normalize."))


# --- resize --------------------------------------------------------------------------------------
_RESIZE_PARAMS = (
    Param("size", "shape", (), "Size of new image. Could be (width, height) or (size)"),
    Param("keep_ratio", "bool", False, "Whether to resize the short edge or both edges to "
                                       "`size`, if size is give as an integer."),
    Param("interp", "int", 1, "Interpolation method for resizing: 0 nearest, 1 bilinear, 2 "
                              "bicubic, 3 area, 4 Lanczos (OpenCV's codes)."),
)


def _resize_hw(p, h, w):
    """The output (height, width) for an input of (h, w)."""
    size = p.size
    if len(size) not in (1, 2):
        raise ShapeError("Check failed: (param.size.ndim() == 1) || (param.size.ndim() == 2): "
                         f"Input size dimension must be 1 or 2, but got {len(size)}")
    if size[0] <= 0:
        raise ShapeError(f"Check failed: param.size[0] > 0 ({size[0]} vs. 0) : Input width "
                         f"should be greater than 0, but got {size[0]}")
    if len(size) == 2:
        if size[1] <= 0:
            raise ShapeError(f"Check failed: param.size[1] > 0 ({size[1]} vs. 0) : Input height "
                             f"should be greater than 0, but got {size[1]}")
        return size[1], size[0]
    s = size[0]
    if not p.keep_ratio:
        return s, s
    return (h * s // w, s) if h > w else (s, w * s // h)


def _resize_infer_shape(p, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    if len(s) not in (3, 4):
        raise ShapeError("Check failed: (in_attrs->at(0).ndim() == 3U) || (in_attrs->at(0).ndim()"
                         f" == 4U): Input image dimension should be 3 or 4 but got {len(s)}")
    h, w = _resize_hw(p, s[-3], s[-2])
    return [tuple(s)], [tuple(s[:-3]) + (h, w, s[-1])]


_CV2 = []


def _opencv():
    """OpenCV's module (MXNet resizes with it), or None: a torch interpolation stands in.
    Imported on first use and, as ``mx.image`` does, with its thread pool set to 1 thread
    (one image per call: its threads only compete with PyTorch's and DataLoader workers)."""
    if not _CV2:
        try:
            import cv2
            cv2.setNumThreads(1)
        except ImportError:  # pragma: no cover - exercised only without OpenCV
            cv2 = None
        _CV2.append(cv2)
    return _CV2[0]

_CV_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.float32, np.float64)
_TORCH_MODES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "bicubic"}


def _resize_one_cv2(img, h, w, interp):
    a = img.numpy()
    cast = a.dtype.type not in _CV_DTYPES
    src = a.astype(np.float32 if a.dtype == np.float16 else np.float64) if cast else a
    cv2 = _opencv()
    try:
        out = cv2.resize(src, (w, h), interpolation=interp)
    except cv2.error as e:
        raise MXNetError(f"OpenCV resize failed (interp={interp}): {e}".strip()) from None
    out = out.reshape(h, w, a.shape[2])
    if cast:
        out = out if a.dtype == np.float16 else np.trunc(out)
        out = out.astype(a.dtype)
    return torch.from_numpy(np.ascontiguousarray(out))


def _resize_torch(x, h, w, interp):
    if interp not in _TORCH_MODES:
        raise MXNetError(f"Unknown interpolation method {interp} in resize")
    batch = x if x.dim() == 4 else x.unsqueeze(0)
    t = _work(batch).permute(0, 3, 1, 2)
    mode = _TORCH_MODES[interp]
    kw = {} if mode in ("nearest", "area") else {"align_corners": False}
    out = TF.interpolate(t, size=(h, w), mode=mode, **kw).permute(0, 2, 3, 1)
    if not x.dtype.is_floating_point:
        out = out.round()
    out = _store(out, x).contiguous()
    return out if x.dim() == 4 else out[0]


def _resize(p, ins, oc):
    x = ins[0]
    h, w = _resize_hw(p, x.shape[-3], x.shape[-2])
    if _opencv() is None or x.device.type != "cpu":
        return _resize_torch(x, h, w, p.interp)
    if p.interp not in (0, 1, 2, 3, 4):
        raise MXNetError(f"OpenCV resize: Unknown interpolation method {p.interp} (valid: 0 "
                         "nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos)")
    if x.dim() == 3:
        return _resize_one_cv2(x.contiguous(), h, w, p.interp)
    return torch.stack([_resize_one_cv2(im.contiguous(), h, w, p.interp) for im in x])


_op("resize", _resize, _resize_infer_shape, params=_RESIZE_PARAMS, gradient=None,
    fresh_output=True,
    doc="Resizes an image of shape (H x W x C) or a batch (N x H x W x C) to ``size``: "
        "(width, height), or one number for both edges (the short edge with "
        "``keep_ratio=True``, the other scaled and truncated). The dtype is kept.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> img = mx.nd.zeros((4, 6, 3), dtype='uint8')\n"
        ">>> mx.nd.image.resize(img, size=(3, 2)).shape\n"
        "(2, 3, 3)\n"
        ">>> mx.nd.image.resize(img, size=2, keep_ratio=True).shape\n"
        "(2, 3, 3)")


# --- crop ----------------------------------------------------------------------------------------
_CROP_PARAMS = (
    Param("x", "int", doc="Left boundary of the cropping area."),
    Param("y", "int", doc="Top boundary of the cropping area."),
    Param("width", "int", doc="Width of the cropping area."),
    Param("height", "int", doc="Height of the cropping area."),
)


def _crop_infer_shape(p, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    if len(s) not in (3, 4):
        raise ShapeError("Image Crop expects inputs of 3D (h, w, c) or 4D (n, h, w, c). But got "
                         f"{len(s)}")
    if not (p.height > 0 and p.width > 0):
        raise ShapeError("Check failed: (param.height > 0) && (param.width > 0): Input height "
                         "and width must be greater than 0")
    if p.x < 0 or p.y < 0:
        raise ShapeError(f"Image Crop: x ({p.x}) and y ({p.y}) must not be negative")
    if p.x + p.width > s[-2]:
        raise ShapeError("Check failed: param.x + param.width <= ishape[ishape.ndim() - 2]: x + "
                         "width should not be greater than input width")
    if p.y + p.height > s[-3]:
        raise ShapeError("Check failed: param.y + param.height <= ishape[ishape.ndim() - 3]: y + "
                         "height should not be greater than input height")
    return [tuple(s)], [tuple(s[:-3]) + (p.height, p.width, s[-1])]


def _crop(p, ins, oc):
    return ins[0][..., p.y:p.y + p.height, p.x:p.x + p.width, :].contiguous()


def _crop_backward(p, ins, oc):
    g, x = ins
    out = torch.zeros_like(x, dtype=g.dtype)
    out[..., p.y:p.y + p.height, p.x:p.x + p.width, :] = g
    return out


_op("crop", _crop, _crop_infer_shape, params=_CROP_PARAMS, fresh_output=True,
    gradient=lambda F, p, ins, outs, ograds: [F._backward_image_crop(ograds[0], ins[0], **p)],
    doc="Crops an image (H x W x C) or a batch (N x H x W x C) to the ``width`` x ``height`` "
        "area whose top-left corner is (``x``, ``y``).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> img = mx.nd.arange(12).reshape((2, 6, 1))\n"
        ">>> mx.nd.image.crop(img, x=1, y=0, width=2, height=2).asnumpy().ravel().tolist()\n"
        "[1.0, 2.0, 7.0, 8.0]")
register(OpDef("_backward_image_crop", _crop_backward,
               lambda p, ins, outs: (ins, [ins[1]]), params=_CROP_PARAMS,
               inputs=("out_grad", "data"), public=False,
               infer_type=lambda p, ins, outs: (ins, [ins[0]]), doc="Gradient of _image_crop."))


# --- flips ---------------------------------------------------------------------------------------
def _flip(axis, random):
    def forward(p, ins, oc):
        x = ins[0]
        if random and torch.rand(()).item() >= 0.5:
            return x.clone()
        return torch.flip(x, (axis,))
    return forward


for _name, _axis, _what in (("flip_left_right", 1, "left and right (the width axis)"),
                            ("flip_top_bottom", 0, "top and bottom (the height axis)")):
    _op(_name, _flip(_axis, False), _image_infer_shape, fresh_output=True,
        doc=f"Swaps the {_what} of an image (H x W x C, C = 1 or 3).")
    _op("random_" + _name, _flip(_axis, True), _image_infer_shape, fresh_output=True,
        deterministic=False,
        doc=f"Swaps the {_what} of an image (H x W x C, C = 1 or 3) with probability 0.5.")


# --- colour jitter -------------------------------------------------------------------------------
_GRAY = (0.299, 0.587, 0.114)  # R, G, B weights of the luma MXNet uses


def _gray(x):
    """Per-pixel luma of an HWC float image (the value itself for one channel)."""
    if x.shape[2] == 1:
        return x
    w = torch.tensor(_GRAY, dtype=x.dtype, device=x.device)
    return (x * w).sum(dim=2, keepdim=True)


def adjust_brightness(x, alpha):
    return _store(_work(x) * alpha, x)


def adjust_contrast(x, alpha):
    f = _work(x)
    gray_mean = _gray(f).to(torch.float64).mean().to(f.dtype)
    return _store(f * alpha + (1 - alpha) * gray_mean, x)


def adjust_saturation(x, alpha):
    f = _work(x)
    if x.shape[2] == 1:
        return x.clone()
    # MXNet 1.9.1's kernel assigns instead of summing the weighted channels: the "gray" it
    # blends with is 0.114 * B alone (kept, so saturation jitter gives MXNet's pixels)
    gray = f[..., 2:3] * _GRAY[2]
    return _store(f * alpha + (1 - alpha) * gray, x)


def _rgb_to_hls(r, g, b):
    vmax = torch.maximum(torch.maximum(r, g), b)
    vmin = torch.minimum(torch.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chroma = diff > torch.finfo(torch.float32).eps
    safe = torch.where(chroma, diff, torch.ones_like(diff))
    sat = torch.where(light < 0.5, diff / (vmax + vmin).clamp_min(1e-30),
                      diff / (2.0 - vmax - vmin).clamp_min(1e-30))
    scale = 60.0 / safe
    hue = torch.where(vmax == r, (g - b) * scale,
                      torch.where(vmax == g, (b - r) * scale + 120.0, (r - g) * scale + 240.0))
    hue = torch.where(hue < 0, hue + 360.0, hue)
    zero = torch.zeros_like(hue)
    return torch.where(chroma, hue, zero), light, torch.where(chroma, sat, zero)


# OpenCV's sector table: for each 60-degree sector, which of (p2, p1, falling, rising) is b, g, r
_HLS_SECTORS = ((1, 3, 0), (1, 0, 2), (3, 0, 1), (0, 2, 1), (0, 1, 3), (2, 1, 0))


def _hls_to_rgb(h, light, sat):
    p2 = torch.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = torch.remainder(h * np.float32(1.0 / 60.0), 6.0)
    sector = h.floor().clamp(0, 5).long()
    frac = h - sector.to(h.dtype)
    tab = torch.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac])
    idx = torch.tensor(_HLS_SECTORS, device=h.device)[sector]  # (..., 3): b, g, r
    b, g, r = (torch.gather(tab, 0, idx[..., k].unsqueeze(0))[0] for k in range(3))
    gray = sat == 0
    return (torch.where(gray, light, r), torch.where(gray, light, g),
            torch.where(gray, light, b))


def adjust_hue(x, alpha):
    if x.shape[2] == 1:
        return x.clone()
    f = x.to(torch.float32) / 255.0  # MXNet converts in float, whatever the image's dtype
    h, light, sat = _rgb_to_hls(f[..., 0], f[..., 1], f[..., 2])
    r, g, b = _hls_to_rgb(h + float(np.float32(alpha) * np.float32(360.0)), light, sat)
    return _store(torch.stack([r, g, b], dim=2) * 255.0, x)


def _random_adjust(adjust):
    def forward(p, ins, oc):
        return adjust(ins[0], _uniform(p.min_factor, p.max_factor))
    return forward


for _name, _fn, _what in (
        ("brightness", adjust_brightness, "Multiplies the image by a factor"),
        ("contrast", adjust_contrast, "Blends the image with its mean luma (0.299 R + 0.587 G + "
                                      "0.114 B) by a factor"),
        ("saturation", adjust_saturation, "Blends each pixel with a gray level by a factor (as "
                                          "MXNet 1.9.1: the gray level is 0.114 B)"),
        ("hue", adjust_hue, "Rotates the hue (HLS) by a factor times 360 degrees")):
    _op("random_" + _name, _random_adjust(_fn), _image_infer_shape, params=_factor_params(),
        deterministic=False, fresh_output=True,
        doc=f"{_what} drawn uniformly from [min_factor, max_factor] (image H x W x C, C = 1 or "
            "3; integer images are truncated, uint8 ones clamped to [0, 255]).")

_JITTER_PARAMS = (
    Param("brightness", "float", doc="How much to jitter brightness."),
    Param("contrast", "float", doc="How much to jitter contrast."),
    Param("saturation", "float", doc="How much to jitter saturation."),
    Param("hue", "float", doc="How much to jitter hue."),
)


def _color_jitter(p, ins, oc):
    x = ins[0]
    steps = ((p.brightness, lambda y, a: adjust_brightness(y, 1 + a)),
             (p.contrast, lambda y, a: adjust_contrast(y, 1 + a)),
             (p.saturation, lambda y, a: adjust_saturation(y, 1 + a)),
             (p.hue, adjust_hue))
    out = x
    for i in torch.randperm(4).tolist():  # MXNet shuffles the order of the four jitters
        amount, fn = steps[i]
        if amount > 0:
            out = fn(out, _uniform(-amount, amount))
    return out.clone() if out is x else out


_op("random_color_jitter", _color_jitter, _image_infer_shape, params=_JITTER_PARAMS,
    deterministic=False, fresh_output=True,
    doc="Applies, in random order, brightness and contrast and saturation factors drawn from "
        "[1 - b, 1 + b] (for each given b > 0) and a hue shift drawn from [-hue, hue] to an "
        "image (H x W x C, C = 1 or 3).")


# --- lighting ------------------------------------------------------------------------------------
# AlexNet's PCA lighting: eigenvectors of ImageNet's RGB covariance scaled by their eigenvalues
_EIG = ((55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009),
        (55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140),
        (55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203))


def adjust_lighting(x, alpha):
    if x.shape[2] == 1:
        return x.clone()
    f = _work(x)
    eig = torch.tensor(_EIG, dtype=torch.float32)
    pca = (eig @ torch.tensor(alpha, dtype=torch.float32)).to(f.dtype).to(f.device)
    return _store(f + pca, x)


def _adjust_lighting(p, ins, oc):
    if len(p.alpha) != 3:
        raise MXNetError(f"adjust_lighting: alpha must have 3 elements (R, G, B), got "
                         f"{len(p.alpha)}")
    return adjust_lighting(ins[0], p.alpha)


def _random_lighting(p, ins, oc):
    alpha = (torch.randn(3, dtype=torch.float64) * p.alpha_std).tolist()
    return adjust_lighting(ins[0], alpha)


_op("adjust_lighting", _adjust_lighting, _image_infer_shape, fresh_output=True,
    params=(_FloatTuple("alpha", "float", doc="The lighting alphas for the R, G, B channels."),),
    doc="Adjust the lighting level of the input (H x W x C), AlexNet style: adds "
        "``eigvec * (alpha * eigval)`` of ImageNet's RGB covariance to every pixel.")
_op("random_lighting", _random_lighting, _image_infer_shape, fresh_output=True,
    deterministic=False,
    params=(Param("alpha_std", "float", 0.05, "Level of the lighting noise."),),
    doc="Randomly add PCA noise, AlexNet style: ``adjust_lighting`` with alphas drawn from "
        "N(0, alpha_std).")
