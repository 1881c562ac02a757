"""ONNX import: an ONNX model as a Symbol and parameters, or a gluon SymbolBlock."""
from . import import_model
from . import import_onnx
