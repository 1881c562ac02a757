"""Operator definitions: importing this package registers every operator."""
from . import registry
from . import elemwise, nn, reduce, shape, random  # noqa: F401  (registration side effects)
from .registry import OpDef, OpContext, Param, Params, get, find, all_ops, register

__all__ = ["registry", "OpDef", "OpContext", "Param", "Params", "get", "find", "all_ops", "register"]
