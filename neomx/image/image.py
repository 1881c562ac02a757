"""Decoding, resizing and cropping of images (HWC NDArrays), as MXNet 1.9.1's ``mx.image``.

MXNet decodes and resizes with OpenCV, so neomx does too (``pip install neomx[image]``):
``imdecode`` gives MXNet 1.9.1's pixels exactly for JPEG and PNG (both use libjpeg-turbo's
default integer IDCT and fancy upsampling, and apply the EXIF orientation), and ``imresize`` its
pixels exactly for nearest, bilinear, area and Lanczos on uint8 (bicubic: within 1; float32
images: within 1e-3, OpenCV's SIMD accumulation order differs between versions).

Random choices use Python's ``random`` module (and ``np.random`` for ``LightingAug``) exactly
as MXNet does, so the same seeds give the same crops, flips and jitters.
"""
from __future__ import annotations

import random
import warnings
from numbers import Number

import numpy as np
import torch

from ..base import MXNetError, numeric_types
from ..context import cpu
from ..ndarray import NDArray, from_torch
from ..recordio import _require_cv2

__all__ = ["imdecode", "imread", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate"]


def _to_nd(arr: np.ndarray, ctx=None) -> NDArray:
    """A numpy image as an NDArray on ``ctx`` (cpu(0)) without a copy on the CPU."""
    t = torch.from_numpy(np.ascontiguousarray(arr))
    ctx = ctx or cpu()
    if ctx.device_typeid == 2:
        t = t.to(ctx.torch_device)
    return from_torch(t, ctx)


def _to_np(src) -> np.ndarray:
    if isinstance(src, NDArray):
        return src.asnumpy()
    return np.asarray(src)


def _write_out(res: NDArray, out, what: str) -> NDArray:
    """``out=``: the result copied into a preallocated array of the same shape."""
    if out is None:
        return res
    if tuple(out.shape) != tuple(res.shape):
        raise MXNetError(f"{what}: out has shape {tuple(out.shape)}, the result has shape "
                         f"{tuple(res.shape)}")
    out[:] = res
    return out


def _decode(cv2, buf: np.ndarray, flag: int, to_rgb, what: str) -> np.ndarray:
    """OpenCV's decode as MXNet's ``_cvimdecode``: flag 0 gray (H, W, 1), else BGR/RGB (H, W, 3)."""
    if not isinstance(flag, (int, np.integer)):
        raise MXNetError(f"{what}: flag must be an int, got {flag!r}")
    if flag < 0:
        raise MXNetError(f"{what}: value {flag} for Parameter flag should be greater equal to 0 "
                         "(flag: convert decoded image to grayscale (0) or color (1))")
    if buf.size == 0:
        raise MXNetError(f"{what}: Input cannot be an empty buffer")
    img = cv2.imdecode(buf, cv2.IMREAD_COLOR if flag else cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise MXNetError(f"{what}: Decoding failed. Invalid image file.")
    if not flag:
        return img.reshape(img.shape[0], img.shape[1], 1)
    if to_rgb:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    return img


def imdecode(buf, flag=1, to_rgb=1, out=None, **kwargs):
    """Decodes an image (JPEG, PNG, any format OpenCV reads) to an HWC uint8 NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded image.
    flag : int
        1 (any non-zero value): color, (H, W, 3); 0: grayscale, (H, W, 1).
    to_rgb : bool
        RGB channel order (MXNet's default) instead of OpenCV's BGR.
    out : NDArray, optional
        Where to write the result.

    >>> import cv2, numpy as np, neomx as mx
    >>> png = cv2.imencode('.png', np.zeros((4, 6, 3), np.uint8))[1].tobytes()
    >>> mx.image.imdecode(png).shape, mx.image.imdecode(png, flag=0).shape
    ((4, 6, 3), (4, 6, 1))
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"imdecode() got unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(buf, NDArray):
        data = buf.asnumpy()
        if data.dtype != np.uint8:
            data = data.astype(np.uint8)
        data = data.reshape(-1)
    elif isinstance(buf, (bytes, bytearray, np.ndarray, memoryview)):
        data = np.frombuffer(buf, dtype=np.uint8)
    else:
        raise ValueError('buf must be of type bytes, bytearray or numpy.ndarray,'
                         'if you would like to input type str, please convert to bytes')
    cv2 = _require_cv2()
    return _write_out(_to_nd(_decode(cv2, data, flag, to_rgb, "imdecode")), out, "imdecode")


def imread(filename, flag=1, to_rgb=1, out=None, **kwargs):
    """Reads and decodes an image file (see :func:`imdecode`)."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"imread() got unexpected keyword arguments {sorted(kwargs)}")
    cv2 = _require_cv2()
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        raise MXNetError(f"Imread: '{filename}' couldn't open file: "
                         f"{e.strerror or e}") from e
    img = _decode(cv2, np.frombuffer(data, np.uint8), flag, to_rgb, f"imread '{filename}'")
    return _write_out(_to_nd(img), out, "imread")


_CV_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def _cv_call(what, fn, src, *args, **kwargs):
    """Runs an OpenCV function on an HWC image; OpenCV's errors become MXNetError."""
    cv2 = _require_cv2()
    ctx = src.context if isinstance(src, NDArray) else None
    img = _to_np(src)
    if img.ndim != 3:
        raise MXNetError(f"{what}: expected an image of shape (height, width, channels), got "
                         f"shape {img.shape}")
    if img.dtype.type not in _CV_DTYPES:
        raise MXNetError(f"{what}: OpenCV does not support images of dtype {img.dtype}")
    try:
        res = getattr(cv2, fn)(img, *args, **kwargs)
    except cv2.error as e:
        raise MXNetError(f"{what}: OpenCV failed: {str(e).strip()}") from None
    if res.ndim == 2:
        res = res[:, :, None]
    return _to_nd(res, ctx)


def imresize(src, w, h, interp=1, out=None, **kwargs):
    """Resizes an HWC image to width ``w`` and height ``h`` with OpenCV.

    ``interp``: 0 nearest, 1 bilinear (default), 2 bicubic, 3 area, 4 Lanczos (OpenCV's codes).
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"imresize() got unexpected keyword arguments {sorted(kwargs)}")
    if interp not in (0, 1, 2, 3, 4):
        raise MXNetError(f"imresize: unknown interp method {interp} (0-4: nearest, bilinear, "
                         "bicubic, area, Lanczos)")
    w, h = int(w), int(h)
    if w <= 0 or h <= 0:
        raise MXNetError(f"imresize: the size must be positive, got w={w}, h={h}")
    res = _cv_call("imresize", "resize", src, (w, h), interpolation=int(interp))
    return _write_out(res, out, "imresize")


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None,
                   **kwargs):  # noqa: A002 (MXNet's parameter name)
    """Pads an HWC image's border with OpenCV (``type``: cv2.BORDER_*, 0 = constant ``value``
    or per-channel ``values``)."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"copyMakeBorder() got unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(values, numeric_types):  # MXNet parses a lone number as a 1-tuple
        values = (values,)
    fill = list(values) if values else [value] * 4
    fill = (fill + [0.0] * 4)[:4]
    res = _cv_call("copyMakeBorder", "copyMakeBorder", src, int(top), int(bot), int(left),
                   int(right), int(type), value=fill)
    return _write_out(res, out, "copyMakeBorder")


def scale_down(src_size, size):
    """Scales ``size`` (w, h) down to fit in ``src_size`` (w, h), keeping its aspect ratio.

    >>> import neomx as mx
    >>> mx.image.scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp, sizes=()):
    """MXNet's interp codes: 0-4 as OpenCV; 9 picks by the size change; 10 picks at random."""
    if interp == 9:
        if sizes:
            assert len(sizes) == 4
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resizes the shorter edge to ``size``, keeping the aspect ratio."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crops the (x0, y0, w, h) rectangle, then resizes it to ``size`` (w, h) if given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """A random crop of ``size`` (w, h), scaled down to fit; returns (image, (x0, y0, w, h))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """The central crop of ``size`` (w, h), scaled down to fit; returns (image, rectangle)."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` in place (either may be None)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A crop of random area (fraction ``area`` or range) and aspect ``ratio`` (range), resized
    to ``size``; falls back to :func:`center_crop` after 10 tries. Returns (image, rectangle)."""
    h, w, _ = src.shape
    src_area = h * w
    if 'min_area' in kwargs:
        warnings.warn('`min_area` is deprecated. Please use `area` instead.',
                      DeprecationWarning)
        area = kwargs.pop('min_area')
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for `random_size_crop`: {sorted(kwargs)}")
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
            return out, (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotates a CHW image (or an NCHW batch) by ``rotation_degrees`` about its centre, with
    bilinear sampling (``BilinearSampler``; outside the image: 0), keeping the shape.

    Parameters
    ----------
    src : NDArray
        float32, (C, H, W) or (N, C, H, W).
    rotation_degrees : number or NDArray
        The angle in degrees (positive: counter-clockwise on screen, as MXNet's); a batch takes
        one number for all images or a vector of N angles.
    zoom_in : bool
        Scale so that no padding shows in the output.
    zoom_out : bool
        Scale so that the whole input shows in the output.

    >>> import neomx as mx
    >>> img = mx.nd.arange(9).reshape((1, 3, 3))
    >>> mx.image.imrotate(img, 90).asnumpy()[0].round(3).tolist()
    [[2.0, 5.0, 8.0], [1.0, 4.0, 7.0], [0.0, 3.0, 6.0]]
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if not isinstance(src, NDArray) or src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is "
                            "required to be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    ctx = src.context
    if isinstance(rotation_degrees, Number):
        angles = torch.full((n,), float(rotation_degrees), dtype=torch.float32)
    else:
        angles = torch.as_tensor(_to_np(rotation_degrees), dtype=torch.float32).reshape(-1)
    if angles.numel() != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    # MXNet's float32 arithmetic, in its order: radians, then a pixel grid centred on the
    # image, rotated, normalised to [-1, 1] per axis, optionally scaled.
    rad = (angles * np.pi / 180).reshape(n, 1, 1)
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    ys = (torch.arange(h, dtype=torch.float32).reshape(h, 1).expand(h, w) - hs).unsqueeze(0)
    xs = (torch.arange(w, dtype=torch.float32).reshape(1, w).expand(h, w) - ws).unsqueeze(0)
    cos, sin = torch.cos(rad), torch.sin(rad)
    gx = (xs * cos - ys * sin) / ws
    gy = (xs * sin + ys * cos) / hs
    grid = torch.stack([gx, gy], dim=1)
    if zoom_in or zoom_out:
        fh = torch.tensor([float(h)])
        fw = torch.tensor([float(w)])
        rho = torch.sqrt(fh * fh + fw * fw)
        corner = torch.atan(fh / fw)
        a = torch.abs(rad)
        max_x = torch.maximum(torch.abs(rho * torch.cos(corner + a)),
                              torch.abs(rho * torch.cos(corner - a)))
        max_y = torch.maximum(torch.abs(rho * torch.sin(corner + a)),
                              torch.abs(rho * torch.sin(corner - a)))
        if zoom_out:
            scale = torch.maximum(max_x / fw, max_y / fh)
        else:
            scale = torch.minimum(fw / max_x, fh / max_y)
        grid = grid * scale.unsqueeze(3)
    from .. import ndarray as nd
    out = nd.BilinearSampler(src, _to_nd(grid.numpy(), ctx))
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotates by an angle drawn uniformly from ``angle_limits`` (degrees) with ``np.random``
    (one angle per image of a batch, as MXNet), then as :func:`imrotate`."""
    if src.ndim == 3:
        angle = np.random.uniform(*angle_limits)
    else:
        angle = _to_nd(np.random.uniform(*angle_limits, size=src.shape[0]).astype(np.float32))
    return imrotate(src, angle, zoom_in=zoom_in, zoom_out=zoom_out)


def __getattr__(name):
    """MXNet defines the augmenters and ImageIter in ``mx.image.image`` too; neomx keeps them in
    augment.py and iter.py (which build on this module), re-exported here on first use."""
    if name.startswith("__"):  # (the import system probes __path__ and the like)
        raise AttributeError(name)
    from . import augment, iter as _iter
    for mod in (augment, _iter):
        if name in mod.__all__:
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
