"""MXNet 1.9.1's linear-algebra operators (``mx.nd.linalg_*``, registered as ``_linalg_*``):
gemm, gemm2, potrf, potri, trsm, trmm, syrk, gelqf, inverse, det, slogdet, sumlogdiag,
extractdiag, makediag, extracttrian, maketrian; syevd (``mx.nd.linalg.syevd`` only).

Semantics, checked against MXNet 1.9.1 (``tools/make_golden_linalg.py``):

* Every operator works on the last two axes (``gemm``/``gemm2``: the rows on ``axis``, the
  columns on the last axis); leading axes are a batch. Only float32 and float64 are accepted
  (other types fail in the forward: "This operation only supports 32-bit and 64-bit floating
  point"); the inputs must share one type.
* Triangular inputs (``potri``'s factor, ``trsm``/``trmm``'s ``A``) are read from their
  ``lower`` (or upper) triangle only; the other triangle gets no gradient.
* ``det``/``slogdet`` have two hidden outputs (the LU factors and the int32 pivots), as MXNet;
  a 2-d input gives shape ``(1,)``. ``sumlogdiag`` likewise.
* ``extracttrian``/``maketrian`` store a triangle row by row; ``offset > 0`` is the upper
  triangle above that diagonal, ``offset < 0`` the lower one below it, ``offset == 0`` the
  triangle ``lower`` names.
* ``syevd`` returns ``U`` with the eigenvectors as rows, the largest-magnitude entry of each
  row positive (MXNet's sign convention), and the eigenvalues ascending.
* Gradients are MXNet's (the exact derivatives; potrf's and potri's are symmetric in ``A``):
  ``_backward_linalg_<op>`` computes them with torch.autograd over the forward.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..base import MXNetError
from .nn_layers import data_typed
from .registry import OpDef, Param, ShapeError, register
from .replay import replay_vjp

_FLOAT_ONLY = "This operation only supports 32-bit and 64-bit floating point"


def _sh(s):
    return "[" + ",".join(str(int(d)) for d in s) + "]"


def _known(*shapes):
    return all(s is not None and len(s) and all(d for d in s) for s in shapes)


def _infer_failed(name, ins):
    return ShapeError(f"Operator {name} inferring shapes failed.\ninput shapes:\n"
                      + "\n".join(_sh(s) for s in ins) + "\noutput shapes:\nNone")


def _set(lst, i, want):
    have = lst[i]
    if have is not None and len(have) and tuple(have) != tuple(want):
        if len(have) != len(want) or any(a and b and a != b for a, b in zip(have, want)):
            raise ShapeError(f"Shape inconsistent, Provided = {_sh(have)}, inferred shape={_sh(want)}")
    lst[i] = tuple(want)


def _check(ok, expr, a, b, msg):
    if not ok:
        raise ShapeError(f"Check failed: {expr} ({a} vs. {b}) : {msg}")


# --- registration: forward, autograd backward ----------------------------------------------------
def _lin_op(name, compute, infer_shape, *, params=(), inputs=("A",), outputs=("output",),
            hidden=None, num_hidden=0, infer_type=None, alias=True, doc=""):
    """Register ``_linalg_<name>`` (alias ``linalg_<name>``) and ``_backward_linalg_<name>``.
    ``compute(p, ins)`` returns the visible outputs (a tuple), differentiably; ``hidden(p, ins,
    outs)`` the hidden ones. ``alias=False``: no ``linalg_<name>`` (MXNet has ``syevd`` only as
    ``mx.nd.linalg.syevd``)."""
    full, bname = "_linalg_" + name, "_backward_linalg_" + name
    nv = len(outputs)

    def forward(p, ins, oc):
        for x in ins:
            if x.dtype not in (torch.float32, torch.float64):
                raise MXNetError(_FLOAT_ONLY)
        with torch.no_grad():
            outs = tuple(compute(p, ins))
        if hidden is not None:
            outs = outs + tuple(hidden(p, ins, outs))
        return outs[0] if len(outs) == 1 else outs

    def gradient(F, p, ins, outs, ograds):
        res = getattr(F, bname)(*ograds[:nv], *ins, **p)
        return [res] if len(inputs) == 1 else list(res)

    def backward(p, bins, oc):
        res = replay_vjp(lambda leaves: compute(p, leaves), bins[nv:], bins[:nv])
        return res[0] if len(res) == 1 else tuple(res)

    register(OpDef(full, forward, infer_shape, params=params, inputs=inputs, outputs=outputs,
                   num_hidden_outputs=num_hidden, infer_type=infer_type or data_typed(),
                   gradient=gradient, hint="linalg_" + name,
                   aliases=("linalg_" + name,) if alias else (),
                   doc=doc))
    register(OpDef(
        bname, backward, lambda p, ins, outs: (ins, list(ins[nv:])), params=params,
        inputs=tuple(f"ograd{i}" for i in range(nv)) + tuple(inputs), outputs=tuple(inputs),
        infer_type=lambda p, ins, outs: (ins, list(ins[nv:])), public=False,
        doc=f"Gradient of {full}."))


# --- gemm, gemm2 ---------------------------------------------------------------------------------
_T_A = Param("transpose_a", "bool", False, "Multiply with transposed of first input (A).")
_T_B = Param("transpose_b", "bool", False, "Multiply with transposed of second input (B).")
_ALPHA_AB = Param("alpha", "float", 1.0, "Scalar factor multiplied with A*B.")
_AXIS = Param("axis", "int", -2, "Axis corresponding to the matrix rows.")


def _mm_shape(p, a, b):
    ndim = len(a)
    axis = p.axis + ndim if p.axis < 0 else p.axis
    if not (0 <= axis < ndim - 1):
        raise ShapeError(f"Check failed: axis >= 0 && axis < ndim-1: Invalid row axis ({p.axis})")
    out = [0] * ndim
    for i in range(ndim - 1):
        if i != axis:
            _check(a[i] == b[i], "(*in_attrs)[0][i] == (*in_attrs)[1][i]", a[i], b[i],
                   "Shapes of inputs 0, 1 must be the same, except on row/col axis")
            out[i] = a[i]
    out[axis] = a[ndim - 1] if p.transpose_a else a[axis]
    out[ndim - 1] = b[axis] if p.transpose_b else b[ndim - 1]
    ka = a[axis] if p.transpose_a else a[ndim - 1]
    kb = b[ndim - 1] if p.transpose_b else b[axis]
    _check(ka == kb, "(transpose_a ? (*in_attrs)[0][axis] : (*in_attrs)[0][ndim-1]) == "
           "(transpose_b ? (*in_attrs)[1][ndim-1] : (*in_attrs)[1][axis])", ka, kb,
           "Incompatible matrix dimensions for multiplication")
    return tuple(out)


def _gemm_infer(name):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a, b = ins[0], ins[1]
        if not _known(a, b):
            return ins, outs
        if len(a) < 2 or len(a) != len(b):
            raise _infer_failed(name, ins)
        o = _mm_shape(p, a, b)
        if len(ins) > 2:
            _set(ins, 2, o)
        _set(outs, 0, o)
        return ins, outs
    return infer


def _mm(p, a, b):
    ax = p.axis + a.dim() if p.axis < 0 else p.axis
    if ax != a.dim() - 2:
        a, b = a.movedim(ax, -2), b.movedim(ax, -2)
    if p.transpose_a:
        a = a.mT
    if p.transpose_b:
        b = b.mT
    y = torch.matmul(a, b) * p.alpha
    return y, ax


def _gemm(p, ins):
    y, ax = _mm(p, ins[0], ins[1])
    c = ins[2]
    if ax != c.dim() - 2:
        c = c.movedim(ax, -2)
    y = y + c * p.beta
    return (y.movedim(-2, ax) if ax != y.dim() - 2 else y,)


def _gemm2(p, ins):
    y, ax = _mm(p, ins[0], ins[1])
    return (y.movedim(-2, ax) if ax != y.dim() - 2 else y,)


_lin_op("gemm", _gemm, _gemm_infer("_linalg_gemm"), inputs=("A", "B", "C"),
        params=(_T_A, _T_B, _ALPHA_AB, Param("beta", "float", 1.0, "Scalar factor multiplied with C."),
                _AXIS),
        doc="``alpha * op(A) * op(B) + beta * C`` on the last two axes (rows on ``axis``).")
_lin_op("gemm2", _gemm2, _gemm_infer("_linalg_gemm2"), inputs=("A", "B"),
        params=(_T_A, _T_B, _ALPHA_AB, _AXIS),
        doc="``alpha * op(A) * op(B)`` on the last two axes (rows on ``axis``).")


# --- shape rules of the square-matrix ops ---------------------------------------------------------
def _same_infer(p, ins, outs):
    ins, outs = list(ins), list(outs)
    s = ins[0] if ins[0] is not None else outs[0]
    if s is not None:
        _set(ins, 0, s)
        _set(outs, 0, s)
    return ins, outs


def _square_2d(a, what):
    """The runtime check of MXNet's 2-d kernels (potrf, potri)."""
    if a.dim() < 2 or a.shape[-2] != a.shape[-1]:
        n0, n1 = (a.shape[-2], a.shape[-1]) if a.dim() >= 2 else (a.shape[0], 1)
        raise MXNetError(f"Check failed: A.size(0) == A.size(1) ({n0} vs. {n1}) : "
                         f"No square matrix as input to {what}.")


def _tri(a, lower):
    return torch.tril(a) if lower else torch.triu(a)


# --- potrf, potri ---------------------------------------------------------------------------------
def _potrf(p, ins):
    a = ins[0]
    _square_2d(a, "potrf")
    lo, info = torch.linalg.cholesky_ex(a)  # (reads the lower triangle; symmetric gradient)
    bad = info.reshape(-1)
    bad = bad[bad != 0]
    if bad.numel():
        kind = "s" if a.dtype == torch.float32 else "d"
        raise MXNetError(f"Check failed: ret == 0 ({int(bad[0])} vs. 0) : {kind}potrf failed in "
                         f"lapack on cpu. This may happen when the input matrix is either not "
                         f"symmetric or not positive definite.")
    return (lo,)


def _potri(p, ins):
    a = ins[0]
    _square_2d(a, "potri")
    return (torch.cholesky_inverse(torch.tril(a)),)


_lin_op("potrf", _potrf, _same_infer,
        doc="Cholesky factor ``L`` (lower triangular) of symmetric positive definite ``A = L L^T``"
            " (only A's lower triangle is read).")
_lin_op("potri", _potri, _same_infer,
        doc="``(L L^T)^-1`` from a Cholesky factor ``L`` (its lower triangle): the inverse of "
            "``A`` given ``potrf(A)``.")


# --- trsm, trmm -----------------------------------------------------------------------------------
_TRI_PARAMS = (
    Param("transpose", "bool", False, "Use transposed of the triangular matrix"),
    Param("rightside", "bool", False, "Multiply triangular matrix from the right to non-triangular one."),
    Param("lower", "bool", True, "True if the triangular matrix is lower triangular, false if it is "
                                 "upper triangular."),
    Param("alpha", "float", 1.0, "Scalar factor to be applied to the result."),
)


def _tri_infer(name):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a, b = ins[0], ins[1]
        if not _known(a, b):
            return ins, outs
        if len(a) < 2 or len(a) != len(b):
            raise _infer_failed(name, ins)
        nd = len(a)
        _check(a[-2] == a[-1], "(*in_attrs)[0][ndim-2] == (*in_attrs)[0][ndim-1]", a[-2], a[-1],
               "First operand must be a tensor of square matrices")
        for i in range(nd - 2):
            _check(a[i] == b[i], "(*in_attrs)[0][i] == (*in_attrs)[1][i]", a[i], b[i],
                   "Shapes of inputs 0, 1 must be the same, except on last two dimensions")
        if p.rightside:
            _check(a[-2] == b[-1], "(*in_attrs)[0][ndim-2] == (*in_attrs)[1][ndim-1]", a[-2], b[-1],
                   "Incompatible matrix dimensions for multiplication")
        else:
            _check(b[-2] == a[-1], "(*in_attrs)[1][ndim-2] == (*in_attrs)[0][ndim-1]", b[-2], a[-1],
                   "Incompatible matrix dimensions for multiplication")
        _set(outs, 0, tuple(b))
        return ins, outs
    return infer


def _trsm(p, ins):
    a, b = _tri(ins[0], p.lower), ins[1]
    upper = not p.lower
    if p.transpose:
        a, upper = a.mT, not upper
    return (torch.linalg.solve_triangular(a, b * p.alpha, upper=upper, left=not p.rightside),)


def _trmm(p, ins):
    a, b = _tri(ins[0], p.lower), ins[1]
    if p.transpose:
        a = a.mT
    y = torch.matmul(b, a) if p.rightside else torch.matmul(a, b)
    return (y * p.alpha,)


_lin_op("trsm", _trsm, _tri_infer("_linalg_trsm"), inputs=("A", "B"), params=_TRI_PARAMS,
        doc="Solves ``op(A) X = alpha B`` (``X op(A) = alpha B`` with ``rightside``) for "
            "triangular ``A``.")
_lin_op("trmm", _trmm, _tri_infer("_linalg_trmm"), inputs=("A", "B"), params=_TRI_PARAMS,
        doc="``alpha op(A) B`` (``alpha B op(A)`` with ``rightside``) for triangular ``A``.")


# --- syrk -----------------------------------------------------------------------------------------
def _syrk_infer(p, ins, outs):
    ins, outs = list(ins), list(outs)
    a = ins[0]
    if not _known(a):
        return ins, outs
    if len(a) < 2:
        raise _infer_failed("_linalg_syrk", ins)
    m = a[-1] if p.transpose else a[-2]
    _set(outs, 0, tuple(a[:-2]) + (m, m))
    return ins, outs


def _syrk(p, ins):
    a = ins[0]
    y = torch.matmul(a.mT, a) if p.transpose else torch.matmul(a, a.mT)
    return (y * p.alpha,)


_lin_op("syrk", _syrk, _syrk_infer,
        params=(Param("transpose", "bool", False, "Use transpose of input matrix."),
                Param("alpha", "float", 1.0, "Scalar factor to be applied to the result.")),
        doc="``alpha A A^T`` (``alpha A^T A`` with ``transpose``).")


# --- inverse, det, slogdet ------------------------------------------------------------------------
def _sq_checks(a):
    nd = len(a)
    _check(nd >= 2, "ndim >= 2", nd, 2, "Input A's dimension must be >= 2")
    _check(a[-2] == a[-1], "in[ndim-2] == in[ndim-1]", a[-2], a[-1],
           "Input A's last two dimension must be equal")


def _inverse_infer(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if _known(ins[0]):
        _sq_checks(ins[0])
        _set(outs, 0, ins[0])
    return ins, outs


def _inverse(p, ins):
    y, info = torch.linalg.inv_ex(ins[0])
    bad = info.reshape(-1)
    bad = bad[bad != 0]
    if bad.numel():
        raise MXNetError(f"Check failed: ret == 0 ({int(bad[0])} vs. 0) : the input matrix is "
                         f"non-convertible")
    return (y,)


_lin_op("inverse", _inverse, _inverse_infer, doc="The inverse of square matrices ``A``.")


def _det_infer(nvis):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a = ins[0]
        if not _known(a):
            return ins, outs
        _sq_checks(a)
        o = tuple(a[:-2]) if len(a) > 2 else (1,)
        for i in range(nvis):
            _set(outs, i, o)
        _set(outs, nvis, tuple(a))          # hidden: LU factors
        _set(outs, nvis + 1, tuple(a[:-1]))  # hidden: pivots
        return ins, outs
    return infer


def _det_type(nvis):
    base = data_typed()

    def infer(p, ins, outs):
        ins, outs = base(p, ins, outs)
        outs = list(outs)
        if outs:
            outs[nvis + 1] = np.dtype(np.int32)
        return ins, outs
    return infer


def _batch_out(a, y):
    return y.reshape(1) if a.dim() == 2 else y


def _lu_hidden(p, ins, outs):
    lu, piv, _ = torch.linalg.lu_factor_ex(ins[0])
    return lu, piv.to(torch.int32)


_lin_op("det", lambda p, ins: (_batch_out(ins[0], torch.linalg.det(ins[0])),), _det_infer(1),
        outputs=("output0",), hidden=_lu_hidden, num_hidden=2, infer_type=_det_type(1),
        doc="Determinant of square matrices (outputs the LU factors and pivots as hidden outputs).")


def _slogdet(p, ins):
    sign, logabs = torch.linalg.slogdet(ins[0])
    return _batch_out(ins[0], sign), _batch_out(ins[0], logabs)


_lin_op("slogdet", _slogdet, _det_infer(2), outputs=("output0", "output1"), hidden=_lu_hidden,
        num_hidden=2, infer_type=_det_type(2),
        doc="Sign and natural log of the absolute value of the determinant of square matrices.")


# --- sumlogdiag -----------------------------------------------------------------------------------
def _reduce_infer(name):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a = ins[0]
        if not _known(a):
            return ins, outs
        if len(a) < 2:
            raise _infer_failed(name, ins)
        _set(outs, 0, tuple(a[:-2]) if len(a) > 2 else (1,))
        return ins, outs
    return infer


def _sumlogdiag(p, ins):
    a = ins[0]
    if a.shape[-2] != a.shape[-1]:
        raise MXNetError(f"Check failed: A.size(1) == A.size(2) ({a.shape[-2]} vs. {a.shape[-1]}) : "
                         f"sumlogdiag operator requires square matrices as input.")
    return (_batch_out(a, torch.log(torch.diagonal(a, 0, -2, -1)).sum(-1)),)


_lin_op("sumlogdiag", _sumlogdiag, _reduce_infer("_linalg_sumlogdiag"),
        doc="Sum of the natural logarithms of the diagonal elements of square matrices.")


# --- extractdiag, makediag, extracttrian, maketrian -----------------------------------------------
_OFFSET = Param("offset", "int", 0, "Offset of the diagonal versus the main diagonal. 0 corresponds "
                                    "to the main diagonal, a negative/positive value to diagonals "
                                    "below/above the main diagonal.")
_LOWER = Param("lower", "bool", True, "Refer to the lower triangular matrix if lower=true, refer to "
                                      "the upper otherwise. Only relevant when offset=0")


def _extract_infer(trian):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a = ins[0]
        if not _known(a):
            return ins, outs
        nd = len(a)
        _check(nd >= 2, "ndim >= 2", nd, 2, "Input operand must be a tensor of matrices")
        _check(a[-2] == a[-1], "(*in_attrs)[0][ndim-2] == (*in_attrs)[0][ndim-1]", a[-2], a[-1],
               "Input operand must be a tensor of square matrices")
        n = a[-1] - abs(p.offset)
        if n <= 0:
            raise ShapeError(f"Check failed: n > 0 ({n} vs. 0) : Illegal offset {p.offset} for "
                             f"diag/trian extraction of matrix with dimension {nd}")
        _set(outs, 0, tuple(a[:-2]) + ((n * (n + 1)) // 2 if trian else n,))
        return ins, outs
    return infer


def _make_infer(trian):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a = ins[0]
        if not _known(a):
            return ins, outs
        nd = len(a)
        _check(nd >= 1, "ndim >= 1", nd, 1, "Input operand must be a tensor of vectors")
        n = a[-1]
        if trian:
            m = int((math.sqrt(8 * n + 1) - 1) / 2)
            _check((m * (m + 1)) // 2 == n, "(m*(m+1))/2 == n", (m * (m + 1)) // 2, n,
                   "Input tensor of maketrian has an invalid dimension for the last axis.")
            n = m
        k = n + abs(p.offset)
        _set(outs, 0, tuple(a[:-1]) + (k, k))
        return ins, outs
    return infer


def _trian_index(p, k, device):
    """Flat indices of the triangle an (offset, lower) pair names in a k x k matrix, in MXNet's
    order: a lower triangle row by row, an upper one column by column."""
    lower = p.offset < 0 or (p.offset == 0 and p.lower)
    idx = torch.tril_indices(k, k, -abs(p.offset), device=device)
    return idx[0] * k + idx[1] if lower else idx[1] * k + idx[0]


def _extracttrian(p, ins):
    a = ins[0]
    k = a.shape[-1]
    return (a.reshape(a.shape[:-2] + (k * k,))[..., _trian_index(p, k, a.device)],)


def _maketrian(p, ins):
    x = ins[0]
    m = int((math.sqrt(8 * x.shape[-1] + 1) - 1) / 2)
    k = m + abs(p.offset)
    idx = _trian_index(p, k, x.device)
    flat = x.new_zeros(x.shape[:-1] + (k * k,))
    flat = flat.index_copy(-1, idx, x) if x.dim() else flat
    return (flat.reshape(x.shape[:-1] + (k, k)),)


_lin_op("extractdiag", lambda p, ins: (torch.diagonal(ins[0], p.offset, -2, -1).clone(),),
        _extract_infer(False), params=(_OFFSET,),
        doc="The ``offset`` diagonal of square matrices.")
_lin_op("makediag", lambda p, ins: (torch.diag_embed(ins[0], p.offset),), _make_infer(False),
        params=(_OFFSET,), doc="Square matrices with the vectors on their ``offset`` diagonal.")
_lin_op("extracttrian", _extracttrian, _extract_infer(True), params=(_OFFSET, _LOWER),
        doc="The triangle of square matrices as vectors (row by row): above the ``offset`` "
            "diagonal for ``offset > 0``, below it for ``offset < 0``, else the ``lower`` one.")
_lin_op("maketrian", _maketrian, _make_infer(True), params=(_OFFSET, _LOWER),
        doc="Triangular matrices from vectors (the inverse of ``extracttrian``).")


# --- gelqf ----------------------------------------------------------------------------------------
def _gelqf_infer(p, ins, outs):
    ins, outs = list(ins), list(outs)
    a = ins[0]
    if not _known(a):
        return ins, outs
    nd = len(a)
    _check(nd >= 2, "ndim >= 2", nd, 2, "Input A must have at least 2 dimensions")
    _check(a[-2] <= a[-1], "in_a[ndim-2] <= in_a[ndim-1]", a[-2], a[-1],
           "Input A shape wrong: Last dimension must be >= than second to last")
    _set(outs, 0, tuple(a))
    _set(outs, 1, tuple(a[:-1]) + (a[-2],))
    return ins, outs


def _gelqf(p, ins):
    q, r = torch.linalg.qr(ins[0].mT)  # A^T = Q R  <=>  A = R^T Q^T = L Q
    return q.mT, r.mT


_lin_op("gelqf", _gelqf, _gelqf_infer, outputs=("output0", "output1"),
        doc="LQ factorization ``A = L Q`` of wide matrices: ``Q`` with orthonormal rows, ``L`` "
            "lower triangular.")


# --- syevd ----------------------------------------------------------------------------------------
def _syevd_infer(p, ins, outs):
    ins, outs = list(ins), list(outs)
    a = ins[0]
    if not _known(a):
        return ins, outs
    if len(a) < 2:
        raise _infer_failed("_linalg_syevd", ins)
    _check(a[-2] == a[-1], "in_a[ndim-2] == in_a[ndim-1]", a[-2], a[-1],
           "Input A shape wrong: Last two dimensions must be equal")
    _set(outs, 0, tuple(a))
    _set(outs, 1, tuple(a[:-1]))
    return ins, outs


def _syevd(p, ins):
    w, v = torch.linalg.eigh(ins[0])  # (columns of v; reads the lower triangle)
    u = v.mT
    big = torch.gather(u, -1, u.detach().abs().argmax(-1, keepdim=True))
    sign = torch.where(big.detach() < 0, -1.0, 1.0).to(u.dtype)
    return u * sign, w


_lin_op("syevd", _syevd, _syevd_infer, outputs=("output0", "output1"), alias=False,
        doc="Eigendecomposition ``U A = diag(L) U`` of symmetric matrices: eigenvectors as the "
            "rows of ``U``, eigenvalues ``L`` ascending.")
