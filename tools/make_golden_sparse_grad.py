"""Golden values of sparse gradients, lazy updates and row_sparse_pull from MXNet 1.9.1
(tests/golden/sparse_grad/cases.json; tests/sparse/test_sparse_grad.py and test_lazy_update.py).

Run with the oracle's interpreter: ``tools/mxnet-oracle tools/make_golden_sparse_grad.py``.
"""
import json
import os
import sys
import warnings

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden",
                   "sparse_grad", "cases.json")
warnings.simplefilter("ignore")


def rec(a):
    r = {"stype": a.stype, "value": a.asnumpy().tolist()}
    if a.stype == "row_sparse":
        r["indices"] = a.indices.asnumpy().tolist()
    return r


def grads():
    out = {}
    w0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 4
    idx = mx.nd.array([[0, 3], [3, 5]])
    for stype, sg in (("default", False), ("row_sparse", True), ("default", True),
                      ("row_sparse", False)):
        w = mx.nd.array(w0)
        w.attach_grad(stype=stype)
        with mx.autograd.record():
            z = (mx.nd.Embedding(idx, w, input_dim=6, output_dim=2, sparse_grad=sg) ** 2).sum()
        try:
            z.backward()
            out[f"embedding_{stype}_{sg}"] = rec(w.grad)
        except mx.base.MXNetError as e:
            out[f"embedding_{stype}_{sg}"] = {"error": str(e).split("\n")[0][-90:]}
    x = mx.nd.sparse.csr_matrix(([1., 2., 3., -1.], [0, 2, 4, 2], [0, 2, 2, 4]), shape=(3, 6))
    for stype in ("default", "row_sparse"):
        w = mx.nd.array(np.arange(6, dtype=np.float32).reshape(6, 1))
        w.attach_grad(stype=stype)
        with mx.autograd.record():
            y = mx.nd.dot(x, w)
            loss = ((y - 1) ** 2).sum()
        loss.backward()
        out[f"dot_{stype}"] = rec(w.grad)
    w = mx.nd.array([[1., 2], [0, 0], [3, 4]])
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = w * w
    y.backward()
    out["dense_op"] = rec(w.grad)
    w = mx.nd.array(w0)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = (mx.nd.Embedding(mx.nd.array([1]), w, input_dim=6, output_dim=2, sparse_grad=True)
             + mx.nd.Embedding(mx.nd.array([4, 4]), w, input_dim=6, output_dim=2,
                               sparse_grad=True).sum(axis=0, keepdims=True))
    y.backward()
    out["twice"] = rec(w.grad)
    return out


def lazy_updates():
    out = {}
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    gsteps = [(rng.uniform(-1, 1, (2, 3)).astype(np.float32), [0, 3]),
              (rng.uniform(-1, 1, (2, 3)).astype(np.float32), [1, 3]),
              (rng.uniform(-1, 1, (1, 3)).astype(np.float32), [4])]
    configs = {
        "sgd": ("sgd", dict(learning_rate=0.1, wd=0.01)),
        "sgd_nolazy": ("sgd", dict(learning_rate=0.1, wd=0.01, lazy_update=False)),
        "sgd_mom": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
        "sgd_mom_nolazy": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01,
                                       lazy_update=False)),
        "adam": ("adam", dict(learning_rate=0.01, wd=0.01)),
        "adam_nolazy": ("adam", dict(learning_rate=0.01, wd=0.01, lazy_update=False)),
        "adagrad": ("adagrad", dict(learning_rate=0.1)),
        "adagrad_wd": ("adagrad", dict(learning_rate=0.1, wd=0.1)),
        "ftrl": ("ftrl", dict(learning_rate=0.1, wd=0.01)),
        "sgd_clip": ("sgd", dict(learning_rate=0.1, clip_gradient=0.3, rescale_grad=2.0)),
    }
    for name, (opt_name, kw) in configs.items():
        opt = mx.optimizer.create(opt_name, **kw)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.array(w0)
        try:
            for data, rows in gsteps:
                g = mx.nd.sparse.row_sparse_array((data, rows), shape=(5, 3))
                upd(0, g, w)
            out[name] = {"weight": w.asnumpy().tolist()}
        except mx.base.MXNetError as e:
            out[name] = {"error": str(e).split("\n")[0][-90:]}
    out["inputs"] = {"w0": w0.tolist(), "steps": [[d.tolist(), r] for d, r in gsteps]}
    return out


def kvstore():
    out = {}
    w = np.arange(15, dtype=np.float32).reshape(5, 3)
    for kind in ("local", "device"):
        kv = mx.kv.create(kind)
        kv.init("w", mx.nd.array(w).tostype("row_sparse"))
        res = mx.nd.sparse.zeros("row_sparse", (5, 3))
        kv.row_sparse_pull("w", out=res, row_ids=mx.nd.array([3, 1, 3]))
        out[f"pull_{kind}"] = rec(res)
        g = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [0, 3]), shape=(5, 3))
        g2 = mx.nd.sparse.row_sparse_array((np.ones((1, 3), np.float32) * 2, [3]), shape=(5, 3))
        kv.push("w", [g, g2])
        res = mx.nd.sparse.zeros("row_sparse", (5, 3))
        kv.row_sparse_pull("w", out=res, row_ids=mx.nd.array([0, 1, 3]))
        out[f"push_pull_{kind}"] = rec(res)
        kv = mx.kv.create(kind)
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
        kv.init("w", mx.nd.array(w).tostype("row_sparse"))
        kv.push("w", [g, g2])
        res = mx.nd.sparse.zeros("row_sparse", (5, 3))
        kv.row_sparse_pull("w", out=res, row_ids=mx.nd.arange(5))
        out[f"update_{kind}"] = rec(res)
    return out


def gluon():
    out = {}
    w0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 4
    batches = [[[0, 3], [3, 5]], [[1, 1], [0, 2]], [[4, 0], [5, 5]]]
    for name in ("embedding", "sparse_embedding"):
        for opt, kw in (("sgd", {"learning_rate": 0.1, "wd": 0.01, "momentum": 0.9}),
                        ("adam", {"learning_rate": 0.1})):
            if name == "embedding":
                net = mx.gluon.nn.Embedding(6, 2, sparse_grad=True)
            else:
                net = mx.gluon.contrib.nn.SparseEmbedding(6, 2)
            net.initialize(mx.init.Constant(mx.nd.array(w0)))
            trainer = mx.gluon.Trainer(net.collect_params(), opt, kw)
            grads = []
            for b in batches:
                x = mx.nd.array(b)
                with mx.autograd.record():
                    loss = (net(x) ** 2).sum()
                loss.backward()
                grads.append(net.weight.grad().indices.asnumpy().tolist())
                trainer.step(2)
            if name == "embedding":
                w = net.weight.data()
            else:
                w = net.weight.row_sparse_data(mx.nd.arange(6))
            out[f"{name}_{opt}"] = {"weight": w.asnumpy().tolist(), "grad_rows": grads,
                                    "update_on_kvstore": trainer._update_on_kvstore,
                                    "weight_stype": w.stype}
    return out


def main():
    res = {"mxnet": mx.__version__, "script": "tools/make_golden_sparse_grad.py",
           "grads": grads(), "lazy": lazy_updates(), "gluon": gluon()}
    try:
        res["kvstore"] = kvstore()
    except Exception as e:  # noqa: BLE001
        print("kvstore:", e, file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
