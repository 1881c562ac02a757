"""Builds ``mx.sym.<Op>`` functions from the operator table."""
from __future__ import annotations

from ..base import MXNetError
from ..ops import registry as _reg
from ..ir import Node
from .scope import HIDDEN_KEYS, AttrScope, NameManager
from .symbol import Symbol, Variable

# Implicit inputs that MXNet initialises specially (BatchNorm's aux states).
_AUX_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]',
             "running_mean": '["zero", {}]', "running_var": '["one", {}]'}


def invoke_sym(op, inputs, params, name=None, attr=None):
    """Create an op node on ``inputs`` (Symbols, positional) and return its Symbol.

    ``op`` is a registered name (its lowercase is the auto-name hint, as for the generated
    ``mx.sym`` function of that name) or an OpDef.
    """
    if isinstance(op, str):
        return make_function(_reg.get(op), op)(*inputs, name=name, attr=attr, **params)
    return make_function(op)(*inputs, name=name, attr=attr, **params)


def _entry(sym, op, argname):
    if not isinstance(sym, Symbol):
        raise TypeError(f"{op.name}: argument '{argname}' must be a Symbol, got {type(sym).__name__}")
    if len(sym._outputs) != 1:
        raise MXNetError(f"{op.name}: argument '{argname}' must have one output, "
                         f"got a group of {len(sym._outputs)}")
    return sym._outputs[0]


def create_node(op, args, kwargs, name=None, attr=None, hint=None) -> Node:
    """Bind the call's inputs and parameters, name the node, and make variables for the inputs
    not given (``{name}_{input}``, carrying the op's attributes as MXNet's do)."""
    attrs = AttrScope.current().get(attr)
    # MXNet parses plain (non-``__x__``) attribute keys as op parameters, except for ops without
    # parameters, which keep them as attributes
    extra = {k: attrs.pop(k) for k in [k for k in attrs if not _is_dunder(k)]}
    if not op.params:
        attrs.update(extra)
        extra = {}
    kwargs = _attribute_keywords(op, kwargs, attrs)
    name = NameManager.current().get(name, hint or op.hint)
    p, given, slots, names = op.bind_call(args, kwargs, _is_symbol, extra)
    n_args = len(op.list_inputs(p))
    inits = op.input_init(p) if op.input_init is not None else {}
    entries = []
    for i, (argname, s) in enumerate(zip(names, slots)):
        if s is not None:
            entries.append(_entry(s, op, argname))
            continue
        var_attr = dict(given)  # MXNet copies the op's attrs onto the variables it makes
        var_attr.update(attrs)
        if argname in inits:
            var_attr["__init__"] = inits[argname]
        elif argname in _AUX_INIT and i >= n_args:
            var_attr["__init__"] = _AUX_INIT[argname]
        entries.append(Variable(f"{name}_{argname}", attr=var_attr)._outputs[0])
    return Node(op, name, p, given, attrs, tuple(entries))


def _is_dunder(k):
    return k.startswith("__") and k.endswith("__")


def _attribute_keywords(op, kwargs, attrs):
    """Keyword arguments that are attributes, not parameters, move into ``attrs`` as MXNet's
    symbol functions do: ``__key__`` keys as they are, hidden keys (``lr_mult``, ``wd_mult``,
    ``ctx_group``...) as ``__key__``, and any key of an op without parameters."""
    if not kwargs:
        return kwargs
    fixed = () if callable(op.inputs) else tuple(op.inputs) + (() if callable(op.aux) else tuple(op.aux))
    rest = {}
    for k, v in kwargs.items():
        if k not in op.param_map and k not in fixed and not isinstance(v, Symbol):
            if _is_dunder(k):
                attrs[k] = str(v)
                continue
            if k in HIDDEN_KEYS:
                attrs[f"__{k}__"] = str(v)
                continue
            if not op.params:
                attrs[k] = str(v)
                continue
        rest[k] = v
    return rest


def _is_symbol(v):
    return isinstance(v, Symbol)


# Automatic mixed precision: None, or (set by ``mx.contrib.amp.init``) a function
# ``(op, build, args, kwargs, name, attr) -> Symbol`` that makes the node with ``build`` and
# inserts AMP's casts around it. Every symbolic call of an operator (``mx.sym`` functions, fluent
# methods, Symbol's arithmetic operators) passes through it here, once.
_AMP_HOOK = None


def set_amp_hook(hook):
    """Install (or, with None, remove) the AMP cast hook of symbol creation."""
    global _AMP_HOOK
    _AMP_HOOK = hook


def make_function(op, fname=None):
    """The ``mx.sym.<fname>`` function for ``op`` with a real signature and docstring.

    As in MXNet, unnamed nodes are named after the function called: ``mx.sym.split`` gives
    ``split0`` and ``mx.sym.SliceChannel`` gives ``slicechannel0``.
    """
    hint = fname.lower() if fname else op.hint
    fname = fname or op.name

    def build(args, kwargs, name, attr):
        node = create_node(op, args, kwargs, name=name, attr=attr, hint=hint)
        return Symbol([(node, i) for i in range(node.num_visible_outputs)])

    def fn(*args, name=None, attr=None, **kwargs):
        if _AMP_HOOK is not None:
            return _AMP_HOOK(op, build, args, kwargs, name, attr)
        return build(args, kwargs, name, attr)

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = op.signature_doc() + "\n\nReturns\n-------\nSymbol\n    The result symbol."
    fn.__signature__ = op.signature(symbolic=True)
    return fn


def populate(namespace: dict, internal: dict):
    """Put every public op into ``namespace`` and every op into ``internal``."""
    for name, op in _reg.all_ops().items():
        f = make_function(op, name)
        internal[name] = f
        if op.public and not name.startswith("_"):
            namespace.setdefault(name, f)
