"""mx.profiler: the Chrome trace parses and names the operators that ran (imperative and in
executors), MXNet's aggregate table and JSON, states, user objects, and hooks that record
nothing while the profiler is off."""
import json

import pytest

import neomx as mx
from neomx import profiler as prof
from neomx.base import MXNetError


@pytest.fixture(autouse=True)
def fresh(tmp_path):
    prof.set_state("stop")
    prof.resume()
    prof._events.clear()
    prof._stats.clear()
    prof._pids.clear()
    prof.set_config(profile_all=False, profile_imperative=True, profile_symbolic=True,
                    filename=str(tmp_path / "profile.json"), aggregate_stats=True)
    yield tmp_path / "profile.json"
    prof.set_state("stop")
    prof.resume()


def _work():
    a = mx.nd.ones((4, 4))
    b = mx.nd.relu(mx.nd.dot(a, a))
    c = b + 1
    c += b
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    net = mx.sym.Activation(net, act_type="tanh", name="act")
    ex = net.simple_bind(mx.cpu(), data=(2, 4))
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)))
    ex.grad_arrays[1].wait_to_read()
    return c


def _trace(path):
    doc = json.loads(path.read_text())
    return doc, doc["traceEvents"]


def test_trace_names_imperative_and_executor_operators(fresh):
    prof.set_state("run")
    _work()
    prof.set_state("stop")
    prof.dump()
    doc, events = _trace(fresh)
    assert doc["displayTimeUnit"] == "ms"
    ops = [e for e in events if e.get("cat") == "operator"]
    names = {e["name"] for e in ops}
    # the executor runs fc and act as one fused step (neomx/ops/fused_kernels.py), one event
    assert {"dot", "relu", "_plus_scalar", "broadcast_add", "FullyConnected+Activation",
            "_backward_Activation"} <= names
    assert any(e.get("args", {}).get("node") == "fc + act" for e in ops)
    begins = [e for e in ops if e["ph"] == "B"]
    ends = [e for e in ops if e["ph"] == "E"]
    assert len(begins) == len(ends) and all(e["ts"] <= f["ts"] for e, f in zip(begins, ends))
    meta = [e for e in events if e["ph"] == "M"]
    assert {"name": "operator"} in [e["args"] for e in meta]


def test_nothing_is_recorded_while_off_or_paused(fresh):
    _work()
    assert prof._events == [] and not prof.STATE.imperative and not prof.STATE.symbolic
    prof.start()
    prof.pause()
    _work()
    assert prof._events == []
    prof.resume()
    mx.nd.relu(mx.nd.ones((2,)))
    prof.stop()
    assert [e["name"] for e in prof._events if e["ph"] == "B"] == ["relu"]


def test_symbolic_only(fresh):
    prof.set_config(profile_imperative=False)
    prof.set_state("run")
    _work()
    prof.set_state("stop")
    names = {e["name"] for e in prof._events}
    assert "FullyConnected+Activation" in names and "relu" not in names
    assert "_plus_scalar" not in names


def test_executor_operators_separately_without_fusion(fresh, monkeypatch):
    from neomx.graph import plan
    monkeypatch.setitem(plan.FUSE, "enabled", False)
    prof.set_config(profile_imperative=False)
    prof.set_state("run")
    _work()
    prof.set_state("stop")
    names = {e["name"] for e in prof._events}
    assert {"FullyConnected", "Activation"} <= names
    assert not any("+" in n for n in names)


def test_aggregate_table_and_json():
    prof.set_state("run")
    for _ in range(3):
        mx.nd.relu(mx.nd.ones((3,)))
    mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)))
    prof.set_state("stop")
    table = prof.dumps()
    assert "Profile Statistics:" in table and "operator\n=================" in table
    assert ("Name                          Total Count        Time (ms)    Min Time (ms)    "
            "Max Time (ms)    Avg Time (ms)") in table
    row = next(line for line in table.splitlines() if line.startswith("relu "))
    assert row.split()[1] == "3"
    by_count = prof.dumps(sort_by="count", ascending=True)
    rows = [line.split()[0] for line in by_count.splitlines() if line.startswith(("relu", "dot"))]
    assert rows == ["dot", "relu"]
    doc = json.loads(prof.dumps(format="json", reset=True))
    assert doc["Time"]["operator"]["relu"]["Count"] == 3
    assert set(doc["Time"]["operator"]["relu"]) == {"Count", "Total", "Min", "Max", "Avg"}
    assert "relu" not in prof.dumps()


def test_user_objects(fresh):
    prof.set_state("run")
    d = prof.Domain("mydomain")
    t = d.new_task("task1")
    t.start()
    t.stop()
    with d.new_frame("frame1"):
        pass
    e = prof.Event("ev")
    e.start()
    e.stop()
    c = d.new_counter("ctr", 5)
    c += 3
    c.decrement(1)
    d.new_marker("mk").mark("global")
    with prof.scope("outer"):
        with prof.scope("inner"):
            mx.nd.relu(mx.nd.ones((2,)))
    prof.set_state("stop")
    prof.dump()
    _, events = _trace(fresh)
    by = {(e.get("cat"), e["name"], e["ph"]) for e in events}
    assert {("mydomain", "task1", "B"), ("mydomain,frame", "frame1", "E"), ("event", "ev", "B"),
            ("mydomain,instant_marker", "mk", "i")} <= by
    assert [e["args"]["ctr"] for e in events if e["ph"] == "C"] == [5, 8, 7]
    relu = next(e for e in events if e["name"] == "relu" and e["ph"] == "B")
    assert relu["args"]["scope"] == "outer:inner:"


def test_errors_and_old_names(fresh):
    with pytest.raises(MXNetError):
        prof.set_state("go")
    with pytest.raises(MXNetError, match="Cannot find argument"):
        prof.set_config(profile_everything=True)
    with pytest.raises(MXNetError):
        prof.dumps(format="xml")
    prof.profiler_set_config("symbolic", str(fresh))
    prof.profiler_set_state("run")
    assert prof.STATE.symbolic
    prof.dump_profile()
    assert not prof.STATE.symbolic and fresh.exists()


def test_custom_operator_in_trace():
    from tests.operator import _custom_ops
    _custom_ops.define(mx)
    prof.set_state("run")
    mx.nd.Custom(mx.nd.ones((2,)), op_type="t_square").wait_to_read()
    prof.set_state("stop")
    names = [e["name"] for e in prof._events if e["ph"] == "B"]
    assert "Custom" in names and "broadcast_mul" in names  # the op and the ops it ran
