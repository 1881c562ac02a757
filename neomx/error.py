"""Structured error classes, as MXNet 1.9.1's ``mxnet.error``.

Each error class takes an error message as its input. ``register`` adds a class to the registry
(``error_types``) that maps an error name, the text before the first ``:`` of a message such as
``"ValueError: bad shape"``, to the class raised for it.
"""
from __future__ import annotations

from .base import MXNetError

__all__ = ["MXNetError", "register"]

error_types: dict = {}


def register_error(func_name=None, cls=None):
    """Register an error class so it can be recognized by name.

    Parameters
    ----------
    func_name : str or class
        The error's name, or the class itself (registered under its ``__name__``).
    cls : class, optional
        The class to register under ``func_name``.

    Returns
    -------
    The class, or a decorator when ``cls`` is not given.

    Examples
    --------
    >>> import neomx as mx
    >>> @mx.error.register
    ... class MyError(RuntimeError):
    ...     pass
    >>> mx.error.error_types["MyError"] is MyError
    True
    """
    if callable(func_name):
        cls = func_name
        func_name = cls.__name__

    def register(mycls):
        err_name = func_name if isinstance(func_name, str) else mycls.__name__
        error_types[err_name] = mycls
        return mycls
    if cls is None:
        return register
    return register(cls)


register = register_error


def create_error(message: str):
    """The registered error for ``"Name: detail"`` messages (``MXNetError`` for unknown names)."""
    name = message.split(":", 1)[0] if ":" in message else None
    return error_types.get(name, MXNetError)(message)


@register_error
class InternalError(MXNetError):
    """Internal error in the system.

    Examples
    --------
    >>> import neomx as mx
    >>> print(mx.error.InternalError("internal error detail"))  # doctest: +ELLIPSIS
    internal error detail
    MXNet hint: You hit an internal error. Please open an issue in ...
    """

    def __init__(self, msg):
        if "MXNet hint:" not in msg:  # (the URL MXNet 1.9.1 names)
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue in "
                    "https://github.com/apache/incubator-mxnet/issues/new/choose"
                    " to report it.")
        super().__init__(msg)


register_error("ValueError", ValueError)
register_error("TypeError", TypeError)
register_error("AttributeError", AttributeError)
register_error("IndexError", IndexError)
register_error("NotImplementedError", NotImplementedError)
