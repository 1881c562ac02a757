"""Initializers (``mx.init``): a registry by name, JSON ``dumps`` as stored in ``__init__`` attrs."""
from __future__ import annotations

import json

import numpy as np

from .base import MXNetError

__all__ = ["Initializer", "register", "create", "Uniform", "Normal", "Zero", "One", "Constant"]

_REGISTRY: dict[str, type] = {}


def register(klass):
    """Register an Initializer class under its lowercased name."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def create(init, **kwargs):
    """An Initializer from an instance, a registered name, or a ``dumps()`` JSON string."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        if init.startswith("["):
            name, kw = json.loads(init)
            return _REGISTRY[name.lower()](**kw)
        try:
            return _REGISTRY[init.lower()](**kwargs)
        except KeyError:
            raise MXNetError(f"unknown initializer {init!r}; registered: {sorted(_REGISTRY)}") from None
    raise TypeError(f"cannot create an initializer from {type(init).__name__}")


class Initializer:
    """Base class: ``init(name, arr)`` fills ``arr`` by MXNet's name rules (``_weight`` via
    ``_init_weight``, ``_bias``/``_beta`` zero, ``_gamma`` one)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def dumps(self) -> str:
        """``["name", {kwargs}]`` as stored in a Variable's ``__init__`` attribute."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        name = str(desc)
        if name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith("bias") or name.endswith("beta") or name.endswith("moving_mean") or name.endswith("min"):
            arr[:] = 0.0
        elif name.endswith("gamma") or name.endswith("moving_var") or name.endswith("max"):
            arr[:] = 1.0
        else:
            raise ValueError(f"Unknown initialization pattern for {name}")

    def _init_weight(self, name, arr):
        raise NotImplementedError


@register
class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, name, arr):
        from .random import uniform
        uniform(-self.scale, self.scale, out=arr)


@register
class Normal(Initializer):
    """N(0, sigma)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, name, arr):
        from .random import normal
        normal(0, self.sigma, out=arr)


@register
class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, name, arr):
        arr[:] = np.asarray(self.value) if not np.isscalar(self.value) else self.value


@register
class Zero(Initializer):
    def _init_weight(self, name, arr):
        arr[:] = 0


@register
class One(Initializer):
    def _init_weight(self, name, arr):
        arr[:] = 1
