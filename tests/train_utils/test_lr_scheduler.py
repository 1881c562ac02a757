"""Learning-rate schedulers against MXNet 1.9.1 (stateful sequences, warmup, errors)."""
from __future__ import annotations

import pytest

import neomx as mx
from neomx import lr_scheduler as lrs

from ._golden import load_json, raises_like

GOLD = load_json("lr_schedulers.json")
ENV = {k: getattr(lrs, k) for k in ("LRScheduler", "FactorScheduler", "MultiFactorScheduler",
                                    "PolyScheduler", "CosineScheduler")}


@pytest.mark.parametrize("rec", GOLD["cases"], ids=lambda r: r["id"])
def test_sequence(rec):
    s = getattr(mx.lr_scheduler, rec["cls"])(**rec["kwargs"])
    got = [s(n) for n in rec["calls"]]
    assert got == pytest.approx(rec["lrs"], rel=1e-12, abs=1e-15)
    assert s.base_lr == pytest.approx(rec["base_lr_after"], rel=1e-12)


@pytest.mark.parametrize("rec", GOLD["errors"], ids=lambda r: r["id"])
def test_errors(rec):
    assert raises_like(rec, lambda: eval(rec["code"], ENV)) == rec["error"]


def test_factor_formula():
    """lr = base * factor ** floor((n - 1) / step) for n >= 1."""
    s = lrs.FactorScheduler(step=5, factor=0.9, base_lr=0.3)
    for n in range(1, 60):
        assert s(n) == pytest.approx(0.3 * 0.9 ** ((n - 1) // 5))


def test_factor_logs_changes(caplog):
    import logging
    s = lrs.FactorScheduler(step=1, factor=0.5, base_lr=1.0, stop_factor_lr=0.3)
    with caplog.at_level(logging.INFO):
        s(2)
        s(4)
    assert "Update[2]: Change learning rate to 5.00000e-01" in caplog.text
    assert "now learning rate arrived at 3.00000e-01" in caplog.text


def test_optimizer_overrides_base_lr(capsys):
    s = lrs.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    opt = mx.optimizer.SGD(learning_rate=0.4, lr_scheduler=s)
    assert "overwritten by ``learning_rate``" in capsys.readouterr().out
    assert s.base_lr == 0.4 and opt.learning_rate == 0.4
    # no message when they agree
    mx.optimizer.SGD(learning_rate=0.4, lr_scheduler=lrs.FactorScheduler(2, base_lr=0.4))
    assert capsys.readouterr().out == ""


def test_cosine_keeps_its_own_base_lr():
    """MXNet quirk: Cosine/Poly decay from the base_lr given to them, even when an optimizer's
    learning_rate replaced ``base_lr``."""
    s = lrs.CosineScheduler(max_update=4, base_lr=1.0)
    opt = mx.optimizer.SGD(learning_rate=0.2, lr_scheduler=s)
    opt.num_update = 2
    assert opt.learning_rate == pytest.approx(0.5)


def test_pickle_roundtrip():
    import pickle
    s = lrs.MultiFactorScheduler(step=[2, 4], factor=0.5, base_lr=1.0)
    s(3)
    t = pickle.loads(pickle.dumps(s))
    assert t(5) == s(5) == 0.25
