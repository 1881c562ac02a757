#!/usr/bin/env python3
"""Golden records for ``gluon.model_zoo`` from MXNet 1.9.1, for tests/gluon/test_model_zoo.py::

    tools/mxnet-oracle tools/make_golden_model_zoo.py

Writes tests/golden/model_zoo/:

``models.json.gz``
    ``models``: per ``get_model`` name (every model, built inside a fresh
    ``mx.name.NameManager()`` with default arguments): ``input`` (the shape of the forward that
    completed deferred initialization), ``params`` (``[name, shape]`` in ``collect_params()``
    order), ``struct`` (the structural names of ``save_parameters`` files, in their order),
    ``symbol`` (the JSON ``export`` wrote after a hybridized forward; MXNet's ``net(sym.var(
    'data'))`` JSON is checked here to be the same text), ``export_keys`` (the sorted keys of the
    exported parameter file), ``out_shape`` and ``repr`` (after the forward).
    ``values``: the models with stored outputs, with their input shape.
    ``errors``: bad calls: ``[call, error type, message]``.
    ``public``: the public names of ``vision`` and ``model_store``.
``values.npz``
    per valued model ``<name>``: the predict-mode output (float32) for the input
    :func:`input_value` with every parameter set by :func:`param_value`; MXNet's hybridized output
    is checked here to equal its imperative one.

Only mxnet, numpy and the stdlib are used.
"""
import gzip
import json
import os
import tempfile
import warnings
import zlib
from collections import OrderedDict

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
from _oracle_common import golden_dir, jsonable

import mxnet as mx
import numpy as np
from mxnet.gluon.model_zoo import model_store, vision

OUT = golden_dir('model_zoo')
warnings.simplefilter('ignore')

MODELS = ['alexnet', 'densenet121', 'densenet161', 'densenet169', 'densenet201', 'inceptionv3',
          'mobilenet1.0', 'mobilenet0.75', 'mobilenet0.5', 'mobilenet0.25',
          'mobilenetv2_1.0', 'mobilenetv2_0.75', 'mobilenetv2_0.5', 'mobilenetv2_0.25',
          'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
          'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
          'squeezenet1.0', 'squeezenet1.1', 'vgg11', 'vgg13', 'vgg16', 'vgg19',
          'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn']

# models whose outputs are stored: name -> input shape (the smallest the architecture takes,
# give or take)
VALUES = OrderedDict([
    ('resnet18_v1', (2, 3, 64, 64)), ('resnet18_v2', (2, 3, 64, 64)),
    ('mobilenet0.25', (2, 3, 64, 64)), ('mobilenetv2_0.25', (2, 3, 64, 64)),
    ('squeezenet1.1', (1, 3, 224, 224)), ('alexnet', (2, 3, 67, 67)),
    ('densenet121', (1, 3, 224, 224)),
])


def input_shape(name):
    return (1, 3, 299, 299) if name == 'inceptionv3' else (1, 3, 224, 224)


def param_value(name, shape):
    """The value every parameter gets, from a RandomState keyed by its name (the test has the
    same function): He-uniform weights, BatchNorm statistics near 0 and 1, small biases."""
    r = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    if name.endswith(('_gamma', '_running_var')):
        v = r.uniform(0.8, 1.2, shape)
    elif name.endswith(('_beta', '_bias', '_running_mean')):
        v = r.uniform(-0.1, 0.1, shape)
    else:
        bound = np.sqrt(6.0 / int(np.prod(shape[1:])))
        v = r.uniform(-bound, bound, shape)
    return v.astype(np.float32)


def input_value(name, shape):
    """The input of a valued model (the test has the same function)."""
    r = np.random.RandomState(zlib.crc32(('input/' + name).encode()) & 0x7FFFFFFF)
    return r.uniform(-1, 1, shape).astype(np.float32)


def build(name):
    with mx.name.NameManager():
        net = vision.get_model(name)
    net.initialize()
    return net


def record_model(name, tmp):
    net = build(name)
    shape = input_shape(name)
    x = mx.nd.zeros(shape)
    net.hybridize()
    y = net(x)
    rec = OrderedDict()
    rec['input'] = shape
    rec['params'] = [[p.name, p.shape] for p in net.collect_params().values()]
    rec['struct'] = list(net._collect_params_with_prefix().keys())
    path = os.path.join(tmp, name)
    net.export(path)
    with open(path + '-symbol.json') as f:
        text = f.read()
    with mx.name.NameManager():
        again = vision.get_model(name)
    assert again(mx.sym.var('data')).tojson() == text, name
    rec['symbol'] = text
    rec['export_keys'] = sorted(mx.nd.load(path + '-0000.params').keys())
    rec['out_shape'] = y.shape
    rec['repr'] = repr(net)
    return rec


def record_values(name, shape, arrays):
    net = build(name)
    x = input_value(name, shape)
    net(mx.nd.array(x))
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(param_value(p.name, p.shape)))
    y = net(mx.nd.array(x)).asnumpy()
    net.hybridize()
    yh = net(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(yh, y, rtol=1e-4, atol=1e-4 * np.abs(y).max())
    print('%-18s |y| max %.3g mean %.3g' % (name, np.abs(y).max(), np.abs(y).mean()))
    arrays[name] = y


def record_errors():
    calls = [
        ("vision.get_model('resnet19_v1')", lambda: vision.get_model('resnet19_v1')),
        ("vision.get_resnet(3, 18)", lambda: vision.get_resnet(3, 18)),
        ("vision.get_resnet(1, 19)", lambda: vision.get_resnet(1, 19)),
        ("vision.SqueezeNet('1.2')", lambda: vision.SqueezeNet('1.2')),
        ("model_store.short_hash('resnet19_v1')", lambda: model_store.short_hash('resnet19_v1')),
        ("model_store.get_model_file('resnet19_v1')",
         lambda: model_store.get_model_file('resnet19_v1')),
    ]
    out = []
    for text, fn in calls:
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            out.append([text, type(e).__name__, str(e)])
        else:
            raise AssertionError(text + ' did not fail')
    return out


def public(mod):
    return sorted(n for n in dir(mod) if not n.startswith('_'))


def main():
    os.makedirs(OUT, exist_ok=True)
    golden = OrderedDict(models=OrderedDict())
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            golden['models'][name] = record_model(name, tmp)
            print('recorded', name)
    golden['values'] = OrderedDict((k, v) for k, v in VALUES.items())
    golden['errors'] = record_errors()
    golden['public'] = {'vision': public(vision), 'model_store': public(model_store)}
    golden['short_hash'] = {n: model_store.short_hash(n) for n in MODELS}
    golden['mxnet_version'] = mx.__version__
    with gzip.GzipFile(os.path.join(OUT, 'models.json.gz'), 'wb', mtime=0) as f:
        f.write(json.dumps(jsonable(golden), separators=(',', ':')).encode())
    arrays = OrderedDict()
    for name, shape in VALUES.items():
        record_values(name, shape, arrays)
    np.savez_compressed(os.path.join(OUT, 'values.npz'), **arrays)


if __name__ == '__main__':
    main()
