"""Storage types in compiled graphs (MXNet's InferStorageType pass for executors).

:func:`infer_storage` walks the joined forward + backward graph once the bound variables'
storage types are known (csr / row_sparse arguments, ``default`` for the rest and for head
gradients) and decides, per op node, how its step runs:

* ``dense``: every input and output is dense (the plain op forward; nothing changes);
* ``sparse``: the op's storage-type rule (``op.infer_storage_type``, see
  ``neomx/ops/sparse.py``) has a kernel for these storage types: ``op.sparse_forward`` runs on
  :class:`~neomx.ops.sparse.Sparse` values and may produce sparse outputs (``dot(csr, w)``'s
  transposed product in the backward graph gives the row_sparse weight gradient, as MXNet's);
* ``fallback``: no kernel (MXNet's storage fallback): sparse inputs are made dense, the op's
  dense forward runs, outputs are cast to the storage types the rule asks for (if any).

:func:`wrap_steps` then swaps each non-dense step's function for one doing the above. Slots of
the plan then hold Sparse values or tensors; the executor reads and writes NDArrays of every
storage type accordingly (and logs MXNet's fallback message for :func:`fallbacks`).
"""
from __future__ import annotations

from ..base import MXNetError
from ..ops import sparse as _sp

DENSE, SPARSE, FALLBACK = "dense", "sparse", "fallback"


def _rule(op, params, in_stypes, in_shapes):
    if op.infer_storage_type is None or op.num_outputs(params) != 1:
        return None
    return op.infer_storage_type(params, list(in_stypes), list(in_shapes))


def infer_storage(full, var_stypes: dict, shapes):
    """``(stypes, modes)``: the storage type of every entry of ``full`` (a list by entry id)
    and ``{op node: (mode, out_stypes)}`` for the nodes that are not plain dense steps.

    ``var_stypes``: ``{variable node: stype}`` (missing variables are dense); ``shapes``: per
    entry id.
    """
    stypes = ["default"] * full.num_entries
    modes = {}
    for n in full.nodes:
        if n.op is None:
            stypes[full.entry(n, 0)] = var_stypes.get(n, "default")
            continue
        ins = [full.entry(s, i) for s, i in n.inputs]
        in_st = [stypes[e] for e in ins]
        nout = n.num_outputs
        sparse_in = any(s != "default" for s in in_st)
        if not sparse_in and not getattr(n.op, "sparse_from_dense", False):
            continue  # (rules are for sparse inputs; a few ops make sparse outputs from dense)
        try:
            outs = _rule(n.op, n.params, in_st, [shapes[e] for e in ins])
        except MXNetError as e:
            raise MXNetError(f"InferStorageType: operator {n.op.name} ({n.name}): {e}") from None
        if outs is None or isinstance(outs, _sp.Fallback):
            out_st = list(outs) if outs else ["default"] * nout
            mode = FALLBACK if sparse_in or any(s != "default" for s in out_st) else DENSE
        else:
            out_st = list(outs)
            mode = SPARSE if sparse_in or any(s != "default" for s in out_st) else DENSE
        for i, s in enumerate(out_st):
            stypes[full.entry(n, i)] = s
        if mode != DENSE:
            modes[n] = (mode, out_st)
    return stypes, modes


def _sparse_step(op, out_stypes):
    def forward(params, ins, oc):
        return op.sparse_forward(params, ins, out_stypes, oc)
    return forward


def _fallback_step(op, out_stypes):
    def forward(params, ins, oc):
        res = op.forward(params, [_sp.to_dense(x) for x in ins], oc)
        if all(s == "default" for s in out_stypes):
            return res
        if isinstance(res, (list, tuple)):
            return [_sp.dense_to(r, s) for r, s in zip(res, out_stypes)]
        return _sp.dense_to(res, out_stypes[0])
    return forward


def wrap_steps(steps, modes) -> None:
    """Give the steps of non-dense nodes their storage-aware functions (in place)."""
    for st in steps:
        m = modes.get(st.node)
        if m is None:
            continue
        mode, out_st = m
        st.forward = (_sparse_step if mode == SPARSE else _fallback_step)(st.node.op, out_st)


def fallbacks(graph, full, stypes, modes) -> list:
    """``[(node, input stypes, output stypes)]`` for the forward nodes that compute sparse
    inputs in dense form (the executor logs MXNet's fallback message for them)."""
    out = []
    for n in graph.nodes:
        m = modes.get(n)
        if m is not None and m[0] == FALLBACK:
            out.append((n, [stypes[full.entry(s, i)] for s, i in n.inputs], list(m[1])))
    return out
