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
import itertools
import warnings

from .base import MXNetError
from .ndarray import tape as _tape
from .ndarray.ndarray import from_torch as _from_torch
from .ops import custom as _custom
from .ops import registry as _reg

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments", "PythonOp", "NumpyOp", "NDArrayOp"]


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


# ----------------------------------------------------------------------------- legacy ops
# MXNet 1.9.1 still ships the pre-CustomOp Python operators (deprecated since MXNet 0.9). It
# runs them through the C operators ``_Native`` (NumpyOp) and ``_NDArray`` (NDArrayOp), whose
# ``info`` attribute is the address of a ctypes struct of callbacks (and in the MXNet 1.9.1
# wheels both crash in shape inference). neomx runs them as custom operators: ``get_symbol``
# registers a hidden CustomOpProp under a name of its own that calls the legacy object's
# methods, and returns ``mx.sym.Custom(..., op_type=that name)``. The graph's node is then a
# ``Custom`` one, not ``_Native``/``_NDArray``; as in MXNet, it only means something in the
# process that created the operator object.

_LEGACY_IDS = itertools.count()


class PythonOp:
    """Base class for operators implemented in Python (deprecated: use :class:`CustomOp`).

    Parameters
    ----------
    need_top_grad : bool
        the default need_top_grad() function returns this value.
    """
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn('PythonOp has been deprecated. Please use CustomOp')

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """Create a symbol from this operator (inputs as positional or keyword symbols, plus
        ``name=``/``attr=``). Call it once per instance if the operator keeps state."""
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        """Compute ``out_data`` (list) from ``in_data`` (list), in place. Default: identity."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Compute ``in_grad`` in place. Default: ones."""
        # pylint: disable=W0613
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(in_shapes, out_shapes)`` from the argument shapes (in :meth:`list_arguments`
        order). Default: one output shaped like the first argument."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ['output']

    def list_arguments(self):
        """Names of the arguments (default ``['data']``)."""
        return ['data']

    def need_top_grad(self):
        """Whether backward needs the gradients of the outputs (False for loss layers)."""
        return self.need_top_grad_

    def _make_symbol(self, args, kwargs, kernel_cls):
        from . import symbol as _sym  # symbol imports this module's package
        legacy = self
        name = f"_legacy_{type(self).__name__}_{next(_LEGACY_IDS)}"

        class _LegacyProp(CustomOpProp):
            def __init__(self):
                super().__init__(need_top_grad=bool(legacy.need_top_grad()))

            def list_arguments(self):
                return legacy.list_arguments()

            def list_outputs(self):
                return legacy.list_outputs()

            def infer_shape(self, in_shape):
                in_shape, out_shape = legacy.infer_shape(in_shape)
                return list(in_shape), list(out_shape), []

            def declare_backward_dependency(self, out_grad, in_data, out_data):
                fn = getattr(legacy, "declare_backward_dependency", None)
                if fn is None:
                    return super().declare_backward_dependency(out_grad, in_data, out_data)
                return fn(out_grad, in_data, out_data)

            def create_operator(self, ctx, in_shapes, in_dtypes):
                return kernel_cls(legacy)

        register(name)(_LegacyProp)
        self.info_ = name
        sym = _sym.Custom(*args, op_type=name, **kwargs)
        # keep a reference of ourself, as MXNet does (the op outlives the caller's variable).
        PythonOp._ref_holder.append(self)
        return sym


class _NumpyKernel(CustomOp):
    """Runs a :class:`NumpyOp` on numpy copies of the arrays, then stores what it wrote."""

    def __init__(self, legacy):
        super().__init__()
        self.legacy = legacy

    @staticmethod
    def _np(arrays):
        return [a.asnumpy() for a in arrays]

    def _store(self, dst, req, src):
        if req == "add":
            src = dst.asnumpy() + src
            req = "write"
        self.assign(dst, req, src)

    def forward(self, is_train, req, in_data, out_data, aux):
        outs = self._np(out_data)
        self.legacy.forward(in_data=self._np(in_data), out_data=outs)
        for dst, r, src in zip(out_data, req, outs):
            self._store(dst, r, src)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        # MXNet's _Native hands the output gradients over only when need_top_grad.
        ograd = self._np(out_grad) if self.legacy.need_top_grad() else []
        grads = self._np(in_grad)
        self.legacy.backward(out_grad=ograd, in_data=self._np(in_data),
                             out_data=self._np(out_data), in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads):
            self._store(dst, r, src)


class _NDArrayKernel(CustomOp):
    """Runs an :class:`NDArrayOp` on the NDArrays themselves (its outputs and gradients are
    written in place; requests other than 'write' are handled on a scratch copy)."""

    def __init__(self, legacy):
        super().__init__()
        self.legacy = legacy

    def _run(self, fn, targets, req, **kwargs):
        scratch = [t if r in ("write", "inplace") else t.copy() for t, r in zip(targets, req)]
        fn(scratch, **kwargs)
        for dst, r, src in zip(targets, req, scratch):
            if src is not dst:
                self.assign(dst, r, src)

    def forward(self, is_train, req, in_data, out_data, aux):
        self._run(lambda outs: self.legacy.forward(in_data=list(in_data), out_data=outs),
                  out_data, req)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self._run(lambda grads: self.legacy.backward(
            out_grad=list(out_grad), in_data=list(in_data), out_data=list(out_data),
            in_grad=grads), in_grad, req)


class NumpyOp(PythonOp):
    """Base class for numpy operators (deprecated: use :class:`CustomOp`).

    Override ``forward(in_data, out_data)`` and ``backward(out_grad, in_data, out_data,
    in_grad)``, which receive lists of numpy arrays and write ``out_data`` / ``in_grad`` in
    place (``out_grad`` is empty unless ``need_top_grad``), plus ``list_arguments``,
    ``list_outputs`` and ``infer_shape`` as needed; ``op(data=x, name='n')`` (or
    :meth:`get_symbol`) makes the symbol. Operators with internal state cannot be shared
    between devices.
    """

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NumpyOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        """The symbol applying this operator to the input symbols ``args``/``kwargs``."""
        return self._make_symbol(args, kwargs, _NumpyKernel)


class NDArrayOp(PythonOp):
    """Base class for NDArray operators (deprecated: use :class:`CustomOp`): as
    :class:`NumpyOp`, on NDArrays, with :meth:`declare_backward_dependency`."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NDArrayOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        """The symbol applying this operator to the input symbols ``args``/``kwargs``."""
        return self._make_symbol(args, kwargs, _NDArrayKernel)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward reads: the output gradients (when ``need_top_grad``),
        the inputs and the outputs."""
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps
