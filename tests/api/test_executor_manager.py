"""mx.executor_manager (the pre-Module data-parallel executors) on neomx's executors: the
devices' gradients on their slices add up to one executor's on the whole batch."""
import numpy as np
import pytest

import neomx as mx
from neomx import executor_manager as em


def network(num_hidden=3):
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=num_hidden, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def data_iter():
    r = np.random.RandomState(0)
    return mx.io.NDArrayIter(r.uniform(-1, 1, (6, 4)).astype(np.float32),
                             r.randint(0, 3, (6,)).astype(np.float32), batch_size=6)


def test_split_input_slice_and_check_arguments():
    assert em._split_input_slice(10, [1, 1, 1, 1]) == [slice(0, 2), slice(2, 4), slice(4, 6),
                                                        slice(6, 10)]
    with pytest.raises(ValueError, match="Too many slices"):
        em._split_input_slice(3, [1, 1, 1, 1])
    x = mx.sym.Variable('x')
    dup = mx.sym.FullyConnected(x, num_hidden=2, name='a') + \
        mx.sym.FullyConnected(x, num_hidden=2, name='a')
    with pytest.raises(ValueError, match='Find duplicated argument name "a_weight"'):
        em._check_arguments(dup)


def test_manager_gradients_match_one_executor():
    net, it = network(), data_iter()
    arg_names = net.list_arguments()
    params = {'fc_weight': mx.nd.array(np.linspace(-1, 1, 12).reshape(3, 4)),
              'fc_bias': mx.nd.array([0.1, -0.2, 0.3])}
    m = em.DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], it, arg_names,
                                       ['fc_weight', 'fc_bias'], [], work_load_list=[1, 2])
    assert m.slices == [slice(0, 2), slice(2, 6)]
    m.set_params(params, {})
    batch = next(iter(it))
    m.load_data_batch(batch)
    m.forward(is_train=True)
    m.backward()
    ex = net.simple_bind(mx.cpu(), data=(6, 4), softmax_label=(6,))
    ex.copy_params_from(params)
    ex.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
    ex.backward()
    for name, grads in zip(m.param_names, m.grad_arrays):
        total = sum(g.asnumpy() for g in grads)
        np.testing.assert_allclose(total, ex.grad_dict[name].asnumpy(), rtol=1e-5, atol=1e-6)
    assert [g.context for g in m.grad_arrays[0]] == [mx.cpu(0), mx.cpu(1)]
    metric = mx.metric.create('acc')
    m.update_metric(metric, batch.label)
    ref = mx.metric.create('acc')
    ref.update(batch.label, ex.outputs)
    assert metric.get() == ref.get()
    out = {k: mx.nd.zeros(v.shape) for k, v in params.items()}
    m.copy_to(out, {})
    np.testing.assert_allclose(out['fc_weight'].asnumpy(), params['fc_weight'].asnumpy())


def test_bucketing_shares_parameters():
    it = data_iter()
    it.default_bucket_key = 4
    net = network()
    m = em.DataParallelExecutorManager(net, [mx.cpu(0)], it, net.list_arguments(),
                                       ['fc_weight', 'fc_bias'], [], sym_gen=lambda key: net)
    batch = next(iter(it))
    batch.bucket_key = 5  # (a bucketing batch carries its shapes, as in MXNet)
    batch.provide_data, batch.provide_label = it.provide_data, it.provide_label
    m.load_data_batch(batch)
    assert m.curr_execgrp is not m.execgrp
    assert m.curr_execgrp.param_arrays[0][0] is m.execgrp.param_arrays[0][0]
    with pytest.raises(NotImplementedError, match="bucketing"):
        m.install_monitor(None)


def test_bad_work_load_and_batch():
    net, it = network(), data_iter()
    with pytest.raises(AssertionError, match="Invalid settings for work load"):
        em.DataParallelExecutorManager(net, [mx.cpu(0)], it, net.list_arguments(),
                                       ['fc_weight', 'fc_bias'], [], work_load_list=[1, 1])
    m = em.DataParallelExecutorManager(net, [mx.cpu(0)], it, net.list_arguments(),
                                       ['fc_weight', 'fc_bias'], [])
    with pytest.raises(AssertionError, match="Batch size miss match. Expected 6, got 2"):
        em._load_general([mx.nd.zeros((2, 4))], m.execgrp.data_arrays)
