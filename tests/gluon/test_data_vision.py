"""gluon.data.vision against MXNet 1.9.1 (``tools/make_golden_gluon_data.py``): the transforms
on a fixed image (imperative and hybridized), MNIST/CIFAR parsing of small generated files,
the embedded MNIST, clear errors for missing files; image folder/list/RecordIO datasets."""
from __future__ import annotations

import gzip
import json
import os
import pathlib
import struct

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.data import DataLoader, vision
from neomx.gluon.data.vision import transforms as T

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "gluon_data" /
                     "gluon_data.json").read_text())
IMG = np.array(GOLDEN["transforms"]["image"], dtype=np.uint8)
NORM = ((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))


def _transforms():
    t = mx.nd.image.to_tensor(mx.nd.array(IMG, dtype="uint8"))
    hyb = lambda b: (b.hybridize(), b)[1]  # noqa: E731
    return {
        "to_tensor": (T.ToTensor(), None), "to_tensor_hybrid": (hyb(T.ToTensor()), None),
        "normalize": (T.Normalize(*NORM), t), "normalize_scalar": (T.Normalize(0.5, 0.2), t),
        "cast": (T.Cast("float64"), None), "cast_default": (T.Cast(), None),
        "resize": (T.Resize((7, 5)), None), "resize_int": (T.Resize(6), None),
        "resize_keep": (T.Resize(6, keep_ratio=True), None),
        "resize_keep_hybrid": (hyb(T.Resize(6, keep_ratio=True)), None),
        "resize_nearest": (T.Resize((20, 15), interpolation=0), None),
        "crop_resize": (T.CropResize(1, 2, 6, 5), None),
        "crop_resize_size": (T.CropResize(1, 2, 6, 5, size=(4, 3), interpolation=1), None),
        "center_crop": (T.CenterCrop(6), None), "center_crop_wh": (T.CenterCrop((8, 4)), None),
        "center_crop_up": (T.CenterCrop((20, 16)), None),
        "brightness_0": (T.RandomBrightness(0), None),
        "compose": (T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(), T.Normalize(*NORM)]),
                    None),
        "compose_hybrid_run": (T.Compose([T.Cast(), T.ToTensor(), T.Normalize(0.1, 2.0)]), None),
    }


@pytest.mark.parametrize("name", list(GOLDEN["transforms"]["cases"]))
def test_transform_as_mxnet(name):
    block, inp = _transforms()[name]
    out = block(mx.nd.array(IMG, dtype="uint8") if inp is None else inp)
    want = GOLDEN["transforms"]["cases"][name]
    assert np.dtype(out.dtype).name == want["dtype"]
    np.testing.assert_allclose(out.asnumpy(), np.array(want["value"]), rtol=1e-6, atol=1e-6)


def test_compose_groups_hybrid_runs():
    c = T.Compose([T.Cast(), T.ToTensor(), T.CenterCrop(3), T.Normalize(0.1, 2.0)])
    kinds = [type(b).__name__ for b in c._children.values()]
    assert kinds == ["HybridSequential", "CenterCrop", "Normalize"]


def test_random_transforms_properties():
    x = mx.nd.array(IMG, dtype="uint8")
    mx.random.seed(0)
    for block in (T.RandomFlipLeftRight(), T.RandomFlipTopBottom(), T.RandomBrightness(0.3),
                  T.RandomContrast(0.3), T.RandomSaturation(0.3), T.RandomHue(0.1),
                  T.RandomColorJitter(0.2, 0.2, 0.2, 0.1), T.RandomLighting(0.1)):
        outs = [block(x).asnumpy() for _ in range(8)]
        assert all(o.shape == IMG.shape and o.dtype == np.uint8 for o in outs)
        assert len({o.tobytes() for o in outs}) > 1, type(block).__name__
    np.random.seed(1)
    out = T.RandomResizedCrop(5)(x)
    assert out.shape == (5, 5, 3) and out.dtype == np.uint8
    assert T.RandomResizedCrop((6, 4))(x).shape == (4, 6, 3)


def test_transform_bad_input():
    with pytest.raises(mx.base.MXNetError, match="must not be negative"):
        T.RandomBrightness(-1)
    with pytest.raises(mx.base.MXNetError, match="Input image must have shape"):
        T.ToTensor()(mx.nd.zeros((4, 4)))


# --- datasets ------------------------------------------------------------------------------------
def make_files(root):
    """Tiny MNIST (5 train / 3 test) and CIFAR10/100 (2 images per batch file) under root
    (the bytes of tools/make_golden_gluon_data.py's make_files)."""
    r = np.random.RandomState(42)
    os.makedirs(os.path.join(root, 'mnist'), exist_ok=True)
    for prefix, n in (('train', 5), ('t10k', 3)):
        imgs = r.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        labels = r.randint(0, 10, n).astype(np.uint8)
        with gzip.open(os.path.join(root, 'mnist', prefix + '-images-idx3-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>IIII', 2051, n, 28, 28) + imgs.tobytes())
        with gzip.open(os.path.join(root, 'mnist', prefix + '-labels-idx1-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>II', 2049, n) + labels.tobytes())
    os.makedirs(os.path.join(root, 'cifar10'), exist_ok=True)
    for name in ['data_batch_%d.bin' % i for i in range(1, 6)] + ['test_batch.bin']:
        rows = np.concatenate([r.randint(0, 10, (2, 1)), r.randint(0, 256, (2, 3072))], 1)
        rows.astype(np.uint8).tofile(os.path.join(root, 'cifar10', name))
    os.makedirs(os.path.join(root, 'cifar100'), exist_ok=True)
    for name in ('train.bin', 'test.bin'):
        rows = np.concatenate([r.randint(0, 20, (3, 1)), r.randint(0, 100, (3, 1)),
                               r.randint(0, 256, (3, 3072))], 1)
        rows.astype(np.uint8).tofile(os.path.join(root, 'cifar100', name))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("vision"))
    make_files(root)
    return root


def _datasets(root):
    j = os.path.join
    return {"mnist_train": lambda: vision.MNIST(j(root, "mnist")),
            "mnist_test": lambda: vision.MNIST(j(root, "mnist"), train=False),
            "cifar10_train": lambda: vision.CIFAR10(j(root, "cifar10")),
            "cifar10_test": lambda: vision.CIFAR10(j(root, "cifar10"), train=False),
            "cifar100_coarse": lambda: vision.CIFAR100(j(root, "cifar100")),
            "cifar100_fine": lambda: vision.CIFAR100(j(root, "cifar100"), fine_label=True,
                                                     train=False)}


@pytest.mark.parametrize("name", list(GOLDEN["datasets"]))
def test_dataset_parsing_as_mxnet(files, name):
    ds = _datasets(files)[name]()
    want = GOLDEN["datasets"][name]
    d, label = ds[0]
    assert len(ds) == want["len"] and list(d.shape) == want["shape"]
    assert np.dtype(d.dtype).name == want["dtype"] and type(label).__name__ == want["label_type"]
    assert [int(ds[i][1]) for i in range(len(ds))] == want["labels"]
    assert [int(ds[i][0].asnumpy().astype(np.int64).sum()) for i in range(len(ds))] == want["sums"]
    assert d.asnumpy()[:, :, 0].tolist() == want["first"]


def test_fashion_mnist_reads_the_same_format(files):
    ds = vision.FashionMNIST(os.path.join(files, "mnist"), train=False,
                             transform=lambda d, l: (d.astype("float32") / 255, l))
    assert len(ds) == 3 and ds[0][0].dtype == np.float32


def test_mnist_without_files_uses_the_embedded_digits(tmp_path):
    ds = vision.MNIST(str(tmp_path), train=False)
    assert len(ds) == 1000 and ds[0][0].shape == (28, 28, 1)
    labels = np.array([ds[i][1] for i in range(len(ds))])
    assert np.bincount(labels).tolist() == [100] * 10
    x, y = next(iter(DataLoader(ds.transform_first(T.ToTensor()), batch_size=16)))
    assert x.shape == (16, 1, 28, 28) and y.dtype == np.int32


def test_missing_files_give_clear_errors(tmp_path):
    with pytest.raises(mx.base.MXNetError, match="train-images-idx3-ubyte.gz.*not found"):
        vision.FashionMNIST(str(tmp_path))
    with pytest.raises(mx.base.MXNetError, match="data_batch_1.bin.*does not download"):
        vision.CIFAR10(str(tmp_path))
    with pytest.raises(mx.base.MXNetError, match="train.bin, test.bin not found"):
        vision.CIFAR100(str(tmp_path))
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(b"")
    with pytest.raises(mx.base.MXNetError, match="t10k-labels-idx1-ubyte.gz"):
        vision.MNIST(str(tmp_path), train=False)


def test_cifar_from_the_archive(tmp_path, files):
    import tarfile
    with tarfile.open(tmp_path / "cifar-10-binary.tar.gz", "w:gz") as tar:
        tar.add(os.path.join(files, "cifar10"), arcname="cifar-10-batches-bin")
    ds = vision.CIFAR10(str(tmp_path), train=False)
    assert len(ds) == 2 and [int(ds[i][1]) for i in range(2)] == \
        GOLDEN["datasets"]["cifar10_test"]["labels"]


# --- image files (mx.image decodes) ----------------------------------------------------------------
cv2 = pytest.importorskip("cv2")


def _write_images(root):
    r = np.random.RandomState(3)
    paths = []
    for cls in ("cat", "dog"):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        for i in range(2):
            img = r.randint(0, 256, (6, 8, 3)).astype(np.uint8)
            path = os.path.join(root, cls, f"{i}.png")
            cv2.imwrite(path, img[:, :, ::-1])  # stored BGR: decoded RGB equals img
            paths.append((path, img))
    return paths


def test_image_folder_and_list_datasets(tmp_path):
    paths = _write_images(str(tmp_path))
    (tmp_path / "notes.txt").write_text("not a class")
    (tmp_path / "cat" / "x.txt").write_text("not an image")
    with pytest.warns(UserWarning):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and [lbl for _, lbl in ds.items] == [0, 0, 1, 1]
    img, label = ds[2]
    assert label == 1 and np.array_equal(img.asnumpy(), paths[2][1])
    gray = vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert gray.shape == (6, 8, 1)
    lst = tmp_path / "images.lst"
    lst.write_text("".join(f"{i}\t{i % 2}\t{3.5 * i}\t{os.path.relpath(p, tmp_path)}\n"
                           for i, (p, _) in enumerate(paths)))
    lds = vision.ImageListDataset(str(tmp_path), str(lst))
    img, label = lds[3]
    assert np.array_equal(img.asnumpy(), paths[3][1]) and label.asnumpy().tolist() == [1, 10.5]
    lds2 = vision.ImageListDataset(str(tmp_path), [[1, os.path.relpath(paths[0][0], tmp_path)]])
    assert lds2[0][1].asnumpy().tolist() == [1.0]
    loader = DataLoader(ds.transform_first(T.ToTensor()), batch_size=4, num_workers=2)
    x, y = next(iter(loader))
    assert x.shape == (4, 3, 6, 8) and y.asnumpy().tolist() == [0, 0, 1, 1]


def test_image_record_dataset(tmp_path):
    paths = _write_images(str(tmp_path / "imgs"))
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, (_, img) in enumerate(paths):
        ok, buf = cv2.imencode(".png", img[:, :, ::-1])
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), buf.tobytes()))
    w.close()
    ds = vision.ImageRecordDataset(rec)
    img, label = ds[1]
    assert label == 1.0 and np.array_equal(img.asnumpy(), paths[1][1])
    tds = vision.ImageRecordDataset(rec, transform=lambda d, l: (d.astype("float32"), l * 2))
    assert tds[3][1] == 6.0 and tds[3][0].dtype == np.float32
