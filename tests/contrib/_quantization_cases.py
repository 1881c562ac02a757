"""Scenarios of ``mx.contrib.quantization`` on whole models, written once against the ``mx``
they are given: ``tools/make_golden_quantization.py`` runs them in MXNet 1.9.1 and records the
results (tests/golden/quantization/graphs.json and ops.npz); tests/contrib/
test_quantization_model.py runs them with neomx and compares. Only numpy and the given ``mx``
are used here (no neomx, no mxnet import).
"""
import numpy as np


def lenet(mx, pool1='avg', num_hidden=32, **conv):
    """A LeNet; ``pool1`` is the second pooling's type, ``num_hidden`` the first fully
    connected layer's width, ``conv`` more arguments of both convolutions."""
    d = mx.sym.var('data')
    c0 = mx.sym.Convolution(d, kernel=(5, 5), num_filter=8, name='conv0', **conv)
    a0 = mx.sym.Activation(c0, act_type='relu', name='relu0')
    p0 = mx.sym.Pooling(a0, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool0')
    c1 = mx.sym.Convolution(p0, kernel=(5, 5), num_filter=16, name='conv1', **conv)
    a1 = mx.sym.Activation(c1, act_type='relu', name='relu1')
    p1 = mx.sym.Pooling(a1, kernel=(2, 2), stride=(2, 2), pool_type=pool1, name='pool1')
    f = mx.sym.Flatten(p1, name='flat')
    f0 = mx.sym.FullyConnected(f, num_hidden=num_hidden, name='fc0')
    a2 = mx.sym.Activation(f0, act_type='relu', name='relu2')
    f1 = mx.sym.FullyConnected(a2, num_hidden=10, name='fc1')
    return mx.sym.SoftmaxOutput(f1, name='softmax')


def mlp(mx):
    d = mx.sym.var('data')
    f0 = mx.sym.FullyConnected(d, num_hidden=16, name='fc0')
    a0 = mx.sym.Activation(f0, act_type='relu', name='relu0')
    f1 = mx.sym.FullyConnected(a0, num_hidden=16, name='fc1')
    a1 = mx.sym.Activation(f1, act_type='tanh', name='tanh0')
    f2 = mx.sym.FullyConnected(a1, num_hidden=8, name='fc2')
    e = mx.sym.elemwise_add(f2, f2, name='add0')
    c = mx.sym.concat(e, f2, dim=1, name='cat0')
    f3 = mx.sym.FullyConnected(c, num_hidden=4, name='fc3', no_bias=True)
    return mx.sym.SoftmaxOutput(f3, name='softmax')


def tail(mx):
    """Quantizable ops before the first and after the last conv/FC ('smart' keeps them fp32)."""
    d = mx.sym.var('data')
    p0 = mx.sym.Pooling(d, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool0')
    c0 = mx.sym.Convolution(p0, kernel=(3, 3), num_filter=4, name='conv0')
    a0 = mx.sym.Activation(c0, act_type='relu', name='relu0')
    f = mx.sym.Flatten(a0, name='flat')
    f0 = mx.sym.FullyConnected(f, num_hidden=8, name='fc0')
    return mx.sym.Activation(f0, act_type='relu', name='relu1')


def bn(mx):
    """Convolution, BatchNorm (quantized between two 'must' ops, with its own calibrated
    range), relu, fully connected."""
    d = mx.sym.var('data')
    c0 = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, name='conv0')
    b0 = mx.sym.BatchNorm(c0, fix_gamma=False, name='bn0')
    a0 = mx.sym.Activation(b0, act_type='relu', name='relu0')
    f0 = mx.sym.FullyConnected(a0, num_hidden=5, name='fc0')
    return mx.sym.SoftmaxOutput(f0, name='softmax')


NETS = {'lenet': lenet, 'mlp': mlp, 'tail': tail, 'bn': bn}


def _labelled(sym):
    return 'softmax_label' in sym.list_arguments()


def quantize(mx, sym, args, auxs, calib_mode='none', data=None, **kwargs):
    """``quantize_model`` on the CPU: uncalibrated with ``kwargs``, or calibrated
    (``calib_mode`` 'naive' or 'entropy', quantized_dtype 'auto') on the float32 ``data`` in
    batches of 4 (with zero labels where the model has a softmax_label)."""
    q = mx.contrib.quantization
    if calib_mode == 'none':
        return q.quantize_model(sym, args, auxs, ctx=mx.cpu(), calib_mode='none', **kwargs)
    labelled = _labelled(sym)
    it = mx.io.NDArrayIter(data, np.zeros(len(data), 'f') if labelled else None, batch_size=4)
    return q.quantize_model(sym, args, auxs, ctx=mx.cpu(), calib_mode=calib_mode,
                            calib_data=it, quantized_dtype='auto',
                            label_names=('softmax_label',) if labelled else None, **kwargs)


def int8_forward(mx, qsym, qarg, qaux, data):
    """The quantized model's output on ``data`` (one inference batch), as numpy."""
    labelled = _labelled(qsym)
    mod = mx.mod.Module(qsym, label_names=('softmax_label',) if labelled else None)
    mod.bind(for_training=False, data_shapes=[('data', data.shape)],
             label_shapes=[('softmax_label', (len(data),))] if labelled else None)
    mod.set_params(qarg, qaux)
    label = [mx.nd.zeros(len(data))] if labelled else None
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], label), is_train=False)
    return mod.get_outputs()[0].asnumpy()
