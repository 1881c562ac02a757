"""mx.operator behaviour beyond the golden runs: contexts, errors, the Prop protocol, monitors,
gradients checked numerically."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

from . import _custom_ops


@pytest.fixture(autouse=True, scope="module")
def _ops():
    _custom_ops.define(mx)


def _x(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def test_imperative_and_executor_on_every_context(ctx):
    a, b = mx.nd.array(_x(1, (2, 3)), ctx=ctx), mx.nd.array(_x(2, (2, 3)), ctx=ctx)
    p, m = mx.nd.Custom(a, b, op_type="t_scale_split", scale=3)
    assert p.context == ctx and m.context == ctx
    np.testing.assert_allclose(p.asnumpy(), a.asnumpy() * b.asnumpy() * 3, rtol=1e-6)
    net = mx.sym.Custom(mx.sym.Variable("a"), mx.sym.Variable("b"), op_type="t_scale_split",
                        scale=3)
    ex = net.bind(ctx, {"a": a, "b": b}, args_grad={"a": mx.nd.zeros((2, 3), ctx),
                                                     "b": mx.nd.zeros((2, 3), ctx)})
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((2, 3), ctx), mx.nd.zeros((2, 3), ctx)])
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), p.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), 3 * b.asnumpy(), rtol=1e-6)


def test_numeric_gradient():
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="t_square")
    mx.test_utils.check_numeric_gradient(net, [_x(3, (3, 2)).astype(np.float64)],
                                         rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_kwargs_reach_the_prop_as_strings():
    del _custom_ops.SEEN_KWARGS[:]
    mx.nd.Custom(mx.nd.ones((1,)), mx.nd.ones((1,)), op_type="t_scale_split", scale=2,
                 flag=False, axis=(0, 1), dt=np.float32)
    assert _custom_ops.SEEN_KWARGS[-1] == [("axis", "str", "(0, 1)"), ("dt", "str", "float32"),
                                          ("flag", "str", "False"), ("scale", "str", "2")]


def test_loss_op_needs_no_head_gradient():
    net = mx.sym.Custom(mx.sym.Variable("data"), mx.sym.Variable("label"), op_type="t_softmax")
    ex = net.simple_bind(mx.cpu(), data=(2, 3), label=(2,))
    ex.forward(is_train=True, data=_x(4, (2, 3)), label=np.array([0, 1], np.float32))
    ex.backward()  # need_top_grad=False: a loss head
    assert np.abs(ex.grad_dict["data"].asnumpy()).sum() > 0
    net2 = mx.sym.Custom(mx.sym.Variable("data"), op_type="t_square")
    ex2 = net2.simple_bind(mx.cpu(), data=(2,))
    ex2.forward(is_train=True)
    with pytest.raises(MXNetError, match="head_gradient is required"):
        ex2.backward()


def test_names_and_shape_inference():
    net = mx.sym.Custom(op_type="t_running_mean", name="rm")
    assert net.list_arguments() == ["rm_data"]
    assert net.list_auxiliary_states() == ["rm_mean"]
    assert net.infer_shape(rm_data=(4, 3)) == ([(4, 3)], [(4, 3)], [(3,)])
    sm = mx.sym.Custom(mx.sym.Variable("d"), op_type="t_softmax", name="sm")
    assert sm.infer_shape(d=(5, 2))[0] == [(5, 2), (5,)]
    assert sm.infer_type(d=np.float64, sm_label=np.float32)[1] == [np.float64]
    back = mx.sym.load_json(sm.tojson())
    assert back.tojson() == sm.tojson() and back.list_arguments() == ["d", "sm_label"]


def test_unknown_or_missing_op_type():
    with pytest.raises(MXNetError, match="nope"):
        mx.nd.Custom(mx.nd.ones((1,)), op_type="nope")
    with pytest.raises(MXNetError, match="op_type"):
        mx.sym.Custom(mx.sym.Variable("x"))


def test_errors_name_the_custom_op_and_the_cause():
    with pytest.raises(MXNetError, match="(?s)CustomOp.forward.*failed on purpose"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="t_failing").asnumpy()
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="t_failing", where="backward")
    with pytest.raises(MXNetError, match="(?s)CustomOp.backward.*failed on purpose"):
        y.backward()
        x.grad.asnumpy()
    ex = mx.sym.Custom(mx.sym.Variable("d"), op_type="t_failing", name="bad").simple_bind(
        mx.cpu(), d=(2,))
    ex.forward()  # asynchronous: the error comes at the next read
    with pytest.raises(MXNetError, match=r"(?s)bad \(Custom\).*CustomOp.forward"):
        ex.outputs[0].asnumpy()


def test_prop_method_errors():
    class Bad(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            raise KeyError("no shapes today")

    mx.operator.register("t_bad_shape")(Bad)
    with pytest.raises(MXNetError, match="t_bad_shape.infer_shape"):
        mx.sym.Custom(mx.sym.Variable("x"), op_type="t_bad_shape").infer_shape(x=(2,))


def test_assign_requests():
    op = mx.operator.CustomOp()
    dst = mx.nd.ones((2,))
    op.assign(dst, "null", mx.nd.array([5, 5]))
    op.assign(dst, "add", mx.nd.array([1, 2]))
    assert dst.asnumpy().tolist() == [2, 3]
    op.assign(dst, "inplace", mx.nd.array([7, 8]))
    op.assign(dst, "write", dst * 2)
    assert dst.asnumpy().tolist() == [14, 16]


def test_monitor_sees_custom_outputs():
    net = mx.sym.Custom(mx.sym.Variable("d"), op_type="t_square", name="sq")
    ex = net.simple_bind(mx.cpu(), d=(2,))
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward(d=np.array([1, 2], np.float32))
    mx.nd.waitall()
    assert b"sq_output" in seen


def test_default_prop_and_registry_helpers():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="custom_op")  # the do-nothing default
    assert y.shape == (2,)
    assert "FullyConnected" in mx.operator.get_all_registered_operators()
    args = mx.operator.get_operator_arguments("Activation")
    assert args.narg == 1 and args.names == ["act_type"]


def test_example_trains():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "examples" / "custom_op.py"
    spec = importlib.util.spec_from_file_location("custom_op_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    precision, recall = mod.main(["--synthetic", "--epochs", "2"])
    assert precision > 0.8 and recall > 0.8
