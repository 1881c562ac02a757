"""Module unit tests: construction, binding and batch slicing, parameters, optimizer and
KVStore choice, updates against hand-written SGD, outputs, predict, reshape, checkpoints."""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.module.executor_group import _split_input_slice

from ._helpers import as_numpy, assert_params_close, blobs, fixed_params, mlp

CTX2 = [mx.cpu(0), mx.cpu(1)]


def _bound(ctx=CTX2, batch=8, d=5, **kw):
    mod = mx.mod.Module(mlp(), context=ctx, **kw)
    mod.bind(data_shapes=[("data", (batch, d))], label_shapes=[("softmax_label", (batch,))])
    return mod


# --- batch slicing ----------------------------------------------------------------------------
@pytest.mark.parametrize("batch,work,expected", [
    (10, [1, 1, 1, 1], [(0, 2), (2, 4), (4, 6), (6, 10)]),
    (7, [1, 1], [(0, 4), (4, 7)]),          # round(3.5) = 4: half to even
    (9, [1, 2], [(0, 3), (3, 9)]),
    (5, [1, 1], [(0, 2), (2, 5)]),          # round(2.5) = 2
    (8, [1, 3], [(0, 2), (2, 8)]),
    (1, [1], [(0, 1)]),
])
def test_split_input_slice(batch, work, expected):
    assert [(s.start, s.stop) for s in _split_input_slice(batch, work)] == expected


@pytest.mark.parametrize("batch,work", [(6, [1, 1, 1, 1]), (3, [1, 1, 1, 1]), (1, [1, 1])])
def test_split_input_slice_empty_slices_fail(batch, work):
    with pytest.raises(ValueError, match="Too many slices. Some splits are empty."):
        _split_input_slice(batch, work)


def test_bind_six_on_four_devices_fails():
    mod = mx.mod.Module(mlp(), context=[mx.cpu(i) for i in range(4)])
    with pytest.raises(ValueError, match="Too many slices"):
        mod.bind(data_shapes=[("data", (6, 5))], label_shapes=[("softmax_label", (6,))])


def test_bind_one_executor_per_context_with_its_slice():
    mod = mx.mod.Module(mlp(), context=CTX2, work_load_list=[1, 2])
    mod.bind(data_shapes=[("data", (9, 5))], label_shapes=[("softmax_label", (9,))])
    group = mod._exec_group
    assert [e.arg_dict["data"].shape for e in group.execs] == [(3, 5), (6, 5)]
    assert [e.arg_dict["softmax_label"].shape for e in group.execs] == [(3,), (6,)]
    assert [e.arg_dict["data"].context for e in group.execs] == CTX2
    assert group.batch_size == 9
    assert mod.data_shapes[0] == ("data", (9, 5)) and mod.output_shapes == [("softmax_output", (9, 3))]


# --- construction -----------------------------------------------------------------------------
def test_constructor_checks():
    with pytest.raises(ValueError, match="data_names=.*'dat' is not found"):
        mx.mod.Module(mlp(), data_names=("dat",))
    with pytest.warns(UserWarning, match="label_names=.*'lbl' is not found"):
        mx.mod.Module(mlp(), label_names=("lbl",))
    with pytest.raises(ValueError, match="fixed_param"):
        mx.mod.Module(mlp(), fixed_param_names=["nope"])
    mod = mx.mod.Module(mlp())
    assert mod._param_names == ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert mod.output_names == ["softmax_output"]
    with pytest.raises(AssertionError):
        mx.mod.Module(mlp(), context=CTX2, work_load_list=[1])


def test_bind_names_must_match():
    mod = mx.mod.Module(mlp())
    with pytest.raises(ValueError, match="Data provided by data_shapes don't match"):
        mod.bind(data_shapes=[("x", (4, 5))])


# --- grad_req --------------------------------------------------------------------------------
def _reqs(mod):
    return mod._exec_group.grad_req


def test_bind_grad_req_rules():
    mod = mx.mod.Module(mlp(), fixed_param_names=["fc1_bias"])
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    assert _reqs(mod) == {"data": "null", "fc1_weight": "write", "fc1_bias": "null",
                          "fc2_weight": "write", "fc2_bias": "write", "softmax_label": "null"}
    ex = mod._exec_group.execs[0]
    assert ex.grad_dict["fc1_bias"] is None and ex.grad_dict["data"] is None

    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
             inputs_need_grad=True, grad_req="add")
    assert _reqs(mod)["data"] == "add" and _reqs(mod)["fc2_bias"] == "add"
    assert _reqs(mod)["softmax_label"] == "null"

    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
             for_training=False)
    assert set(_reqs(mod).values()) == {"null"} and mod._exec_group.grad_arrays is None

    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
             grad_req={"fc1_weight": "null"})
    assert _reqs(mod)["fc1_weight"] == "null" and _reqs(mod)["fc2_weight"] == "write"


def test_bind_twice_and_force_rebind(caplog):
    mod = _bound(ctx=mx.cpu())
    mod.init_params(arg_params=fixed_params(mlp(), (8, 5)))
    before = as_numpy(mod.get_params()[0])
    with caplog.at_level(logging.WARNING):
        mod.bind(data_shapes=[("data", (8, 5))])
    assert "Already bound, ignoring bind()" in caplog.text
    with pytest.warns(UserWarning, match="label_shapes don't match names"):
        mod.bind(data_shapes=[("data", (4, 5))], for_training=False, force_rebind=True)
    ex = mod._exec_group.execs[0]
    assert ex.arg_dict["data"].shape == (4, 5) and not mod.for_training
    assert_params_close({k: ex.arg_dict[k].asnumpy() for k in before}, before)


# --- parameters -------------------------------------------------------------------------------
def test_init_params_sorted_with_attrs_and_copied_to_every_device():
    seen = []

    def init(desc, arr):
        seen.append((str(desc), desc.attrs))
        arr[:] = len(seen)

    mod = _bound()
    mod.init_params(initializer=init)
    attrs = mlp().attr_dict()
    assert [n for n, _ in seen] == sorted(mod._param_names)
    assert all(a == attrs.get(n, {}) for n, a in seen)
    for n, value in zip(sorted(mod._param_names), range(1, 5)):
        for ex in mod._exec_group.execs:
            assert (ex.arg_dict[n].asnumpy() == value).all()
        assert mod.get_params()[0][n].context == mx.cpu(0)


def test_init_params_default_uniform_and_init_attr():
    w = mx.sym.Variable("fc1_weight", init=mx.init.One())
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), weight=w,
                                                     num_hidden=4, name="fc1"), name="softmax")
    mod = mx.mod.Module(net, context=CTX2)
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    args, _ = mod.get_params()
    assert (args["fc1_weight"].asnumpy() == 1).all()  # the __init__ attribute wins
    assert (args["fc1_bias"].asnumpy() == 0).all()
    mod2 = _bound()
    mod2.init_params()
    w2 = mod2.get_params()[0]["fc1_weight"].asnumpy()
    assert np.abs(w2).max() <= 0.01 and np.abs(w2).max() > 0  # Uniform(0.01)


def test_init_params_from_dicts_missing_and_force_init():
    params = fixed_params(mlp(), (8, 5))
    partial = {k: v for k, v in params.items() if k != "fc2_bias"}
    mod = _bound()
    with pytest.raises(RuntimeError, match="fc2_bias is not presented"):
        mod.init_params(arg_params=partial)
    mod.init_params(initializer=mx.init.Constant(0.5), arg_params=partial, allow_missing=True)
    got = as_numpy(mod.get_params()[0])
    assert_params_close({k: got[k] for k in partial}, as_numpy(partial))
    assert (got["fc2_bias"] == 0).all()  # Constant leaves biases at 0
    with pytest.warns(UserWarning, match="init_params call ignored"):
        mod.init_params(arg_params=params)
    mod.init_params(arg_params=params, force_init=True)
    assert_params_close(as_numpy(mod.get_params()[0]), as_numpy(params))
    # init_params only reads the names it needs (extra names are ignored, as in MXNet) ...
    mod.init_params(arg_params={**params, "zzz": mx.nd.ones((1,))}, force_init=True)
    # ... but set_params(allow_missing=True) copies the given dicts straight to the devices
    with pytest.raises(ValueError, match="not in the arguments"):
        mod.set_params({**params, "zzz": mx.nd.ones((1,))}, {}, allow_missing=True)
    mod.set_params({**params, "zzz": mx.nd.ones((1,))}, {}, allow_missing=True, allow_extra=True)


def test_get_params_is_the_mean_over_devices_and_set_params_copies():
    mod = _bound()
    mod.init_params(arg_params=fixed_params(mlp(), (8, 5)))
    for k, ex in enumerate(mod._exec_group.execs):
        ex.arg_dict["fc2_bias"][:] = k * 2 + 1  # 1 and 3
    mod._params_dirty = True
    args, aux = mod.get_params()
    assert (args["fc2_bias"].asnumpy() == 2).all() and aux == {}
    mod.set_params({**args, "fc2_bias": mx.nd.ones((3,)) * 7}, aux)
    for ex in mod._exec_group.execs:
        assert (ex.arg_dict["fc2_bias"].asnumpy() == 7).all()


# --- optimizer and kvstore choice ------------------------------------------------------------
@pytest.mark.parametrize("ctx,kvstore,kv_type,on_kv", [
    ([mx.cpu()], "local", None, False),       # one device + a str kvstore: no kvstore
    ([mx.cpu()], "device", None, False),
    (CTX2, "local", "local", True),
    (CTX2, "device", "device", True),
    (CTX2, None, None, False),
])
def test_init_optimizer_kvstore_choice(ctx, kvstore, kv_type, on_kv):
    mod = _bound(ctx=ctx)
    mod.init_params()
    mod.init_optimizer(kvstore=kvstore)
    assert (mod._kvstore.type if mod._kvstore else None) == kv_type
    assert mod._update_on_kvstore == on_kv
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 8)
    assert (mod._updater is None) == on_kv


def test_init_optimizer_with_kvstore_object_and_optimizer_object():
    mod = _bound(ctx=mx.cpu())
    mod.init_params()
    kv = mx.kv.create("local")
    with pytest.warns(UserWarning, match="rescale_grad"):
        mod.init_optimizer(kvstore=kv, optimizer=mx.optimizer.SGD(learning_rate=0.1))
    assert mod._kvstore is kv and mod._update_on_kvstore
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0, "rescale_grad": 3.0},
                       force_init=True)
    assert mod._optimizer.rescale_grad == 3.0 and mod._optimizer.lr == 1.0


def test_state_machine_asserts():
    mod = mx.mod.Module(mlp())
    with pytest.raises(AssertionError):
        mod.init_params()
    mod = _bound(ctx=mx.cpu())
    with pytest.raises(AssertionError):
        mod.init_optimizer()
    mod.init_params()
    with pytest.raises(AssertionError):
        mod.update()


# --- update vs manual SGD --------------------------------------------------------------------
def _grads(params, x, y):
    """Gradients (summed over the batch) of the MLP for one batch, via one executor."""
    ex = mlp().simple_bind(mx.cpu(), data=x.shape)
    ex.copy_params_from(params)
    ex.forward(is_train=True, data=x, softmax_label=y)
    ex.backward()
    return {k: ex.grad_dict[k].asnumpy() for k in params}


def _sgd(w, g, lr, wd, rescale):
    return {k: w[k] - lr * (rescale * g[k] + (wd if k.endswith("_weight") else 0.0) * w[k])
            for k in w}


@pytest.mark.parametrize("ctx,kvstore", [([mx.cpu()], "local"), (CTX2, "local"),
                                         (CTX2, "device"), ([mx.cpu(0), mx.cpu(1), mx.cpu(2)],
                                                            "local")])
def test_update_matches_manual_sgd(ctx, kvstore):
    x, y = blobs(12)
    params = fixed_params(mlp(), (12, 5))
    mod = mx.mod.Module(mlp(), context=ctx)
    mod.bind(data_shapes=[("data", (12, 5))], label_shapes=[("softmax_label", (12,))])
    mod.init_params(arg_params=params)
    mod.init_optimizer(kvstore=kvstore, optimizer_params={"learning_rate": 0.5, "wd": 0.01})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    w = as_numpy(params)
    for _ in range(2):
        mod.forward_backward(batch)
        mod.update()
        w = _sgd(w, _grads({k: mx.nd.array(v) for k, v in w.items()}, x, y), 0.5, 0.01, 1 / 12)
    assert_params_close(as_numpy(mod.get_params()[0]), w, rtol=1e-4, atol=1e-6)
    for ex in mod._exec_group.execs:  # every device holds the same weights
        assert_params_close({k: ex.arg_dict[k].asnumpy() for k in w}, w, rtol=1e-4, atol=1e-6)


def test_update_without_kvstore_keeps_device_gradients_apart():
    x, y = blobs(8)
    params = fixed_params(mlp(), (8, 5))
    mod = mx.mod.Module(mlp(), context=CTX2)
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    mod.init_params(arg_params=params)
    mod.init_optimizer(kvstore=None, optimizer_params={"learning_rate": 0.5})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    mod.update()
    w = as_numpy(params)
    per_dev = [_sgd(w, _grads(params, x[s], y[s]), 0.5, 0.0, 1 / 8)
               for s in (slice(0, 4), slice(4, 8))]
    for ex, expected in zip(mod._exec_group.execs, per_dev):
        assert_params_close({k: ex.arg_dict[k].asnumpy() for k in w}, expected, rtol=1e-4)
    mean = {k: (per_dev[0][k] + per_dev[1][k]) / 2 for k in w}
    assert_params_close(as_numpy(mod.get_params()[0]), mean, rtol=1e-4, atol=1e-6)


def test_update_with_momentum_over_kvstore_matches_one_device():
    x, y = blobs(16, seed=4)
    params = fixed_params(mlp(), (16, 5))
    results = []
    for ctx in ([mx.cpu()], CTX2):
        mod = mx.mod.Module(mlp(), context=ctx)
        mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
        mod.init_params(arg_params=params)
        mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3})
        for i in range(4):
            s = slice(8 * (i % 2), 8 * (i % 2) + 8)
            mod.forward_backward(mx.io.DataBatch([mx.nd.array(x[s])], [mx.nd.array(y[s])]))
            mod.update()
        results.append(as_numpy(mod.get_params()[0]))
    assert_params_close(results[0], results[1], rtol=1e-4, atol=1e-6)


# --- outputs, input grads, metrics ---------------------------------------------------------------
def test_outputs_merged_on_first_device_and_input_grads():
    x, y = blobs(8)
    params = fixed_params(mlp(), (8, 5))
    mod = mx.mod.Module(mlp(), context=CTX2)
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))],
             inputs_need_grad=True)
    mod.init_params(arg_params=params)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]), is_train=True)
    mod.backward()
    out = mod.get_outputs()[0]
    assert out.shape == (8, 3) and out.context == mx.cpu(0)
    ex = mlp().simple_bind(mx.cpu(), data=(8, 5))
    ex.copy_params_from(params)
    ref = ex.forward(is_train=True, data=x, softmax_label=y)[0].asnumpy()
    ex.backward()
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-7)
    per_dev = mod.get_outputs(merge_multi_context=False)
    assert [o.shape for o in per_dev[0]] == [(4, 3), (4, 3)]
    assert [o.context for o in per_dev[0]] == CTX2
    grad = mod.get_input_grads()[0]
    assert grad.shape == (8, 5)
    np.testing.assert_allclose(grad.asnumpy(), ex.grad_dict["data"].asnumpy(), rtol=1e-5,
                               atol=1e-7)


def test_update_metric_runs_per_device():
    x, y = blobs(8)
    mod = _bound()
    mod.init_params(arg_params=fixed_params(mlp(), (8, 5)))
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod.forward(batch, is_train=False)
    metric = mx.metric.create("acc")
    mod.update_metric(metric, batch.label)
    pred = mod.get_outputs()[0].asnumpy().argmax(axis=1)
    assert metric.num_inst == 8
    assert metric.get()[1] == pytest.approx((pred == y).mean())


# --- predict, score, reshape ----------------------------------------------------------------
def test_predict_strips_padding_and_matches_forward():
    x, y = blobs(10)
    params = fixed_params(mlp(), (4, 5))
    mod = mx.mod.Module(mlp(), context=CTX2)
    it = mx.io.NDArrayIter(x, y, batch_size=4)  # last batch: 2 rows + 2 of padding
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    mod.init_params(arg_params=params)
    pred = mod.predict(it)
    assert isinstance(pred, mx.nd.NDArray) and pred.shape == (10, 3)
    ex = mlp().simple_bind(mx.cpu(), data=(10, 5))
    ex.copy_params_from(params)
    ref = ex.forward(data=x)[0].asnumpy()
    np.testing.assert_allclose(pred.asnumpy(), ref, rtol=1e-5, atol=1e-7)
    [listed] = mod.predict(it, always_output_list=True)
    assert listed.shape == (10, 3)
    per_batch = mod.predict(it, merge_batches=False)
    assert [p[0].shape for p in per_batch] == [(4, 3), (4, 3), (2, 3)]
    assert mod.predict(it, num_batch=1).shape == (4, 3)
    got = [(o[0].shape, i, b.pad) for o, i, b in mod.iter_predict(it)]
    assert got == [((4, 3), 0, 0), ((4, 3), 1, 0), ((2, 3), 2, 2)]
    np.testing.assert_allclose(mod.predict(x[:4]).asnumpy(), ref[:4], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="eval_data must be of type NDArray or DataIter"):
        mod.predict([x])


def test_score_counts_padding_rows():
    x, y = blobs(10)
    mod = mx.mod.Module(mlp(), context=CTX2)
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    mod.init_params(arg_params=fixed_params(mlp(), (4, 5)))
    seen = []
    res = mod.score(it, "acc", batch_end_callback=lambda p: seen.append(p.nbatch),
                    score_end_callback=lambda p: seen.append(("end", p.nbatch)))
    pred = mod.predict(it).asnumpy().argmax(axis=1)
    padded_pred = np.concatenate([pred, pred[:2]])
    padded_y = np.concatenate([y, y[:2]])
    assert res == [("accuracy", pytest.approx((padded_pred == padded_y).mean()))]
    assert seen == [0, 1, 2, ("end", 3)]


def test_forward_reshapes_on_new_batch_shape():
    x, y = blobs(12)
    params = fixed_params(mlp(), (8, 5))
    mod = _bound()
    mod.init_params(arg_params=params)
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:6])], [mx.nd.array(y[:6])]), is_train=False)
    out = mod.get_outputs()[0]
    assert out.shape == (6, 3) and mod.data_shapes[0].shape == (6, 5)
    ex = mlp().simple_bind(mx.cpu(), data=(6, 5))
    ex.copy_params_from(params)
    np.testing.assert_allclose(out.asnumpy(), ex.forward(data=x[:6])[0].asnumpy(), rtol=1e-5,
                               atol=1e-7)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]), is_train=False)
    assert mod.get_outputs()[0].shape == (12, 3)  # larger than the bound batch: up-sized
    mod.reshape(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    assert [e.arg_dict["data"].shape for e in mod._exec_group.execs] == [(4, 5), (4, 5)]
    # parameters are shared across reshapes
    mod.set_params({**params, "fc2_bias": mx.nd.ones((3,))}, {})
    for ex in mod._exec_group.execs:
        assert (ex.arg_dict["fc2_bias"].asnumpy() == 1).all()


def test_backward_with_out_grads_for_non_loss_outputs():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, context=CTX2)
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params(initializer=mx.init.One())
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=True)
    mod.backward(out_grads=[mx.nd.ones((4, 2))])
    grads = [g.asnumpy() for g in mod._exec_group.grad_arrays[0]]  # fc_weight per device
    np.testing.assert_allclose(grads[0] + grads[1], np.full((2, 3), 4.0))


# --- states, checkpoints ----------------------------------------------------------------------
def test_save_checkpoint_and_load(tmp_path):
    x, y = blobs(16)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    mod = mx.mod.Module(mlp(), context=CTX2)
    mod.fit(it, num_epoch=1, optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            arg_params=fixed_params(mlp(), (8, 5)))
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    for suffix in ("-symbol.json", "-0003.params", "-0003.states"):
        assert (tmp_path / ("mlp" + suffix)).exists()
    sym, args, aux = mx.model.load_checkpoint(prefix, 3)
    assert sym.tojson() == mlp().tojson()
    assert_params_close(as_numpy(args), as_numpy(mod.get_params()[0]))
    loaded = mx.mod.Module.load(prefix, 3, load_optimizer_states=True, context=CTX2)
    assert loaded.params_initialized and loaded._preload_opt_states.endswith("-0003.states")
    loaded.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    loaded.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert loaded._preload_opt_states is None
    np.testing.assert_allclose(loaded.predict(it).asnumpy(), mod.predict(it).asnumpy(),
                               rtol=1e-6)
    states = mod._kvstore._updater.states
    assert sorted(loaded._kvstore._updater.states) == sorted(states)


def test_save_and_load_params_file(tmp_path):
    mod = _bound()
    mod.init_params(arg_params=fixed_params(mlp(), (8, 5)))
    fname = str(tmp_path / "p.params")
    mod.save_params(fname)
    assert sorted(mx.nd.load(fname)) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias",
                                         "arg:fc2_weight"]
    mod2 = _bound()
    mod2.init_params()
    mod2.load_params(fname)
    assert_params_close(as_numpy(mod2.get_params()[0]), as_numpy(mod.get_params()[0]))


def test_state_names():
    data, state = mx.sym.Variable("data"), mx.sym.Variable("state")
    net = mx.sym.FullyConnected(data + state, num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, state_names=["state"], context=CTX2)
    assert mod._param_names == ["fc_weight", "fc_bias"]
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params(initializer=mx.init.One())
    mod.set_states(value=2)
    assert [s.asnumpy().max() for s in mod.get_states(merge_multi_context=False)[0]] == [2, 2]
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.full((4, 2), 9.0))


def test_bucketing_module_shares_parameters():
    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        fc = mx.sym.FullyConnected(data, num_hidden=3, flatten=False, name="fc")
        pooled = mx.sym.mean(fc, axis=1)
        return mx.sym.SoftmaxOutput(pooled, name="softmax"), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6, context=CTX2)
    mod.bind(data_shapes=[("data", (4, 6, 2))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(initializer=mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    rng = np.random.RandomState(0)
    for key in (6, 3, 6, 3):
        batch = mx.io.DataBatch([mx.nd.array(rng.randn(4, key, 2))],
                                [mx.nd.array(rng.randint(0, 3, 4))], bucket_key=key,
                                provide_data=[mx.io.DataDesc("data", (4, key, 2))],
                                provide_label=[mx.io.DataDesc("softmax_label", (4,))])
        mod.forward_backward(batch)
        mod.update()
        assert mod.get_outputs()[0].shape == (4, 3)
    assert sorted(mod._buckets) == [3, 6]
    for i in range(2):
        w6 = mod._buckets[6]._exec_group.execs[i].arg_dict["fc_weight"]
        w3 = mod._buckets[3]._exec_group.execs[i].arg_dict["fc_weight"]
        assert w6 is w3  # one array shared by both buckets
    args, _ = mod.get_params()
    assert args["fc_weight"].shape == (3, 2)
    assert mod._buckets[3]._kvstore is mod._buckets[6]._kvstore


# --- fit, callbacks, logging -------------------------------------------------------------------
def test_fit_callbacks_and_logging(caplog, tmp_path):
    x, y = blobs(40)
    train = mx.io.NDArrayIter(x[:32], y[:32], batch_size=8)
    val = mx.io.NDArrayIter(x[32:], y[32:], batch_size=8)
    batches, epochs = [], []
    mod = mx.mod.Module(mlp(), context=CTX2)
    prefix = str(tmp_path / "cb")
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, num_epoch=2,
                optimizer_params={"learning_rate": 0.5},
                batch_end_callback=[lambda p: batches.append((p.epoch, p.nbatch)),
                                    mx.callback.Speedometer(8, frequent=2)],
                epoch_end_callback=[lambda e, s, a, x_: epochs.append((e, sorted(a))),
                                    mx.callback.do_checkpoint(prefix)])
    assert batches == [(e, b) for e in range(2) for b in range(4)]
    assert epochs == [(e, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]) for e in range(2)]
    text = caplog.text
    for needle in ("Epoch[0] Train-accuracy=", "Epoch[0] Time cost=", "Epoch[1] Validation-accuracy=",
                   "Epoch[0] Batch [0-2]\tSpeed: ", "samples/sec\taccuracy=",
                   'Saved checkpoint to "%s-0002.params"' % prefix):
        assert needle in text, needle
    assert (tmp_path / "cb-0001.params").exists() and (tmp_path / "cb-symbol.json").exists()


def test_fit_requires_num_epoch():
    x, y = blobs(8)
    with pytest.raises(AssertionError, match="please specify number of epochs"):
        mx.mod.Module(mlp()).fit(mx.io.NDArrayIter(x, y, batch_size=4))


def test_callbacks_text(caplog):
    metric = mx.metric.create("acc")
    metric.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [0, 1]])])
    with caplog.at_level(logging.INFO):
        mx.callback.log_train_metric(1)(mx.model.BatchEndParam(3, 4, metric, None))
        mx.callback.ProgressBar(total=4, length=8)(mx.model.BatchEndParam(0, 2, metric, None))
        mx.callback.LogValidationMetricsCallback()(mx.model.BatchEndParam(5, 0, metric, None))
        speedo = mx.callback.Speedometer(10, frequent=1, auto_reset=False)
        speedo(mx.model.BatchEndParam(0, 0, metric, None))
        speedo(mx.model.BatchEndParam(0, 1, metric, None))
        speedo(mx.model.BatchEndParam(0, 2, None, None))
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "Iter[3] Batch[4] Train-accuracy=1.000000"
    assert lines[1] == "[====----] 50%\r"
    assert lines[2] == "Epoch[5] Validation-accuracy=1.000000"
    assert lines[3].startswith("Epoch[0] Batch [0-1]\tSpeed: ") and lines[3].endswith(
        " samples/sec\taccuracy=1.000000")
    assert lines[4].startswith("Iter[0] Batch [2]\tSpeed: ")


def test_module_checkpoint_callback(tmp_path):
    mod = _bound(ctx=mx.cpu())
    mod.init_params()
    mod.init_optimizer()
    cb = mx.callback.module_checkpoint(mod, str(tmp_path / "m"), period=2,
                                       save_optimizer_states=True)
    for epoch in range(4):
        cb(epoch)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m-0002.params", "m-0002.states", "m-0004.params", "m-0004.states", "m-symbol.json"]


def test_no_warnings_in_plain_fit():
    x, y = blobs(16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.mod.Module(mlp(), context=CTX2).fit(mx.io.NDArrayIter(x, y, batch_size=8),
                                               num_epoch=1)


def test_fit_shows_a_tqdm_bar_on_a_terminal(monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    x, y = blobs(16)
    mx.mod.Module(mlp()).fit(mx.io.NDArrayIter(x, y, batch_size=4), num_epoch=2)
    text = term.getvalue()
    assert "Epoch[0]" in text and "Epoch[1]" in text and "/4 " in text  # total known after epoch 0
