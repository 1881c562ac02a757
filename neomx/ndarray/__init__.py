"""``mx.nd``: imperative arrays. Operator functions are generated from the op table."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from .. import engine
from .. import ops as _ops  # noqa: F401  (registers operators)
from ..base import MXNetError, bfloat16, dtype_np, dtype_torch
from ..context import Context, current_context
from . import ndarray as _nd_module
from .ndarray import NDArray, bf16_from_numpy, from_torch
from .ndarray import from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write
from .register import invoke, invoke_by_name, make_function, populate

from . import sparse  # noqa: E402  (mx.nd.sparse; before populate: it supplies cast_storage)
_internal_dict: dict = {}
populate(globals(), _internal_dict)
from .functions import *  # noqa: E402,F401,F403  (array-or-scalar dispatch: maximum, power, ...)
from . import functions as _functions  # noqa: E402
_internal = SimpleNamespace(**_internal_dict)
from .serialization import save, load, load_frombuffer  # noqa: E402  (MXNet's .params format)
from .legacy_image import imdecode  # noqa: E402  (deprecated; mx.image.imdecode)


def _ctx(ctx) -> Context:
    return current_context() if ctx is None else ctx


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _new(shape, ctx, dtype, fill):
    ctx = _ctx(ctx)
    dev = ctx.torch_device
    t = engine.push(lambda: fill(_shape(shape), dtype_torch(dtype), dev), ctx=ctx)
    return from_torch(t, ctx)


def empty(shape, ctx=None, dtype=None) -> NDArray:
    """An uninitialised array (``float32`` unless ``dtype`` is given)."""
    return _new(shape, ctx, dtype, lambda s, d, dev: torch.empty(s, dtype=d, device=dev))


def _filled(shape, ctx, dtype, kwargs, fill, what):
    """zeros/ones: MXNet's keywords (``out=`` is written and returned; dense storage only)."""
    out = kwargs.pop("out", None)
    stype = kwargs.pop("stype", None)
    if stype not in (None, "default"):
        if what != "zeros":
            raise MXNetError(f"{what}: stype={stype!r} is not supported (MXNet: zeros only)")
        return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype, **kwargs)
    kwargs.pop("name", None)
    for k in [k for k in kwargs if k.startswith("__") and k.endswith("__")]:
        del kwargs[k]  # attributes such as __layout__: MXNet ignores them here
    if kwargs:
        raise TypeError(f"{what}() got unexpected keyword arguments {sorted(kwargs)}")
    res = _new(shape, ctx, dtype, fill)
    if out is not None:
        out[:] = res
        return out
    return res


def zeros(shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    """An array of zeros (``out=`` fills and returns that array, as MXNet's).

    >>> import neomx as mx
    >>> mx.nd.zeros((2, 3)).shape
    (2, 3)
    """
    return _filled(shape, ctx, dtype, kwargs,
                   lambda s, d, dev: torch.zeros(s, dtype=d, device=dev), "zeros")


def ones(shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    """An array of ones (``out=`` fills and returns that array, as MXNet's)."""
    return _filled(shape, ctx, dtype, kwargs,
                   lambda s, d, dev: torch.ones(s, dtype=d, device=dev), "ones")


def full(shape, val, ctx=None, dtype=np.float32, out=None) -> NDArray:
    res = _new(shape, ctx, dtype, lambda s, d, dev: torch.full(s, val, dtype=d, device=dev))
    if out is not None:
        out[:] = res
        return out
    return res


def array(source_array, ctx=None, dtype=None) -> NDArray:
    """An array copied from ``source_array`` (NDArray keeps its dtype; anything else is float32
    unless ``dtype`` is given). A sparse NDArray or a SciPy CSR matrix gives a sparse copy (the
    SciPy matrix's dtype unless ``dtype`` is given), as MXNet's ``mx.nd.array``."""
    if (isinstance(source_array, NDArray) and source_array.stype != "default") or \
            sparse._is_scipy_csr(source_array):
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        dt = dtype_torch(dtype if dtype is not None else source_array.dtype)
        src, dev = source_array._data, ctx.torch_device
        return from_torch(engine.push(lambda: src.to(device=dev, dtype=dt, copy=True),
                                      reads=(source_array,)), ctx)
    if isinstance(source_array, torch.Tensor):
        src = source_array.detach()
        dt = dtype_torch(dtype) if dtype is not None else src.dtype
        return from_torch(src.to(device=ctx.torch_device, dtype=dt, copy=True), ctx)
    try:
        arr = np.asarray(source_array, dtype=dtype_np(dtype) if dtype is not None else None)
    except (TypeError, ValueError) as e:
        raise TypeError(f"source_array must be array like object: {e}") from None
    arr = np.array(arr, dtype=dtype_np(dtype) if dtype is not None else np.float32, order="C")
    dev = ctx.torch_device
    if arr.dtype == bfloat16:  # numpy's conversion to MXNet's stand-in, as MXNet: the bits
        bits = bf16_from_numpy(arr)
        return from_torch(engine.push(lambda: bits.to(dev), ctx=ctx), ctx)
    return from_torch(engine.push(lambda: torch.from_numpy(arr.copy()).to(dev), ctx=ctx), ctx)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=np.float32) -> NDArray:
    """Evenly spaced values in ``[start, stop)``; ``repeat`` repeats each value."""
    if stop is None:
        start, stop = 0, start
    if dtype_np(dtype) is bfloat16:  # the values (numpy's cast to the stand-in takes bits)
        return arange(start, stop, step, repeat, infer_range, ctx, np.float32).astype(bfloat16)
    vals = np.arange(start, stop, step, dtype=np.float64).astype(dtype_np(dtype))
    if repeat != 1:
        vals = np.repeat(vals, int(repeat))
    return array(vals, ctx=ctx, dtype=dtype)


def zeros_like(data, **kwargs):
    if data.__class__ is not NDArray or _nd_module.AMP_ACTIVE:
        return _internal_dict["zeros_like"](data, **kwargs)
    return from_torch(torch.zeros_like(data._data), data.context)


def ones_like(data, **kwargs):
    if data.__class__ is not NDArray or _nd_module.AMP_ACTIVE:
        return _internal_dict["ones_like"](data, **kwargs)
    return from_torch(torch.ones_like(data._data), data.context)


def waitall():
    """Block until every pushed operation has finished."""
    engine.wait_all()


def concatenate(arrays, axis=0, always_copy=True):
    if not arrays:
        raise MXNetError("concatenate: need at least one array")
    ctx = arrays[0].context
    dev = ctx.torch_device
    return from_torch(engine.push(lambda: torch.cat([a._data.to(dev) for a in arrays], dim=axis),
                                  reads=arrays), ctx)


def moveaxis(tensor, source, destination):
    t = tensor._data
    return from_torch(engine.push(lambda: t.movedim(source, destination).contiguous(), reads=(tensor,)),
                      tensor.context)


from . import contrib, image, linalg, random  # noqa: E402  (prefix namespaces: _contrib_X -> contrib.X)
from . import op  # noqa: E402  (mx.nd.op / mx.sym.op: MXNet's generated-op module)
_uniform, _normal = random.uniform, random.normal  # (mx.random's)
uniform = _internal_dict["_random_uniform"]
normal = _internal_dict["_random_normal"]

__all__ = list(_functions.__all__) + ["NDArray", "sparse", "array", "empty", "zeros", "ones", "full", "arange", "waitall",
           "zeros_like", "ones_like", "concatenate", "moveaxis", "random", "contrib", "linalg", "image",
           "save", "load", "load_frombuffer", "from_numpy", "from_dlpack", "to_dlpack_for_read",
           "to_dlpack_for_write"]
