#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's ``mx.autograd``.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_autograd.py

Output goes to ``tests/golden/autograd/``:

* ``autograd.json``  the cases (code, input shapes, what was run) and error records
* ``autograd.npz``   inputs and results, keyed ``<case id>/<name>``
* ``README.md``

Each case's ``code`` is Python run with ``mx`` (MXNet here, neomx in the tests) and the inputs
as local names; it sets ``out`` inside ``autograd.record()``. Kinds:

* ``backward``: inputs get ``attach_grad(grad_req)``, then ``out.backward(head)``
  (``repeat`` times, for grad_req 'add'); records ``out`` and every input's ``.grad``.
* ``grad``: ``autograd.grad(out, inputs, head_grads=head)``; records the returned gradients.
* ``grad2``: ``g = autograd.grad(out, [x], create_graph=True)[0]`` inside the record scope,
  then ``g.backward()``; records ``g`` and ``x.grad`` (second derivatives). Where MXNet has
  no second-order rule, ``mxnet_error`` holds its message (the tests then check neomx's
  second derivative numerically).

Inputs come from ``np.random.RandomState`` seeded by the CRC32 of the case id (``lo``/``hi``
set the range, so logs and square roots stay in their domains). The way a case runs, the flags,
get_symbol and error scenarios live in tests/autograd/_autograd_cases.py, written against the
``mx`` they are given; this script runs them in MXNet. Only mxnet, numpy and the stdlib are used.
"""
import os
import sys
from collections import OrderedDict

# first: it sets MXNET_SUBGRAPH_VERBOSE before mxnet loads
from _oracle_common import F32, ROOT, err_info, golden_dir, jsonable, rng_for, write_json

import numpy as np
import mxnet as mx

sys.path.insert(0, os.path.join(ROOT, "tests", "autograd"))
import _autograd_cases as cases  # noqa: E402

OUT = golden_dir('autograd')
GENERATOR = 'tools/make_golden_autograd.py'

CASES = []
ARRAYS = OrderedDict()


def case(cid, code, inputs, kind='backward', grad_req='write', head=None, repeat=1,
         lo=-1.0, hi=1.0, ints=None):
    """One case: ``inputs`` maps names to shapes; ``ints`` maps names to (low, high) for
    integer-valued inputs (labels, indices) that get no gradient."""
    CASES.append(OrderedDict(id=cid, code=code, inputs=OrderedDict(inputs), kind=kind,
                             grad_req=grad_req, head=head, repeat=repeat, lo=lo, hi=hi,
                             ints=ints or {}))


def make_inputs(c):
    r = rng_for(c['id'])
    vals = OrderedDict()
    for name, shape in c['inputs'].items():
        if name in c['ints']:
            lo, hi = c['ints'][name]
            vals[name] = r.randint(lo, hi, shape).astype(F32)
        else:
            vals[name] = r.uniform(c['lo'], c['hi'], shape).astype(F32)
    return vals


def run(c):
    vals = make_inputs(c)
    for k, v in vals.items():
        ARRAYS[f"{c['id']}/in_{k}"] = v
    arrs = OrderedDict((k, mx.nd.array(v)) for k, v in vals.items())
    head = None
    if c['head'] is not None:
        head = rng_for(c['id'] + '/head').uniform(-1, 1, c['head']).astype(F32)
        ARRAYS[f"{c['id']}/head"] = head
    if c['kind'] == 'grad2':  # (one input, x)
        x = arrs['x']
        out, g = cases.record_second_order(mx, c['code'], x)
        ARRAYS[f"{c['id']}/out"] = out.asnumpy()
        ARRAYS[f"{c['id']}/grad1"] = g.asnumpy()
        try:
            g.backward()
        except mx.base.MXNetError as e:  # no second-order rule in MXNet: neomx is checked
            c['mxnet_error'] = err_info(e)['error_message']  # numerically for these
            return
        ARRAYS[f"{c['id']}/grad_x"] = x.grad.asnumpy()
        return
    out, grads = cases.run_first_order(mx, c, arrs, None if head is None else mx.nd.array(head))
    ARRAYS[f"{c['id']}/out"] = out.asnumpy()
    for k, g in grads.items():
        if g is not None:
            ARRAYS[f"{c['id']}/grad_{k}"] = g.asnumpy()


# ----------------------------------------------------------------------------- composite cases
case('poly', "out = (x * x + 2 * x) / (x + 3)", {'x': (3, 4)})
case('unary_chain', "out = mx.nd.log(mx.nd.sigmoid(x)) * mx.nd.tanh(x) + mx.nd.exp(x / 2)",
     {'x': (2, 5)})
case('sqrt_square', "out = mx.nd.sqrt(mx.nd.square(x) + 1) - mx.nd.reciprocal(x + 3)",
     {'x': (4, 3)})
case('abs_relu', "out = mx.nd.abs(x) * 2 + mx.nd.relu(x - 0.2) - abs(-x)", {'x': (3, 5)})
case('powers', "out = x ** 3 + 2 ** x + (x + 2) ** (y + 1)", {'x': (3, 3), 'y': (3, 3)})
case('rsub_rdiv', "out = 1 - x + 3 / (x + 2) - (y - x)", {'x': (2, 3), 'y': (2, 3)})
case('broadcast', "out = x * y + x / (y + 2) - mx.nd.broadcast_maximum(x, y)",
     {'x': (3, 1), 'y': (1, 4)})
case('max_min', "out = mx.nd.maximum(x, y) * mx.nd.minimum(x, 0.3) + mx.nd.maximum(x, 0.1)",
     {'x': (4, 4), 'y': (4, 4)})
case('reduce', "out = mx.nd.sum(x * x, axis=1) + x.mean(axis=1) * mx.nd.max(x, axis=1)",
     {'x': (3, 5)})
case('reduce_all', "out = (x * y).sum() / x.mean()", {'x': (3, 4), 'y': (3, 4)}, lo=0.5, hi=2.0)
case('dot', "out = mx.nd.dot(x, w) + mx.nd.dot(x, w2, transpose_b=True)",
     {'x': (3, 4), 'w': (4, 5), 'w2': (5, 4)})
case('batch_dot', "out = mx.nd.batch_dot(a, b) * 2", {'a': (2, 3, 4), 'b': (2, 4, 2)})
case('mlp', """h = mx.nd.FullyConnected(x, w1, b1, num_hidden=6)
h = mx.nd.Activation(h, act_type='relu')
h = mx.nd.FullyConnected(h, w2, b2, num_hidden=3)
out = mx.nd.Activation(h, act_type='tanh')""",
     {'x': (4, 5), 'w1': (6, 5), 'b1': (6,), 'w2': (3, 6), 'b2': (3,)}, head=(4, 3))
case('softmax_ce', """p = mx.nd.log_softmax(mx.nd.FullyConnected(x, w, b, num_hidden=4))
out = -(p * mx.nd.one_hot(label, depth=4)).sum() / 3""",
     {'x': (3, 5), 'w': (4, 5), 'b': (4,), 'label': (3,)}, ints={'label': (0, 4)})
case('softmax_output', "out = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(x, w, num_hidden=4, "
     "no_bias=True), label)", {'x': (3, 5), 'w': (4, 5), 'label': (3,)},
     ints={'label': (0, 4)})
case('activations', "out = (mx.nd.Activation(x, act_type='sigmoid') + mx.nd.Activation(x, "
     "act_type='softrelu') * mx.nd.Activation(x, act_type='softsign'))",
     {'x': (3, 4)}, head=(3, 4))
case('leaky', "out = mx.nd.LeakyReLU(x, act_type='leaky', slope=0.2) + "
     "mx.nd.LeakyReLU(x, act_type='elu', slope=0.5)", {'x': (3, 4)})
case('softmax', "out = mx.nd.softmax(x, axis=1) * y + mx.nd.softmax(x, axis=0, temperature=2.0)",
     {'x': (3, 4), 'y': (3, 4)})
case('shape_ops', """a = x.reshape((4, 3)).T
b = mx.nd.transpose(x.reshape((2, 2, 3)), axes=(2, 0, 1)).reshape((3, 4))
out = a * b + mx.nd.expand_dims(x.flatten().sum(axis=1), axis=0)""",
     {'x': (4, 3)})
case('index', "out = x[1] * 2 + x[0:2].sum(axis=0) + x[2:3, 1:].sum() + x[:, 0:1].sum()",
     {'x': (3, 3)})
case('slice_ops', "out = mx.nd.slice_axis(x, axis=1, begin=1, end=3) * "
     "mx.nd.slice(x, begin=(0, 0), end=(None, 2))", {'x': (3, 4)})
case('concat_split', """c = mx.nd.concat(x, y * 2, dim=1)
s = mx.nd.split(c, num_outputs=2, axis=1)
out = s[0] * s[1] + mx.nd.stack(x, y, axis=0).sum(axis=0)""",
     {'x': (2, 3), 'y': (2, 3)})
case('tile_repeat_bcast', "out = mx.nd.tile(x, reps=(2, 1)) + mx.nd.repeat(y, repeats=2, axis=0) "
     "+ mx.nd.broadcast_to(z, shape=(4, 3))", {'x': (2, 3), 'y': (2, 3), 'z': (1, 3)})
case('clip_where', "out = mx.nd.clip(x, a_min=-0.5, a_max=0.5) * 3 + mx.nd.where(c, x * x, y)",
     {'x': (3, 4), 'y': (3, 4), 'c': (3, 4)}, ints={'c': (0, 2)})
case('embedding', "out = mx.nd.Embedding(idx, w, input_dim=5, output_dim=3) * 2",
     {'idx': (2, 3), 'w': (5, 3)}, ints={'idx': (0, 5)})
case('conv_pool', """h = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=2, pad=(1, 1))
out = mx.nd.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type='max') + mx.nd.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type='avg')""",
     {'x': (2, 1, 4, 4), 'w': (2, 1, 3, 3), 'b': (2,)})
case('batchnorm_train', """out = mx.nd.BatchNorm(x, gamma, beta, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False)""",
     {'x': (4, 3, 2, 2), 'gamma': (3,), 'beta': (3,)}, head=(4, 3, 2, 2))
case('cast_copy', "out = x.astype('float64').astype('float32') * x.copy() + mx.nd.identity(x)",
     {'x': (2, 3)})
case('make_loss', "out = mx.nd.MakeLoss(mx.nd.square(x - y).sum(axis=1), grad_scale=0.5)",
     {'x': (3, 4), 'y': (3, 4)})
case('block_grad', "out = x * mx.nd.BlockGrad(x * 3) + y.detach() * y", {'x': (2, 3), 'y': (2, 3)})
case('reuse', "h = x * y\nout = h * h + h * x + mx.nd.add_n(h, x, y)", {'x': (3, 3), 'y': (3, 3)})
case('head_grad', "out = mx.nd.tanh(x) * y", {'x': (2, 3), 'y': (2, 3)}, head=(2, 3))
case('grad_req_add', "out = x * x * y", {'x': (2, 3), 'y': (2, 3)}, grad_req='add', repeat=2)
case('trig', "out = mx.nd.sin(x) * mx.nd.cos(y) + mx.nd.tan(x * 0.5) + mx.nd.log2(y + 2) "
     "- mx.nd.log10(x + 3)", {'x': (2, 3), 'y': (2, 3)})
case('api_grad', "out = mx.nd.sigmoid(x) * y + y * y", {'x': (3, 2), 'y': (3, 2)}, kind='grad')
case('api_grad_head', "out = mx.nd.exp(x) * y", {'x': (3, 2), 'y': (3, 2)}, kind='grad',
     head=(3, 2))

# ----------------------------------------------------------------------------- second order
_POS = dict(lo=0.5, hi=2.0)
for _cid, _code, _kw in [
        ('sin', "out = mx.nd.sin(x)", {}),
        ('cos', "out = mx.nd.cos(x)", {}),
        ('tan', "out = mx.nd.tan(x)", {}),
        ('log2', "out = mx.nd.log2(x)", _POS),
        ('log10', "out = mx.nd.log10(x)", _POS),
        ('exp', "out = mx.nd.exp(x)", {}),
        ('log', "out = mx.nd.log(x)", _POS),
        ('sigmoid', "out = mx.nd.sigmoid(x)", {}),
        ('tanh', "out = mx.nd.tanh(x)", {}),
        ('relu', "out = mx.nd.relu(x)", {}),
        ('reciprocal', "out = mx.nd.reciprocal(x)", _POS),
        ('abs', "out = mx.nd.abs(x)", {}),
        ('sqrt', "out = mx.nd.sqrt(x)", _POS),
        ('square', "out = mx.nd.square(x)", {}),
        ('power_scalar', "out = x ** 3", {}),
        ('rpower_scalar', "out = 2 ** x", {}),
        ('power', "out = x ** (x * 0.5)", _POS),
        ('rdiv', "out = 1 / x", _POS),
        ('composite', "out = mx.nd.sigmoid(x * x) * mx.nd.exp(-x)", {}),
        ('product', "out = x * x * x", {}),
]:
    case(f'grad2_{_cid}', _code, {'x': (2, 3)}, kind='grad2', **_kw)


# ----------------------------------------------------------------------------- errors
def error_cases():
    """Record MXNet's errors for the misuse neomx must refuse the same way."""
    out = OrderedDict()
    for name, fn in cases.error_scenarios(mx).items():
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            out[name] = err_info(e, (RuntimeError, AssertionError,
                                     ValueError, TypeError))
        else:
            raise AssertionError(f'{name}: MXNet did not raise')
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        run(c)
    record = OrderedDict(generator=GENERATOR, mxnet_version=mx.__version__, cases=CASES,
                         errors=error_cases(), flags=cases.flags(mx), symbols=cases.symbols(mx))
    write_json(os.path.join(OUT, 'autograd.json'), jsonable(record))
    np.savez_compressed(os.path.join(OUT, 'autograd.npz'), **ARRAYS)
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write("# autograd golden values\n\n"
                f"Written by `{GENERATOR}` with MXNet {mx.__version__} "
                "(`tools/mxnet-oracle tools/make_golden_autograd.py`).\n\n"
                "`autograd.json`: cases (code run with `mx` = MXNet or neomx), MXNet's error "
                "records, flag values, a get_symbol structure; `autograd.npz`: inputs and "
                "results keyed `<case id>/<name>`.\n")
    print(f'{len(CASES)} cases, {len(ARRAYS)} arrays -> {OUT}')


if __name__ == '__main__':
    main()
