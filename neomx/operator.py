"""``mx.operator``: operators written in Python, as in MXNet 1.9.1.

Subclass :class:`CustomOpProp` (what the operator looks like: its inputs, outputs, auxiliary
states, shapes and types) and :class:`CustomOp` (what it computes), register the Prop under a
name, and call it as ``mx.nd.Custom(*inputs, op_type=name, **kwargs)`` or
``mx.sym.Custom(...)``: it then runs wherever a built-in operator does (executors, Modules,
autograd, hybridized Gluon) on every context. The extra keywords reach the Prop's constructor
as strings, as in MXNet.

Examples
--------
>>> import neomx as mx
>>> class Twice(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * 2)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * 2)
>>> @mx.operator.register("twice_doc")
... class TwiceProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Twice()
>>> mx.nd.Custom(mx.nd.ones((2,)), op_type="twice_doc").asnumpy()
array([2., 2.], dtype=float32)

The operator instance made by ``create_operator`` for one forward is the one whose
``backward`` computes that forward's gradients (state kept on ``self`` carries over). neomx
creates it for every forward call (MXNet does so imperatively; its executors make one per bind).
"""
from __future__ import annotations

import collections

from .base import MXNetError
from .ndarray import tape as _tape
from .ndarray.ndarray import from_torch as _from_torch
from .ops import custom as _custom
from .ops import registry as _reg

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments"]


class CustomOp:
    """Base class of operators implemented in Python: override ``forward`` and ``backward``."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data`` (lists of NDArrays); ``req[i]`` ('null',
        'write', 'inplace' or 'add') says how to store output ``i`` (see :meth:`assign`);
        ``aux`` are the auxiliary states, which forward may update in place."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` (one per argument) from the gradients of the outputs
        ``out_grad`` and the forward's ``in_data``/``out_data``; ``req`` as in forward."""

    def assign(self, dst, req, src):
        """Store ``src`` into ``dst`` as ``req`` says: nothing ('null'), overwrite ('write',
        'inplace') or accumulate ('add')."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src


class CustomOpProp:
    """Base class of a custom operator's properties.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward needs the gradients of the outputs (False for loss layers, which then
        need no head gradient in ``Executor.backward``).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def need_top_grad(self):
        """Whether backward reads the gradients of the outputs."""
        return self.need_top_grad_

    def infer_shape(self, in_shape):
        """``(in_shapes, out_shapes[, aux_shapes])`` from the argument shapes (lists, in the
        order of :meth:`list_arguments`; ``[]`` for an unknown one). Default: every output has
        the first argument's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """``(in_types, out_types[, aux_types])`` (numpy types; None when unknown). Default: all
        of the first argument's type."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types: neomx has dense ('default') storage only."""
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise MXNetError(f"Default infer_storage_type implementation doesnt allow non "
                                 f"default stypes: found non default stype '{stype}' for "
                                 f"in_stype[{i}].")
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        """Storage types of the backward pass: all 'default'."""
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        return tuple(["default"] * len(x) for x in lists)

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Names of the arguments (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward reads: the output gradients (when ``need_top_grad``),
        the inputs and the outputs. neomx hands every one to backward whatever this says."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The :class:`CustomOp` computing this operator on ``ctx`` for these argument shapes
        (lists of ints) and dtypes (MXNet's integer type codes)."""
        return CustomOp()


def register(reg_name):
    """Register a :class:`CustomOpProp` subclass as custom operator ``reg_name`` (a decorator)."""
    def do_register(prop_cls):
        _custom.register_prop(reg_name, prop_cls)
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)
_custom.install_host(_from_torch, _tape.set_recording)


def get_all_registered_operators():
    """The names of every registered operator (built-in ones, not custom ones)."""
    return sorted(_reg.all_ops())


OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])


def get_operator_arguments(op_name):
    """``OperatorArguments(narg, names, types)``: the parameters of operator ``op_name``."""
    op = _reg.get(op_name)
    types = []
    for prm in op.params:
        line = prm.doc_line().split("\n")[0]
        types.append(line.split(" : ", 1)[1])
    return OperatorArguments(len(op.params), [prm.name for prm in op.params], types)
