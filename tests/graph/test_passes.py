"""Every pass on hypothesis-generated graphs: ``verify`` holds after each one, inference agrees
with the values a plain interpreter computes, the memory plan never reads a freed slot and
keeps what it must, and the planned executor gives the interpreter's values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neomx as mx
from neomx.graph import infer as _infer
from neomx.graph.gradient import build_gradient
from neomx.graph.pipeline import (add_head_gradients, compile_program, dead_code_elimination,
                                  join_gradient, place_devices)
from neomx.graph.plan import Plan, Step
from neomx.ir import Graph, verify
from neomx.ops.registry import OpContext, zero_gradient

B, D = 3, 4

UNARY = ["relu", "tanh", "sigmoid", "negative", "square", "abs"]


@st.composite
def graphs(draw):
    """A random graph over (B, D) values: elementwise ops, FullyConnected, Concat + FC,
    SliceChannel (several outputs), BatchNorm (auxiliary states), BlockGrad, shared inputs."""
    with mx.name.NameManager():
        values = [mx.sym.Variable(f"x{k}") for k in range(draw(st.integers(1, 3)))]
        for k in range(draw(st.integers(1, 7))):
            kind = draw(st.sampled_from(["unary", "binary", "fc", "concat", "slice", "bn", "block"]))
            a = draw(st.sampled_from(values))
            if kind == "unary":
                v = getattr(mx.sym, draw(st.sampled_from(UNARY)))(a)
            elif kind == "binary":
                b = draw(st.sampled_from(values))
                v = draw(st.sampled_from([lambda x, y: x + y, lambda x, y: x * y,
                                          lambda x, y: x - y]))(a, b)
            elif kind == "fc":
                v = mx.sym.FullyConnected(a, num_hidden=D, name=f"fc{k}")
            elif kind == "concat":
                b = draw(st.sampled_from(values))
                v = mx.sym.FullyConnected(mx.sym.Concat(a, b, dim=1), num_hidden=D, name=f"cfc{k}")
            elif kind == "slice":
                parts = mx.sym.SliceChannel(a, num_outputs=2, axis=1)
                v = mx.sym.Concat(parts[1], parts[0], dim=1)
            elif kind == "bn":
                v = mx.sym.BatchNorm(a, fix_gamma=False, name=f"bn{k}")
            else:
                v = mx.sym.BlockGrad(a) + a
            values.append(v)
        heads = draw(st.lists(st.sampled_from(values[1:] or values), min_size=1, max_size=2))
        return mx.sym.Group([mx.sym.make_loss(mx.sym.sum(h)) for h in heads])


def shapes_of(sym):
    return {n: (B, D) for n in sym.list_arguments() if n.startswith("x")}


def interpret(graph, values, is_train=True):
    """Reference: every op of ``graph`` run in order, nothing freed or in place."""
    oc = OpContext(is_train=is_train, device=torch.device("cpu"))
    env = dict(values)
    for n in graph.nodes:
        if n.op is None:
            continue
        res = n.op.forward(n.params, [env[s][i].clone() for s, i in n.inputs], oc)
        res = [res] if n.num_outputs == 1 else list(res)
        env[n] = res
    return env


def check_plan(prog):
    """No step reads a slot that is not live; frees never touch kept slots; what backward and
    the caller need survives."""
    live = set(prog.var_slots) | {s for s in prog.hg_slots if s is not None}
    for plan in (prog.fwd, prog.bwd):
        for step in plan.steps:
            missing = set(step.ins) - live
            assert not missing, f"{step.node.name} reads freed/unset slots {missing}"
            live |= set(step.outs)
            assert not set(step.free) & plan.keep, f"{step.node.name} frees kept slots"
            live -= set(step.free)
        if plan is prog.fwd:
            assert set(prog.out_slots) <= live
            assert {s for st_ in prog.bwd.steps for s in st_.ins} - live <= set(
                s for st_ in prog.bwd.steps for s in st_.outs) | set(prog.hg_slots)
    assert {s for s in prog.grad_slots if s is not None} <= live


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(graphs())
def test_every_pass_keeps_the_invariants(sym):
    graph = verify(Graph(sym._outputs))
    known = {}
    for n in graph.arg_nodes:
        if n.name.startswith("x"):
            known[n] = (B, D)
    shapes = _infer.infer(graph, known, "shape")
    types = _infer.infer(graph, {n: np.float32 for n in graph.arg_nodes}, "type")
    assert all(s is not None and 0 not in s for s in shapes), "inference left unknown shapes"
    assert all(t is not None for t in types)
    wrt = list(graph.arg_nodes)
    heads = add_head_gradients(graph)
    grads, meta, origin = build_gradient(graph, shapes, types, wrt, heads)
    full, fshapes, _ = join_gradient(graph, shapes, types, heads, grads, meta)
    verify(full)
    assert all(s is not None for s in fshapes)
    for e, (n, i) in zip(grads, [(v, 0) for v in wrt]):
        if e is not None:
            assert fshapes[full.entry(*e)] == shapes[graph.entry(n, i)]
    assert set(origin.values()) <= set(graph.nodes)
    kept = verify(dead_code_elimination(graph, [0]))
    assert set(kept.nodes) <= set(graph.nodes) and kept.outputs == graph.outputs[:1]
    prog = compile_program(sym._outputs, [(shapes[graph.entry(n)], np.float32) for n in graph.arg_nodes],
                           [(shapes[graph.entry(n)], np.float32) for n in graph.aux_nodes],
                           ["write"] * len(graph.arg_nodes), check=True)
    check_plan(prog)


@SETTINGS
@given(graphs(), st.integers(0, 2 ** 31 - 1))
def test_inference_and_the_planned_executor_agree_with_the_interpreter(sym, seed):
    ex = sym.simple_bind(mx.cpu(), **shapes_of(sym))
    rng = np.random.RandomState(seed)
    for name, arr in ex.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
    for name, arr in ex.aux_dict.items():
        arr[:] = rng.uniform(0.5, 1, arr.shape)
    graph = Graph(sym._outputs)
    values = {n: [a._data.clone()] for n, a in zip(graph.arg_nodes + graph.aux_nodes,
                                                     ex.arg_arrays + ex.aux_arrays)}
    env = interpret(graph, values)
    ex.forward(is_train=True)
    ex.backward()
    for out, (n, i) in zip(ex.outputs, graph.outputs):
        ref = env[n][i]
        assert tuple(out.shape) == tuple(ref.shape)
        np.testing.assert_allclose(out.asnumpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    # inferred shapes are the computed ones
    prog = ex._program
    for n in graph.op_nodes:
        for i in range(n.num_outputs):
            assert tuple(prog.shapes[prog.full.entry(n, i)]) == tuple(env[n][i].shape), n.name
    # gradients: torch autograd through the same interpreter
    leaves = {n: [a._data.clone().double().requires_grad_(True)]
              for n, a in zip(graph.arg_nodes, ex.arg_arrays)}
    leaves.update({n: [a._data.clone().double()] for n, a in zip(graph.aux_nodes, ex.aux_arrays)})
    if any(n.op is not None and n.op.name == "BatchNorm" for n in graph.nodes):
        return  # (BatchNorm's aux update is in place; values checked above)
    env64 = {}
    oc = OpContext(is_train=True, device=torch.device("cpu"))
    env64.update(leaves)
    for n in graph.nodes:
        if n.op is None:
            continue
        res = n.op.forward(n.params, [env64[s][i] for s, i in n.inputs], oc)
        res = [res] if n.num_outputs == 1 else list(res)
        if n.op.gradient is zero_gradient:  # BlockGrad: no gradient flows through
            res = [r.detach() for r in res]
        env64[n] = res
    total = sum(env64[n][i].sum() for n, i in graph.outputs)
    arg_leaves = [leaves[n][0] for n in graph.arg_nodes]
    refs = torch.autograd.grad(total, arg_leaves, allow_unused=True)
    for name, g, ref in zip(sym.list_arguments(), ex.grad_arrays, refs):
        want = np.zeros(g.shape) if ref is None else ref.numpy()
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-4, atol=1e-4, err_msg=name)


def test_placement_pass():
    with mx.AttrScope(ctx_group="g1"):
        a = mx.sym.Variable("a")
        b = a * 2
    c = mx.sym.Variable("c")
    d = b + c  # no group: follows its first placed input
    with mx.AttrScope(ctx_group="g2"):
        e = mx.sym.relu(d)
    graph = Graph(e._outputs)
    where = place_devices(graph, "D0", {"g1": "D1", "g2": "D2"})
    by_name = {n.name: where.get(n, "D0") for n in graph.nodes}
    assert by_name["a"] == "D1" and by_name[b.name] == "D1"
    assert by_name[d.name] == "D1" and by_name["c"] == "D1"  # variable: its first consumer's
    assert by_name[e.name] == "D2"
    assert place_devices(graph, "D0", {}) == {}
    assert place_devices(graph, "D1", {"g1": "D1"}).get(graph.nodes[0]) is None  # default: omitted


def test_placed_steps_copy_their_inputs_to_their_device():
    x = mx.sym.Variable("x")
    y = mx.sym.relu(x * 2)
    graph = Graph(y._outputs)
    cpu = torch.device("cpu")
    slot = graph.entry
    steps = [Step(n, [slot(s, i) for s, i in n.inputs], [slot(n, i) for i in range(n.num_outputs)],
                  device=cpu) for n in graph.op_nodes]
    plan = Plan(steps, keep={slot(*graph.outputs[0])})
    vals = [None] * graph.num_entries
    vals[slot(graph.arg_nodes[0])] = torch.tensor([-1.0, 2.0])
    oc = OpContext(is_train=False, device=cpu)
    plan.run(vals, oc, contexts={cpu: oc})
    assert vals[slot(*graph.outputs[0])].tolist() == [0.0, 4.0]
    assert "on cpu" in plan.to_python()


def test_program_prints_both_plans():
    sym = mx.sym.make_loss(mx.sym.sum(mx.sym.tanh(mx.sym.Variable("x"))))
    ex = sym.simple_bind(mx.cpu(), x=(2, 2))
    text = ex.debug_str()
    assert text == str(ex._program)
    assert text.startswith("# forward\n") and "\n# backward\n" in text and "tanh" in text
