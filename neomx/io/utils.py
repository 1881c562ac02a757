"""Helpers shared by the Python iterators: input normalisation and batch slicing on NDArrays."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch

from .. import engine
from ..base import MXNetError
from ..ndarray import NDArray, array
from ..ndarray.ndarray import from_torch
from ..ndarray.utils import _is_scipy_csr
from ..ndarray.utils import array as _utils_array

__all__ = ["_init_data", "_getdata_by_idx", "_has_instance", "slice_rows", "concat_rows",
           "tile_rows", "take_rows"]


def _init_data(data, allow_empty, default_name):
    """Normalise iterator input to a name-sorted list of ``(name, NDArray)`` (MXNet's rules).

    One array is named ``default_name``; a list of several becomes ``_0_<name>``, ``_1_<name>``,
    ...; a dict keeps its keys. The result is sorted by name as strings, so ``_10_data`` comes
    before ``_2_data``. Non-NDArray values become float32 NDArrays; NDArrays are kept as they
    are (same object, same dtype).
    """
    assert (data is not None) or allow_empty
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([("_%d_%s" % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, h5py.Dataset "
                        "a list of them or dict with them as values")
    out = OrderedDict()
    for k, v in data.items():
        if isinstance(v, NDArray):
            out[k] = v
            continue
        try:
            # (a SciPy CSR matrix becomes a CSRNDArray, as mx.nd.array makes it in MXNet)
            out[k] = _utils_array(v) if _is_scipy_csr(v) else array(v)
        except Exception:  # noqa: BLE001  MXNet turns any conversion failure into this TypeError
            raise TypeError(("Invalid type '%s' for %s, " % (type(v), k))
                            + "should be NDArray, numpy.ndarray or h5py.Dataset") from None
    return list(sorted(out.items()))


def _has_instance(data, dtype) -> bool:
    """Whether any array of a normalised ``[(name, array)]`` list is a ``dtype`` instance."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """Reorder every array of ``[(name, NDArray)]`` along axis 0 by ``idx``.

    As in MXNet this goes through numpy and ``mx.nd.array``, so the result is float32 whatever
    the input dtype was; a CSRNDArray stays csr with its dtype.
    """
    return [(k, _csr_take(v, idx) if getattr(v, "stype", "default") == "csr" else
             array(v.asnumpy()[idx], v.context)) for k, v in data]


def _csr_take(arr, rows):
    """A CSRNDArray of the rows ``rows`` of ``arr`` (same dtype and context; no SciPy needed)."""
    from ..ndarray.sparse import _wrap
    from ..ops.sparse import Sparse
    engine.wait_for(arr)
    indptr, indices = arr._aux
    index = torch.as_tensor(np.asarray(rows, dtype=np.int64), device=indptr.device)
    begin = indptr[index]
    lens = indptr[index + 1] - begin
    ptr = torch.zeros(index.numel() + 1, dtype=torch.int64, device=indptr.device)
    torch.cumsum(lens, 0, out=ptr[1:])
    pos = torch.repeat_interleave(begin - ptr[:-1], lens) + \
        torch.arange(int(ptr[-1]), dtype=torch.int64, device=indptr.device)
    shape = (index.numel(),) + tuple(arr.shape[1:])
    return _wrap(Sparse("csr", arr._data[pos], (ptr, indices[pos]), shape), arr.context)


def _axis(arr: NDArray, axis: int) -> int:
    nd = arr.ndim
    if not -nd <= axis < nd:
        raise MXNetError(f"slice_axis: axis {axis} out of range for an array of shape {arr.shape}")
    return axis % nd


def slice_rows(arr: NDArray, begin: int, end: int, axis: int = 0) -> NDArray:
    """A copy of ``arr[begin:end]`` along ``axis`` (MXNet's ``slice_axis``; bounds checked)."""
    if getattr(arr, "stype", "default") != "default":
        # MXNet slices with slice_axis, which has no sparse kernel: a dense result after the
        # storage fallback warning
        from ..ndarray import register as _register
        return _register.invoke_by_name("slice_axis", [arr],
                                        {"axis": axis, "begin": begin, "end": end})
    ax = _axis(arr, axis)
    size = arr.shape[ax]
    if not 0 <= end <= size:
        raise MXNetError(f"Check failed: *end <= axis_size: Invalid end for end={end} as "
                         f"axis_size is {size}")
    if not 0 <= begin <= end:
        raise MXNetError(f"Check failed: *begin <= *end: Invalid begin, end, get begin={begin}, "
                         f"end={end}")
    t = arr._data
    out = engine.push(lambda: t.narrow(ax, begin, end - begin).clone(), reads=(arr,),
                      ctx=arr.context)
    return from_torch(out, arr.context)


def concat_rows(first: NDArray, second: NDArray, axis: int = 0) -> NDArray:
    """``first`` and ``second`` joined along ``axis`` (a new array)."""
    ax = _axis(first, axis)
    a, b = first._data, second._data
    out = engine.push(lambda: torch.cat([a, b.to(a.device)], dim=ax), reads=(first, second),
                      ctx=first.context)
    return from_torch(out, first.context)


def tile_rows(arr: NDArray, repeats: int) -> NDArray:
    """``arr`` repeated ``repeats`` times along axis 0 (MXNet's ``tile`` with reps (r,1,...))."""
    t = arr._data
    reps = (repeats,) + (1,) * (t.dim() - 1)
    return from_torch(engine.push(lambda: t.repeat(*reps), reads=(arr,), ctx=arr.context),
                      arr.context)


def take_rows(arr: NDArray, rows, axis: int = 0) -> NDArray:
    """A copy of the rows ``rows`` (indices) of ``arr`` along ``axis``, dtype kept."""
    if getattr(arr, "stype", "default") == "csr" and axis in (0, -2):
        return _csr_take(arr, rows)
    ax = _axis(arr, axis)
    t = arr._data
    index = torch.as_tensor(np.asarray(rows, dtype=np.int64), device=t.device)
    out = engine.push(lambda: t.index_select(ax, index), reads=(arr,), ctx=arr.context)
    return from_torch(out, arr.context)
