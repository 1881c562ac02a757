"""mx.contrib.quantization: MXNet 1.9.1's quantized graphs (the models and how they are
quantized: tests/contrib/_quantization_cases.py; golden JSON from
tools/make_golden_quantization.py), calibration, Gluon's quantize_net, and an INT8 LeNet on
MNIST that keeps the float model's accuracy."""
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.contrib import quantization as q

from . import _quantization_cases as cases

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "quantization"
GRAPHS = json.loads((GOLDEN / "graphs.json").read_text())
ARRAYS = np.load(GOLDEN / "ops.npz")


CALIB_ATTRS = ('min_calib_range', 'max_calib_range')


def _args(net, kind='arg'):
    prefix = 'graph_%s__%s__' % (net, kind)
    return {k[len(prefix):]: mx.nd.array(ARRAYS[k]) for k in ARRAYS.files if k.startswith(prefix)}


def _structure(js):
    """(op, name, inputs, attrs without calibration values) per node, the calibration values,
    and the heads."""
    nodes, calib = [], {}
    for n in js['nodes']:
        attrs = dict(n.get('attrs', {})) if n['op'] != 'null' else {}
        for k in CALIB_ATTRS:
            if k in attrs:
                calib[(n['name'], k)] = float(attrs.pop(k))
        nodes.append((n['op'], n['name'], [list(i[:2]) for i in n['inputs']], attrs))
    return nodes, calib, [list(h[:2]) for h in js['heads']]


def _quantize(net, tag, rec):
    sym, args, auxs = cases.NETS[net](mx), _args(net), _args(net, 'aux')
    if tag in ('naive_auto', 'entropy_auto'):
        return cases.quantize(mx, sym, args, auxs, tag.split('_')[0],
                              ARRAYS['graph_%s__calib_data' % net])
    return cases.quantize(mx, sym, args, auxs, **rec['kwargs'])


GRAPH_KEYS = sorted(k for k in GRAPHS if not k.endswith('calib_layers'))


@pytest.mark.parametrize("key", GRAPH_KEYS)
def test_quantized_graph_matches_mxnet(key):
    net, tag = key.split('/')
    rec = GRAPHS[key]
    qsym, qarg, qaux = _quantize(net, tag, rec)
    # (neomx's quantized batch norm reads the moving statistics as arguments: they are added)
    qarg = {k: v for k, v in qarg.items() if k not in qaux}
    got_nodes, got_calib, got_heads = _structure(json.loads(qsym.tojson()))
    want_nodes, want_calib, want_heads = _structure(rec['json'])
    assert got_nodes == want_nodes
    assert got_heads == want_heads
    assert sorted(got_calib) == sorted(want_calib)
    for k, v in want_calib.items():  # (the float model's layer outputs: last-digit differences)
        assert got_calib[k] == pytest.approx(v, rel=1e-5, abs=2e-6), k
    assert sorted(qarg) == rec['params']
    if tag == 'naive_auto':
        for name in rec['params']:
            want = ARRAYS['graph_%s__qarg__%s' % (net, name)]
            got = qarg[name].asnumpy()
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("net", ['bn', 'mlp', 'tail'])
def test_calibrated_int8_model_output_matches_mxnet(net):
    """The calibrated INT8 model run end to end (MXNet with MXNET_SUBGRAPH_BACKEND=NONE: the
    quantized operators unfused; LeNet's int8-fed second convolution cannot run there)."""
    qsym, qarg, qaux = _quantize(net, 'naive_auto', GRAPHS['%s/naive_auto' % net])
    got = cases.int8_forward(mx, qsym, qarg, qaux, ARRAYS['graph_%s__calib_data' % net])
    want = ARRAYS['graph_%s__int8_out' % net]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("net", sorted(cases.NETS))
def test_calibration_layers(net):
    _, layers = q._quantize_symbol(cases.NETS[net](mx), mx.cpu(), offline_params=list(_args(net)))
    assert layers == GRAPHS['%s/calib_layers' % net]


def test_quantize_graph_then_calib_graph_equals_quantize_model():
    sym, args = cases.mlp(mx), _args('mlp')
    data = ARRAYS['graph_mlp__calib_data']
    qsym, qarg, _, collector = q.quantize_graph(sym, args, {}, calib_mode='naive',
                                                quantized_dtype='auto', quantize_mode='smart')
    mod = mx.mod.Module(sym, label_names=('softmax_label',))
    it = mx.io.NDArrayIter(data, np.zeros(len(data), 'f'), batch_size=4)
    mod.bind(for_training=False, data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.set_params(args, {})
    q._collect_layer_statistics(mod, it, collector)
    csym, carg, _ = q.calib_graph(qsym, args, {}, collector, calib_mode='naive',
                                  quantized_dtype='auto')
    want = GRAPHS['mlp/naive_auto']['json']
    assert _structure(json.loads(csym.tojson()))[0] == _structure(want)[0]
    assert sorted(carg) == GRAPHS['mlp/naive_auto']['params']


def test_combine_histogram_widens_symmetrically():
    arr = np.array([-0.5, 0.1, 0.9], 'f')
    hist, edges = np.histogram(arr, bins=5, range=(-1, 1))
    old = (hist, edges, -0.5, 0.9, 1.0)
    h, e, lo, hi, th = q.combine_histogram(old, np.array([2.5], 'f'), 2.5, 2.5, 2.5)
    assert th == pytest.approx(2.6) and len(h) == 13 and h.sum() == 4
    assert (lo, hi) == (-0.5, 2.5)


def test_bad_arguments():
    sym, args = cases.mlp(mx), _args('mlp')
    with pytest.raises(ValueError, match='excluded_sym_names must be a list'):
        q.quantize_model(sym, args, {}, excluded_sym_names='fc0', calib_mode='none')
    with pytest.raises(ValueError, match='unknown quantized_dtype'):
        q.quantize_model(sym, args, {}, quantized_dtype='int4', calib_mode='none')
    with pytest.raises(ValueError, match='calib_data must be provided'):
        q.quantize_model(sym, args, {}, calib_mode='naive')
    with pytest.raises(mx.MXNetError, match='tensor-wise'):
        q.quantize_model(sym, args, {}, calib_mode='none', quantize_granularity='channel-wise')
    assert mx.contrib.quant is q


def _lenet_mnist():
    # (MXNet's oneDNN quantized convolution adds the int8 bias unscaled: a bias-free LeNet)
    return cases.lenet(mx, pool1='max', num_hidden=64, no_bias=True)


@pytest.fixture(scope='module')
def trained_lenet():
    mnist = mx.test_utils.get_mnist()
    mx.random.seed(0)
    np.random.seed(0)
    sym = _lenet_mnist()
    train = mx.io.NDArrayIter(mnist['train_data'], mnist['train_label'].astype('f'), batch_size=50,
                              shuffle=True)
    mod = mx.mod.Module(sym)
    mod.fit(train, num_epoch=3, optimizer='adam', optimizer_params={'learning_rate': 0.003},
            initializer=mx.init.Xavier())
    args, aux = mod.get_params()
    test = mx.io.NDArrayIter(mnist['test_data'], mnist['test_label'].astype('f'), batch_size=100)
    acc = mod.score(test, 'acc')[0][1]
    return sym, args, aux, mnist, acc


@pytest.mark.parametrize("calib_mode", ['naive', 'entropy'])
def test_int8_lenet_keeps_accuracy(trained_lenet, calib_mode):
    sym, args, aux, mnist, fp32_acc = trained_lenet
    assert fp32_acc > 0.9
    calib = mx.io.NDArrayIter(mnist['train_data'][:500], mnist['train_label'][:500].astype('f'),
                              batch_size=100)
    qsym, qarg, qaux = q.quantize_model(sym, args, aux, ctx=mx.cpu(), calib_mode=calib_mode,
                                        calib_data=calib, num_calib_examples=500,
                                        quantized_dtype='auto')
    js = json.loads(qsym.tojson())
    ops = [n['op'] for n in js['nodes']]
    assert ops.count('_contrib_quantized_conv') == 2
    assert ops.count('_contrib_quantized_fully_connected') == 2
    requant = [n for n in js['nodes'] if n['op'] == '_contrib_requantize']
    assert requant and all('min_calib_range' in n['attrs'] for n in requant)
    assert qarg['conv0_weight_quantize'].dtype == np.int8
    test = mx.io.NDArrayIter(mnist['test_data'], mnist['test_label'].astype('f'), batch_size=100)
    qmod = mx.mod.Module(qsym, label_names=['softmax_label'])
    qmod.bind(for_training=False, data_shapes=test.provide_data, label_shapes=test.provide_label)
    qmod.set_params(qarg, qaux)
    int8_acc = qmod.score(test, 'acc')[0][1]
    assert int8_acc >= fp32_acc - 0.01, (int8_acc, fp32_acc)


def test_quantize_net_returns_symbol_block():
    mx.random.seed(0)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(16, activation='relu'), mx.gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    x = np.random.RandomState(0).uniform(0, 1, (8, 6)).astype('f')
    want = net(mx.nd.array(x)).asnumpy()
    calib = mx.io.NDArrayIter(x, batch_size=4)
    with pytest.warns(UserWarning, match='quantize_net_v2'):
        qnet = q.quantize_net(net, quantized_dtype='auto', calib_mode='naive', calib_data=calib,
                              ctx=mx.cpu())
    assert isinstance(qnet, mx.gluon.SymbolBlock)
    got = qnet(mx.nd.array(x)).asnumpy()
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 0.05 * np.abs(want).max()
    params = qnet.collect_params()
    weights = [k for k in params.keys() if k.endswith('weight_quantize')]
    assert len(weights) == 2 and all(params[k].data().dtype == np.int8 for k in weights)


def test_quantize_net_v2_with_dataloader_and_excluded_layer():
    mx.random.seed(2)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(16, activation='relu'), mx.gluon.nn.Dense(8, activation='relu'),
            mx.gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = np.random.RandomState(1).uniform(0, 1, (16, 6)).astype('f')
    want = net(mx.nd.array(x)).asnumpy()
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.zeros(16, 'f')),
                                      batch_size=8)  # (data, label) batches: the label is dropped
    last = net[2].name  # (Gluon's name counters depend on the layers made before)
    qnet = q.quantize_net_v2(net, quantized_dtype='auto', calib_mode='naive', calib_data=loader,
                             exclude_layers_match=[last])
    got = qnet(mx.nd.array(x)).asnumpy()
    assert np.abs(got - want).max() <= 0.05 * np.abs(want).max()
    names = qnet.collect_params().keys()
    assert any(k.endswith(last + '_weight') for k in names)  # excluded: stays float32
    assert not any(k.endswith(last + '_weight_quantize') for k in names)
    assert sum(k.endswith('weight_quantize') for k in names) == 2
