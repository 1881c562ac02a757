"""Scenarios of ``mx.autograd``, written once against the ``mx`` they are given:
``tools/make_golden_autograd.py`` runs them in MXNet 1.9.1 and records the results
(tests/golden/autograd); tests/autograd/test_golden_autograd.py runs them with neomx and
compares. Only numpy and the given ``mx`` are used here (no neomx, no mxnet import).

A case (the generator's table, stored in autograd.json) has Python ``code`` that sets ``out``
from ``mx``, ``autograd``, ``np`` and the inputs as local names; see the generator for its
kinds.
"""
import json

import numpy as np


def run_first_order(mx, case, arrs, head=None):
    """A ``backward`` or ``grad`` case on the input arrays ``arrs`` (name -> NDArray; names in
    ``case['ints']`` get no gradient) with the head gradient ``head`` (an NDArray or None):
    ``(out, {name: gradient})``, the gradients ``.grad`` after ``backward`` (``repeat``
    times) or what ``autograd.grad`` returns."""
    autograd = mx.autograd
    diff = [k for k in arrs if k not in case["ints"]]
    env = dict(arrs, mx=mx, autograd=autograd, np=np)
    kind = case["kind"]
    if kind == "backward":
        for k in diff:
            arrs[k].attach_grad(case["grad_req"])
        for _ in range(case["repeat"]):
            with autograd.record():
                exec(case["code"], env)  # noqa: S102  (the cases' own code)
            env["out"].backward(head)
        return env["out"], {k: arrs[k].grad for k in diff}
    if kind == "grad":
        for k in diff:
            arrs[k].attach_grad()
        with autograd.record():
            exec(case["code"], env)  # noqa: S102
        gs = autograd.grad(env["out"], [arrs[k] for k in diff], head_grads=head)
        return env["out"], dict(zip(diff, gs))
    raise ValueError(kind)


def record_second_order(mx, code, x):
    """A ``grad2`` case's first derivative, recorded: ``(out, g)`` with
    ``g = autograd.grad(out, [x], create_graph=True)[0]``; ``g.backward()`` is the caller's."""
    autograd = mx.autograd
    x.attach_grad()
    with autograd.record():
        env = {"x": x, "mx": mx, "autograd": autograd, "np": np}
        exec(code, env)  # noqa: S102
        g = autograd.grad(env["out"], [x], create_graph=True)[0]
    return env["out"], g


def flags(mx):
    """is_recording/is_training inside the scopes, and what the setters return."""
    autograd = mx.autograd
    out = {"default": [autograd.is_recording(), autograd.is_training()]}
    with autograd.record():
        out["record"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.pause():
            out["record_pause"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.pause(train_mode=True):
            out["record_pause_train"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.predict_mode():
            out["record_predict"] = [autograd.is_recording(), autograd.is_training()]
    with autograd.record(train_mode=False):
        out["record_predict_arg"] = [autograd.is_recording(), autograd.is_training()]
        with autograd.train_mode():
            out["record_false_train"] = [autograd.is_recording(), autograd.is_training()]
    out["setters"] = [autograd.set_recording(True), autograd.set_recording(False),
                      autograd.set_training(True), autograd.set_training(False)]
    out["after"] = [autograd.is_recording(), autograd.is_training()]
    return out


def symbols(mx):
    """get_symbol of a small recorded graph: its nodes' ops, attrs and inputs (names are
    counters) and its arg_nodes."""
    autograd = mx.autograd
    a = mx.nd.array([[1., 2.]])
    a.attach_grad()
    w = mx.nd.array([[3., 4.]])
    w.attach_grad()
    with autograd.record():
        y = mx.nd.FullyConnected(a, w, num_hidden=1, no_bias=True) * 2 + a.sum()
    js = json.loads(autograd.get_symbol(y).tojson())
    return {"fc": [[n["op"], n.get("attrs", {}), [i[:2] for i in n["inputs"]]]
                   for n in js["nodes"]],
            "fc_arg_nodes": js["arg_nodes"]}


def error_scenarios(mx):
    """The misuse MXNet refuses (and neomx must refuse the same way): name -> a function that
    raises."""
    autograd = mx.autograd

    def marked():
        a = mx.nd.array([1., 2.])
        a.attach_grad()
        return a

    def twice():
        a = marked()
        with autograd.record():
            y = a * a
        y.backward()
        y.backward()

    def unrecorded():
        a = marked()
        (a * a).backward()

    def shared_freed():
        a = marked()
        with autograd.record():
            y = a * a
            z = y + 1
        z.backward()
        y.backward()

    def inplace_var():
        a = marked()
        with autograd.record():
            a += 1

    def inplace_needed():
        a = marked()
        with autograd.record():
            y = a * 2
            z = y * y  # noqa: F841
            y *= 3

    def setitem_in_graph():
        a = marked()
        with autograd.record():
            y = a * 2
            y[:] = 1

    def out_in_graph():
        a = marked()
        with autograd.record():
            y = a * 2
            mx.nd.relu(a, out=y)

    def no_grad_inputs():
        a = mx.nd.array([1., 2.])
        a.attach_grad(grad_req="null")
        with autograd.record():
            y = a * a
        y.backward()

    def grad_unmarked():
        a = marked()
        b = mx.nd.array([1., 2.])
        with autograd.record():
            y = a * b
        autograd.grad(y, [a, b])

    def grad_unreachable():
        a, b = marked(), marked()
        with autograd.record():
            y = a * a
        autograd.grad(y, [a, b])

    def grad_twice():
        a = marked()
        with autograd.record():
            y = a * a
        autograd.grad(y, [a])
        y.backward()

    def symbol_unrecorded():
        autograd.get_symbol(mx.nd.array([1., 2.]) * 2)

    def function_twice():
        class Double(autograd.Function):
            def forward(self, x):
                return x * 2

            def backward(self, dy):
                return dy * 2
        f = Double()
        a = marked()
        with autograd.record():
            f(a)
            f(a)

    def non_differentiable():
        a = marked()
        with autograd.record():
            y = mx.nd.sgd_update(a, a, lr=0.1)
        y.backward()

    return {
        "backward_twice": twice, "backward_unrecorded": unrecorded,
        "backward_shared_freed": shared_freed, "inplace_variable": inplace_var,
        "inplace_needed": inplace_needed, "setitem_in_graph": setitem_in_graph,
        "out_in_graph": out_in_graph, "no_inputs_require_grad": no_grad_inputs,
        "grad_not_variable": grad_unmarked, "grad_unreachable": grad_unreachable,
        "grad_frees_graph": grad_twice, "get_symbol_unrecorded": symbol_unrecorded,
        "function_called_twice": function_twice, "non_differentiable": non_differentiable,
    }
