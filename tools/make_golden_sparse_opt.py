"""Golden values of optimizers with row_sparse gradients, the sparse update operators and the
graph (dgl) contrib operators on CSR inputs, from MXNet 1.9.1
(tests/golden/sparse_opt/cases.json; tests/sparse/test_sparse_opt.py and test_graph_ops.py).

The optimizer and update operator scenarios live in tests/sparse/_sparse_opt_cases.py, written
against the ``mx`` they are given; this script runs them in MXNet. Run with the oracle's
interpreter from the repository root: ``tools/mxnet-oracle tools/make_golden_sparse_opt.py``.

The samplers are random; their cases here take every neighbour (``num_neighbor`` at least the
largest degree), which makes them deterministic. Entries of the sampler outputs past the number
of sampled vertices are uninitialised memory in MXNet and are not recorded.
"""
import os
import sys
import warnings

os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")

from _oracle_common import ROOT, err_info, golden_dir, write_json  # noqa: E402

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "sparse"))
import _sparse_opt_cases as cases  # noqa: E402

OUT = os.path.join(golden_dir("sparse_opt"), "cases.json")
warnings.simplefilter("ignore")


def optimizers():
    w0, steps = cases.step_inputs()
    out = {"inputs": {"w0": w0.tolist(), "steps": [[d.tolist(), r] for d, r in steps]}}
    for name in cases.OPTIMIZERS:
        try:
            w, states = cases.run_updater(mx, name, w0, steps)
            out[name] = {"weight": w.asnumpy().tolist(),
                         "states": [[s.stype, s.asnumpy().tolist()] for s in states]}
        except (mx.base.MXNetError, AssertionError) as e:
            out[name] = err_info(e)
    return out


def update_ops():
    """The update operators called directly with row_sparse gradients."""
    w0, steps = cases.step_inputs()
    g = cases.rsp(mx, *steps[0])
    out = {}
    for name in cases.UPDATE_OPS:
        w = mx.nd.array(w0)
        states = cases.update_op_states(mx)
        try:
            cases.run_update_op(mx, name, w, states, g)
            out[name] = {"weight": w.asnumpy().tolist(),
                         "states": [s.asnumpy().tolist() for s in states]}
        except (mx.base.MXNetError, AssertionError) as e:
            out[name] = err_info(e)
    return out


def update_ops_rsp():
    """Update operators with row_sparse weights and states (lazy, the states' rows updated in
    place) and the standard forms."""
    w0, steps = cases.step_inputs()
    out = {}
    for name, (make, call) in cases.rsp_update_cases(mx, w0, cases.rsp(mx, *steps[0])).items():
        arrs = make()
        try:
            call(arrs)
            out[name] = [[a.stype, a.asnumpy().tolist()] for a in arrs]
        except mx.base.MXNetError as e:
            out[name] = err_info(e)
    return out


def kvstore_rsp_weight():
    """A local KVStore with a row_sparse weight and an optimizer (what dist servers run)."""
    w0, steps = cases.step_inputs()
    out = {}
    for name in cases.KV_OPTIMIZERS:
        try:
            res = cases.run_kvstore(mx, name, w0, steps)
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
