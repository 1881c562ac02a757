"""mx.rnn against MXNet 1.9.1 (records from tools/make_golden_mx_rnn.py, whose builders this
test runs with neomx): the JSON of unrolled cells, FusedRNNCell against its unfused stack and
unpack/pack_weights, a BucketingModule language model's batches, perplexities and parameters
after SGD steps; then checkpoints, encode_sentences, BucketSentenceIter and MXNet's errors."""
import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

ROOT = Path(__file__).resolve().parent.parent.parent
GOLDEN = ROOT / "tests" / "golden" / "mx_rnn"
_spec = importlib.util.spec_from_file_location("make_golden_mx_rnn",
                                               ROOT / "tools" / "make_golden_mx_rnn.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
REC = json.loads((GOLDEN / "records.json").read_text())
ARR = dict(np.load(GOLDEN / "arrays.npz"))


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore:NTC layout detected")
@pytest.mark.parametrize("name", sorted(gen.SYMBOLS))
def test_unrolled_symbol_json(name):
    assert gen.symbol_json(mx, name) == REC["symbols"][name]


def test_fused_matches_mxnet_and_unfused():
    fused, unpacked, unfused = gen.fused_run(mx)
    close(fused, ARR["fused/out"])
    close(unfused, ARR["fused/unfused_out"])
    names = sorted(k[len("fused/unpacked/"):] for k in ARR if k.startswith("fused/unpacked/"))
    assert sorted(unpacked) == names
    for k in names:
        close(unpacked[k], ARR["fused/unpacked/" + k])


def test_bucketing_module_training_matches_mxnet():
    rec, arrays = gen.bucketing_run(mx)
    want = REC["bucketing"]
    assert rec["buckets"] == want["buckets"]
    assert [list(v) for v in rec["vocab"]] == want["vocab"]
    assert rec["keys"] == want["keys"]
    for i in range(len(want["keys"])):
        np.testing.assert_array_equal(arrays["batch%d" % i], ARR["bucketing/batch%d" % i])
    close(rec["perplexity"], want["perplexity"], 1e-4)
    for k, v in arrays.items():
        if k.startswith("param/"):
            close(v, ARR["bucketing/" + k], 1e-4)


def test_default_begin_state_with_unknown_batch():
    out, _ = mx.rnn.LSTMCell(3, prefix="z_").unroll(2, mx.sym.var("data"), merge_outputs=True)
    args = {"data": mx.nd.ones((2, 2, 4))}
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 2, 4))[0]))
    args.update({n: mx.nd.zeros(s) for n, s in shapes.items() if n != "data"})
    assert out.bind(mx.cpu(), args).forward()[0].asnumpy().shape == (2, 2, 3)


def test_rnn_checkpoint_roundtrip(tmp_path):
    cell = mx.rnn.LSTMCell(3, prefix="ck_")
    out, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(1, 2, 4))[0]))
    args = {n: mx.nd.array(gen._rand(n, s)) for n, s in shapes.items() if n != "data"}
    prefix = str(tmp_path / "m")
    callback = mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)
    callback(0, out, args, {})
    assert not (tmp_path / "m-0001.params").exists()
    callback(1, out, args, {})
    saved = mx.nd.load(str(tmp_path / "m-0002.params"))
    assert sorted(saved) == sorted("arg:ck_%s%s_%s" % (g, gate, t) for g in ("i2h", "h2h")
                                   for gate in ("_i", "_f", "_c", "_o")
                                   for t in ("weight", "bias"))
    sym, arg, aux = mx.rnn.load_rnn_checkpoint(cell, prefix, 2)
    assert sym.tojson() == out.tojson() and aux == {}
    for k, v in args.items():
        np.testing.assert_array_equal(arg[k].asnumpy(), v.asnumpy())


def test_fused_initializer():
    cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode="lstm", prefix="fi_")
    assert cell.params._params["fi_parameters"].attr("__init__") == (
        '["fusedrnn", {"init": null, "num_hidden": 3, "num_layers": 1, "mode": "lstm", '
        '"bidirectional": false, "forget_bias": 1.0}]')
    arr = mx.nd.zeros((4 * 3 * (2 + 3 + 2),))
    mx.init.Xavier()(mx.init.InitDesc("fi_parameters",
                                      {"__init__": cell._parameter.attr("__init__")}), arr)
    parts = cell.unpack_weights({"fi_parameters": arr})
    np.testing.assert_array_equal(parts["fi_l0_i2h_f_bias"].asnumpy(), np.ones(3))
    np.testing.assert_array_equal(parts["fi_l0_h2h_i_bias"].asnumpy(), np.zeros(3))
    assert np.abs(parts["fi_l0_i2h_c_weight"].asnumpy()).max() > 0


def test_encode_sentences_and_iter():
    coded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=0,
                                           start_label=1)
    assert coded == [[1, 2], [2, 3, 1]] and vocab == {"\n": 0, "a": 1, "b": 2, "c": 3}
    with pytest.raises(AssertionError, match="Unknown token d"):
        mx.rnn.encode_sentences([["d"]], vocab=vocab)
    coded, vocab = mx.rnn.encode_sentences([["d"]], vocab=dict(vocab), unknown_token="<unk>",
                                           start_label=4)
    assert coded == [[4]] and vocab["<unk>"] == 4
    random.seed(1)
    sents = [[1, 2, 3]] * 4 + [[1, 2, 3, 4, 5]] * 5 + [[1] * 9]
    it = mx.rnn.BucketSentenceIter(sents, 2, buckets=[3, 6], layout="TN")
    assert it.default_bucket_key == 6 and it.provide_data[0].shape == (6, 2)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [3, 3, 6, 6]
    b = next(b for b in batches if b.bucket_key == 6)
    assert b.data[0].shape == (6, 2) and b.label[0].asnumpy()[-1].tolist() == [-1, -1]
    with pytest.raises(ValueError, match="Invalid layout"):
        mx.rnn.BucketSentenceIter(sents, 2, layout="XY")


def test_cell_errors_and_params():
    with pytest.raises(NotImplementedError, match="FusedRNNCell cannot be stepped"):
        mx.rnn.FusedRNNCell(3)(mx.sym.var("x"), [])
    with pytest.raises(AssertionError, match="FusedRNNCell doesn't support zoneout"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(3))
    shared = mx.rnn.RNNParams("sh_")
    a, b = mx.rnn.GRUCell(2, params=shared), mx.rnn.GRUCell(2, params=shared, prefix="x_")
    assert a._iW is b._iW and a._iW.name == "sh_i2h_weight"
    stack = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams("p_"))
    with pytest.raises(AssertionError, match="Either specify params for SequentialRNNCell"):
        stack.add(mx.rnn.LSTMCell(2, prefix="p_"))  # MXNet's cells stop owning at creation
    assert mx.rnn.LSTMCell(2).state_shape == [(0, 2), (0, 2)]
