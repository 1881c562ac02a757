"""mx.mon.Monitor against MXNet 1.9.1's output (tools/make_golden_monitor.py runs the same
scenario, tests/monitor/_scenario.py).

Differences kept on purpose: neomx's executors call the monitor for forward operators only
(MXNet also reports its backward nodes, ``<node>_backward_output<i>``: neomx's backward graph is
built from other operators, so those names have no counterpart), and name every operator input
after the op's argument list (``relu1_data`` where MXNet says ``relu1_input0`` for operators
without declared input names)."""
import json
import re
from pathlib import Path

import numpy as np

import neomx as mx

from . import _scenario

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "monitor" /
                     "records.json").read_text())
_NUM = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _values(text):
    return [float(x) for x in _NUM.findall(text)]


def _same_text(got, want, where):
    """Same layout (tabs, brackets, names, padding) and numbers within float32 rounding."""
    assert _NUM.sub("#", got) == _NUM.sub("#", want), (where, got, want)
    np.testing.assert_allclose(_values(got), _values(want), rtol=2e-6, atol=1e-7, err_msg=where)


def _forward_rows(rows):
    """MXNet's rows without those of its backward pass (the span from the first to the last
    ``*_backward_*`` row: variables read by backward nodes are reported there too)."""
    idx = [i for i, r in enumerate(rows) if "backward" in r[1]]
    if idx:
        rows = rows[:idx[0]] + rows[idx[-1] + 1:]
    return [[n, k.replace("relu1_input0", "relu1_data"), v] for n, k, v in rows]


def test_monitor_matches_mxnet():
    got = _scenario.run(mx)
    for key in ("rows_all0", "rows_all1"):
        want = _forward_rows(GOLDEN[key])
        assert [r[:2] for r in got[key]] == [r[:2] for r in want], key
        for g, w in zip(got[key], want):
            _same_text(g[2], w[2], f"{key} {w[1]}")
    assert len(got["lines"]) == len(GOLDEN["lines"])
    for g, w in zip(got["lines"], GOLDEN["lines"]):
        _same_text(g, w, "toc_print")


def test_interval_and_pattern():
    ex = _scenario._net(mx).simple_bind(mx.cpu(), data=(2, 4))
    mon = mx.mon.Monitor(3, pattern="relu.*")
    mon.install(ex)
    counts = []
    for _ in range(6):
        mon.tic()
        ex.forward()
        counts.append(len(mon.toc()))
    assert counts == [1, 0, 0, 1, 0, 0]
    assert mon.toc() == []
