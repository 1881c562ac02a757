"""Sparse gradients in autograd: buffers of storage type row_sparse (``attach_grad(stype=
'row_sparse')``, gluon's ``grad_stype``) and the operators whose gradients come out row_sparse
as in MXNet 1.9.1: ``Embedding(sparse_grad=True)`` (the rows its indices pick) and
``dot(csr, weight)`` (the rows of the csr's columns) when the weight's buffer is row_sparse.

The tape calls ``SPARSE_GRAD[op.name](node, ins, outs, ograds)`` before an operator's own
gradient rule (None: use that rule) and ``store_grad`` for sparse buffers or gradients.
Operators recorded on sparse inputs run densely on copies that carry the inputs' autograd
entries; ``remember`` keeps the sparse inputs of such a node for the rules here.
"""
from __future__ import annotations

import weakref

import torch

from ..base import MXNetError
from ..ops import sparse as _sp
from ..ops.sparse import Sparse
from . import tape as _tape
from .ndarray import NDArray
from .sparse import BaseSparseNDArray, _wrap, assign

_SPARSE_INPUTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def remember(res, inputs) -> None:
    """Keep the sparse inputs of the node that recorded ``res``."""
    first = res[0] if isinstance(res, list) else res
    e = getattr(first, "_ag", None)
    if e is not None:
        _SPARSE_INPUTS[e[0]] = [a._sparse() if isinstance(a, BaseSparseNDArray) else None
                                for a in inputs]


def _leaf_buffer(entry):
    """(grad buffer storage type, grad_req) of a marked variable's entry, else None."""
    if entry is None or entry[0].__class__ is not _tape.Leaf or entry[0].grad is None:
        return None
    return entry[0].grad.stype, entry[0].grad_req


def _embedding_grad(node, ins, outs, ograds):
    p = node.p
    buf = _leaf_buffer(node.in_entries[1])
    if buf is not None and buf[1] != "null":
        stype, req = buf
        if p.sparse_grad and stype == "default":
            raise MXNetError("Cannot use sparse_grad = 1, while stype of gradients w.r.t "
                             "embedding weight is default")
        if not p.sparse_grad and stype == "row_sparse":
            raise MXNetError("Cannot use sparse_grad = 0, while stype of gradients w.r.t "
                             "embedding weight is row_sparse")
        if p.sparse_grad and req == "add":
            raise MXNetError("Check failed: req == kWriteTo (3 vs. 1) : SparseEmbedding layer "
                             "doesn't support weight gradient calculation with req != write")
    if not p.sparse_grad:
        return None
    g = ograds[0]
    gt = g.tostype("default")._data if isinstance(g, BaseSparseNDArray) else g._data
    idx = ins[0]._data.to(torch.int64).clamp(0, p.input_dim - 1).reshape(-1)
    rows, inv = torch.unique(idx, return_inverse=True)
    data = torch.zeros((rows.shape[0], p.output_dim), dtype=gt.dtype, device=gt.device)
    data.index_add_(0, inv, gt.reshape(-1, p.output_dim))
    return [None, _wrap(Sparse("row_sparse", data, (rows,), (p.input_dim, p.output_dim)),
                        node.ctx)]


def _dot_grad(node, ins, outs, ograds):
    if node in _CSR_DOT_NODES:
        return _csr_dot_grad(node, ograds)
    sparse_ins = _SPARSE_INPUTS.get(node)
    if not sparse_ins or sparse_ins[0] is None or sparse_ins[0].stype != "csr" \
            or sparse_ins[1] is not None:
        return None
    p = node.p
    buf = _leaf_buffer(node.in_entries[1])
    if buf is None or buf[0] != "row_sparse" or p.transpose_a or p.transpose_b:
        return None
    if buf[1] == "add":
        raise MXNetError("Check failed: req == kWriteTo (3 vs. 1) : ")
    g = ograds[0]
    gt = g.tostype("default")._data if isinstance(g, BaseSparseNDArray) else g._data
    # (the csr input has no gradient: MXNet computes none for it)
    return [None, _wrap(_sp.csr_dot(sparse_ins[0], gt, True), node.ctx)]


class _SparseGradNode:
    """A recorded contrib.SparseEmbedding node seen as Embedding(sparse_grad=True)."""

    def __init__(self, node):
        self._node = node
        self.p = dict(node.p, sparse_grad=True)

    def __getattr__(self, name):
        return getattr(self._node, name)


class _P(dict):
    __getattr__ = dict.__getitem__


def _sparse_embedding_grad(node, ins, outs, ograds):
    buf = _leaf_buffer(node.in_entries[1])
    if buf is not None and buf[0] == "default" and buf[1] != "null":
        p = node.p
        raise MXNetError("Operator not implemented: operator = _backward_SparseEmbedding\n"
                         "input storage types = [default, default, ]\noutput storage types = "
                         "[default, default, ]\nparams = {\"output_dim\" : "
                         f"{p.output_dim}, \"input_dim\" : {p.input_dim}, }}")
    proxy = _SparseGradNode(node)
    proxy.p = _P(proxy.p)
    return _embedding_grad(proxy, ins, outs, ograds)


_tape.SPARSE_GRAD.update({"Embedding": _embedding_grad, "dot": _dot_grad,
                          "_contrib_SparseEmbedding": _sparse_embedding_grad})


# dot(csr, rhs) nodes recorded with the sparse kernel (record_csr_dot): their gradients come
# from _csr_dot_grad, never from dot's dense rule (their recorded inputs are not dense)
_CSR_DOT_NODES: "weakref.WeakSet" = weakref.WeakSet()


def record_csr_dot(op, p, inputs, ctx, is_train):
    """While recording: ``dot(csr, rhs)`` (no transposes, rhs dense or row_sparse) computed by
    the csr kernel and put on the tape; None for any other call (which then runs densely).

    The dense route would build the csr batch densely (a 512 x 1M batch: 2 GB) for the forward
    and for the weight's gradient; here the forward reads only the stored values and the
    gradient of ``rhs`` is ``csr.T . ograd`` over the csr's columns (row_sparse for a row_sparse
    gradient buffer, dense otherwise). As in MXNet the csr input gets no gradient.
    """
    if op.name != "dot" or p.transpose_a or p.transpose_b or len(inputs) != 2:
        return None
    a, b = inputs
    if a.stype != "csr" or b.stype == "csr":
        return None
    from .. import engine
    from .ndarray import from_torch
    engine.wait_for(a)
    engine.wait_for(b)
    csr = a._sparse()
    out = _sp.csr_dot_rsp(csr, b._sparse()) if isinstance(b, BaseSparseNDArray) else \
        _sp.csr_dot(csr, b._data, False)
    res = from_torch(out, ctx)
    node = _tape.record_op(op, p, inputs, (out,), (res,), ctx, is_train)
    _SPARSE_INPUTS[node] = [csr, b._sparse() if isinstance(b, BaseSparseNDArray) else None]
    _CSR_DOT_NODES.add(node)
    return res


def _csr_dot_grad(node, ograds):
    csr = _SPARSE_INPUTS[node][0]
    g = ograds[0]
    gt = g.tostype("default")._data if isinstance(g, BaseSparseNDArray) else g._data
    grad = _sp.csr_dot(csr, gt, True)  # row_sparse: the csr's columns
    buf = _leaf_buffer(node.in_entries[1])
    if buf is not None and buf[0] == "row_sparse":
        if buf[1] == "add":
            raise MXNetError("Check failed: req == kWriteTo (3 vs. 1) : ")
        return [None, _wrap(grad, node.ctx)]
    from .ndarray import from_torch
    return [None, from_torch(_sp.to_dense(grad), node.ctx)]


def store_grad(buf: NDArray, g, req: str) -> None:
    """Write (or add) the gradient ``g`` (None: none reached it) into ``buf``, one of them
    sparse: a row_sparse buffer keeps a row_sparse gradient's rows and the nonzero rows of a
    dense one (MXNet's cast_storage)."""
    if isinstance(buf, BaseSparseNDArray):
        if g is None:
            if req == "write":
                buf._set(_sp.empty_sparse(buf.stype, buf.shape, buf._data.dtype,
                                          buf._data.device))
            return
        if req == "add":
            raise MXNetError("Check failed: temp.IsDefaultData(): ")
        assign(buf, g)
        return
    dense = _sp.to_dense(g._sparse()).to(buf._data.device)
    if req == "write":
        buf._data.copy_(dense)
    else:
        buf._data.add_(dense)


def pull_rows(stored: NDArray, row_ids: NDArray, out: NDArray) -> None:
    """``out`` (row_sparse) = the sorted unique rows ``row_ids`` of ``stored`` (KVStore's
    row_sparse_pull; rows ``stored`` does not hold come out as zeros)."""
    from .. import engine
    engine.wait_for(stored)
    engine.wait_for(row_ids)
    src = stored._sparse() if isinstance(stored, BaseSparseNDArray) else \
        _sp.rsp_from_dense(stored._data)
    ids = row_ids._data.to(src.data.device).to(torch.int64).reshape(-1)
    if ids.numel() > 4096 and ids.numel() * 4 > stored.shape[0]:
        # many ids (a csr batch's column indices): the sorted unique rows from a mask over the
        # rows, linear, instead of sorting them all
        lo, hi = (int(v) for v in torch.aminmax(ids))
        if lo < 0 or hi >= stored.shape[0]:
            raise MXNetError(f"row_sparse_pull: row_ids must lie in [0, {stored.shape[0]}), got "
                             f"[{lo}, {hi}]")
        mask = torch.zeros(stored.shape[0], dtype=torch.bool, device=ids.device)
        mask[ids] = True
        rows = mask.nonzero().reshape(-1)
    else:
        rows = torch.unique(ids)
    assign(out, _wrap(_sp.retain_rows(src, rows), stored._ctx))
