"""``mx.onnx.export_model``: an MXNet model as an ONNX file (opset 17)."""
from __future__ import annotations

import logging
import re

import numpy as np

from ..base import MXNetError
from ..export.graph import Unsupported, output_values, prepare, walk
from ._ops import TABLE

OPSET = 17
IR_VERSION = 8  # ONNX 1.12's, read by every onnxruntime since 1.12


def _onnx():
    try:
        import onnx
        return onnx
    except ImportError:
        raise MXNetError("mx.onnx needs the onnx package: pip install neomx[onnx] (or pip install "
                         "onnx onnxruntime)") from None


def get_operator_support(opset_version=None):
    """The neomx operators that export to ONNX (MXNet's ``mx.onnx.get_operator_support``)."""
    return sorted(TABLE)


def output_name(node, i):
    """The ONNX name MXNet's exporter gives an output (``fc1_output`` -> ``fc1``,
    ``split0_output1`` -> ``split01``, RNN's ``rnn0_state_output`` -> ``rnn01``)."""
    name = node.output_name(i)
    if name.endswith("_state_output"):
        return name[:-len("_state_output")] + "1"
    if name.endswith("_statecell_output"):
        return name[:-len("_statecell_output")] + "2"
    if name.endswith("_output"):
        return name[:-len("_output")]
    if re.search(r"_output[0-9]$", name):
        return name[:-len("_output0")] + name[-1]
    return name


class Builder:
    """Collects ONNX nodes and initializers while the graph is walked."""

    def __init__(self, model, dynamic, verbose):
        self.onnx = _onnx()
        self.model, self.dynamic, self.verbose = model, dynamic, verbose
        self.nodes, self.initializers = [], []
        self.names = set(n.name for n in model.graph.input_nodes)
        self.current = "node"

    # --- names and values ---------------------------------------------------------------------------
    def fresh(self, base):
        name, k = base, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.fresh(f"{self.current}_{op_type.lower()}") for _ in range(n_out)]
        self.nodes.append(self.onnx.helper.make_node(
            op_type, list(inputs), outs, name=self.fresh(f"{self.current}_{op_type}"), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, array, name=None):
        name = self.fresh(name or f"{self.current}_const")
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def dummy(self):
        return self.fresh("_dummy")

    def onnx_type(self, dtype):
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    # --- what shape and type inference knew -----------------------------------------------------------
    def shape(self, node, i):
        return self.model.shape(node.inputs[i])

    def rank(self, node, i):
        s = self.model.shapes.get(node.inputs[i])
        return None if s is None else len(s)

    def need_rank(self, node, i):
        r = self.rank(node, i)
        if r is None:
            raise Unsupported("the input's rank is unknown")
        return r

    def out_shape(self, node, i=0):
        return self.model.shape((node, i))

    def dtype(self, node, i):
        return self.model.dtype(node.inputs[i]) or np.dtype(np.float32)

    def param(self, node, i):
        name = node.inputs[i][0].name
        return self.model.arg_params.get(name, self.model.aux_params.get(name))

    def param_shape(self, node, i):
        v = self.param(node, i)
        if v is not None:
            return v.shape
        s = self.shape(node, i)
        if s is None:
            raise Unsupported(f"the shape of {node.inputs[i][0].name} is unknown")
        return s

    def rename_outputs(self, start, node, outs):
        """Give the values a node's converter made the names MXNet's exporter gives them."""
        fresh = {o for n in self.nodes[start:] for o in n.output}
        for i, v in enumerate(outs):
            if v not in fresh:
                continue
            want = output_name(node, i)
            if want in self.names:
                continue
            self.names.add(want)
            for n in self.nodes[start:]:
                for seq in (n.output, n.input):
                    for k, name in enumerate(seq):
                        if name == v:
                            seq[k] = want
            outs[i] = want
        return outs


def _table(builder):
    """The converters, each wrapped to name its outputs as MXNet does."""
    def wrap(conv):
        def run(ctx, node, p, ins):
            builder.current = node.name
            if builder.verbose:
                logging.info("Converting %s (%s)", node.name, node.op.name)
            start = len(builder.nodes)
            out = conv(ctx, node, p, ins)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            return builder.rename_outputs(start, node, outs)
        return run
    return {k: wrap(v) for k, v in TABLE.items()}


def _value_info(helper, name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))


def build_model(sym, params, in_shapes=None, in_types=np.float32, verbose=False, dynamic=False,
                dynamic_input_shapes=None, run_shape_inference=False):
    """The ``onnx.ModelProto`` of an MXNet model (see :func:`export_model`)."""
    onnx = _onnx()
    helper = onnx.helper
    probe = prepare(sym, params)
    names = probe.inputs
    if in_shapes is None:
        raise MXNetError(f"export_model needs in_shapes, one shape per input: {names}")
    in_shapes = [tuple(int(d) for d in s) for s in in_shapes]
    if len(in_shapes) != len(names):
        raise MXNetError(f"export_model: {len(in_shapes)} in_shapes given for the model's "
                         f"{len(names)} inputs {names}")
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise MXNetError("The lengths of in_types and in_shapes must equal")
    in_types = [np.dtype(t) for t in in_types]
    if dynamic_input_shapes is not None and not dynamic:
        raise MXNetError("dynamic_input_shapes is specified. Please set dynamic=True to enable "
                         "dynamic input shapes")
    model = prepare(probe.symbol, probe.arg_params, probe.aux_params,
                    in_shapes=dict(zip(names, in_shapes)), in_types=dict(zip(names, in_types)))
    b = Builder(model, dynamic, verbose)
    values = {}
    graph_inputs = []
    if dynamic:
        shown = (dynamic_input_shapes if dynamic_input_shapes is not None
                 else [(None,) * len(s) for s in in_shapes])
        if len(shown) != len(in_shapes) or any(len(a) != len(s) for a, s in zip(shown, in_shapes)):
            raise MXNetError("dynamic_input_shapes must have one shape of the same rank per input")
    else:
        shown = in_shapes
    for name, shape, dt in zip(names, shown, in_types):
        graph_inputs.append(_value_info(helper, name, b.onnx_type(dt), shape))
    for var in model.graph.input_nodes:
        name = var.name
        if name in names:
            values[(var, 0)] = name
        elif name in model.labels:
            values[(var, 0)] = None
        elif (var, 0) not in values:
            array = model.arg_params.get(name, model.aux_params.get(name))
            b.initializers.append(onnx.numpy_helper.from_array(np.ascontiguousarray(array), name))
            values[(var, 0)] = name
    walk(model, _table(b), b, values, "ONNX")
    graph_outputs, seen = [], set()
    for (node, i), v in zip(model.symbol._outputs, output_values(model, values, "ONNX")):
        want = output_name(node, i) if node.op is not None else node.name
        if v != want or v in seen or v in names:
            want = b.fresh(want) if want in b.names and want != v else want
            b.names.add(want)
            b.nodes.append(helper.make_node("Identity", [v], [want], name=b.fresh(want + "_id")))
            v = want
        seen.add(v)
        shape = model.shape((node, i))
        if dynamic:
            shape = None if shape is None else [None] * len(shape)
        dt = model.dtype((node, i)) or np.dtype(np.float32)
        graph_outputs.append(_value_info(helper, v, b.onnx_type(dt), shape))
    used = {v for n in b.nodes for v in n.input} | {o.name for o in graph_outputs}
    initializers = [t for t in b.initializers if t.name in used]
    graph = helper.make_graph(b.nodes, "mxnet_converted_model", graph_inputs, graph_outputs,
                              initializer=initializers)
    proto = helper.make_model(graph, producer_name="neomx", opset_imports=[
        helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)
    onnx.checker.check_model(proto)
    if run_shape_inference:
        try:
            proto = onnx.shape_inference.infer_shapes(proto)
        except Exception:  # noqa: BLE001  (MXNet keeps the model as it is too)
            logging.info("Shape inference failed, original export is kept.")
    return proto


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path="model.onnx",
                 verbose=False, dynamic=False, dynamic_input_shapes=None,
                 run_shape_inference=False, input_type=None, input_shape=None):
    """Export an MXNet model to an ONNX file, as MXNet 1.9.1's ``mx.onnx.export_model``.

    Parameters
    ----------
    sym : str or Symbol
        The network, or the path of its ``-symbol.json`` file.
    params : str, dict or list of two dicts
        The path of a ``.params`` file; one dict of arg and aux params (names with or without
        ``arg:``/``aux:``); or ``[arg_params, aux_params]``.
    in_shapes : list of tuple
        One shape per data input (the arguments without a value, in ``list_inputs`` order; the
        label of a loss head is no input), e.g. ``[(1, 3, 224, 224)]``.
    in_types : numpy dtype or list of them
        The inputs' types (default float32).
    onnx_file_path : str
        Where to write the model.
    verbose : bool
        Log each node as it is converted.
    dynamic : bool
        Declare the inputs' and outputs' dimensions unknown (``dynamic_input_shapes`` gives the
        inputs' shapes with None for each dynamic dimension).
    run_shape_inference : bool
        Run ONNX's shape inference on the result (kept as it is when that fails).
    input_type, input_shape
        The old names of ``in_types`` and ``in_shapes``.

    Returns
    -------
    str
        ``onnx_file_path``.

    Raises
    ------
    MXNetError
        Without the onnx package (``pip install neomx[onnx]``), or naming every operator of the
        model that cannot be exported.

    Notes
    -----
    The model uses ONNX opset 17. Operators run in inference mode: Dropout is the identity,
    BatchNorm uses the moving statistics and loss heads give their output (SoftmaxOutput: the
    softmax). ``mx.onnx.get_operator_support()`` lists the operators that export.
    """
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    proto = build_model(sym, params, in_shapes, in_types, verbose, dynamic, dynamic_input_shapes,
                        run_shape_inference)
    with open(onnx_file_path, "wb") as f:
        f.write(proto.SerializeToString())
    logging.info("Exported ONNX file %s saved to disk", onnx_file_path)
    return onnx_file_path
