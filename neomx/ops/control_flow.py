"""The control-flow operators ``_foreach``, ``_while_loop`` and ``_cond``: nodes that hold
subgraphs (MXNet 1.9.1's ``src/operator/control_flow.cc``).

A node's ``params.subgraphs`` is a tuple of Symbols (the loop body; the condition and the loop
function; the predicate and the two branches), put there by ``mx.sym.contrib.foreach`` /
``while_loop`` / ``cond`` or by the JSON loader (MXNet's ``"subgraphs"`` key); the other
parameters are MXNet's (``in_data_locs``, ``func_var_locs``, ...: which node input feeds which
subgraph input). Running a node runs its subgraphs through programs compiled once per input
signature (:func:`neomx.graph.pipeline.compile_program`), one call per iteration.

The gradient rule adds one ``_backward_<op>`` node (an op made per forward node, closing over its
subgraphs): it runs the forward again keeping every iteration's values, then the subgraphs'
own backward programs in reverse order, carrying the gradients of the loop states from one
iteration to the one before and summing those of the free variables. The imperative forms
(``mx.nd.contrib.foreach`` ...) are plain Python loops recorded by autograd and need none of this.
"""
from __future__ import annotations

import torch

from ..base import MXNetError
from .registry import REQUIRED, OpDef, Param, Params, ShapeError, register

__all__ = ["SUBGRAPH", "runner_for"]


# --- running one subgraph -----------------------------------------------------------------------
# The runner compiles programs, which is the graph layer's business (ops import nothing above
# them): neomx.graph.subgraph.SubgraphRunner installs itself here when neomx.graph is imported.
SUBGRAPH = {"runner": None}


def runner_for(p: Params, k: int):
    """The runner of subgraph ``k`` of a node's params (made once per params object)."""
    runners = p.get("_runners")
    if runners is None:
        subs = p.get("subgraphs")
        if not subs:
            raise MXNetError("a control-flow operator needs its subgraphs (build it with "
                             "mx.sym.contrib.foreach / while_loop / cond, or load it from JSON)")
        make = SUBGRAPH["runner"]
        if make is None:
            raise MXNetError("control-flow operators need neomx.graph (import neomx)")
        runners = dict.__setitem__(p, "_runners", tuple(make(s) for s in subs)) or p["_runners"]
    return runners[k]


def _zeros(x):
    return torch.zeros_like(x)


def _add(a, b):
    if b is None:
        return a
    return b if a is None else a + b


def _scalar_true(t, what):
    if t.numel() != 1:
        raise MXNetError(f"{what} must be a scalar (one element), got shape {tuple(t.shape)}")
    return bool(t.reshape(()).item() != 0)


# --- per-op semantics: forward with optional saving, and the reverse sweep ---------------------
def _foreach_run(p, ins, oc, save=False):
    body = runner_for(p, 0)
    nd, ns = len(p.in_data_locs), len(p.in_state_locs)
    data, states, remain = ins[:nd], list(ins[nd:nd + ns]), ins[nd + ns:]
    n_out = p.num_out_data
    sub = [None] * len(body.inputs)
    for k, loc in enumerate(p.remain_locs):
        sub[loc] = remain[k]
    steps, saved = [], []
    T = data[0].shape[0] if data else 0
    for t in range(T):
        for k, loc in enumerate(p.in_data_locs):
            sub[loc] = data[k][t]
        for k, loc in enumerate(p.in_state_locs):
            sub[loc] = states[k]
        if save:
            res, st = body.forward(list(sub), oc, grad=True)
            saved.append(st)
        else:
            res = body.forward(list(sub), oc)
        steps.append(res[:n_out])
        states = list(res[n_out:])
    if T == 0:
        raise MXNetError("foreach: the data arrays have no elements along axis 0")
    outs = [torch.stack([s[k] for s in steps]) for k in range(n_out)]
    outs += [s.clone() if any(s is x for x in ins) else s for s in states]
    return outs, saved


def _foreach_forward(p, ins, oc):
    outs, _ = _foreach_run(p, ins, oc)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _foreach_backward(p, ins, ograds, oc):
    body = runner_for(p, 0)
    _, saved = _foreach_run(p, ins, oc, save=True)
    nd, ns = len(p.in_data_locs), len(p.in_state_locs)
    n_out = p.num_out_data
    g_data = [_zeros(x) for x in ins[:nd]]
    g_states = list(ograds[n_out:])
    g_remain = [None] * (len(ins) - nd - ns)
    for t in reversed(range(len(saved))):
        gs = body.backward(saved[t], [g[t] for g in ograds[:n_out]] + g_states, oc)
        for k, loc in enumerate(p.in_data_locs):
            if gs[loc] is not None:
                g_data[k][t] = gs[loc]
        g_states = [gs[loc] if gs[loc] is not None else _zeros(ins[nd + k])
                    for k, loc in enumerate(p.in_state_locs)]
        for k, loc in enumerate(p.remain_locs):
            g_remain[k] = _add(g_remain[k], gs[loc])
    g_remain = [g if g is not None else _zeros(x) for g, x in zip(g_remain, ins[nd + ns:])]
    return g_data + g_states + g_remain


def _while_var_inputs(p):
    """Per loop variable, the node input that holds it (-1: unused by the loop function)."""
    return [p.func_input_locs[j] if j >= 0 else -1 for j in p.func_var_locs]


def _while_run(p, ins, oc, save=False):
    cond, func = runner_for(p, 0), runner_for(p, 1)
    n_out = p.num_out_data
    var_in = _while_var_inputs(p)
    cur = list(ins)
    steps, saved = [], []
    finals = None
    while len(steps) < p.max_iterations:
        c = cond.forward([cur[i] for i in p.cond_input_locs], oc)[0]
        if not _scalar_true(c, "while_loop's condition"):
            break
        xs = [cur[i] for i in p.func_input_locs]
        if save:
            res, st = func.forward(xs, oc, grad=True)
            saved.append(st)
        else:
            res = func.forward(xs, oc)
        steps.append(res[:n_out])
        finals = res[n_out:]
        for k, loc in enumerate(var_in):
            if loc >= 0:
                cur[loc] = finals[k]
    if finals is None:  # no iteration: the loop variables as given
        finals = [cur[loc] if loc >= 0 else None for loc in var_in]
    outs = []
    prog_shapes = None
    for k in range(n_out):
        if steps:
            first = steps[0][k]
            buf = first.new_zeros((p.max_iterations,) + tuple(first.shape))
            buf[:len(steps)] = torch.stack([s[k] for s in steps])
        else:
            if prog_shapes is None:
                prog = func.program([cur[i] for i in p.func_input_locs], False)
                prog_shapes = list(zip(prog.out_shapes, prog.out_types))
            shape, dt = prog_shapes[k]
            from ..base import dtype_torch
            buf = torch.zeros((p.max_iterations,) + tuple(shape), dtype=dtype_torch(dt),
                              device=ins[0].device)
        outs.append(buf)
    outs += [f.clone() if any(f is x for x in ins) else f for f in finals]
    return outs, saved


def _while_forward(p, ins, oc):
    outs, _ = _while_run(p, ins, oc)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _while_backward(p, ins, ograds, oc):
    func = runner_for(p, 1)
    _, saved = _while_run(p, ins, oc, save=True)
    n_out = p.num_out_data
    var_at = {j: k for k, j in enumerate(p.func_var_locs) if j >= 0}
    var_in = _while_var_inputs(p)
    g_in = [None] * len(ins)
    g_vars = list(ograds[n_out:])
    for t in reversed(range(len(saved))):
        gs = func.backward(saved[t], [g[t] for g in ograds[:n_out]] + g_vars, oc)
        new_vars = [None] * len(g_vars)
        for j, loc in enumerate(p.func_input_locs):
            if j in var_at:
                new_vars[var_at[j]] = gs[j]
            else:
                g_in[loc] = _add(g_in[loc], gs[j])
        g_vars = [g if g is not None else _zeros(ins[var_in[k]]) if var_in[k] >= 0 else None
                  for k, g in enumerate(new_vars)]
    for k, loc in enumerate(var_in):
        if loc >= 0:
            g_in[loc] = _add(g_in[loc], g_vars[k])
    return [g if g is not None else _zeros(x) for g, x in zip(g_in, ins)]


def _cond_branch(p, ins, oc):
    pred = runner_for(p, 0).forward([ins[i] for i in p.cond_input_locs], oc)[0]
    if _scalar_true(pred, "cond's predicate"):
        return runner_for(p, 1), p.then_input_locs
    return runner_for(p, 2), p.else_input_locs


def _cond_forward(p, ins, oc):
    branch, locs = _cond_branch(p, ins, oc)
    outs = branch.forward([ins[i] for i in locs], oc)
    outs = [o.clone() if any(o is x for x in ins) else o for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _cond_backward(p, ins, ograds, oc):
    branch, locs = _cond_branch(p, ins, oc)
    _, st = branch.forward([ins[i] for i in locs], oc, grad=True)
    gs = branch.backward(st, list(ograds), oc)
    g_in = [None] * len(ins)
    for j, loc in enumerate(locs):
        g_in[loc] = _add(g_in[loc], gs[j])
    return [g if g is not None else _zeros(x) for g, x in zip(g_in, ins)]


# --- shape and type inference through the subgraphs -------------------------------------------
def _merge(a, b, kind):
    if a is None:
        return b
    if b is None:
        return a
    if kind == "shape":
        from .registry import merge_shape
        m = merge_shape(a, b)
        if m is None:
            raise ShapeError(f"Shape inconsistent, Provided = {list(a)}, inferred shape={list(b)}")
        return m
    return a


def _known(v, kind):
    return v is not None and (kind != "shape" or 0 not in v)


def _foreach_infer(kind):
    def rule(p, ins, outs):
        ins, outs = list(ins), list(outs)
        body = runner_for(p, 0)
        nd, ns = len(p.in_data_locs), len(p.in_state_locs)
        n_out = p.num_out_data
        sub = [None] * len(body.inputs)
        T = None
        for k, loc in enumerate(p.in_data_locs):
            d = ins[k]
            if d is not None:
                if kind == "shape":
                    if len(d) and d[0]:
                        T = d[0]
                    sub[loc] = tuple(d[1:]) if len(d) else None
                else:
                    sub[loc] = d
        for k, loc in enumerate(p.in_state_locs):
            sub[loc] = _merge(ins[nd + k], outs[n_out + k], kind)
        for k, loc in enumerate(p.remain_locs):
            sub[loc] = ins[nd + ns + k]
        if kind == "shape" and T is None:
            for o in outs[:n_out]:
                if o is not None and len(o) and o[0]:
                    T = o[0]
        s_ins, s_outs = body.infer(sub, kind)
        for k, loc in enumerate(p.in_data_locs):
            v = s_ins[loc]
            if v is not None:
                ins[k] = ((T or 0,) + tuple(v)) if kind == "shape" else v
        for k, loc in enumerate(p.in_state_locs):
            ins[nd + k] = _merge(ins[nd + k], s_ins[loc], kind)
        for k, loc in enumerate(p.remain_locs):
            ins[nd + ns + k] = _merge(ins[nd + ns + k], s_ins[loc], kind)
        for k in range(n_out):
            v = s_outs[k]
            if v is not None:
                outs[k] = ((T or 0,) + tuple(v)) if kind == "shape" else v
        for k in range(len(p.in_state_locs)):
            outs[n_out + k] = _merge(s_outs[n_out + k], ins[nd + k], kind)
        return ins, outs
    return rule


def _while_infer(kind):
    def rule(p, ins, outs):
        ins, outs = list(ins), list(outs)
        func = runner_for(p, 1)
        n_out = p.num_out_data
        var_in = _while_var_inputs(p)
        for k, loc in enumerate(var_in):
            if loc >= 0:
                ins[loc] = _merge(ins[loc], outs[n_out + k], kind)
        s_ins, s_outs = func.infer([ins[i] for i in p.func_input_locs], kind)
        for j, loc in enumerate(p.func_input_locs):
            ins[loc] = _merge(ins[loc], s_ins[j], kind)
        for k in range(n_out):
            v = s_outs[k]
            if v is not None:
                outs[k] = ((p.max_iterations,) + tuple(v)) if kind == "shape" else v
        for k in range(len(var_in)):
            outs[n_out + k] = _merge(s_outs[n_out + k],
                                     ins[var_in[k]] if var_in[k] >= 0 else None, kind)
        return ins, outs
    return rule


def _cond_infer(kind):
    def rule(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for k, locs in ((1, p.then_input_locs), (2, p.else_input_locs)):
            s_ins, s_outs = runner_for(p, k).infer([ins[i] for i in locs], kind)
            for j, loc in enumerate(locs):
                ins[loc] = _merge(ins[loc], s_ins[j], kind)
            outs = [_merge(o, s, kind) for o, s in zip(outs, s_outs)]
        return ins, outs
    return rule


# --- the gradient: one _backward_<op> node per forward node ------------------------------------
def _backward_op(name, p, n_in, n_out, run_backward):
    def forward(bp, ins, oc):
        grads = run_backward(p, list(ins[n_out:]), list(ins[:n_out]), oc)
        return grads[0] if len(grads) == 1 else tuple(grads)

    def infer_shape(bp, ins, outs):
        return ins, list(ins[n_out:])

    def infer_type(bp, ins, outs):
        return ins, list(ins[n_out:])

    return OpDef(f"_backward{name}", forward, infer_shape, infer_type=infer_type,
                 inputs=tuple(f"ograd{i}" for i in range(n_out)) +
                 tuple(f"data{i}" for i in range(n_in)),
                 outputs=tuple(f"grad{i}" for i in range(n_in)), public=False,
                 deterministic=False, hint=f"_backward{name}")


def _gradient_rule(name, run_backward):
    def gradient(F, p, ins, outs, ograds):
        build = getattr(type(F), "_build", None)
        if build is None:
            raise MXNetError(f"{name}: gradients of a symbolic control-flow node are only "
                             "computed in executors (use mx.nd.contrib's imperative form under "
                             "autograd)")
        bop = _backward_op(name, p, len(ins), len(ograds), run_backward)
        res = F._build(bop, tuple(ograds) + tuple(ins), {})
        return [res] if len(ins) == 1 else list(res)
    return gradient


# --- registration --------------------------------------------------------------------------
def _locs_param(name, doc):
    return Param(name, "shape", (), doc)


def _outputs(p):
    return tuple(f"output{i}" for i in range(p.num_outputs))


def _det(k_list):
    def deterministic(p):
        if not p.get("subgraphs"):
            return True
        return all(runner_for(p, k).deterministic() for k in k_list)
    return deterministic


register(OpDef(
    "_foreach", _foreach_forward, _foreach_infer("shape"), infer_type=_foreach_infer("type"),
    params=(Param("num_args", "int", REQUIRED, "Number of inputs (the subgraph counts as one)."),
            Param("num_outputs", "int", REQUIRED, "The number of outputs of the subgraph."),
            Param("num_out_data", "int", REQUIRED, "The number of output data of the subgraph."),
            _locs_param("in_state_locs", "The locations of loop states among the inputs."),
            _locs_param("in_data_locs", "The locations of input data among the inputs."),
            _locs_param("remain_locs", "The locations of remaining data among the inputs.")),
    inputs=lambda p: tuple(f"data{i}" for i in range(p.num_args - 1)),
    outputs=_outputs, gradient=_gradient_rule("_foreach", _foreach_backward),
    deterministic=_det((0,)), public=False,
    doc="Run a for loop over an NDArray with user-defined computation (built by "
        "``mx.sym.contrib.foreach``)."))

register(OpDef(
    "_while_loop", _while_forward, _while_infer("shape"), infer_type=_while_infer("type"),
    params=(Param("num_args", "int", REQUIRED, "Number of input arguments, including cond and func "
                                           "as two symbol inputs."),
            Param("num_outputs", "int", REQUIRED, "The number of outputs of the subgraph."),
            Param("num_out_data", "int", REQUIRED, "The number of outputs from the function body."),
            Param("max_iterations", "int", REQUIRED, "Maximum number of iterations."),
            _locs_param("cond_input_locs", "The locations of cond's inputs in the given inputs."),
            _locs_param("func_input_locs", "The locations of func's inputs in the given inputs."),
            _locs_param("func_var_locs", "The locations of loop_vars among func's inputs.")),
    inputs=lambda p: tuple(f"data{i}" for i in range(p.num_args - 2)),
    outputs=_outputs, gradient=_gradient_rule("_while_loop", _while_backward),
    deterministic=_det((0, 1)), public=False,
    doc="Run a while loop with user-defined computation and loop condition (built by "
        "``mx.sym.contrib.while_loop``)."))

register(OpDef(
    "_cond", _cond_forward, _cond_infer("shape"), infer_type=_cond_infer("type"),
    params=(Param("num_args", "int", REQUIRED, "Number of input arguments, including cond, then "
                                               "and else as three symbol inputs."),
            Param("num_outputs", "int", REQUIRED, "The number of outputs of the subgraph."),
            _locs_param("cond_input_locs", "The locations of cond's inputs in the given inputs."),
            _locs_param("then_input_locs", "The locations of then's inputs in the given inputs."),
            _locs_param("else_input_locs", "The locations of else's inputs in the given inputs.")),
    inputs=lambda p: tuple(f"data{i}" for i in range(p.num_args - 3)),
    outputs=_outputs, gradient=_gradient_rule("_cond", _cond_backward),
    deterministic=_det((0, 1, 2)), public=False,
    doc="Run an if-then-else using user-defined condition and computation (built by "
        "``mx.sym.contrib.cond``)."))
