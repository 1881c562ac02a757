"""Image transforms as MXNet 1.9.1's ``gluon.data.vision.transforms``: Blocks over HWC images
(``ToTensor`` onwards: CHW tensors), most of them HybridBlocks on the ``mx.nd.image``
operators, so they hybridize into one graph.

Like MXNet's, ``RandomBrightness(b)``, ``RandomContrast(c)`` and ``RandomSaturation(s)`` draw
their factor from [max(0, 1 - b), 1 + b]; ``RandomHue(h)`` passes [max(0, 1 - h), 1 + h] to
``random_hue``, i.e. hue shifts of about a full turn (MXNet 1.9.1's behaviour).

Examples
--------
>>> import neomx as mx
>>> from neomx.gluon.data.vision import transforms
>>> t = transforms.Compose([transforms.Resize(4), transforms.ToTensor(),
...                         transforms.Normalize(0.5, 0.25)])
>>> t(mx.nd.zeros((8, 6, 3), dtype='uint8')).shape
(3, 4, 4)
"""
from __future__ import annotations

import random

import numpy as np

from ....base import MXNetError, numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop",
           "RandomResizedCrop", "CropResize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue",
           "RandomColorJitter", "RandomLighting", "RandomApply", "Rotate", "RandomRotation"]


class Compose(Sequential):
    """Applies ``transforms`` in order; runs of consecutive HybridBlocks are grouped into one
    hybridized ``HybridSequential``."""

    def __init__(self, transforms):
        super().__init__()
        hybrid = []
        for t in list(transforms) + [None]:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                block = HybridSequential()
                for h in hybrid:
                    block.add(h)
                block.hybridize()
                self.add(block)
            hybrid = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Casts the input to ``dtype``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) images in [0, 255] to float32 CHW (NCHW) tensors in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor; numbers apply to every channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class Rotate(Block):
    """Rotates a float32 CHW image (or NCHW batch) by ``rotation_degrees``, keeping its shape
    (``mx.image.imrotate``; ``zoom_in``: no padding shows, ``zoom_out``: all of the image
    shows)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        from .... import image
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotates a float32 CHW image (or each image of an NCHW batch) by an angle drawn from
    ``angle_limits`` (degrees, ``mx.image.random_rotate``), with probability
    ``rotate_with_proba`` (both draws from ``np.random``, as MXNet's)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        from .... import image
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.random_rotate(x, *self._args)


class RandomResizedCrop(Block):
    """A random crop of area ``scale`` (fraction of the image) and aspect ``ratio``, resized to
    ``size`` ((width, height) or one number); ``mx.image.random_size_crop``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        from .... import image
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crops the ``width`` x ``height`` area at (``x``, ``y``), then resizes it to ``size`` when
    given (with ``interpolation``)."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """The central ``size`` ((width, height) or one number) crop, resized up with
    ``interpolation`` when the image is smaller; ``mx.image.center_crop``."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        from .... import image
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resizes to ``size`` ((width, height), or one number: both edges, or the short one with
    ``keep_ratio``)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Flips the image horizontally with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flips the image vertically with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomEnhance(HybridBlock):
    _op = ""

    def __init__(self, amount):
        super().__init__()
        if amount < 0:
            raise MXNetError(f"{type(self).__name__}: the jitter amount must not be negative, "
                             f"got {amount}")
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomEnhance):
    """Multiplies by a factor drawn from [max(0, 1 - brightness), 1 + brightness]."""

    _op = "random_brightness"


class RandomContrast(_RandomEnhance):
    """Contrast factor drawn from [max(0, 1 - contrast), 1 + contrast]."""

    _op = "random_contrast"


class RandomSaturation(_RandomEnhance):
    """Saturation factor drawn from [max(0, 1 - saturation), 1 + saturation]."""

    _op = "random_saturation"


class RandomHue(_RandomEnhance):
    """``random_hue`` with [max(0, 1 - hue), 1 + hue] (as MXNet 1.9.1)."""

    _op = "random_hue"


class RandomColorJitter(HybridBlock):
    """Brightness, contrast, saturation and hue jitter in random order
    (``mx.nd.image.random_color_jitter``)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with standard deviation ``alpha``."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Applies ``transforms`` with probability ``p`` (Python's ``random``)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
