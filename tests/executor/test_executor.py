"""Executor semantics (MXNET_SEMANTICS.md §4): simple_bind/bind, grad_req, forward kwargs,
backward head gradients, write vs add, label grads, reshape, copy_params_from, monitor
callbacks, outputs updated in place, and executors on cpu(1)."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

nd = mx.nd
MXNetError = mx.base.MXNetError
SENTINEL = 12345.0
B, D, H, K = 2, 5, 4, 3   # batch, input features, hidden units, classes


def mlp():
    """data -> fc1 -> relu1 -> fc2 -> softmax (SoftmaxOutput, label 'softmax_label')."""
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        net = mx.sym.FullyConnected(data, num_hidden=H, name="fc1")
        net = mx.sym.Activation(net, act_type="relu", name="relu1")
        net = mx.sym.FullyConnected(net, num_hidden=K, name="fc2")
        return mx.sym.SoftmaxOutput(net, name="softmax")


MLP_ARGS = ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "softmax_label"]
MLP_SHAPES = {"data": (B, D), "fc1_weight": (H, D), "fc1_bias": (H,), "fc2_weight": (K, H),
              "fc2_bias": (K,), "softmax_label": (B,)}


def fc():
    """A non-loss head: y = data . weight^T + bias."""
    with mx.name.NameManager():
        return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=K, name="fc")


def rand(shape, seed):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def fill(ex, seed=0):
    """Random values in every argument (labels get valid classes); returns them as numpy."""
    vals = {}
    for i, (name, arr) in enumerate(ex.arg_dict.items()):
        v = (np.arange(arr.shape[0]) % K).astype(np.float32) if name.endswith("label") \
            else rand(arr.shape, seed + i)
        arr[:] = v
        vals[name] = v
    return vals


def fc_reference(x, w, b, g):
    """Forward and gradients of FullyConnected for head gradient g."""
    return x @ w.T + b, {"data": g @ w, "fc_weight": g.T @ x, "fc_bias": g.sum(axis=0)}


def mlp_reference(v):
    """Forward output and gradients of the MLP (SoftmaxOutput, normalization 'null')."""
    x, w1, b1, w2, b2 = (v[n].astype(np.float64) for n in MLP_ARGS[:5])
    label = v["softmax_label"].astype(int)
    h = x @ w1.T + b1
    r = np.maximum(h, 0)
    z = r @ w2.T + b2
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = p - np.eye(K)[label]
    dr = dz @ w2
    dh = dr * (h > 0)
    grads = {"data": dh @ w1, "fc1_weight": dh.T @ x, "fc1_bias": dh.sum(0),
             "fc2_weight": dz.T @ r, "fc2_bias": dz.sum(0)}
    return p, grads


def close(a, b):
    return np.allclose(a, b, rtol=1e-4, atol=1e-5)


# --- simple_bind allocation ---------------------------------------------------------------------
def test_simple_bind_allocates_zeroed_args_and_grads():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    assert list(ex.arg_dict) == MLP_ARGS
    assert len(ex.arg_arrays) == len(ex.grad_arrays) == len(MLP_ARGS)
    for name, arr, grad in zip(MLP_ARGS, ex.arg_arrays, ex.grad_arrays):
        assert arr.shape == MLP_SHAPES[name], name
        assert arr.dtype == np.float32 and arr.context == mx.cpu()
        assert np.all(arr.asnumpy() == 0), f"{name} not zeroed"
        assert grad is not None and grad.shape == arr.shape, name
        assert np.all(grad.asnumpy() == 0), f"grad of {name} not zeroed"
        assert grad is not arr
    assert ex.aux_arrays == [] and ex.aux_dict == {}
    assert [o.shape for o in ex.outputs] == [(B, K)]
    assert list(ex.output_dict) == ["softmax_output"]
    assert list(ex.grad_dict) == MLP_ARGS


def test_simple_bind_dicts_are_the_list_arrays():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    for name, arr, grad in zip(MLP_ARGS, ex.arg_arrays, ex.grad_arrays):
        assert ex.arg_dict[name] is arr
        assert ex.grad_dict[name] is grad
    assert ex.output_dict["softmax_output"] is ex.outputs[0]


def test_simple_bind_type_dict():
    ex = fc().simple_bind(mx.cpu(), type_dict={"data": "float64"}, data=(B, D))
    assert all(a.dtype == np.float64 for a in ex.arg_arrays)
    assert ex.outputs[0].dtype == np.float64


def test_simple_bind_ignores_unknown_shape_names():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D), not_an_argument=(7, 7))
    assert [a.shape for a in ex.arg_arrays] == [MLP_SHAPES[n] for n in MLP_ARGS]


def test_simple_bind_error_is_runtime_error_listing_arguments():
    with pytest.raises(RuntimeError) as ei:
        mlp().simple_bind(mx.cpu(), data=(B, D), softmax_label=(5,))
    assert str(ei.value).startswith("simple_bind error. Arguments:\ndata: (2, 5)\n"
                                    "softmax_label: (5,)\n")
    assert "softmax" in str(ei.value)


# --- grad_req ---------------------------------------------------------------------------------------
def test_grad_req_null_str_gives_no_grads():
    ex = mlp().simple_bind(mx.cpu(), grad_req="null", data=(B, D))
    assert all(g is None for g in ex.grad_arrays)
    fill(ex)
    ex.forward(is_train=True)
    ex.backward()  # nothing to compute, nothing raised


def test_grad_req_list_in_argument_order():
    reqs = ["null", "write", "null", "add", "write", "null"]
    ex = mlp().simple_bind(mx.cpu(), grad_req=reqs, data=(B, D))
    for name, req in zip(MLP_ARGS, reqs):
        assert (ex.grad_dict[name] is None) == (req == "null"), name


def test_grad_req_dict_missing_names_are_null():
    ex = mlp().simple_bind(mx.cpu(), grad_req={"fc1_weight": "write", "fc2_bias": "add"},
                           data=(B, D))
    assert [n for n in MLP_ARGS if ex.grad_dict[n] is not None] == ["fc1_weight", "fc2_bias"]
    v = fill(ex)
    ex.forward(is_train=True)
    ex.backward()
    _, grads = mlp_reference(v)
    assert close(ex.grad_dict["fc1_weight"].asnumpy(), grads["fc1_weight"])
    assert close(ex.grad_dict["fc2_bias"].asnumpy(), grads["fc2_bias"])


@pytest.mark.parametrize("req", [[], {}], ids=["list", "dict"])
def test_grad_req_empty_raises(req):
    with pytest.raises(RuntimeError):
        mlp().simple_bind(mx.cpu(), grad_req=req, data=(B, D))


def test_write_overwrites_and_add_accumulates():
    ex_w = mlp().simple_bind(mx.cpu(), grad_req="write", data=(B, D))
    ex_a = mlp().simple_bind(mx.cpu(), grad_req="add", data=(B, D))
    v = fill(ex_w)
    fill(ex_a)
    _, grads = mlp_reference(v)
    for ex in (ex_w, ex_a):
        for g in ex.grad_arrays:
            g[:] = 1.0
        for _ in range(2):
            ex.forward(is_train=True)
            ex.backward()
    for name in MLP_ARGS[:5]:
        assert close(ex_w.grad_dict[name].asnumpy(), grads[name]), name
        assert close(ex_a.grad_dict[name].asnumpy(), 1.0 + 2 * grads[name]), name


# --- forward -----------------------------------------------------------------------------------------
def test_forward_matches_reference_and_returns_outputs():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    outs = ex.forward(is_train=False)
    assert outs is ex.outputs or list(outs) == list(ex.outputs)
    p, _ = mlp_reference(v)
    assert close(ex.outputs[0].asnumpy(), p)


@pytest.mark.parametrize("kind", ["ndarray", "numpy"])
def test_forward_kwargs_are_copied_into_the_arguments(kind):
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    data_arr = ex.arg_dict["data"]
    x = rand((B, D), 99)
    ex.forward(data=nd.array(x) if kind == "ndarray" else x)
    assert ex.arg_dict["data"] is data_arr
    assert np.array_equal(data_arr.asnumpy(), x)
    y, _ = fc_reference(x, v["fc_weight"], v["fc_bias"], np.zeros((B, K)))
    assert close(ex.outputs[0].asnumpy(), y)


def test_forward_unknown_kwarg_raises_type_error():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    with pytest.raises(TypeError, match="Unknown argument zzz"):
        ex.forward(zzz=nd.ones((B, D)))


def test_forward_kwarg_with_bad_shape_raises_value_error():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    with pytest.raises(ValueError, match=r"Shape not match! Argument data, need: \(2, 5\), "
                                         r"received: \(3, 5\)"):
        ex.forward(data=nd.ones((3, D)))


def test_outputs_update_in_place_across_forwards():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    out = ex.outputs[0]
    ex.forward()
    first = out.asnumpy()
    x2 = rand((B, D), 7)
    ex.forward(data=x2)
    assert ex.outputs[0] is out
    y2, _ = fc_reference(x2, v["fc_weight"], v["fc_bias"], np.zeros((B, K)))
    assert close(out.asnumpy(), y2)
    assert not np.allclose(first, y2)


def test_output_that_is_an_argument_does_not_alias_it():
    x = mx.sym.Variable("x")
    ex = mx.sym.Group([x, x * 2]).simple_bind(mx.cpu(), x=(2,))
    ex.arg_dict["x"][:] = 3
    ex.forward()
    assert ex.outputs[1].asnumpy().tolist() == [6, 6]


# --- bind ------------------------------------------------------------------------------------------------
def _fc_arrays(seed=0):
    return {"data": nd.array(rand((B, D), seed)), "fc_weight": nd.array(rand((K, D), seed + 1)),
            "fc_bias": nd.array(rand((K,), seed + 2))}


def test_bind_uses_the_given_arrays_themselves():
    args = _fc_arrays()
    grads = {n: nd.zeros(a.shape) for n, a in args.items()}
    ex = fc().bind(mx.cpu(), args=args, args_grad=grads)
    for name in ["data", "fc_weight", "fc_bias"]:
        assert ex.arg_dict[name] is args[name]
        assert ex.grad_dict[name] is grads[name]
    x = rand((B, D), 42)
    args["data"][:] = x  # writing the caller's array changes what the executor reads
    ex.forward(is_train=True)
    g = rand((B, K), 5)
    ex.backward(nd.array(g))
    y, ref = fc_reference(x, args["fc_weight"].asnumpy(), args["fc_bias"].asnumpy(), g)
    assert close(ex.outputs[0].asnumpy(), y)
    for name in ref:
        assert close(grads[name].asnumpy(), ref[name]), name  # written into the caller's arrays


def test_bind_list_args_in_argument_order():
    args = _fc_arrays()
    lst = [args["data"], args["fc_weight"], args["fc_bias"]]
    ex = fc().bind(mx.cpu(), args=lst)
    assert all(a is b for a, b in zip(ex.arg_arrays, lst))


def test_bind_list_of_wrong_length_raises_value_error():
    args = _fc_arrays()
    with pytest.raises(ValueError):
        fc().bind(mx.cpu(), args=[args["data"], args["fc_weight"]])


def test_bind_dict_missing_arg_raises_value_error():
    args = _fc_arrays()
    del args["fc_bias"]
    with pytest.raises(ValueError, match="key `fc_bias` is missing in `args`"):
        fc().bind(mx.cpu(), args=args)


def test_bind_without_args_grad_has_no_grad_arrays():
    ex = fc().bind(mx.cpu(), args=_fc_arrays())
    assert ex.grad_arrays is None
    with pytest.raises(TypeError):
        ex.grad_dict
    ex.forward()
    assert ex.outputs[0].shape == (B, K)


def test_bind_args_grad_dict_may_leave_names_out():
    args = _fc_arrays()
    gw = nd.full((K, D), SENTINEL)
    ex = fc().bind(mx.cpu(), args=args, args_grad={"fc_weight": gw})
    assert ex.grad_dict["fc_weight"] is gw
    assert ex.grad_dict["data"] is None and ex.grad_dict["fc_bias"] is None
    ex.forward(is_train=True)
    g = rand((B, K), 3)
    ex.backward(nd.array(g))
    _, ref = fc_reference(args["data"].asnumpy(), args["fc_weight"].asnumpy(), 0, g)
    assert close(gw.asnumpy(), ref["fc_weight"])


def test_bind_grad_req_add_on_given_arrays():
    args = _fc_arrays()
    gw = nd.ones((K, D))
    ex = fc().bind(mx.cpu(), args=args, args_grad={"fc_weight": gw}, grad_req="add")
    g = rand((B, K), 3)
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(nd.array(g))
    _, ref = fc_reference(args["data"].asnumpy(), args["fc_weight"].asnumpy(), 0, g)
    assert close(gw.asnumpy(), 1 + 2 * ref["fc_weight"])


# --- backward -------------------------------------------------------------------------------------------
def _fc_exec():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    ex.forward(is_train=True)
    return ex, v


@pytest.mark.parametrize("form", ["ndarray", "list", "dict"])
def test_backward_out_grads_forms(form):
    ex, v = _fc_exec()
    g = rand((B, K), 11)
    out_grads = {"ndarray": nd.array(g), "list": [nd.array(g)],
                 "dict": {"fc_output": nd.array(g)}}[form]
    ex.backward(out_grads)
    _, ref = fc_reference(v["data"], v["fc_weight"], v["fc_bias"], g)
    for name in ref:
        assert close(ex.grad_dict[name].asnumpy(), ref[name]), name


def test_backward_two_heads_by_dict():
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        a = mx.sym.FullyConnected(data, num_hidden=K, name="a")
        b = mx.sym.FullyConnected(data, num_hidden=K, name="b")
    ex = mx.sym.Group([a, b]).simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    ex.forward(is_train=True)
    ga, gb = rand((B, K), 1), rand((B, K), 2)
    ex.backward({"b_output": nd.array(gb), "a_output": nd.array(ga)})
    assert close(ex.grad_dict["a_weight"].asnumpy(), ga.T @ v["data"])
    assert close(ex.grad_dict["b_weight"].asnumpy(), gb.T @ v["data"])
    assert close(ex.grad_dict["data"].asnumpy(), ga @ v["a_weight"] + gb @ v["b_weight"])


def test_non_loss_head_without_out_grads_raises_mxnet_error():
    ex, _ = _fc_exec()
    with pytest.raises(MXNetError):
        ex.backward()


def test_loss_head_ignores_out_grads():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex)
    _, ref = mlp_reference(v)
    ex.forward(is_train=True)
    ex.backward(nd.full((B, K), 5.0))
    for name in MLP_ARGS[:5]:
        assert close(ex.grad_dict[name].asnumpy(), ref[name]), name


def test_backward_can_run_twice_after_one_forward():
    ex = mlp().simple_bind(mx.cpu(), grad_req="add", data=(B, D))
    v = fill(ex)
    _, ref = mlp_reference(v)
    ex.forward(is_train=True)
    ex.backward()
    ex.backward()
    for name in MLP_ARGS[:5]:
        assert close(ex.grad_dict[name].asnumpy(), 2 * ref[name]), name


def test_label_grads_are_never_written():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    fill(ex)
    ex.grad_dict["softmax_label"][:] = SENTINEL
    ex.forward(is_train=True)
    ex.backward()
    assert np.all(ex.grad_dict["softmax_label"].asnumpy() == SENTINEL)
    assert not np.all(ex.grad_dict["fc1_weight"].asnumpy() == 0)


def test_label_grads_are_never_written_with_bind_sentinels():
    sym = mlp()
    ex0 = sym.simple_bind(mx.cpu(), data=(B, D))
    v = fill(ex0)
    args = {n: nd.array(v[n]) for n in MLP_ARGS}
    grads = {n: nd.full(MLP_SHAPES[n], SENTINEL) for n in MLP_ARGS}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward()
    assert np.all(grads["softmax_label"].asnumpy() == SENTINEL)
    assert not np.any(grads["data"].asnumpy() == SENTINEL)


def test_backward_after_inference_forward_raises_nothing():
    """MXNet runs backward on the values of an is_train=False forward: for this MLP (no
    Dropout/BatchNorm) the gradients of a training forward. Backward is asynchronous: reading
    the gradients waits for it and re-raises its errors."""
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    vals = fill(ex)
    ex.forward(is_train=False)
    ex.backward()
    _, want = mlp_reference(vals)
    for name, g in want.items():
        assert close(ex.grad_dict[name].asnumpy(), g), name


# --- reshape --------------------------------------------------------------------------------------------
def _trained_mlp_exec():
    ex = mlp().simple_bind(mx.cpu(), data=(4, D))
    fill(ex, seed=3)
    return ex


def test_reshape_smaller_batch_shares_parameters():
    ex = _trained_mlp_exec()
    ex2 = ex.reshape(data=(1, D), softmax_label=(1,))
    assert ex2.arg_dict["data"].shape == (1, D)
    assert ex2.arg_dict["softmax_label"].shape == (1,)
    for name in ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]:
        assert ex2.arg_dict[name].shape == ex.arg_dict[name].shape
        ex.arg_dict[name][:] = 0.25
        assert np.all(ex2.arg_dict[name].asnumpy() == 0.25), f"{name} not shared"
        ex2.arg_dict[name][:] = -0.5
        assert np.all(ex.arg_dict[name].asnumpy() == -0.5), f"{name} not shared"


def test_reshape_smaller_inputs_are_views_of_the_old_buffers():
    ex = _trained_mlp_exec()
    ex2 = ex.reshape(data=(1, D), softmax_label=(1,))
    ex2.arg_dict["data"][:] = 7.0
    assert np.all(ex.arg_dict["data"].asnumpy().reshape(-1)[:D] == 7.0)


def test_reshaped_executor_computes_with_shared_parameters():
    ex = _trained_mlp_exec()
    ex2 = ex.reshape(data=(1, D), softmax_label=(1,))
    x = rand((1, D), 77)
    ex2.forward(is_train=False, data=x)
    v = {n: ex.arg_dict[n].asnumpy() for n in MLP_ARGS}
    v["data"], v["softmax_label"] = x, np.zeros(1, np.float32)
    p, _ = mlp_reference(v)
    assert close(ex2.outputs[0].asnumpy(), p)
    assert ex2.outputs[0].shape == (1, K)


def test_reshape_growing_without_allow_up_sizing_raises():
    ex = _trained_mlp_exec()
    with pytest.raises(MXNetError):
        ex.reshape(data=(8, D), softmax_label=(8,))


def test_reshape_growing_with_allow_up_sizing():
    ex = _trained_mlp_exec()
    ex2 = ex.reshape(allow_up_sizing=True, data=(8, D), softmax_label=(8,))
    assert ex2.arg_dict["data"].shape == (8, D)
    assert ex2.outputs[0].shape == (8, K)
    ex.arg_dict["fc1_weight"][:] = 0.125
    assert np.all(ex2.arg_dict["fc1_weight"].asnumpy() == 0.125)


def test_reshape_changing_an_unspecified_arg_needs_partial_shaping():
    ex = _trained_mlp_exec()
    with pytest.raises(MXNetError):
        ex.reshape(data=(2, D))  # softmax_label would change from (4,) to (2,)
    ex2 = ex.reshape(partial_shaping=True, data=(2, D))
    assert ex2.arg_dict["softmax_label"].shape == (2,)


def test_reshape_keeps_grad_arrays_for_parameters():
    ex = _trained_mlp_exec()
    ex2 = ex.reshape(data=(2, D), softmax_label=(2,))
    ex2.forward(is_train=True)
    ex2.backward()
    g = ex2.grad_dict["fc2_bias"].asnumpy()
    assert np.array_equal(ex.grad_dict["fc2_bias"].asnumpy(), g)  # the same grad storage


# --- copy_params_from -----------------------------------------------------------------------------------
def test_copy_params_from_copies_and_casts():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    w = rand((K, D), 1).astype(np.float64)
    weight_arr = ex.arg_dict["fc_weight"]
    ex.copy_params_from({"fc_weight": nd.array(w, dtype="float64"), "fc_bias": nd.ones((K,))})
    assert ex.arg_dict["fc_weight"] is weight_arr
    assert weight_arr.dtype == np.float32
    assert close(weight_arr.asnumpy(), w)
    assert np.all(ex.arg_dict["fc_bias"].asnumpy() == 1)


def test_copy_params_from_extra_name_raises_value_error():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    with pytest.raises(ValueError, match='Find name "zzz" that is not in the arguments'):
        ex.copy_params_from({"zzz": nd.ones((1,))})


def test_copy_params_from_allow_extra_params():
    ex = fc().simple_bind(mx.cpu(), data=(B, D))
    ex.copy_params_from({"zzz": nd.ones((1,)), "fc_bias": nd.ones((K,)) * 2},
                        allow_extra_params=True)
    assert np.all(ex.arg_dict["fc_bias"].asnumpy() == 2)


# --- monitor ------------------------------------------------------------------------------------------
def test_monitor_callback_gets_op_output_names_as_bytes():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    fill(ex)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward(is_train=False)
    nd.waitall()
    assert all(isinstance(n, bytes) for n in seen), seen
    for name in [b"fc1_output", b"relu1_output", b"fc2_output", b"softmax_output"]:
        assert name in seen
    assert b"fc1_weight" not in seen and b"data" not in seen


def test_monitor_all_adds_inputs():
    ex = mlp().simple_bind(mx.cpu(), data=(B, D))
    fill(ex)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    ex.forward(is_train=False)
    nd.waitall()
    assert all(isinstance(n, bytes) for n in seen)
    for name in [b"fc1_weight", b"fc1_output", b"fc2_weight", b"softmax_output"]:
        assert name in seen


# --- executors on other contexts ------------------------------------------------------------------------
def test_executor_on_cpu1():
    ex = mlp().simple_bind(mx.cpu(1), data=(B, D))
    assert all(a.context == mx.cpu(1) for a in ex.arg_arrays)
    assert all(g.context == mx.cpu(1) for g in ex.grad_arrays)
    assert ex.outputs[0].context == mx.cpu(1)
    v = fill(ex)
    ex.forward(is_train=True, data=nd.array(v["data"], ctx=mx.cpu(0)))
    ex.backward()
    p, grads = mlp_reference(v)
    assert ex.outputs[0].context == mx.cpu(1)
    assert close(ex.outputs[0].asnumpy(), p)
    assert close(ex.grad_dict["fc1_weight"].asnumpy(), grads["fc1_weight"])


def test_bind_on_cpu1_with_cpu1_arrays(ctx):
    args = {n: a.as_in_context(ctx) for n, a in _fc_arrays().items()}
    ex = fc().bind(ctx, args=args, args_grad={n: nd.zeros(a.shape, ctx=ctx) for n, a in args.items()})
    ex.forward(is_train=True)
    g = rand((B, K), 4)
    ex.backward(nd.array(g, ctx=ctx))
    _, ref = fc_reference(*(args[n].asnumpy() for n in ["data", "fc_weight", "fc_bias"]), g)
    assert ex.outputs[0].context == ctx
    assert close(ex.grad_dict["fc_weight"].asnumpy(), ref["fc_weight"])
