"""Registry for serializable objects, as MXNet 1.9.1's ``mxnet.registry``.

One registry (name -> class) per base class. ``get_register_func`` makes a decorator that adds
subclasses under their lower-cased names, ``get_alias_func`` one that adds them under aliases,
and ``get_create_func`` a factory that builds an instance from a name, a ``[name, kwargs]`` or
``{nickname: name, ...}`` JSON string, a dict, or passes an instance through.
"""
from __future__ import annotations

import json
import warnings

from .base import string_types

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRY: dict = {}


def get_registry(base_class):
    """Get a copy of the registry of ``base_class`` (name -> class)."""
    return _REGISTRY.setdefault(base_class, {}).copy()


def get_register_func(base_class, nickname):
    """Get registrator function.

    Parameters
    ----------
    base_class : type
        base class for classes that will be registered
    nickname : str
        nickname of base_class for logging

    Returns
    -------
    a registrator function

    Examples
    --------
    >>> import neomx as mx
    >>> class Shape: pass
    >>> register = mx.registry.get_register_func(Shape, "shape")
    >>> @register
    ... class Square(Shape):
    ...     def __init__(self, side=1): self.side = side
    >>> mx.registry.get_create_func(Shape, "shape")('["square", {"side": 3}]').side
    3
    """
    registry = _REGISTRY.setdefault(base_class, {})

    def register(klass, name=None):
        """Register functions"""
        assert issubclass(klass, base_class), \
            "Can only register subclass of %s" % base_class.__name__
        if name is None:
            name = klass.__name__
        name = name.lower()
        if name in registry:
            warnings.warn(
                "\033[91mNew %s %s.%s registered with name %s is"
                "overriding existing %s %s.%s\033[0m" % (
                    nickname, klass.__module__, klass.__name__, name,
                    nickname, registry[name].__module__, registry[name].__name__),
                UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = "Register %s to the %s factory" % (nickname, nickname)
    return register


def get_alias_func(base_class, nickname):
    """Get registrator function that allow aliases: ``@alias('a', 'b')`` registers a class
    under each name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        """alias registrator"""
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """Get creator function (see the module docstring for what it accepts)."""
    registry = _REGISTRY.setdefault(base_class, {})

    def create(*args, **kwargs):
        if len(args):
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)  # KeyError without a name, as MXNet
        if isinstance(name, base_class):
            assert len(args) == 0 and len(kwargs) == 0, \
                "%s is already an instance. Additional arguments are invalid" % (nickname)
            return name
        if isinstance(name, dict):
            return create(**name)
        assert isinstance(name, string_types), "%s must be of string type" % nickname
        if name.startswith("["):
            assert not args and not kwargs
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            assert not args and not kwargs
            kwargs = json.loads(name)
            return create(**kwargs)
        name = name.lower()
        assert name in registry, \
            "%s is not registered. Please register with %s.register first" % (str(name), nickname)
        return registry[name](*args, **kwargs)

    create.__doc__ = """Create a %s instance from config.

Parameters
----------
%s : str or %s instance
    class name of desired instance. If is a instance,
    it will be returned directly.
**kwargs : dict
    arguments to be passed to constructor""" % (nickname, nickname, base_class.__name__)
    return create
