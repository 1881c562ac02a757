#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's ``mx.rnn`` (symbolic cells, bucketing).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_mx_rnn.py

Output goes to ``tests/golden/mx_rnn/``: ``records.json`` and ``arrays.npz``.

* ``symbols``: the JSON of cells unrolled on ``data`` (``SYMBOLS`` below: LSTM/GRU/RNN cells,
  FusedRNNCell and its ``unfuse()``, stacks with dropout/residual/zoneout, bidirectional,
  convolutional), each built under a fresh NameManager.
* ``fused``: a 2-layer bidirectional fused LSTM bound with parameters set from
  ``np.random.RandomState(crc32(name))``: outputs, ``unpack_weights`` names and arrays, and the
  unfused stack's outputs on the unpacked weights.
* ``bucketing``: a small language model (Embedding, 2 LSTMCells, FullyConnected,
  SoftmaxOutput) in a BucketingModule over a generated corpus in BucketSentenceIter (python and
  numpy seeded), parameters set by name, SGD: each batch's bucket key and data, the perplexity
  after each batch, and the final parameters.

The tests (tests/rnn/) import this file for the builders and run them with ``neomx`` as
``mx``. Only mxnet, numpy and the stdlib are used.
"""
from __future__ import annotations

import json
import random
import sys
import zlib
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "golden" / "mx_rnn"


def _rand(key, shape, scale=0.5):
    rng = np.random.RandomState(zlib.crc32(key.encode()))
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def _flat(x):
    if isinstance(x, (list, tuple)):
        return sum((_flat(e) for e in x), [])
    return [x]


# --- symbols --------------------------------------------------------------------------------------
def _lstm(mx):
    c = mx.rnn.LSTMCell(4, prefix="lstm_")
    return c.unroll(3, mx.sym.var("data"), merge_outputs=True)


def _gru_tnc(mx):
    return mx.rnn.GRUCell(4).unroll(2, mx.sym.var("data"), layout="TNC")


def _rnn_list(mx):
    c = mx.rnn.RNNCell(4, activation="relu")
    return c.unroll(2, [mx.sym.var("x0"), mx.sym.var("x1")], merge_outputs=True)


def _fused(mx):
    c = mx.rnn.FusedRNNCell(4, num_layers=2, bidirectional=True, get_next_state=True,
                            prefix="lstm_")
    return c.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)


def _fused_gru_ntc(mx):
    c = mx.rnn.FusedRNNCell(4, mode="gru", get_next_state=True)
    return c.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=False)


def _unfused(mx):
    c = mx.rnn.FusedRNNCell(4, num_layers=2, bidirectional=True, dropout=0.5,
                            prefix="lstm_").unfuse()
    return c.unroll(2, mx.sym.var("data"), merge_outputs=True)


def _stack(mx):
    st = mx.rnn.SequentialRNNCell()
    st.add(mx.rnn.LSTMCell(4, prefix="l0_"))
    st.add(mx.rnn.DropoutCell(0.3))
    st.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(4, prefix="l1_")))
    st.add(mx.rnn.ZoneoutCell(mx.rnn.GRUCell(4, prefix="l2_"), 0.2, 0.3))
    return st.unroll(2, mx.sym.var("data"), merge_outputs=False)


def _bi(mx):
    c = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(3, prefix="l_"), mx.rnn.LSTMCell(3, prefix="r_"))
    return c.unroll(3, mx.sym.var("data"), merge_outputs=True)


def _bi_list(mx):
    c = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(3, prefix="l_"), mx.rnn.RNNCell(3, prefix="r_"))
    return c.unroll(2, mx.sym.var("data"))[0]


def _step_var_state(mx):
    c = mx.rnn.LSTMCell(3, prefix="s_")
    return c(mx.sym.var("x"), c.begin_state(func=mx.sym.Variable))


def _conv(mx):
    c = mx.rnn.ConvLSTMCell((2, 3, 5, 5), 4, prefix="cl_")
    return c.unroll(2, mx.sym.var("data"), merge_outputs=True)[0]


SYMBOLS = {"lstm": _lstm, "gru_tnc": _gru_tnc, "rnn_list": _rnn_list, "fused": _fused,
           "fused_gru_ntc": _fused_gru_ntc, "unfused": _unfused, "stack": _stack, "bi": _bi,
           "bi_list": _bi_list, "step_var_state": _step_var_state, "conv": _conv}


def symbol_json(mx, name):
    with mx.name.NameManager():
        return mx.sym.Group(_flat(SYMBOLS[name](mx))).tojson()


# --- fused vs unfused -----------------------------------------------------------------------------
def fused_run(mx):
    """(outputs, unpacked weights, unfused outputs) of a seeded fused LSTM."""
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, bidirectional=True, prefix="f_")
    out, _ = cell.unroll(4, mx.sym.var("data"), layout="NTC", merge_outputs=True,
                         begin_state=cell.begin_state(func=mx.sym.Variable))
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 4, 5))[0]))
    args = {n: mx.nd.array(_rand(n, s)) for n, s in shapes.items()}
    fused = out.bind(mx.cpu(), args).forward()[0].asnumpy()
    unpacked = cell.unpack_weights(args)
    stack = cell.unfuse()
    ustates = stack.begin_state(func=mx.sym.Variable)
    uout, _ = stack.unroll(4, mx.sym.var("data"), layout="NTC", merge_outputs=True,
                           begin_state=ustates)
    packed = stack.pack_weights(unpacked)
    # the fused (layer * direction, N, H) states, one (N, H) slice per unfused cell
    h0, c0 = args["f_begin_state_0"].asnumpy(), args["f_begin_state_1"].asnumpy()
    for k in range(4):
        packed[ustates[2 * k].name] = mx.nd.array(h0[k])
        packed[ustates[2 * k + 1].name] = mx.nd.array(c0[k])
    uargs = {n: packed[n] for n in uout.list_arguments()}
    unfused = uout.bind(mx.cpu(), uargs).forward()[0].asnumpy()
    repacked = cell.pack_weights(unpacked)
    assert np.array_equal(repacked["f_parameters"].asnumpy(), args["f_parameters"].asnumpy())
    return fused, {k: v.asnumpy() for k, v in unpacked.items()}, unfused


# --- bucketing ------------------------------------------------------------------------------------
def corpus(n=120, vocab=12, seed=3):
    """Sentences of 3-9 words from a small vocabulary (a generated text, no downloads)."""
    rng = np.random.RandomState(seed)
    words = ["w%d" % i for i in range(vocab)]
    return [[words[(i + j * (1 + i % 3)) % vocab] for j in range(rng.randint(3, 10))]
            for i in range(n)]


def sym_gen_factory(mx, vocab_size, batch_size=8, num_hidden=8, num_embed=6):
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=num_hidden, prefix="lstm_l%d_" % i))

    def zeros(name, shape, **kwargs):  # begin states with the batch size spelled out
        return mx.sym.zeros(shape=(batch_size,) + tuple(shape[1:]), **kwargs)

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=vocab_size, output_dim=num_embed,
                                 name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True,
                                  begin_state=stack.begin_state(func=zeros))
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab_size, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax", use_ignore=True,
                                    ignore_label=0)
        return pred, ("data",), ("softmax_label",)
    return sym_gen


def bucketing_run(mx):
    """(records, arrays) of a few BucketingModule training steps."""
    random.seed(7)
    np.random.seed(7)
    sentences, vocab = mx.rnn.encode_sentences(corpus(), invalid_label=0, start_label=1)
    it = mx.rnn.BucketSentenceIter(sentences, 8, buckets=[5, 7, 10], invalid_label=0)
    mod = mx.mod.BucketingModule(sym_gen_factory(mx, len(vocab) + 1),
                                 default_bucket_key=it.default_bucket_key, context=mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    arg_params = {n: mx.nd.array(_rand(n, a.shape, 0.3))
                  for n, a in zip(mod._curr_module._exec_group.param_names,
                                  mod._curr_module._exec_group.param_arrays)
                  for a in [a[0]]}
    mod.init_params(arg_params=arg_params, allow_missing=False)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5,
                                                          "rescale_grad": 1.0 / 8})
    metric = mx.metric.Perplexity(0)
    keys, ppl, arrays = [], [], {}
    for i, batch in enumerate(it):
        keys.append(batch.bucket_key)
        arrays["batch%d" % i] = batch.data[0].asnumpy()
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
        ppl.append(metric.get()[1])
    args, _ = mod.get_params()
    for k, v in args.items():
        arrays["param/" + k] = v.asnumpy()
    return {"keys": keys, "perplexity": ppl, "buckets": it.buckets,
            "vocab": sorted(vocab.items())}, arrays


def main():
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    OUT.mkdir(parents=True, exist_ok=True)
    records = {"symbols": {n: symbol_json(mx, n) for n in SYMBOLS}}
    fused, unpacked, unfused = fused_run(mx)
    arrays = {"fused/out": fused, "fused/unfused_out": unfused}
    arrays.update({"fused/unpacked/" + k: v for k, v in unpacked.items()})
    records["bucketing"], barrays = bucketing_run(mx)
    arrays.update({"bucketing/" + k: v for k, v in barrays.items()})
    (OUT / "records.json").write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(OUT / "arrays.npz", **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
