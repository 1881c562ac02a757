"""``mx.gluon.data``: datasets, samplers and the ``DataLoader`` (MXNet 1.9.1's API), and
``vision`` (MNIST, FashionMNIST, CIFAR10/100, image folders, lists and RecordIO files, and the
``transforms``)."""
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import (BatchSampler, FilterSampler, IntervalSampler, RandomSampler, Sampler,
                      SequentialSampler)
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from . import vision

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler",
           "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler", "DataLoader", "default_batchify_fn", "default_mp_batchify_fn",
           "vision"]
