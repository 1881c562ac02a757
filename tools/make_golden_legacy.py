"""Golden values for symbol files saved by old MXNet versions (0.8 to 1.0), as MXNet 1.9.1
upgrades them on load.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_legacy.py

Writes to ``tests/golden/legacy/``: the old-format files themselves (``<case>-symbol.json``,
written here in the layout of their era: 0.8 nodes with ``param``/``attr``/``backward_source_id``
and two-element inputs, no ``mxnet_version``; 0.9 nodes with ``attr``), a checkpoint
``lenet08-0001.params`` for the 0.8 network, and ``expected.json``: per case what MXNet 1.9.1 gives
after loading (arguments, auxiliary states, the re-saved JSON, inferred shapes, and for the
checkpoint the network's output on a fixed input) or its error.
"""
import copy
import json
import os

import numpy as np

from _oracle_common import err_info, golden_dir, jsonable, rng_for, write_json

import mxnet as mx


def v08_node(op, name, inputs=(), param=None, attr=None):
    node = {"op": op, "param": param or {}, "name": name, "inputs": [list(i) for i in inputs],
            "backward_source_id": -1}
    if attr:
        node["attr"] = attr
    return node


def lenet08():
    """A small convnet as MXNet 0.8 saved it: BatchNorm without auxiliary inputs, user
    attributes (lr_mult, wd_mult, ctx_group) unhidden, the old ``Softmax`` op name."""
    n = [
        v08_node("null", "data"),
        v08_node("null", "conv_weight", attr={"lr_mult": "2.0", "ctx_group": "dev1"}),
        v08_node("null", "conv_bias"),
        v08_node("Convolution", "conv", [(0, 0), (1, 0), (2, 0)],
                 {"kernel": "(3,3)", "num_filter": "8", "no_bias": "False", "pad": "(1,1)",
                  "stride": "(1,1)", "dilate": "(1,1)", "num_group": "1", "workspace": "512"},
                 {"ctx_group": "dev1", "wd_mult": "0.5"}),
        v08_node("null", "bn_gamma"),
        v08_node("null", "bn_beta"),
        v08_node("BatchNorm", "bn", [(3, 0), (4, 0), (5, 0)],
                 {"eps": "0.001", "fix_gamma": "False", "momentum": "0.9",
                  "use_global_stats": "False"}),
        v08_node("Activation", "relu", [(6, 0)], {"act_type": "relu"}),
        v08_node("Pooling", "pool", [(7, 0)], {"kernel": "(2,2)", "pool_type": "max",
                                               "stride": "(2,2)"}),
        v08_node("Flatten", "flatten", [(8, 0)]),
        v08_node("null", "fc_weight"),
        v08_node("null", "fc_bias"),
        v08_node("FullyConnected", "fc", [(9, 0), (10, 0), (11, 0)],
                 {"no_bias": "False", "num_hidden": "10"}),
        v08_node("null", "softmax_label"),
        v08_node("Softmax", "softmax", [(12, 0), (13, 0)],
                 {"grad_scale": "1", "multi_output": "False"}),
    ]
    return {"nodes": n, "arg_nodes": [i for i, x in enumerate(n) if x["op"] == "null"],
            "heads": [[14, 0]]}


def sum08():
    """ElementWiseSum and Concat of the 0.8 era (old op names, parameters as strings)."""
    n = [
        v08_node("null", "a"), v08_node("null", "b"),
        v08_node("ElementWiseSum", "sum", [(0, 0), (1, 0)], {"num_args": "2"}),
        v08_node("Concat", "cat", [(2, 0), (0, 0)], {"num_args": "2", "dim": "1"}),
        v08_node("SliceChannel", "split", [(3, 0)], {"num_outputs": "2", "axis": "1"}),
    ]
    return {"nodes": n, "arg_nodes": [0, 1], "heads": [[4, 0], [4, 1]]}


def to_v09(doc, version):
    """The same graph in the 0.9 layout: params and attributes together under ``attr``."""
    d = copy.deepcopy(doc)
    for node in d["nodes"]:
        attr = dict(node.pop("param"))
        attr.update(node.pop("attr", {}))
        node.pop("backward_source_id")
        if attr:
            node["attr"] = attr
        node["inputs"] = [[i, j, 0] for i, j in node["inputs"]]
    d["attrs"] = {"mxnet_version": ["int", version]}
    return d


def main():
    out = golden_dir("legacy")
    os.makedirs(out, exist_ok=True)
    files = {"lenet08": lenet08(), "sum08": sum08(), "sum09": to_v09(sum08(), 901)}
    shapes = {"lenet08": {"data": (2, 3, 8, 8)}, "sum08": {"a": (2, 3), "b": (2, 3)},
              "sum09": {"a": (2, 3), "b": (2, 3)}}
    expected = {"mxnet_version": mx.__version__, "generator": "tools/make_golden_legacy.py",
                "cases": {}}
    for case, doc in files.items():
        path = os.path.join(out, f"{case}-symbol.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        rec = {}
        try:
            sym = mx.sym.load(path)
            rec["arguments"] = sym.list_arguments()
            rec["auxiliary_states"] = sym.list_auxiliary_states()
            rec["outputs"] = sym.list_outputs()
            rec["json"] = json.loads(sym.tojson())
            rec["attr_dict"] = sym.attr_dict()
            rec["infer_shape"] = jsonable(sym.infer_shape(**shapes[case]))
        except mx.base.MXNetError as e:
            rec.update(err_info(e))
        expected["cases"][case] = rec

    # a checkpoint of the 0.8 network: its parameters saved by MXNet 1.9.1, and its output
    sym = mx.sym.load(os.path.join(out, "lenet08-symbol.json"))
    arg_shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 8, 8))
    r = rng_for("legacy-lenet08")
    args = {n: mx.nd.array(r.uniform(-0.5, 0.5, s)) for n, s in zip(sym.list_arguments(), arg_shapes)
            if n not in ("data", "softmax_label")}
    aux = {"bn_moving_mean": mx.nd.array(r.uniform(-0.1, 0.1, aux_shapes[0])),
           "bn_moving_var": mx.nd.array(r.uniform(0.5, 1.5, aux_shapes[1]))}
    mx.nd.save(os.path.join(out, "lenet08-0001.params"),
               {**{"arg:" + k: v for k, v in args.items()}, **{"aux:" + k: v for k, v in aux.items()}})
    x = r.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    _, arg_params, aux_params = mx.model.load_checkpoint(os.path.join(out, "lenet08"), 1)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"], context=mx.cpu())
    mod.bind(data_shapes=[("data", x.shape)], for_training=False)
    mod.set_params(arg_params, aux_params)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    expected["checkpoint"] = {"input": x.tolist(), "output": mod.get_outputs()[0].asnumpy().tolist()}
    write_json(os.path.join(out, "expected.json"), expected)
    print("wrote", out)


if __name__ == "__main__":
    main()
