"""``neomx.to_torch``: an MXNet model as a plain ``torch.fx.GraphModule``."""
from __future__ import annotations

import keyword
import re

import numpy as np
import torch
from torch import fx
from torch.fx.proxy import GraphAppendingTracer, Proxy

from ..base import MXNetError
from .graph import Unsupported, output_values, prepare, walk
from .torch_ops import TABLE

__all__ = ["to_torch", "supported_ops"]


def supported_ops() -> list:
    """The names of the neomx operators :func:`to_torch` converts."""
    return sorted(TABLE)


def _identifier(name: str, taken: set) -> str:
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit() or keyword.iskeyword(ident):
        ident = "_" + ident
    base, k = ident, 1
    while ident in taken:
        ident, k = f"{base}_{k}", k + 1
    taken.add(ident)
    return ident


class _Lowering:
    """What a lowering may ask: the module's training flag, inferred ranks, parameter shapes."""

    def __init__(self, model, graph, tracer):
        self.model, self._graph, self._tracer = model, graph, tracer
        self._training = None

    def dummy(self):
        """A stand-in input (only used to look for more errors once conversion failed)."""
        return Proxy(self._graph.placeholder(f"_dummy{len(self._graph.nodes)}"), self._tracer)

    @property
    def training(self):
        if self._training is None:
            self._training = Proxy(self._graph.get_attr("training"), self._tracer)
        return self._training

    def shape(self, node, i):
        return self.model.shape(node.inputs[i])

    def rank(self, node, i):
        s = self.model.shapes.get(node.inputs[i])
        return None if s is None else len(s)

    def param_shape(self, node, i):
        src = node.inputs[i][0]
        v = self.model.arg_params.get(src.name)
        if v is None:
            v = self.model.aux_params.get(src.name)
        if v is not None:
            return tuple(v.shape)
        s = self.model.shape(node.inputs[i])
        if s is None:
            raise Unsupported(f"the shape of {src.name} is unknown (give input shapes)")
        return s


def to_torch(symbol, arg_params=None, aux_params=None, input_shapes=None) -> fx.GraphModule:
    """Convert an MXNet model to a ``torch.fx.GraphModule`` that needs only torch.

    Every neomx operator becomes torch / torch.nn.functional calls in the module's ``forward``
    (``gm.code`` shows it); the weights become ``nn.Parameter``s and the auxiliary states
    (BatchNorm's moving statistics) buffers, under MXNet's names (``gm.state_dict()`` has
    ``conv0_weight``, ``bn0_moving_mean``...; a ``.`` in a name becomes ``_``). ``forward``
    takes the model's data inputs (the arguments without a value, in ``list_inputs`` order,
    loss labels left out) and returns its output, or a tuple of outputs. BatchNorm and Dropout
    follow ``gm.train()`` / ``gm.eval()`` (the module starts in eval mode). Loss heads give
    their inference output (SoftmaxOutput: the softmax); train in torch with a torch loss.

    Parameters
    ----------
    symbol : Symbol or str
        The network, or the path of a ``-symbol.json`` file.
    arg_params : dict of str to NDArray, or str
        The weights (or a ``.params`` file with ``arg:``/``aux:`` names, or one dict of both).
    aux_params : dict of str to NDArray, optional
        The auxiliary states.
    input_shapes : dict of str to tuple, optional
        Shapes of the data inputs. Only needed by operators whose lowering depends on the
        input's rank (``Reshape`` with codes -2/-3/-4, ``transpose`` without axes...); the module
        accepts any shape those operators accept.

    Returns
    -------
    torch.fx.GraphModule
        Works with ``torch.compile``, ``torch.export.export``, ``torch.save``.

    Raises
    ------
    MXNetError
        Naming every operator of the model that cannot be converted.

    Examples
    --------
    >>> import neomx as mx, torch
    >>> x = mx.sym.Variable('data')
    >>> net = mx.sym.FullyConnected(x, num_hidden=2, name='fc')
    >>> gm = mx.to_torch(net, {'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros(2)})
    >>> sorted(gm.state_dict())
    ['fc_bias', 'fc_weight']
    >>> gm(torch.ones(1, 3))
    tensor([[3., 3.]], grad_fn=<AddmmBackward0>)
    """
    model = prepare(symbol, arg_params, aux_params, in_shapes=input_shapes)
    graph = fx.Graph()
    tracer = GraphAppendingTracer(graph)
    root = torch.nn.Module()
    values, taken = {}, {"self", "training", "torch"}
    by_name = {}
    for name in model.inputs:
        node = graph.placeholder(_identifier(name, taken))
        node.meta["mxnet_name"] = name
        by_name[name] = Proxy(node, tracer)
    attrs = set()
    for var in model.graph.input_nodes:
        name = var.name
        if name in by_name:
            values[(var, 0)] = by_name[name]
            continue
        if name in model.labels:
            continue
        attr = name.replace(".", "_")
        if attr not in attrs:
            if attr in attrs or hasattr(torch.nn.Module, attr):
                raise MXNetError(f"to_torch: parameter name {name!r} clashes with another one")
            value = torch.from_numpy(np.ascontiguousarray(
                model.arg_params.get(name, model.aux_params.get(name))))
            if name in model.aux_params:
                root.register_buffer(attr, value.clone())
            else:
                root.register_parameter(attr, torch.nn.Parameter(value.clone()))
            attrs.add(attr)
        values[(var, 0)] = Proxy(graph.get_attr(attr), tracer)
    ctx = _Lowering(model, graph, tracer)
    walk(model, TABLE, ctx, values, "torch")
    outs = [v.node for v in output_values(model, values, "torch")]
    graph.output(outs[0] if len(outs) == 1 else tuple(outs))
    gm = fx.GraphModule(root, graph, class_name="MXNetModel")
    gm.eval()
    return gm
