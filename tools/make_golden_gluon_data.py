"""Golden values for ``mx.gluon.data`` (``neomx/gluon/data/``) from MXNet 1.9.1: the batches of
DataLoaders over ArrayDatasets without shuffling (last_batch keep/discard/rollover, tuples,
NDArray/numpy/list samples, batch_sampler), samplers and Dataset.shard/take/filter, the vision
transforms on a fixed image, and MNIST/CIFAR parsing of small generated files (same bytes as
``tests/gluon/test_data_vision.py`` writes: ``make_files`` below is copied there).

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_data.py

Writes ``tests/golden/gluon_data/gluon_data.json``.
"""
import gzip
import os
import struct
import tempfile
from collections import OrderedDict

import numpy as np

from _oracle_common import golden_dir, jsonable, write_json

import mxnet as mx
from mxnet import gluon
from mxnet.gluon.data import vision
from mxnet.gluon.data.vision import transforms as T
import mxnet.gluon.data.vision.datasets as vds


def make_files(root):
    """Tiny MNIST (5 train / 3 test) and CIFAR10/100 (2 images per batch file) under root."""
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


def encode(b):
    """A batch as JSON: lists stay lists, NDArrays become {dtype, value}."""
    if isinstance(b, (list, tuple)):
        return [encode(p) for p in b]
    return OrderedDict([('dtype', np.dtype(b.dtype).name), ('value', b.asnumpy().tolist())])


def batches(loader, epochs=1):
    return [[encode(b) for b in loader] for _ in range(epochs)]


def loaders():
    X = np.arange(24, dtype=np.float32).reshape(8, 3)
    Y = np.arange(8, dtype=np.int32) * 10
    cases = OrderedDict()
    ds = gluon.data.ArrayDataset(X, Y)
    cases['keep'] = batches(gluon.data.DataLoader(ds, batch_size=3))
    cases['discard'] = batches(gluon.data.DataLoader(ds, batch_size=3, last_batch='discard'))
    cases['rollover'] = batches(gluon.data.DataLoader(ds, batch_size=3, last_batch='rollover'), 3)
    cases['nd_samples'] = batches(gluon.data.DataLoader(
        gluon.data.ArrayDataset(mx.nd.array(X), mx.nd.array(Y)), batch_size=4))
    cases['single'] = batches(gluon.data.DataLoader(gluon.data.SimpleDataset(list(range(5))),
                                                    batch_size=2))
    cases['floats'] = batches(gluon.data.DataLoader([0.5, 1.5, 2.5], batch_size=2))
    cases['uint8'] = batches(gluon.data.DataLoader(
        gluon.data.ArrayDataset(X.astype(np.uint8)), batch_size=5))
    cases['batch_sampler'] = batches(gluon.data.DataLoader(ds, batch_sampler=gluon.data.BatchSampler(
        gluon.data.SequentialSampler(5, 2), 2, 'keep')))
    cases['transform_first'] = batches(gluon.data.DataLoader(
        ds.transform_first(lambda x: x * 2), batch_size=4))
    cases['nested'] = batches(gluon.data.DataLoader(
        gluon.data.ArrayDataset(X, Y).transform(lambda x, y: (x, (y, -y))), batch_size=4))
    lens = OrderedDict((k, len(gluon.data.DataLoader(ds, batch_size=3, last_batch=k)))
                       for k in ('keep', 'discard', 'rollover'))
    return cases, lens


def samplers():
    out = OrderedDict()
    seq = gluon.data.SequentialSampler(10)
    for lb in ('keep', 'discard', 'rollover'):
        bs = gluon.data.BatchSampler(seq, 4, lb)
        out['batch_' + lb] = [list(map(int, b)) for b in bs] + ['|'] + \
            [list(map(int, b)) for b in bs]
        out['len_' + lb] = len(bs)
    out['seq_start'] = list(gluon.data.SequentialSampler(4, 3))
    ds = gluon.data.SimpleDataset(list(range(11)))
    out['shard'] = [list(ds.shard(4, i)) for i in range(4)]
    out['take'] = list(ds.take(3)), len(ds.take(None)), len(ds.take(50))
    out['filter'] = list(ds.filter(lambda x: x % 3 == 0))
    out['sample'] = list(ds.sample(gluon.data.SequentialSampler(3, 5)))
    out['transform_eager'] = list(ds.transform(lambda x: x + 1, lazy=False))
    return out


def transforms():
    r = np.random.RandomState(7)
    img = r.randint(0, 256, (10, 13, 3)).astype(np.uint8)
    x = mx.nd.array(img, dtype='uint8')
    cases = OrderedDict()

    def rec(name, block, inp=x, hybridize=False):
        if hybridize:
            block.hybridize()
        o = block(inp)
        cases[name] = encode(o)

    rec('to_tensor', T.ToTensor())
    rec('to_tensor_hybrid', T.ToTensor(), hybridize=True)
    t = T.ToTensor()(x)
    rec('normalize', T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3)), t)
    rec('normalize_scalar', T.Normalize(0.5, 0.2), t)
    rec('cast', T.Cast('float64'))
    rec('cast_default', T.Cast())
    rec('resize', T.Resize((7, 5)))
    rec('resize_int', T.Resize(6))
    rec('resize_keep', T.Resize(6, keep_ratio=True))
    rec('resize_keep_hybrid', T.Resize(6, keep_ratio=True), hybridize=True)
    rec('resize_nearest', T.Resize((20, 15), interpolation=0))
    rec('crop_resize', T.CropResize(1, 2, 6, 5))
    rec('crop_resize_size', T.CropResize(1, 2, 6, 5, size=(4, 3), interpolation=1))
    rec('center_crop', T.CenterCrop(6))
    rec('center_crop_wh', T.CenterCrop((8, 4)))
    rec('center_crop_up', T.CenterCrop((20, 16)))
    rec('brightness_0', T.RandomBrightness(0))
    rec('compose', T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(),
                              T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))]))
    rec('compose_hybrid_run', T.Compose([T.Cast(), T.ToTensor(), T.Normalize(0.1, 2.0)]))
    return OrderedDict([('image', img.tolist()), ('cases', cases)])


def datasets():
    # MXNet downloads (and checks sha1 sums) unless patched: read the local files as they are
    vds.download = lambda url, path=None, sha1_hash=None, **kw: os.path.join(path, url.split('/')[-1])
    vds.check_sha1 = lambda path, sha1: True
    out = OrderedDict()
    with tempfile.TemporaryDirectory() as root:
        make_files(root)
        for name, ds in (('mnist_train', vision.MNIST(os.path.join(root, 'mnist'))),
                         ('mnist_test', vision.MNIST(os.path.join(root, 'mnist'), train=False)),
                         ('cifar10_train', vision.CIFAR10(os.path.join(root, 'cifar10'))),
                         ('cifar10_test', vision.CIFAR10(os.path.join(root, 'cifar10'), train=False)),
                         ('cifar100_coarse', vision.CIFAR100(os.path.join(root, 'cifar100'))),
                         ('cifar100_fine', vision.CIFAR100(os.path.join(root, 'cifar100'),
                                                           fine_label=True, train=False))):
            d, l = ds[0]
            out[name] = OrderedDict([
                ('len', len(ds)), ('shape', list(d.shape)), ('dtype', d.dtype.__name__),
                ('label_type', type(l).__name__), ('labels', [int(ds[i][1]) for i in range(len(ds))]),
                ('sums', [int(ds[i][0].asnumpy().astype(np.int64).sum()) for i in range(len(ds))]),
                ('first', d.asnumpy()[:, :, 0].tolist())])
    return out


def main():
    cases, lens = loaders()
    write_json(os.path.join(golden_dir('gluon_data'), 'gluon_data.json'), OrderedDict([
        ('mxnet_version', mx.__version__), ('generator', 'tools/make_golden_gluon_data.py'),
        ('loaders', cases), ('loader_lens', lens), ('samplers', jsonable(samplers())),
        ('transforms', transforms()), ('datasets', datasets())]))


if __name__ == '__main__':
    main()
