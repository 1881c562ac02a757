"""NDArray: a torch tensor on a Context, with MXNet 1.x semantics (mutable, views on axis 0,
no dtype promotion, float32 by default)."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import torch

from .. import engine
from ..base import (MXNetError, bf16_truncate, bfloat16, dtype_np, dtype_torch, integer_types,
                    numeric_types, shape_str)
from ..context import Context, current_context
from ..ops import registry as _reg
from .tape import FLAGS as _AG  # per-thread autograd flags (``_AG.recording``)

py_slice = slice  # MXNet's name for the builtin (``mx.nd.ndarray.py_slice``)
from .tape import RECORDING as _REC  # number of threads recording (0: skip the flag)

__all__ = ["NDArray", "from_torch", "check_same_device", "from_numpy", "from_dlpack",
           "to_dlpack_for_read", "to_dlpack_for_write"]


def from_torch(t: torch.Tensor, ctx: Context, var: engine.Var | None = None) -> "NDArray":
    """Wrap a tensor (no copy) as an NDArray on ``ctx``; views pass their base's ``var``.

    An array's dependency ``Var`` is made on first use (most results never meet the engine's
    asynchronous work), see ``NDArray.__getattr__``."""
    a = _new(NDArray)
    a._data = t
    a._ctx = ctx
    if var is not None:
        a._var = var
    return a


_new = object.__new__
_VAR_LOCK = threading.Lock()


def bf16_to_numpy(t: torch.Tensor) -> np.ndarray:
    """A bfloat16 tensor as MXNet's numpy stand-in (structured ``bfloat16`` dtype, raw bits)."""
    bits = t.detach().contiguous().view(torch.int16).cpu().numpy().copy()
    return bits.view(np.uint16).view(bfloat16)


def bf16_from_numpy(arr: np.ndarray) -> torch.Tensor:
    """The bfloat16 tensor holding the raw bits of an array of MXNet's stand-in dtype."""
    bits = np.ascontiguousarray(arr).view(np.uint16).view(np.int16).copy()
    return torch.from_numpy(bits).view(torch.bfloat16)


def check_same_device(arrays, opname=""):
    """MXNet allows mixing cpu(i) ids but not CPU with GPU (or two GPUs)."""
    first = arrays[0]._ctx
    for a in arrays[1:]:
        c = a._ctx
        if c is not first and c != first and (c.device_typeid == 2 or first.device_typeid == 2):
            raise MXNetError(
                f"{opname or 'operator'}: all inputs must live on the same context, got "
                f"{first} and {c} (copy one with as_in_context first; neomx, like MXNet, requires "
                "all inputs to live on the same context)")
    return first


def _to_tensor(value, like: torch.Tensor) -> torch.Tensor:
    """A source for writing into ``like``: numpy/list/scalar -> tensor (one copy at most)."""
    if isinstance(value, NDArray):
        return value._data
    if isinstance(value, torch.Tensor):
        return value
    arr = np.asarray(value)
    # MXNet converts the source with numpy to the target's dtype: into a bfloat16 array,
    # numbers become the raw bits (numpy's cast to the stand-in), and from one, bits become
    # numbers
    if like.dtype is torch.bfloat16:
        return bf16_from_numpy(arr if arr.dtype == bfloat16 else np.asarray(arr, dtype=bfloat16))
    if arr.dtype == bfloat16:
        arr = arr.astype(dtype_np(like.dtype))
    if arr.dtype == np.float64 and like.dtype == torch.float32 and like.device.type == "cpu":
        return torch.from_numpy(np.ascontiguousarray(arr))  # cast happens inside copy_
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"cannot assign a value of type {type(value).__name__} to an NDArray")
    return torch.from_numpy(np.ascontiguousarray(arr))


# The ``mx.nd`` function of every operator, filled in by ``register.populate`` (register builds
# them from the op table and imports this module); it also installs NDArray's arithmetic and
# comparison operators (``register.operators``), so they run through the same dispatch.
OPS: dict = {}
# True while ``mx.contrib.amp.init``'s cast hook is installed (``register.set_amp_hook``): the
# shortcuts below then go through the operators' functions, as MXNet's methods call ``op.<name>``
AMP_ACTIVE = False


class NDArray:
    """An n-dimensional array on a device (``mx.nd.array``, ``mx.nd.zeros``, ...).

    Examples
    --------
    >>> import neomx as mx
    >>> a = mx.nd.ones((2, 3))
    >>> a[:] = 2
    >>> (a * 3).asnumpy()
    array([[6., 6., 6.],
           [6., 6., 6.]], dtype=float32)
    """

    # _ag: the autograd entry, (node, output index) or (Leaf, 0) for a marked variable; unset
    # (read as None, see __getattr__) for arrays outside any recorded graph
    __slots__ = ("_data", "_ctx", "_var", "_ag", "__weakref__")
    __array_priority__ = 1000.0
    __hash__ = object.__hash__

    def __init__(self, data, ctx: Context | None = None):
        if not isinstance(data, torch.Tensor):
            raise TypeError("NDArray(data) expects a torch.Tensor; use mx.nd.array() for other sources")
        self._data = data
        self._ctx = ctx or current_context()

    # --- attributes -----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def dtype(self):
        return dtype_np(self._data.dtype)

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def size(self) -> int:
        return self._data.numel()

    @property
    def ndim(self) -> int:
        return self._data.dim()

    @property
    def stype(self) -> str:
        return "default"

    @property
    def T(self) -> "NDArray":
        if self.ndim < 2:
            return self.copy()
        if AMP_ACTIVE:
            return OPS["transpose"](self)
        if _REC.n and _AG.recording:  # (the transpose op gives a view; T is a new array)
            res = self._recorded("transpose", [self])
            res._data = res._data.contiguous()
            return res
        t = self._data
        return from_torch(engine.push(lambda: t.permute(*reversed(range(t.dim()))).contiguous(),
                                      reads=(self,)), self._ctx)

    @property
    def handle(self):
        return self._data

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._data.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        shape_info = "x".join(str(s) for s in self.shape)
        return f"\n{self.asnumpy()!s}\n<NDArray {shape_info} @{self._ctx}>"

    __str__ = __repr__

    def __bool__(self):
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            return False
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    def __float__(self):
        raise TypeError("float() argument must be a string or a real number, not 'NDArray'")

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    # --- synchronisation and copies -------------------------------------------------------
    def wait_to_read(self):
        """Block until pending writes to this array are done."""
        engine.wait_for(self)
        if self._data.is_cuda:
            torch.cuda.current_stream(self._data.device).synchronize()

    def split_v2(self, *args, **kwargs):
        """Fluent :func:`neomx.ndarray.split_v2`."""
        from .functions import split_v2
        return split_v2(self, *args, **kwargs)

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the contents (waits for pending writes)."""
        engine.wait_for(self)
        t = self._data
        if t.dtype is torch.bfloat16:  # MXNet's stand-in: a structured array of the raw bits
            return bf16_to_numpy(t)
        if t.is_cuda:
            return t.detach().cpu().numpy()
        return t.detach().numpy().copy()

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def astype(self, dtype, copy=True) -> "NDArray":
        dt = dtype_torch(dtype)
        if not copy and dt == self._data.dtype:
            return self
        if _REC.n and _AG.recording:
            return self._recorded("Cast", [self], dtype=dtype_np(dt))
        t = self._data
        if dt is torch.bfloat16:  # MXNet's conversion to bfloat16 truncates
            return from_torch(engine.push(lambda: bf16_truncate(t), reads=(self,)), self._ctx)
        return from_torch(engine.push(lambda: t.to(dt, copy=True), reads=(self,)), self._ctx)

    def copy(self) -> "NDArray":
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into an NDArray (same shape; dtype converted) or onto a Context (new array)."""
        if isinstance(other, NDArray):
            if other is self:
                warnings.warn("You are attempting to copy an array to itself", RuntimeWarning)
                return False
            if other.__class__ is not NDArray and other.stype != "default":
                from .sparse import assign  # into a sparse array: cast to its storage type
                return assign(other, self)
            if other.shape != self.shape:
                raise MXNetError(f"copyto: Incompatible attr in node  at 0-th output: expected "
                                 f"{shape_str(self.shape)}, got {shape_str(other.shape)}")
            if _REC.n and _AG.recording:
                return other._assign_recorded(self._recorded("_copy", [self]))
            src, dst = self._data, other._data
            engine.push(lambda: dst.copy_(src, non_blocking=True), reads=(self,), writes=(other,))
            return other
        if isinstance(other, Context):
            if AMP_ACTIVE and other == self._ctx:  # (MXNet's copy is the _copyto op: AMP casts)
                return OPS["_copy"](self)
            dev = other.torch_device
            src = self._data
            t = engine.push(lambda: src.to(dev, copy=True), reads=(self,), ctx=other)
            res = from_torch(t, other)
            if _REC.n and _AG.recording:  # recorded as _copy (its gradient is the head gradient)
                from .tape import record_op
                op = _reg.get("_copy")
                record_op(op, op.parse_params({})[0], [self], [t], [res], other, _AG.training)
            return res
        raise TypeError(f"copyto does not support type {type(other)}")

    def tostype(self, stype):
        """A copy with storage type ``stype`` ('default', 'csr', 'row_sparse')."""
        from .sparse import cast_storage
        return cast_storage(self, stype=stype)

    def as_in_context(self, context: Context) -> "NDArray":
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def reshape(self, *shape, **kwargs) -> "NDArray":
        """A view with a new shape; MXNet's codes 0/-1/-2/-3/-4 and ``reverse=`` are accepted."""
        from ..ops.shape import reshape_shape
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        elif not shape:
            shape = kwargs.pop("shape", None)
            if shape is None:
                raise TypeError("Shape must be provided.")
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError(f"Got unknown keywords in reshape: {', '.join(kwargs)}. "
                            "Accepted keyword arguments are 'shape' and 'reverse'.")
        try:
            new = reshape_shape(self.shape, tuple(shape), reverse)
        except MXNetError as e:
            if "cannot infer" in str(e):
                raise ValueError(f"Cannot reshape array of size {self.size} into shape {tuple(shape)}") from None
            raise MXNetError(str(e)) from None
        if np.prod(new) > self.size:
            raise MXNetError(f"target shape size is larger than the current shape: "
                             f"{shape_str(new)} vs {shape_str(self.shape)}")
        if np.prod(new) != self.size:
            raise ValueError(f"Cannot reshape array of size {self.size} into shape {tuple(shape)}")
        t = self._data
        if _REC.n and _AG.recording:
            if not t.is_contiguous() or self.__class__ is not NDArray:
                return self._recorded("Reshape", [self], shape=tuple(new))
            # a view recorded as Reshape, as MXNet's ReshapeWithRecord (no copy of the data)
            from .tape import record_op
            op = _reg.get("Reshape")
            res = from_torch(t.view(new), self._ctx, self._var)
            record_op(op, op.parse_params({"shape": tuple(new)})[0], [self], [res._data], [res],
                      self._ctx, _AG.training)
            return res
        if t.is_contiguous():
            return from_torch(t.view(new), self._ctx, self._var)
        return from_torch(engine.push(lambda: t.reshape(new), reads=(self,)), self._ctx)

    def reshape_like(self, other) -> "NDArray":
        return self.reshape(other.shape)

    # --- indexing -------------------------------------------------------------------------
    def _index(self, key):
        if isinstance(key, NDArray):
            return key._data.long()
        if isinstance(key, tuple):
            return tuple(k._data.long() if isinstance(k, NDArray) else
                         (torch.as_tensor(k, dtype=torch.long) if isinstance(k, (list, np.ndarray)) else k)
                         for k in key)
        if isinstance(key, (list, np.ndarray)):
            return torch.as_tensor(key, dtype=torch.long)
        return key

    def __getitem__(self, key):
        if _REC.n and _AG.recording:
            return self._getitem_recorded(key)
        t = self._data
        if key.__class__ is slice and key.start is None and key.stop is None and key.step is None:
            a = _new(NDArray)  # ``a[:]``: the same storage (and tensor), the same Var
            a._data, a._ctx, a._var = t, self._ctx, self._var
            return a
        if isinstance(key, integer_types):
            n = t.shape[0] if t.dim() else 0
            if not -n <= key < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            if t.dim() == 1:
                k = int(key) % n
                return from_torch(t[k:k + 1], self._ctx, self._var)
            return from_torch(t[int(key)], self._ctx, self._var)
        if isinstance(key, slice) and (key.step is None or key.step == 1):
            return from_torch(t[key], self._ctx, self._var)  # a view, as in MXNet
        idx = self._index(key)

        def gather():
            out = t[idx]
            return out.reshape(1) if out.dim() == 0 else out.clone()
        return from_torch(engine.push(gather, reads=(self,)), self._ctx)

    def _getitem_recorded(self, key):
        """Basic indexing while recording, as registered operators (slice, then Reshape for
        integer keys) so the tape sees it; advanced indexing is not differentiable here."""
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > self.ndim or not all(isinstance(k, (slice, *integer_types)) for k in keys):
            raise MXNetError("neomx: only basic indexing (integers and slices) is differentiable "
                             f"while recording, got {key!r}")
        begin, end, step, drop = [], [], [], []
        for i, k in enumerate(keys):
            if isinstance(k, slice):
                begin.append(k.start), end.append(k.stop), step.append(k.step)
            else:
                n = self.shape[i]
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for axis {i} with size {n}")
                k = int(k) % n
                begin.append(k), end.append(k + 1), step.append(None)
                drop.append(i)
        res = self._recorded("slice", [self], begin=tuple(begin), end=tuple(end), step=tuple(step))
        if drop and res.ndim > 1:
            shape = [d for i, d in enumerate(res.shape) if i not in drop] or [1]
            res = res.reshape(tuple(shape))
        return res

    def __setitem__(self, key, value):
        if _REC.n and _AG.recording:
            from .tape import check_write
            check_write(self)
        t = self._data
        if value.__class__ is NDArray and value._data is t and key.__class__ is slice \
                and key.start is None and key.stop is None and key.step is None:
            return  # ``a[:] -= x`` hands the (already updated) ``a[:]`` back to itself
        if isinstance(value, NDArray) and value._ctx.device_typeid != self._ctx.device_typeid:
            value = value.as_in_context(self._ctx)
        if value.__class__ is not NDArray and isinstance(value, NDArray) \
                and value.stype != "default":  # a sparse source: its dense form, not its values
            value = value.tostype("default")
        try:
            if isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
                if isinstance(key, slice) and key == slice(None):
                    engine.push(lambda: t.fill_(value), writes=(self,))
                else:
                    idx = self._index(key)
                    engine.push(lambda: t.__setitem__(idx, value), writes=(self,))
                return
            src = _to_tensor(value, t)
            if isinstance(key, slice) and key == slice(None):
                if src is t or (src.data_ptr() == t.data_ptr() and src.shape == t.shape
                                 and src.stride() == t.stride() and src.dtype == t.dtype):
                    return  # ``a[:] -= x`` hands the (already updated) view back to itself
                engine.push(lambda: t.copy_(src), reads=(value,), writes=(self,))
            else:
                idx = self._index(key)
                engine.push(lambda: t.__setitem__(idx, src.to(t.device, t.dtype)), reads=(value,),
                            writes=(self,))
        except MXNetError:
            raise
        except RuntimeError as e:
            raise ValueError(f"cannot assign a value of shape {tuple(src.shape)} to a region of "
                             f"shape {tuple(t[self._index(key)].shape)} of an array of shape "
                             f"{self.shape}: {str(e).splitlines()[0]}") from None

    # --- arithmetic -----------------------------------------------------------------------
    def _binary_other(self, other, opname, scalar_op, reverse):
        """Operands other than an NDArray or a Python int/float: numpy scalars and bools are
        numbers, numpy arrays become arrays of this one's dtype and context."""
        if isinstance(other, NDArray):
            a, b = (other, self) if reverse else (self, other)
            return OPS[opname](a, b)
        if isinstance(other, numeric_types) and not isinstance(other, np.ndarray):
            return OPS[scalar_op](self, scalar=float(other))
        if isinstance(other, np.ndarray):
            from . import array as _array
            other = _array(other, ctx=self._ctx, dtype=self.dtype)
            a, b = (other, self) if reverse else (self, other)
            return OPS[opname](a, b)
        return NotImplemented

    def _assign_recorded(self, res):
        """While recording: ``self`` takes ``res``'s values and its place in the graph (MXNet
        refuses to overwrite an array that is already in a graph)."""
        from .tape import check_write
        check_write(self)
        if res.shape != self.shape:
            raise MXNetError(f"in-place operation: result of shape {shape_str(res.shape)} does not "
                             f"fit an array of shape {shape_str(self.shape)}")
        t, r = self._data, res._data
        engine.push(lambda: t.copy_(r), (res,), (self,))
        self._ag = res._ag
        return self

    def __neg__(self):
        return self * -1.0

    def __pos__(self):
        return self

    def __abs__(self):
        return OPS["abs"](self)

    # --- fluent methods (a.sum(axis=1), a.argmax(...), ...) -------------------------------
    def __getattr__(self, name):
        if name == "_var":  # the dependency token, made on first use (views share their base's)
            with _VAR_LOCK:
                try:
                    return NDArray._var.__get__(self)
                except AttributeError:
                    v = self._var = engine.Var()
                    return v
        if name == "_ag":
            return None
        if name.startswith("_"):
            raise AttributeError(name)
        op = _reg.find(name)
        if op is None or not op.public:
            raise AttributeError(f"'NDArray' object has no attribute '{name}'")
        from .register import function_for
        f = function_for(op)

        def method(*args, **kwargs):
            return f(self, *args, **kwargs)
        method.__name__ = name
        return method

    def flatten(self):
        """The ``Flatten`` operator on this array (a new array, as MXNet's ``op.flatten``)."""
        return OPS["Flatten"](self)

    def expand_dims(self, axis):
        if AMP_ACTIVE:
            return OPS["expand_dims"](self, axis=axis)
        if _REC.n and _AG.recording:
            return self._recorded("expand_dims", [self], axis=axis)
        return from_torch(self._data.unsqueeze(axis), self._ctx, self._var)

    def broadcast_to(self, shape):
        return OPS["broadcast_to"](self, shape=shape)

    def tolist(self):
        return self.asnumpy().tolist()

    # --- autograd ---------------------------------------------------------------------------
    @staticmethod
    def _recorded(opname, inputs, **params):
        """Run a registered operator through the imperative dispatch (which records it)."""
        from .register import invoke_by_name
        return invoke_by_name(opname, inputs, params)

    def attach_grad(self, grad_req="write", stype=None):
        """Attach a zero gradient buffer (``.grad``) and mark this array as a variable for
        ``autograd``; ``grad_req`` is 'write', 'add' or 'null'; ``stype`` the buffer's storage
        type ('row_sparse': gradients are stored as row_sparse)."""
        from .tape import mark_variables
        if stype is None:  # MXNet: zeros_like(self), the array's own storage type
            stype = getattr(self, "stype", "default")
        if stype != "default":  # (a sparse buffer: mx.nd.sparse's zeros)
            from .sparse import zeros as _sparse_zeros
            g = _sparse_zeros(stype, self.shape, ctx=self._ctx, dtype=self.dtype)
        elif self.__class__ is not NDArray:  # a sparse array with a dense buffer: its full shape
            g = from_torch(torch.zeros(self.shape, dtype=self._data.dtype,
                                       device=self._data.device), self._ctx)
        else:
            g = from_torch(torch.zeros_like(self._data), self._ctx)
        mark_variables([self], [g], grad_req)

    @property
    def grad(self):
        """The gradient buffer of a marked variable (None otherwise)."""
        e = self._ag
        if e is None or e[0].__class__.__name__ != "Leaf":
            return None
        return e[0].grad

    @property
    def _fresh_grad(self):
        """Whether a backward wrote this marked variable's gradient since the flag was last
        cleared (gluon's Trainer clears it on each update to find stale gradients)."""
        e = self._ag
        return e is not None and getattr(e[0], "fresh", False)

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        e = self._ag
        if e is not None and e[0].__class__.__name__ == "Leaf":
            e[0].fresh = bool(state)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Back-propagate from this array into the marked variables' ``.grad``."""
        from .tape import backward
        backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    def detach(self):
        """The same values (storage shared) outside any recorded graph."""
        return from_torch(self._data, self._ctx, self._var)

    def as_nd_ndarray(self):
        return self

    def to_torch(self) -> torch.Tensor:
        """The underlying torch tensor (shared memory, no copy; waits for pending writes)."""
        engine.wait_for(self)
        return self._data

    def to_dlpack_for_read(self):
        """A DLPack capsule sharing this array's memory, once pending writes are done
        (:func:`to_dlpack_for_read`)."""
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        """A DLPack capsule sharing this array's memory, once pending reads and writes are
        done (:func:`to_dlpack_for_write`)."""
        return to_dlpack_for_write(self)


def _rebuild(arr, devtype, devid):
    from . import array
    return array(arr, ctx=Context(devtype, devid), dtype=arr.dtype)


# --- DLPack and zero-copy numpy (MXNet's bridge, here through torch.utils.dlpack) -------------
def _sync_device(t: torch.Tensor):
    """Finish the device's queued kernels so a DLPack consumer sees the values."""
    if t.is_cuda:
        torch.cuda.current_stream(t.device).synchronize()


def to_dlpack_for_read(data):
    """Returns a reference view of NDArray that represents as DLManagedTensor until
    all previous write operations on the current array are finished.

    Parameters
    ----------
    data : NDArray
        input data.

    Returns
    -------
    PyCapsule (the pointer of DLManagedTensor)
        a reference view of NDArray that represents as DLManagedTensor.

    Examples
    --------
    >>> import neomx as mx
    >>> x = mx.nd.ones((2, 3))
    >>> y = mx.nd.to_dlpack_for_read(x)
    >>> type(y).__name__
    'PyCapsule'
    >>> mx.nd.from_dlpack(y).asnumpy()
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
    """
    data.wait_to_read()
    from torch.utils import dlpack
    return dlpack.to_dlpack(data._data.detach())


def to_dlpack_for_write(data):
    """Returns a reference view of NDArray that represents as DLManagedTensor until
    all previous read/write operations on the current array are finished.

    Parameters
    ----------
    data : NDArray
        input data.

    Returns
    -------
    PyCapsule (the pointer of DLManagedTensor)
        a reference view of NDArray that represents as DLManagedTensor.

    Examples
    --------
    >>> import neomx as mx
    >>> x = mx.nd.ones((2, 3))
    >>> u = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(x))
    >>> u += 1
    >>> x.asnumpy()
    array([[2., 2., 2.],
           [2., 2., 2.]], dtype=float32)
    """
    engine.push(lambda: None, writes=(data,))  # MXNDArrayWaitToWrite: earlier reads and writes
    _sync_device(data._data)
    from torch.utils import dlpack
    return dlpack.to_dlpack(data._data.detach())


_DLTENSOR = b"dltensor"


def _is_dltensor_capsule(obj) -> bool:
    import ctypes
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return bool(is_valid(obj, _DLTENSOR))


def from_dlpack(dlpack):
    """Returns a NDArray backed by a dlpack tensor (memory shared, the capsule consumed).

    Parameters
    ----------
    dlpack : PyCapsule (the pointer of DLManagedTensor)
        input data

    Returns
    -------
    NDArray
        a NDArray backed by a dlpack tensor

    Examples
    --------
    >>> import neomx as mx
    >>> x = mx.nd.ones((2, 3))
    >>> z = mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(x))
    >>> type(z).__name__, z.shape
    ('NDArray', (2, 3))
    """
    if not _is_dltensor_capsule(dlpack):  # (MXNet asserts, with a ValueError as the message)
        raise AssertionError(ValueError(
            'Invalid DLPack Tensor. DLTensor capsules can be consumed only once.'))
    from torch.utils import dlpack as _dlpack
    t = _dlpack.from_dlpack(dlpack)
    if t.is_cuda:
        ctx = Context("gpu", t.device.index or 0)
    else:
        ctx = Context("cpu", 0)
    dtype_np(t.dtype)  # MXNetError for a dtype neomx has no NDArray of
    return from_torch(t, ctx)


# numpy dtypes MXNet's from_numpy hands to DLPack (its DLDataType.TYPE_MAP)
_DLPACK_NP_DTYPES = frozenset(("int32", "int64", "bool", "uint8", "uint32", "uint64", "float16",
                               "float32", "float64"))


def from_numpy(ndarray, zero_copy=True, array_cls=NDArray):
    """Returns an MXNet's ndarray backed by numpy's ndarray.
    When `zero_copy` is set to be true,
    this API consumes numpy's ndarray and produces MXNet's ndarray
    without having to copy the content. In this case, we disallow
    users to modify the given numpy ndarray, and it is suggested
    not to read the numpy ndarray as well for internal correctness.

    Parameters
    ----------
    ndarray : numpy.ndarray
        input data
    zero_copy : bool
        Whether we use DLPack's zero-copy conversion to convert to MXNet's NDArray.
        This is only available for c-contiguous arrays, i.e. array.flags[C_CONTIGUOUS] == True.
    array_cls : ndarray class type
        The class type of the output array.

    Returns
    -------
    NDArray
        a NDArray backed by a dlpack tensor

    Examples
    --------
    >>> import numpy as np
    >>> import neomx as mx
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> b = mx.nd.from_numpy(a)
    >>> a.flags['WRITEABLE']
    False
    >>> b[0, 0] = 7
    >>> float(a[0, 0])
    7.0
    """
    if not zero_copy:
        from . import array
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags['C_CONTIGUOUS']:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    writeable = ndarray.flags['WRITEABLE']
    ndarray.flags['WRITEABLE'] = False  # (numpy's error for array scalars, as MXNet's)
    if str(ndarray.dtype) not in _DLPACK_NP_DTYPES:
        raise ValueError(str(ndarray.dtype) + " is not supported.")
    if writeable:
        ndarray.flags['WRITEABLE'] = True  # (torch warns about read-only arrays)
        t = torch.from_numpy(ndarray)
        ndarray.flags['WRITEABLE'] = False
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = torch.from_numpy(ndarray)
    res = from_torch(t, Context("cpu", 0))
    if array_cls is not NDArray:
        out = _new(array_cls)
        out._data, out._ctx = t, res._ctx
        return out
    return res


# Functions MXNet's ``mxnet.ndarray.ndarray`` defines and neomx defines in the ``mx.nd`` package
# (which imports this module first): looked up there on first access.
_PACKAGE_NAMES = frozenset((
    "add", "arange", "array", "concatenate", "divide", "empty", "equal", "eye", "full", "greater",
    "greater_equal", "histogram", "imdecode", "lesser", "lesser_equal", "linspace", "logical_and",
    "logical_or", "logical_xor", "maximum", "minimum", "modulo", "moveaxis", "multiply",
    "not_equal", "onehot_encode", "ones", "power", "split_v2", "subtract", "true_divide",
    "waitall", "zeros"))


def __getattr__(name):
    if name in _PACKAGE_NAMES:
        from .. import ndarray as package
        if name in package.__dict__:
            return package.__dict__[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
