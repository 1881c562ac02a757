"""Shapes decided by inference reach the kernels (MXNet fills the output it allocated):
creation ops with unknown (0) dims in their shape parameter, Reshape's backward inference of
one unknown input dim; mx.sym.zeros/ones/full name and dtype as MXNet 1.9.1 writes them."""
import json

import numpy as np

import neomx as mx


def test_zeros_with_unknown_dims_run_with_the_inferred_shape():
    x = mx.sym.var("x")
    out = mx.sym.FullyConnected(x, num_hidden=4, name="fc") + mx.sym.zeros((0, 4))
    ex = out.bind(mx.cpu(), {"x": mx.nd.ones((3, 5)), "fc_weight": mx.nd.ones((4, 5)),
                             "fc_bias": mx.nd.zeros(4)})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), np.full((3, 4), 5.0))


def test_reshape_infers_one_unknown_input_dim_backward():
    # (checked against the oracle: MXNet's ReverseReshapeInferShape)
    r = mx.sym.Reshape(mx.sym.var("a", shape=(2, 0, 3)), shape=(0, -1))
    args, outs, _ = (r + mx.sym.var("b")).infer_shape_partial(b=(2, 12))
    assert args == [(2, 4, 3), (2, 12)] and outs == [(2, 12)]
    r = mx.sym.Reshape(mx.sym.var("x", shape=(0, 6)), shape=(-1, 3, 2))
    args, outs, _ = mx.sym.broadcast_add(r, mx.sym.var("y")).infer_shape_partial(y=(4, 3, 2))
    assert args == [(0, 6), (4, 3, 2)] and outs == [(0, 3, 2)]  # broadcast: no backward


def test_sym_creation_names_and_dtype():
    z = mx.sym.zeros((0, 4), name="z")
    node = json.loads(z.tojson())["nodes"][0]
    assert node == {"op": "_zeros", "name": "z", "attrs": {"dtype": "float32", "shape": "(0, 4)"},
                    "inputs": []}
    with mx.name.NameManager():
        assert mx.sym.zeros((2, 4)).name == "_zeros0"
        assert mx.sym.ones((2, 4)).name == "_ones0"
    assert mx.sym.full((2,), 3.0, name="f").attr_dict()["f"]["value"] == "3.0"
    assert mx.nd.zeros((2, 3), __layout__="NC").shape == (2, 3)
