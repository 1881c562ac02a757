"""Contrib operators on sparse (CSR) graphs, as MXNet 1.9.1 defines them for DGL:
``getnnz``, ``edge_id``, ``dgl_adjacency``, ``dgl_subgraph``, ``dgl_graph_compact`` and the
neighbour samplers ``dgl_csr_neighbor_uniform_sample`` / ``dgl_csr_neighbor_non_uniform_sample``.

A graph is a CSR matrix: row ``u`` lists the edges ``u -> v`` (column ``v``) and each stored
value is the edge's id (int64 for the dgl_* operators, as MXNet requires). The operators only
have CSR kernels (MXNet's ``FComputeEx``): dense inputs raise MXNet's "Operator not implemented"
storage error. The samplers draw from torch's generator (``mx.random.seed`` repeats them).

Where MXNet leaves memory uninitialised (sampler entries past the number of sampled vertices) the
outputs hold zeros. Where MXNet writes past its buffers (a sampling step that adds more
neighbours than ``max_num_vertices`` leaves room for) neomx stops adding vertices at the limit
and keeps only the edges to vertices that made it, so every output stays consistent.
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError
from . import registry as _reg
from .registry import OpDef, Param, ShapeError, TypeInferError, register
from .sparse import Sparse, csr_rows, storage_rule as _storage_rule


def storage_rule(names, infer, forward):
    """``ops.sparse.storage_rule``, the kernel marked ``off_tape``: these operators have no
    gradient, so mx.nd runs their sparse kernels while autograd records too."""
    def kernel(p, ins, out_stypes, oc):
        return forward(p, ins, out_stypes, oc)
    kernel.off_tape = True
    kernel.multi_output = getattr(forward, "multi_output", False)
    _storage_rule(names, infer, kernel)

I64 = torch.int64
_NP_I64 = np.dtype(np.int64)
_NP_F32 = np.dtype(np.float32)


def _not_implemented(name, stypes):
    return MXNetError("Check failed: infer_stype_success: Operator not implemented: "
                      f"operator = {name}\ninput storage types = ["
                      + "".join(f"{s}, " for s in stypes) + "]")


def _dense_refused(name):
    def forward(p, ins, oc):
        raise _not_implemented(name, ["default"] * len(ins))
    return forward


def _csr(data, indptr, indices, shape):
    return Sparse("csr", data, (indptr.to(I64), indices.to(I64)), tuple(int(s) for s in shape))


def _empty_csr(shape, dtype, device):
    return _csr(torch.zeros(0, dtype=dtype, device=device),
                torch.zeros(shape[0] + 1, dtype=I64, device=device),
                torch.zeros(0, dtype=I64, device=device), shape)


# --- getnnz ------------------------------------------------------------------------------------
def _getnnz_axis(p):
    if p.axis not in (None, 0, 1):
        raise ShapeError(f"Unexpected value for axis({p.axis}). Candidates are None, 0, and 1")
    return p.axis


def _getnnz_shape(p, ins, outs):
    axis = _getnnz_axis(p)
    if ins[0] is None:
        return ins, outs
    if len(ins[0]) != 2:
        raise ShapeError(f"getnnz: the input must be a 2-D csr matrix, got shape "
                         f"{_reg._sh(ins[0])}")
    out = (1,) if axis is None else ((ins[0][0],) if axis == 1 else (ins[0][1],))
    return ins, [out]


def _getnnz_sparse(p, ins, out_stypes, oc):
    s = ins[0]
    indptr = s.aux[0]
    if p.axis is None:
        return indptr[-1:].clone().to(I64)
    if p.axis == 1:
        return (indptr[1:] - indptr[:-1]).to(I64)
    raise MXNetError("getnnz with axis = 0 is not supported yet")


register(OpDef(
    "_contrib_getnnz", _dense_refused("_contrib_getnnz"), _getnnz_shape,
    params=(Param("axis", "int", None, "Select between the number of values across the whole "
                  "matrix, in each column, or in each row.", optional=True),),
    infer_type=lambda p, ins, outs: (ins, [_NP_I64]), hint="getnnz",
    doc="Number of stored values for a sparse tensor, including explicit zeros (int64): of the\n"
        "whole matrix (``axis=None``, shape ``(1,)``) or of each row (``axis=1``).\n\n"
        "This operator only supports CSR matrices (``axis=0`` is not supported, as in MXNet)."))


def _getnnz_infer(p, stypes, shapes=None):
    if stypes[0] != "csr":
        raise _not_implemented("_contrib_getnnz", stypes)
    return ["default"]


storage_rule(["_contrib_getnnz"], _getnnz_infer, _getnnz_sparse)


# --- edge_id -----------------------------------------------------------------------------------
def _edge_id_shape(p, ins, outs):
    data, u, v = ins
    for name, s in (("u", u), ("v", v)):
        if s is not None and len(s) != 1:
            raise ShapeError(f"edge_id: {name} must be a 1-D vector, got shape {_reg._sh(s)}")
    if data is not None and len(data) != 2:
        raise ShapeError(f"edge_id: data must be a 2-D csr matrix, got shape {_reg._sh(data)}")
    known = u if u is not None else v
    if u is not None and v is not None and tuple(u) != tuple(v):
        raise ShapeError(f"edge_id: u and v must have the same length, got {_reg._sh(u)} and "
                         f"{_reg._sh(v)}")
    if known is None:
        known = outs[0]
    return [data, known, known], [known]


def _edge_id_sparse(p, ins, out_stypes, oc):
    s, u, v = ins
    ncols = s.shape[1]
    rows = csr_rows(s)
    keys = rows * ncols + s.aux[1]
    order = torch.argsort(keys)
    keys = keys[order]
    q = u.to(I64).reshape(-1) * ncols + v.to(I64).reshape(-1)
    pos = torch.searchsorted(keys, q).clamp(max=max(keys.numel() - 1, 0))
    if keys.numel() == 0:
        return torch.full(q.shape, -1, dtype=s.data.dtype, device=s.data.device)
    found = keys[pos] == q
    vals = s.data[order][pos]
    return torch.where(found, vals, torch.full_like(vals, -1))


register(OpDef(
    "_contrib_edge_id", _dense_refused("_contrib_edge_id"), _edge_id_shape,
    inputs=("data", "u", "v"),
    infer_type=lambda p, ins, outs: (ins, [ins[0] if ins[0] is not None else outs[0]]),
    hint="edge_id", no_grad_inputs=("u", "v"),
    doc="The edge ids of the pairs ``(u[i], v[i])`` in a graph stored as a CSR matrix whose\n"
        "values are edge ids: ``output[i] = data[u[i], v[i]]`` when the edge exists, otherwise\n"
        "-1 (in the data's dtype). ``edge_id(csr, default, default) = default``."))


def _edge_id_infer(p, stypes, shapes=None):
    if stypes[0] != "csr" or stypes[1] != "default" or stypes[2] != "default":
        raise _not_implemented("_contrib_edge_id", stypes)
    return ["default"]


storage_rule(["_contrib_edge_id"], _edge_id_infer, _edge_id_sparse)


# --- dgl_adjacency -----------------------------------------------------------------------------
def _int64_type(name, n_checked=1, n_graphs=1):
    """A check that the first ``n_checked`` inputs (graphs, then vertex arrays) are int64."""
    def check(ins):
        for i, t in enumerate(ins[:n_checked]):
            if t is not None and np.dtype(t) != _NP_I64:
                what = "a graph: its values are edge ids" if i < n_graphs else "vertex ids"
                raise TypeInferError(f"{name}: input {i} must be int64 ({what}), got "
                                     f"{np.dtype(t).name}")
    return check


_adj_check = _int64_type("dgl_adjacency")


def _adjacency_type(p, ins, outs):
    _adj_check(ins)
    return [_NP_I64], [_NP_F32]


def _adjacency_sparse(p, ins, out_stypes, oc):
    s = ins[0]
    return _csr(torch.ones(s.data.shape[0], dtype=torch.float32, device=s.data.device),
                s.aux[0].clone(), s.aux[1].clone(), s.shape)


register(OpDef(
    "_contrib_dgl_adjacency", _dense_refused("_contrib_dgl_adjacency"), _reg.same_shape,
    infer_type=_adjacency_type, hint="dgl_adjacency",
    doc="The adjacency matrix of a graph stored as a CSR matrix of int64 edge ids: the same\n"
        "stored positions with float32 ones."))


def _adjacency_infer(p, stypes, shapes=None):
    if stypes[0] != "csr":
        raise _not_implemented("_contrib_dgl_adjacency", stypes)
    return ["csr"]


storage_rule(["_contrib_dgl_adjacency"], _adjacency_infer, _adjacency_sparse)


# --- dgl_subgraph ------------------------------------------------------------------------------
def _n_sets(p, extra=1):
    return p.num_args - extra


def _subgraph_outputs(p):
    n = _n_sets(p)
    names = [f"subgraph{i}" for i in range(n)]
    return names + ([f"mapping{i}" for i in range(n)] if p.return_mapping else [])


def _subgraph_shape(p, ins, outs):
    n = _n_sets(p)
    if n < 1:
        raise ShapeError("dgl_subgraph: needs at least one vertex array (num_args >= 2)")
    g = ins[0]
    if g is not None and (len(g) != 2 or g[0] != g[1]):
        raise ShapeError(f"dgl_subgraph: the graph must be a square 2-D csr matrix, got "
                         f"{_reg._sh(g)}")
    res = []
    for v in ins[1:]:
        if v is not None and len(v) != 1:
            raise ShapeError(f"dgl_subgraph: vertex arrays must be 1-D, got {_reg._sh(v)}")
        res.append(None if v is None else (v[0], v[0]))
    if p.return_mapping:
        res = res + res
    return ins, res


def _subgraph_type(p, ins, outs):
    _int64_type("dgl_subgraph", len(ins))(ins)
    return [_NP_I64] * len(ins), [_NP_I64] * len(outs)


def _check_sorted(v):
    if v.numel() > 1 and bool((v[1:] < v[:-1]).any()):
        raise MXNetError("Check failed: std::is_sorted(vid_data, vid_data + len): The input "
                         "vertex list has to be sorted")


def _induced(g: Sparse, v: torch.Tensor):
    """The subgraph of ``g`` on the sorted vertices ``v``: (new csr, original-id csr)."""
    v = v.to(I64).reshape(-1)
    _check_sorted(v)
    k = v.numel()
    indptr, indices, data = g.aux[0], g.aux[1], g.data
    starts, ends = indptr[v], indptr[v + 1]
    lens = ends - starts
    total = int(lens.sum())
    row_of = torch.repeat_interleave(torch.arange(k, device=v.device), lens, output_size=total)
    offs = torch.arange(total, device=v.device) - torch.repeat_interleave(
        torch.cumsum(lens, 0) - lens, lens, output_size=total)
    pos = starts[row_of] + offs
    cols = indices[pos]
    where = torch.searchsorted(v, cols).clamp(max=max(k - 1, 0))
    keep = (v[where] == cols) if k else torch.zeros_like(cols, dtype=torch.bool)
    row_of, new_cols, orig = row_of[keep], where[keep], data[pos][keep]
    counts = torch.bincount(row_of, minlength=k)
    new_ptr = torch.zeros(k + 1, dtype=I64, device=v.device)
    new_ptr[1:] = torch.cumsum(counts, 0)
    ids = torch.arange(orig.numel(), dtype=I64, device=v.device)
    return (_csr(ids, new_ptr, new_cols, (k, k)),
            _csr(orig.clone(), new_ptr.clone(), new_cols.clone(), (k, k)))


def _multi_output(fn):
    """Mark a sparse kernel that returns a list of outputs (mx.nd runs it for several)."""
    fn.multi_output = True
    return fn


@_multi_output
def _subgraph_sparse(p, ins, out_stypes, oc):
    g, sets = ins[0], ins[1:]
    pairs = [_induced(g, v) for v in sets]
    out = [a for a, _ in pairs]
    if p.return_mapping:
        out += [b for _, b in pairs]
    return out


register(OpDef(
    "_contrib_dgl_subgraph", _dense_refused("_contrib_dgl_subgraph"), _subgraph_shape,
    params=(Param("num_args", "int", doc="Number of input arguments, including all symbol "
                  "inputs."),
            Param("return_mapping", "bool", doc="Return mapping of vid and eid between the "
                  "subgraph and the parent graph.")),
    inputs=lambda p: ["graph"] + [f"data{i}" for i in range(max(p.num_args - 1, 0))],
    outputs=_subgraph_outputs, key_var_num_args="num_args", infer_type=_subgraph_type,
    hint="dgl_subgraph",
    doc="The subgraphs induced by sets of vertices (each a sorted int64 vector) of a graph\n"
        "stored as a CSR matrix of int64 edge ids. For each set: a CSR matrix (k, k) whose\n"
        "values are new edge ids (0, 1, ... in CSR order); with ``return_mapping`` also one\n"
        "with the edges' original ids. Outputs: every subgraph, then every mapping."))


def _csr_then_dense(name):
    def infer(p, stypes, shapes=None):
        if stypes[0] != "csr" or any(s != "default" for s in stypes[1:]):
            raise _not_implemented(name, stypes)
        return None
    return infer


def _subgraph_infer(p, stypes, shapes=None):
    _csr_then_dense("_contrib_dgl_subgraph")(p, stypes)
    return ["csr"] * len(_subgraph_outputs(p))


storage_rule(["_contrib_dgl_subgraph"], _subgraph_infer, _subgraph_sparse)


# --- neighbour samplers ------------------------------------------------------------------------
_SAMPLER_PARAMS = (
    Param("num_args", "int", doc="Number of input NDArray."),
    Param("num_hops", "int", 1, "Number of hops."),
    Param("num_neighbor", "int", 2, "Number of neighbor."),
    Param("max_num_vertices", "int", 100, "Max number of vertices."))


def _n_seeds(p, non_uniform):
    return p.num_args - (2 if non_uniform else 1)


def _sampler_outputs(non_uniform):
    def names(p):
        n = _n_seeds(p, non_uniform)
        out = [f"vertices{i}" for i in range(n)] + [f"subgraph{i}" for i in range(n)]
        if non_uniform:
            out += [f"probability{i}" for i in range(n)]
        return out + [f"layer{i}" for i in range(n)]
    return names


def _sampler_shape(non_uniform):
    name = "dgl_csr_neighbor_" + ("non_" if non_uniform else "") + "uniform_sample"

    def infer(p, ins, outs):
        n = _n_seeds(p, non_uniform)
        if n < 1:
            raise ShapeError(f"{name}: needs at least one seed array")
        if p.max_num_vertices < 1:
            raise ShapeError(f"{name}: max_num_vertices must be positive, got "
                             f"{p.max_num_vertices}")
        g = ins[0]
        if g is not None and len(g) != 2:
            raise ShapeError(f"{name}: the graph must be a 2-D csr matrix, got {_reg._sh(g)}")
        for s in ins[1:]:
            if s is not None and len(s) != 1:
                raise ShapeError(f"{name}: the probability and seed arrays must be 1-D, got "
                                 f"{_reg._sh(s)}")
        m = p.max_num_vertices
        ncols = g[1] if g is not None else None
        res = [(m + 1,)] * n + [None if ncols is None else (m, ncols)] * n
        if non_uniform:
            res += [(m,)] * n
        return ins, res + [(m,)] * n
    return infer


def _sampler_type(non_uniform):
    def infer(p, ins, outs):
        n = _n_seeds(p, non_uniform)
        _int64_type("dgl_csr_neighbor_" + ("non_" if non_uniform else "") + "uniform_sample")(ins)
        g = [_NP_I64]
        res = [_NP_I64] * n + [_NP_I64] * n + ([_NP_F32] * n if non_uniform else []) + \
            [_NP_I64] * n
        ins = g + ([_NP_F32] if non_uniform else []) + [_NP_I64] * n
        return ins, res
    return infer


def _pick(lo, hi, k, prob, indices):
    """Positions ``lo..hi`` of a row, or ``k`` of them drawn without replacement (uniformly, or
    with weights ``prob[col]``), in increasing order."""
    deg = hi - lo
    if deg <= k:
        return torch.arange(lo, hi)
    if prob is None:
        chosen = torch.randperm(deg)[:k]
    else:
        w = prob[indices[lo:hi]].double()
        if float(w.sum()) <= 0:
            raise MXNetError("dgl_csr_neighbor_non_uniform_sample: the neighbours of a vertex "
                             "all have probability 0")
        chosen = torch.multinomial(w, k, replacement=False)
    return torch.sort(chosen).values + lo


def _sample_one(g: Sparse, seeds, prob, p):
    """MXNet's SampleSubgraph: a breadth-first walk from the seeds, sampling up to
    ``num_neighbor`` neighbours of every vertex reached in fewer than ``num_hops`` hops, until
    ``max_num_vertices`` vertices are reached."""
    indptr = g.aux[0].cpu().tolist()
    indices_t, data_t = g.aux[1].cpu(), g.data.cpu()
    prob_t = None if prob is None else prob.cpu().float()
    m, hops, k = p.max_num_vertices, p.num_hops, p.num_neighbor
    layer = {}
    queue = []
    for s in seeds.cpu().to(I64).tolist():
        if s not in layer and len(layer) < m:
            layer[s] = 0
            queue.append(s)
    edges = {}  # vertex -> (neighbour ids, edge ids)
    i = 0
    while i < len(queue) and len(layer) < m:
        u = queue[i]
        i += 1
        if layer[u] >= hops:
            continue
        pos = _pick(indptr[u], indptr[u + 1], k, prob_t, indices_t)
        nbrs, eids = indices_t[pos].tolist(), data_t[pos]
        keep = []
        for j, w in enumerate(nbrs):
            if w not in layer:
                if len(layer) >= m:
                    continue  # (MXNet writes past its buffers here; neomx stops at the limit)
                layer[w] = layer[u] + 1
                queue.append(w)
            keep.append(j)
        edges[u] = (torch.tensor([nbrs[j] for j in keep], dtype=I64),
                    eids[torch.tensor(keep, dtype=I64)] if keep else eids[:0])
    verts = sorted(layer)
    nv = len(verts)
    dev = g.data.device
    ids = torch.zeros(m + 1, dtype=I64)
    ids[:nv] = torch.tensor(verts, dtype=I64)
    ids[m] = nv
    lay = torch.zeros(m, dtype=I64)
    lay[:nv] = torch.tensor([layer[v] for v in verts], dtype=I64)
    cols, vals, counts = [], [], []
    for v in verts:
        c, e = edges.get(v, (torch.zeros(0, dtype=I64), data_t[:0]))
        cols.append(c)
        vals.append(e)
        counts.append(c.numel())
    ptr = torch.zeros(m + 1, dtype=I64)
    ptr[1:nv + 1] = torch.cumsum(torch.tensor(counts, dtype=I64), 0) if nv else ptr[1:1]
    ptr[nv + 1:] = ptr[nv]
    sub = _csr(torch.cat(vals).to(dev) if vals else data_t[:0].to(dev), ptr.to(dev),
               (torch.cat(cols) if cols else torch.zeros(0, dtype=I64)).to(dev),
               (m, g.shape[1]))
    probs = None
    if prob is not None:
        probs = torch.zeros(m, dtype=torch.float32)
        probs[:nv] = prob_t[torch.tensor(verts, dtype=I64)] if nv else probs[:0]
        probs = probs.to(dev)
    return ids.to(dev), sub, probs, lay.to(dev)


def _sampler_sparse(non_uniform):
    @_multi_output
    def forward(p, ins, out_stypes, oc):
        g = ins[0]
        prob = ins[1] if non_uniform else None
        seeds = ins[2:] if non_uniform else ins[1:]
        if prob is not None and prob.shape[0] < g.shape[0]:
            raise MXNetError(f"dgl_csr_neighbor_non_uniform_sample: the probability vector has "
                             f"{prob.shape[0]} entries for a graph of {g.shape[0]} vertices")
        res = [_sample_one(g, s, prob, p) for s in seeds]
        out = [r[0] for r in res] + [r[1] for r in res]
        if non_uniform:
            out += [r[2] for r in res]
        return out + [r[3] for r in res]
    return forward


def _sampler_infer(non_uniform, name):
    def infer(p, stypes, shapes=None):
        _csr_then_dense(name)(p, stypes)
        n = _n_seeds(p, non_uniform)
        return ["default"] * n + ["csr"] * n + ["default"] * (n * (2 if non_uniform else 1))
    return infer


for _non_uniform in (False, True):
    _name = "_contrib_dgl_csr_neighbor_" + ("non_" if _non_uniform else "") + "uniform_sample"
    register(OpDef(
        _name, _dense_refused(_name), _sampler_shape(_non_uniform), params=_SAMPLER_PARAMS,
        inputs=(lambda p, nu=_non_uniform: ["csr_matrix"] + (["probability"] if nu else [])
                + [f"seed_arrays{i}" for i in range(max(p.num_args - (2 if nu else 1), 0))]),
        outputs=_sampler_outputs(_non_uniform), key_var_num_args="num_args",
        infer_type=_sampler_type(_non_uniform), deterministic=False,
        hint=_name[len("_contrib_"):],
        doc=("Samples sub-graphs from a csr graph (int64 edge ids) around seed vertices, "
             + ("with neighbours drawn with the probabilities of the ``probability`` vector "
                "(without replacement)" if _non_uniform else "with neighbours drawn uniformly")
             + ". For each seed array: the sampled vertices (int64, length max_num_vertices + "
               "1, sorted; the last entry is their count), a CSR matrix (max_num_vertices, "
               "number of graph vertices) whose row i holds the sampled edges into the i-th "
               "sampled vertex (columns: source vertex ids, values: edge ids), "
             + ("their probabilities (float32, length max_num_vertices), " if _non_uniform
                else "")
             + "and the hop at which each vertex was reached (int64, length max_num_vertices)."
               " Outputs: every vertex array, every CSR, " + ("every probability vector, "
                                                              if _non_uniform else "")
             + "every layer vector.")))
    storage_rule([_name], _sampler_infer(_non_uniform, _name), _sampler_sparse(_non_uniform))


# --- dgl_graph_compact --------------------------------------------------------------------------
def _compact_n(p):
    if p.num_args % 2:
        raise ShapeError(f"dgl_graph_compact: num_args must be even (graphs, then vertex "
                         f"arrays), got {p.num_args}")
    n = p.num_args // 2
    if len(p.graph_sizes) != n:
        raise ShapeError(f"dgl_graph_compact: graph_sizes has {len(p.graph_sizes)} entries for "
                         f"{n} graphs")
    return n


def _compact_outputs(p):
    n = p.num_args // 2
    return [f"graph{i}" for i in range(n)] + \
        ([f"mapping{i}" for i in range(n)] if p.return_mapping else [])


def _compact_shape(p, ins, outs):
    n = _compact_n(p)
    res = [(int(s), int(s)) for s in p.graph_sizes]
    for g, v, size in zip(ins[:n], ins[n:], p.graph_sizes):
        if g is not None and len(g) != 2:
            raise ShapeError(f"dgl_graph_compact: graphs must be 2-D csr matrices, got "
                             f"{_reg._sh(g)}")
        if g is not None and g[0] < size:
            raise ShapeError(f"dgl_graph_compact: graph_sizes entry {size} exceeds the "
                             f"{g[0]} rows of its graph")
        if v is not None and (len(v) != 1 or v[0] < size):
            raise ShapeError(f"dgl_graph_compact: the vertex array {_reg._sh(v)} holds fewer "
                             f"than {size} vertices")
    return ins, res + (res if p.return_mapping else [])


def _compact_type(p, ins, outs):
    n = p.num_args // 2
    _int64_type("dgl_graph_compact", len(ins), n)(ins)
    return [_NP_I64] * len(ins), [_NP_I64] * len(outs)


def _compact_one(g: Sparse, vids, size):
    size = int(size)
    v = vids.to(I64).reshape(-1)[:size]
    nnz = int(g.aux[0][size])
    ptr = g.aux[0][:size + 1].clone()
    cols = g.aux[1][:nnz]
    pos = torch.searchsorted(v, cols).clamp(max=max(size - 1, 0))
    if nnz and not bool((v[pos] == cols).all()):
        raise MXNetError("dgl_graph_compact: the graph has an edge from a vertex outside its "
                         "vertex array")
    return _csr(torch.arange(nnz, dtype=I64, device=v.device), ptr, pos, (size, size))


@_multi_output
def _compact_sparse(p, ins, out_stypes, oc):
    n = _compact_n(p)
    out = [_compact_one(g, v, s) for g, v, s in zip(ins[:n], ins[n:], p.graph_sizes)]
    if p.return_mapping:  # (MXNet 1.9.1 leaves these empty)
        out += [_empty_csr((int(s), int(s)), I64, o.data.device)
                for s, o in zip(p.graph_sizes, out)]
    return out


register(OpDef(
    "_contrib_dgl_graph_compact", _dense_refused("_contrib_dgl_graph_compact"), _compact_shape,
    params=(Param("num_args", "int", doc="Number of input arguments."),
            Param("return_mapping", "bool", doc="Return mapping of vid and eid between the "
                  "subgraph and the parent graph."),
            Param("graph_sizes", "shape", doc="the number of vertices in each graph.")),
    inputs=lambda p: [f"graph_data{i}" for i in range(p.num_args)],
    outputs=_compact_outputs, key_var_num_args="num_args", infer_type=_compact_type,
    hint="dgl_graph_compact",
    doc="Compacts the CSR matrices made by the dgl_csr_neighbor samplers: keeps the first\n"
        "``graph_sizes[i]`` rows and renumbers the columns by the position of each vertex id in\n"
        "the sampler's (sorted) vertex array: a (size, size) CSR matrix whose values are new\n"
        "edge ids 0, 1, ... Inputs: every graph, then every vertex array. With\n"
        "``return_mapping`` MXNet 1.9.1 adds one empty CSR matrix per graph (so does neomx)."))


def _compact_infer(p, stypes, shapes=None):
    n = p.num_args // 2
    if any(s != "csr" for s in stypes[:n]) or any(s != "default" for s in stypes[n:]):
        raise _not_implemented("_contrib_dgl_graph_compact", stypes)
    return ["csr"] * len(_compact_outputs(p))


storage_rule(["_contrib_dgl_graph_compact"], _compact_infer, _compact_sparse)
