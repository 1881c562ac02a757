"""``mx.gluon.data.vision``: image datasets and transforms."""
from .datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset,
                       ImageListDataset, ImageRecordDataset)
from . import transforms

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "ImageListDataset", "transforms"]
