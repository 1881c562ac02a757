#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's ``gluon.rnn`` (layers and cells).

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_rnn.py

Output goes to ``tests/golden/gluon_rnn/``: ``records.json`` (parameter names and shapes,
structural names, symbol JSON) and ``arrays.npz`` (``<case>/out<i>``, ``<case>/grad/x``,
``<case>/grad/<param>``).

Every case builds a block with an explicit prefix, initializes it, runs it once to finish
deferred shapes, then sets each parameter from ``np.random.RandomState(crc32(name))`` (see
``fill``) and runs ``run`` below: the block on seeded inputs under
``autograd.record(train_mode=False)``, a seeded linear head on every output, ``backward``.
The tests (tests/gluon/test_rnn_layers.py, test_rnn_cells.py) import this file for ``CASES``,
``fill`` and ``run`` and call them with ``neomx`` as ``mx``, imperatively and hybridized. Only
mxnet, numpy and the stdlib are used.
"""
from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "golden" / "gluon_rnn"


def _rand(key, shape, scale=0.5):
    rng = np.random.RandomState(zlib.crc32(key.encode()))
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def fill(block):
    """Every parameter from a RandomState seeded by its name."""
    for name, p in sorted(block.collect_params().items()):
        p.set_data(_rand(name, p.shape))


def _flat(x):
    if isinstance(x, (list, tuple)):
        return sum((_flat(e) for e in x), [])
    return [x]


# --- the cases: build(mx) -> (block, call(mx, block, x, extra) -> outputs, spec) -------------------
def _layer(ctor, x_shape, states=False, seq_len=None):
    def call(mx, net, x, extra):
        args = [x]
        if states:
            args.append(extra["states"])
        if seq_len is not None:
            return net(*args, sequence_length=extra["seq"])
        return net(*args)

    def make_extra(mx, net):
        extra = {}
        if states:
            n = x_shape[net._layout.find("N")]
            extra["states"] = [mx.nd.array(_rand("state%d" % i, info["shape"]))
                               for i, info in enumerate(net.state_info(n))]
        if seq_len is not None:
            extra["seq"] = mx.nd.array(seq_len)
        return extra

    return ctor, x_shape, call, make_extra


def _unroll(length, layout="NTC", merge=True, valid=None):
    def call(mx, cell, x, extra):
        return cell.unroll(length, x, layout=layout, merge_outputs=merge,
                           valid_length=extra.get("valid"))

    def make_extra(mx, cell):
        return {"valid": mx.nd.array(valid)} if valid is not None else {}

    return call, make_extra


def _steps(n):
    def call(mx, cell, x, extra):
        states = [mx.nd.array(_rand("s%d" % i, info["shape"]))
                  for i, info in enumerate(cell.state_info(x.shape[0]))]
        outs = []
        for t in range(n):
            out, states = cell(x * (t + 1), states)
            outs.append(out)
        return outs + list(states)

    return call, lambda mx, cell: {}


def _seq(mx, hybrid_cls=True):
    rnn = mx.gluon.rnn
    seq = (rnn.HybridSequentialRNNCell if hybrid_cls else rnn.SequentialRNNCell)(prefix="s_")
    with seq.name_scope():
        seq.add(rnn.LSTMCell(3))
        seq.add(rnn.ResidualCell(rnn.GRUCell(3)))
        seq.add(rnn.DropoutCell(0.5))
        seq.add(rnn.ZoneoutCell(rnn.RNNCell(3), 0.3, 0.3))
    return seq


LAYERS = {
    "lstm2": _layer(lambda mx: mx.gluon.rnn.LSTM(4, num_layers=2, input_size=3, prefix="lstm_"),
                    (5, 2, 3)),
    "lstm_bi_states": _layer(lambda mx: mx.gluon.rnn.LSTM(3, bidirectional=True, prefix="bl_"),
                             (4, 2, 3), states=True),
    "gru_ntc": _layer(lambda mx: mx.gluon.rnn.GRU(3, num_layers=2, layout="NTC",
                                                  bidirectional=True, prefix="g_"), (2, 4, 3)),
    "gru_states": _layer(lambda mx: mx.gluon.rnn.GRU(4, prefix="gs_"), (3, 2, 5), states=True),
    "rnn_relu": _layer(lambda mx: mx.gluon.rnn.RNN(4, num_layers=2, prefix="r_"), (3, 2, 5),
                       states=True),
    "rnn_tanh_bi": _layer(lambda mx: mx.gluon.rnn.RNN(3, activation="tanh", bidirectional=True,
                                                      layout="NTC", prefix="t_"), (2, 3, 4)),
    "lstm_deferred": _layer(lambda mx: mx.gluon.rnn.LSTM(4, prefix="d_"), (3, 2, 6)),
}
# MXNet's CPU kernel has no backward for LSTM projections: forward only.
FORWARD_ONLY = {
    "lstm_proj": _layer(lambda mx: mx.gluon.rnn.LSTM(4, projection_size=2, num_layers=2,
                                                     bidirectional=True, input_size=3,
                                                     prefix="p_"), (3, 2, 3), states=True),
}
CELLS = {
    "lstm_unroll": (lambda mx: mx.gluon.rnn.LSTMCell(4, input_size=3, prefix="lc_"), (2, 3, 3),
                    *_unroll(3)),
    "gru_valid": (lambda mx: mx.gluon.rnn.GRUCell(3, prefix="gc_"), (2, 3, 3),
                  *_unroll(3, merge=False, valid=[3, 1])),
    "rnn_tnc": (lambda mx: mx.gluon.rnn.RNNCell(4, activation="relu", prefix="rc_"), (3, 2, 3),
                *_unroll(3, layout="TNC")),
    "lstm_steps": (lambda mx: mx.gluon.rnn.LSTMCell(3, prefix="ls_"), (2, 4), *_steps(2)),
    "gru_steps": (lambda mx: mx.gluon.rnn.GRUCell(3, prefix="gs_"), (2, 4), *_steps(2)),
    "hseq": (lambda mx: _seq(mx), (2, 3, 3), *_unroll(3)),
    "hseq_valid": (lambda mx: _seq(mx), (2, 3, 3), *_unroll(3, merge=None, valid=[2, 3])),
    "seq": (lambda mx: _seq(mx, False), (2, 3, 3), *_unroll(3, merge=False)),
    "bi": (lambda mx: mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.LSTMCell(3, prefix="bl_"),
                                                     mx.gluon.rnn.GRUCell(3, prefix="br_")),
           (2, 3, 4), *_unroll(3)),
    "bi_valid": (lambda mx: mx.gluon.rnn.BidirectionalCell(
        mx.gluon.rnn.LSTMCell(3, prefix="vl_"), mx.gluon.rnn.LSTMCell(3, prefix="vr_")),
        (3, 2, 4), *_unroll(3, layout="TNC", merge=False, valid=[1, 3])),
}


def cases():
    """Every case: name -> (build(mx), x shape, call, make_extra, with_grad)."""
    res = {}
    for name, (ctor, shape, call, extra) in LAYERS.items():
        res["layer/" + name] = (ctor, shape, call, extra, True)
    for name, (ctor, shape, call, extra) in FORWARD_ONLY.items():
        res["layer/" + name] = (ctor, shape, call, extra, False)
    for name, (ctor, shape, call, extra) in CELLS.items():
        res["cell/" + name] = (ctor, shape, call, extra, True)
    return res


def run(mx, case, hybrid):
    """(block, outputs, x grad, {param: grad}) of one case."""
    ctor, shape, call, make_extra, with_grad = case
    block = ctor(mx)
    block.initialize()
    if hybrid:
        block.hybridize()
    x = mx.nd.array(_rand("x", shape))
    extra = make_extra(mx, block)
    call(mx, block, x, extra)  # finishes deferred initialization
    fill(block)
    if not with_grad:
        return block, _flat(call(mx, block, x, extra)), None, {}
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        outs = _flat(call(mx, block, x, extra))
        loss = None
        for i, o in enumerate(outs):
            term = (o * mx.nd.array(_rand("head%d" % i, o.shape))).sum()
            loss = term if loss is None else loss + term
    loss.backward()
    grads = {n: p.grad() for n, p in block.collect_params().items() if p.grad_req != "null"}
    return block, outs, x.grad, grads


# --- symbols --------------------------------------------------------------------------------------
def _sym_lstm(mx):
    cell = mx.gluon.rnn.LSTMCell(4, prefix="lc_")
    return _flat(cell.unroll(3, mx.sym.var("data"), merge_outputs=True))


def _sym_gru_valid(mx):
    cell = mx.gluon.rnn.GRUCell(3, prefix="gc_")
    return _flat(cell.unroll(2, mx.sym.var("data"), valid_length=mx.sym.var("vl")))


def _sym_bi(mx):
    rnn = mx.gluon.rnn
    bi = rnn.BidirectionalCell(rnn.RNNCell(3, prefix="l_"), rnn.LSTMCell(3, prefix="r_"))
    return _flat(bi.unroll(2, mx.sym.var("data"), merge_outputs=True))


def _sym_hseq(mx):
    return _flat(_seq(mx).unroll(2, mx.sym.var("data")))


SYMBOLS = {"lstm_cell": _sym_lstm, "gru_cell_valid": _sym_gru_valid, "bi_cell": _sym_bi,
           "hseq": _sym_hseq}
GRAPH_LAYERS = ("lstm2", "gru_ntc", "rnn_relu")


def symbol_json(mx, name):
    """JSON of an unrolled cell (``SYMBOLS``) or of a hybridized layer's graph (``layer/..``)."""
    with mx.name.NameManager():
        if name.startswith("layer/"):
            block, _, _, _ = run(mx, cases()[name], True)
            return block._cached_graph[1].tojson()
        return mx.sym.Group(SYMBOLS[name](mx)).tojson()


def main():
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    OUT.mkdir(parents=True, exist_ok=True)
    records, arrays = {}, {}
    for name, case in cases().items():
        block, outs, xgrad, grads = run(mx, case, False)
        records[name] = {
            "params": [[k, list(p.shape)] for k, p in block.collect_params().items()],
            "structural": sorted(block._collect_params_with_prefix()),
            "n_out": len(outs)}
        for i, o in enumerate(outs):
            arrays[f"{name}/out{i}"] = o.asnumpy()
        if xgrad is not None:
            arrays[f"{name}/grad/x"] = xgrad.asnumpy()
        for k, g in grads.items():
            arrays[f"{name}/grad/{k}"] = g.asnumpy()
    records["symbols"] = {n: symbol_json(mx, n)
                          for n in list(SYMBOLS) + ["layer/" + k for k in GRAPH_LAYERS]}
    (OUT / "records.json").write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(OUT / "arrays.npz", **arrays)
    print(f"wrote {len(records) - 1} cases, {len(arrays)} arrays to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
