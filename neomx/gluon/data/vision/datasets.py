"""Image datasets as MXNet 1.9.1's ``gluon.data.vision``: MNIST, FashionMNIST, CIFAR10,
CIFAR100 from their standard files, and images from a folder tree, a list or a RecordIO file.

neomx never downloads. MNIST and FashionMNIST read the four IDX files (plain or ``.gz``) under
``root``; MNIST without them uses the 5,000 real digits embedded in neomx's environment
(4,000 train / 1,000 test, see :mod:`neomx.data.mnist`). CIFAR10 reads ``data_batch_1.bin``
... ``data_batch_5.bin`` and ``test_batch.bin``, CIFAR100 ``train.bin`` and ``test.bin``
(in ``root``, in the ``cifar-10-batches-bin`` / ``cifar-100-binary`` folder the official archive
unpacks to, or from that archive itself in ``root``); without them the error names the files
and where they go.
"""
from __future__ import annotations

import os
import tarfile
import warnings

import numpy as np

from .... import ndarray as nd
from ....base import MXNetError, data_dir, numeric_types
from ..dataset import Dataset, RecordFileDataset, _DownloadedDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "ImageListDataset"]


def _find(root, name):
    """``root/name`` or ``root/name.gz`` (or ``root/name`` without ``.gz``), else None."""
    base = name[:-3] if name.endswith(".gz") else name
    for cand in (base, base + ".gz"):
        path = os.path.join(root, cand)
        if os.path.isfile(path):
            return path
    return None


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: samples ``(image, label)``, the image a uint8 NDArray
    ``(28, 28, 1)``, the label an ``np.int32``.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/mnist
        Folder with ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (each plain or ``.gz``). With
        none of a split's files there, the embedded digits are used (MNIST only).
    train : bool, default True
        The training or the test split.
    transform : callable, default None
        ``transform(data, label) -> sample``, e.g.
        ``lambda data, label: (data.astype(np.float32) / 255, label)``.
    """

    _namespace = "mnist"
    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
    _embedded = True

    def __init__(self, root=os.path.join(data_dir(), "datasets", "mnist"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        from ....io.idx import read_idx_images, read_idx_labels
        names = self._files[bool(self._train)]
        paths = [_find(self._root, n) for n in names]
        if all(p is None for p in paths) and self._embedded:
            from ....data.mnist import load_embedded_mnist
            raw = load_embedded_mnist()
            split = "train" if self._train else "test"
            data, label = raw[split + "_data"], raw[split + "_label"]
        elif any(p is None for p in paths):
            missing = [n for n, p in zip(names, paths) if p is None]
            raise MXNetError(
                f"{type(self).__name__}: {', '.join(missing)} (or without .gz) not found in "
                f"{self._root!r}. neomx does not download datasets: put the standard "
                f"{self._namespace} IDX files there, or pass root= the folder holding them.")
        else:
            data, label = read_idx_images(paths[0]), read_idx_labels(paths[1])
            if len(data) != len(label):
                raise MXNetError(f"{type(self).__name__}: {paths[0]!r} holds {len(data)} images "
                                 f"but {paths[1]!r} holds {len(label)} labels")
        data = np.ascontiguousarray(data, dtype=np.uint8).reshape(len(label), 28, 28, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = np.asarray(label).astype(np.int32)


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando's clothing images), MNIST's format and file names; ``root``
    defaults to $MXNET_HOME/datasets/fashion-mnist. The files must be there."""

    _namespace = "fashion-mnist"
    _embedded = False

    def __init__(self, root=os.path.join(data_dir(), "datasets", "fashion-mnist"), train=True,
                 transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: samples ``(image, label)``, the image a uint8 NDArray ``(32, 32, 3)``, the
    label an ``np.int32``.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar10
        Folder with the binary version's ``data_batch_1.bin`` ... ``data_batch_5.bin`` and
        ``test_batch.bin`` (or its ``cifar-10-batches-bin`` subfolder, or the archive
        ``cifar-10-binary.tar.gz``, unpacked on first use).
    train : bool, default True
    transform : callable, default None
    """

    _archive = ("cifar-10-binary.tar.gz", "cifar-10-batches-bin")
    _train_files = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
    _test_files = ("test_batch.bin",)
    _label_bytes = 1

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar10"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self):
        return 0

    def _read_batch(self, filename):
        raw = np.fromfile(filename, dtype=np.uint8)
        row = 3072 + self._label_bytes
        if raw.size == 0 or raw.size % row:
            raise MXNetError(f"{type(self).__name__}: {filename!r} is not a CIFAR binary batch "
                             f"({raw.size} bytes is not a multiple of {row})")
        raw = raw.reshape(-1, row)
        images = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column()].astype(np.int32)

    def _folder(self):
        """The folder holding the batch files (unpacking the archive if that is all there is)."""
        files = self._train_files + self._test_files
        sub = os.path.join(self._root, self._archive[1])
        for folder in (self._root, sub):
            if all(os.path.isfile(os.path.join(folder, f)) for f in files):
                return folder
        archive = os.path.join(self._root, self._archive[0])
        if os.path.isfile(archive):
            with tarfile.open(archive) as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(self._root, filter="data")
                else:  # pragma: no cover - Python without extraction filters
                    tar.extractall(self._root)  # noqa: S202
            for folder in (self._root, sub):
                if all(os.path.isfile(os.path.join(folder, f)) for f in files):
                    return folder
        raise MXNetError(
            f"{type(self).__name__}: {', '.join(files)} not found in {self._root!r} (nor in its "
            f"{self._archive[1]} folder). neomx does not download datasets: put the files of "
            f"the binary version there (or the archive {self._archive[0]}), or pass root= the "
            "folder holding them.")

    def _get_data(self):
        folder = self._folder()
        names = self._train_files if self._train else self._test_files
        data, label = zip(*(self._read_batch(os.path.join(folder, n)) for n in names))
        data = np.ascontiguousarray(np.concatenate(data))
        self._data = nd.array(data, dtype=data.dtype)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100: as :class:`CIFAR10` with ``train.bin`` and ``test.bin`` (folder
    ``cifar-100-binary``, archive ``cifar-100-binary.tar.gz``); ``fine_label`` picks the 100
    fine classes instead of the 20 coarse ones."""

    _archive = ("cifar-100-binary.tar.gz", "cifar-100-binary")
    _train_files = ("train.bin",)
    _test_files = ("test.bin",)
    _label_bytes = 2

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar100"), fine_label=False,
                 train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self):
        return int(bool(self._fine_label))


class ImageRecordDataset(RecordFileDataset):
    """Images packed in a RecordIO file (``.rec`` + ``.idx``, e.g. by im2rec): samples
    ``(image, label)``, the image decoded to an HWC uint8 NDArray (``flag`` 1: RGB, 0: gray),
    the label the record header's (a float, or an array for multi-label records)."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        from .... import image, recordio
        record = super().__getitem__(idx)
        header, img = recordio.unpack(record)
        img = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


_EXTS = (".jpg", ".jpeg", ".png")


class ImageFolderDataset(Dataset):
    """Images in ``root/<class name>/<image>`` folders: samples ``(image, label)`` with the
    label the index of the class folder in sorted order.

    Attributes
    ----------
    synsets : list of str
        Class names; ``synsets[i]`` is label ``i``.
    items : list of (str, int)
        Every image as (path, label).
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = list(_EXTS)
        if not os.path.isdir(self._root):
            raise MXNetError(f"ImageFolderDataset: {self._root!r} is not a directory")
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}")
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        from .... import image
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)


class ImageListDataset(Dataset):
    """Images listed with their labels: samples ``(image, label)``, the label a float32
    NDArray.

    Parameters
    ----------
    root : str, default '.'
        Folder the image paths are relative to.
    imglist : str or list
        A ``.lst`` file (``index<TAB>label(s)<TAB>path`` per line, as im2rec writes) or a list
        of ``[label(s)..., path]`` entries.
    flag : {0, 1}, default 1
        0: gray images (1 channel), 1: RGB.
    """

    def __init__(self, root=".", imglist=None, flag=1):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._items = []
        if isinstance(imglist, (list, tuple)):
            for entry in imglist:
                if len(entry) > 2:
                    label = list(entry[:-1])
                elif isinstance(entry[0], numeric_types):
                    label = [entry[0]]
                else:
                    label = list(np.asarray(entry[0]).ravel())
                self._items.append((nd.array(label, dtype="float32"), entry[-1]))
        elif isinstance(imglist, str):
            with open(imglist) as fin:
                for lineno, line in enumerate(fin, 1):
                    parts = line.strip().split("\t")
                    if not line.strip():
                        continue
                    if len(parts) < 3:
                        raise MXNetError(f"{imglist}:{lineno}: expected 'index<TAB>label(s)"
                                         f"<TAB>path', got {line.strip()!r}")
                    try:
                        label = [float(x) for x in parts[1:-1]]
                    except ValueError:
                        raise MXNetError(f"{imglist}:{lineno}: labels must be numbers: "
                                         f"{parts[1:-1]}") from None
                    self._items.append((nd.array(label, dtype="float32"), parts[-1]))
        else:
            raise MXNetError("ImageListDataset: imglist must be a .lst file name or a list of "
                             f"[label(s)..., path] entries, got {type(imglist).__name__}")

    def __len__(self):
        return len(self._items)

    def __getitem__(self, idx):
        from .... import image
        label, path = self._items[idx]
        return image.imread(os.path.join(self._root, path), self._flag), label
