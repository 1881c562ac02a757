"""Models the export tests convert, each with random parameters and inputs (seeded), and the
reference: neomx's own executor."""
from __future__ import annotations

import numpy as np

import neomx as mx


def _fill(sym, shapes, seed, aux_init=None):
    """Random arg/aux params for ``sym`` (data inputs named in ``shapes`` excluded)."""
    rng = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args, aux = {}, {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in shapes or name.endswith("label"):
            continue
        args[name] = mx.nd.array(rng.uniform(-0.5, 0.5, shape))
    for name, shape in zip(sym.list_auxiliary_states(), aux_shapes):
        lo, hi = (0.5, 1.5) if name.endswith("var") else (-0.2, 0.2)
        aux[name] = mx.nd.array(rng.uniform(lo, hi, shape))
    return args, aux


def lenet(head=True):
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh1")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = mx.sym.Convolution(net, kernel=(5, 5), num_filter=50, name="conv2")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh2")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool2")
    net = mx.sym.Flatten(net, name="flatten")
    net = mx.sym.FullyConnected(net, num_hidden=500, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh3")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    if head:
        net = mx.sym.SoftmaxOutput(net, name="softmax")
    shapes = {"data": (2, 1, 28, 28)}
    args, aux = _fill(net, shapes, 0)
    inputs = {"data": np.random.RandomState(1).rand(*shapes["data"]).astype(np.float32)}
    return net, args, aux, inputs


def resnet18(tmpdir):
    """The model zoo's resnet18_v1, exported as Gluon does (symbol + params files)."""
    from neomx.gluon.model_zoo import vision
    net = vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = np.random.RandomState(2).rand(1, 3, 64, 64).astype(np.float32)
    net(mx.nd.array(x))
    prefix = str(tmpdir / "resnet18")
    net.export(prefix)
    sym, args, aux = mx.model.load_checkpoint(prefix, 0)
    rng = np.random.RandomState(3)
    for k in aux:  # moving statistics that are not the identity
        aux[k] = mx.nd.array(rng.uniform(0.5, 1.5, aux[k].shape) if k.endswith("var")
                             else rng.uniform(-0.2, 0.2, aux[k].shape))
    for k in sorted(args):  # (seeded here, not by the global generator: test order must not
        shape = args[k].shape  # change the values, and so the rounding the checks tolerate)
        if k.endswith("gamma"):
            args[k] = mx.nd.array(rng.uniform(0.5, 1.5, shape))
        elif k.endswith(("beta", "bias")):
            args[k] = mx.nd.array(rng.uniform(-0.3, 0.3, shape))
        else:
            bound = np.sqrt(3.0 / max(1, int(np.prod(shape[1:]))))
            args[k] = mx.nd.array(rng.uniform(-bound, bound, shape))
    return sym, args, aux, {"data": x}


def lstm(mode="lstm", layers=2, bidirectional=True):
    """A fused RNN (sequence-major) over an embedding, with its states as outputs, then a dense
    head on every step."""
    tokens = mx.sym.Variable("tokens")
    emb = mx.sym.Embedding(tokens, input_dim=20, output_dim=8, name="embed")
    state = mx.sym.Variable("state")
    rnn_in = [emb, mx.sym.Variable("rnn_parameters"), state]
    if mode == "lstm":
        rnn_in.append(mx.sym.Variable("state_cell"))
    rnn = mx.sym.RNN(*rnn_in, state_size=6, num_layers=layers, mode=mode,
                     bidirectional=bidirectional, state_outputs=True, name="rnn")
    out = mx.sym.FullyConnected(rnn[0], num_hidden=4, flatten=False, name="head")
    net = mx.sym.Group([out] + [rnn[i] for i in range(1, len(rnn_in) - 1)])
    t, n, d = 5, 3, 2 if bidirectional else 1
    shapes = {"tokens": (t, n), "state": (d * layers, n, 6)}
    if mode == "lstm":
        shapes["state_cell"] = (d * layers, n, 6)
    args, aux = _fill(net, shapes, 4)
    rng = np.random.RandomState(5)
    inputs = {"tokens": rng.randint(0, 20, (t, n)).astype(np.float32)}
    for k in shapes:
        if k != "tokens":
            inputs[k] = rng.uniform(-1, 1, shapes[k]).astype(np.float32)
    return net, args, aux, inputs


def zoo_of_ops():
    """Many of the supported operators in one graph (two data inputs)."""
    data = mx.sym.Variable("data")
    ids = mx.sym.Variable("ids")
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="c1")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = mx.sym.LeakyReLU(x, act_type="leaky", slope=0.1, name="lrelu")
    x = mx.sym.Pooling(x, pool_type="avg", kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                       pooling_convention="full", name="avg")
    x = mx.sym.Deconvolution(x, kernel=(2, 2), stride=(2, 2), num_filter=4, no_bias=False,
                             name="deconv")
    x = mx.sym.LRN(x, nsize=3, name="lrn")
    x = mx.sym.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 1, 1), name="pad")
    x = mx.sym.InstanceNorm(x, name="inorm")
    x = mx.sym.LeakyReLU(x, act_type="elu", slope=0.5, name="elu")
    y = mx.sym.LeakyReLU(x, act_type="prelu", name="prelu")
    x = mx.sym.Concat(x, y, mx.sym.clip(x * 2.0 - 0.5, -1, 1), dim=1, name="cat")
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2),
                       pooling_convention="full", name="maxfull")
    g = mx.sym.Pooling(x, global_pool=True, pool_type="avg", kernel=(1, 1), name="gap")
    x = mx.sym.broadcast_mul(x, mx.sym.sigmoid(g), name="scale")
    x = mx.sym.Reshape(x, shape=(0, 0, -3), name="rs1")            # (N, C, H*W)
    x = mx.sym.transpose(x, axes=(0, 2, 1), name="tr")
    x = mx.sym.LayerNorm(x, name="ln")
    x = mx.sym.softmax(x, axis=-1, temperature=2.0, name="sm")
    parts = mx.sym.SliceChannel(x, num_outputs=2, axis=2, name="split")
    x = mx.sym.elemwise_add(parts[0], mx.sym.exp(parts[1]), name="add")
    x = mx.sym.slice_axis(x, axis=1, begin=1, end=None, name="sa")
    x = mx.sym.mean(x, axis=1, name="mean")                        # (N, C')
    e = mx.sym.Embedding(ids, input_dim=7, output_dim=9, name="emb")  # (N, 9)
    x = mx.sym.Concat(x, e, dim=1, name="cat2")
    x = mx.sym.FullyConnected(x, num_hidden=8, name="fc")
    x = mx.sym.Activation(x, act_type="softrelu", name="softrelu")
    x = mx.sym.Dropout(x, p=0.3, name="drop")
    x = mx.sym.expand_dims(x, axis=1, name="ed")
    x = mx.sym.Reshape(x, shape=(-1, 4, 2), name="rs2")
    x = mx.sym.sum(x, axis=(1,), keepdims=False, name="sum") / 3.0
    x = mx.sym.broadcast_add(mx.sym.slice(x, begin=(None, 0), end=(None, 1), name="sl"),
                             mx.sym.square(x), name="badd")
    net = mx.sym.SoftmaxActivation(x, name="out")
    shapes = {"data": (2, 3, 8, 8), "ids": (2,)}
    args, aux = _fill(net, shapes, 6)
    rng = np.random.RandomState(7)
    inputs = {"data": rng.rand(2, 3, 8, 8).astype(np.float32),
              "ids": np.array([3, 6], np.float32)}
    return net, args, aux, inputs


def neomx_forward(sym, args, aux, inputs, is_train=False):
    """The outputs of neomx's executor, as numpy arrays."""
    ex = sym.simple_bind(mx.cpu(), grad_req="null", **{k: v.shape for k, v in inputs.items()})
    ex.copy_params_from(args, aux, allow_extra_params=True)
    for k, v in inputs.items():
        ex.arg_dict[k][:] = v
    return [o.asnumpy() for o in ex.forward(is_train=is_train)]
