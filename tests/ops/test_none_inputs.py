"""A positional input given as None is "not given", as MXNet's generated wrappers treat it:
``FullyConnected(x, w, None, no_bias=True)`` (what Gluon's Dense(use_bias=False) calls)."""
import numpy as np
import pytest

import neomx as mx


def test_nd_none_positional_input_is_skipped():
    x, w = mx.nd.ones((2, 3)), mx.nd.ones((4, 3))
    y = mx.nd.FullyConnected(x, w, None, no_bias=True, num_hidden=4)
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 4), 3.0))
    with pytest.raises(mx.base.MXNetError, match="missing input"):
        mx.nd.FullyConnected(x, w, None, num_hidden=4)
    with pytest.raises(mx.base.MXNetError, match="given twice"):
        mx.nd.FullyConnected(x, None, None, weight=w, data=x, no_bias=True, num_hidden=4)


def test_sym_none_positional_input_is_skipped():
    s = mx.sym.FullyConnected(mx.sym.var("x"), mx.sym.var("w"), None, no_bias=True,
                              num_hidden=4, name="fc")
    assert s.list_arguments() == ["x", "w"]
    s = mx.sym.FullyConnected(mx.sym.var("x"), None, num_hidden=4, name="fc")
    assert s.list_arguments() == ["x", "fc_weight", "fc_bias"]


def test_variadic_none_inputs_dropped():
    a = mx.nd.ones((2,))
    assert mx.nd.add_n(a, None, a).asnumpy().tolist() == [2, 2]


def test_parameterless_ops_ignore_keywords():
    """MXNet's mx.nd ignores keywords an operator without parameters does not know (its own
    CosineEmbeddingLoss passes axis= to broadcast_maximum); ops with parameters still raise."""
    a = mx.nd.ones((2, 3))
    assert mx.nd.broadcast_maximum(a, a, axis=1).shape == (2, 3)
    assert mx.nd.relu(a, foo=3).shape == (2, 3)
    with pytest.raises(mx.base.MXNetError, match="Cannot find argument 'foo'"):
        mx.nd.sum(a, foo=3)
    s = mx.sym.broadcast_maximum(mx.sym.var("a"), mx.sym.var("b"), axis=1)
    assert s.attr("axis") == "1"


def test_none_inputs_after_the_same_call_form_was_cached():
    a = mx.nd.ones((2,))
    mx.nd.add_n(a, a, a)  # caches the parsed form of three positional inputs
    assert mx.nd.add_n(a, None, a).asnumpy().tolist() == [2, 2]
    x, w = mx.nd.ones((2, 3)), mx.nd.ones((4, 3))
    mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=4)
    assert mx.nd.FullyConnected(x, w, None, no_bias=True, num_hidden=4).shape == (2, 4)
