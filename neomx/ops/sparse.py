"""Sparse storage in the operator table: MXNet's storage types, their torch kernels and the
storage-type rules of the operators that take sparse inputs (MXNet's FInferStorageType).

A sparse value is a :class:`Sparse` (storage type, ``data``, index tensors ``aux`` in MXNet's
order, full ``shape``); dense values are plain tensors.

* ``csr`` (2-D): ``data`` (nnz,), ``aux = (indptr (rows + 1,), indices (nnz,))``, int64;
* ``row_sparse``: ``data`` (k, *shape[1:]), ``aux = (indices (k,),)``, sorted unique int64 rows.

Operators may also get ``op.sparse_gradient`` (the gradient rule of graphs whose inputs of
that node are sparse; handles carry ``stype``) and ``op.sparse_from_dense`` (executors consult
its rule also for dense inputs: cast_storage, Embedding's sparse_grad weight gradient). Each operator with sparse support gets
``op.infer_storage_type(p, in_stypes)`` (the output
storage types, or None when MXNet has no sparse kernel for them: the caller then computes the
dense form after MXNet's "fallback" warning; it raises MXNetError where MXNet refuses the
combination) and ``op.sparse_forward(p, ins, out_stypes, oc)`` (inputs as Sparse or tensors,
result a Sparse or a tensor). Operators without them always fall back. Kernels here only use
torch; the NDArray classes are in ``neomx/ndarray/sparse.py``.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from ..base import MXNetError
from . import registry as _reg
from .registry import OpDef, Param, register, same_shape

__all__ = ["Sparse", "STYPES", "to_dense", "dense_to", "csr_from_dense", "rsp_from_dense",
           "check_format", "retain_rows", "storage_rule"]

STYPES = ("default", "row_sparse", "csr")
STYPE_CODE = {"default": 0, "row_sparse": 1, "csr": 2}
I64 = torch.int64


class Sparse(NamedTuple):
    """A csr or row_sparse value: storage type, data, index tensors (MXNet's aux order), shape."""

    stype: str
    data: torch.Tensor
    aux: tuple
    shape: tuple


# --- conversions -------------------------------------------------------------------------------
def csr_from_dense(t: torch.Tensor) -> Sparse:
    """The canonical csr form of a 2-D tensor (its nonzeros, row-major)."""
    if t.dim() != 2:
        raise MXNetError(f"cast_storage: csr needs a 2-D array, got shape {tuple(t.shape)}")
    rows, cols = (t != 0).nonzero(as_tuple=True)
    indptr = torch.zeros(t.shape[0] + 1, dtype=I64, device=t.device)
    indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=t.shape[0]), 0)
    return Sparse("csr", t[rows, cols].clone(), (indptr, cols.to(I64)), tuple(t.shape))


def rsp_from_dense(t: torch.Tensor) -> Sparse:
    """The row_sparse form of a tensor: the rows that hold a nonzero."""
    if t.dim() == 0:
        raise MXNetError("cast_storage: row_sparse needs at least one dimension")
    flat = t.reshape(t.shape[0], -1)
    rows = (flat != 0).any(1).nonzero(as_tuple=True)[0] if flat.shape[1] else \
        torch.zeros(0, dtype=I64, device=t.device)
    return Sparse("row_sparse", t[rows].clone(), (rows.to(I64),), tuple(t.shape))


def csr_rows(s: Sparse) -> torch.Tensor:
    """The row index of each stored csr value."""
    indptr = s.aux[0]
    nnz = s.data.shape[0]
    # a count of the row starts at each position, summed up (repeat_interleave with
    # output_size is ~100x slower on CPU)
    starts = torch.zeros(nnz + 1, dtype=I64, device=indptr.device)
    starts.index_add_(0, indptr[1:-1].clamp(max=nnz), torch.ones_like(indptr[1:-1]))
    return torch.cumsum(starts[:nnz], 0)


def to_dense(s) -> torch.Tensor:
    """The dense tensor of a Sparse (tensors pass through)."""
    if not isinstance(s, Sparse):
        return s
    out = torch.zeros(s.shape, dtype=s.data.dtype, device=s.data.device)
    if s.stype == "row_sparse":
        if s.data.shape[0]:
            out[s.aux[0]] = s.data
        return out
    if s.data.shape[0]:
        out.index_put_((csr_rows(s), s.aux[1]), s.data, accumulate=True)
    return out


def dense_to(t: torch.Tensor, stype: str):
    if stype == "default":
        return t
    if stype == "csr":
        return csr_from_dense(t)
    if stype == "row_sparse":
        return rsp_from_dense(t)
    raise MXNetError(f"unknown storage type {stype}")


def empty_sparse(stype, shape, dtype, device) -> Sparse:
    shape = tuple(shape)
    if stype == "csr":
        return Sparse("csr", torch.zeros(0, dtype=dtype, device=device),
                      (torch.zeros(shape[0] + 1, dtype=I64, device=device),
                       torch.zeros(0, dtype=I64, device=device)), shape)
    return Sparse("row_sparse", torch.zeros((0,) + shape[1:], dtype=dtype, device=device),
                  (torch.zeros(0, dtype=I64, device=device),), shape)


def with_data(s: Sparse, data: torch.Tensor) -> Sparse:
    return Sparse(s.stype, data, s.aux, s.shape)


# --- validation (MXNet's check_format messages) -------------------------------------------------
_CSR_SHAPE = "Check failed: err != kCSRShapeErr (1 vs. 1) : Shape mismatch of this csr NDArray"
_CSR_INDPTR = ("Check failed: err != kCSRIndPtrErr (2 vs. 2) : IndPtr of csr NDArray should be "
               "non-negative, in non-decreasing order, start with 0, and end with value equal "
               "with size of indices.")
_CSR_IDX = ("Check failed: err != kCSRIdxErr (3 vs. 3) : Indices of csr NDArray should be "
            "non-negative, in ascending order per row  and less than the number of columns.")
_RSP_SHAPE = "Check failed: err != kRSPShapeErr (4 vs. 4) : Shape mismatch of this row_sparse NDArray"
_RSP_IDX = ("Check failed: err != kRSPIdxErr (5 vs. 5) : Indices of row_sparse NDArray should be "
            "non-negative, less than the size of first dimension and in ascending order")


def check_format(s: Sparse, full_check: bool = True) -> None:
    """Raise MXNetError (MXNet's text) when ``s``'s index structure is invalid."""
    if s.stype == "csr":
        indptr, idx = s.aux
        if (len(s.shape) != 2 or indptr.dim() != 1 or idx.dim() != 1 or s.data.dim() != 1
                or indptr.shape[0] != s.shape[0] + 1 or idx.shape[0] != s.data.shape[0]):
            raise MXNetError(_CSR_SHAPE)
        if not full_check:
            return
        # MXNet runs an indptr check and then an index check over the rows' ranges; an index
        # error (reading past the indices counts) is the one reported when both fail.
        nnz = idx.shape[0]
        ptr_bad = (int(indptr[0]) != 0 or int(indptr[-1]) != nnz
                   or bool((indptr[1:] < indptr[:-1]).any()))
        if _csr_indices_bad(indptr, idx, s.shape[1]):
            raise MXNetError(_CSR_IDX)
        if ptr_bad:
            raise MXNetError(_CSR_INDPTR)
        return
    idx = s.aux[0]
    if (idx.dim() != 1 or s.data.dim() != len(s.shape) or idx.shape[0] != s.data.shape[0]
            or tuple(s.data.shape[1:]) != tuple(s.shape[1:])):
        raise MXNetError(_RSP_SHAPE)
    if full_check and idx.shape[0]:
        if int(idx.min()) < 0 or int(idx.max()) >= s.shape[0] or bool((idx[1:] <= idx[:-1]).any()):
            raise MXNetError(_RSP_IDX)


def _csr_indices_bad(indptr, idx, ncols) -> bool:
    nnz = idx.shape[0]
    ptr = indptr.tolist() if not bool((indptr[1:] >= indptr[:-1]).all()) else None
    if ptr is not None:  # (a broken indptr: walk its rows' ranges one by one)
        for lo, hi in zip(ptr[:-1], ptr[1:]):
            if lo < hi and (lo < 0 or hi > nnz or _cols_bad(idx[lo:hi], None, ncols)):
                return True
        return False
    lo, hi = int(indptr[0]), int(indptr[-1])
    if lo < hi and (lo < 0 or hi > nnz):
        return True
    rows = torch.repeat_interleave(torch.arange(indptr.shape[0] - 1, device=idx.device),
                                   indptr[1:] - indptr[:-1])
    return _cols_bad(idx[lo:hi], rows, ncols)


def _cols_bad(cols, rows, ncols) -> bool:
    if not cols.shape[0]:
        return False
    if int(cols.min()) < 0 or int(cols.max()) >= ncols:
        return True
    step_bad = cols[1:] <= cols[:-1]
    if rows is not None:
        step_bad &= rows[1:] == rows[:-1]
    return bool(step_bad.any())


# --- kernels ------------------------------------------------------------------------------------
def _within(ids: torch.Tensor, n: int) -> bool:
    lo, hi = torch.aminmax(ids)
    return int(lo) >= 0 and int(hi) < n


def retain_rows(s: Sparse, rows: torch.Tensor) -> Sparse:
    """The rows ``rows`` (sorted, as MXNet expects) of a row_sparse value: each requested row,
    zero where ``s`` stores nothing."""
    rows = rows.to(I64).reshape(-1)
    idx = s.aux[0]
    if not idx.shape[0]:
        out = torch.zeros((rows.shape[0],) + tuple(s.shape[1:]), dtype=s.data.dtype,
                          device=s.data.device)
        return Sparse("row_sparse", out, (rows.clone(),), s.shape)
    if idx.shape[0] == s.shape[0] and (not rows.numel() or _within(rows, s.shape[0])):
        # every row stored (a weight): row i is at position i
        return Sparse("row_sparse", s.data[rows], (rows.clone(),), s.shape)
    pos = torch.searchsorted(idx, rows).clamp(max=idx.shape[0] - 1)
    miss = idx[pos] != rows
    out = s.data[pos]
    out.masked_fill_(miss.reshape((-1,) + (1,) * (out.dim() - 1)), 0)
    return Sparse("row_sparse", out, (rows.clone(),), s.shape)


def _rsp_combine(a: Sparse, b: Sparse, fn, union: bool) -> Sparse:
    """``fn`` on the rows of two row_sparse values (union of rows for +/-, intersection for *)."""
    ia, ib = a.aux[0], b.aux[0]
    rows = torch.unique(torch.cat([ia, ib]))
    zeros = torch.zeros((rows.shape[0],) + a.shape[1:], dtype=a.data.dtype, device=a.data.device)
    da, db = zeros.clone(), zeros
    da[torch.searchsorted(rows, ia)] = a.data
    db[torch.searchsorted(rows, ib)] = b.data
    out = fn(da, db)
    if not union:
        keep = torch.isin(rows, ia) & torch.isin(rows, ib)
        rows, out = rows[keep], out[keep]
    return Sparse("row_sparse", out, (rows,), a.shape)


def _csr_linear(s: Sparse) -> torch.Tensor:
    return csr_rows(s) * s.shape[1] + s.aux[1]


def _csr_from_linear(lin, data, shape, device) -> Sparse:
    rows, cols = lin // shape[1], lin % shape[1]
    indptr = torch.zeros(shape[0] + 1, dtype=I64, device=device)
    indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=shape[0]), 0)
    return Sparse("csr", data, (indptr, cols), shape)


def _csr_combine(a: Sparse, b: Sparse, fn, union: bool) -> Sparse:
    la, lb = _csr_linear(a), _csr_linear(b)
    lin = torch.unique(torch.cat([la, lb]))
    zeros = torch.zeros(lin.shape[0], dtype=a.data.dtype, device=a.data.device)
    da, db = zeros.clone(), zeros
    da[torch.searchsorted(lin, la)] = a.data
    db[torch.searchsorted(lin, lb)] = b.data
    out = fn(da, db)
    if not union:
        keep = torch.isin(lin, la) & torch.isin(lin, lb)
        lin, out = lin[keep], out[keep]
    return _csr_from_linear(lin, out, a.shape, a.data.device)


def _masked_by(s: Sparse, dense: torch.Tensor, fn, sparse_first: bool) -> Sparse:
    """``fn`` of a sparse value and a dense one at the sparse value's stored entries."""
    if s.stype == "row_sparse":
        other = dense[s.aux[0]]
    else:
        other = dense[csr_rows(s), s.aux[1]]
    return with_data(s, fn(s.data, other) if sparse_first else fn(other, s.data))


_SPMM_DTYPES = (torch.float32, torch.float64)


def _positions(sorted_ids, ids, n):
    """For each of ``ids`` (values in [0, n)), its position in the sorted unique ``sorted_ids``
    when present (some position otherwise: callers compare ``sorted_ids[pos]`` with ``ids``).
    A lookup table over [0, n) when that is not much larger than the ids (torch's searchsorted
    is ~100 ms for 1M ids on CPU), else a binary search (a 1M-column table for a 20k-value batch
    would cost more than the search)."""
    if not sorted_ids.shape[0]:
        return torch.zeros_like(ids)
    if n <= 16 * ids.shape[0]:  # (a table costs ~n memory writes, a search ~100 ns per id)
        table = torch.zeros(n, dtype=I64, device=ids.device)
        table[sorted_ids] = torch.arange(sorted_ids.shape[0], dtype=I64, device=ids.device)
        return table[ids]
    return torch.searchsorted(sorted_ids, ids).clamp(max=sorted_ids.shape[0] - 1)


def csr_dot(a: Sparse, b: torch.Tensor, transpose_a: bool):
    """csr . dense (dense result) or csr.T . dense (row_sparse result)."""
    cols = a.aux[1]
    b2 = b.reshape(b.shape[0], -1)
    if not transpose_a:
        if b.dtype in _SPMM_DTYPES and cols.shape[0]:
            # a weighted sum of b's rows per csr row is exactly EmbeddingBag(mode='sum') with
            # per-sample weights: torch's fused kernel (3-4x faster than its csr x dense, which
            # is MKL's), no (nnz, k) temporary; any column order, duplicates summed
            out = torch.nn.functional.embedding_bag(
                cols, b2.contiguous(), a.aux[0], mode="sum",
                per_sample_weights=a.data.to(b.dtype), include_last_offset=True)
        else:
            out = torch.zeros((a.shape[0], b2.shape[1]), dtype=b.dtype, device=b.device)
            out.index_add_(0, csr_rows(a), a.data.unsqueeze(1).to(b.dtype) * b2[cols])
        return out.reshape((a.shape[0],) + tuple(b.shape[1:]))
    # the rows of the result: the columns present, found with a mask over the columns (linear:
    # no sort of the nnz column indices)
    if a.shape[1] <= 16 * cols.shape[0]:
        mask = torch.zeros(a.shape[1], dtype=torch.bool, device=cols.device)
        mask[cols] = True
        uniq = mask.nonzero().reshape(-1)
    else:  # few columns in a wide matrix: sorting them is cheaper than a column-sized mask
        uniq = torch.unique(cols)
    out = torch.zeros((uniq.shape[0], b2.shape[1]), dtype=b.dtype, device=b.device)
    out.index_add_(0, _positions(uniq, cols, a.shape[1]),
                   a.data.unsqueeze(1).to(b.dtype) * b2[csr_rows(a)])
    return Sparse("row_sparse", out.reshape((uniq.shape[0],) + tuple(b.shape[1:])), (uniq,),
                  (a.shape[1],) + tuple(b.shape[1:]))


def csr_dot_rsp(a: Sparse, b: Sparse) -> torch.Tensor:
    """csr . row_sparse (dense result) without the rhs's dense form: each column of ``a`` is
    looked up among ``b``'s stored rows (columns it does not store contribute zero)."""
    rows = b.aux[0]
    if not rows.shape[0] or not a.data.shape[0]:
        return torch.zeros((a.shape[0],) + tuple(b.shape[1:]), dtype=b.data.dtype,
                           device=b.data.device)
    cols = a.aux[1]
    pos = _positions(rows, cols, a.shape[1])
    data = a.data.to(b.data.dtype).masked_fill(rows[pos] != cols, 0)
    compact = Sparse("csr", data, (a.aux[0], pos), (a.shape[0], rows.shape[0]))
    return csr_dot(compact, b.data, False)


def dense_dot_csr(a: torch.Tensor, b: Sparse) -> Sparse:
    """dense . csr as csr: every row holds the columns that appear in ``b``."""
    rows, cols = csr_rows(b), b.aux[1]
    out = torch.zeros((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    out.index_add_(1, cols, a[:, rows] * b.data.to(a.dtype))
    used = torch.unique(cols)
    data = out[:, used].reshape(-1)
    indptr = torch.arange(a.shape[0] + 1, device=a.device, dtype=I64) * used.shape[0]
    return Sparse("csr", data.contiguous(), (indptr, used.repeat(a.shape[0])),
                  (a.shape[0], b.shape[1]))


def csr_slice(s: Sparse, ranges) -> Sparse:
    """Rows (and columns) ``ranges`` ((start, stop, 1) per sliced axis) of a csr value."""
    r0, r1, _ = ranges[0]
    r1 = max(r1, r0)
    indptr, idx = s.aux
    lo, hi = int(indptr[r0]), int(indptr[r1])
    new_ptr = indptr[r0:r1 + 1] - lo
    data, cols = s.data[lo:hi], idx[lo:hi]
    shape = (r1 - r0, s.shape[1])
    if len(ranges) > 1:
        c0, c1, _ = ranges[1]
        c1 = max(c1, c0)
        rows = torch.repeat_interleave(torch.arange(shape[0], device=idx.device),
                                       new_ptr[1:] - new_ptr[:-1], output_size=cols.shape[0])
        keep = (cols >= c0) & (cols < c1)
        data, cols, rows = data[keep], cols[keep] - c0, rows[keep]
        shape = (shape[0], c1 - c0)
        new_ptr = torch.zeros(shape[0] + 1, dtype=I64, device=idx.device)
        new_ptr[1:] = torch.cumsum(torch.bincount(rows, minlength=shape[0]), 0)
    return Sparse("csr", data.clone(), (new_ptr.clone(), cols.clone()), shape)


class Fallback(list):
    """A storage-type rule's answer for MXNet's combinations that compute in dense form (with
    the fallback warning) and then store the result with these storage types."""


# --- storage-type rules -------------------------------------------------------------------------
def storage_rule(names, infer, forward):
    """Attach a storage-type rule and its sparse kernel to the registered operators ``names``."""
    for name in names:
        op = _reg.find(name)
        if op is not None:
            op.infer_storage_type, op.sparse_forward = infer, forward


def _dense_forward(op_name):
    """A sparse kernel that computes the dense form without a fallback warning (MXNet's
    operators that take sparse inputs and write dense outputs)."""
    def forward(p, ins, out_stypes, oc):
        return _reg.get(op_name).forward(p, [to_dense(x) for x in ins], oc)
    return forward


def _stype(x):
    return x.stype if isinstance(x, Sparse) else "default"


# Unary operators with f(0) == 0: the storage type is kept and f runs on the stored values.
ZERO_PRESERVING = ("abs", "sign", "square", "sqrt", "sin", "sinh", "tan", "tanh", "arcsin",
                   "arcsinh", "arctan", "arctanh", "relu", "negative", "log1p", "expm1",
                   "floor", "ceil", "rint", "round", "trunc", "fix", "cbrt", "degrees",
                   "radians", "BlockGrad", "make_loss", "_copy", "_mul_scalar", "_div_scalar")


def _keep_infer(p, stypes, shapes=None):
    return [stypes[0]]


def _keep_forward_for(name):
    def forward(p, ins, out_stypes, oc):
        s = ins[0]
        return with_data(s, _reg.get(name).forward(p, [s.data], oc))
    return forward


for _name in ZERO_PRESERVING:
    _op = _reg.find(_name)
    if _op is not None:
        _op.infer_storage_type, _op.sparse_forward = _keep_infer, _keep_forward_for(_op.name)


def _clip_infer(p, stypes, shapes=None):
    if p.a_min <= 0 <= p.a_max:
        return [stypes[0]]
    raise MXNetError("Check failed: infer_stype_success: Operator not implemented: "
                     f"operator = clip\ninput storage types = [{stypes[0]}, ]")


storage_rule(["clip"], _clip_infer, _keep_forward_for("clip"))


def _dense_out_infer(p, stypes, shapes=None):
    return ["default"]


for _name in ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "where", "norm"):
    storage_rule([_name], _dense_out_infer, _dense_forward(_name))


def _zero_scalar_infer(p, stypes, shapes=None):
    """``x + 0`` and ``x - 0`` keep the sparse storage type; other scalars give dense."""
    return [stypes[0]] if float(p.scalar) == 0 else ["default"]


def _zero_scalar_forward_for(name):
    keep, dense = _keep_forward_for(name), _dense_forward(name)
    return lambda p, ins, st, oc: (keep if st[0] != "default" else dense)(p, ins, st, oc)


for _name in ("_plus_scalar", "_minus_scalar"):
    storage_rule([_name], _zero_scalar_infer, _zero_scalar_forward_for(_name))


def _elemwise_infer(kind):
    def infer(p, stypes, shapes=None):
        a, b = stypes
        if a == b and a != "default":
            return [a]
        if kind == "mul" and "default" in stypes:
            return [a if a != "default" else b]
        if kind == "div" or "default" in stypes:
            return ["default"]  # (csr with row_sparse: MXNet falls back)
        return None
    return infer


_FNS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


def _elemwise_forward(kind, name):
    fn = _FNS[kind]

    def forward(p, ins, out_stypes, oc):
        a, b = ins
        if out_stypes[0] == "default":
            return _reg.get(name).forward(p, [to_dense(a), to_dense(b)], oc)
        if isinstance(a, Sparse) and isinstance(b, Sparse):
            combine = _rsp_combine if a.stype == "row_sparse" else _csr_combine
            # (MXNet: union of rows for row_sparse, intersection of entries for csr products)
            return combine(a, b, fn, kind != "mul" or a.stype == "row_sparse")
        if isinstance(a, Sparse):
            return _masked_by(a, torch.broadcast_to(b, a.shape), fn, True)
        return _masked_by(b, torch.broadcast_to(a, b.shape), fn, False)
    return forward


for _kind in ("add", "sub", "mul", "div"):
    storage_rule([f"elemwise_{_kind}"], _elemwise_infer(_kind),
                 _elemwise_forward(_kind, f"elemwise_{_kind}"))


def _broadcast_rule(kind, name):
    """broadcast_* on sparse inputs: as elemwise_* for equal shapes; csr times (or divided by)
    a dense column or row vector keeps csr; other shapes fall back."""
    elem_infer, elem_fwd = _elemwise_infer(kind), _elemwise_forward(kind, name)

    def infer(p, stypes, shapes):
        if shapes[0] == shapes[1]:
            return elem_infer(p, stypes)
        if kind in ("mul", "div") and stypes == ["csr", "default"] and len(shapes[1]) == 2:
            return ["csr"]
        return None

    def forward(p, ins, out_stypes, oc):
        a, b = ins
        if isinstance(a, Sparse) and a.stype == "csr" and not isinstance(b, Sparse) \
                and tuple(b.shape) != a.shape:
            return _masked_by(a, torch.broadcast_to(b, a.shape), _FNS[kind], True)
        return elem_fwd(p, ins, out_stypes, oc)
    infer.needs_shapes = True
    return infer, forward


for _kind in ("add", "sub", "mul", "div"):
    _i, _f = _broadcast_rule(_kind, f"broadcast_{_kind}")
    storage_rule([f"broadcast_{_kind}"], _i, _f)


def _add_n_infer(p, stypes, shapes=None):
    if all(s == "row_sparse" for s in stypes):
        return ["row_sparse"]
    return None


def _add_n_forward(p, ins, out_stypes, oc):
    rows = torch.unique(torch.cat([s.aux[0] for s in ins]))
    out = torch.zeros((rows.shape[0],) + ins[0].shape[1:], dtype=ins[0].data.dtype,
                      device=ins[0].data.device)
    for s in ins:
        out.index_add_(0, torch.searchsorted(rows, s.aux[0]), s.data)
    return Sparse("row_sparse", out, (rows,), ins[0].shape)


storage_rule(["add_n"], _add_n_infer, _add_n_forward)


def _dot_infer(p, stypes, shapes=None):
    a, b = stypes
    if a == "csr" and b in ("default", "row_sparse") and not p.transpose_b:
        return ["row_sparse" if p.transpose_a else "default"]
    if a == "default" and b == "csr" and not p.transpose_a:
        return Fallback(["csr"]) if p.transpose_b else ["csr"]
    return None


def _dot_forward(p, ins, out_stypes, oc):
    a, b = ins
    if isinstance(a, Sparse):
        if isinstance(b, Sparse) and not p.transpose_a:
            return csr_dot_rsp(a, b)
        return csr_dot(a, to_dense(b), p.transpose_a)  # (a row_sparse rhs: its dense form)
    return dense_dot_csr(a, b)


storage_rule(["dot"], _dot_infer, _dot_forward)


def _dot_sparse_gradient(F, p, ins, outs, ograds):
    """dot's gradient in graphs bound with a csr lhs: MXNet's backward computes the rhs
    gradient only (the csr input's gradient array stays zero)."""
    grads = list(_reg.get("dot").gradient(F, p, ins, outs, ograds))
    if ins[0].stype == "csr":
        grads[0] = F._zeros(shape=ins[0].shape, dtype=ins[0].dtype)
    return grads


_reg.get("dot").sparse_gradient = _dot_sparse_gradient


def _reduce_infer(p, stypes, shapes=None):
    if stypes[0] == "csr" and p.axis in (0, 1, (0,), (1,)) and not p.keepdims and not p.exclude:
        return ["default"]
    return None


def _reduce_forward_for(mean):
    def forward(p, ins, out_stypes, oc):
        s = ins[0]
        axis = p.axis if isinstance(p.axis, int) else p.axis[0]
        n = s.shape[axis]
        if axis == 0:
            out = torch.zeros(s.shape[1], dtype=s.data.dtype, device=s.data.device)
            out.index_add_(0, s.aux[1], s.data)
        else:
            out = torch.zeros(s.shape[0], dtype=s.data.dtype, device=s.data.device)
            out.index_add_(0, csr_rows(s), s.data)
        return out / n if mean else out
    return forward


storage_rule(["sum"], _reduce_infer, _reduce_forward_for(False))
storage_rule(["mean"], _reduce_infer, _reduce_forward_for(True))


def _slice_infer(p, stypes, shapes=None):
    from .matrix import _slice_ranges
    if stypes[0] == "csr" and all(r[2] == 1 for r in _slice_ranges(p, shapes[0])):
        return ["csr"]
    return None


def _slice_forward(p, ins, out_stypes, oc):
    from .matrix import _slice_ranges
    return csr_slice(ins[0], _slice_ranges(p, ins[0].shape))


storage_rule(["slice"], _slice_infer, _slice_forward)


def _zeros_like_forward(p, ins, out_stypes, oc):
    s = ins[0]
    return empty_sparse(s.stype, s.shape, s.data.dtype, s.data.device)


storage_rule(["zeros_like"], _keep_infer, _zeros_like_forward)


def _concat_infer(p, stypes, shapes=None):
    if p.dim == 0 and all(s == "csr" for s in stypes):
        return ["csr"]
    return None


def _concat_forward(p, ins, out_stypes, oc):
    ptrs, offset = [ins[0].aux[0][:1]], 0
    for s in ins:
        ptrs.append(s.aux[0][1:] + offset)
        offset += s.data.shape[0]
    shape = (sum(s.shape[0] for s in ins), ins[0].shape[1])
    return Sparse("csr", torch.cat([s.data for s in ins]), (torch.cat(ptrs),
                  torch.cat([s.aux[1] for s in ins])), shape)


storage_rule(["Concat"], _concat_infer, _concat_forward)


# --- operators of their own ----------------------------------------------------------------------
def _cast_storage_forward(p, ins, oc):
    return ins[0].clone()


def _cast_infer(p, stypes, shapes=None):
    return [p.stype]


def _cast_sparse_forward(p, ins, out_stypes, oc):
    x, want = ins[0], p.stype
    if _stype(x) == want:
        return Sparse(x.stype, x.data.clone(), tuple(a.clone() for a in x.aux), x.shape)
    return dense_to(to_dense(x), want)


register(OpDef(
    "cast_storage", _cast_storage_forward, same_shape,
    params=[Param("stype", "str", doc="Output storage type.",
                  choices=("csr", "default", "row_sparse"))],
    gradient=lambda F, p, ins, outs, ograds: [F._copy(ograds[0])],
    doc="Casts tensor storage type to the new type."))
storage_rule(["cast_storage"], _cast_infer, _cast_sparse_forward)
_reg.get("cast_storage").sparse_from_dense = True  # (executors: csr/row_sparse from dense)


def _retain_shape(p, ins, outs):
    data, idx = ins
    if idx is not None and len(idx) != 1:
        raise _reg.ShapeError("sparse_retain: indices must be 1-D")
    return [data, idx], [data]


def _retain_type(p, ins, outs):
    return [ins[0], ins[1]], [ins[0]]


def _retain_dense(p, ins, oc):
    data, idx = ins
    out = torch.zeros_like(data)
    rows = idx.to(I64)
    out[rows] = data[rows]
    return out


def _retain_infer(p, stypes, shapes=None):
    if stypes[0] == "row_sparse":
        return ["row_sparse"]
    return None


register(OpDef(
    "_sparse_retain", _retain_dense, _retain_shape, inputs=("data", "indices"),
    infer_type=_retain_type, hint="sparse_retain", no_grad_inputs=("indices",),
    doc="Keeps the rows of a row_sparse array listed in indices; the other rows become zero."))
storage_rule(["_sparse_retain"], _retain_infer,
             lambda p, ins, st, oc: retain_rows(ins[0], ins[1]))


def _embedding_infer(p, stypes, shapes=None):
    if stypes[0] == "default" and stypes[1] == "row_sparse":
        return ["default"]  # (SparseEmbedding's row_sparse weight)
    return None


storage_rule(["Embedding"], _embedding_infer, _dense_forward("Embedding"))


def _embedding_grad_infer(p, stypes, shapes=None):
    if p.sparse_grad and stypes == ["default", "default"]:
        return ["row_sparse"]  # (executors: Embedding(sparse_grad=True)'s weight gradient)
    return None


def _embedding_grad_forward(p, ins, out_stypes, oc):
    g, data = (to_dense(x) for x in ins)
    idx = data.to(I64).clamp(0, p.input_dim - 1).reshape(-1)
    rows, inv = torch.unique(idx, return_inverse=True)
    out = torch.zeros((rows.shape[0], p.output_dim), dtype=g.dtype, device=g.device)
    out.index_add_(0, inv, g.reshape(-1, p.output_dim))
    return Sparse("row_sparse", out, (rows,), (p.input_dim, p.output_dim))


storage_rule(["_backward_Embedding"], _embedding_grad_infer, _embedding_grad_forward)
_reg.get("_backward_Embedding").sparse_from_dense = True


# --- contrib.SparseEmbedding ---------------------------------------------------------------------
def _sparse_embedding_gradient(F, p, ins, outs, ograds):
    return [None, F._backward_Embedding(ograds[0], ins[0], input_dim=p.input_dim,
                                        output_dim=p.output_dim, dtype=p.dtype, sparse_grad=True)]


def _register_sparse_embedding():
    emb = _reg.get("Embedding")
    params = [prm for prm in emb.params if prm.name != "sparse_grad"] + [
        Param("deterministic", "bool", False, "Force the backward gradient calculation to be "
              "executed based on a deterministic order at the cost of slower speed.")]

    def forward(p, ins, oc):
        return emb.forward(p, ins, oc)

    register(OpDef(
        "_contrib_SparseEmbedding", forward, emb.infer_shape, params=params,
        inputs=("data", "weight"), infer_type=emb.infer_type,
        gradient=_sparse_embedding_gradient,
        doc="Maps integer indices to vector representations (embeddings), with a row_sparse\n"
            "weight gradient (the rows the indices pick): ``Embedding(sparse_grad=True)``.\n"
            "The weight may be dense or row_sparse."))
    storage_rule(["_contrib_SparseEmbedding"], _embedding_infer,
                 _dense_forward("_contrib_SparseEmbedding"))


_register_sparse_embedding()
