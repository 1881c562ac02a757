#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's visualization tests.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_viz.py

Output goes to ``tests/golden/viz/`` (paths are resolved relative to this file):

* ``<network>-symbol.json``  each network's ``sym.tojson()``, so neomx rebuilds the very same
                             graph with ``mx.sym.load_json`` (no dependence on name counters)
* ``cases.json``             ``plot_network`` sources, ``print_summary`` stdout and error texts
* ``README.md``

Only mxnet, numpy, graphviz (the Python package) and the stdlib are used; nothing is random.
"""
import contextlib
import io
import json
import os
import warnings
from collections import OrderedDict

# first: it sets MXNET_SUBGRAPH_VERBOSE before mxnet loads
from _oracle_common import ROOT, golden_dir, write_json

import graphviz
import numpy as np
import mxnet as mx

OUT = golden_dir('viz')
GENERATOR = 'tools/make_golden_viz.py'

S = mx.sym


# ----------------------------------------------------------------------------- networks
# Each builder runs inside a fresh NameManager, so auto names start at 0 (convolution0, ...).

def mlp():
    """The seed tutorial's two-layer perceptron."""
    net = S.Variable('data')
    net = S.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = S.Activation(data=net, name='relu1', act_type="relu")
    net = S.FullyConnected(data=net, name='fc2', num_hidden=10)
    return S.SoftmaxOutput(data=net, name='out')


def lenet():
    """LeNet-5 exactly as in the seed tutorial (auto-named layers)."""
    data = S.Variable('data')
    conv1 = S.Convolution(data=data, kernel=(5, 5), num_filter=20)
    tanh1 = S.Activation(data=conv1, act_type="tanh")
    pool1 = S.Pooling(data=tanh1, pool_type="max", kernel=(2, 2), stride=(2, 2))
    conv2 = S.Convolution(data=pool1, kernel=(5, 5), num_filter=50)
    tanh2 = S.Activation(data=conv2, act_type="tanh")
    pool2 = S.Pooling(data=tanh2, pool_type="max", kernel=(2, 2), stride=(2, 2))
    flatten = S.Flatten(data=pool2)
    fc1 = S.FullyConnected(data=flatten, num_hidden=500)
    tanh3 = S.Activation(data=fc1, act_type="tanh")
    fc2 = S.FullyConnected(data=tanh3, num_hidden=10)
    return S.SoftmaxOutput(data=fc2, name='out')


def bn_concat():
    """Conv+BatchNorm stem, three branches joined by Concat, global pooling and a small head.

    Covers BatchNorm (hidden gamma/beta/moving_* inputs, 2C params), Concat, grouped and
    bias-free convolutions, Pooling with stride/pad and with no kernel (global_pool),
    LeakyReLU without attrs, Dropout (default colour), Reshape and a bias-free FC.
    """
    data = S.Variable('data')
    c1 = S.Convolution(data, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16,
                       name='conv1')
    bn1 = S.BatchNorm(c1, name='bn1')
    a1 = S.Activation(bn1, act_type='relu', name='relu1')
    b1 = S.Convolution(a1, kernel=(1, 1), num_filter=8, no_bias=True, name='branch1')
    b2 = S.Convolution(a1, kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=2,
                       name='branch2')
    b3 = S.Pooling(a1, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type='avg',
                   name='branch3')
    cat = S.Concat(b1, b2, b3, dim=1, name='concat')
    gp = S.Pooling(cat, global_pool=True, pool_type='avg', name='gpool')
    fl = S.Flatten(gp, name='flatten')
    fc = S.FullyConnected(fl, num_hidden=10, no_bias=True, name='fc')
    lr = S.LeakyReLU(fc, name='lrelu')
    dp = S.Dropout(lr, p=0.5, name='drop')
    rs = S.Reshape(dp, shape=(-1, 10), name='reshape')
    return S.SoftmaxOutput(rs, name='softmax')


def two_inputs():
    """Two inputs added together, grouped with an internal output.

    print_summary only counts inputs that are ops, node 0, or in ``set(heads[0])``, so
    ``fy``'s input ``y`` is neither listed nor counted (its params become 1*8).
    """
    x = S.Variable('x')
    y = S.Variable('y')
    fx = S.FullyConnected(x, num_hidden=8, name='fx')
    fy = S.FullyConnected(y, num_hidden=8, name='fy')
    act = S.Activation(fx + fy, act_type='sigmoid', name='sig')
    return S.Group([act, fx])


def split_embed():
    """Embedding, a two-output SliceChannel (edge labels use ``<name>_output<num_outputs-1>``)."""
    data = S.Variable('data')
    emb = S.Embedding(data, input_dim=100, output_dim=8, name='embed')
    parts = S.SliceChannel(emb, num_outputs=2, axis=2, name='split')
    fc = S.FullyConnected(parts[0] + parts[1], num_hidden=4, name='fc')
    return S.SoftmaxOutput(fc, name='out')


def dup_names():
    """Two different variables both named 'data': plot_network warns (RuntimeWarning)."""
    a = S.FullyConnected(S.Variable('data'), num_hidden=4, name='fa')
    b = S.FullyConnected(S.Variable('data'), num_hidden=4, name='fb')
    return a + b


def pool_no_type():
    """Pooling whose pool_type was left at its default: MXNet's plot_network raises KeyError."""
    return S.Pooling(S.Variable('data'), kernel=(2, 2), name='pool')


def reduce_1d():
    """An op fed a 1-D (batch-only) tensor: MXNet's print_summary raises IndexError on it."""
    return S.Activation(S.sum(S.Variable('data'), axis=1), act_type='relu', name='relu')


def group_var():
    """A group whose last node is a variable: print_summary then omits its closing '=' rule."""
    return S.Group([S.FullyConnected(S.Variable('data'), num_hidden=2, name='fc'),
                    S.Variable('z')])


NETWORKS = OrderedDict((f.__name__, f) for f in
                       (mlp, lenet, bn_concat, two_inputs, split_embed, dup_names, pool_no_type,
                        reduce_1d, group_var))

# ----------------------------------------------------------------------------- cases
# kwargs are stored as JSON: shapes become lists, dtypes become numpy type names.

PLOTS = [
    ('mlp', 'mlp-default', {}),
    ('mlp', 'mlp-shape', {'shape': {'data': (100, 100)}}),
    ('mlp', 'mlp-show-weights', {'hide_weights': False}),
    ('mlp', 'mlp-node-attrs', {'node_attrs': {'shape': 'oval', 'fixedsize': 'false',
                                              'fontsize': '10'}}),
    ('mlp', 'mlp-title-format', {'title': 'mlp net', 'save_format': 'png'}),
    ('mlp', 'mlp-dtype', {'dtype': {'data': 'float16'}}),
    ('mlp', 'mlp-shape-dtype', {'shape': {'data': (100, 100)}, 'dtype': {'data': 'float64'}}),
    ('lenet', 'lenet-default', {}),
    ('lenet', 'lenet-shape', {'shape': {'data': (128, 1, 28, 28)}}),
    ('lenet', 'lenet-shape-show-weights', {'shape': {'data': (128, 1, 28, 28)},
                                           'hide_weights': False}),
    ('bn_concat', 'bn_concat-default', {}),
    ('bn_concat', 'bn_concat-shape', {'shape': {'data': (4, 3, 32, 32)}}),
    ('bn_concat', 'bn_concat-show-weights', {'hide_weights': False}),
    ('two_inputs', 'two_inputs-default', {}),
    ('two_inputs', 'two_inputs-shape', {'shape': {'x': (2, 5), 'y': (2, 7)}}),
    ('split_embed', 'split_embed-shape-dtype', {'shape': {'data': (32, 5)},
                                                'dtype': {'data': 'float32'}}),
    ('dup_names', 'dup_names-default', {}),
    ('reduce_1d', 'reduce_1d-shape', {'shape': {'data': (2, 3)}}),
    ('group_var', 'group_var-default', {}),
]

SUMMARIES = [
    ('mlp', 'mlp-noshape', {}),
    ('mlp', 'mlp-shape', {'shape': {'data': (100, 100)}}),
    ('mlp', 'mlp-narrow', {'shape': {'data': (100, 100)}, 'line_length': 60}),
    ('mlp', 'mlp-abs-positions', {'shape': {'data': (100, 100)}, 'line_length': 70,
                                  'positions': [25, 40, 50, 70]}),
    ('lenet', 'lenet-noshape', {}),
    ('lenet', 'lenet-shape', {'shape': {'data': (128, 1, 28, 28)}}),
    ('bn_concat', 'bn_concat-shape', {'shape': {'data': (4, 3, 32, 32)}}),
    ('two_inputs', 'two_inputs-shape', {'shape': {'x': (2, 5), 'y': (2, 7)}}),
    ('split_embed', 'split_embed-shape', {'shape': {'data': (32, 5)}}),
    ('dup_names', 'dup_names-noshape', {}),
    ('group_var', 'group_var-noshape', {}),
]

# (function, id, network or None for a non-Symbol argument, kwargs)
ERRORS = [
    ('plot_network', 'plot-not-symbol', None, {}),
    ('print_summary', 'summary-not-symbol', None, {}),
    ('plot_network', 'plot-bad-shape-name', 'mlp', {'shape': {'bogus': (1, 2)}}),
    ('print_summary', 'summary-bad-shape-name', 'mlp', {'shape': {'bogus': (1, 2)}}),
    ('plot_network', 'plot-bad-dtype-name', 'mlp', {'dtype': {'bogus': 'float32'}}),
    ('plot_network', 'plot-incomplete-shape', 'two_inputs', {'shape': {'x': (2, 5)}}),
    ('print_summary', 'summary-incomplete-shape', 'two_inputs', {'shape': {'x': (2, 5)}}),
    ('plot_network', 'plot-pool-no-type', 'pool_no_type', {}),
    ('print_summary', 'summary-1d-input', 'reduce_1d', {'shape': {'data': (2, 3)}}),
]


def to_call_kwargs(kwargs):
    """JSON-stored kwargs -> the arguments actually passed (tuples, numpy types)."""
    out = dict(kwargs)
    if 'shape' in out:
        out['shape'] = {k: tuple(v) for k, v in out['shape'].items()}
    if 'dtype' in out:
        out['dtype'] = {k: getattr(np, v) for k, v in out['dtype'].items()}
    return out


def jsonable(kwargs):
    return json.loads(json.dumps(kwargs))


@contextlib.contextmanager
def capture():
    """Collect stdout text and warnings raised inside the block."""
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with contextlib.redirect_stdout(buf):
            yield buf, caught


def warn_list(caught):
    return [{'category': w.category.__name__, 'message': str(w.message)} for w in caught]


def internals_info(sym, kwargs):
    """MXNet's own view of ``sym.get_internals()`` for these kwargs: output names and, when
    shape/dtype are given, the inferred output shapes/type names (lets tests check the drawing
    logic apart from neomx's operators and inference)."""
    internals = sym.get_internals()
    info = OrderedDict([('outputs', internals.list_outputs())])
    if 'shape' in kwargs:
        info['shapes'] = internals.infer_shape(**kwargs['shape'])[1]
    if 'dtype' in kwargs:
        info['types'] = [np.dtype(t).name for t in internals.infer_type(**kwargs['dtype'])[1]]
    return json.loads(json.dumps(info))


def err_info(e):
    text = str(e)
    core = text
    if 'MXNetError: ' in text:  # keep only the message, not the C++ traceback lines
        core = text.split('MXNetError: ', 1)[1]
    return {'exc_type': type(e).__name__, 'error': text, 'error_message': core.strip()}


# ----------------------------------------------------------------------------- main

def main():
    os.makedirs(OUT, exist_ok=True)
    symbols = {}
    for name, build in NETWORKS.items():
        with mx.name.NameManager():
            sym = build()
        symbols[name] = sym
        with open(os.path.join(OUT, name + '-symbol.json'), 'w') as f:
            f.write(sym.tojson())

    doc = OrderedDict()
    doc['generator'] = GENERATOR
    doc['mxnet_version'] = mx.__version__
    doc['graphviz_python_version'] = graphviz.__version__
    doc['networks'] = OrderedDict(
        (name, {'file': name + '-symbol.json', 'doc': NETWORKS[name].__doc__.strip()})
        for name in NETWORKS)

    doc['plots'] = []
    for net, cid, kwargs in PLOTS:
        with capture() as (buf, caught):
            dot = mx.viz.plot_network(symbols[net], **to_call_kwargs(kwargs))
        doc['plots'].append(OrderedDict([
            ('id', cid), ('network', net), ('kwargs', jsonable(kwargs)),
            ('name', dot.name), ('format', dot.format), ('source', dot.source),
            ('stdout', buf.getvalue()), ('warnings', warn_list(caught)),
            ('internals', internals_info(symbols[net], to_call_kwargs(kwargs)))]))

    doc['summaries'] = []
    for net, cid, kwargs in SUMMARIES:
        with capture() as (buf, caught):
            mx.viz.print_summary(symbols[net], **to_call_kwargs(kwargs))
        doc['summaries'].append(OrderedDict([
            ('id', cid), ('network', net), ('kwargs', jsonable(kwargs)),
            ('stdout', buf.getvalue()), ('warnings', warn_list(caught)),
            ('internals', internals_info(symbols[net], to_call_kwargs(kwargs)))]))

    doc['errors'] = []
    for func, cid, net, kwargs in ERRORS:
        arg = symbols[net] if net else 'not a symbol'
        try:
            with capture() as (buf, caught):
                getattr(mx.viz, func)(arg, **to_call_kwargs(kwargs))
        except Exception as e:  # noqa: BLE001 - recording whatever MXNet raises
            info = err_info(e)
        else:
            raise AssertionError(cid + ' did not raise')
        doc['errors'].append(OrderedDict([
            ('id', cid), ('function', func), ('network', net), ('kwargs', jsonable(kwargs)),
            ('stdout', buf.getvalue()), ('warnings', warn_list(caught))] + list(info.items())))

    write_json(os.path.join(OUT, 'cases.json'), doc, ensure_ascii=False)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write(README.format(version=mx.__version__, gv=graphviz.__version__))
    print('wrote %d networks, %d plots, %d summaries, %d errors to %s'
          % (len(symbols), len(doc['plots']), len(doc['summaries']), len(doc['errors']),
             os.path.relpath(OUT, ROOT)))


README = """# MXNet 1.9.1 golden fixtures: visualization

Produced by the real Apache MXNet {version} (CPU build, graphviz Python package {gv}) with
`tools/make_golden_viz.py`, for `tests/viz/test_plot.py`.

* `<network>-symbol.json`: each network's `sym.tojson()`. Tests rebuild the graph with
  `mx.sym.load_json`, so node names never depend on neomx's name counters.
* `cases.json`:
  * `networks`: name -> file and what the network exercises;
  * `plots`: `mx.viz.plot_network(sym, **kwargs)` -> the Digraph's `name`, `format`, `source`,
    plus anything printed and any warnings;
  * `summaries`: `mx.viz.print_summary(sym, **kwargs)` -> its stdout;
  * in both, `internals`: MXNet's `sym.get_internals().list_outputs()` and, when the case has
    `shape`/`dtype`, the inferred output shapes / dtype names, so tests can check the drawing
    logic on MXNet's inference alone;
  * `errors`: the exception type and text (`error_message` drops MXNet's C++ traceback lines)
    and whatever was printed before the raise (`stdout`).

  In `kwargs`, shapes are stored as lists (passed as tuples) and dtypes as numpy type names
  (passed as `getattr(numpy, name)`).

graphviz 0.8.4's `source` has no final newline after `}}`; graphviz >= 0.9 adds one. The tests
compare with that one newline stripped. To regenerate, run
`tools/mxnet-oracle tools/make_golden_viz.py` from the repository root.
"""


if __name__ == '__main__':
    main()
