"""``simple_bind``'s ``shared_buffer`` (memory shared by a Module's executors) and ``group2ctx``
(model-parallel placement), as MXNet 1.9.1 does them (facts checked with the oracle: buffer
keys ``name`` and ``grad of name``, reshaped views of a large enough buffer, re-allocation of a
smaller one; arrays and outputs on their ``ctx_group``'s context)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import neomx as mx


def fc_net():
    return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")


def test_shared_buffer_shares_data_arrays_between_executors(caplog):
    net = fc_net()
    params = ["fc_weight", "fc_bias"]
    buf = {}
    e1 = net.simple_bind(mx.cpu(), data=(4, 5), shared_buffer=buf, shared_arg_names=params)
    assert sorted((k, v.shape) for k, v in buf.items()) == [("data", (4, 5)), ("grad of data", (4, 5))]
    e2 = net.simple_bind(mx.cpu(), data=(2, 5), shared_buffer=buf, shared_exec=e1,
                         shared_arg_names=params)
    e2.arg_dict["data"][:] = 7  # a view of e1's (larger) data array
    np.testing.assert_array_equal(e1.arg_dict["data"].asnumpy()[:, 0], [7, 7, 0, 0])
    assert e2.arg_dict["fc_weight"] is e1.arg_dict["fc_weight"]
    assert sorted(buf) == ["data", "grad of data"] and buf["data"].shape == (4, 5)
    with caplog.at_level(logging.WARNING):
        e3 = net.simple_bind(mx.cpu(), data=(8, 5), shared_buffer=buf, shared_exec=e1,
                             shared_arg_names=params)
    assert "larger than already allocated" in caplog.text
    assert buf["data"].shape == (8, 5) and buf["data"] is e3.arg_dict["data"]
    e3.arg_dict["data"][:] = 9  # a new array: e1's is untouched
    np.testing.assert_array_equal(e1.arg_dict["data"].asnumpy()[:, 0], [7, 7, 0, 0])
    # the executors still compute
    e2.arg_dict["fc_weight"][:] = 1
    e2.forward()
    np.testing.assert_allclose(e2.outputs[0].asnumpy(), np.full((2, 3), 35.0))


def test_shared_buffer_must_be_a_dict():
    with pytest.raises(ValueError, match="shared_buffer"):
        fc_net().simple_bind(mx.cpu(), data=(2, 5), shared_buffer=[1])


def model_parallel():
    with mx.AttrScope(ctx_group="g1"):
        a = mx.sym.Variable("a")
        b = a * 2
    with mx.AttrScope(ctx_group="g2"):
        c = mx.sym.Variable("c")
        out = b + c
    return out


def test_group2ctx_places_arrays_and_outputs():
    ex = model_parallel().simple_bind(mx.cpu(0), a=(2,), c=(2,),
                                      group2ctx={"g1": mx.cpu(1), "g2": mx.cpu(2)})
    assert [x.context for x in ex.arg_arrays] == [mx.cpu(1), mx.cpu(2)]
    assert [g.context for g in ex.grad_arrays] == [mx.cpu(1), mx.cpu(2)]
    assert [o.context for o in ex.outputs] == [mx.cpu(2)]
    ex.arg_dict["a"][:] = 1
    ex.arg_dict["c"][:] = 3
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [5, 5])
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [2, 2])
    np.testing.assert_array_equal(ex.grad_dict["c"].asnumpy(), [1, 1])
    # without group2ctx everything is on the bind context
    ex0 = model_parallel().simple_bind(mx.cpu(0), a=(2,), c=(2,))
    assert [x.context for x in ex0.arg_arrays] == [mx.cpu(0), mx.cpu(0)]


def test_group2ctx_is_checked():
    with pytest.raises(TypeError, match="group2ctx"):
        model_parallel().simple_bind(mx.cpu(), a=(2,), c=(2,), group2ctx={"g1": "cpu(1)"})


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a CUDA device")
def test_group2ctx_splits_a_graph_between_cpu_and_gpu():
    ex = model_parallel().simple_bind(mx.cpu(0), a=(2,), c=(2,),
                                      group2ctx={"g1": mx.cpu(0), "g2": mx.gpu(0)})
    assert ex.arg_dict["c"].context == mx.gpu(0) and ex.outputs[0].context == mx.gpu(0)
    ex.arg_dict["a"][:] = 1
    ex.arg_dict["c"][:] = 3
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2,), ctx=mx.gpu(0)))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [5, 5])
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), [2, 2])
    assert "on cuda" in ex.debug_str()


def test_reshape_shares_memory_as_mxnet():
    ex = fc_net().simple_bind(mx.cpu(), data=(4, 5))
    ex.arg_dict["data"][:] = 1
    ex2 = ex.reshape(data=(2, 5))
    ex2.arg_dict["data"][:] = 7  # a view of the first two rows
    np.testing.assert_array_equal(ex.arg_dict["data"].asnumpy()[:, 0], [7, 7, 1, 1])
    ex2.arg_dict["fc_weight"][:] = 3  # unchanged shape: the same array
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy()[0, :2], [3, 3])
    ex2.grad_dict["data"][:] = 5
    np.testing.assert_array_equal(ex.grad_dict["data"].asnumpy()[:, 0], [5, 5, 0, 0])
    for kwargs in ({"data": (8, 5)}, {"data": (4, 6)}, {"partial_shaping": True, "data": (4, 6)}):
        with pytest.raises(mx.MXNetError, match="New shape of arg: data is larger than original"):
            ex.reshape(**kwargs)
    ex3 = ex.reshape(allow_up_sizing=True, data=(8, 5))
    ex3.arg_dict["data"][:] = 9  # new memory
    np.testing.assert_array_equal(ex.arg_dict["data"].asnumpy()[:, 0], [7, 7, 1, 1])
    with pytest.raises(mx.MXNetError, match="Shape of unspecifie arg: fc_weight changed"):
        ex.reshape(data=(2, 4))
    ex4 = ex.reshape(partial_shaping=True, data=(2, 4))
    assert ex4.arg_dict["fc_weight"].shape == (3, 4)
    ex4.arg_dict["fc_weight"][:] = 11
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy().ravel()[:14], [11] * 12 + [3, 3])
    ex.forward()
    ex2.forward()
    assert ex.outputs[0].shape == (4, 3) and ex2.outputs[0].shape == (2, 3)


def test_reshape_resizes_auxiliary_states_with_partial_shaping():
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    ex = bn.simple_bind(mx.cpu(), data=(4, 5, 2))
    ex.aux_dict["bn_moving_var"][:] = 2
    ex2 = ex.reshape(partial_shaping=True, data=(4, 3, 2))
    assert ex2.aux_dict["bn_moving_var"].shape == (3,)
    ex2.aux_dict["bn_moving_var"][:] = 4
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_var"].asnumpy(), [4, 4, 4, 2, 2])
