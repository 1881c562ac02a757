"""Executor.backward's head gradients: an empty list means none given (MXNet's loss heads)."""
import numpy as np
import pytest

import neomx as mx


def test_empty_head_gradient_list_on_a_loss_head():
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3,
                                                     name="fc"), name="sm")
    ex = sym.simple_bind(mx.cpu(), data=(2, 4))
    ex.arg_dict["data"][:] = 1
    ex.forward(is_train=True)
    ex.backward([])
    assert np.abs(ex.grad_dict["fc_weight"].asnumpy()).sum() > 0


def test_empty_list_on_a_head_that_needs_a_gradient_raises():
    ex = (mx.sym.var("x") * 2).simple_bind(mx.cpu(), x=(2,))
    ex.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match="head_gradient is required"):
        ex.backward([])
