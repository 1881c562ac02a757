"""gluon.rnn's fused layers (RNN, LSTM, GRU) against MXNet 1.9.1: parameter and structural
names, outputs, states and gradients imperative and hybridized, hybridized graphs' JSON
(records from tools/make_golden_gluon_rnn.py, whose cases this test runs with neomx); then
sequence lengths, state clipping, deferred shapes, saving and MXNet's errors."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

ROOT = Path(__file__).resolve().parent.parent.parent
GOLDEN = ROOT / "tests" / "golden" / "gluon_rnn"
_spec = importlib.util.spec_from_file_location("make_golden_gluon_rnn",
                                               ROOT / "tools" / "make_golden_gluon_rnn.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
REC = json.loads((GOLDEN / "records.json").read_text())
ARR = dict(np.load(GOLDEN / "arrays.npz"))
LAYER_CASES = sorted(k for k in gen.cases() if k.startswith("layer/"))


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def check_case(name, hybrid):
    block, outs, xgrad, grads = gen.run(mx, gen.cases()[name], hybrid)
    rec = REC[name]
    assert [[k, list(p.shape)] for k, p in block.collect_params().items()] == rec["params"]
    assert sorted(block._collect_params_with_prefix()) == rec["structural"]
    assert len(outs) == rec["n_out"]
    for i, o in enumerate(outs):
        close(o.asnumpy(), ARR[f"{name}/out{i}"])
    if xgrad is not None:
        close(xgrad.asnumpy(), ARR[f"{name}/grad/x"])
        assert sorted(grads) == sorted(k[len(name) + 6:] for k in ARR
                                       if k.startswith(name + "/grad/") and k[-2:] != "/x")
        for k, g in grads.items():
            close(g.asnumpy(), ARR[f"{name}/grad/{k}"])


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybrid"])
@pytest.mark.parametrize("name", LAYER_CASES)
def test_layer_against_mxnet(name, hybrid):
    check_case(name, hybrid)


@pytest.mark.parametrize("name", gen.GRAPH_LAYERS)
def test_hybridized_graph_json(name):
    assert gen.symbol_json(mx, "layer/" + name) == REC["symbols"]["layer/" + name]


def test_repr_and_state_info():
    layer = mx.gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, dropout=0.5, input_size=3)
    assert repr(layer) == "LSTM(3 -> 4, TNC, num_layers=2, dropout=0.5, bidirectional)"
    assert repr(mx.gluon.rnn.GRU(5)) == "GRU(None -> 5, TNC)"
    assert mx.gluon.rnn.LSTM(4, projection_size=2, num_layers=3).state_info(7) == [
        {"shape": (3, 7, 2), "__layout__": "LNC", "dtype": "float32"},
        {"shape": (3, 7, 4), "__layout__": "LNC", "dtype": "float32"}]
    states = mx.gluon.rnn.GRU(3, prefix="g_").begin_state(2, func=mx.sym.var)
    assert [s.name for s in states] == ["g_h0_0"]


def _unfused_reference(layer, x, lens):
    """The layer's unfused cells unrolled with valid_length (MXNet's reference semantics)."""
    stack = layer._unfuse()
    out, states = stack.unroll(x.shape[0], x, layout="TNC", merge_outputs=True,
                               valid_length=lens)
    return out, states


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_use_sequence_length_matches_cells(mode):
    cls = {"lstm": mx.gluon.rnn.LSTM, "gru": mx.gluon.rnn.GRU,
           "rnn_tanh": lambda *a, **k: mx.gluon.rnn.RNN(*a, activation="tanh", **k)}[mode]
    layer = cls(3, num_layers=2, bidirectional=True, input_size=4, use_sequence_length=True,
                prefix="sl_")
    layer.initialize()
    gen.fill(layer)
    x = mx.nd.array(gen._rand("x", (5, 3, 4)))
    lens = mx.nd.array([5, 2, 3])
    out, states = layer(x, layer.begin_state(3), sequence_length=lens)
    ref_out, ref_states = _unfused_reference(layer, x, lens)
    close(out.asnumpy(), ref_out.asnumpy())
    n = 2 if mode == "lstm" else 1
    for k in range(n):  # cells order states per layer and direction: h, c, h, c, ...
        ref = np.stack([s.asnumpy() for s in ref_states[k::n]])
        close(states[k].asnumpy(), ref)
    layer.hybridize()
    out2, _ = layer(x, layer.begin_state(3), sequence_length=lens)
    close(out2.asnumpy(), out.asnumpy())


def test_state_clip_bounds_cell_state():
    kw = dict(input_size=3, prefix="c_", i2h_bias_initializer=mx.init.Constant(5.0))
    clipped = mx.gluon.rnn.LSTM(4, state_clip_min=-0.5, state_clip_max=0.5, **kw)
    plain = mx.gluon.rnn.LSTM(4, **kw)
    x = mx.nd.ones((6, 2, 3))
    for layer in (clipped, plain):
        layer.initialize()
    _, (_, c_clip) = clipped(x, clipped.begin_state(2))
    _, (_, c_plain) = plain(x, plain.begin_state(2))
    assert np.abs(c_clip.asnumpy()).max() <= 0.5 + 1e-6
    assert np.abs(c_plain.asnumpy()).max() > 1.0


def test_deferred_input_size_under_imperative_parent():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(6, flatten=False), mx.gluon.rnn.LSTM(3, num_layers=2))
    net.initialize()
    assert net(mx.nd.ones((4, 2, 5))).shape == (4, 2, 3)
    assert net[1].l0_i2h_weight.shape == (12, 6)


def test_deferred_input_size_under_hybridized_parent():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(6, flatten=False), mx.gluon.rnn.LSTM(3, num_layers=2))
    net.initialize()
    net.hybridize()
    assert net(mx.nd.ones((4, 2, 5))).shape == (4, 2, 3)


def test_save_load_parameters_structural_names(tmp_path):
    layer = mx.gluon.rnn.GRU(3, bidirectional=True, input_size=2, prefix="a_")
    layer.initialize()
    gen.fill(layer)
    layer.save_parameters(str(tmp_path / "g.params"))
    assert sorted(mx.nd.load(str(tmp_path / "g.params"))) == \
        sorted(REC["layer/gru_ntc"]["structural"])[:8]
    other = mx.gluon.rnn.GRU(3, bidirectional=True, input_size=2, prefix="b_")
    other.load_parameters(str(tmp_path / "g.params"))
    close(other.l0_i2h_weight.data().asnumpy(), layer.l0_i2h_weight.data().asnumpy())


def test_unfuse_matches_layer():
    layer = mx.gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=4, prefix="u_")
    layer.initialize()
    gen.fill(layer)
    x = mx.nd.array(gen._rand("x", (4, 2, 4)))
    ref, _ = layer._unfuse().unroll(4, x, layout="TNC", merge_outputs=True)
    close(layer(x).asnumpy(), ref.asnumpy())


def test_errors():
    with pytest.raises(AssertionError, match=r"Invalid layout NCT; must be one of \['TNC' or "
                                             r"'NTC'\]"):
        mx.gluon.rnn.LSTM(3, layout="NCT")
    layer = mx.gluon.rnn.LSTM(4, input_size=3)
    layer.initialize()
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting "
                                         r"\(1, 2, 4\), got \(1, 3, 4\)."):
        layer(mx.nd.ones((5, 2, 3)), [mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 3, 4))])
