"""Golden values of optimizers with row_sparse gradients, the sparse update operators and the
graph (dgl) contrib operators on CSR inputs, from MXNet 1.9.1
(tests/golden/sparse_opt/cases.json; tests/sparse/test_sparse_opt.py and test_graph_ops.py).

Run with the oracle's interpreter from the repository root:
``tools/mxnet-oracle tools/make_golden_sparse_opt.py``.

The samplers are random; their cases here take every neighbour (``num_neighbor`` at least the
largest degree), which makes them deterministic. Entries of the sampler outputs past the number
of sampled vertices are uninitialised memory in MXNet and are not recorded.
"""
import os
import warnings

os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")

from _oracle_common import err_info, golden_dir, write_json  # noqa: E402

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(golden_dir("sparse_opt"), "cases.json")
warnings.simplefilter("ignore")

# Optimizer configurations: name -> (optimizer, kwargs). Run for three steps with row_sparse
# gradients on a dense (5, 3) weight; rows 2 never get a gradient.
OPTIMIZERS = {
    "sgd_mom_lazy": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "sgd_mom_std": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "sgd_mom_clip": ("sgd", dict(learning_rate=0.1, momentum=0.5, rescale_grad=2.0,
                                 clip_gradient=0.4)),
    "nag": ("nag", dict(learning_rate=0.1, wd=0.01)),
    "nag_mom": ("nag", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "signum": ("signum", dict(learning_rate=0.1, wd=0.01)),
    "signsgd": ("signum", dict(learning_rate=0.1, momentum=0.0, wd=0.01)),
    "rmsprop": ("rmsprop", dict(learning_rate=0.01, wd=0.01)),
    "rmsprop_centered": ("rmsprop", dict(learning_rate=0.01, centered=True, clip_weights=0.5)),
    "adadelta": ("adadelta", dict(wd=0.01)),
    "ftml": ("ftml", dict(learning_rate=0.05, wd=0.01)),
    "dcasgd": ("dcasgd", dict(learning_rate=0.1, wd=0.01)),
    "adamax": ("adamax", dict(wd=0.01)),
    "nadam": ("nadam", dict(wd=0.01)),
    "sgld_nonoise_check": None,  # (random: structure checked in the tests only)
    "lars": ("lars", dict(learning_rate=0.1, wd=0.01)),
    "lars_mom": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "lars_mom_std": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "lbsgd": ("lbsgd", dict(learning_rate=0.1, momentum=0.9)),
    "lamb": ("lamb", dict(learning_rate=0.01, wd=0.01)),
    "adagrad_eps": ("adagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                    clip_gradient=0.7)),
    "groupadagrad": ("groupadagrad", dict(learning_rate=0.1)),
    "groupadagrad_eps": ("groupadagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                              clip_gradient=0.7)),
    "groupadagrad_wd": ("groupadagrad", dict(learning_rate=0.1, wd=0.01)),
    "test": ("test", dict(rescale_grad=0.5)),
}
OPTIMIZERS = {k: v for k, v in OPTIMIZERS.items() if v is not None}


def step_inputs():
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    steps = [(rng.uniform(-1, 1, (2, 3)).astype(np.float32), [0, 3]),
             (rng.uniform(-1, 1, (2, 3)).astype(np.float32), [1, 3]),
             (rng.uniform(-1, 1, (1, 3)).astype(np.float32), [4])]
    return w0, steps


def arrays(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in arrays(s)]
    return [state]


def optimizers():
    w0, steps = step_inputs()
    out = {"inputs": {"w0": w0.tolist(), "steps": [[d.tolist(), r] for d, r in steps]}}
    for name, (opt_name, kw) in OPTIMIZERS.items():
        upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
        w = mx.nd.array(w0)
        try:
            for data, rows in steps:
                upd(0, mx.nd.sparse.row_sparse_array((data, rows), shape=(5, 3)), w)
            w.wait_to_read()
            out[name] = {"weight": w.asnumpy().tolist(),
                         "states": [[s.stype, s.asnumpy().tolist()] for s in arrays(upd.states[0])]}
        except (mx.base.MXNetError, AssertionError) as e:
            out[name] = err_info(e)
    return out


def update_ops():
    """The update operators called directly with row_sparse gradients."""
    w0, steps = step_inputs()
    g = mx.nd.sparse.row_sparse_array(steps[0], shape=(5, 3))
    out = {}
    calls = {
        "sparse.adagrad_update": lambda w, s: mx.nd.sparse.adagrad_update(
            w, g, s[0], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
        "sparse.adagrad_update_wd": lambda w, s: mx.nd.sparse.adagrad_update(
            w, g, s[0], out=w, lr=0.1, wd=0.1),
        "contrib.group_adagrad_update": lambda w, s: mx.nd.contrib.group_adagrad_update(
            w, g, s[1], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
        "contrib.group_adagrad_update_dense": lambda w, s: mx.nd.contrib.group_adagrad_update(
            w, g.tostype("default"), s[1], out=w, lr=0.1),
        "sgd_update_lazy": lambda w, s: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1),
        "sgd_update_std": lambda w, s: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1,
                                                        lazy_update=False),
        "sgd_mom_update_lazy": lambda w, s: mx.nd.sparse.sgd_mom_update(
            w, g, s[0], out=w, lr=0.1, wd=0.1, momentum=0.9),
        "adam_update_std": lambda w, s: mx.nd.adam_update(
            w, g, s[0], s[2], out=w, lr=0.1, wd=0.1, lazy_update=False),
    }
    for name, call in calls.items():
        w = mx.nd.array(w0)
        states = [mx.nd.ones((5, 3)) * 0.5, mx.nd.ones((5, 1)) * 0.25, mx.nd.ones((5, 3)) * 0.1]
        try:
            call(w, states)
            w.wait_to_read()
            out[name] = {"weight": w.asnumpy().tolist(),
                         "states": [s.asnumpy().tolist() for s in states]}
        except (mx.base.MXNetError, AssertionError) as e:
            out[name] = err_info(e)
    return out


KV_OPTIMIZERS = {
    "sgd_mom": ("sgd", dict(learning_rate=0.1, momentum=0.9)),
    "adam": ("adam", dict(learning_rate=0.1)),
    "groupadagrad": ("groupadagrad", dict(learning_rate=0.1)),
    "sgd_std": ("sgd", dict(learning_rate=0.1, lazy_update=False, momentum=0.9, wd=0.1)),
    "nag_mom": ("nag", dict(learning_rate=0.1, momentum=0.9)),
    "nag": ("nag", dict(learning_rate=0.1)),
    "signum": ("signum", dict(learning_rate=0.1)),
    "rmsprop": ("rmsprop", dict(learning_rate=0.1)),
    "adagrad": ("adagrad", dict(learning_rate=0.1)),
    "ftrl": ("ftrl", dict(learning_rate=0.1)),
    "adam_std": ("adam", dict(learning_rate=0.1, lazy_update=False)),
    "lars_mom": ("lars", dict(learning_rate=0.1, momentum=0.9)),
    "ftml": ("ftml", dict(learning_rate=0.1)),
    "dcasgd": ("dcasgd", dict(learning_rate=0.1)),
    "adadelta": ("adadelta", dict(learning_rate=0.1)),
    "nadam": ("nadam", dict(learning_rate=0.1)),
    "lamb": ("lamb", dict(learning_rate=0.1)),
    "lbsgd": ("lbsgd", dict(learning_rate=0.1)),
}


def update_ops_rsp():
    """Update operators with row_sparse weights and states (lazy, the states' rows updated in
    place) and the standard forms."""
    w0, steps = step_inputs()
    g = mx.nd.sparse.row_sparse_array(steps[0], shape=(5, 3))
    rsp = lambda a: a.tostype("row_sparse")  # noqa: E731
    cases = {
        "ftrl_dense": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1,
                                mx.nd.ones((5, 3)) * 0.2],
                       lambda a: mx.nd.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                   wd=0.1)),
        "ftrl_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1),
                              rsp(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_mom_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1)],
                        lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1,
                                                              wd=0.1, momentum=0.9)),
        "sgd_mom_rsp_empty_state": (
            lambda: [rsp(mx.nd.array(w0)), mx.nd.sparse.zeros("row_sparse", (5, 3))],
            lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                  momentum=0.9)),
        "adam_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 3)) * 0.1),
                              rsp(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.adam_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_rsp_w": (lambda: [rsp(mx.nd.array(w0))],
                      lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1)),
        "sgd_rsp_w_std": (lambda: [rsp(mx.nd.array(w0))],
                          lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1,
                                                            lazy_update=False)),
        "sgd_mom_std": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1],
                        lambda a: mx.nd.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                       momentum=0.9, lazy_update=False)),
        "group_adagrad_rsp": (lambda: [rsp(mx.nd.array(w0)), rsp(mx.nd.ones((5, 1)) * 0.1)],
                              lambda a: mx.nd.contrib.group_adagrad_update(
                                  a[0], g, a[1], out=a[0], lr=0.1)),
    }
    out = {}
    for name, (make, call) in cases.items():
        arrs = make()
        try:
            call(arrs)
            out[name] = [[a.stype, a.asnumpy().tolist()] for a in arrs]
        except mx.base.MXNetError as e:
            out[name] = err_info(e)
    return out


def kvstore_rsp_weight():
    """A local KVStore with a row_sparse weight and an optimizer (what dist servers run)."""
    w0, steps = step_inputs()
    out = {}
    for name, (opt_name, kw) in KV_OPTIMIZERS.items():
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.create(opt_name, **kw))
        kv.init("w", mx.nd.array(w0).tostype("row_sparse"))
        try:
            for data, rows in steps:
                kv.push("w", mx.nd.sparse.row_sparse_array((data, rows), shape=(5, 3)))
            res = mx.nd.sparse.zeros("row_sparse", (5, 3))
            kv.row_sparse_pull("w", out=res, row_ids=mx.nd.arange(5))
            out[name] = {"weight": res.asnumpy().tolist(),
                         "indices": res.indices.asnumpy().tolist()}
        except (mx.base.MXNetError, AssertionError) as e:
            out[name] = err_info(e)
    return out


# --- graph operators ---------------------------------------------------------------------------
def csr_rec(a):
    return {"stype": a.stype, "dtype": np.dtype(a.dtype).name, "shape": list(a.shape),
            "data": a.data.asnumpy().tolist(), "indices": a.indices.asnumpy().tolist(),
            "indptr": a.indptr.asnumpy().tolist()}


def dense_rec(a):
    return {"stype": a.stype, "dtype": np.dtype(a.dtype).name, "shape": list(a.shape),
            "value": a.asnumpy().tolist()}


def rec(a):
    return csr_rec(a) if a.stype == "csr" else dense_rec(a)


def graph6():
    """A 6-vertex graph: an edge u -> v when u + v is odd, edge ids 1..18 in CSR order."""
    dense = np.zeros((6, 6), np.int64)
    eid = 1
    for r in range(6):
        for c in range(6):
            if (r + c) % 2 == 1:
                dense[r, c] = eid
                eid += 1
    return dense


def small4():
    return np.array([[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]], np.int64)


def try_rec(fn):
    try:
        res = fn()
        if isinstance(res, (list, tuple)):
            return [rec(r) for r in res]
        return rec(res)
    except (mx.base.MXNetError, AssertionError) as e:
        return err_info(e)


def graph():
    out = {"inputs": {"graph6": graph6().tolist(), "small4": small4().tolist()}}
    x = mx.nd.array(small4(), dtype=np.int64).tostype("csr")
    xf = mx.nd.array(small4()).tostype("csr")
    rect = mx.nd.array(np.array([[0, 2, 0], [1, 0, 3], [0, 0, 0], [4, 0, 0]], np.float32)
                       ).tostype("csr")
    for ax in (None, 1, 0, -1):
        out[f"getnnz_{ax}"] = try_rec(lambda: mx.nd.contrib.getnnz(x, axis=ax))
    out["getnnz_rect_1"] = try_rec(lambda: mx.nd.contrib.getnnz(rect, axis=1))
    out["getnnz_rect"] = try_rec(lambda: mx.nd.contrib.getnnz(rect))
    u, v = mx.nd.array([0, 0, 1, 3, 2, 3]), mx.nd.array([0, 1, 2, 2, 1, 3])
    out["edge_id_int64"] = try_rec(lambda: mx.nd.contrib.edge_id(x, u, v))
    out["edge_id_float32"] = try_rec(lambda: mx.nd.contrib.edge_id(xf, u, v))
    out["dgl_adjacency"] = try_rec(lambda: mx.nd.contrib.dgl_adjacency(x))
    out["dgl_adjacency_float32"] = try_rec(lambda: mx.nd.contrib.dgl_adjacency(xf))
    i64 = lambda a: mx.nd.array(a, dtype=np.int64)  # noqa: E731
    out["dgl_subgraph_mapping"] = try_rec(lambda: mx.nd.contrib.dgl_subgraph(
        x, i64([0, 1, 2]), i64([1, 3]), i64([0, 3]), return_mapping=True))
    out["dgl_subgraph"] = try_rec(lambda: mx.nd.contrib.dgl_subgraph(
        x, i64([0, 2, 3]), return_mapping=False))
    g = mx.nd.array(graph6(), dtype=np.int64).tostype("csr")
    # samplers taking every neighbour (deterministic); the valid prefixes are recorded
    prob = mx.nd.array([0.9, 0.8, 0.2, 0.4, 0.1, 0.5])
    cases = {
        "uniform_1hop": (False, [[1, 4]], dict(num_hops=1, num_neighbor=3, max_num_vertices=8)),
        "uniform_2hop_two_seeds": (False, [[1], [0, 2]],
                                   dict(num_hops=2, num_neighbor=5, max_num_vertices=7)),
        "uniform_truncated": (False, [[0, 1]], dict(num_hops=2, num_neighbor=3,
                                                    max_num_vertices=4)),
        "non_uniform_1hop": (True, [[1, 4], [0]], dict(num_hops=1, num_neighbor=3,
                                                       max_num_vertices=6)),
    }
    for name, (non_uniform, seeds, kw) in cases.items():
        seed_arrays = [i64(s) for s in seeds]
        if non_uniform:
            res = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
                g, prob, *seed_arrays, num_args=len(seeds) + 2, **kw)
        else:
            res = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
                g, *seed_arrays, num_args=len(seeds) + 1, **kw)
        n = len(seeds)
        counts = [int(res[i].asnumpy()[-1]) for i in range(n)]
        r = {"seeds": seeds, "non_uniform": non_uniform, "kwargs": kw, "counts": counts,
             "vertices": [res[i].asnumpy()[:c].tolist() for i, c in enumerate(counts)],
             "vertices_shape": list(res[0].shape),
             "csr": [csr_rec(res[n + i]) for i in range(n)],
             "layers": [res[(3 if non_uniform else 2) * n + i].asnumpy()[:c].tolist()
                        for i, c in enumerate(counts)],
             "num_outputs": len(res)}
        if non_uniform:
            r["probs"] = [res[2 * n + i].asnumpy()[:c].tolist() for i, c in enumerate(counts)]
        compact = mx.nd.contrib.dgl_graph_compact(*res[n:2 * n], *res[:n],
                                                  graph_sizes=tuple(counts),
                                                  return_mapping=True)
        r["compact_mapping"] = [rec(c) for c in compact]
        compact = mx.nd.contrib.dgl_graph_compact(*res[n:2 * n], *res[:n],
                                                  graph_sizes=tuple(counts),
                                                  return_mapping=False)
        r["compact"] = [rec(c) for c in (compact if isinstance(compact, list) else [compact])]
        out[name] = r
    return out


def main():
    cases = {"optimizers": optimizers(), "update_ops": update_ops(),
             "update_ops_rsp": update_ops_rsp(),
             "kvstore_rsp_weight": kvstore_rsp_weight(), "graph": graph()}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".tmp"
    write_json(tmp, cases)
    os.replace(tmp, OUT)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
