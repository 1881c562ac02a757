"""Locating datasets on this machine (no downloads): the MNIST files or the embedded digits."""
from __future__ import annotations

from .mnist import find_mnist_files, load_embedded_mnist, load_mnist, mxnet_dataset_dir

__all__ = ["find_mnist_files", "load_embedded_mnist", "load_mnist", "mxnet_dataset_dir"]
