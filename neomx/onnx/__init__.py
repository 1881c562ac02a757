"""``mx.onnx``: export an MXNet model to ONNX, as MXNet 1.9.1's ``mxnet.onnx``.

Needs the onnx package (``pip install neomx[onnx]``); importing ``mx.onnx`` works without it
and the functions say what to install.
"""
from ._export import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
