"""Object-detection augmenters and ``ImageDetIter``, as MXNet 1.9.1's ``mx.image.detection``
(also reachable as ``mx.image.det``).

A detection augmenter is called as ``aug(image, label) -> (image, label)``: ``image`` an HWC
NDArray, ``label`` a float numpy array with one row per object, ``[class_id, xmin, ymin, xmax,
ymax, extra...]``, box corners normalised to [0, 1] by the image's width and height.

Random choices are drawn from Python's ``random`` (``np.random`` for the lighting noise and
``draw_next``'s box colours) in MXNet's order, so seeded runs crop, pad and flip exactly as
MXNet does.

Labels in a ``.lst``/``.rec``/``imglist`` are flat: ``[A, B, header..., obj1..., obj2...]``
where ``A`` is the header width (at least 2, counting A and B) and ``B`` the width of each
object record (at least 5).
"""
from __future__ import annotations

import json
import logging
import random
import warnings
from math import sqrt

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError, numeric_types
from ..io import DataBatch
from .augment import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                      HueJitterAug, LightingAug, RandomGrayAug, ResizeAug)
from .image import copyMakeBorder, fixed_crop
from .iter import ImageIter

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]


class DetAugmenter:
    """Base class of the detection augmenters: ``aug(src, label) -> (src, label)``;
    ``dumps()`` describes it as JSON."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """``'["<classname lowercased>", {constructor arguments}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """Applies a classification :class:`~neomx.image.Augmenter` to the image only (for
    augmenters that do not move pixels: colour, cast, normalisation, resizing)."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError('Borrowing from invalid Augmenter')
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Applies one augmenter of ``aug_list`` picked at random, or (with probability
    ``skip_prob``) none. An empty list always skips."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        if any(not isinstance(a, DetAugmenter) for a in aug_list):
            raise ValueError('Allow DetAugmenter in list only')
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        return [self.__class__.__name__.lower(), [a.dumps() for a in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        # MXNet shuffles the list in place and applies its first entry
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Flips the image and its boxes left-right with probability ``p`` (the label is changed
    in place)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label):
        xmin = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = xmin


def _box_areas(boxes):
    """Areas of (xmin, ymin, xmax, ymax) rows (0 for empty boxes)."""
    return (np.maximum(0, boxes[:, 3] - boxes[:, 1])
            * np.maximum(0, boxes[:, 2] - boxes[:, 0]))


class DetRandomCropAug(DetAugmenter):
    """A random crop that keeps the objects: the crop has an aspect ratio (width / height) in
    ``aspect_ratio_range`` and a fraction of the image's area in ``area_range``, and must
    cover more than ``min_object_covered`` of each box it touches. Boxes are clipped to the
    crop; those left with at most ``min_eject_coverage`` of their area are dropped. After
    ``max_attempts`` failed proposals the input is returned unchanged."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        if not isinstance(aspect_ratio_range, (tuple, list)):
            assert isinstance(aspect_ratio_range, numeric_types)
            logging.info('Using fixed aspect ratio: %s in DetRandomCropAug',
                         str(aspect_ratio_range))
            aspect_ratio_range = (aspect_ratio_range, aspect_ratio_range)
        if not isinstance(area_range, (tuple, list)):
            assert isinstance(area_range, numeric_types)
            logging.info('Using fixed area range: %s in DetRandomCropAug', area_range)
            area_range = (area_range, area_range)
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            # (MXNet 1.9.1 means to warn here but passes the range as the warning category,
            # which raises a TypeError; neomx warns and disables the augmenter as intended)
            warnings.warn('Skip DetRandomCropAug due to invalid area_range: %s'
                          % (area_range,))
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn('Skip DetRandomCropAug due to invalid aspect_ratio_range: %s'
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    # the same helper names as MXNet's (subclasses may override them)
    def _calculate_areas(self, label):
        return _box_areas(label)

    def _intersect(self, label, xmin, ymin, xmax, ymax):
        """The boxes clipped to the rectangle; rows that miss it are all zeros."""
        out = label.copy()
        out[:, 0] = np.maximum(label[:, 0], xmin)
        out[:, 1] = np.maximum(label[:, 1], ymin)
        out[:, 2] = np.minimum(label[:, 2], xmax)
        out[:, 3] = np.minimum(label[:, 3], ymax)
        empty = (out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3])
        out[empty, :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the pixel rectangle covers enough of every (non-tiny) box it touches."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        areas = self._calculate_areas(label[:, 1:])
        real = np.where(areas * width * height > 2)[0]
        if real.size < 1:
            return False
        clipped = self._intersect(label[real, 1:], float(xmin) / width, float(ymin) / height,
                                  float(xmax) / width, float(ymax) / height)
        coverage = self._calculate_areas(clipped) / areas[real]
        coverage = coverage[coverage > 0]
        # compared in float64 (MXNet's NumPy 1.x promotes a float32 scalar against a Python
        # float; NumPy 2 would compare in float32, e.g. 0.1f > 0.1 would be False)
        return coverage.size > 0 and float(np.amin(coverage)) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """Boxes in the crop's coordinates, clipped; None when no box keeps enough of itself."""
        x0 = float(crop_box[0]) / width
        y0 = float(crop_box[1]) / height
        cw = float(crop_box[2]) / width
        ch = float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] -= x0
        out[:, (2, 4)] -= y0
        out[:, (1, 3)] /= cw
        out[:, (2, 4)] /= ch
        out[:, 1:5] = np.minimum(1, np.maximum(0, out[:, 1:5]))
        kept = self._calculate_areas(out[:, 1:]) * cw * ch / self._calculate_areas(label[:, 1:])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (kept > self.min_eject_coverage)
        keep = np.where(keep)[0]
        if keep.size < 1:
            return None
        return out[keep, :]

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of an accepted crop, or () (MXNet's draws, in order: the
        ratio, the height when it has a range, then y and x)."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(sqrt(min_area / ratio)))
            max_h = int(round(sqrt(max_area / ratio)))
            if round(max_h * ratio) > width:
                # the largest height whose rounded width still fits
                max_h = int((width + 0.4999999) / ratio)
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            assert w <= width
            # rounding may leave the area just outside its range: one step up or down
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Places the image at a random position on a larger canvas filled with ``pad_val`` (the
    canvas: aspect ratio in ``aspect_ratio_range``, area ``area_range`` times the image's),
    moving the boxes with it. Proposals that pad less than 2 pixels on a side are retried, up
    to ``max_attempts`` times."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            assert isinstance(pad_val, numeric_types)
        if not isinstance(aspect_ratio_range, (list, tuple)):
            assert isinstance(aspect_ratio_range, numeric_types)
            logging.info('Using fixed aspect ratio: %s in DetRandomPadAug',
                         str(aspect_ratio_range))
            aspect_ratio_range = (aspect_ratio_range, aspect_ratio_range)
        if not isinstance(area_range, (tuple, list)):
            assert isinstance(area_range, numeric_types)
            logging.info('Using fixed area range: %s in DetRandomPadAug', area_range)
            area_range = (area_range, area_range)
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid parameters: %s'
                          % (area_range,))
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid aspect_ratio_range: %s'
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            # border type 16 (cv2.BORDER_ISOLATED): a constant border of pad_val
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16,
                                 values=self.pad_val)
        return src, label

    def _update_labels(self, label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label) of the canvas, or () (draws: the ratio, the height when it
        has a range, then y and x)."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(sqrt(min_area / ratio)))
            max_h = int(round(sqrt(max_area / ratio)))
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if (h - height) < 2 or (w - width) < 2:
                continue
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A :class:`DetRandomSelectAug` over several :class:`DetRandomCropAug`: each parameter
    is one value or a list with one value per crop augmenter (single values are shared).

    >>> import neomx as mx
    >>> aug = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5])
    >>> [a.min_object_covered for a in aug.aug_list]
    [0.1, 0.5]
    """
    params = []
    for p in (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
              max_attempts):
        params.append(p if isinstance(p, list) else [p])
    num = max(1, *(len(p) for p in params))
    for k, p in enumerate(params):
        if len(p) != num:
            assert len(p) == 1
            params[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """MXNet's standard detection augmenter list for outputs of ``data_shape`` (C, H, W).

    In order: resize of the shorter edge (``resize`` > 0), random crops (with probability
    ``rand_crop``; ``min_object_covered``, ``aspect_ratio_range``, ``area_range``,
    ``min_eject_coverage``, ``max_attempts`` may be lists, see
    :func:`CreateMultiRandCropAugmenter`), a flip (``rand_mirror``), random padding (with
    probability ``rand_pad``, up to ``area_range[1]`` times the area, filled with ``pad_val``),
    the forced resize to ``data_shape``, a cast to float32, colour jitters, PCA lighting noise,
    random gray and the ``mean``/``std`` normalisation (True: ImageNet's).

    >>> import neomx as mx
    >>> [type(a).__name__ for a in mx.image.CreateDetAugmenter((3, 300, 300), rand_crop=0.5,
    ...                                                        rand_mirror=True)]
    ['DetRandomSelectAug', 'DetHorizontalFlipAug', 'DetBorrowAug', 'DetBorrowAug']
    """
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # as late as possible: padding makes the image bigger
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009],
                           [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(DetBorrowAug(LightingAug(pca_noise, eigval, eigvec)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    elif mean is not None:
        assert isinstance(mean, np.ndarray) and mean.shape[0] in [1, 3]
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    elif std is not None:
        assert isinstance(std, np.ndarray) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


class ImageDetIter(ImageIter):
    """Batches of augmented images and their object labels for detection.

    The sources and most parameters are :class:`~neomx.image.ImageIter`'s (``path_imgrec``
    with or without ``path_imgidx``, ``path_imglist`` + ``path_root``, or ``imglist``); each
    image's flat label is parsed as ``[A, B, header..., objects...]`` (see the module doc).
    Batch labels have shape (batch_size, max objects, object width): the largest object count
    over the whole source (counted once, at construction) and the rows past an image's objects
    filled with -1. ``aug_list`` defaults to ``CreateDetAugmenter(data_shape, **kwargs)``.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    # -- labels ---------------------------------------------------------------------------------

    def _check_valid_label(self, label):
        """RuntimeError unless ``label`` is (objects, 5+) with at least one valid object."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % str(label))
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError('Invalid label occurs.')

    def _estimate_label_shape(self):
        """(max objects per image, object width), reading every label once."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count = max(max_count, label.shape[0])
                width = label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:  # (MXNet fails here with an UnboundLocalError)
            raise MXNetError("ImageDetIter: the source has no images to read labels from")
        return (max_count, width)

    def _parse_label(self, label):
        """The (objects, object width) array of a flat label, without degenerate boxes."""
        if isinstance(label, nd.NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise RuntimeError("Label shape is invalid: " + str(raw.shape))
        header_width = int(raw[0])
        obj_width = int(raw[1])
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError("Label shape %s inconsistent with annotation width %d."
                               % (str(raw.shape), obj_width))
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = np.where((out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]))[0]
        if valid.size < 1:
            raise RuntimeError('Encounter sample with no valid label.')
        return out[valid, :]

    # -- shapes -----------------------------------------------------------------------------------

    def reshape(self, data_shape=None, label_shape=None):
        """Changes the output ``data_shape`` (C, H, W) and/or ``label_shape`` (objects, width;
        objects may only grow)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + data_shape)]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0], (self.batch_size,) + label_shape)]
            self.label_shape = label_shape

    def check_label_shape(self, label_shape):
        """ValueError unless ``label_shape`` is (>= current objects, current width)."""
        if not len(label_shape) == 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError('Attempts to reduce label count from %d to %d, not allowed.'
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError('label_shape object width inconsistent: %d vs %d.'
                             % (self.provide_label[0][1][2], label_shape[1]))

    def sync_label_shape(self, it, verbose=False):
        """Gives this iterator and ``it`` (another ImageDetIter, e.g. the validation one) the
        same label shape, the larger object count of the two; returns ``it``."""
        assert isinstance(it, ImageDetIter), 'Synchronize with invalid iterator.'
        mine, theirs = self.label_shape, it.label_shape
        assert mine[1] == theirs[1], "object width mismatch."
        max_count = max(mine[0], theirs[0])
        if max_count > mine[0]:
            self.reshape(None, (max_count, mine[1]))
        if max_count > theirs[0]:
            it.reshape(None, (max_count, theirs[1]))
        if verbose and max_count > min(mine[0], theirs[0]):
            logging.info('Resized label_shape to (%d, %d).', max_count, mine[1])
        return it

    # -- batches ----------------------------------------------------------------------------------

    def _batchify(self, batch_data, batch_label, start=0):
        """Fills rows from ``start`` (skipping images whose label or augmentation fails);
        returns the number of rows filled."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping:  %s', str(e))
                    continue
                batch_data[i] = self.postprocess_data(data)
                num = label.shape[0]
                if num > batch_label.shape[1]:
                    raise RuntimeError(
                        f"ImageDetIter: an image has {num} objects after augmentation, the "
                        f"label shape {tuple(batch_label.shape[1:])} holds "
                        f"{batch_label.shape[1]} (reshape(label_shape=...) to allow more)")
                batch_label[i][0:num] = nd.array(label)
                if num < batch_label.shape[1]:
                    batch_label[i][num:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next :class:`~neomx.io.DataBatch` (labels padded with -1 rows)."""
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            c, h, w = self.data_shape
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = nd.empty(self.provide_label[0][1])
            batch_label[:] = -1
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Applies the detection augmenters in order."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name='draw_next', id2labels=None):
        """Yields the next images (augmented, as BGR uint8 numpy arrays) with their boxes drawn
        (OpenCV; ``color`` RGB or None for random colours from ``np.random``). ``mean``/``std``
        (True: ImageNet's) undo a normalisation; ``id2labels`` maps class ids to names written
        on the boxes; with ``waitKey`` each image is also shown in ``window_name``."""
        try:
            import cv2
        except ImportError as e:
            warnings.warn('Unable to import cv2, skip drawing: %s' % str(e))
            return
        count = 0
        try:
            while True:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping:  %s', str(e))
                    continue
                count += 1
                data, label = self.augmentation_transform(data, label)
                image = data.asnumpy()
                if std is True:
                    std = np.array([58.395, 57.12, 57.375])
                elif std is not None:
                    assert isinstance(std, np.ndarray) and std.shape[0] in [1, 3]
                if std is not None:
                    image *= std
                if mean is True:
                    mean = np.array([123.68, 116.28, 103.53])
                elif mean is not None:
                    assert isinstance(mean, np.ndarray) and mean.shape[0] in [1, 3]
                if mean is not None:
                    image += mean
                image[:, :, (0, 1, 2)] = image[:, :, (2, 1, 0)]  # RGB -> BGR for OpenCV
                if clip:
                    image = np.maximum(0, np.minimum(255, image))
                if color:
                    color = color[::-1]
                image = image.astype(np.uint8)
                height, width, _ = image.shape
                for k in range(label.shape[0]):
                    # in float64, as MXNet's NumPy 1.x promotes a float32 scalar times an int
                    x1 = int(float(label[k, 1]) * width)
                    if x1 < 0:
                        continue
                    y1 = int(float(label[k, 2]) * height)
                    x2 = int(float(label[k, 3]) * width)
                    y2 = int(float(label[k, 4]) * height)
                    bc = np.random.rand(3) * 255 if not color else color
                    cv2.rectangle(image, (x1, y1), (x2, y2), tuple(float(v) for v in bc),
                                  thickness)
                    if id2labels is not None:
                        cls_id = int(label[k, 0])
                        if cls_id in id2labels:
                            text = "{:s}".format(id2labels[cls_id])
                            font = cv2.FONT_HERSHEY_SIMPLEX
                            text_height = cv2.getTextSize(text, font, 0.5, 2)[0][1]
                            cv2.putText(image, text, (x1 + 5, y1 + text_height + 5), font, 0.5,
                                        (255, 255, 255), 2)
                if waitKey is not None:
                    cv2.imshow(window_name, image)
                    cv2.waitKey(waitKey)
                yield image
        except StopIteration:
            if not count:
                return
