"""Golden records for Gluon's Blocks (tests/gluon/test_block_golden.py), from MXNet 1.9.1.

    tools/mxnet-oracle tools/make_golden_gluon_block.py

Writes tests/golden/gluon_block/: ``records.json`` (parameter names/shapes, structural names,
outputs and gradients imperative and hybridized, error texts) and files MXNet wrote
(``<model>.params`` by save_parameters, ``<model>-symbol.json``/``-0000.params`` by export,
``<model>-legacy.params`` by collect_params().save).
"""
import json
import os
import sys
import warnings

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
import mxnet as mx
import numpy as np

sys.path.insert(0, os.path.join(common.ROOT, "tests", "gluon"))
import _models  # noqa: E402

OUT = common.golden_dir("gluon_block")
os.makedirs(OUT, exist_ok=True)
warnings.simplefilter("ignore")


def record_model(name, build):
    rec = {}
    for hyb in (False, True):
        with mx.name.NameManager():
            net, shapes = build(mx)
        out, xgrads, pgrads = _models.run(mx, net, shapes, hyb)
        key = "hybrid" if hyb else "imperative"
        rec[key] = {"out": out.tolist(), "xgrads": [g.tolist() for g in xgrads],
                    "pgrads": {k: v.tolist() for k, v in pgrads.items()}}
        rec["params"] = [[k, list(p.shape), p.grad_req] for k, p in net.collect_params().items()]
        rec["structural"] = sorted(net._collect_params_with_prefix().keys())
        rec["prefix"] = net.prefix
        net.save_parameters(os.path.join(OUT, f"{name}.params"))
        if hyb and name != "custom_block":
            net.export(os.path.join(OUT, name))
            if name != "no_scope":  # (its children are named outside its prefix)
                net.collect_params().save(os.path.join(OUT, f"{name}-legacy.params"),
                                          strip_prefix=net.prefix)
    return rec


def error_text(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e)]
    return None


def errors():
    nn = mx.gluon.nn
    errs = {}
    with mx.name.NameManager():
        d = nn.Dense(3)
        d.initialize()
        errs["deferred_data"] = error_text(lambda: d.weight.data())
        d2 = nn.Dense(3)
        errs["uninitialized_data"] = error_text(lambda: d2.weight.data())
        errs["change_type"] = error_text(lambda: setattr(d, "weight", 3))

        class Branchy(mx.gluon.HybridBlock):
            def hybrid_forward(self, F, x):
                if x.sum() > 0:
                    return x
                return -x
        b = Branchy()
        b.hybridize()
        errs["control_flow"] = error_text(lambda: b(mx.nd.ones((2,))))
        net, shapes = _models.hybrid_mlp(mx)
        net.initialize()
        net(mx.nd.ones(shapes[0]))
        other, _ = _models.custom_block(mx)
        other.initialize()
        errs["load_missing"] = error_text(
            lambda: other.load_parameters(os.path.join(OUT, "hybrid_mlp.params")))
        errs["bad_init_shape"] = error_text(
            lambda: mx.gluon.Parameter("p", shape=(2, 0)).initialize())
        errs["get_mismatch"] = error_text(
            lambda: net[0].params.get("weight", shape=(5, 5)))
    return errs


def main():
    records = {name: record_model(name, build) for name, build in _models.MODELS.items()}
    records["errors"] = errors()
    with open(os.path.join(OUT, "records.json"), "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)
    print("wrote", OUT, sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
