"""KVStore semantics (MXNet 1.9.1's local and device stores): create, keys, push sums, pull,
pushpull, updaters, optimizer states, errors."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

SHAPE = (2, 3)


def _ones(ctx=None, scale=1.0):
    return mx.nd.ones(SHAPE, ctx=ctx) * scale


# --- create ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [("local", "local"), ("device", "device"),
                                           ("Local", "local"), ("foo", "foo"),
                                           ("LOCAL_allreduce_cpu", "local_allreduce_cpu")])
def test_create_types(name, expected):
    kv = mx.kv.create(name)
    assert isinstance(kv, mx.kv.KVStore) and isinstance(kv, mx.kvstore.KVStoreBase)
    assert (kv.type, kv.rank, kv.num_workers) == (expected, 0, 1)
    assert kv.is_capable("optimizer") and kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)
    with pytest.raises(ValueError, match="Unknown capability: foo"):
        kv.is_capable("foo")


@pytest.mark.parametrize("name", ["dist_sync", "dist_device_sync", "dist_async", "DIST"])
def test_create_dist_is_a_clear_error(name):
    with pytest.raises(mx.MXNetError, match="torch.distributed"):
        mx.kv.create(name)


def test_create_nccl_and_bad_type():
    with pytest.raises(mx.MXNetError, match="compile with USE_NCCL=1 to use nccl"):
        mx.kv.create("nccl")
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)


def test_registry_and_teststore():
    kv = mx.kv.create("TestStore")
    assert kv.type == "teststore" and not kv.is_capable("optimizer")
    vals = [_ones(mx.cpu(0)), _ones(mx.cpu(1), 2)]
    kv.pushpull(0, vals)
    assert all((v.asnumpy() == 3).all() for v in vals)


# --- keys --------------------------------------------------------------------------------------
def test_duplicate_init_int_and_str():
    kv = mx.kv.create()
    kv.init(3, _ones())
    with pytest.raises(mx.MXNetError, match="duplicate init of key 3"):
        kv.init(3, _ones())
    kv2 = mx.kv.create()
    kv2.init("w", _ones())
    with pytest.raises(mx.MXNetError, match="duplicate init of key w"):
        kv2.init("w", _ones())
    with pytest.raises(mx.MXNetError, match="duplicate init of key 1"):
        mx.kv.create().init([1, 1], [_ones(), _ones()])  # the same key twice in one call


def test_unknown_keys():
    kv = mx.kv.create()
    kv.init(3, _ones())
    with pytest.raises(mx.MXNetError, match="key 99 has not been inited"):
        kv.pull(99, out=mx.nd.zeros(SHAPE))
    with pytest.raises(mx.MXNetError, match="key 99 has not been inited"):
        kv.push(99, _ones())
    kv2 = mx.kv.create()
    kv2.init("w", _ones())
    with pytest.raises(mx.MXNetError, match="key zz doesn't exist. Did you init?"):
        kv2.pull("zz", out=mx.nd.zeros(SHAPE))


def test_key_types_not_mixed():
    kv = mx.kv.create()
    kv.init(3, _ones())
    with pytest.raises(mx.MXNetError, match="Mixed key types are not allowed"):
        kv.init("a", _ones())
    kv2 = mx.kv.create()
    kv2.init("w", _ones())
    with pytest.raises(mx.MXNetError, match="Mixed key types are not allowed"):
        kv2.init(5, _ones())
    with pytest.raises(AssertionError, match="inconsistent types of keys detected."):
        mx.kv.create().init([1, "b"], [_ones(), _ones()])
    with pytest.raises(AssertionError, match="unexpected type for keys"):
        mx.kv.create().init(1.5, _ones())


def test_numpy_int_keys():
    kv = mx.kv.create()
    kv.init(np.int64(4), _ones(scale=2))
    out = mx.nd.zeros(SHAPE)
    kv.pull(4, out=out)
    assert (out.asnumpy() == 2).all()


# --- push / pull -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["local", "device"])
def test_push_sums_values_from_several_devices(name):
    kv = mx.kv.create(name)
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [_ones(mx.cpu(0)), _ones(mx.cpu(1), 2), _ones(mx.cpu(1), 3)])
    outs = [mx.nd.zeros(SHAPE, ctx=mx.cpu(0)), mx.nd.zeros(SHAPE, ctx=mx.cpu(1))]
    kv.pull(3, out=outs)
    for o, ctx in zip(outs, [mx.cpu(0), mx.cpu(1)]):
        assert o.context == ctx
        np.testing.assert_array_equal(o.asnumpy(), np.full(SHAPE, 6.0, np.float32))


def test_push_without_updater_replaces_value():
    kv = mx.kv.create()
    kv.init("w", _ones(scale=10))
    kv.push("w", _ones(scale=2))
    out = mx.nd.zeros(SHAPE)
    kv.pull("w", out=out)
    assert (out.asnumpy() == 2).all()


def test_init_stores_a_copy():
    kv = mx.kv.create()
    a = _ones(mx.cpu(1))
    kv.init(0, a)
    a[:] = 5
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    assert (out.asnumpy() == 1).all()


def test_lists_of_keys():
    kv = mx.kv.create()
    kv.init([4, 5], [mx.nd.ones((1,)), mx.nd.ones((1,)) * 2])
    kv.push([4, 5], [[mx.nd.ones((1,)), mx.nd.ones((1,), ctx=mx.cpu(1))], mx.nd.ones((1,)) * 7])
    o4, o5 = mx.nd.zeros((1,)), [mx.nd.zeros((1,)), mx.nd.zeros((1,), ctx=mx.cpu(1))]
    kv.pull([4, 5], out=[o4, o5])
    assert o4.asscalar() == 2 and [o.asscalar() for o in o5] == [7, 7]


def test_push_shape_mismatch():
    kv = mx.kv.create()
    kv.init(7, _ones())
    with pytest.raises(mx.MXNetError, match="shape mismatch"):
        kv.push(7, mx.nd.ones((3, 3)))


def test_pull_needs_out():
    kv = mx.kv.create()
    kv.init(7, _ones())
    with pytest.raises(AssertionError):
        kv.pull(7)


def test_pushpull_in_place_and_out():
    kv = mx.kv.create()
    kv.init(1, mx.nd.zeros((2,)))
    v = [mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 2]
    kv.pushpull(1, v)
    assert [x.asnumpy().tolist() for x in v] == [[3, 3], [3, 3]]
    o = mx.nd.zeros((2,), ctx=mx.cpu(1))
    kv.pushpull(1, mx.nd.ones((2,)) * 5, out=o, priority=-3)
    assert o.asnumpy().tolist() == [5, 5]


def test_broadcast_is_init_then_pull():
    kv = mx.kv.create()
    outs = [mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(3)]
    kv.broadcast("w", _ones(scale=4), out=outs)
    assert all((o.asnumpy() == 4).all() for o in outs)
    with pytest.raises(mx.MXNetError, match="kv.init or kv.broadcast"):
        kv.broadcast("w", _ones(), out=outs)


def test_push_waits_for_pending_executor_writes():
    """Values computed asynchronously on per-device workers are summed after they are done."""
    data = mx.sym.Variable("data")
    net = data * 2
    outs = []
    for i in range(2):
        ex = net.simple_bind(mx.cpu(i), data=(64, 64))
        ex.arg_dict["data"][:] = i + 1
        outs.append(ex.forward()[0])
    kv = mx.kv.create()
    kv.init(0, mx.nd.zeros((64, 64)))
    kv.pushpull(0, outs)
    assert (outs[0].asnumpy() == 6).all() and (outs[1].asnumpy() == 6).all()


# --- updaters and optimizers -----------------------------------------------------------------
def test_custom_updater_int_and_str_keys():
    calls = []

    def upd(key, merged, stored):
        calls.append((key, merged.asnumpy()[0, 0], stored.asnumpy()[0, 0]))
        stored += merged * 2

    kv = mx.kv.create()
    kv.init(3, _ones())
    kv._set_updater(upd)
    kv.push(3, [_ones(mx.cpu(0)), _ones(mx.cpu(1))])
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    assert calls == [(3, 2.0, 1.0)] and out.asnumpy()[0, 0] == 5
    kv2 = mx.kv.create()
    kv2.init("w", _ones())
    kv2._set_updater(upd)
    kv2.push("w", _ones())
    assert calls[-1][0] == b"w"  # MXNet's C API hands str keys to updaters as bytes


@pytest.mark.parametrize("name", ["local", "device"])
def test_set_optimizer_matches_sgd_on_summed_gradient(name):
    rng = np.random.RandomState(0)
    w0 = rng.rand(*SHAPE).astype(np.float32)
    grads = [rng.rand(*SHAPE).astype(np.float32) for _ in range(2)]
    kv = mx.kv.create(name)
    kv.init("fc_weight", mx.nd.array(w0))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, rescale_grad=0.5, momentum=0.9,
                                      wd=0.01))
    w = [mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(2)]
    mom = np.zeros(SHAPE, np.float32)
    expected = w0.copy()
    for _ in range(3):
        kv.pushpull("fc_weight", [mx.nd.array(g, ctx=mx.cpu(i)) for i, g in enumerate(grads)],
                    out=w)
        g = 0.5 * (grads[0] + grads[1])
        mom = 0.9 * mom - 0.1 * (g + 0.01 * expected)
        expected = expected + mom
    for x in w:
        np.testing.assert_allclose(x.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_optimizer_states_round_trip(tmp_path):
    def make():
        kv = mx.kv.create()
        kv.init(0, mx.nd.zeros((3,)))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, momentum=0.5))
        return kv
    kv = make()
    out = mx.nd.zeros((3,))
    kv.pushpull(0, mx.nd.ones((3,)), out=out)  # mom = -1, w = -1
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname)
    kv.pushpull(0, mx.nd.ones((3,)), out=out)  # mom = -1.5, w = -2.5
    kv3 = make()  # a fresh store with the saved momentum (-1) and a zero weight
    kv3.load_optimizer_states(fname)
    w = mx.nd.zeros((3,))
    kv3.pushpull(0, mx.nd.ones((3,)), out=w)  # mom = 0.5*(-1) - 1 = -1.5; w = 0 - 1.5
    np.testing.assert_allclose(w.asnumpy(), [-1.5] * 3)


def test_save_optimizer_states_needs_updater(tmp_path):
    with pytest.raises(AssertionError, match="Cannot save states"):
        mx.kv.create().save_optimizer_states(str(tmp_path / "x"))


# --- unsupported and no-op parts ------------------------------------------------------------
def test_row_sparse_pull_not_supported():
    kv = mx.kv.create()
    kv.init(0, _ones())
    with pytest.raises(mx.MXNetError, match="row_sparse"):
        kv.row_sparse_pull(0, out=mx.nd.zeros(SHAPE), row_ids=mx.nd.array([0]))


def test_gradient_compression():
    with pytest.raises(Exception, match="Gradient compression is not supported for this type"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})
    with pytest.raises(mx.MXNetError, match="not implemented"):
        mx.kv.create("device").set_gradient_compression({"type": "2bit", "threshold": 0.5})


def test_barrier_is_a_no_op():
    kv = mx.kv.create()
    assert kv.barrier() is None and kv._barrier() is None


@pytest.mark.gpu
def test_device_store_reduces_on_the_gpu():
    kv = mx.kv.create("device")
    kv.init(0, mx.nd.zeros(SHAPE))
    vals = [_ones(mx.cpu(0)), _ones(mx.gpu(0), 2)]
    merged = kv._reduce(0, vals)
    assert merged.context == mx.gpu(0)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    outs = [mx.nd.zeros(SHAPE, ctx=mx.gpu(0)), mx.nd.zeros(SHAPE, ctx=mx.cpu(0))]
    kv.pushpull(0, vals, out=outs)
    assert kv._store[0].context == mx.gpu(0)  # the stored weight moved to the reducing GPU
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), np.full(SHAPE, -3.0))
    local = mx.kv.create("local")
    local.init(0, mx.nd.zeros(SHAPE))
    assert local._reduce(0, vals).context == mx.cpu(0)
