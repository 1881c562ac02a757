"""The autograd tape: per-thread recording/training flags, recorded nodes, and backward.

Recording (``with autograd.record():``) makes every imperative operator leave an ``OpNode``
behind: the OpDef, its parsed Params, the input tensors with the autograd entries they had, and
the output tensors (hidden ones included). Each output array points at its node through its
``_ag`` entry ``(node, index)``; a marked variable's entry is ``(Leaf, 0)``, where the ``Leaf``
holds its gradient buffer and ``grad_req``. The graph lives as long as the arrays that reach it
(no global tape), as in MXNet.

Backward walks the nodes reachable from the heads in reverse topological order, sums the
gradients reaching every output (``add_n``), and runs each operator's gradient rule
``op.gradient(F, p, ins, outs, ograds)`` with the *eager* namespace ``F``: ``F.<op>(*arrays,
**params)`` is the imperative ``mx.nd`` function of that op. The executor runs the very same
rules with a graph-building ``F``; no derivative is written twice. With ``create_graph=True``
backward itself is recorded (the rule's inputs carry their forward entries), so its results can
be differentiated again.
"""
from __future__ import annotations

import threading

import torch

from ..base import MXNetError
from ..ops import registry as _reg
from . import ndarray as _nd  # (a cycle: ndarray imports this module; used at call time only)

__all__ = ["is_recording", "is_training", "set_recording", "set_training", "mark_variables",
           "backward", "grad", "record_op", "check_write", "store_dense_grad", "Leaf", "OpNode",
           "FLAGS"]


class _Flags(threading.local):
    """Per-thread autograd flags (MXNet keeps them thread-local too); new threads start off."""

    recording = False
    training = False


FLAGS = _Flags()


class _Count:
    """How many threads record now: the imperative dispatch's one cheap test (a plain attribute;
    only when it is non-zero does it read this thread's flag)."""

    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


RECORDING = _Count()
_COUNT_LOCK = threading.Lock()


def _set_recording(on: bool) -> bool:
    prev = FLAGS.recording
    if on != prev:
        with _COUNT_LOCK:
            RECORDING.n += 1 if on else -1
        FLAGS.recording = on
    return prev


def recording() -> bool:
    """This thread records (``RECORDING.n`` first: zero means no thread does)."""
    return RECORDING.n != 0 and FLAGS.recording


def is_recording() -> bool:
    return FLAGS.recording


def is_training() -> bool:
    return FLAGS.training


def set_recording(is_recording: bool) -> bool:  # noqa: A002  (MXNet's parameter name)
    """Set the recording flag of this thread; returns the previous value."""
    return _set_recording(bool(is_recording))


def set_training(train_mode: bool) -> bool:
    """Set the training flag of this thread; returns the previous value."""
    prev = FLAGS.training
    FLAGS.training = bool(train_mode)
    return prev


# --- graph ---------------------------------------------------------------------------------------
NOT_IN_GRAPH = ("Cannot differentiate node because it is not in a computational graph. You need "
                "to set is_recording to true or use autograd.record() to save computational graphs "
                "for backward. If you want to differentiate the same graph twice, you need to pass "
                "retain_graph=True to backward.")
ASSIGN_IN_GRAPH = ("Assigning to NDArrays that are already in a computational graph will cause "
                   "undefined behavior when evaluating gradients. Please call backward first to "
                   "clear the graph or do this out side of a record section. Also note that you "
                   "cannot use inplace operations like +=, *=, relu(x, out=x), y[idx]=x, etc "
                   "inside a record section.")
_REQS = ("null", "write", "add")


class Leaf:
    """A marked variable: its gradient buffer (an NDArray) and how gradients land there."""

    __slots__ = ("grad", "grad_req", "fresh", "__weakref__")
    freed = False

    def __init__(self, grad, grad_req):
        self.grad, self.grad_req = grad, grad_req
        self.fresh = False  # a backward wrote the gradient since gluon's Trainer last used it


class OpNode:
    """One recorded operator call. ``ins``/``outs`` are tensors (outputs hidden ones included);
    ``in_entries`` the autograd entries the inputs had (None: a constant)."""

    __slots__ = ("op", "p", "ins", "in_entries", "outs", "nvis", "ctx", "is_train", "freed",
                 "__weakref__")

    def __init__(self, op, p, ins, in_entries, outs, nvis, ctx, is_train):
        self.op, self.p, self.ins, self.in_entries = op, p, ins, in_entries
        self.outs, self.nvis, self.ctx, self.is_train = outs, nvis, ctx, is_train
        self.freed = False


def record_op(op, p, inputs, out_tensors, outputs, ctx, is_train):
    """Record one call of ``op`` whose visible outputs are the NDArrays ``outputs``."""
    node = OpNode(op, p, [a._data for a in inputs], [a._ag for a in inputs], out_tensors,
                  len(outputs), ctx, is_train)
    for i, o in enumerate(outputs):
        o._ag = (node, i)
    return node


def check_write(target):
    """While recording, an array that is already in a graph must not be overwritten."""
    if target._ag is not None:
        raise MXNetError(ASSIGN_IN_GRAPH)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables whose gradients land in ``gradients`` (MXNet's API)."""
    if isinstance(variables, _nd.NDArray):
        variables, gradients = [variables], [gradients]
    variables, gradients = list(variables), list(gradients)
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    grad_reqs = list(grad_reqs)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError("mark_variables: variables, gradients and grad_reqs must have the same "
                         f"length, got {len(variables)}, {len(gradients)}, {len(grad_reqs)}")
    for v, g, req in zip(variables, gradients, grad_reqs):
        if req not in _REQS:
            raise MXNetError(f"Invalid grad_req '{req}', expected one of {list(_REQS)}")
        v._ag = (Leaf(g, req), 0)


# --- backward ------------------------------------------------------------------------------------
class EagerF:
    """The eager namespace of gradient rules: ``F.<op>`` is the ``mx.nd`` function of that op.
    ``F.wanted`` (per thread) says which of the rule's inputs need a gradient."""

    _local = threading.local()

    @property
    def wanted(self):
        return getattr(self._local, "wanted", None)

    @wanted.setter
    def wanted(self, value):
        self._local.wanted = value

    def __getattr__(self, name):
        from .register import function_for
        op = _reg.find(name)
        if op is None:  # (an AttributeError: introspection such as hasattr must keep working)
            raise AttributeError(f"gradient rules: no operator {name!r}")
        f = function_for(op)
        setattr(self, name, f)
        return f


F_EAGER = EagerF()


def _topo(heads):
    """Op nodes reachable from ``heads`` (nodes), inputs first; the leaves met on the way.
    Nodes are keys themselves (they hash by identity); so are entries ``(node, index)``."""
    order, leaves, seen = [], [], set()
    stack = [(n, False) for n in heads]
    pop, push = stack.pop, stack.append
    while stack:
        node, done = pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        if node.__class__ is Leaf:
            leaves.append(node)
            continue
        if node.freed:
            raise MXNetError(NOT_IN_GRAPH)
        push((node, True))
        for e in node.in_entries:
            if e is not None and e[0] not in seen:
                push((e[0], False))
    return order, leaves


def _wrap(t, ctx, entry):
    a = _new(_nd.NDArray)
    a._data, a._ctx, a._ag = t, ctx, entry
    return a


_new = object.__new__


def _head_entries(heads):
    entries = []
    for h in heads:
        e = h._ag
        if e is None or e[0].freed:
            raise MXNetError(NOT_IN_GRAPH)
        entries.append(e)
    return entries


def _head_grads(heads, head_grads):
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, _nd.NDArray):
        head_grads = [head_grads]
    head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError(f"heads and head_grads must have the same length: {len(heads)} vs "
                         f"{len(head_grads)}")
    out = []
    for h, g in zip(heads, head_grads):
        if g is None:
            node = h._ag[0]
            if node.__class__ is OpNode and node.op.is_loss:
                out.append(None)  # (a loss operator's rule ignores its output gradient)
                continue
            g = _nd.from_torch(torch.ones_like(h._data), h._ctx)
        out.append(g)
    return out


# The compiled backward of recorded tapes (neomx/executor/tape_plan.py sets it when loaded):
# ``fn(order, leaves, entries, head grads, train_mode)`` -> {(leaf, 0): gradient tensor}, or
# None where the eager rules below must run.
COMPILED_BACKWARD = None


def run_backward(heads, head_grads=None, variables=None, retain_graph=False, create_graph=False,
                 train_mode=True):
    """Back-propagate from ``heads``. Without ``variables`` gradients land in the marked
    variables' buffers (per grad_req); with them, their gradients are returned."""
    entries = _head_entries(heads)
    grads_in = _head_grads(heads, head_grads)
    order, leaves = _topo([e[0] for e in entries])

    targets: set = set()  # entries (node, index) whose gradient is wanted
    var_keys = None
    if variables is None:
        for leaf in leaves:
            if leaf.grad_req != "null":
                targets.add((leaf, 0))
        if not targets:
            raise MXNetError("There are no inputs in computation graph that require gradients.")
    else:
        var_keys = []
        for v in variables:
            e = v._ag
            if e is None or e[0].freed:
                raise MXNetError(NOT_IN_GRAPH)
            var_keys.append(e)
        targets.update(var_keys)

    if var_keys is None and not create_graph and COMPILED_BACKWARD is not None:
        done = COMPILED_BACKWARD(order, leaves, entries, grads_in, train_mode)
        if done is not None:
            _free(order, retain_graph)
            _store_tensors(leaves, done)
            return None

    needs = {k[0] for k in targets}  # nodes and leaves whose outputs lead to a target
    for node in order:
        for e in node.in_entries:
            if e is not None and e[0] in needs:
                needs.add(node)
                break

    prev_rec = _set_recording(bool(create_graph))
    prev_train = set_training(train_mode)
    try:
        results = _propagate(order, entries, grads_in, targets, needs, variables is not None)
    finally:
        _set_recording(prev_rec)
        FLAGS.training = prev_train

    _free(order, retain_graph)
    if var_keys is not None:
        return [results.get(k) for k in var_keys], var_keys
    _store(leaves, results)
    return None


def _free(order, retain_graph):
    """Without ``retain_graph`` the nodes let their values go (a second backward raises)."""
    if not retain_graph:
        for node in order:
            node.freed = True
            node.ins = node.outs = None
            node.p = None  # (a cached graph's call keeps its forward values there)


# {operator name: rule(node, ins, outs, ograds) -> input gradients, or None for the op's own
# gradient rule}: the operators whose gradients can come out row_sparse (Embedding with
# sparse_grad, dot of a csr input), filled by neomx/ndarray/sparse.py.
SPARSE_GRAD: dict = {}


def _propagate(order, entries, grads_in, targets, needs, targets_here):
    """Run the gradient rules; returns {target entry: summed gradient NDArray}.
    ``targets_here``: some targets may be operator outputs (not leaves). A head gradient may be
    None for a loss operator's output (loss rules ignore their output gradients)."""
    F = F_EAGER
    local = EagerF._local
    pending: dict = {}  # entry -> gradients reaching it
    for e, g in zip(entries, grads_in):
        if g is not None and e[0] in needs:
            lst = pending.get(e)
            if lst is None:
                pending[e] = [g]
            else:
                lst.append(g)
    pop = pending.pop

    results = {}
    prev_wanted = getattr(local, "wanted", None)
    try:
        for node in reversed(order):
            if node not in needs:
                continue
            op = node.op
            ograds = []
            flowing = False
            for i in range(node.nvis):
                gs = pop((node, i), None)
                if gs is None:
                    ograds.append(None)
                else:
                    flowing = True
                    ograds.append(gs[0] if len(gs) == 1 else F.add_n(*gs))
            if targets_here:
                for i, g in enumerate(ograds):
                    if (node, i) in targets:
                        results[(node, i)] = g
            is_loss = op.is_loss
            if not (flowing or is_loss):
                continue
            in_entries = node.in_entries
            wanted = tuple([e is not None and e[0] in needs for e in in_entries])
            if True not in wanted:
                continue  # only wanted as a target itself
            if op.gradient is None:
                raise MXNetError(f"Operator {op.name} is non-differentiable because it didn't "
                                 "register FGradient attribute.")
            ctx = node.ctx
            outs = [_wrap(t, ctx, (node, i)) for i, t in enumerate(node.outs)]
            if not is_loss:  # (loss rules ignore their output gradients)
                for i, g in enumerate(ograds):
                    if g is None:
                        ograds[i] = F.zeros_like(outs[i])
            ins = [_wrap(t, ctx, e) for t, e in zip(node.ins, in_entries)]
            local.wanted = wanted
            rule = SPARSE_GRAD.get(op.name) if SPARSE_GRAD else None
            in_grads = rule(node, ins, outs, ograds) if rule is not None else None
            if in_grads is None:
                in_grads = op.gradient(F, node.p, ins, outs, ograds)
            for e, g, w in zip(in_entries, in_grads, wanted):
                if w and g is not None:
                    lst = pending.get(e)
                    if lst is None:
                        pending[e] = [g]
                    else:
                        lst.append(g)
    finally:
        local.wanted = prev_wanted
    for e, gs in pending.items():  # leaves (and targets no rule consumed)
        if e in targets and gs:
            results[e] = gs[0] if len(gs) == 1 else F.add_n(*gs)
    return results


def _store(leaves, results):
    """Write or add each leaf's gradient into its buffer (zeros for 'write' when none came)."""
    for leaf in leaves:
        req = leaf.grad_req
        buf = leaf.grad
        if req == "null" or buf is None:
            continue
        leaf.fresh = True
        g = results.get((leaf, 0))
        if buf.__class__ is not _nd.NDArray or (g is not None and g.__class__ is not _nd.NDArray):
            from .sparse_grad import store_grad  # (a sparse buffer or gradient)
            store_grad(buf, g, req)
            continue
        store_dense_grad(buf._data, None if g is None else g._data, req)


def store_dense_grad(dst, src, req):
    """Write (``req='write'``) or add (``'add'``) the gradient tensor ``src`` into the dense
    buffer tensor ``dst`` (moved to its device, reshaped to it); None: zeros for 'write'. The
    tape's and the executor's gradient stores both end here."""
    if src is None:
        if req == "write":
            dst.zero_()
        return
    if src.device != dst.device:
        src = src.to(dst.device)
    if src.shape != dst.shape:
        src = src.reshape(dst.shape)
    if req == "write":
        dst.copy_(src)
    else:
        dst.add_(src)


def _store_tensors(leaves, results):
    """_store for the compiled path's gradients: tensors, into dense buffers."""
    for leaf in leaves:
        req = leaf.grad_req
        if req != "null":
            leaf.fresh = True
            store_dense_grad(leaf.grad._data, results.get((leaf, 0)), req)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` into the marked variables' ``.grad`` buffers."""
    if isinstance(heads, _nd.NDArray):
        heads = [heads]
        if head_grads is not None and isinstance(head_grads, _nd.NDArray):
            head_grads = [head_grads]
    run_backward(list(heads), head_grads, None, retain_graph, False, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of ``heads`` with respect to ``variables`` (returned; ``.grad`` buffers are
    left alone). With ``create_graph`` the computation is recorded (higher order)."""
    if isinstance(heads, _nd.NDArray):
        heads = [heads]
        if head_grads is not None and isinstance(head_grads, _nd.NDArray):
            head_grads = [head_grads]
    if isinstance(variables, _nd.NDArray):
        variables = [variables]
    variables = list(variables)
    for i, v in enumerate(variables):
        e = v._ag
        if e is None or e[0].__class__ is not Leaf:
            raise MXNetError(f"Cannot differentiate with respect to the {i + 1}-th variable "
                             "because it does not require gradient.")
    if retain_graph is None:
        retain_graph = create_graph
    grads, _ = run_backward(list(heads), head_grads, variables, retain_graph, create_graph,
                            train_mode)
    for i, g in enumerate(grads):
        if g is None:
            raise MXNetError(f"Cannot differentiate with respect to the {i + 1}-th variable "
                             "because it is unreachable from the outputs.")
    if not create_graph:
        for g in grads:
            g._ag = None
    return grads
