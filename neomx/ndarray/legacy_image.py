"""``mx.nd.imdecode``: MXNet's deprecated pre-``mx.image`` decoder (``_imdecode``).

It returns a (channels, height, width) array (float32, or ``mean``'s dtype) in OpenCV's BGR
order, optionally cropped to ``clip_rect`` = (x0, y0, x1, y1) and minus ``mean`` (an array of
the output's shape); with ``out`` of shape (batch, channels, height, width) it fills row
``index``. MXNet 1.9.1's Python wrapper of it fails on every call ("Shape is unknown" without
``mean``, "OpenCV Failed to decode image" with one), so this follows the operator's C++
definition; new code should use ``mx.image.imdecode``.
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from .ndarray import NDArray, from_torch

__all__ = ["imdecode"]


def _cv2():
    try:
        import cv2
    except ImportError as e:
        raise MXNetError("mx.nd.imdecode needs OpenCV, which is not installed: "
                         "pip install neomx[image]") from e
    return cv2


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """DEPRECATED (use ``mx.image.imdecode``): decodes an image to (channels, h, w), BGR."""
    if not isinstance(str_img, (bytes, bytearray, memoryview, np.ndarray)):
        raise MXNetError(f"imdecode: str_img must be bytes, got {type(str_img).__name__}")
    buf = np.frombuffer(str_img, np.uint8)
    if buf.size == 0:
        raise MXNetError("imdecode: OpenCV Failed to decode image (empty buffer)")
    cv2 = _cv2()
    img = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE if channels == 1 else cv2.IMREAD_UNCHANGED)
    if img is None:
        raise MXNetError("imdecode: OpenCV Failed to decode image")
    img = img.reshape(img.shape[0], img.shape[1], -1)
    if channels > img.shape[2]:
        raise MXNetError(f"imdecode: the image has {img.shape[2]} channels, {channels} asked")
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, img.shape[1], img.shape[0]
    if not (0 <= x0 <= x1 <= img.shape[1] and 0 <= y0 <= y1 <= img.shape[0]):
        raise MXNetError(f"imdecode: clip_rect {tuple(clip_rect)} is outside the "
                         f"{img.shape[1]}x{img.shape[0]} image")
    chw = np.ascontiguousarray(img[y0:y1, x0:x1, :channels].transpose(2, 0, 1))
    dtype = np.float32 if mean is None else mean.dtype
    res = torch.from_numpy(chw.astype(dtype))
    if mean is not None:
        m = mean.asnumpy() if isinstance(mean, NDArray) else np.asarray(mean)
        if m.shape != chw.shape:
            raise MXNetError(f"imdecode: mean has shape {m.shape}, the image {chw.shape}")
        res -= torch.from_numpy(m.astype(dtype))
    res = from_torch(res, cpu())
    if out is None:
        return res
    if len(out.shape) == 4:
        if tuple(out.shape[1:]) != tuple(res.shape):
            raise MXNetError(f"imdecode: out has shape {out.shape}, an image {res.shape}")
        out[index] = res
    else:
        if tuple(out.shape) != tuple(res.shape):
            raise MXNetError(f"imdecode: out has shape {out.shape}, the image {res.shape}")
        out[:] = res
    return out
