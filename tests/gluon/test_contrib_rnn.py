"""gluon.contrib.rnn against MXNet 1.9.1: convolutional RNN/LSTM/GRU cells (1D/2D/3D),
LSTMPCell, VariationalDropoutCell and dynamic_unroll -- parameter and structural names,
outputs, states and gradients, imperative and hybridized, JSON of unrolled symbols, reprs and
state_info (records from tools/make_golden_gluon_contrib_rnn.py, whose cases this test runs
with neomx); then channels-last layouts, variational masks and MXNet's errors."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

ROOT = Path(__file__).resolve().parent.parent.parent
GOLDEN = ROOT / "tests" / "golden" / "gluon_contrib_rnn"
_spec = importlib.util.spec_from_file_location("make_golden_gluon_contrib_rnn",
                                               ROOT / "tools" / "make_golden_gluon_contrib_rnn.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
REC = json.loads((GOLDEN / "records.json").read_text())
ARR = dict(np.load(GOLDEN / "arrays.npz"))
crnn = mx.gluon.contrib.rnn


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybrid"])
@pytest.mark.parametrize("name", sorted(gen.cases()))
def test_cell_against_mxnet(name, hybrid):
    block, outs, xgrad, grads = gen.run(mx, gen.cases()[name], hybrid)
    rec = REC[name]
    assert [[k, list(p.shape)] for k, p in block.collect_params().items()] == rec["params"]
    assert sorted(block._collect_params_with_prefix()) == rec["structural"]
    assert len(outs) == rec["n_out"]
    for i, o in enumerate(outs):
        close(o.asnumpy(), ARR[f"{name}/out{i}"])
    close(xgrad.asnumpy(), ARR[f"{name}/grad/x"])
    assert sorted(grads) == sorted(k[len(name) + 6:] for k in ARR
                                   if k.startswith(name + "/grad/") and k[-2:] != "/x")
    for k, g in grads.items():
        close(g.asnumpy(), ARR[f"{name}/grad/{k}"])


@pytest.mark.parametrize("name", sorted(gen.SYMBOLS))
def test_unrolled_symbol_json(name):
    assert gen.symbol_json(mx, name) == REC["symbols"][name]


@pytest.mark.parametrize("name", sorted(gen.REPRS))
def test_repr_state_info_shapes(name):
    assert gen.describe(mx, name) == REC["describe"][name]


def test_public_names():
    assert sorted(crnn.__all__) == sorted(
        ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell",
         "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell",
         "VariationalDropoutCell", "LSTMPCell"])
    assert callable(crnn.rnn_cell.dynamic_unroll)
    assert crnn.conv_rnn_cell.Conv2DLSTMCell is crnn.Conv2DLSTMCell


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_channels_last_matches_channels_first(dims):
    """MXNet's CPU convolution has no channels-last layout; neomx's matches the transposed
    channels-first cell."""
    spatial = (5, 4, 3)[:dims]
    first = "NC" + "DHW"[3 - dims:]
    last = "N" + "DHW"[3 - dims:] + "C"
    cls = getattr(crnn, "Conv%dDLSTMCell" % dims)
    a = cls((2,) + spatial, 3, 3, 3, i2h_pad=1, conv_layout=first, prefix="a_")
    b = cls(spatial + (2,), 3, 3, 3, i2h_pad=1, conv_layout=last, prefix="b_")
    a.initialize()
    b.initialize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 2, 2) + spatial))
    a.unroll(2, x)
    to_last = (0,) + tuple(range(2, dims + 2)) + (1,)
    for name in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
        w = getattr(a, name).data()
        getattr(b, name).set_data(w.transpose(to_last) if w.ndim > 1 else w)
    out_a, st_a = a.unroll(2, x, merge_outputs=True)
    xt = x.transpose((0, 1) + tuple(range(3, dims + 3)) + (2,))
    out_b, st_b = b.unroll(2, xt, merge_outputs=True)
    close(out_b.asnumpy(), out_a.transpose((0, 1) + tuple(range(3, dims + 3)) + (2,)).asnumpy())
    assert b.state_info(2)[0]["shape"] == (2,) + spatial + (3,)


def test_variational_masks_shared_across_steps():
    base = mx.gluon.rnn.RNNCell(40, input_size=40, h2h_weight_initializer="zeros")
    cell = crnn.VariationalDropoutCell(base, drop_inputs=0.5, drop_states=0.5)
    cell.initialize()
    base.i2h_weight.set_data(mx.nd.array(np.eye(40)))
    x = mx.nd.ones((2, 3, 40))
    with mx.autograd.train_mode():
        outs, _ = cell.unroll(3, x, merge_outputs=False)
    zeros = [(o.asnumpy() == 0) for o in outs]
    assert zeros[0].any() and not zeros[0].all()
    np.testing.assert_array_equal(zeros[0], zeros[1])
    np.testing.assert_array_equal(zeros[0], zeros[2])
    first_mask = cell.drop_inputs_mask
    cell.unroll(3, x)
    assert cell.drop_inputs_mask is not first_mask  # unroll resets the masks


def test_errors():
    with pytest.raises(AssertionError, match="Only support odd number"):
        crnn.Conv2DRNNCell((1, 4, 4), 2, 3, 2)
    with pytest.raises(AssertionError, match="For 2D convolution"):
        crnn.Conv2DGRUCell((1, 4, 4), 2, (3, 3, 3), 3)
    bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2), mx.gluon.rnn.GRUCell(2))
    with pytest.raises(AssertionError, match="BidirectionalCell doesn't support variational"):
        crnn.VariationalDropoutCell(bi, drop_states=0.5)
