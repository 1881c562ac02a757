"""The symbol checkers of mx.test_utils pass on right answers and fail on wrong ones."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx
from neomx import test_utils as tu


@pytest.fixture
def fixed_seed():
    """A fixed seed: these tests check statistical and finite-difference checkers, whose
    verdicts may flip for rare draws."""
    np.random.seed(1234)
    mx.random.seed(1234)


def fc_sym():
    with mx.name.NameManager():
        return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")


def test_numeric_gradient_passes_on_fully_connected(fixed_seed):
    s = fc_sym()
    loc = {"data": np.random.rand(2, 4), "fc_weight": np.random.rand(3, 4),
           "fc_bias": np.random.rand(3)}
    tu.check_numeric_gradient(s, loc, numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(s, loc, grad_nodes=["data"], dtype=np.float64)


def test_numeric_gradient_fails_on_a_wrong_gradient(fixed_seed):
    x = mx.sym.Variable("x")
    s = mx.sym.BlockGrad(x) * x  # backward sees only one factor: d/dx = x, not 2x
    with pytest.raises(AssertionError, match="NUMERICAL_x"):
        tu.check_numeric_gradient(s, [np.random.rand(3) + 0.5])


def test_numeric_gradient_with_aux_states(fixed_seed):
    with mx.name.NameManager():
        s = mx.sym.BatchNorm(mx.sym.Variable("data"), fix_gamma=False, name="bn")
    loc = [np.random.rand(4, 2, 3), np.random.rand(2) + 0.5, np.random.rand(2)]
    tu.check_numeric_gradient(s, loc, aux_states=[np.zeros(2), np.ones(2)],
                              numeric_eps=1e-3, rtol=5e-2, atol=1e-2)


def test_symbolic_forward_multi_output_and_errors():
    x = mx.sym.Variable("x")
    s = mx.sym.Group([x * 2, x + 1])
    v = np.arange(4, dtype=np.float32)
    outs = tu.check_symbolic_forward(s, [v], [v * 2, v + 1])
    assert len(outs) == 2
    with pytest.raises(AssertionError, match="EXPECTED_.*FORWARD_"):
        tu.check_symbolic_forward(s, [v], [v * 2, v + 2])
    with pytest.raises(ValueError, match="do not match"):
        tu.check_symbolic_forward(s, {"y": v}, [v])


def test_symbolic_backward_grad_req_forms(fixed_seed):
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = x * y
    xv, yv, og = (np.random.rand(2, 2).astype(np.float32) for _ in range(3))
    grads = tu.check_symbolic_backward(s, [xv, yv], [og], [og * yv, og * xv],
                                       grad_req=["write", "add"])
    assert set(grads) == {"x", "y"}
    tu.check_symbolic_backward(s, [xv, yv], {s.list_outputs()[0]: og}, [og * yv, og * xv])
    tu.check_symbolic_backward(s, [xv, yv], [og], [og * yv, og * xv], dtype=np.float64)
    with pytest.raises(AssertionError, match="BACKWARD_y"):
        tu.check_symbolic_backward(s, [xv, yv], [og], [og * yv, og * yv + 1])
    with pytest.raises(AssertionError):  # 'add' is checked as the change of the buffer
        tu.check_symbolic_backward(s, [xv, yv], [og], {"x": og * yv, "y": og * xv + 1},
                                   grad_req={"x": "write", "y": "add"})


def test_check_consistency_across_contexts_and_dtypes(fixed_seed):
    s = fc_sym()
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float64}},
                {"ctx": mx.cpu(1), "data": (2, 4), "type_dict": {"data": np.float32}},
                {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float16}}]
    gt = tu.check_consistency(s, ctx_list)
    assert set(gt) == {"fc_output", "data", "fc_weight", "fc_bias"}
    assert np.dtype(gt["fc_output"].dtype) == np.float64
    tu.check_consistency(s, ctx_list[:2], grad_req="null")
    tu.check_consistency(s, ctx_list[:2], grad_req="add")


def test_check_consistency_fails_on_a_wrong_ground_truth(fixed_seed, capsys):
    s = fc_sym()
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 4)}, {"ctx": mx.cpu(1), "data": (2, 4)}]
    wrong = {"fc_output": np.full((2, 3), 7.0)}
    with pytest.raises(AssertionError):
        tu.check_consistency(s, ctx_list, ground_truth=wrong, grad_req="null")
    assert "Predict Err" in capsys.readouterr().out
    tu.check_consistency(s, ctx_list, ground_truth=wrong, grad_req="null", raise_on_err=False)


def test_check_consistency_fails_for_different_symbols(fixed_seed):
    with mx.name.NameManager():
        a = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu", name="act")
        b = mx.sym.Activation(mx.sym.Variable("data"), act_type="tanh", name="act")
    ctx_list = [{"ctx": mx.cpu(0), "data": (3, 3)}, {"ctx": mx.cpu(0), "data": (3, 3)}]
    with pytest.raises(AssertionError):
        tu.check_consistency([a, b], ctx_list)


def test_simple_forward_and_check_speed():
    x = mx.sym.Variable("x")
    assert tu.simple_forward(x * 3, x=np.ones(2)).tolist() == [3.0, 3.0]
    outs = tu.simple_forward(mx.sym.Group([x, x + 1]), x=np.zeros(1))
    assert [o.tolist() for o in outs] == [[0.0], [1.0]]
    s = fc_sym()
    assert tu.check_speed(s, N=2, data=(4, 4)) > 0
    assert tu.check_speed(s, location={"data": np.ones((4, 4)), "fc_weight": np.ones((3, 4)),
                                       "fc_bias": np.ones(3)}, N=2, typ="forward") > 0
    with pytest.raises(ValueError):
        tu.check_speed(s, N=1, typ="backward", data=(4, 4))


def test_compare_optimizer_passes_and_fails():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                             mx.optimizer.SGD(learning_rate=0.5), (3, 4), np.float32)


def test_same_symbol_structure():
    x = mx.sym.Variable("x")
    assert tu.same_symbol_structure(x + 1, x + 2)
    assert not tu.same_symbol_structure(x + 1, x * 2)
