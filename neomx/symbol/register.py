"""Builds ``mx.sym.<Op>`` functions from the operator table."""
from __future__ import annotations

import inspect

from ..base import MXNetError
from ..ops import registry as _reg
from .node import Node
from .scope import AttrScope, NameManager
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
    """Split inputs from params, parse params, name the node, and fill missing inputs."""
    sym_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    input_names = set(op.list_inputs(_reg.Params()) if not callable(op.inputs) else ())
    # An input passed as None counts as missing; an explicit None parameter is kept (MXNet
    # stores it as "None").
    params = {k: v for k, v in kwargs.items()
              if not isinstance(v, Symbol) and not (v is None and k in input_names)}
    if op.key_var_num_args and op.key_var_num_args not in params:
        params[op.key_var_num_args] = len(args) + len(sym_kwargs)
    raw_name = name
    attrs = AttrScope.current().get(attr)
    for k in [k for k in attrs if not (k.startswith("__") and k.endswith("__"))]:
        params.setdefault(k, attrs.pop(k))  # MXNet parses plain attr keys as op parameters
    name = NameManager.current().get(name, hint or op.hint)
    p, given = op.parse_params(params, raw_name or "")
    in_names = op.list_inputs(p)
    aux_names = op.list_aux(p)
    all_names = in_names + aux_names
    if len(args) > len(all_names):
        raise MXNetError(f"{op.name}: too many positional inputs ({len(args)}), expected at most "
                         f"{len(all_names)}: {all_names}")
    entries = [None] * len(all_names)
    for i, a in enumerate(args):
        entries[i] = _entry(a, op, all_names[i])
    for k, v in sym_kwargs.items():
        if k not in all_names:
            raise MXNetError(f"{op.name}: unknown input '{k}', inputs are {all_names}")
        i = all_names.index(k)
        if entries[i] is not None:
            raise MXNetError(f"{op.name}: input '{k}' given twice")
        entries[i] = _entry(v, op, k)
    for i, e in enumerate(entries):
        if e is None:
            argname = all_names[i]
            var_attr = {k: v for k, v in given.items()}  # MXNet copies the op's attrs
            var_attr.update(attrs)
            if argname in _AUX_INIT and i >= len(in_names):
                var_attr["__init__"] = _AUX_INIT[argname]
            entries[i] = Variable(f"{name}_{argname}", attr=var_attr)._outputs[0]
    return Node(op, name, p, given, attrs, tuple(entries))


def make_function(op, fname=None):
    """The ``mx.sym.<fname>`` function for ``op`` with a real signature and docstring.

    As in MXNet, unnamed nodes are named after the function called: ``mx.sym.split`` gives
    ``split0`` and ``mx.sym.SliceChannel`` gives ``slicechannel0``.
    """
    hint = fname.lower() if fname else op.hint
    fname = fname or op.name

    def fn(*args, name=None, attr=None, **kwargs):
        node = create_node(op, args, kwargs, name=name, attr=attr, hint=hint)
        return Symbol([(node, i) for i in range(node.num_visible_outputs)])

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = op.signature_doc() + "\n\nReturns\n-------\nSymbol\n    The result symbol."
    fn.__signature__ = _signature(op, symbolic=True)
    return fn


def _signature(op, symbolic):
    P = inspect.Parameter
    params = []
    if callable(op.inputs):
        params.append(P("args", P.VAR_POSITIONAL))
    else:
        params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in op.inputs]
    kind = P.KEYWORD_ONLY
    for prm in op.params:
        dflt = P.empty if prm.required else prm.default
        params.append(P(prm.name, kind, default=dflt))
    params.append(P("name", kind, default=None))
    if symbolic:
        params.append(P("attr", kind, default=None))
    else:
        params.append(P("out", kind, default=None))
    params.append(P("kwargs", P.VAR_KEYWORD))
    return inspect.Signature(params)


def populate(namespace: dict, internal: dict):
    """Put every public op into ``namespace`` and every op into ``internal``."""
    for name, op in _reg.all_ops().items():
        f = make_function(op, name)
        internal[name] = f
        if op.public and not name.startswith("_"):
            namespace.setdefault(name, f)
