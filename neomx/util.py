"""Small helpers shared across layers."""
from __future__ import annotations

import os
import tempfile


def atomic_write_bytes(fname: str, data: bytes) -> None:
    """Write ``data`` to ``fname`` through a temp file in the same folder, renamed into place,
    so a crash never leaves a half-written file (nor destroys an existing one)."""
    fname = os.fspath(fname)
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, fname)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(fname: str, text: str) -> None:
    atomic_write_bytes(fname, text.encode("utf-8"))


# --- MXNet 1.x's mx.util helpers --------------------------------------------------------------
# neomx has MXNet's legacy shape semantics only: 0 in a shape means "unknown" and () an unknown
# shape. NumPy shape semantics (scalars and zero-size tensors, for mx.np/mx.npx) are not
# implemented, so they can be asked about and switched off but never switched on.

def _np_shape_error():
    from .base import MXNetError
    return MXNetError(
        "NumPy shape semantics (set_np_shape(True), np_shape(), use_np_shape) are not "
        "supported: neomx implements MXNet's legacy shape semantics only (0 means an unknown "
        "dimension) and not the NumPy interface mx.np/mx.npx")


def get_gpu_count() -> int:
    """Number of GPUs visible to neomx (CUDA devices torch can use)."""
    from .context import num_gpus
    return num_gpus()


def is_np_shape() -> bool:
    """Whether NumPy shape semantics are on: always False in neomx (legacy shapes only)."""
    return False


def set_np_shape(active) -> bool:
    """Turn NumPy shape semantics off (a no-op) and return the previous state (False).

    Raises
    ------
    MXNetError
        ``active`` is true: neomx supports MXNet's legacy shape semantics only.
    """
    if active:
        raise _np_shape_error()
    return False


class _NumpyShapeScope:
    """``with np_shape(active):`` -- entering with ``active=True`` raises MXNetError."""

    def __init__(self, is_np_shape):  # pylint: disable=redefined-outer-name
        self._enter_is_np_shape = is_np_shape
        self._prev_is_np_shape = None

    def __enter__(self):
        if self._enter_is_np_shape is not None:
            self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)
        return self

    def __exit__(self, ptype, value, trace):
        if (self._enter_is_np_shape is not None
                and self._prev_is_np_shape != self._enter_is_np_shape):
            set_np_shape(self._prev_is_np_shape)


def np_shape(active=True) -> _NumpyShapeScope:
    """A scope for ``with`` that turns NumPy shape semantics on or off (on raises MXNetError,
    as :func:`set_np_shape`; ``np_shape(False)`` is accepted and changes nothing)."""
    return _NumpyShapeScope(active)


def use_np_shape(func):
    """Decorator running ``func`` (or every method of a class) inside ``np_shape(True)``.

    The decoration succeeds; calling the result raises MXNetError, since neomx has no NumPy
    shape semantics.
    """
    import functools
    import inspect

    if inspect.isclass(func):
        for name, method in inspect.getmembers(
                func, predicate=lambda f: inspect.isfunction(f) or inspect.ismethod(f)
                or isinstance(f, property)):
            if isinstance(method, property):
                setattr(func, name, property(use_np_shape(method.__get__), method.__set__,
                                             method.__delattr__, method.__doc__))
            else:
                setattr(func, name, use_np_shape(method))
        return func
    if not callable(func):
        raise TypeError(f"use_np_shape can only decorate classes and callable objects, "
                        f"while received a {type(func)}")

    @functools.wraps(func)
    def _with_np_shape(*args, **kwargs):
        with np_shape(active=True):
            return func(*args, **kwargs)
    return _with_np_shape


def getenv(name: str):
    """The value of environment variable ``name``, or None when it is not set.

    neomx has no separate C runtime environment, so this is ``os.environ.get(name)``.
    """
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set environment variable ``name`` to ``value`` (a string), or unset it when ``value``
    is None."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


# NumPy array semantics (mx.np ndarrays from every operator) are the NumPy interface, which
# neomx does not have either: the same rule as for shapes.
def is_np_array() -> bool:
    """Whether NumPy array semantics are on: always False in neomx."""
    return False


def set_np(shape=True, array=True):
    """Turn NumPy shape and array semantics off (``set_np(False, False)``, a no-op); turning
    either on raises MXNetError (neomx has no NumPy interface)."""
    if shape or array:
        raise _np_shape_error()


def reset_np():
    """Deactivate NumPy shape and array semantics (they are never active in neomx)."""
    set_np(shape=False, array=False)


def np_array(active=True) -> _NumpyShapeScope:
    """A scope for ``with`` that turns NumPy array semantics on (raises MXNetError) or off."""
    return _NumpyShapeScope(active)


def use_np_array(func):
    """Decorator running ``func`` with NumPy array semantics: calling it raises MXNetError."""
    return use_np_shape(func)


def use_np(func):
    """Decorator running ``func`` with NumPy shape and array semantics: calling it raises
    MXNetError."""
    return use_np_shape(func)


def set_module(module):
    """Decorator setting ``__module__`` of a function or class (unless ``module`` is None)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def get_gpu_memory(gpu_dev_id: int):
    """(free, total) bytes of GPU ``gpu_dev_id`` (``mx.context.gpu_memory_info``'s values and
    errors: MXNetError without CUDA or without that GPU)."""
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx) -> int:
    """Returns the cuda compute capability of the input `ctx`.

    Parameters
    ----------
    ctx : Context
        GPU context whose corresponding cuda compute capability is to be retrieved.

    Returns
    -------
    cuda_compute_capability : int
        CUDA compute capability. For example, it returns 70 for CUDA arch equal to `sm_70`.

    Raises
    ------
    ValueError
        ``ctx`` is not a GPU context.
    OSError
        No CUDA driver (MXNet's message: it loads libcuda itself).
    RuntimeError
        No such GPU (the driver's "invalid device ordinal").
    """
    if ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         "while received ctx {}".format(str(ctx)))
    n = get_gpu_count()
    if n == 0:
        raise OSError("could not load any of: libcuda.so libcuda.dylib cuda.dll")
    if not 0 <= ctx.device_id < n:
        raise RuntimeError("cuDeviceGet failed with error code 101: invalid device ordinal")
    import torch
    major, minor = torch.cuda.get_device_capability(ctx.device_id)
    return major * 10 + minor
