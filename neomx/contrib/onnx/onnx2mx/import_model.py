"""``import_model``, ``get_model_metadata`` and ``import_to_gluon`` of an ONNX file."""
from __future__ import annotations

from .import_onnx import GraphProto, _onnx


def _load(model_file):
    proto = _onnx().load_model(model_file)
    opset = max([x.version for x in proto.opset_import if x.domain in ("", "ai.onnx")] or [1])
    return proto, opset


def import_model(model_file):
    """Imports the ONNX model file into a Symbol and its parameters.

    Parameters
    ----------
    model_file : str
        ONNX model file name.

    Returns
    -------
    sym : Symbol
        The network; its data inputs and weights are Variables named as in the file.
    arg_params : dict of str to NDArray
        The initializers the network uses as arguments.
    aux_params : dict of str to NDArray
        The initializers the network uses as auxiliary states (BatchNorm's moving statistics).

    Raises
    ------
    MXNetError
        Naming every operator of the model that cannot be imported.
    """
    proto, opset = _load(model_file)
    return GraphProto().from_onnx(proto.graph, opset_version=opset)


def get_model_metadata(model_file):
    """Names and shapes of the input and output tensors of an ONNX model file.

    Returns
    -------
    dict
        ``{'input_tensor_data': [(name, shape, onnx_elem_type), ...],
        'output_tensor_data': [(name, shape), ...]}`` (initializers are no inputs; an unknown
        dimension is 0).
    """
    proto, _ = _load(model_file)
    return GraphProto().get_graph_metadata(proto.graph)


def import_to_gluon(model_file, ctx):
    """Imports the ONNX model file into a ``gluon.SymbolBlock`` with its parameters on ``ctx``
    (a Context or a list of them)."""
    proto, opset = _load(model_file)
    return GraphProto().graph_to_gluon(proto.graph, ctx, opset)
