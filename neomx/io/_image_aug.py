"""MXNet's default image augmenter (``aug_default``, ``src/io/image_aug_default.cc``) on
OpenCV images (HWC, BGR, uint8), for ``ImageRecordIter``.

The geometry (resize, crops, the upscaling of images smaller than ``data_shape``, pad,
rotation/shear/scale) and the order of the steps are MXNet's, so with the random steps off the
pixels are MXNet's. The random draws come from a NumPy ``Generator`` per image (MXNet: a
``std::mt19937`` per thread), so seeded runs repeat themselves but not MXNet's random choices.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import MXNetError
from ..recordio import _require_cv2

__all__ = ["AugParams", "augment", "inter_method"]

_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]])


class AugParams:
    """The default augmenter's parameters (MXNet's names and defaults)."""

    FIELDS = dict(resize=-1, rand_crop=False, random_resized_crop=False, max_rotate_angle=0,
                  max_aspect_ratio=0.0, min_aspect_ratio=None, max_shear_ratio=0.0,
                  max_crop_size=-1, min_crop_size=-1, max_random_scale=1.0,
                  min_random_scale=1.0, max_random_area=1.0, min_random_area=1.0,
                  max_img_size=1e10, min_img_size=0.0, brightness=0.0, contrast=0.0,
                  saturation=0.0, pca_noise=0.0, random_h=0, random_s=0, random_l=0, rotate=-1,
                  fill_value=255, inter_method=1, pad=0)

    def __init__(self, data_shape, kwargs):
        self.data_shape = tuple(data_shape)
        for k, v in self.FIELDS.items():
            setattr(self, k, v if k not in kwargs else _convert(k, kwargs[k], v))
        if not (0 <= self.inter_method <= 4 or 9 <= self.inter_method <= 10):
            raise MXNetError("Check failed: (param_.inter_method >= 0 && param_.inter_method "
                             "<= 4) || (param_.inter_method >= 9 && param_.inter_method <= 10): "
                             "invalid inter_method: valid value 0,1,2,3,9,10")
        if self.random_resized_crop and not (
                self.min_random_scale == 1.0 and self.max_random_scale == 1.0
                and self.min_crop_size == -1 and self.max_crop_size == -1 and not self.rand_crop):
            raise MXNetError("Setting random_resized_crop to true conflicts with "
                             "min_random_scale, max_random_scale, min_crop_size, max_crop_size, "
                             "and rand_crop.")
        self.affine = (self.max_rotate_angle > 0 or self.max_shear_ratio > 0.0
                       or self.rotate > 0 or self.max_random_scale != 1.0
                       or self.min_random_scale != 1.0
                       or (not self.random_resized_crop
                           and (self.max_aspect_ratio != 0.0
                                or self.min_aspect_ratio is not None))
                       or self.max_img_size != 1e10 or self.min_img_size != 0.0)
        self.random = (self.rand_crop or self.random_resized_crop or self.affine
                       or self.inter_method == 10 or self.max_crop_size != self.min_crop_size
                       or self.random_h or self.random_s or self.random_l or self.brightness > 0
                       or self.contrast > 0 or self.saturation > 0 or self.pca_noise > 0)


def _convert(name, value, default):
    """A keyword value as MXNet's parameter parser reads it (strings allowed)."""
    if isinstance(value, str):
        if value == "None":
            return None
        if isinstance(default, bool):
            return value.lower() in ("1", "true")
        try:
            value = float(value)
        except ValueError:
            raise MXNetError(f"Invalid Parameter format for {name} expect "
                             f"{type(default).__name__} but value='{value}'") from None
    if value is None:
        return None
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, int):
        return int(value)
    return float(value)


def inter_method(method: int, old_w, old_h, new_w, new_h, rng) -> int:
    """MXNet's ``GetInterMethod``: 9 picks by the size change, 10 at random."""
    if method == 9:
        if new_w > old_w and new_h > old_h:
            return 2
        if new_w < old_w and new_h < old_h:
            return 3
        return 1
    if method == 10:
        return int(rng.integers(0, 5))
    return method


def _resize(cv2, img, w, h, interp):
    return cv2.resize(img, (int(w), int(h)), interpolation=interp)


def _affine(cv2, p: AugParams, res, rng):
    """Rotation, shear, scale and aspect ratio in one ``warpAffine`` (MXNet's matrix)."""
    s = p.max_shear_ratio * (rng.random() * 2 - 1)
    angle = int(rng.integers(-p.max_rotate_angle, p.max_rotate_angle + 1))
    if p.rotate > 0:
        angle = p.rotate
    a = math.cos(angle / 180.0 * math.pi)
    b = math.sin(angle / 180.0 * math.pi)
    scale, ratio = 1.0, 1.0
    if not p.random_resized_crop:
        scale = rng.random() * (p.max_random_scale - p.min_random_scale) + p.min_random_scale
        if p.min_aspect_ratio is not None:
            lo, hi = p.min_aspect_ratio, p.max_aspect_ratio
        else:
            lo, hi = 1 - p.max_aspect_ratio, 1 + p.max_aspect_ratio
        ratio = rng.random() * (hi - lo) + lo
    hs = 2 * scale / (1 + ratio)
    ws = ratio * hs
    rows, cols = res.shape[:2]
    new_w = max(p.min_img_size, min(p.max_img_size, scale * cols))
    new_h = max(p.min_img_size, min(p.max_img_size, scale * rows))
    m = np.zeros((2, 3), np.float32)
    m[0, 0] = hs * a - s * b * ws
    m[1, 0] = -b * ws
    m[0, 1] = hs * b + s * a * ws
    m[1, 1] = a * ws
    ori_w = m[0, 0] * cols + m[0, 1] * rows
    ori_h = m[1, 0] * cols + m[1, 1] * rows
    m[0, 2] = (new_w - ori_w) / 2
    m[1, 2] = (new_h - ori_h) / 2
    interp = inter_method(p.inter_method, cols, rows, new_w, new_h, rng)
    fill = (p.fill_value,) * 4
    return cv2.warpAffine(res, m, (int(new_w), int(new_h)), flags=interp,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=fill)


def _random_resized_crop(cv2, p: AugParams, res, rng):
    """A crop of random area and aspect ratio resized to ``data_shape``; None after 10 tries."""
    lo_r = p.min_aspect_ratio if p.min_aspect_ratio is not None else 1 - p.max_aspect_ratio
    hi_r = p.max_aspect_ratio if p.min_aspect_ratio is not None else 1 + p.max_aspect_ratio
    rows, cols = res.shape[:2]
    area = rows * cols
    for _ in range(10):
        target = area * rng.uniform(p.min_random_area, p.max_random_area)
        ratio = rng.uniform(lo_r, hi_r)
        h = int(round(math.sqrt(target / ratio)))
        w = int(round(math.sqrt(target * ratio)))
        if rng.random() > 0.5:
            h, w = w, h
        if 0 < h <= rows and 0 < w <= cols:
            y = int(rng.integers(0, rows - h + 1))
            x = int(rng.integers(0, cols - w + 1))
            out_h, out_w = p.data_shape[1], p.data_shape[2]
            interp = inter_method(p.inter_method, w, h, out_w, out_h, rng)
            return _resize(cv2, res[y:y + h, x:x + w], out_w, out_h, interp)
    return None


def _crop_size(cv2, p: AugParams, res, rng):
    rows, cols = res.shape[:2]
    if not (cols >= p.max_crop_size and rows >= p.max_crop_size
            and p.max_crop_size >= p.min_crop_size):
        raise MXNetError("input image size smaller than max_crop_size")
    size = int(rng.integers(p.min_crop_size, p.max_crop_size + 1))
    y, x = rows - size, cols - size
    if p.rand_crop:
        y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
    else:
        y, x = y // 2, x // 2
    out_h, out_w = p.data_shape[1], p.data_shape[2]
    interp = inter_method(p.inter_method, size, size, out_w, out_h, rng)
    return _resize(cv2, res[y:y + size, x:x + size], out_w, out_h, interp)


def _fit_and_crop(cv2, p: AugParams, res, rng):
    """Upscale an image smaller than ``data_shape`` (height first, then width, keeping the
    aspect ratio), then take the center (or a random) crop."""
    out_h, out_w = p.data_shape[1], p.data_shape[2]
    rows, cols = res.shape[:2]
    if rows < out_h:
        new_w = cols * out_h // rows
        res = _resize(cv2, res, new_w, out_h,
                      inter_method(p.inter_method, cols, rows, new_w, out_h, rng))
        rows, cols = res.shape[:2]
    if cols < out_w:
        new_h = rows * out_w // cols
        res = _resize(cv2, res, out_w, new_h,
                      inter_method(p.inter_method, cols, rows, out_w, new_h, rng))
        rows, cols = res.shape[:2]
    y, x = rows - out_h, cols - out_w
    if p.rand_crop:
        y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
    else:
        y, x = y // 2, x // 2
    return res[y:y + out_h, x:x + out_w]


def _color(cv2, p: AugParams, res, rng):
    """HSL offsets, brightness/contrast/saturation and PCA lighting noise (uint8 in and out)."""
    if (p.random_h or p.random_s or p.random_l) and res.ndim == 3 and res.shape[2] == 3:
        hls = cv2.cvtColor(np.ascontiguousarray(res), cv2.COLOR_BGR2HLS).astype(np.int32)
        h = int(rng.random() * p.random_h * 2 - p.random_h)
        s = int(rng.random() * p.random_s * 2 - p.random_s)
        lum = int(rng.random() * p.random_l * 2 - p.random_l)
        hls += np.array([h, lum, s], np.int32)
        np.clip(hls, 0, np.array([180, 255, 255]), out=hls)
        res = cv2.cvtColor(hls.astype(np.uint8), cv2.COLOR_HLS2BGR)
    if p.brightness > 0 or p.contrast > 0 or p.saturation > 0 or p.pca_noise > 0:
        f = res.astype(np.float32)
        gray_coef = np.array([0.114, 0.587, 0.299], np.float32)[:f.shape[2]]  # BGR
        if p.brightness > 0:
            f *= 1.0 + rng.uniform(-p.brightness, p.brightness)
        if p.contrast > 0:
            alpha = 1.0 + rng.uniform(-p.contrast, p.contrast)
            mean = float((f * gray_coef).sum(axis=2).mean()) if f.shape[2] == 3 else f.mean()
            f = f * alpha + mean * (1.0 - alpha)
        if p.saturation > 0 and f.shape[2] == 3:
            alpha = 1.0 + rng.uniform(-p.saturation, p.saturation)
            gray = (f * gray_coef).sum(axis=2, keepdims=True)
            f = f * alpha + gray * (1.0 - alpha)
        if p.pca_noise > 0 and f.shape[2] == 3:
            alpha = rng.normal(0, p.pca_noise, size=3)
            rgb = np.dot(_EIGVEC * alpha, _EIGVAL)
            f += rgb[::-1].astype(np.float32)
        res = np.clip(np.rint(f), 0, 255).astype(np.uint8)
    return res


def augment(p: AugParams, res, rng):
    """The default augmenter on one decoded image (BGR uint8, HWC); returns the crop."""
    cv2 = _require_cv2()
    if p.resize != -1:
        rows, cols = res.shape[:2]
        if rows > cols:
            new_h, new_w = p.resize * rows // cols, p.resize
        else:
            new_h, new_w = p.resize, p.resize * cols // rows
        interp = inter_method(p.inter_method, cols, rows, new_w, new_h, rng)
        res = _resize(cv2, res, new_w, new_h, interp)
    if p.affine:
        res = _affine(cv2, p, res, rng)
    if p.pad > 0:
        fill = (p.fill_value,) * 4
        res = cv2.copyMakeBorder(res, p.pad, p.pad, p.pad, p.pad, cv2.BORDER_CONSTANT,
                                 value=fill)
    if res.ndim == 2:
        res = res[:, :, None]
    out = None
    if p.random_resized_crop:
        if p.max_random_area != 1.0 or p.min_random_area != 1.0 or p.max_aspect_ratio != 0.0:
            out = _random_resized_crop(cv2, p, res, rng)
    elif p.max_crop_size != -1 or p.min_crop_size != -1:
        out = _crop_size(cv2, p, res, rng)
    if out is None:
        out = _fit_and_crop(cv2, p, res, rng)
    if out.ndim == 2:
        out = out[:, :, None]
    return _color(cv2, p, out, rng) if p.random else out
