#!/usr/bin/env python3
"""Golden records for Gluon's layers (``gluon.nn``, ``gluon.contrib.nn``) from MXNet 1.9.1, for
tests/gluon/test_nn_layers.py and tests/gluon/test_contrib_nn.py::

    tools/mxnet-oracle tools/make_golden_gluon_nn.py

Writes tests/golden/gluon_nn/:

``cases.json``
    ``cases``: one record per layer case. ``spec`` says how to build the layer (``cls`` such as
    ``"nn.Conv2D"`` or ``"contrib.nn.HybridConcurrent"``, ``args``, ``kwargs`` with every JSON
    list standing for a Python tuple, ``fn`` naming a function of :data:`FUNCS`, ``children``
    for containers). The layer is built inside a fresh ``mx.name.NameManager()``, added to a
    ``HybridSequential`` (``Sequential`` for Blocks) inside its ``name_scope()``; the record
    holds the parameters (name, shape, grad_req) before and after the first forward, the
    structural names, ``repr`` of the layer before and after, the exported symbol JSON (text)
    and parameter-file keys, and which values the npz holds.
    ``errors``: constructor/forward calls that fail in MXNet: ``[error type, message]``.
    ``nn_all`` / ``contrib_nn_all``: the public names of ``gluon.nn`` / ``gluon.contrib.nn``.
``arrays.npz``
    per case ``<id>/x`` (input), ``<id>/head`` (head gradient), ``<id>/p/<name>`` (parameter
    values set with ``set_data`` after the first forward), ``<id>/init/<name>`` (values the
    deterministic initializers gave: biases, gamma/beta, running statistics, PReLU's alpha),
    ``<id>/pred0`` (predict-mode output before training), ``<id>/y`` and ``<id>/dx`` (output and
    input gradient under ``autograd.record()``), ``<id>/g/<name>`` (parameter gradients),
    ``<id>/after/<name>`` (parameter values after the training forward: BatchNorm's running
    statistics), ``<id>/pred1`` (predict-mode output after it). MXNet's hybridized run is
    checked here to match the imperative one (so the test compares both of neomx's runs to the
    one stored set). Random layers (Dropout with rate > 0) store only predict-mode values.

Only mxnet, numpy and the stdlib are used.
"""
import os
import tempfile
import warnings
from collections import OrderedDict

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
from _oracle_common import F32, golden_dir, rng_for, write_json

import mxnet as mx
import numpy as np

OUT = golden_dir('gluon_nn')
ARRAYS = OrderedDict()
warnings.simplefilter('ignore')

# Functions the lambda layers wrap (the test defines the same ones).
FUNCS = {
    'relu_times_2': lambda F, x: F.relu(x) * 2,
    'nd_square_plus_1': lambda x: x * x + 1,
}


def C(cls, *args, **kwargs):
    return {'cls': cls, 'args': list(args), 'kwargs': kwargs}


def tree(cls, children, **kwargs):
    spec = C(cls, **kwargs)
    spec['children'] = children
    return spec


# (id, spec, input shape, options). Options: 'int' = (lo, hi) integer-valued input; 'random'
# = train-mode values not comparable; 'block' = not hybridizable; 'nofwd' = no forward. Integer
# inputs get no gradient (MXNet's Embedding refuses to compute one).
CASES = [
    # activations
    ('leakyrelu', C('nn.LeakyReLU', 0.1), (2, 5), {}),
    ('prelu', C('nn.PReLU'), (2, 5), {}),
    ('prelu_channels', C('nn.PReLU', in_channels=3), (2, 3, 4), {}),
    ('elu', C('nn.ELU', alpha=0.5), (2, 5), {}),
    ('selu', C('nn.SELU'), (2, 5), {}),
    ('swish', C('nn.Swish', beta=2.0), (2, 5), {}),
    ('gelu', C('nn.GELU'), (2, 5), {}),
    ('activation', C('nn.Activation', 'softrelu'), (2, 5), {}),
    # basic layers
    ('dense_act', C('nn.Dense', 4, activation='tanh', use_bias=True), (2, 3, 2), {}),
    ('dropout0', C('nn.Dropout', 0.0), (2, 5), {}),
    ('dropout', C('nn.Dropout', 0.5, axes=(1,)), (4, 6, 3), {'random': True}),
    ('batchnorm', C('nn.BatchNorm'), (4, 3, 5), {}),
    ('batchnorm_last', C('nn.BatchNorm', axis=-1, momentum=0.8, epsilon=1e-3, center=False,
                         scale=False), (4, 5, 3), {}),
    ('batchnorm_global', C('nn.BatchNorm', use_global_stats=True, in_channels=3), (4, 3, 2, 2),
     {}),
    ('batchnormrelu', C('nn.BatchNormReLU', in_channels=3), (2, 3, 4), {'nofwd': True}),
    ('instancenorm', C('nn.InstanceNorm'), (2, 3, 5), {}),
    ('instancenorm_axis', C('nn.InstanceNorm', axis=2, scale=True, epsilon=1e-3), (2, 5, 3),
     {}),
    ('layernorm', C('nn.LayerNorm'), (2, 3, 5), {}),
    ('layernorm_axis', C('nn.LayerNorm', axis=1, center=False, in_channels=3), (2, 3, 5), {}),
    ('groupnorm', C('nn.GroupNorm', num_groups=2, epsilon=1e-3), (2, 4, 3), {}),
    ('embedding', C('nn.Embedding', 6, 3), (2, 4), {'int': (0, 6)}),
    ('flatten', C('nn.Flatten'), (2, 3, 2, 2), {}),
    ('lambda_str', C('nn.Lambda', 'tanh'), (2, 5), {'block': True}),
    ('lambda_fn', dict(C('nn.Lambda'), fn='nd_square_plus_1'), (2, 5), {'block': True}),
    ('hybridlambda_str', C('nn.HybridLambda', 'relu'), (2, 5), {}),
    ('hybridlambda_fn', dict(C('nn.HybridLambda'), fn='relu_times_2'), (2, 5), {}),
    # convolutions
    ('conv1d', C('nn.Conv1D', 4, 3, strides=2, padding=1), (2, 3, 7), {}),
    ('conv2d', C('nn.Conv2D', 4, (2, 3), padding=(1, 0), dilation=(1, 2), activation='relu'),
     (2, 3, 5, 6), {}),
    ('conv2d_group', C('nn.Conv2D', 4, 3, groups=2, use_bias=False, in_channels=2), (1, 2, 4, 4),
     {}),
    ('conv3d', C('nn.Conv3D', 2, 2, strides=(1, 2, 1)), (1, 2, 3, 4, 3), {}),
    ('conv1dt', C('nn.Conv1DTranspose', 3, 3, strides=2, output_padding=1), (2, 2, 4), {}),
    ('conv2dt', C('nn.Conv2DTranspose', 4, 3, strides=2, padding=1, groups=2, in_channels=4),
     (1, 4, 3, 3), {}),
    ('conv3dt', C('nn.Conv3DTranspose', 2, 2, use_bias=False), (1, 2, 2, 2, 3), {}),
    # pooling and padding
    ('maxpool1d', C('nn.MaxPool1D'), (2, 3, 8), {}),
    ('maxpool2d', C('nn.MaxPool2D', 3, 2, 1, ceil_mode=True), (1, 2, 6, 6), {}),
    ('maxpool3d', C('nn.MaxPool3D', (1, 2, 2)), (1, 2, 3, 4, 4), {}),
    ('avgpool1d', C('nn.AvgPool1D', 3, padding=1, count_include_pad=False), (2, 3, 8), {}),
    ('avgpool2d', C('nn.AvgPool2D', (2, 3), strides=1, padding=(1, 1)), (1, 2, 4, 5), {}),
    ('avgpool3d', C('nn.AvgPool3D', ceil_mode=True), (1, 2, 3, 3, 3), {}),
    ('gmaxpool1d', C('nn.GlobalMaxPool1D'), (2, 3, 5), {}),
    ('gmaxpool2d', C('nn.GlobalMaxPool2D'), (2, 3, 3, 4), {}),
    ('gmaxpool3d', C('nn.GlobalMaxPool3D'), (1, 2, 2, 3, 3), {}),
    ('gavgpool1d', C('nn.GlobalAvgPool1D'), (2, 3, 5), {}),
    ('gavgpool2d', C('nn.GlobalAvgPool2D'), (2, 3, 3, 4), {}),
    ('gavgpool3d', C('nn.GlobalAvgPool3D'), (1, 2, 2, 3, 3), {}),
    ('reflectionpad', C('nn.ReflectionPad2D', 2), (1, 2, 3, 4), {}),
    # contrib
    ('identity', C('contrib.nn.Identity'), (2, 5), {}),
    ('hybridconcurrent', tree('contrib.nn.HybridConcurrent',
                              [C('nn.Dense', 3), C('contrib.nn.Identity'),
                               C('nn.Activation', 'sigmoid')], axis=1), (2, 4), {}),
    ('concurrent', tree('contrib.nn.Concurrent',
                        [C('nn.Dense', 2, in_units=4), C('nn.Lambda', 'tanh')], axis=-1),
     (3, 4), {'block': True}),
    ('syncbatchnorm', C('contrib.nn.SyncBatchNorm', num_devices=1), (4, 3, 2), {}),
    ('pixelshuffle1d', C('contrib.nn.PixelShuffle1D', 2), (1, 4, 3), {}),
    ('pixelshuffle2d', C('contrib.nn.PixelShuffle2D', (2, 3)), (1, 12, 2, 2), {}),
    ('pixelshuffle3d', C('contrib.nn.PixelShuffle3D', 2), (1, 8, 2, 1, 2), {}),
    # a small CNN of several layers (names, export)
    ('cnn', tree('nn.HybridSequential', [
        C('nn.Conv2D', 4, 3, padding=1), C('nn.BatchNorm'), C('nn.LeakyReLU', 0.2),
        C('nn.MaxPool2D'), C('nn.Conv2D', 2, 1, use_bias=False), C('nn.InstanceNorm'),
        C('nn.GlobalAvgPool2D'), C('nn.Flatten'), C('nn.Dropout', 0.0), C('nn.Dense', 3)]),
     (2, 3, 4, 4), {}),
]

DETERMINISTIC_INIT = ('bias', 'gamma', 'beta', 'running_mean', 'running_var', 'alpha')


def resolve(cls):
    obj = mx.gluon
    for part in cls.split('.'):
        obj = getattr(obj, part)
    return obj


def build(spec):
    args = list(spec['args'])
    if 'fn' in spec:
        args.append(FUNCS[spec['fn']])
    layer = resolve(spec['cls'])(*args, **spec['kwargs'])
    if 'children' in spec:
        with layer.name_scope():
            for child in spec['children']:
                layer.add(build(child))
    return layer


def make_net(spec, block):
    with mx.name.NameManager():
        net = mx.gluon.nn.Sequential() if block else mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(build(spec))
    return net


def param_table(net):
    return [[k, list(p.shape), p.grad_req] for k, p in net.collect_params().items()]


def values(cid, name, shape):
    r = rng_for(cid + '/' + name)
    if name.endswith(('running_var', 'gamma')):
        return r.uniform(0.5, 1.5, shape).astype(F32)
    return r.uniform(-1, 1, shape).astype(F32)


def set_params(net, cid):
    for name, p in net.collect_params().items():
        p.set_data(mx.nd.array(ARRAYS['%s/p/%s' % (cid, name)]))


def run(net, x, head, train_grads, x_grad=True, backward=True):
    """predict before, train forward+backward, parameters after, predict after."""
    pred0 = net(x).asnumpy()
    if not backward:
        return pred0, None, None, {}, {}, net(x).asnumpy()
    xv = x.copy()
    if x_grad:
        xv.attach_grad()
    with mx.autograd.record():
        y = net(xv)
    y.backward(head)
    params = net.collect_params()
    grads = {k: params[k].grad().asnumpy() for k in train_grads}
    after = {k: p.data().asnumpy() for k, p in params.items()}
    pred1 = net(x).asnumpy()
    return pred0, y.asnumpy(), xv.grad.asnumpy() if x_grad else None, grads, after, pred1


def record_case(cid, spec, shape, opts):
    block = opts.get('block', False)
    net = make_net(spec, block)
    layer = net[0]
    rec = OrderedDict([('id', cid), ('spec', common.jsonable(spec)), ('shape', list(shape)),
                       ('options', common.jsonable(opts))])
    rec['params_before'] = param_table(net)
    rec['repr_before'] = repr(layer)
    rec['prefix'] = layer.prefix
    r = rng_for(cid + '/x')
    if 'int' in opts:
        x = r.randint(opts['int'][0], opts['int'][1], shape).astype(F32)
    else:
        x = r.uniform(-1, 1, shape).astype(F32)
    ARRAYS[cid + '/x'] = x
    rec['structural'] = sorted(net._collect_params_with_prefix().keys())
    if opts.get('nofwd'):
        return rec
    net.initialize()
    xnd = mx.nd.array(x)
    net(xnd)  # finishes deferred initialization
    rec['params_after'] = param_table(net)
    rec['repr_after'] = repr(layer)
    rec['net_repr'] = repr(net)
    for name, p in net.collect_params().items():
        if name.endswith(DETERMINISTIC_INIT):
            ARRAYS['%s/init/%s' % (cid, name)] = p.data().asnumpy()
        ARRAYS['%s/p/%s' % (cid, name)] = values(cid, name, p.shape)
    set_params(net, cid)
    train_grads = [k for k, p in net.collect_params().items() if p.grad_req != 'null']
    rec['grads'] = train_grads
    out_shape = net(xnd).shape
    head = rng_for(cid + '/head').uniform(-1, 1, out_shape).astype(F32)
    ARRAYS[cid + '/head'] = head
    res = run(net, xnd, mx.nd.array(head), train_grads, 'int' not in opts)
    if not block:
        net2 = make_net(spec, block)
        net2.initialize()
        net2.hybridize()
        net2(xnd)
        set_params(net2, cid)
        # (a hybridized Identity's output is its input: MXNet cannot differentiate it)
        res2 = run(net2, xnd, mx.nd.array(head), train_grads, 'int' not in opts,
                   cid != 'identity')
        if not opts.get('random'):
            for a, b in zip(res[:3] + res[5:], res2[:3] + res2[5:]):
                if a is not None and b is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=cid)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'net')
            net2.export(path)
            with open(path + '-symbol.json') as f:
                rec['export_json'] = f.read()
            saved = mx.nd.load(path + '-0000.params')  # a list when empty
            rec['export_keys'] = sorted(saved.keys()) if isinstance(saved, dict) else []
    pred0, y, dx, grads, after, pred1 = res
    ARRAYS[cid + '/pred0'] = pred0
    ARRAYS[cid + '/pred1'] = pred1
    if not opts.get('random'):
        ARRAYS[cid + '/y'] = y
        if dx is not None:
            ARRAYS[cid + '/dx'] = dx
        for k, g in grads.items():
            ARRAYS['%s/g/%s' % (cid, k)] = g
        for k, v in after.items():
            ARRAYS['%s/after/%s' % (cid, k)] = v
    return rec


def error_text(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, common.mask_timestamps(str(e))]
    return None


def forward_error(layer, shape):
    layer.initialize()
    return layer(mx.nd.ones(shape)).asnumpy()


ERRORS = OrderedDict([
    ('conv2d_layout', lambda: mx.gluon.nn.Conv2D(4, 3, layout='NCW')),
    ('conv3d_layout', lambda: mx.gluon.nn.Conv3D(4, 3, layout='NCHW')),
    ('conv1d_layout', lambda: mx.gluon.nn.Conv1D(4, 3, layout='NWC')),
    ('conv1d_kernel', lambda: mx.gluon.nn.Conv1D(4, (3, 3))),
    ('conv2dt_outpad', lambda: mx.gluon.nn.Conv2DTranspose(4, 3, output_padding=(1, 1, 1))),
    ('maxpool2d_layout', lambda: mx.gluon.nn.MaxPool2D(layout='NCW')),
    ('maxpool1d_size', lambda: mx.gluon.nn.MaxPool1D(pool_size=(2, 2))),
    ('avgpool3d_size', lambda: mx.gluon.nn.AvgPool3D(pool_size=(2, 2))),
    ('gavgpool3d_layout', lambda: mx.gluon.nn.GlobalAvgPool3D(layout='NCHW')),
    ('gmaxpool1d_layout', lambda: mx.gluon.nn.GlobalMaxPool1D(layout='NCHW')),
    ('leakyrelu_alpha', lambda: mx.gluon.nn.LeakyReLU(-0.1)),
    ('lambda_name', lambda: mx.gluon.nn.Lambda('no_such_function')),
    ('lambda_type', lambda: mx.gluon.nn.Lambda(3)),
    ('hybridlambda_name', lambda: mx.gluon.nn.HybridLambda('no_such_function')),
    ('hybridlambda_type', lambda: mx.gluon.nn.HybridLambda(3)),
    ('reflectionpad_len', lambda: mx.gluon.nn.ReflectionPad2D((1, 2))),
    ('pixelshuffle2d_len', lambda: mx.gluon.contrib.nn.PixelShuffle2D((2, 2, 2))),
    ('pixelshuffle3d_len', lambda: mx.gluon.contrib.nn.PixelShuffle3D((2, 2))),
    ('conv_channels', lambda: forward_error(mx.gluon.nn.Conv2D(4, 3, in_channels=2),
                                            (1, 3, 5, 5))),
    ('hybridsequential_block', lambda: mx.gluon.nn.HybridSequential().add(
        mx.gluon.nn.Lambda('tanh'))),
])


def public_names(module):
    return sorted(n for n in dir(module) if not n.startswith('_') and isinstance(
        getattr(module, n), type))


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [record_case(*c) for c in CASES]
    errors = OrderedDict()
    for k, fn in ERRORS.items():
        with mx.name.NameManager():
            errors[k] = error_text(fn)
        assert errors[k] is not None, k
    write_json(os.path.join(OUT, 'cases.json'), OrderedDict([
        ('mxnet', mx.__version__), ('script', 'tools/make_golden_gluon_nn.py'),
        ('cases', cases), ('errors', errors),
        ('nn_all', public_names(mx.gluon.nn)),
        ('contrib_nn_all', public_names(mx.gluon.contrib.nn))]))
    np.savez_compressed(os.path.join(OUT, 'arrays.npz'), **ARRAYS)
    print('wrote', OUT, len(cases), 'cases', len(ARRAYS), 'arrays')


if __name__ == '__main__':
    main()
