"""Custom operators against MXNet 1.9.1: the same custom-op code (``_custom_ops.py``) run by
the oracle (``tools/make_golden_custom_op.py``) and by neomx gives the same values, names, JSON
and errors, in executors, autograd, Module.fit and hybridized Gluon."""
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

from . import _custom_ops

RECORDS = json.loads((Path(__file__).resolve().parents[1] / "golden" / "custom_op" /
                      "records.json").read_text())


def _compare(got, want, where):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            _compare(got[k], want[k], f"{where}.{k}")
    elif _numeric(want) and not _ragged(want):
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                                   np.asarray(want, dtype=np.float64), rtol=1e-5, atol=1e-6,
                                   err_msg=where)
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{k}]")
    else:
        assert _plain(got) == want, where


def _ragged(v):
    try:
        np.asarray(v, dtype=np.float64)
    except ValueError:
        return True
    return False


def _numeric(v):
    if isinstance(v, list):
        return all(_numeric(x) for x in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


@pytest.mark.parametrize("name", sorted(_custom_ops.SCENARIOS))
def test_scenario_matches_mxnet(name, capsys):
    got = _custom_ops.SCENARIOS[name](mx)
    _compare(got, RECORDS[name], name)
