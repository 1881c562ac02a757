#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for neomx's ``gluon.contrib.rnn``.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_contrib_rnn.py

Output goes to ``tests/golden/gluon_contrib_rnn/``: ``records.json`` (parameter names and
shapes, structural names, symbol JSON) and ``arrays.npz`` (``<case>/out<i>``,
``<case>/grad/x``, ``<case>/grad/<param>``).

The cases run through ``run`` of tools/make_golden_gluon_rnn.py: parameters set from
``np.random.RandomState(crc32(name))``, seeded inputs, ``autograd.record(train_mode=False)``
(dropout rates are nonzero but inactive), a seeded linear head on every output, ``backward``.
tests/gluon/test_contrib_rnn.py imports this file and runs the same cases with neomx,
imperatively and hybridized. Only mxnet, numpy and the stdlib are used.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "golden" / "gluon_contrib_rnn"
_spec = importlib.util.spec_from_file_location("make_golden_gluon_rnn",
                                               HERE / "make_golden_gluon_rnn.py")
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)
_rand, _flat, run, _unroll, _steps = base._rand, base._flat, base.run, base._unroll, base._steps


def _crnn(name, *args, **kwargs):
    return lambda mx: getattr(mx.gluon.contrib.rnn, name)(*args, **kwargs)


def _vardrop(mx, base_ctor, **rates):
    return mx.gluon.contrib.rnn.VariationalDropoutCell(base_ctor(mx), **rates)


def _dyn(layout, valid=None):
    """A HybridBlock calling ``dynamic_unroll`` on an LSTM cell: (build, call, make_extra)."""
    def build(mx):
        class DynNet(mx.gluon.HybridBlock):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                with self.name_scope():
                    self.cell = mx.gluon.rnn.LSTMCell(3, input_size=4)

            def hybrid_forward(self, F, x, h, c, vl=None):
                return mx.gluon.contrib.rnn.rnn_cell.dynamic_unroll(
                    self.cell, x, [h, c], layout=layout, valid_length=vl)
        return DynNet(prefix="dyn_")

    def call(mx, net, x, extra):
        args = [x, extra["h"], extra["c"]] + ([extra["vl"]] if valid is not None else [])
        return net(*args)

    def make_extra(mx, net):
        n = 2
        extra = {"h": mx.nd.array(_rand("h", (n, 3))), "c": mx.nd.array(_rand("c", (n, 3)))}
        if valid is not None:
            extra["vl"] = mx.nd.array(valid)
        return extra

    return build, call, make_extra


CELLS = {
    "conv1d_rnn": (_crnn("Conv1DRNNCell", (2, 6), 3, 3, 3, prefix="c1r_"), (2, 3, 2, 6),
                   *_unroll(3)),
    "conv1d_rnn_relu_tnc": (_crnn("Conv1DRNNCell", (2, 5), 2, 3, 1, i2h_pad=1,
                                  activation="relu", prefix="c1n_"),
                            (3, 2, 2, 5), *_unroll(3, layout="TNC", merge=False)),
    "conv2d_lstm": (_crnn("Conv2DLSTMCell", (2, 5, 5), 2, 3, 3, i2h_pad=1, prefix="c2l_"),
                    (2, 3, 2, 5, 5), *_unroll(3)),
    "conv2d_lstm_rect": (_crnn("Conv2DLSTMCell", (2, 4, 4), 3, (3, 1), (1, 3),
                               prefix="c2h_"), (2, 2, 2, 4, 4),
                         *_unroll(2, valid=[1, 2])),
    "conv2d_gru_dilate": (_crnn("Conv2DGRUCell", (2, 6, 6), 2, 3, 3, i2h_pad=2, i2h_dilate=2,
                                h2h_dilate=2, prefix="c2g_"), (2, 2, 2, 6, 6), *_unroll(2)),
    "conv2d_rnn_steps": (_crnn("Conv2DRNNCell", (2, 4, 4), 2, 3, 3, prefix="c2s_"),
                         (2, 2, 4, 4), *_steps(2)),
    "conv3d_lstm": (_crnn("Conv3DLSTMCell", (1, 3, 4, 4), 2, 3, 3, i2h_pad=1, prefix="c3l_"),
                    (1, 2, 1, 3, 4, 4), *_unroll(2)),
    "conv3d_gru": (_crnn("Conv3DGRUCell", (2, 3, 3, 3), 2, 1, 3, prefix="c3g_"),
                   (2, 2, 2, 3, 3, 3), *_unroll(2)),
    "conv3d_rnn": (_crnn("Conv3DRNNCell", (1, 3, 3, 3), 2, 3, 1, i2h_pad=1, prefix="c3r_"),
                   (1, 2, 1, 3, 3, 3), *_unroll(2)),
    "conv1d_lstm": (_crnn("Conv1DLSTMCell", (2, 5), 2, 3, 3, prefix="c1l_"), (2, 2, 2, 5),
                    *_unroll(2)),
    "conv1d_gru": (_crnn("Conv1DGRUCell", (2, 5), 2, 3, 3, prefix="c1g_"), (2, 2, 2, 5),
                   *_unroll(2)),
    "lstmp_unroll": (_crnn("LSTMPCell", 5, 2, input_size=3, prefix="lp_"), (2, 4, 3),
                     *_unroll(4)),
    "lstmp_steps": (_crnn("LSTMPCell", 4, 3, prefix="lps_"), (2, 3), *_steps(3)),
    "lstmp_valid_tnc": (_crnn("LSTMPCell", 4, 2, prefix="lpv_"), (3, 2, 3),
                        *_unroll(3, layout="TNC", merge=False, valid=[3, 1])),
    "vardrop_lstm": (lambda mx: _vardrop(mx, lambda m: m.gluon.rnn.LSTMCell(3, prefix="vl_"),
                                         drop_inputs=0.3, drop_outputs=0.4),
                     (2, 3, 4), *_unroll(3)),
    "vardrop_states_gru": (lambda mx: _vardrop(mx, lambda m: m.gluon.rnn.GRUCell(3, prefix="vg_"),
                                               drop_inputs=0.2, drop_states=0.5,
                                               drop_outputs=0.1),
                           (2, 3, 4), *_unroll(3, merge=False, valid=[2, 3])),
    "vardrop_steps": (lambda mx: _vardrop(mx, lambda m: m.gluon.rnn.RNNCell(3, prefix="vr_"),
                                          drop_states=0.5), (2, 4), *_steps(2)),
    "dyn_tnc": (*_dyn("TNC")[:1], (3, 2, 4), *_dyn("TNC")[1:]),
    "dyn_ntc_valid": (*_dyn("NTC", [2, 3])[:1], (2, 3, 4), *_dyn("NTC", [2, 3])[1:]),
    "dyn_tnc_valid": (*_dyn("TNC", [1, 3])[:1], (3, 2, 4), *_dyn("TNC", [1, 3])[1:]),
}


def cases():
    """Every case: name -> (build(mx), x shape, call, make_extra, with_grad)."""
    return {"cell/" + name: (ctor, shape, call, extra, True)
            for name, (ctor, shape, call, extra) in CELLS.items()}


# --- symbols --------------------------------------------------------------------------------------
def _sym_conv_lstm(mx):
    cell = mx.gluon.contrib.rnn.Conv2DLSTMCell((2, 5, 5), 2, 3, 3, i2h_pad=1, prefix="cl_")
    return _flat(cell.unroll(2, mx.sym.var("data"), merge_outputs=True))


def _sym_conv_gru(mx):
    cell = mx.gluon.contrib.rnn.Conv1DGRUCell((2, 5), 2, 3, 3, prefix="cg_")
    return _flat(cell.unroll(2, mx.sym.var("data")))


def _sym_lstmp(mx):
    cell = mx.gluon.contrib.rnn.LSTMPCell(4, 2, prefix="lp_")
    return _flat(cell.unroll(2, mx.sym.var("data"), merge_outputs=True))


def _sym_vardrop(mx):
    cell = mx.gluon.contrib.rnn.VariationalDropoutCell(mx.gluon.rnn.GRUCell(3, prefix="g_"),
                                                       drop_inputs=0.3, drop_outputs=0.2)
    return _flat(cell.unroll(2, mx.sym.var("data"), merge_outputs=True))


def _sym_vardrop_states(mx):
    cell = mx.gluon.contrib.rnn.VariationalDropoutCell(mx.gluon.rnn.RNNCell(3, prefix="r_"),
                                                       drop_states=0.3, drop_outputs=0.2)
    return _flat(cell.unroll(2, mx.sym.var("data"), merge_outputs=True))


SYMBOLS = {"conv_lstm": _sym_conv_lstm, "conv_gru": _sym_conv_gru, "lstmp": _sym_lstmp,
           "vardrop": _sym_vardrop, "vardrop_states": _sym_vardrop_states}


def symbol_json(mx, name):
    with mx.name.NameManager():
        return mx.sym.Group(SYMBOLS[name](mx)).tojson()


REPRS = {
    "conv2d_lstm": lambda mx: mx.gluon.contrib.rnn.Conv2DLSTMCell((3, 8, 8), 4, 3, 3),
    "conv1d_gru_nwc": lambda mx: mx.gluon.contrib.rnn.Conv1DGRUCell(
        (8, 3), 4, 3, 3, conv_layout="NWC", activation="relu"),
    "conv3d_rnn": lambda mx: mx.gluon.contrib.rnn.Conv3DRNNCell((1, 4, 4, 4), 2, 1, 1),
    "lstmp": lambda mx: mx.gluon.contrib.rnn.LSTMPCell(6, 2, input_size=3),
    "lstmp_deferred": lambda mx: mx.gluon.contrib.rnn.LSTMPCell(6, 2),
    "vardrop": lambda mx: mx.gluon.contrib.rnn.VariationalDropoutCell(
        mx.gluon.rnn.LSTMCell(2), 0.1, 0.2, 0.3),
}


def describe(mx, name):
    """repr, state_info(3) and parameter shapes of a ``REPRS`` cell."""
    cell = REPRS[name](mx)
    info = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}
            for d in cell.state_info(3)]
    return {"repr": repr(cell), "state_info": info,
            "shapes": sorted([k[len(cell.prefix):], list(p.shape)]
                             for k, p in cell.collect_params().items())}


def main():
    # MXNet 1.9.1's oneDNN convolution output cannot feed SliceChannel under autograd
    # ("We can't generate TBlob for MKLDNN data"): use its reference kernels. Its CPU
    # convolution supports only channels-first layouts, so no case uses NWC/NHWC/NDHWC.
    os.environ["MXNET_MKLDNN_ENABLED"] = "0"
    os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"
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
        arrays[f"{name}/grad/x"] = xgrad.asnumpy()
        for k, g in grads.items():
            arrays[f"{name}/grad/{k}"] = g.asnumpy()
    records["symbols"] = {n: symbol_json(mx, n) for n in SYMBOLS}
    records["describe"] = {n: describe(mx, n) for n in REPRS}
    (OUT / "records.json").write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(OUT / "arrays.npz", **arrays)
    print(f"wrote {len(CELLS)} cases, {len(arrays)} arrays to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
