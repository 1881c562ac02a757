"""Symbol.tojson/save drop the amp_cast/amp_multicast nodes mixed precision inserted (MXNet
1.9.1's remove_amp_cast=True default), keeping the casts that are graph outputs; with
remove_amp_cast=False they stay (node lists checked against the oracle)."""
import json

import neomx as mx


def _graph():
    d, w = mx.sym.var("data"), mx.sym.var("w")
    c = mx.sym.amp_cast(d, dtype="float16", name="c1")
    m = mx.sym.amp_multicast(c, w, num_outputs=2, name="m1")
    out = mx.sym.FullyConnected(m[0], m[1], no_bias=True, num_hidden=3, name="fc")
    return mx.sym.amp_cast(out, dtype="float32", name="c2")


def test_tojson_removes_inner_amp_casts(tmp_path):
    out = _graph()
    nodes = json.loads(out.tojson())["nodes"]
    assert [(n["op"], n["name"], n["inputs"]) for n in nodes] == [
        ("null", "data", []), ("null", "w", []),
        ("FullyConnected", "fc", [[0, 0, 0], [1, 0, 0]]),
        ("amp_cast", "c2", [[2, 0, 0]])]
    assert len(json.loads(out.tojson(remove_amp_cast=False))["nodes"]) == 6
    out.save(str(tmp_path / "s.json"))
    assert mx.sym.load(str(tmp_path / "s.json")).tojson() == out.tojson()
    out.save(str(tmp_path / "k.json"), remove_amp_cast=False)
    assert len(json.loads((tmp_path / "k.json").read_text())["nodes"]) == 6


def test_graph_without_casts_is_unchanged():
    s = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc")
    assert s._without_amp_casts() is s
