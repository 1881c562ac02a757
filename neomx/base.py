"""Errors and small typed helpers shared by every layer; imports nothing from neomx."""
from __future__ import annotations

import ast
import os
import platform

import numpy as np
import torch

__all__ = ["MXNetError", "NotSupportedForSparseNDArray", "NotImplementedForSymbol",
           "string_types", "numeric_types", "integer_types", "py_str", "_as_list", "data_dir",
           "data_dir_default", "mx_real_t", "dtype_np", "dtype_torch", "dtype_code",
           "dtype_from_code", "dtype_name", "shape_str", "parse_shape"]

string_types = (str,)
integer_types = (int, np.integer)
numeric_types = (float, int, np.generic)
mx_real_t = np.float32


class MXNetError(RuntimeError):
    """Error raised by neomx (a RuntimeError, as in MXNet 1.9.1)."""


class NotSupportedForSparseNDArray(MXNetError):
    """Raised for sparse-only API that neomx does not implement."""


class NotImplementedForSymbol(MXNetError):
    """A function that exists for NDArray only was called on a Symbol (MXNet's message).

    >>> print(NotImplementedForSymbol(len, "len", 1))  # doctest: +NORMALIZE_WHITESPACE
    Function len (namely operator "len") with arguments (<class 'int'>) is not implemented
    for Symbol and only available in NDArray.
    """

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + " is not implemented for Symbol and only available in NDArray."


def py_str(x: bytes) -> str:
    """Bytes from a C string as ``str`` (UTF-8), as MXNet's ``base.py_str``."""
    return x.decode("utf-8")


def data_dir_default() -> str:
    """MXNet's default data folder: ``%APPDATA%/mxnet`` on Windows, else ``~/.mxnet``."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data folder (datasets, models): ``$MXNET_HOME``, else :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())


def _as_list(obj):
    """``obj`` itself when it is a list or tuple, otherwise ``[obj]``."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


# --- dtypes -----------------------------------------------------------------------------------
# MXNet type codes (mshadow::TypeFlag) used in JSON `__dtype__` attrs and .params files.
_CODE_TO_NP = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
               5: np.int8, 6: np.int64, 7: np.bool_, 8: np.int16}
_NP_TO_CODE = {np.dtype(v): k for k, v in _CODE_TO_NP.items()}
_NP_TO_TORCH = {
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
    np.dtype(np.float16): torch.float16, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int32): torch.int32, np.dtype(np.int8): torch.int8,
    np.dtype(np.int64): torch.int64, np.dtype(np.bool_): torch.bool,
    np.dtype(np.int16): torch.int16,
}
_TORCH_TO_NP = {v: k.type for k, v in _NP_TO_TORCH.items()}

# bfloat16: numpy has none, so MXNet 1.9.1 stands in the structured dtype of one uint16 field
# named ``bfloat16`` (an NDArray's ``.dtype``, ``asnumpy()`` gives the raw bits in it); type
# code 12 (mshadow's kBfloat16); computed as torch.bfloat16. ``dtype_np`` returns this np.dtype
# instance (not a type class) for it; the string 'bfloat16' also means it.
bfloat16 = np.dtype([("bfloat16", np.uint16)])
_CODE_TO_NP[12] = bfloat16
_NP_TO_CODE[bfloat16] = 12
_NP_TO_TORCH[bfloat16] = torch.bfloat16
_TORCH_TO_NP[torch.bfloat16] = bfloat16


def bf16_truncate(t: torch.Tensor) -> torch.Tensor:
    """``t`` as bfloat16 the way mshadow converts (MXNet's Cast, astype, bfloat16 arithmetic):
    through float32, keeping its upper 16 bits (truncation, not round-to-nearest)."""
    if t.dtype is torch.bfloat16:
        return t.clone()
    f = t.to(torch.float32).contiguous()
    bits = f.view(torch.int32)
    hi = (bits >> 16).to(torch.int16)
    # NaN: the quiet NaN of the input's sign (torch's float16 NaN carries other payload bits)
    nan = torch.where(bits < 0, torch.tensor(-64, dtype=torch.int16, device=t.device),
                      torch.tensor(0x7FC0, dtype=torch.int16, device=t.device))
    return torch.where(torch.isnan(f), nan, hi).view(torch.bfloat16)


def dtype_np(dtype) -> type:
    """Normalise a dtype given as str, numpy type, np.dtype or torch.dtype to a numpy type class
    (bfloat16: MXNet's structured stand-in dtype, see ``bfloat16``)."""
    if dtype is None:
        return np.float32
    if isinstance(dtype, torch.dtype):
        try:
            return _TORCH_TO_NP[dtype]
        except KeyError:
            raise MXNetError(f"unsupported dtype {dtype}") from None
    if isinstance(dtype, str) and dtype == "bfloat16":
        return bfloat16
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise MXNetError(f"unsupported dtype {dtype!r}") from None
    if dt not in _NP_TO_TORCH:
        raise MXNetError(f"unsupported dtype {dt.name}")
    return bfloat16 if dt == bfloat16 else dt.type


def dtype_torch(dtype) -> torch.dtype:
    """Normalise any dtype spelling to a torch.dtype (float32 for None)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    return _NP_TO_TORCH[np.dtype(dtype_np(dtype))]


def dtype_code(dtype) -> int:
    """MXNet's integer type flag for a dtype."""
    return _NP_TO_CODE[np.dtype(dtype_np(dtype))]


def dtype_from_code(code: int) -> type:
    try:
        return _CODE_TO_NP[int(code)]
    except KeyError:
        raise MXNetError(f"unknown MXNet dtype code {code}") from None


def dtype_name(dtype) -> str:
    """MXNet's name of a dtype (``'bfloat16'`` for bfloat16, numpy's name otherwise)."""
    dt = np.dtype(dtype_np(dtype))
    return dt.names[0] if dt.names else dt.name


# --- shapes -----------------------------------------------------------------------------------
def shape_str(shape) -> str:
    """MXNet's bracketed shape text, e.g. ``[2,3]``."""
    if shape is None:
        return "[]"
    return "[" + ",".join(str(int(s)) for s in shape) + "]"


def parse_shape(value) -> tuple:
    """Parse a shape given as int, sequence, or string ``"(3, 4)"``/``"[3,4]"``/``"3"``."""
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "()", "[]", "None"):
            return ()
        value = ast.literal_eval(text)
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    return tuple(int(v) for v in value)


# --- MXNet 1.9.1's small Python-level helpers of mxnet.base ------------------------------------
basestring = str  # (Python 2 compatibility names MXNet still exports)
long = int


def build_param_doc(arg_names, arg_types, arg_descs, remove_dup=True):
    """The numpy-style ``Parameters`` section for the given arguments (``num_args`` skipped).

    >>> print(build_param_doc(['data', 'axis'], ['NDArray', 'int'], ['input', '']))
    Parameters
    ----------
    data : NDArray
        input
    axis : int
    <BLANKLINE>
    """
    param_keys = set()
    param_str = []
    for key, type_info, desc in zip(arg_names, arg_types, arg_descs):
        if (key in param_keys and remove_dup) or key == "num_args":
            continue
        param_keys.add(key)
        ret = "%s : %s" % (key, type_info)
        if len(desc) != 0:
            ret += "\n    " + desc
        param_str.append(ret)
    return "Parameters\n----------\n%s\n" % "\n".join(param_str)


def add_fileline_to_docstring(module, incursive=True):
    """Append ``From:<file>:<line>`` to the docstring of each function (and, with ``incursive``,
    each class's methods) defined in ``module`` (a module or its name)."""
    import inspect
    import sys

    def _add_fileline(obj):
        if obj.__doc__ is None or "From:" in obj.__doc__:
            return
        fname = inspect.getsourcefile(obj)
        if fname is None:
            return
        try:
            line = inspect.getsourcelines(obj)[-1]
        except IOError:
            return
        obj.__doc__ += "\n\nFrom:%s:%d" % (fname, line)

    if isinstance(module, str):
        module = sys.modules[module]
    for _, obj in inspect.getmembers(module):
        if inspect.isbuiltin(obj):
            continue
        if inspect.isfunction(obj):
            _add_fileline(obj)
        if inspect.ismethod(obj):
            _add_fileline(obj.__func__)
        if inspect.isclass(obj) and incursive:
            add_fileline_to_docstring(obj, False)


class _MXClassPropertyDescriptor:
    """A property of the class itself (``classproperty``); its setter needs the metaclass."""

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset

    def __get__(self, obj, clas=None):
        if clas is None:
            clas = type(obj)
        return self.fget.__get__(obj, clas)()

    def __set__(self, obj, value):
        import inspect
        if not self.fset:
            raise MXNetError("cannot use the setter: %s to set attribute" % obj.__name__)
        if inspect.isclass(obj):
            type_, obj = obj, None
        else:
            type_ = type(obj)
        return self.fset.__get__(obj, type_)(value)

    def setter(self, func):
        if not isinstance(func, (classmethod, staticmethod)):
            func = classmethod(func)
        self.fset = func
        return self


class _MXClassPropertyMetaClass(type):
    """Routes ``Class.prop = value`` to a classproperty's setter."""

    def __setattr__(cls, key, value):
        obj = cls.__dict__.get(key)
        if obj and isinstance(obj, _MXClassPropertyDescriptor):
            return obj.__set__(cls, value)
        return super().__setattr__(key, value)


def classproperty(func):
    """A read-only property of the class (as MXNet's ``mxnet.base.classproperty``).

    >>> class A:
    ...     @classproperty
    ...     def kind(cls):
    ...         return cls.__name__.lower()
    >>> A.kind, A().kind
    ('a', 'a')
    """
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _MXClassPropertyDescriptor(func)


def with_metaclass(meta, *bases):
    """Create a base class with a metaclass (six's recipe, as MXNet)."""
    class metaclass(type):
        def __new__(cls, name, this_bases, d):
            return meta(name, bases, d)

        @classmethod
        def __prepare__(cls, name, this_bases):
            return meta.__prepare__(name, bases)
    return type.__new__(metaclass, "temporary_class", (), {})
