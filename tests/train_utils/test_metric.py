"""Metrics against MXNet 1.9.1: values and instance counts after every update, local/global
statistics, registry names, CustomMetric, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import neomx as mx

from ._golden import arrays, load_json, raises_like

GOLD = load_json("metrics.json")
MISC = GOLD["misc"]


# Loss and Perplexity sum in float32 with mx.nd ops, whose summation order differs from MXNet's:
# a few float32 ulps of the summands (sums here have magnitude <= 10)
F32_SUM_ABS = {"loss": 2e-6, "torch": 2e-6, "caffe": 2e-6}


def _same(got, want, rel=1e-6, abs_=1e-12):
    """Recursive comparison of get()-style results (nan equals nan)."""
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w, rel, abs_)
    elif isinstance(want, float):
        if math.isnan(want):
            assert math.isnan(got), (got, want)
        else:
            assert got == pytest.approx(want, rel=rel, abs=abs_), (got, want)
    else:
        assert got == want, (got, want)


def _check_state(m, rec, abs_=1e-12):
    _same(m.get(), rec["get"], abs_=abs_)
    _same(m.get_global(), rec["get_global"], abs_=abs_)
    _same(m.get_name_value(), rec["name_value"], abs_=abs_)
    _same(m.get_global_name_value(), rec["global_name_value"], abs_=abs_)
    if rec["num_inst"] is not None:
        _same(getattr(m, "num_inst", None), rec["num_inst"])
        _same(getattr(m, "global_num_inst", None), rec["global_num_inst"])


@pytest.mark.parametrize("rec", GOLD["cases"], ids=lambda r: r["id"])
def test_golden(rec):
    A = arrays()
    m = mx.metric.create(rec["spec"], **rec["kwargs"])
    assert type(m).__name__ == rec["cls"] and m.name == rec["name"]
    for u, (n_lab, n_pred) in enumerate(rec["updates"]):
        labels = [mx.nd.array(A[f"metric/{rec['id']}/{u}/label/{i}"]) for i in range(n_lab)]
        preds = [mx.nd.array(A[f"metric/{rec['id']}/{u}/pred/{i}"]) for i in range(n_pred)]
        m.update(labels, preds)
        _check_state(m, rec["after"][u], F32_SUM_ABS.get(rec["id"], 1e-12))
    m.reset_local()
    _check_state(m, rec["after_reset_local"])
    m.reset()
    _check_state(m, rec["after_reset"])
    if "error_type" in (rec["config"] or {}):
        raises_like(rec["config"], m.get_config)
    else:
        assert _jsonable(m.get_config()) == rec["config"]


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def test_single_ndarrays_are_wrapped():
    m = mx.metric.Accuracy()
    m.update(mx.nd.array([0, 1]), mx.nd.array([[0.9, 0.1], [0.8, 0.2]]))
    assert m.get() == ("accuracy", 0.5)
    loss = mx.metric.Loss()
    loss.update(None, mx.nd.array([1.0, 2.0, 6.0]))
    assert loss.get() == ("loss", 3.0)


@pytest.mark.parametrize("cid", sorted(MISC["custom"]))
def test_custom(cid):
    rec = MISC["custom"][cid]

    def tuple_feval(label, pred):
        return float(np.abs(label - pred).sum()), label.size

    def scalar_feval(label, pred):
        return float(np.abs(label - pred).mean())

    m = {"tuple": lambda: mx.metric.create(tuple_feval),
         "scalar": lambda: mx.metric.CustomMetric(scalar_feval),
         "named": lambda: mx.metric.CustomMetric(scalar_feval, name="mine"),
         "lambda": lambda: mx.metric.create(lambda l, p: float((l == p).mean())),
         "np": lambda: mx.metric.np(scalar_feval),
         "extra": lambda: mx.metric.CustomMetric(scalar_feval, allow_extra_outputs=True)}[cid]()
    lab = [mx.nd.array([1, 2, 3]), mx.nd.array([0, 1])]
    pred = [mx.nd.array([1, 4, 4]), mx.nd.array([1, 1])]
    m.update(lab[:1] if cid == "extra" else lab, pred)
    assert m.name == rec["name"] and m.num_inst == rec["num_inst"]
    _same(m.get(), rec["get"])


@pytest.mark.parametrize("spec", sorted(MISC["names"]))
def test_registry_names(spec):
    kw = {"top_k": 2} if spec.startswith("top_k") else (
        {"ignore_label": None} if spec == "perplexity" else {})
    m = mx.metric.create(spec, **kw)
    assert type(m).__name__ == MISC["names"][spec]["cls"] and m.name == MISC["names"][spec]["name"]


def test_composite():
    comp = mx.metric.create(["acc", "mse", mx.metric.F1()])
    assert [type(c).__name__ for c in comp.metrics] == MISC["composite_list"]
    assert repr(comp.get_metric(7)) == MISC["composite_get_metric_oob"]
    assert comp.get_metric(1) is comp.metrics[1]
    assert str(mx.metric.Accuracy()) == MISC["str_empty"]


def test_create_instance_and_config_roundtrip():
    acc = mx.metric.Accuracy(axis=0, name="a0")
    assert mx.metric.create(acc) is acc
    clone = mx.metric.create(**acc.get_config())
    assert isinstance(clone, mx.metric.Accuracy) and clone.axis == 0 and clone.name == "a0"


def test_update_dict_selects_names():
    m = mx.metric.Accuracy(output_names=["out2"], label_names=["lab"])
    m.update_dict({"lab": mx.nd.array([1, 1]), "other": mx.nd.array([0, 0])},
                  {"out1": mx.nd.array([[1, 0], [1, 0]]), "out2": mx.nd.array([[0, 1], [1, 0]])})
    assert m.get() == ("accuracy", 0.5)
    comp = mx.metric.CompositeEvalMetric(["acc"], label_names=["lab"], output_names=["out2"])
    comp.update_dict({"lab": mx.nd.array([1, 1]), "other": mx.nd.array([0, 0])},
                     {"out1": mx.nd.array([[1, 0], [1, 0]]), "out2": mx.nd.array([[0, 1], [1, 0]])})
    assert comp.get() == (["accuracy"], [0.5])


def test_register_custom_metric():
    @mx.metric.register
    @mx.metric.alias("always_one_alias")
    class AlwaysOne(mx.metric.EvalMetric):
        def __init__(self, name="always_one"):
            super().__init__(name)

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += len(preds)
    m = mx.metric.create("always_one_alias")
    m.update([], [mx.nd.zeros(1)])
    assert m.get() == ("always_one", 1.0)
    assert m.get_global() == m.get()  # no global stats: get_global is get


@pytest.mark.parametrize("rec", MISC["errors"], ids=lambda r: r["id"])
def test_errors(rec):
    msg = raises_like(rec, lambda: exec(rec["code"], {"mx": mx, "np": np}))
    if rec["id"] != "topk_gt_classes":  # numpy's own message differs between versions
        assert msg == rec["error"]


def test_metrics_on_other_contexts(ctx):
    labels = [mx.nd.array([0, 1, 2], ctx=ctx)]
    preds = [mx.nd.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7], [0.1, 0.2, 0.7]], ctx=ctx)]
    for spec, want in (("acc", 2 / 3), ("ce", -np.log([0.7, 0.2, 0.7]).mean())):
        m = mx.metric.create(spec)
        m.update(labels, preds)
        assert m.get()[1] == pytest.approx(want, rel=1e-6)
    p = mx.metric.Perplexity(ignore_label=None)
    p.update(labels, preds)
    assert p.get()[1] == pytest.approx(math.exp(-np.log([0.7, 0.2, 0.7]).mean()), rel=1e-6)
