"""``mx.autograd``: imperative differentiation (MXNet 1.x's API).

>>> import neomx as mx
>>> x = mx.nd.array([1., 2., 3.])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = x * x
>>> y.backward()
>>> x.grad.asnumpy()
array([2., 4., 6.], dtype=float32)

The tape and the backward pass live in ``neomx.ndarray.tape``; this module adds the scopes,
``Function`` and ``get_symbol``.
"""
from __future__ import annotations

from .ndarray.tape import (FLAGS as _FLAGS, backward, grad, is_recording, is_training,
                           mark_variables, set_recording, set_training)

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "get_symbol",
           "Function"]


class _RecordingStateScope:
    """Sets this thread's recording and training flags on entry and restores them on exit
    (``None`` leaves a flag alone)."""

    def __init__(self, is_record, train_mode):
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = None
        self._prev_train_mode = None

    def __enter__(self):
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)

    def __exit__(self, ptype, value, trace):
        if self._enter_is_record is not None and self._prev_is_record != self._enter_is_record:
            set_recording(self._prev_is_record)
        if self._enter_train_mode is not None and self._prev_train_mode != self._enter_train_mode:
            set_training(self._prev_train_mode)


def record(train_mode=True):  # noqa: F811  (MXNet's parameter name)
    """Scope in which operations are recorded for ``backward`` (training mode by default).

    Example::

        with autograd.record():
            y = model(x)
        y.backward()
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):  # noqa: F811
    """Scope in which nothing is recorded (prediction mode by default)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope with training-mode behaviour (Dropout, BatchNorm), recording unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope with prediction-mode behaviour, recording unchanged."""
    return _RecordingStateScope(None, False)


def get_symbol(x):
    """The recorded computation of ``x`` as a Symbol: marked variables and constant inputs
    become variables ``var0, var1, ...`` (in order of first use), operators ``node_0, ...``.

    Raises MXNetError when ``x`` is not in a recorded graph (or its graph was freed by
    ``backward``)."""
    try:  # the graph IR package; neomx.symbol.node before it existed
        from .ir import Node
    except ImportError:  # pragma: no cover
        from .symbol.node import Node
    from .base import MXNetError
    from .ndarray.tape import Leaf
    from .ops.registry import _mx_str
    from .symbol import Symbol

    e = x._ag
    if e is None or e[0].freed:
        raise MXNetError("NDArray is not part of a computation graph. Did you forget to turn on "
                         "recording?")
    built: dict = {}  # id(tape node or leaf) -> ir Node
    counters = {"var": 0, "node": 0}

    def variable(key):
        n = built.get(key) if key is not None else None
        if n is None:
            n = Node(None, f"var{counters['var']}")
            counters["var"] += 1
            if key is not None:
                built[key] = n
        return n

    def given(op, p):
        out = {}
        for prm in op.params:
            v = p.get(prm.name, prm.default)
            if prm.required or v != prm.default:
                out[prm.name] = _mx_str(v)
        return out

    stack = [(e[0], False)]
    while stack:
        node, done = stack.pop()
        if id(node) in built:
            continue
        if node.__class__ is Leaf:
            variable(id(node))
            continue
        if node.freed:
            raise MXNetError("NDArray is not part of a computation graph. Did you forget to turn "
                             "on recording?")
        pending = [s for s in node.in_entries if s is not None and id(s[0]) not in built]
        if not done and pending:
            stack.append((node, True))
            stack.extend((s[0], False) for s in reversed(pending))
            continue
        inputs = tuple((variable(None), 0) if s is None else (built[id(s[0])], s[1])
                       for s in node.in_entries)
        built[id(node)] = Node(node.op, f"node_{counters['node']}", node.p,
                               given(node.op, node.p), {}, inputs)
        counters["node"] += 1
    return Symbol([(built[id(e[0])], e[1])])


class Function:
    """A differentiable operation with a user-written gradient (MXNet's
    ``autograd.Function``): subclass it, define ``forward(*inputs)`` and
    ``backward(*output_grads)`` on NDArrays, and call an instance once.

    Example::

        class sigmoid(mx.autograd.Function):
            def forward(self, x):
                y = 1 / (1 + mx.nd.exp(-x))
                self.save_for_backward(y)
                return y

            def backward(self, dy):
                y, = self.saved_tensors
                return dy * y * (1 - y)
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        from .base import MXNetError
        from .ndarray import NDArray
        from .ndarray.tape import record_op
        if self._used:  # an assertion in MXNet too
            raise AssertionError("Each Function instance can only be called once. Please create "
                                 "another instance.")
        self._used = True
        prev = set_recording(False)
        try:
            outputs = self.forward(*inputs)
        finally:
            set_recording(prev)
        if not prev:
            return outputs
        outs = [outputs] if isinstance(outputs, NDArray) else list(outputs)
        for i, a in enumerate(inputs):
            if not isinstance(a, NDArray):
                raise MXNetError(f"Function: input {i} must be an NDArray, got {type(a).__name__}")
        op = _function_op(self, len(inputs), len(outs))
        record_op(op, _EMPTY_PARAMS, list(inputs), [o._data for o in outs], outs, outs[0]._ctx,
                  _FLAGS.training)
        return outputs


def _function_op(func, nin, nout):
    """A one-off operator whose gradient rule calls ``func.backward`` (under ``pause``)."""
    from .base import MXNetError
    from .ndarray import NDArray
    from .ops.registry import OpDef

    def gradient(F, p, ins, outs, ograds):
        with pause():
            grads = func.backward(*ograds)
        grads = [grads] if isinstance(grads, NDArray) else list(grads)
        if len(grads) != nin:
            raise MXNetError(f"{type(func).__name__}.backward must return {nin} gradient(s), "
                             f"one per input of forward, got {len(grads)}")
        return grads

    def no_forward(p, ins, oc):
        raise MXNetError("autograd.Function nodes cannot be re-run")

    return OpDef("_CustomFunction", no_forward,
                 lambda p, ins, outs: (ins, outs),
                 inputs=tuple(f"data{i}" for i in range(nin)),
                 outputs=tuple(f"output{i}" for i in range(nout)), gradient=gradient)


from .ops.registry import Params as _Params  # noqa: E402

_EMPTY_PARAMS = _Params()
