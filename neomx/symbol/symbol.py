"""Symbol: a declarative graph handle (a tuple of output entries of :class:`Node`)."""
from __future__ import annotations

import warnings

import numpy as np

from ..base import MXNetError, NotImplementedForSymbol, dtype_code, dtype_np, string_types
from ..graph import infer as _infer
from ..ir import Graph, Node, topo_order
from ..ops import registry as _reg
from .scope import HIDDEN_KEYS, AttrScope

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json"]


class Symbol:
    """A symbolic graph: one or more outputs of operator nodes or variables.

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.sym.Variable('data')
    >>> net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    >>> net.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
    """

    __slots__ = ("_outputs", "__weakref__")
    __hash__ = object.__hash__

    def __init__(self, outputs):
        self._outputs = tuple(outputs)

    # --- structure ------------------------------------------------------------------------
    def _topo(self) -> list[Node]:
        return topo_order(self._outputs)

    def _graph(self) -> Graph:
        """The indexed graph below this symbol's outputs."""
        return Graph(self._outputs)

    @property
    def name(self):
        """The name of the node all outputs come from (one output, or every output of one
        multi-output node as ``split`` gives); None for a group of several nodes."""
        node = self._outputs[0][0]
        if any(n is not node for n, _ in self._outputs[1:]):
            return None
        return node.name

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([o]) for o in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, string_types):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError(f'Cannot find output that matches name "{index}"')
            if len(matches) > 1:
                raise ValueError(f'There are multiple outputs with name "{index}"')
            index = matches[0]
        if isinstance(index, slice):
            return Group([Symbol([o]) for o in self._outputs[index]])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError("Index out of range")
        return Symbol([self._outputs[index]])

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(n.name for n, _ in self._outputs) + "]>"

    def __copy__(self):
        return Symbol(self._outputs)

    def __deepcopy__(self, memo):
        return load_json(self.tojson())

    def __reduce__(self):
        return (load_json, (self.tojson(),))

    def list_arguments(self) -> list[str]:
        """Names of the argument variables in DFS order (auxiliary states excluded)."""
        return [n.name for n in self._graph().arg_nodes]

    def list_auxiliary_states(self) -> list[str]:
        return [n.name for n in self._graph().aux_nodes]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._topo() if n.op is None]

    def list_outputs(self) -> list[str]:
        return [n.output_name(i) for n, i in self._outputs]

    def get_internals(self) -> "Symbol":
        """A group of every node output in topological order, variables included."""
        outs = []
        for n in self._topo():
            outs.extend((n, i) for i in range(n.num_visible_outputs))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this symbol's head node(s), each node's once (None for a variable)."""
        heads = list(dict.fromkeys(node for node, _ in self._outputs))  # each node once
        entries = [e for node in heads for e in node.inputs]
        return Symbol(entries) if entries else None

    # --- attributes -----------------------------------------------------------------------
    def attr(self, key: str):
        """A string attribute of the head node, or None."""
        if len(self._outputs) != 1:
            return None
        return _visible_attrs(_node_attrs(self._outputs[0][0])).get(key)

    def list_attr(self, recursive: bool = False) -> dict:
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return _visible_attrs(_node_attrs(self._outputs[0][0]))

    def attr_dict(self) -> dict:
        """``{node name: attrs}`` for every node that has attributes."""
        out = {}
        for n in self._topo():
            d = _visible_attrs(_node_attrs(n))
            if d:
                out[n.name] = d
        return out

    def _set_attr(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("Set Attr only accepts string values")
        for n, _ in self._outputs:
            n.annotate(**kwargs)

    # --- inference ------------------------------------------------------------------------
    def _inference_inputs(self, args, kwargs, kind):
        if args and kwargs:
            raise ValueError("Can only specify known argument shapes either by positional or kwargs way.")
        graph = self._graph()
        arg_names = [n.name for n in graph.arg_nodes]
        by_name: dict = {}
        for n in graph.nodes:
            if n.op is None:
                by_name.setdefault(n.name, []).append(n)
        given = dict(zip(arg_names, args)) if args else dict(kwargs)
        known = {}
        for k, v in given.items():
            if v is None:
                continue
            if k not in by_name:
                cands = "".join(f"\n\t[{i}]{n}" for i, n in enumerate(arg_names))
                what = "InferShape" if kind == "shape" else "InferType"
                raise MXNetError(f"{what}Keyword argument name {k} not found.\nCandidate arguments:{cands}")
            if kind == "shape":
                if not isinstance(v, (tuple, list)):
                    raise TypeError(f"Arguments need to be shapes (tuple), but '{k}' is {type(v)}.")
                v = tuple(int(d) for d in v)
            else:
                v = dtype_np(v)
            for n in by_name[k]:
                known[n] = v
        return graph, known

    def _infer(self, kind, args, kwargs):
        graph, known = self._inference_inputs(args, kwargs, kind)
        vals = _infer.infer(graph, known, kind)
        arg = [vals[graph.entry(n)] for n in graph.arg_nodes]
        auxv = [vals[graph.entry(n)] for n in graph.aux_nodes]
        outs = [vals[e] for e in graph.output_entries()]
        return graph, arg, outs, auxv

    def _infer_or_print(self, kind, args, kwargs):
        try:
            return self._infer(kind, args, kwargs)
        except MXNetError:
            print(f"infer_{kind} error. Arguments:")
            for i, a in enumerate(args):
                print(f"  #{i}: {a}")
            for k, v in kwargs.items():
                print(f"  {k}: {v}")
            raise

    def infer_shape(self, *args, **kwargs):
        """Infer argument, output and auxiliary shapes from some known input shapes.

        Returns ``(arg_shapes, out_shapes, aux_shapes)`` in list order, or
        ``(None, None, None)`` (with a warning) when some shape cannot be decided.
        """
        _, arg, outs, aux = self._infer_or_print("shape", args, kwargs)
        if not all(_complete(s) for s in arg + outs + aux):
            unknown = [f"{n}: {tuple(s) if s is not None else ()}"
                       for n, s in zip(self.list_arguments(), arg) if not _complete(s)]
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means unknown "
                          "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown),
                          stacklevel=2)
            return None, None, None
        return arg, outs, aux

    def infer_shape_partial(self, *args, **kwargs):
        """Like infer_shape, but unknown shapes are returned as ``()`` (unknown dims as 0)."""
        _, arg, outs, aux = self._infer_or_print("shape", args, kwargs)
        fix = lambda ls: [tuple(s) if s is not None else () for s in ls]  # noqa: E731
        return fix(arg), fix(outs), fix(aux)

    def infer_type(self, *args, **kwargs):
        """Infer ``(arg_types, out_types, aux_types)`` (numpy type classes)."""
        _, arg, outs, aux = self._infer_or_print("type", args, kwargs)
        if any(t is None for t in arg + outs + aux):
            unknown = [f"{n}: {t}" for n, t in zip(self.list_arguments(), arg) if t is None]
            warnings.warn("Cannot decide type for the following arguments. Consider providing them as "
                          "input:\n\t" + "\n\t".join(unknown), stacklevel=2)
            return None, None, None
        return arg, outs, aux

    def infer_type_partial(self, *args, **kwargs):
        _, arg, outs, aux = self._infer_or_print("type", args, kwargs)
        return arg, outs, aux

    # --- serialisation --------------------------------------------------------------------
    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The graph in MXNet's JSON layout (without the ``amp_cast``/``amp_multicast`` nodes
        that mixed precision inserted, unless ``remove_amp_cast=False``, as MXNet)."""
        from .json import to_json
        return to_json(self._without_amp_casts() if remove_amp_cast else self)

    def save(self, fname: str, remove_amp_cast: bool = True):
        """Write the JSON to ``fname`` (atomically: a temp file renamed into place)."""
        from ..util import atomic_write_text
        atomic_write_text(fname, self.tojson(remove_amp_cast=remove_amp_cast))

    def _without_amp_casts(self) -> "Symbol":
        """This graph with every amp_cast / amp_multicast output replaced by its input."""
        nodes = self._topo()
        if not any(n.op is not None and n.op.name in _AMP_CASTS for n in nodes):
            return self
        heads = {n for n, _ in self._outputs}
        entry = {}  # (old node, output) -> new entry
        for n in nodes:
            if n.op is None:
                entry[(n, 0)] = (n, 0)
                continue
            ins = tuple(entry[(s, i)] for s, i in n.inputs)
            if n.op.name in _AMP_CASTS and n not in heads:  # (MXNet keeps the output casts)
                for i in range(n.num_outputs):
                    entry[(n, i)] = ins[i]
                continue
            new = n if ins == n.inputs else n.replace(inputs=ins, attrs=dict(n.attrs))
            for i in range(n.num_outputs):
                entry[(n, i)] = (new, i)
        return Symbol([entry[e] for e in self._outputs])

    def debug_str(self) -> str:
        lines = []
        for n in self._topo():
            if n.op is None:
                lines.append(f"Variable:{n.name}")
            else:
                lines.append(f"Op:{n.op.name}, Name={n.name}")
                lines += [f"\targ[{k}]={s.output_name(i)}" for k, (s, i) in enumerate(n.inputs)]
                lines += [f"\t{k}={v}" for k, v in n.given.items()]
        return "\n".join(lines)

    # --- composition ----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        s = self.__copy__()
        return s._compose(*args, **kwargs)

    def _compose(self, *args, name=None, **kwargs):
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or keyword arguments, not both")
        nodes = self._topo()
        variables = [n for n in nodes if n.op is None]
        if args:
            raise MXNetError("General composition only support kwargs for now")
        for k, v in kwargs.items():
            if not isinstance(v, Symbol):
                raise TypeError("Compose expect `Symbol` as arguments")
        names = [n.name for n in variables]
        for k in kwargs:
            if k not in names:
                cands = "".join(f"\n\t[{i}]{n}" for i, n in enumerate(self.list_arguments()))
                raise MXNetError(f"Symbol.ComposeKeyword argument name {k} not found.\nCandidate arguments:{cands}")
        repl = {}
        for n in variables:
            if n.name in kwargs:
                sym = kwargs[n.name]
                if len(sym._outputs) != 1:
                    raise MXNetError(f"cannot compose with a group of {len(sym._outputs)} outputs for {n.name}")
                repl[n] = sym._outputs[0]
        new_outputs = _rebuild(self._outputs, nodes, repl, name)
        self._outputs = tuple(new_outputs)
        return self

    # --- binding --------------------------------------------------------------------------
    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """Infer shapes from ``kwargs``, allocate arguments and gradients, and bind an Executor."""
        return _BINDERS["simple_bind"](self, ctx, grad_req=grad_req, type_dict=type_dict, group2ctx=group2ctx,
                           shared_arg_names=shared_arg_names, shared_exec=shared_exec,
                           shared_buffer=shared_buffer, stype_dict=stype_dict, **kwargs)

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        """Bind the given arrays (used as they are, not copied) into an Executor."""
        return _BINDERS["bind"](self, ctx, args, args_grad=args_grad, grad_req=grad_req, aux_states=aux_states,
                    group2ctx=group2ctx, shared_exec=shared_exec)

    def eval(self, ctx=None, **kwargs):
        """Bind with the given arrays, run forward, and return the outputs."""
        from ..context import current_context
        ex = self.bind(ctx or current_context(), kwargs, grad_req="null")
        return ex.forward()

    # --- arithmetic sugar -----------------------------------------------------------------
    def _binary(self, other, op, scalar_op):
        from . import register as _r
        if isinstance(other, Symbol):
            return _r.invoke_sym(op, [self, other], {})
        if isinstance(other, (int, float, np.number, bool)):
            return _r.invoke_sym(scalar_op, [self], {"scalar": other})
        raise TypeError(f"type {type(other).__name__} not supported")

    def __add__(self, o): return self._binary(o, "_Plus", "_PlusScalar")
    def __radd__(self, o): return self.__add__(o)
    def __sub__(self, o): return self._binary(o, "_Minus", "_MinusScalar")
    def __rsub__(self, o): return self._rscalar(o, "_RMinusScalar")
    def __mul__(self, o): return self._binary(o, "_Mul", "_MulScalar")
    def __rmul__(self, o): return self.__mul__(o)
    def __truediv__(self, o): return self._binary(o, "_Div", "_DivScalar")
    def __rtruediv__(self, o): return self._rscalar(o, "_RDivScalar")
    __div__, __rdiv__ = __truediv__, __rtruediv__
    def __mod__(self, o): return self._binary(o, "_Mod", "_ModScalar")
    def __rmod__(self, o): return self._rscalar(o, "_RModScalar")
    def __pow__(self, o): return self._binary(o, "_Power", "_PowerScalar")
    def __rpow__(self, o): return self._rscalar(o, "_rpower_scalar")
    def __neg__(self): return self._binary(-1.0, None, "_MulScalar")

    def __abs__(self):
        from . import register as _r
        return _r.invoke_sym("abs", [self], {})
    def __gt__(self, o): return self._binary(o, "_greater", "_greater_scalar")
    def __ge__(self, o): return self._binary(o, "_greater_equal", "_greater_equal_scalar")
    def __lt__(self, o): return self._binary(o, "_lesser", "_lesser_scalar")
    def __le__(self, o): return self._binary(o, "_lesser_equal", "_lesser_equal_scalar")
    def __eq__(self, o): return self._binary(o, "_equal", "_equal_scalar")
    def __ne__(self, o): return self._binary(o, "_not_equal", "_not_equal_scalar")

    def _rscalar(self, other, op):
        from . import register as _r
        if not isinstance(other, (int, float, np.number, bool)):
            raise TypeError(f"type {type(other).__name__} not supported")
        return _r.invoke_sym(op, [self], {"scalar": other})

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    # In-place arithmetic is NDArray-only (MXNet raises rather than rebinding the name).
    def __iadd__(self, o): raise NotImplementedForSymbol(self.__iadd__, "+=", o, 1)
    def __isub__(self, o): raise NotImplementedForSymbol(self.__isub__, "-=", o)
    def __imul__(self, o): raise NotImplementedForSymbol(self.__imul__, "*=", o)
    def __itruediv__(self, o): raise NotImplementedForSymbol(self.__itruediv__, "/=", o)

    def __getattr__(self, name):
        # Fluent methods: sym.reshape(...), sym.sum(...) etc. map onto registered operators.
        if name.startswith("_"):
            raise AttributeError(name)
        op = _reg.find(name)
        if op is None or not op.public:
            raise AttributeError(f"'Symbol' object has no attribute '{name}'")
        from . import register as _r

        def method(*args, **kwargs):
            return _r.make_function(op, name)(self, *args, **kwargs)
        return method

    def astype(self, dtype):
        from . import register as _r
        return _r.invoke_sym("Cast", [self], {"dtype": dtype})


# The executor layer sits above symbols: it registers its bind functions here when imported
# (``import neomx`` does), so this module never imports it.
_BINDERS: dict = {}


def register_binders(bind, simple_bind):
    """Install the functions behind ``Symbol.bind`` and ``Symbol.simple_bind``."""
    _BINDERS["bind"], _BINDERS["simple_bind"] = bind, simple_bind


def _complete(s):
    return s is not None and all(d > 0 for d in s)


def _node_attrs(node: Node) -> dict:
    d = dict(node.given)
    d.update(node.attrs)
    return d


def _visible_attrs(d: dict) -> dict:
    """MXNet shows hidden keys (``__lr_mult__``...) under both spellings."""
    out = {}
    for k, v in d.items():
        out[k] = v
        if k.startswith("__") and k.endswith("__") and k[2:-2] in HIDDEN_KEYS:
            out.setdefault(k[2:-2], v)
    return out


_AMP_CASTS = ("amp_cast", "amp_multicast")


def _rebuild(outputs, nodes, repl, name=None):
    """Copy the graph with variables replaced (``repl``: variable node -> entry)."""
    mapping = {}
    for n in nodes:
        if n in repl:
            continue
        if n.op is None:
            mapping[n] = n
            continue
        new_inputs = tuple(repl[s] if s in repl else (mapping[s], i) for s, i in n.inputs)
        mapping[n] = n if new_inputs == n.inputs else n.replace(inputs=new_inputs, attrs=dict(n.attrs))
    out = []
    for n, i in outputs:
        out.append(repl[n] if n in repl else (mapping[n], i))
    if name is not None and len(out) == 1 and out[0][0].op is not None:
        n, i = out[0]
        out[0] = (n.replace(name=name, attrs=dict(n.attrs)), i)
    return out


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, profiler_scope=None, **kwargs):
    """Create a symbolic variable (a free input of the graph).

    Parameters
    ----------
    name : str
        Variable name (never prefixed or counted).
    attr : dict of str to str, optional
        Additional attributes.
    shape, dtype : optional
        Shape (stored as ``__shape__``) and dtype (``__dtype__``) hints for inference.
    lr_mult, wd_mult : float, optional
        Learning-rate and weight-decay multipliers.
    init : Initializer or str, optional
        Initializer for this variable.

    Examples
    --------
    >>> import neomx as mx
    >>> mx.sym.Variable('data', shape=(3, 4)).attr('__shape__')
    '(3, 4)'
    """
    if not isinstance(name, string_types):
        raise TypeError("Expect a string for variable `name`")
    attrs = AttrScope.current().get(attr)
    if shape is not None:
        attrs["__shape__"] = str(shape if isinstance(shape, int) else tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(dtype_code(dtype))
    if init is not None:
        if not isinstance(init, string_types):
            init = init.dumps()
        attrs["__init__"] = init
    if stype is not None:
        attrs["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}.get(stype, stype))
    if profiler_scope is not None:
        attrs["__profiler_scope__"] = profiler_scope
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must start "
                             "and end with double underscores, e.g, __yourattr__")
    return Symbol([(Node(None, name, attrs=attrs), 0)])


var = Variable


def Group(symbols):
    """One symbol whose outputs are the outputs of ``symbols``, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def load_json(json_str: str) -> Symbol:
    """Load a symbol from MXNet's JSON (any 1.x layout, legacy ones upgraded)."""
    from .json import from_json
    return from_json(json_str)


def load(fname: str) -> Symbol:
    """Load a symbol from a ``-symbol.json`` file."""
    try:
        with open(fname, "rb") as f:
            data = f.read()
    except OSError as e:
        raise MXNetError(f"cannot open symbol file {fname}: {e.strerror}") from None
    try:
        return load_json(data)
    except MXNetError as e:
        raise MXNetError(f"{fname}: {e}") from None


# Functions MXNet's ``mxnet.symbol.symbol`` defines and neomx defines in the ``mx.sym`` package
# (which imports this module first): looked up there on first access.
_PACKAGE_NAMES = frozenset(("arange", "eye", "full", "histogram", "hypot", "linspace", "maximum",
                            "minimum", "ones", "pow", "power", "split_v2", "zeros"))


def __getattr__(name):
    if name in _PACKAGE_NAMES:
        from .. import symbol as package
        if name in package.__dict__:
            return package.__dict__[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
