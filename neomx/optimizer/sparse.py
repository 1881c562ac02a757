"""Updates with row_sparse gradients (MXNet 1.9.1's ``*_update`` operators on a row_sparse
gradient): a *lazy* update runs the dense rule on the rows the gradient stores only (every
other row, its weight decay and its states, untouched); a standard one is the dense rule with
the gradient's missing rows as zeros. A row_sparse weight (a KVStore's) is updated in dense
form and keeps its stored rows plus the gradient's."""
from __future__ import annotations

import torch

from ..base import MXNetError
from ..ops import sparse as _sp
from ..ops.sparse import Sparse

__all__ = ["is_sparse", "dense_grad", "run"]


def is_sparse(a) -> bool:
    return a.stype != "default"


def dense_grad(g):
    """The dense form of a sparse gradient (for standard updates)."""
    from ..ndarray.sparse import to_dense_array
    return to_dense_array(g)


def _rows_of(g) -> torch.Tensor:
    if g.stype != "row_sparse":
        raise MXNetError(f"lazy update: gradient storage type {g.stype} is not supported")
    return g._aux[0]


def run(kernel, weight, grad, states, args, lazy=True):
    """``kernel(w, g, *states, *args)`` (in place) with a sparse ``grad``: on its rows only
    (``lazy``) or on every row with zeros elsewhere. Call inside the engine push."""
    dense_g = grad.stype == "default"
    if dense_g:  # a row_sparse weight with a dense gradient: MXNet's dense fallback, every row
        lazy = False
    sparse_w = weight.stype == "row_sparse"
    if sparse_w and weight._aux[0].shape[0] == weight.shape[0]:
        # every row stored (a weight initialised densely): its data is the dense weight,
        # updated in place and still fully stored afterwards
        sparse_w = False
    wt = _sp.to_dense(weight._sparse()) if sparse_w else weight._data
    sts = [s._data for s in states]
    if lazy:
        rows = _rows_of(grad).to(wt.device)
        # (index_select / index_copy_: ``wt[rows] = ...`` cost ms on a 1M-row weight)
        sub_w, sub_s = wt.index_select(0, rows), [s.index_select(0, rows) for s in sts]
        kernel(sub_w, grad._data, *sub_s, *args)
        wt.index_copy_(0, rows, sub_w)
        for s, t in zip(sts, sub_s):
            s.index_copy_(0, rows, t)
    else:
        kernel(wt, grad._data if dense_g else _sp.to_dense(grad._sparse()), *sts, *args)
    if sparse_w and dense_g:  # every row was updated: every row is stored afterwards
        every = torch.arange(weight.shape[0], device=wt.device)
        weight._set(Sparse("row_sparse", wt.contiguous(), (every,), weight.shape))
    elif sparse_w:
        # the rows stored afterwards: a mask over the rows (linear; a sort of all the stored
        # rows was most of a step for a 1M-row weight)
        mask = torch.zeros(weight.shape[0], dtype=torch.bool, device=wt.device)
        mask[weight._aux[0]] = True
        mask[grad._aux[0].to(wt.device)] = True
        keep = mask.nonzero().reshape(-1)
        weight._set(Sparse("row_sparse", wt[keep].contiguous(), (keep,), weight.shape))


def adagrad_rows(w, g, history, lr, epsilon, rescale, clip):
    """MXNet's sparse ``adagrad_update`` on stored rows: ``history += g²``;
    ``w -= lr * g / sqrt(history + epsilon)`` with ``g = clip(rescale * g)``."""
    gg = g.to(w.device, w.dtype) * rescale
    if clip is not None and clip >= 0:
        gg = gg.clamp(-clip, clip)
    history.add_(gg.square())
    w.sub_(gg.div(history.add(epsilon).sqrt_()).mul_(lr))
