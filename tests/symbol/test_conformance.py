"""Symbols as MXNet 1.9.1 makes them: partial shape inference (golden values from
``tools/make_golden_partial_infer.py``): given shapes vs shape attributes, unknown (0)
dimensions completed (or left unknown) by each operator's rule, forwards and backwards."""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import neomx as mx

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" / "infer" / "partial.json")
                    .read_text())
CASES = GOLDEN["cases"]


@pytest.mark.parametrize("rec", CASES, ids=[c["id"] for c in CASES])
def test_partial_inference_matches_mxnet(rec):
    ns = {"mx": mx}
    with mx.name.NameManager():
        with mx.AttrScope():
            exec(rec["code"], ns)
    sym = ns["sym"]
    assert sym.list_arguments() == rec["arguments"]
    kwargs = {k: tuple(v) for k, v in rec["kwargs"].items()}
    method = getattr(sym, rec["method"])
    if "error_message" in rec:
        core = rec["error_message"].split("): ", 1)[-1].rsplit(": ", 1)[-1]
        with pytest.raises(mx.MXNetError, match=None) as ei:
            method(**kwargs)
        assert core in str(ei.value), f"MXNet: {rec['error_message']!r}\nneomx: {ei.value}"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = method(**kwargs)
    got = [None if part is None else [list(s) for s in part] for part in res]
    assert got == rec["result"]


def test_get_children_lists_each_head_nodes_inputs_once():
    # MXNet 1.9.1: a SliceChannel's three outputs share one node: its inputs once
    d = mx.sym.Variable("data")
    sl = mx.sym.SliceChannel(d, num_outputs=3, name="sl")
    assert sl.get_children().list_outputs() == ["data"]
    assert sl[1].get_children().list_outputs() == ["data"]
    g = mx.sym.Group([mx.sym.relu(d, name="r"), mx.sym.FullyConnected(d, num_hidden=2, name="fc")])
    assert g.get_children().list_outputs() == ["data", "data", "fc_weight", "fc_bias"]
    assert d.get_children() is None


@pytest.mark.parametrize("code", ["mx.sym.zeros(())", "mx.sym.zeros((2, 0))", "mx.sym.ones(())",
                                  "mx.sym.full((), 3)", "mx.sym.uniform(shape=())"])
def test_creation_ops_with_unknown_shapes_cannot_be_bound(code):
    # MXNet 1.9.1: () is an unknown shape and 0 an unknown dimension; binding fails
    sym = eval(code, {"mx": mx})
    out = sym.infer_shape_partial()[1][0]
    assert out == () or 0 in out
    with pytest.raises(mx.MXNetError, match="cannot decide shapes"):
        sym.simple_bind(mx.cpu())
    with pytest.raises(mx.MXNetError, match="cannot decide shapes"):
        sym.eval(mx.cpu())


def test_parameters_positionally_in_mxnets_order():
    # MXNet 1.9.1's generated signatures: inputs (aux states included), then parameters
    x = mx.sym.Variable("x")
    with mx.name.NameManager():
        assert mx.sym.clip(x, 0, 1).attr_dict() == {"clip0": {"a_max": "1", "a_min": "0"}}
        assert mx.sym.Dropout(x, 0.3).attr_dict() == {"dropout0": {"p": "0.3"}}
        bn = mx.sym.BatchNorm(x, None, None, None, None, 0.01)
    assert bn.attr_dict()["batchnorm0"] == {"eps": "0.01"}
    from neomx.ops import registry
    assert [p.name for p in registry.get("_full").params] == ["shape", "ctx", "dtype", "value"]
    with pytest.raises(mx.MXNetError, match="too many positional arguments"):
        mx.sym.clip(x, 0, 1, 2)
    with pytest.raises(mx.MXNetError, match="'a_min' given twice"):
        mx.sym.clip(x, 0, a_min=1)


def test_attribute_keywords_as_mxnet():
    # facts from MXNet 1.9.1: hidden keys become __key__ attributes (also on the variables the
    # call makes), __key__ keywords are attributes, ops without parameters keep any key
    x = mx.sym.Variable("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc", lr_mult=2)
    assert fc.attr_dict()["fc_weight"] == {"num_hidden": "3", "__lr_mult__": "2", "lr_mult": "2"}
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc", __layout__="NC")
    assert fc.attr_dict()["fc"] == {"num_hidden": "3", "__layout__": "NC"}
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc", ctx_group="dev1")
    assert fc.attr_dict()["fc_bias"] == {"num_hidden": "3", "__ctx_group__": "dev1",
                                         "ctx_group": "dev1"}
    assert mx.sym.relu(x, name="r", attr={"lr_mult": "3"}).attr_dict() == {
        "r": {"__lr_mult__": "3", "lr_mult": "3"}}
    assert mx.sym.relu(x, name="r", wd_mult=0.1).attr_dict() == {
        "r": {"__wd_mult__": "0.1", "wd_mult": "0.1"}}
    assert mx.sym.relu(x, name="r", bogus=1).attr_dict() == {"r": {"bogus": "1"}}
    assert mx.sym.relu(x, name="r", __bogus__=1).attr_dict() == {"r": {"__bogus__": "1"}}
    with pytest.raises(mx.MXNetError, match="Cannot find argument 'bar'"):
        mx.sym.FullyConnected(x, num_hidden=3, name="fc", attr={"__foo__": "x", "bar": "y"})
    # the attributes survive JSON
    r = mx.sym.load_json(mx.sym.relu(x, name="r", bogus=1, lr_mult=2).tojson())
    assert r.attr_dict() == {"r": {"bogus": "1", "__lr_mult__": "2", "lr_mult": "2"}}


def test_nd_parameters_positionally():
    x = mx.nd.array([[-1, 0.5, 2]])
    np.testing.assert_array_equal(mx.nd.clip(x, 0, 1).asnumpy(), [[0, 0.5, 1]])
    np.testing.assert_array_equal(mx.nd.clip(x, 0, 2).asnumpy(), [[0, 0.5, 2]])  # not cached as 0, 1
    np.testing.assert_array_equal(mx.nd.clip(x, -1, 0).asnumpy(), [[-1, 0, 0]])
    np.testing.assert_array_equal(mx.nd.Dropout(x, 0.5).asnumpy(), x.asnumpy())  # predict mode
    with pytest.raises(mx.MXNetError, match="too many positional arguments"):
        mx.nd.clip(x, 0, 1, 2)


def test_prelu_gamma_starts_at_a_quarter():
    # MXNet 1.9.1: the gamma variable LeakyReLU(act_type='prelu') makes carries
    # __init__ = ["Constant", {"value": 0.25}], which every initializer honours
    net = mx.sym.LeakyReLU(mx.sym.Variable("x"), act_type="prelu", name="prelu")
    assert net.attr_dict()["prelu_gamma"] == {"__init__": '["Constant", {"value": 0.25}]',
                                              "act_type": "prelu"}
    assert '"__init__": "[\\"Constant\\", {\\"value\\": 0.25}]"' in net.tojson()
    mod = mx.mod.Module(net, data_names=["x"], label_names=None)
    mod.bind(data_shapes=[("x", (2, 3))])
    for init in (mx.init.Uniform(0.1), mx.init.Xavier(), mx.init.Zero()):
        mod.init_params(init, force_init=True)
        np.testing.assert_array_equal(mod.get_params()[0]["prelu_gamma"].asnumpy(), [0.25] * 3)
    assert "__init__" not in mx.sym.LeakyReLU(mx.sym.Variable("x"), act_type="leaky").attr_dict().get(
        "leakyrelu0_gamma", {})


def test_nd_creation_honours_out():
    o = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=o) is o
    np.testing.assert_array_equal(o.asnumpy(), np.ones((2, 2)))
    assert mx.nd.zeros((2, 2), out=o) is o and not o.asnumpy().any()
    z = mx.nd.zeros((2, 2), stype="csr")  # (sparse storage: issue 16)
    assert z.stype == "csr" and not z.asnumpy().any()


@pytest.mark.parametrize("call", [
    lambda x: mx.nd.transpose(x), lambda x: mx.nd.Reshape(x, shape=(3, 2)),
    lambda x: mx.nd.Flatten(x), lambda x: mx.nd.expand_dims(x, axis=0),
    lambda x: mx.nd.slice_axis(x, axis=1, begin=0, end=2), lambda x: mx.nd.BlockGrad(x),
    lambda x: mx.nd.squeeze(mx.nd.expand_dims(x, axis=0)),
    lambda x: mx.nd.split(x, num_outputs=3, axis=1)[0], lambda x: x.T])
def test_operator_results_are_new_arrays(call):
    # MXNet 1.9.1: an operator's result never shares memory with its input (x.reshape() and
    # x[i] are the views); neomx's forwards may return views, the imperative path copies them
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    for _ in range(2):  # the general path, then the cached plan
        y = call(x)
        y[:] = 99
        np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(2, 3))
    v = x.reshape((3, 2))
    v[:] = 7  # a view, as in MXNet
    assert (x.asnumpy() == 7).all()


def test_split_v2_and_histogram_wrappers():
    # values from MXNet 1.9.1
    with mx.name.NameManager():
        _split_v2_and_histogram()


def _split_v2_and_histogram():
    x = mx.nd.array(np.arange(12).reshape(3, 4))
    parts = mx.nd.split_v2(x, 2, axis=1)
    assert [p.asnumpy().tolist() for p in parts] == [[[0, 1], [4, 5], [8, 9]], [[2, 3], [6, 7], [10, 11]]]
    assert [p.shape for p in mx.nd.split_v2(x, (1, 3), axis=1)] == [(3, 1), (3, 2), (3, 1)]
    assert [p.shape for p in mx.nd.split_v2(x, 3, axis=0, squeeze_axis=True)] == [(4,)] * 3
    assert [p.shape for p in x.split_v2(2, axis=1)] == [(3, 2), (3, 2)]
    with pytest.raises(ValueError, match="equal division"):
        mx.nd.split_v2(x, 3, axis=1)
    counts, edges = mx.nd.histogram(x, bins=3, range=(0, 12))
    assert counts.asnumpy().tolist() == [4, 4, 4] and edges.asnumpy().tolist() == [0, 4, 8, 12]
    with pytest.warns(UserWarning, match="range is not specified"):
        counts, edges = mx.nd.histogram(x, bins=4)
    assert counts.asnumpy().tolist() == [3, 3, 3, 3]
    assert edges.asnumpy().tolist() == [0.0, 2.75, 5.5, 8.25, 11.0]
    counts, _ = mx.nd.histogram(x, bins=mx.nd.array([0, 5, 12]))
    assert counts.asnumpy().tolist() == [5, 7]
    s = mx.sym.split_v2(mx.sym.Variable("x"), 2, axis=1)
    assert s.list_outputs() == ["_split_v20_output0", "_split_v20_output1"]
    assert s.infer_shape(x=(3, 4))[1] == [(3, 2), (3, 2)]
    h = mx.sym.histogram(mx.sym.Variable("x"), bins=3, range=(0, 12))
    assert h.list_outputs() == ["_histogram0_output0", "_histogram0_output1"]
    assert [o.asnumpy().tolist() for o in h.eval(mx.cpu(), x=x)] == [[4, 4, 4], [0, 4, 8, 12]]
    with pytest.raises(ValueError, match="null range"):
        mx.sym.histogram(mx.sym.Variable("x"), bins=3)


def test_symbol_name_of_a_multi_output_node():
    # MXNet 1.9.1: the node's name when every output comes from one node, else None
    x = mx.sym.Variable("x")
    s = mx.sym.split(x, num_outputs=2, name="sp")
    assert s.name == "sp" and mx.sym.Group([s[0], s[1]]).name == "sp"
    assert mx.sym.Group([x, mx.sym.relu(x, name="r")]).name is None


def test_mx_random_has_mxnets_samplers():
    for name in ("seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
                 "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"):
        assert callable(getattr(mx.random, name)), name
    mx.random.seed(3)
    a = mx.random.randn(2, 3).asnumpy()
    mx.random.seed(3)
    np.testing.assert_array_equal(mx.random.randn(2, 3).asnumpy(), a)


def test_sym_hypot_as_mxnet():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    with mx.name.NameManager():
        s = mx.sym.hypot(x, y)
        t = mx.sym.hypot(x, 3)
        u = mx.sym.hypot(4, y)
    assert (s.name, t.name, u.name) == ("_hypot0", "_hypotscalar0", "_hypotscalar1")
    np.testing.assert_allclose(s.eval(mx.cpu(), x=mx.nd.array([3.0]), y=mx.nd.array([4.0]))[0].asnumpy(), [5])
    np.testing.assert_allclose(u.eval(mx.cpu(), y=mx.nd.array([4.0]))[0].asnumpy(), [32 ** 0.5], rtol=1e-6)
    assert mx.sym.hypot(3, 4) == 5.0
