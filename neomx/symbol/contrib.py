"""``mx.sym.contrib``: the operators named ``_contrib_<X>`` as ``mx.sym.contrib.<X>`` (MXNet's
prefix namespace; unnamed nodes are named after ``<X>``, as MXNet's: ``x0``), and MXNet 1.9.1's
Python functions ``rand_zipfian``, ``adamw_update`` and ``mp_adamw_update``."""
from __future__ import annotations

import math

from ..ops import namespaces as _prefixed
from .register import make_function as _make
from .symbol import Group, Symbol, Variable

__all__: list = ["rand_zipfian", "adamw_update", "mp_adamw_update", "foreach", "while_loop",
                 "cond"]


def rand_zipfian(true_classes, num_sampled, range_max):
    """Draw ``num_sampled`` classes from the approximately log-uniform (Zipfian) distribution
    on ``[0, range_max)``; returns three Symbols (sampled classes, expected counts of
    ``true_classes``, expected counts of the sampled classes), as MXNet's."""
    from .random import uniform
    assert isinstance(true_classes, Symbol), "unexpected type %s" % type(true_classes)
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_classes = true_classes.astype("float64")
    expected_prob_true = ((true_classes + 2.0) / (true_classes + 1.0)).log() / log_range
    expected_count_true = expected_prob_true * num_sampled
    sampled_cls_fp64 = sampled_classes.astype("float64")
    expected_prob_sampled = ((sampled_cls_fp64 + 2.0) / (sampled_cls_fp64 + 1.0)).log() / log_range
    expected_count_sampled = expected_prob_sampled * num_sampled
    return sampled_classes, expected_count_true, expected_count_sampled


def _with_out(out, kwargs):
    """MXNet's wrappers pass ``out`` on; a symbol has no output array, so only a given one."""
    return kwargs if out is None else dict(kwargs, out=out)


def _rescale_grad_symbol(rescale_grad):
    if isinstance(rescale_grad, Symbol):
        return rescale_grad
    from . import full
    return full(shape=(1,), val=rescale_grad)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``); a number ``rescale_grad`` becomes a ``full((1,))``
    symbol, as MXNet 1.9.1's."""
    from . import _internal
    return _internal._adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                   rescale_grad=_rescale_grad_symbol(rescale_grad), lr=lr,
                                   eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                   clip_gradient=clip_gradient, name=name,
                                   **_with_out(out, kwargs))


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """Mixed-precision AdamW step (``_mp_adamw_update``)."""
    from . import _internal
    return _internal._mp_adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                      weight32=weight32,
                                      rescale_grad=_rescale_grad_symbol(rescale_grad), lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                      clip_gradient=clip_gradient, name=name,
                                      **_with_out(out, kwargs))

_prefixed.fill(globals(), "_contrib_", _make)
__getattr__ = _prefixed.lazy_getattr(globals(), "_contrib_", _make)


# --- control flow: foreach, while_loop, cond (MXNet 1.9.1's python/mxnet/symbol/contrib.py) -----
_SUBGRAPH_KEY = "__subgraph_name__"
_subgraph_names: dict = {}  # (MXNet's AttrScope._subgraph_names: counts per process)


def _unique_subgraph_name(name):
    from .scope import AttrScope
    outer = AttrScope.current()._attr.get(_SUBGRAPH_KEY, "")
    if outer:
        name = outer + "$" + name
    n = _subgraph_names.get(name, 0)
    _subgraph_names[name] = n + 1
    return f"{name}{n}"


def _uniq_name(sym):
    node, i = sym._outputs[0]
    return f"{node.name}-{i}"


def _cf_flatten(args, inout_str):
    if isinstance(args, Symbol):
        n = len(args._outputs)
        return ([args], 0) if n == 1 else ([args[i] for i in range(n)], n)
    assert isinstance(args, (list, tuple)), \
        "%s must be (nested) list of Symbol, but got %s of type %s" % (inout_str, str(args),
                                                                       str(type(args)))
    flat, fmts = [], []
    for i in args:
        arg, fmt = _cf_flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _cf_regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for i in fmt:
        res, args = _cf_regroup(args, i)
        ret.append(res)
    return ret, args


def _identity_if_needed(outputs, name, extra_names=()):
    """MXNet's rule: an output that is an input of the subgraph, or not made inside it, goes
    through ``identity`` (a cut graph cannot have an input as an output)."""
    from . import identity
    inputs = set(Group(outputs).list_inputs()) if outputs else set()
    out = []
    for o in outputs:
        node = o._outputs[0][0]
        if o.name in inputs or o.name in extra_names or node.attrs.get(_SUBGRAPH_KEY, "") != name:
            o = identity(o)
        out.append(o)
    return out


def _cut_subgraph(sym, name):
    """The subgraph of the nodes marked ``__subgraph_name__ == name``: every input it reads from
    outside becomes a variable named after that entry. Returns (subgraph, {var node: outer
    Symbol})."""
    from ..ir import Node, topo_order
    mapping, cut, outer = {}, {}, {}

    def conv(e):
        s, i = e
        if s.attrs.get(_SUBGRAPH_KEY) == name:
            return (mapping[s], i)
        v = cut.get(e)
        if v is None:
            v = cut[e] = Node(None, s.output_name(i))
            outer[v] = Symbol([e])
        return (v, 0)

    for n in topo_order(sym._outputs):
        if n.attrs.get(_SUBGRAPH_KEY) != name:
            continue
        if n.op is None:
            mapping[n] = n
            continue
        ins = tuple(conv(e) for e in n.inputs)
        mapping[n] = n if ins == n.inputs else n.replace(inputs=ins, attrs=dict(n.attrs))
    return Symbol([conv(e) for e in sym._outputs]), outer


def _outer_input(node, outer):
    """The outer symbol feeding subgraph input ``node``: a cut entry, or a copy of a variable
    made inside the body (MXNet deep-copies those)."""
    from ..ir import Node
    if node in outer:
        return outer[node], ("cut", outer[node]._outputs[0])
    copy = Node(None, node.name, attrs=dict(node.attrs))
    return Symbol([(copy, 0)]), ("copy", copy)


def _make_cf_node(opname, subgraphs, inputs, params):
    from ..ops import registry as _reg
    from ..ops.registry import Params
    from .register import create_node
    op = _reg.get(opname)
    params = {k: (str(list(v)) if isinstance(v, (list, tuple)) else v)
              for k, v in params.items()}  # (MXNet writes the locations as "[0, 1]")
    node = create_node(op, tuple(inputs), params, hint=opname)
    p = Params(node.params)
    p["subgraphs"] = tuple(subgraphs)
    node = node.replace(params=p)
    return [Symbol([(node, i)]) for i in range(node.num_outputs)]


def foreach(body, data, init_states, name="foreach"):
    """Run ``body(data[i], states) -> (outputs, new_states)`` over the first axis of ``data``
    as one ``_foreach`` node holding the body as a subgraph; returns (stacked outputs, final
    states), nested as ``body`` returns them (MXNet 1.9.1's ``mx.sym.contrib.foreach``)."""
    from ..ir import Graph
    from .scope import AttrScope
    flatten_data, data_fmt = _cf_flatten(data, "foreach input")
    flatten_state, state_fmt = _cf_flatten(init_states, "foreach states")
    name = _unique_subgraph_name(name)
    with AttrScope(**{_SUBGRAPH_KEY: name}):
        in_eles = [Variable(_uniq_name(s)) for s in flatten_data]
        in_eles, _ = _cf_regroup(in_eles, data_fmt)
        states = [Variable(_uniq_name(s)) for s in flatten_state]
        states, _ = _cf_regroup(states, list(state_fmt) if isinstance(state_fmt, list)
                                else state_fmt)
        sym_out, sym_states = body(in_eles, states)
        sym_out, out_fmt = _cf_flatten(sym_out, "foreach output")
        sym_states, state_fmt = _cf_flatten(sym_states, "foreach loop_vars")
        num_out_data, num_states = len(sym_out), len(sym_states)
        out_names = {o.name for o in sym_out}
        g = Group(_identity_if_needed(sym_out, name) +
                  _identity_if_needed(sym_states, name, out_names))
    g, outer = _cut_subgraph(g, name)
    inputs = Graph(g._outputs).input_nodes
    names = [n.name for n in inputs]
    assert len(set(names)) == len(names), \
        "The inputs of the subgraph don't have unique names: " + str(names)
    data_names = [_uniq_name(s) for s in flatten_data]
    state_names = [_uniq_name(s) for s in flatten_state]
    for d in data_names:
        if d not in names:
            raise AssertionError("the data arrays have to be used in the loop body")
    for s in state_names:
        if s not in names:
            raise AssertionError("the state arrays have to be used in the loop body")
    in_data_locs = [names.index(d) for d in data_names]
    in_state_locs = [names.index(s) for s in state_names]
    ordered_ins = list(flatten_data) + list(flatten_state)
    remain_locs = []
    for k, node in enumerate(inputs):
        if node.name in data_names or node.name in state_names:
            continue
        ordered_ins.append(_outer_input(node, outer)[0])
        remain_locs.append(k)
    num_outputs = num_out_data + num_states
    ret = _make_cf_node("_foreach", [g], ordered_ins, dict(
        num_args=len(ordered_ins) + 1, num_outputs=num_outputs, num_out_data=num_out_data,
        in_state_locs=in_state_locs, in_data_locs=in_data_locs, remain_locs=remain_locs))
    outs, _ = _cf_regroup(ret[:num_out_data], out_fmt)
    states, _ = _cf_regroup(ret[num_out_data:], state_fmt)
    return outs, states


def _union_inputs(graphs, loop_vars=()):
    """The inputs of several cut subgraphs, merged: (outer symbols, per graph the node input of
    each of its inputs, per graph the position of each loop variable among its inputs)."""
    from ..ir import Graph
    inputs, locs, var_locs_all, seen = [], [], [], {}
    by_name = {_uniq_name(s): (k, s) for k, s in enumerate(loop_vars)}
    for g, outer in graphs:
        input_locs, var_locs = [], [-1] * len(loop_vars)
        nodes = Graph(g._outputs).input_nodes
        names = [n.name for n in nodes]
        assert len(set(names)) == len(names), \
            "The inputs of the subgraph don't have unique names: " + str(names)
        for node in nodes:
            if node.name in by_name:
                k, sym = by_name[node.name]
                key = ("var", k)
                var_locs[k] = len(input_locs)
            else:
                sym, key = _outer_input(node, outer)
            if key not in seen:
                seen[key] = len(inputs)
                inputs.append(sym)
            input_locs.append(seen[key])
        locs.append(input_locs)
        var_locs_all.append(var_locs)
    return inputs, locs, var_locs_all


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``func(*loop_vars) -> (step_output, new_loop_vars)`` while ``cond(*loop_vars)`` holds
    (at most ``max_iterations`` times) as one ``_while_loop`` node; returns (the step outputs
    stacked and padded to ``max_iterations``, the final loop variables), as MXNet 1.9.1's."""
    from .scope import AttrScope

    def _to_python_scalar(inputs, type_, name):
        if hasattr(inputs, "asscalar"):
            inputs = inputs.asscalar()
        try:
            inputs = type_(inputs)
        except Exception:
            raise ValueError("Cannot convert %s to python %s" % (name, type_.__name__))
        return inputs

    def _cond_wrapper(loop_vars):
        result = cond(*loop_vars)
        if not isinstance(result, Symbol):
            raise ValueError("Return of cond must be a Symbol")
        return [], [result], [], []

    def _func_wrapper(loop_vars):
        step_output, new_loop_vars = func(*loop_vars)
        if step_output is None:
            step_output = []
        if new_loop_vars is None:
            new_loop_vars = []
        if isinstance(step_output, tuple):
            step_output = list(step_output)
        if isinstance(new_loop_vars, tuple):
            new_loop_vars = list(new_loop_vars)
        step_output, out_fmt = _cf_flatten(step_output, "while output")
        new_loop_vars, var_fmt = _cf_flatten(new_loop_vars, "while loop_vars")
        if len(loop_vars) != len(new_loop_vars):
            raise ValueError("The number of loop_vars should be consistent during the loop")
        return step_output, new_loop_vars, out_fmt, var_fmt

    def _create_subgraph(graph_vars, graph_func, subgraph_name):
        subgraph_name = _unique_subgraph_name(subgraph_name)
        with AttrScope(**{_SUBGRAPH_KEY: subgraph_name}):
            graph_vars, var_fmt = _cf_flatten(graph_vars, "while loop_vars")
            new_graph_vars = [Variable(_uniq_name(s)) for s in graph_vars]
            new_graph_vars, _ = _cf_regroup(new_graph_vars, var_fmt)
            outputs, final_state, out_fmt, var_fmt = graph_func(new_graph_vars)
            num_out_data = len(outputs)
            num_outputs = len(outputs) + len(final_state)
            graph = Group(_identity_if_needed(list(outputs) + list(final_state),
                                              subgraph_name))
        return _cut_subgraph(graph, subgraph_name), num_out_data, num_outputs, out_fmt, var_fmt

    flatten_loop_vars, init_loop_var_fmt = _cf_flatten(loop_vars, "while loop_vars")
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _to_python_scalar(max_iterations, int, "max_iteration")
    if len(flatten_loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")
    cond_g, num_out_data, num_outputs, _, _ = \
        _create_subgraph(loop_vars, _cond_wrapper, name + "_cond")
    assert num_out_data == 0
    assert num_outputs == 1
    func_g, num_out_data, num_outputs, out_fmt, _ = \
        _create_subgraph(loop_vars, _func_wrapper, name + "_func")
    input_syms, (cond_input_locs, func_input_locs), (_, func_var_locs) = \
        _union_inputs([cond_g, func_g], flatten_loop_vars)
    result = _make_cf_node("_while_loop", [cond_g[0], func_g[0]], input_syms, dict(
        num_args=len(input_syms) + 2, num_outputs=num_outputs, num_out_data=num_out_data,
        max_iterations=max_iterations, cond_input_locs=cond_input_locs,
        func_input_locs=func_input_locs, func_var_locs=func_var_locs))
    outputs = result[:num_out_data]
    outputs, _ = _cf_regroup(outputs, out_fmt)
    final_loop_vars = result[num_out_data:num_outputs]
    final_loop_vars, _ = _cf_regroup(final_loop_vars, init_loop_var_fmt)
    return outputs, final_loop_vars


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if ``pred`` (a one-element symbol) is non-zero, else ``else_func()``, as
    one ``_cond`` node holding the predicate and both branches as subgraphs (MXNet 1.9.1's
    ``mx.sym.contrib.cond``); returns the chosen branch's outputs."""
    from .scope import AttrScope

    def _create_subgraph(graph_func, subgraph_name):
        subgraph_name = _unique_subgraph_name(subgraph_name)
        with AttrScope(**{_SUBGRAPH_KEY: subgraph_name}):
            outputs = graph_func()
            outputs, out_fmt = _cf_flatten(outputs, "cond outputs")
            num_outputs = len(outputs)
            graph = Group(_identity_if_needed(outputs, subgraph_name))
        return _cut_subgraph(graph, subgraph_name), num_outputs, out_fmt

    cond_g, cond_num_outputs, _ = _create_subgraph(lambda: pred, name + "_pred")
    if cond_num_outputs != 1:
        raise ValueError("pred should always be a single output")
    then_g, then_num_outputs, then_fmt = _create_subgraph(then_func, name + "_then")
    else_g, else_num_outputs, _ = _create_subgraph(else_func, name + "_else")
    if then_num_outputs != else_num_outputs:
        raise ValueError("Number of outputs differs between then-branch and else-branch")
    input_syms, (cond_input_locs, then_input_locs, else_input_locs), _ = \
        _union_inputs([cond_g, then_g, else_g])
    result = _make_cf_node("_cond", [cond_g[0], then_g[0], else_g[0]], input_syms, dict(
        num_args=len(input_syms) + 3, num_outputs=then_num_outputs,
        cond_input_locs=cond_input_locs, then_input_locs=then_input_locs,
        else_input_locs=else_input_locs))
    outputs, _ = _cf_regroup(result[:then_num_outputs], then_fmt)
    return outputs
