"""An ONNX graph as a neomx Symbol and its parameters (MXNet 1.9.1's ``GraphProto``)."""
from __future__ import annotations

import numpy as np

from ....base import MXNetError
from .... import ndarray as nd
from .... import symbol
from ._op_translations import TABLE


def _onnx():
    try:
        import onnx
        return onnx
    except ImportError:
        raise ImportError("Onnx and protobuf need to be installed. "
                          "Instructions to install - https://github.com/onnx/onnx") from None


def _dims(value_info):
    return tuple(d.dim_value for d in value_info.type.tensor_type.shape.dim)


class _NodeView:
    """What a converter sees of the node it converts: its inputs as Symbols or constants."""

    def __init__(self, graph, node):
        self.graph, self.node = graph, node
        self.name = node.name.strip() or f"{node.op_type.lower()}{len(graph.values)}"
        self.node_desc = f"node {self.name!r} ({node.op_type})"
        self.opset = graph.opset_version

    def sym(self, i):
        return self.graph.symbol_of(self.node.input[i])

    def const(self, i):
        """The input's value when it is a constant (an initializer or a Constant's output)."""
        if i >= len(self.node.input) or not self.node.input[i]:
            return None
        return self.graph.constants.get(self.node.input[i])

    def param(self, i):
        """The value of an input that is an initializer (a weight), else None."""
        return self.const(i)

    def reshape_param(self, i, shape):
        name = self.node.input[i]
        self.graph.constants[name] = self.graph.constants[name].reshape(shape)


class GraphProto:
    """Builds the Symbol of an ``onnx.GraphProto``: graph inputs and used initializers become
    Variables named as in the file, each node becomes the operators of its converter.
    """

    def __init__(self):
        self.values = {}      # ONNX value name -> Symbol (one output)
        self.constants = {}   # ONNX value name -> numpy array (initializers, Constant outputs)
        self.used = []        # constants that became Variables, in order of use
        self.opset_version = 0
        self.model_metadata = {}

    def symbol_of(self, name):
        if name in self.values:
            return self.values[name]
        if name in self.constants:
            value = self.constants[name]
            if value.ndim == 0:  # MXNet's NDArrays have at least one axis
                self.constants[name] = value = value.reshape(1)
            self.values[name] = symbol.Variable(name, shape=value.shape)
            self.used.append(name)
            return self.values[name]
        raise MXNetError(f"ONNX import: the value {name!r} is used before it is defined")

    def _check_supported(self, graph):
        missing = sorted({n.op_type for n in graph.node
                          if n.op_type not in TABLE and n.op_type != "Constant"})
        if missing:
            raise MXNetError("ONNX import: the model uses operators that neomx cannot import: "
                             + ", ".join(missing))

    def from_onnx(self, graph, opset_version):
        """``(sym, arg_params, aux_params)`` of ``graph``."""
        numpy_helper = _onnx().numpy_helper
        self._check_supported(graph)
        self.opset_version = opset_version
        self.model_metadata = self.get_graph_metadata(graph)
        for t in graph.initializer:
            if not t.name.strip():
                raise ValueError("Tensor's name is required.")
            self.constants[t.name] = numpy_helper.to_array(t)
        for i in graph.input:
            if i.name not in self.constants:
                self.values[i.name] = symbol.Variable(i.name)
        for node in graph.node:
            if node.op_type == "Constant":
                self._constant(node)
                continue
            view = _NodeView(self, node)
            try:
                out = TABLE[node.op_type](view, node, self._parse_attr(node.attribute))
            except MXNetError:
                raise
            except Exception as e:  # noqa: BLE001  (name the node that failed)
                raise MXNetError(f"ONNX import: while converting {view.node_desc}: {e}") from e
            outs = out if isinstance(out, (list, tuple)) else [out[i] for i in
                                                                range(len(out.list_outputs()))]
            for name, s in zip(node.output, outs):
                if name:
                    self.values[name] = s
        heads = [self.symbol_of(o.name) for o in graph.output]
        sym = heads[0] if len(heads) == 1 else symbol.Group(heads)
        args, auxs = set(sym.list_arguments()), set(sym.list_auxiliary_states())
        arg_params = {k: nd.array(self.constants[k], dtype=self.constants[k].dtype)
                      for k in self.used if k in args}
        aux_params = {k: nd.array(self.constants[k], dtype=self.constants[k].dtype)
                      for k in self.used if k in auxs}
        return sym, arg_params, aux_params

    def _constant(self, node):
        numpy_helper = _onnx().numpy_helper
        attr = {a.name: a for a in node.attribute}
        if "value" in attr:
            value = numpy_helper.to_array(attr["value"].t)
        elif "value_float" in attr or "value_int" in attr:
            value = (np.array(attr["value_float"].f, np.float32) if "value_float" in attr
                     else np.array(attr["value_int"].i, np.int64))
        elif "value_floats" in attr or "value_ints" in attr:
            value = (np.array(attr["value_floats"].floats, np.float32)
                     if "value_floats" in attr else np.array(attr["value_ints"].ints, np.int64))
        else:
            raise MXNetError(f"ONNX import: Constant {node.name!r} without a supported value")
        self.constants[node.output[0]] = value

    def get_graph_metadata(self, graph):
        """Names and shapes of the graph's data inputs (with their ONNX element type, as
        MXNet's) and outputs."""
        params = {t.name for t in graph.initializer}
        inputs = [(i.name, _dims(i), i.type.tensor_type.elem_type)
                  for i in graph.input if i.name not in params]
        outputs = [(o.name, _dims(o)) for o in graph.output]
        return {"input_tensor_data": inputs, "output_tensor_data": outputs}

    def graph_to_gluon(self, graph, ctx, opset_version):
        """A ``gluon.SymbolBlock`` of ``graph`` with its parameters loaded on ``ctx``."""
        sym, arg_params, aux_params = self.from_onnx(graph, opset_version)
        names = [i[0] for i in self.get_graph_metadata(graph)["input_tensor_data"]]
        from ....gluon import SymbolBlock
        net = SymbolBlock(outputs=sym, inputs=[symbol.var(n) for n in names])
        net_params = net.collect_params()
        for params in (arg_params, aux_params):
            for name, value in params.items():
                if name in net_params:
                    net_params[name].shape = value.shape
                    net_params[name]._load_init(value, ctx=ctx)
        return net

    @staticmethod
    def _parse_attr(attr_proto):
        """AttributeProtos as a dict (strings decoded, repeated fields as tuples)."""
        attrs = {}
        for a in attr_proto:
            for f in ("f", "i", "s"):
                if a.HasField(f):
                    v = getattr(a, f)
                    attrs[a.name] = v.decode("utf-8") if isinstance(v, bytes) else v
            for f in ("floats", "ints", "strings"):
                if list(getattr(a, f)):
                    attrs[a.name] = tuple(v.decode("utf-8") if isinstance(v, bytes) else v
                                          for v in getattr(a, f))
            for f in ("t", "g"):
                if a.HasField(f):
                    attrs[a.name] = getattr(a, f)
            if a.name not in attrs and a.type in (6, 7, 8):  # empty FLOATS/INTS/STRINGS
                attrs[a.name] = ()
        return attrs
