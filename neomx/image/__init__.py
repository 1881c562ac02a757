"""``mx.image``: image decoding, resizing, cropping, rotation, augmenters and ``ImageIter``, and
the detection augmenters and ``ImageDetIter`` (``mx.image.detection``, alias ``det``), as MXNet
1.9.1's. Images are HWC NDArrays (uint8 after decoding, RGB).

Decoding and resizing use OpenCV, as MXNet does (``pip install neomx[image]``); ``import neomx``
works without it, and the functions that need it raise an ``MXNetError`` naming the extra.
"""
from __future__ import annotations

from .image import (imdecode, imread, imresize, scale_down, copyMakeBorder, resize_short,
                    fixed_crop, random_crop, center_crop, color_normalize, random_size_crop,
                    imrotate, random_rotate)
from .augment import (Augmenter, SequentialAug, ResizeAug, ForceResizeAug, RandomCropAug,
                      RandomSizedCropAug, CenterCropAug, RandomOrderAug, BrightnessJitterAug,
                      ContrastJitterAug, SaturationJitterAug, HueJitterAug, ColorJitterAug,
                      LightingAug, ColorNormalizeAug, RandomGrayAug, HorizontalFlipAug, CastAug,
                      CreateAugmenter)
from .iter import ImageIter
from .detection import (DetAugmenter, DetBorrowAug, DetRandomSelectAug, DetHorizontalFlipAug,
                        DetRandomCropAug, DetRandomPadAug, CreateMultiRandCropAugmenter,
                        CreateDetAugmenter, ImageDetIter)
from . import image, augment, iter, detection  # noqa: F401
from . import detection as det  # noqa: F401  (MXNet's short name)

__all__ = ["imdecode", "imread", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate", "Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter", "ImageIter", "DetAugmenter", "DetBorrowAug", "DetRandomSelectAug",
           "DetHorizontalFlipAug", "DetRandomCropAug", "DetRandomPadAug",
           "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]
