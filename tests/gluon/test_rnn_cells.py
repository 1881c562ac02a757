"""gluon.rnn's cells against MXNet 1.9.1: unrolled and stepped outputs, states and gradients
(with valid_length, stacks, residual/dropout/zoneout modifiers, bidirectional), imperative and
hybridized, and the JSON of cells unrolled on Symbols (records from
tools/make_golden_gluon_rnn.py, whose cases this test runs with neomx); then counters,
begin_state names and MXNet's errors."""
import numpy as np
import pytest

import neomx as mx

from .test_rnn_layers import GOLDEN, REC, check_case, gen

CELL_CASES = sorted(k for k in gen.cases() if k.startswith("cell/"))


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybrid"])
@pytest.mark.parametrize("name", CELL_CASES)
def test_cell_against_mxnet(name, hybrid):
    if hybrid and name == "cell/seq":
        pytest.skip("SequentialRNNCell is not a HybridBlock")
    check_case(name, hybrid)


@pytest.mark.parametrize("name", sorted(gen.SYMBOLS))
def test_unrolled_symbol_json(name):
    assert gen.symbol_json(mx, name) == REC["symbols"][name]


def test_begin_state_names_and_counters():
    cell = mx.gluon.rnn.LSTMCell(3, prefix="c_")
    states = cell.begin_state(func=mx.sym.var)
    assert [s.name for s in states] == ["c_begin_state_0", "c_begin_state_1"]
    assert [s.name for s in cell.begin_state(func=mx.sym.zeros)] == \
        ["c_begin_state_2", "c_begin_state_3"]
    nd_states = cell.begin_state(batch_size=2)
    assert [s.shape for s in nd_states] == [(2, 3), (2, 3)]
    out, _ = cell(mx.sym.var("x"), states)
    assert out.name == "c_t0_out"
    cell.reset()
    out, _ = cell(mx.sym.var("x"), states)
    assert out.name == "c_t0_out"
    assert cell.state_info(4) == [{"shape": (4, 3), "__layout__": "NC"}] * 2


def test_reprs():
    assert repr(mx.gluon.rnn.RNNCell(4, input_size=3)) == "RNNCell(3 -> 4, tanh)"
    assert repr(mx.gluon.rnn.LSTMCell(4)) == "LSTMCell(None -> 16)"
    assert repr(mx.gluon.rnn.DropoutCell(0.5)) == "DropoutCell(rate=0.5, axes=())"
    z = mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.GRUCell(2, input_size=1), 0.1, 0.2)
    assert repr(z) == "ZoneoutCell(p_out=0.1, p_state=0.2, GRUCell(1 -> 6))"


def test_modifier_and_bidirectional_errors():
    base = mx.gluon.rnn.LSTMCell(3)
    mx.gluon.rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="After applying modifier cells"):
        base.begin_state()
    with pytest.raises(AssertionError, match="already modified"):
        mx.gluon.rnn.ZoneoutCell(base)
    bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2), mx.gluon.rnn.GRUCell(2))
    with pytest.raises(NotImplementedError, match="Bidirectional cannot be stepped"):
        bi(mx.nd.ones((1, 2)), [])
    with pytest.raises(AssertionError, match="doesn't support zoneout"):
        mx.gluon.rnn.ZoneoutCell(bi)
    with pytest.raises(AssertionError, match="rate must be a number"):
        mx.gluon.rnn.DropoutCell("0.5")


def test_dropout_cell_trains_and_predicts():
    cell = mx.gluon.rnn.DropoutCell(0.5)
    x = mx.nd.ones((4, 6, 5))
    out, _ = cell.unroll(6, x, merge_outputs=True)
    np.testing.assert_array_equal(out.asnumpy(), x.asnumpy())
    with mx.autograd.record():
        out, _ = cell.unroll(6, x, merge_outputs=True)
    assert set(np.unique(out.asnumpy())) <= {0.0, 2.0}
