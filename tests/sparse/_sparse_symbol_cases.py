"""Scenarios of sparse storage in symbols, executors and Module, written once against the
``mx`` they are given: ``tools/make_golden_sparse_symbol.py`` runs them in MXNet 1.9.1 and
records the results (tests/golden/sparse_symbol/cases.json); tests/sparse/test_sparse_symbol.py
and test_sparse_module.py run them with neomx and compare. Only numpy and the given ``mx``
are used here (no neomx, no mxnet import).

Every scenario returns JSON-able values: arrays as :func:`rec` (storage type, dense value,
stored row indices), errors as ``{"error": <first line of the message, tail>}``.
"""
import json
import os
import re
import tempfile
import warnings

import numpy as np

CSR = (np.array([1., 2., -1., 3.], np.float32), np.array([0, 2, 2, 4]), np.array([0, 2, 2, 4]))
W62 = np.arange(1, 13, dtype=np.float32).reshape(6, 2) / 4  # (every row stored when sparse)


def rec(a):
    if a is None:
        return None
    r = {"stype": a.stype, "shape": list(a.shape), "value": a.asnumpy().astype(np.float64).tolist()}
    if a.stype == "row_sparse":
        r["indices"] = a.indices.asnumpy().tolist()
    return r


def err(e):
    lines = [ln.strip() for ln in str(e).split("\n") if ln.strip()] or [""]
    keys = ("Check failed", "not implemented", "Cannot")
    line = next((ln for ln in lines if any(k in ln for k in keys)), lines[-1])
    line = re.sub(r"^.*?\.(cc|h):\d+: ", "", line.split("MXNetError: ")[-1])
    return {"error": line[-90:]}


def _csr(mx):
    return mx.nd.sparse.csr_matrix(CSR, shape=(3, 6))


def _stypes(ex):
    return {"args": [[n, a.stype] for n, a in ex.arg_dict.items()],
            "grads": None if ex.grad_arrays is None else
            [[n, None if g is None else g.stype] for n, g in ex.grad_dict.items()],
            "outs": [o.stype for o in ex.outputs]}


# --- symbols ----------------------------------------------------------------------------------
def symbol_json(mx):
    out = {}
    with mx.name.NameManager():
        x = mx.sym.Variable("x", stype="csr")
        w = mx.sym.Variable("w", stype="row_sparse", shape=(6, 2), init=mx.init.Normal(0.01))
        d = mx.sym.Variable("d", stype="default")
        out["variables"] = json.loads(mx.sym.Group([x, w, d]).tojson())
        out["attrs"] = [x.list_attr(), w.list_attr(), d.list_attr(), x.attr("__storage_type__")]
        y = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), mx.sym.Variable("b", shape=(1,)))
        out["dot"] = json.loads(y.tojson())
        e = mx.sym.contrib.SparseEmbedding(mx.sym.Variable("i"), input_dim=6, output_dim=2,
                                           name="semb")
        out["sparse_embedding"] = json.loads(e.tojson())
        out["sparse_embedding_args"] = e.list_arguments()
        s = mx.sym.sparse.retain(mx.sym.Variable("r", stype="row_sparse"), mx.sym.Variable("k"))
        out["retain"] = [s.list_arguments(), json.loads(s.tojson())["nodes"][-1]["op"]]
        out["roundtrip"] = json.loads(mx.sym.load_json(y.tojson()).tojson())
    out["names"] = sorted(n for n in dir(mx.sym.sparse)
                          if not n.startswith("__") and callable(getattr(mx.sym.sparse, n)))
    out["has_infer_storage_type"] = hasattr(mx.sym.Symbol, "infer_storage_type")
    return out


# --- binding ----------------------------------------------------------------------------------
def bind_stypes(mx):
    V = mx.sym.Variable
    x, w = V("x", stype="csr"), V("w", stype="row_sparse")
    cases = {
        "dot_attr": lambda: mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(3, 6), w=(6, 2)),
        "dot_stype_dict": lambda: mx.sym.dot(V("x"), V("w")).simple_bind(
            mx.cpu(), x=(3, 6), w=(6, 2), stype_dict={"x": "csr", "w": "row_sparse"}),
        "dot_dense_w": lambda: mx.sym.dot(V("x"), V("w")).simple_bind(
            mx.cpu(), x=(3, 6), w=(6, 2), stype_dict={"x": "csr", "w": "default"}),
        "dot_x_attr_only": lambda: mx.sym.dot(x, V("w")).simple_bind(mx.cpu(), x=(3, 6), w=(6, 2)),
        "dot_transpose_a": lambda: mx.sym.dot(x, w, transpose_a=True).simple_bind(
            mx.cpu(), x=(3, 6), w=(3, 2)),
        "dot_times_2": lambda: (mx.sym.dot(x, w) * 2).simple_bind(mx.cpu(), x=(3, 6), w=(6, 2)),
        "dot_plus_dot": lambda: (mx.sym.dot(x, w) + mx.sym.dot(x, w)).simple_bind(
            mx.cpu(), x=(3, 6), w=(6, 2)),
        "fc_csr": lambda: mx.sym.FullyConnected(x, num_hidden=2, name="fc").simple_bind(
            mx.cpu(), x=(3, 6)),
        "embedding_sparse_grad": lambda: mx.sym.Embedding(
            V("d"), input_dim=6, output_dim=2, sparse_grad=True, name="emb").simple_bind(
            mx.cpu(), d=(4,)),
        "embedding_sparse_grad_add": lambda: mx.sym.Embedding(
            V("d"), input_dim=6, output_dim=2, sparse_grad=True, name="emb").simple_bind(
            mx.cpu(), grad_req="add", d=(4,)),
        "embedding_dense_grad": lambda: mx.sym.Embedding(
            V("d"), input_dim=6, output_dim=2, name="emb").simple_bind(mx.cpu(), d=(4,)),
        "sparse_embedding": lambda: mx.sym.contrib.SparseEmbedding(
            V("d"), input_dim=6, output_dim=2, name="semb").simple_bind(mx.cpu(), d=(4,)),
        "linreg_dot": lambda: mx.sym.LinearRegressionOutput(
            mx.sym.sparse.dot(x, w), V("label")).simple_bind(mx.cpu(), x=(3, 6), w=(6, 1),
                                                              label=(3, 1)),
        "linreg_csr_label": lambda: mx.sym.LinearRegressionOutput(x, V("label", stype="csr")
                                                                  ).simple_bind(
            mx.cpu(), x=(3, 6), label=(3, 6)),
        "rsp_add": lambda: (V("a", stype="row_sparse") + V("b", stype="row_sparse")).simple_bind(
            mx.cpu(), a=(6, 2), b=(6, 2)),
        "req_null": lambda: mx.sym.dot(x, w).simple_bind(mx.cpu(), grad_req="null", x=(3, 6),
                                                         w=(6, 2)),
        "req_dict": lambda: mx.sym.dot(x, w).simple_bind(mx.cpu(), grad_req={"w": "add",
                                                                              "x": "null"},
                                                         x=(3, 6), w=(6, 2)),
        "var_only": lambda: V("z", stype="csr").simple_bind(mx.cpu(), z=(2, 3)),
        "cast_storage_csr": lambda: mx.sym.cast_storage(V("a"), stype="csr").simple_bind(
            mx.cpu(), a=(2, 3)),
        "cast_storage_rsp": lambda: mx.sym.cast_storage(V("a"), stype="row_sparse").simple_bind(
            mx.cpu(), a=(2, 3)),
        "clip_dense": lambda: mx.sym.clip(V("a"), 1, 2).simple_bind(mx.cpu(), a=(2, 3)),
    }
    out = {}
    for name, make in cases.items():
        try:
            out[name] = _stypes(make())
        except Exception as e:  # noqa: BLE001
            out[name] = err(e)
    return out


# --- running executors ------------------------------------------------------------------------
def executor_values(mx):
    V = mx.sym.Variable
    out = {}
    xs, wv = _csr(mx), mx.nd.array(W62)
    x, w = V("x", stype="csr"), V("w", stype="row_sparse")
    for req in ("write", "add"):
        steps = []
        try:
            ex = mx.sym.dot(x, w).simple_bind(mx.cpu(), grad_req={"w": req}, x=(3, 6), w=(6, 2))
            xs.copyto(ex.arg_dict["x"])
            wv.tostype("row_sparse").copyto(ex.arg_dict["w"])
            for it in range(2):
                y = ex.forward(is_train=True)[0]
                ex.backward(mx.nd.ones((3, 2)) * (it + 1))
                steps.append({"out": rec(y), "grad": rec(ex.grad_dict["w"])})
            out[f"dot_{req}"] = steps
        except Exception as e:  # noqa: BLE001
            out[f"dot_{req}"] = steps + [err(e)]
    ex = mx.sym.dot(x, V("w")).simple_bind(mx.cpu(), x=(3, 6), w=(6, 2))
    ex.forward(is_train=True, x=xs, w=wv)
    ex.backward(mx.nd.ones((3, 2)))
    out["dot_dense_w"] = {"out": rec(ex.outputs[0]), "grad_w": rec(ex.grad_dict["w"]),
                          "grad_x": rec(ex.grad_dict["x"])}
    ex = mx.sym.dot(x, w, transpose_a=True).simple_bind(mx.cpu(), x=(3, 6), w=(3, 2))
    xs.copyto(ex.arg_dict["x"])
    mx.nd.array(W62[:3]).tostype("row_sparse").copyto(ex.arg_dict["w"])
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((6, 2)).tostype("row_sparse"))
    out["dot_transpose_a"] = {"out": rec(ex.outputs[0]), "grad_w": rec(ex.grad_dict["w"])}
    for kind in ("embedding", "sparse_embedding"):
        for req in ("write", "add"):
            steps = []
            try:
                if kind == "embedding":
                    e = mx.sym.Embedding(V("d"), input_dim=6, output_dim=2, sparse_grad=True,
                                         name="emb")
                else:
                    e = mx.sym.contrib.SparseEmbedding(V("d"), input_dim=6, output_dim=2,
                                                       name="emb")
                ex = e.simple_bind(mx.cpu(), grad_req={"emb_weight": req}, d=(4,))
                ex.arg_dict["d"][:] = mx.nd.array([0, 3, 3, 5])
                ex.arg_dict["emb_weight"][:] = wv
                for it in range(2):
                    y = ex.forward(is_train=True)[0]
                    ex.backward(mx.nd.ones((4, 2)) * (it + 1))
                    steps.append({"out": rec(y), "grad": rec(ex.grad_dict["emb_weight"])})
                out[f"{kind}_{req}"] = steps
            except Exception as e:  # noqa: BLE001
                out[f"{kind}_{req}"] = steps + [err(e)]
    for stype in ("csr", "row_sparse"):
        ex = mx.sym.cast_storage(V("a"), stype=stype).simple_bind(mx.cpu(), a=(3, 3))
        y = ex.forward(is_train=True, a=mx.nd.array([[0, 1, 0], [0, 0, 0], [2, 0, 3]]))[0]
        ex.backward(mx.nd.array(np.arange(9).reshape(3, 3)).tostype(stype))
        out[f"cast_storage_{stype}"] = {"out": rec(y), "grad": rec(ex.grad_dict["a"])}
    args = {"x": xs, "w": wv.tostype("row_sparse")}
    ex = mx.sym.dot(x, w).bind(mx.cpu(), args,
                               args_grad={"w": mx.nd.sparse.zeros("row_sparse", (6, 2))})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((3, 2)))
    out["bind_rsp_grad"] = {"out": rec(ex.outputs[0]), "grad": rec(ex.grad_dict["w"]),
                            "stypes": _stypes(ex)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = mx.sym.dot(x, w).bind(mx.cpu(), args, args_grad={"w": mx.nd.zeros((6, 2))})
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((3, 2)))
    out["bind_dense_grad"] = {"grad": rec(ex.grad_dict["w"]), "stypes": _stypes(ex)}
    ex = mx.sym.dot(x, w).bind(mx.cpu(), args)
    out["bind_no_grad"] = {"out": rec(ex.forward()[0]), "grads": ex.grad_arrays is None}
    out["eval"] = rec(mx.sym.sparse.dot(x, w).eval(mx.cpu(), **args)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = mx.sym.FullyConnected(x, num_hidden=2, name="fc").simple_bind(mx.cpu(), x=(3, 6))
        xs.copyto(ex.arg_dict["x"])
        ex.arg_dict["fc_weight"][:] = mx.nd.array(np.arange(12).reshape(2, 6) / 10)
        ex.arg_dict["fc_bias"][:] = 1
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((3, 2)))
    out["fc_csr"] = {"out": rec(ex.outputs[0]),
                     "grads": {k: rec(v) for k, v in sorted(ex.grad_dict.items())}}
    for op in ("LinearRegressionOutput", "LogisticRegressionOutput"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = getattr(mx.sym, op)(x, V("label", stype="csr"), name="out")
            ex = s.simple_bind(mx.cpu(), x=(3, 6), label=(3, 6))
            xs.copyto(ex.arg_dict["x"])
            mx.nd.sparse.csr_matrix((CSR[0] * 0.5, CSR[1], CSR[2]), shape=(3, 6)).copyto(
                ex.arg_dict["label"])
            ex.forward(is_train=True)
            ex.backward()
        out[f"{op}_csr"] = {"out": rec(ex.outputs[0]),
                            "grads": {k: rec(v) for k, v in sorted(ex.grad_dict.items())}}
        s = getattr(mx.sym, op)(mx.sym.sparse.dot(x, w), V("label"), name="out")
        ex = s.simple_bind(mx.cpu(), x=(3, 6), w=(6, 1), label=(3, 1))
        xs.copyto(ex.arg_dict["x"])
        mx.nd.array(W62[:, :1]).tostype("row_sparse").copyto(ex.arg_dict["w"])
        ex.arg_dict["label"][:] = mx.nd.array([[1], [0], [1]])
        ex.forward(is_train=True)
        ex.backward()
        out[f"{op}_dot"] = {"out": rec(ex.outputs[0]),
                            "grads": {k: rec(v) for k, v in sorted(ex.grad_dict.items())}}
    return out


def nd_sparse_embedding(mx):
    out = {}
    for stype in ("row_sparse", "default"):
        w = mx.nd.array(W62)
        w.attach_grad(stype=stype)
        with mx.autograd.record():
            y = mx.nd.contrib.SparseEmbedding(mx.nd.array([1, 4, 4]), w, input_dim=6,
                                              output_dim=2)
        try:
            y.backward()
            out[stype] = {"out": rec(y), "grad": rec(w.grad)}
        except Exception as e:  # noqa: BLE001
            out[stype] = err(e)
    out["rsp_weight"] = rec(mx.nd.contrib.SparseEmbedding(
        mx.nd.array([0, 2]), mx.nd.array(W62).tostype("row_sparse"), input_dim=6, output_dim=2))
    return out


# --- Module -----------------------------------------------------------------------------------
NF, BATCH, N = 8, 4, 12


def _data():
    rng = np.random.RandomState(0)
    dense = (rng.uniform(0, 1, (N, NF)) > 0.7) * rng.uniform(-1, 1, (N, NF))
    return dense.astype(np.float32), (rng.uniform(0, 1, (N,)) > 0.5).astype(np.float32)


def linear_model(mx):
    """MXNet's sparse linear classification example's model (its weight initializer a
    constant, for reproducible numbers)."""
    x = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("weight", shape=(NF, 1), init=mx.init.Constant(0.1),
                             stype="row_sparse")
    bias = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, weight), bias)
    label = mx.sym.Variable("label")
    return mx.sym.LogisticRegressionOutput(pred, mx.sym.reshape(label, shape=(-1, 1)), name="out")


def _batches(mx, dense, labels):
    for i in range(0, N, BATCH):
        yield mx.io.DataBatch(data=[mx.nd.array(dense[i:i + BATCH]).tostype("csr")],
                              label=[mx.nd.array(labels[i:i + BATCH])])


def module_fit(mx, kvstore, contexts=1, optimizer="sgd", row_ids="batch"):
    dense, labels = _data()
    ctx = [mx.cpu(i) for i in range(contexts)] if contexts > 1 else mx.cpu()
    mod = mx.mod.Module(linear_model(mx), data_names=["data"], label_names=["label"], context=ctx)
    mod.bind(data_shapes=[("data", (BATCH, NF))], label_shapes=[("label", (BATCH,))])
    res = {"param_stypes": [a[0].stype for a in mod._exec_group.param_arrays],
           "grad_stypes": [a[0].stype for a in mod._exec_group.grad_arrays]}
    mod.init_params(initializer=mx.init.Constant(0.1))
    kv = mx.kv.create(kvstore) if kvstore not in (None, "str_local") else \
        ("local" if kvstore == "str_local" else None)
    params = {"learning_rate": 0.5, "wd": 0.01, "rescale_grad": 1.0 / BATCH}
    if optimizer == "sgd":
        params["momentum"] = 0.9
    mod.init_optimizer(kvstore=kv, optimizer=optimizer, optimizer_params=params)
    res["update_on_kvstore"] = bool(mod._update_on_kvstore)

    def fn(batch):
        if row_ids == "batch":
            return {"weight": batch.data[0].indices}
        return {"weight": mx.nd.arange(0, NF, dtype="int64")}
    steps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in range(2):
            for batch in _batches(mx, dense, labels):
                mod.prepare(batch, sparse_row_id_fn=fn)
                mod.forward_backward(batch)
                grad = mod._exec_group.grad_arrays[0][0]
                steps.append({"out": mod.get_outputs()[0].asnumpy().ravel().tolist(),
                              "grad": rec(grad)})
                mod.update()
        args, _ = mod.get_params()
    res["steps"] = steps
    res["weight"] = rec(args["weight"])
    res["bias"] = rec(args["bias"])
    d = tempfile.mkdtemp()
    prefix = os.path.join(d, "ck")
    mod.save_checkpoint(prefix, 1)
    _, loaded, _ = mx.model.load_checkpoint(prefix, 1)
    res["loaded"] = {k: rec(v) for k, v in sorted(loaded.items())}
    m2 = mx.mod.Module.load(prefix, 1, data_names=["data"], label_names=["label"])
    m2.bind(data_shapes=[("data", (BATCH, NF))], label_shapes=[("label", (BATCH,))],
            for_training=False)
    m2.init_params()
    res["loaded_module_weight"] = rec(m2.get_params()[0]["weight"])
    batch = next(_batches(mx, dense, labels))
    m2.forward(batch, is_train=False)
    res["predict"] = m2.get_outputs()[0].asnumpy().ravel().tolist()
    return res


def module_embedding(mx):
    """Embedding(sparse_grad=True) with a dense weight in a Module: row_sparse gradients,
    lazy updates of the rows they hold."""
    data = mx.sym.Variable("data")
    emb = mx.sym.Embedding(data, input_dim=6, output_dim=2, sparse_grad=True, name="emb")
    out = mx.sym.LinearRegressionOutput(mx.sym.sum(emb, axis=1), mx.sym.Variable("label"),
                                        name="out")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("label", (2, 2))])
    mod.init_params(initializer=mx.init.Constant(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "wd": 0.1})
    res = {"grad_stype": mod._exec_group.grad_arrays[0][0].stype, "steps": []}
    for idx in ([[0, 3, 3], [5, 0, 1]], [[2, 2, 2], [4, 4, 0]]):
        batch = mx.io.DataBatch(data=[mx.nd.array(idx)], label=[mx.nd.ones((2, 2))])
        mod.forward_backward(batch)
        res["steps"].append(rec(mod._exec_group.grad_arrays[0][0]))
        mod.update()
    res["weight"] = rec(mod.get_params()[0]["emb_weight"])
    return res


def module_matrix_factorization(mx, kvstore="local"):
    """MXNet's sparse matrix factorization example pattern: row_sparse embedding weights
    (Embedding(sparse_grad=True) over row_sparse variables), rows pulled per batch."""
    users, items, k = 5, 4, 2
    uw = mx.sym.Variable("user_weight", stype="row_sparse", shape=(users, k))
    iw = mx.sym.Variable("item_weight", stype="row_sparse", shape=(items, k))
    u = mx.sym.Embedding(mx.sym.Variable("user"), weight=uw, input_dim=users, output_dim=k,
                         sparse_grad=True)
    i = mx.sym.Embedding(mx.sym.Variable("item"), weight=iw, input_dim=items, output_dim=k,
                         sparse_grad=True)
    net = mx.sym.LinearRegressionOutput(mx.sym.sum(u * i, axis=1), mx.sym.Variable("score"))
    mod = mx.mod.Module(net, data_names=["user", "item"], label_names=["score"])
    mod.bind(data_shapes=[("user", (3,)), ("item", (3,))], label_shapes=[("score", (3,))])
    rng = np.random.RandomState(1)
    init = {"user_weight": mx.nd.array(rng.uniform(-1, 1, (users, k))).tostype("row_sparse"),
            "item_weight": mx.nd.array(rng.uniform(-1, 1, (items, k))).tostype("row_sparse")}
    mod.init_params(arg_params=init)
    mod.init_optimizer(kvstore=mx.kv.create(kvstore) if kvstore else None, optimizer="adam",
                       optimizer_params={"learning_rate": 0.1, "rescale_grad": 1 / 3.})
    res = {"grad_stypes": [g[0].stype for g in mod._exec_group.grad_arrays], "steps": []}
    batches = [([0, 2, 2], [1, 3, 0], [1., 0., 2.]), ([4, 1, 0], [2, 2, 3], [0.5, 1., -1.])]
    for epoch in range(2):
        for us, its, sc in batches:
            batch = mx.io.DataBatch(data=[mx.nd.array(us), mx.nd.array(its)],
                                    label=[mx.nd.array(sc)])
            mod.prepare(batch, sparse_row_id_fn=lambda b: {"user_weight": b.data[0],
                                                           "item_weight": b.data[1]})
            mod.forward_backward(batch)
            res["steps"].append({"out": mod.get_outputs()[0].asnumpy().tolist(),
                                 "grads": [rec(g[0]) for g in mod._exec_group.grad_arrays]})
            mod.update()
    args = mod.get_params()[0]
    res["weights"] = {k: rec(v) for k, v in sorted(args.items())}
    return res


def module_cases(mx):
    out = {}
    for name, kw in (("kv_local", {"kvstore": "local"}),
                     ("kv_local_adam", {"kvstore": "local", "optimizer": "adam"}),
                     ("no_kv", {"kvstore": None}),
                     ("str_local", {"kvstore": "str_local"}),
                     ("two_devices", {"kvstore": "local", "contexts": 2}),
                     ("all_rows", {"kvstore": "local", "row_ids": "all"})):
        try:
            out[name] = module_fit(mx, **kw)
        except Exception as e:  # noqa: BLE001
            out[name] = err(e)
    out["embedding"] = module_embedding(mx)
    for kv in ("local", None):
        try:
            out[f"matrix_factorization_{kv}"] = module_matrix_factorization(mx, kv)
        except Exception as e:  # noqa: BLE001
            out[f"matrix_factorization_{kv}"] = err(e)
    return out


SCENARIOS = {"symbol_json": symbol_json, "bind_stypes": bind_stypes,
             "executor_values": executor_values, "nd_sparse_embedding": nd_sparse_embedding,
             "module": module_cases}
