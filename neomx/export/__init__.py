"""Leaving MXNet: convert a model (symbol + parameters) to plain PyTorch (:func:`to_torch`);
ONNX export is :mod:`neomx.onnx`. Both walk the graph with :mod:`neomx.export.graph`."""
from .torch_module import supported_ops, to_torch

__all__ = ["to_torch", "supported_ops"]
