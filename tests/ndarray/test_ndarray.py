"""NDArray semantics (MXNET_SEMANTICS.md §1-2, §12): contexts, indexing and views, in-place ops,
copies across contexts, seeding, and that every operation goes through the engine."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import engine

nd = mx.nd
requires_no_gpu = pytest.mark.skipif(mx.num_gpus() > 0, reason="checks the no-GPU error path")


# --- Context ----------------------------------------------------------------------------------------
def test_context_equality_needs_type_and_id():
    assert mx.cpu(0) == mx.cpu(0)
    assert mx.cpu(0) != mx.cpu(1)
    assert mx.cpu(1) == mx.Context("cpu", 1)
    assert mx.Context(mx.cpu(1)) == mx.cpu(1)
    assert mx.cpu(0) != mx.gpu(0)
    assert not (mx.cpu(0) == "cpu(0)")
    assert mx.cpu() == mx.cpu(0)


def test_context_hash_and_dict_keys():
    assert hash(mx.cpu(1)) == hash(mx.Context("cpu", 1))
    d = {mx.cpu(0): "a", mx.cpu(1): "b"}
    assert d[mx.Context("cpu", 1)] == "b"
    assert len({mx.cpu(0), mx.cpu(0), mx.cpu(1)}) == 2


def test_context_str_repr_and_fields():
    assert str(mx.cpu(1)) == "cpu(1)"
    assert repr(mx.cpu(0)) == "cpu(0)"
    assert str(mx.gpu(2)) == "gpu(2)"
    assert mx.cpu(3).device_type == "cpu"
    assert mx.cpu(3).device_id == 3
    assert mx.gpu(0).device_typeid == 2
    assert mx.cpu_pinned(0).device_type == "cpu_pinned"


def test_context_unknown_type_raises_key_error():
    with pytest.raises(KeyError):
        mx.Context("tpu", 0)


def test_gpu_context_can_always_be_built():
    ctx = mx.gpu(7)
    assert ctx.device_id == 7


def test_current_context_defaults_to_cpu0():
    assert mx.current_context() == mx.cpu(0)
    assert nd.zeros((2,)).context == mx.cpu(0)


def test_with_scope_sets_and_restores_current_context():
    with mx.cpu(1):
        assert mx.current_context() == mx.cpu(1)
        assert nd.zeros((2,)).context == mx.cpu(1)
        assert nd.array([1, 2]).context == mx.cpu(1)
        with mx.cpu(2):
            assert mx.current_context() == mx.cpu(2)
            assert nd.ones((1,)).context == mx.cpu(2)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)


def test_with_scope_restores_after_exception():
    with pytest.raises(ZeroDivisionError):
        with mx.cpu(3):
            1 / 0
    assert mx.current_context() == mx.cpu(0)


def test_same_context_object_reentered():
    c = mx.cpu(1)
    with c:
        with c:
            assert mx.current_context() == mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)


@requires_no_gpu
@pytest.mark.parametrize("make", [
    lambda c: nd.zeros((2, 3), ctx=c),
    lambda c: nd.ones((2,), ctx=c),
    lambda c: nd.array([1, 2, 3], ctx=c),
    lambda c: nd.empty((2,), ctx=c),
], ids=["zeros", "ones", "array", "empty"])
def test_gpu_allocation_without_cuda_names_the_context(make):
    with pytest.raises(mx.base.MXNetError, match=r"gpu\(1\)"):
        make(mx.gpu(1))


@requires_no_gpu
def test_copy_to_gpu_without_cuda_raises_mxnet_error():
    a = nd.ones((2,))
    with pytest.raises(mx.base.MXNetError, match=r"gpu\(0\)"):
        a.copyto(mx.gpu(0))
    with pytest.raises(mx.base.MXNetError, match=r"gpu\(0\)"):
        a.as_in_context(mx.gpu(0))


@requires_no_gpu
def test_gpu_scope_without_cuda_fails_at_allocation():
    with mx.gpu(0):
        assert mx.current_context() == mx.gpu(0)  # building/entering is fine
        with pytest.raises(mx.base.MXNetError, match=r"gpu\(0\)"):
            nd.zeros((1,))


@pytest.mark.gpu
def test_gpu_round_trip():
    a = nd.array(np.arange(6).reshape(2, 3))
    g = a.copyto(mx.gpu(0))
    assert g.context == mx.gpu(0)
    assert np.array_equal((g * 2).asnumpy(), np.arange(6).reshape(2, 3) * 2)
    back = g.as_in_context(mx.cpu(1))
    assert back.context == mx.cpu(1)
    assert np.array_equal(back.asnumpy(), a.asnumpy())


@pytest.mark.gpu
def test_gpu_and_cpu_operands_do_not_mix():
    with pytest.raises(mx.base.MXNetError, match="same context"):
        nd.ones((2,)) + nd.ones((2,), ctx=mx.gpu(0))


# --- setitem ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,value,expect", [
    (slice(None), 2, np.full((3, 4), 2.0)),
    (1, 3.5, np.array([[0] * 4, [3.5] * 4, [0] * 4])),
    ((1, 2), 4, np.where((np.arange(12).reshape(3, 4) == 6), 4.0, 0.0)),
    ((slice(None), 1), 5, np.tile([0, 5.0, 0, 0], (3, 1))),
    ((slice(1, 3), slice(1, 2)), 6, np.array([[0, 0, 0, 0], [0, 6, 0, 0], [0, 6, 0, 0.0]])),
    (slice(0, 2), 7, np.array([[7] * 4, [7] * 4, [0] * 4], dtype=float)),
], ids=["all", "row", "element", "column", "block", "row-slice"])
def test_setitem_scalar(key, value, expect):
    a = nd.zeros((3, 4))
    a[key] = value
    assert np.array_equal(a.asnumpy(), expect.astype(np.float32))
    assert a.dtype == np.float32


@pytest.mark.parametrize("value", [
    lambda: nd.array([1, 2, 3, 4]),
    lambda: np.array([1, 2, 3, 4]),
    lambda: np.array([1, 2, 3, 4], dtype=np.float64),
    lambda: [1, 2, 3, 4],
], ids=["ndarray", "numpy-int", "numpy-f64", "list"])
def test_setitem_broadcasts_a_row_into_every_region(value):
    a = nd.zeros((3, 4))
    a[:] = value()
    assert np.array_equal(a.asnumpy(), np.tile(np.arange(1, 5, dtype=np.float32), (3, 1)))
    b = nd.zeros((3, 4))
    b[1] = value()
    assert np.array_equal(b.asnumpy()[1], np.arange(1, 5, dtype=np.float32))
    assert np.all(b.asnumpy()[[0, 2]] == 0)


def test_setitem_with_full_ndarray_and_numpy_block():
    a = nd.zeros((3, 4))
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a[:] = nd.array(src)
    assert np.array_equal(a.asnumpy(), src)
    a[1:3, 1:2] = np.array([[100], [200]])
    assert a.asnumpy()[1, 1] == 100 and a.asnumpy()[2, 1] == 200
    a[:, 1] = nd.array([-1, -2, -3])
    assert np.array_equal(a.asnumpy()[:, 1], [-1, -2, -3])


def test_setitem_source_is_copied_not_aliased():
    a = nd.zeros((2, 3))
    src = nd.ones((2, 3))
    a[:] = src
    src[:] = 9
    assert np.all(a.asnumpy() == 1)
    n = np.ones((2, 3))
    a[:] = n
    n[:] = 5
    assert np.all(a.asnumpy() == 1)


def test_setitem_casts_into_the_array_dtype():
    a = nd.zeros((3,), dtype="int32")
    a[:] = nd.array([1.7, 2.2, -0.5])
    assert a.dtype == np.int32
    assert np.array_equal(a.asnumpy(), [1, 2, 0])


def test_setitem_from_other_cpu_context():
    a = nd.zeros((2, 2), ctx=mx.cpu(0))
    a[:] = nd.ones((2, 2), ctx=mx.cpu(1)) * 3
    assert a.context == mx.cpu(0)
    assert np.all(a.asnumpy() == 3)


@pytest.mark.parametrize("key,value", [
    (slice(None), lambda: nd.ones((4,))),
    (0, lambda: nd.ones((4,))),
    (slice(None), lambda: np.ones((3, 2))),
    ((slice(None), 1), lambda: [1, 2, 3]),
], ids=["all-nd", "row-nd", "all-numpy", "column-list"])
def test_setitem_bad_shape_raises_value_error(key, value):
    a = nd.zeros((2, 3))
    with pytest.raises(ValueError):
        a[key] = value()
    assert np.all(a.asnumpy() == 0)


# --- views on axis 0 -------------------------------------------------------------------------------
def test_integer_index_is_a_view():
    a = nd.zeros((3, 4))
    row = a[1]
    assert row.shape == (4,)
    row[:] = 5
    assert np.all(a.asnumpy()[1] == 5)
    a[:] = 1
    assert np.all(row.asnumpy() == 1)


def test_negative_integer_index_is_a_view():
    a = nd.zeros((3, 2))
    a[-1][:] = 4
    assert np.array_equal(a.asnumpy()[2], [4, 4])


def test_contiguous_slice_is_a_view():
    a = nd.zeros((4, 2))
    part = a[1:3]
    assert part.shape == (2, 2)
    part[:] = 7
    assert np.array_equal(a.asnumpy()[:, 0], [0, 7, 7, 0])
    part += 1
    assert np.array_equal(a.asnumpy()[:, 0], [0, 8, 8, 0])


def test_view_of_a_view_writes_through():
    a = nd.zeros((3, 2, 2))
    a[1][0][:] = 3
    assert a.asnumpy()[1, 0].tolist() == [3, 3]
    assert a.asnumpy().sum() == 6


def test_reshape_is_a_view():
    a = nd.zeros((2, 3))
    b = a.reshape((3, 2))
    b[:] = 2
    assert np.all(a.asnumpy() == 2)


@pytest.mark.parametrize("key", [
    (slice(None), 1),
    slice(None, None, 2),
    [0, 2],
], ids=["column", "strided", "fancy"])
def test_other_indexing_gives_copies(key):
    a = nd.zeros((3, 3))
    part = a[key]
    part[:] = 9
    assert np.all(a.asnumpy() == 0)


def test_integer_index_on_1d_gives_shape_1():
    a = nd.array([1, 2, 3])
    assert a[1].shape == (1,)
    assert a[-1].asnumpy().tolist() == [3.0]


def test_index_out_of_range_raises_index_error():
    a = nd.zeros((2, 3))
    with pytest.raises(IndexError):
        a[2]
    with pytest.raises(IndexError):
        a[-3]


# --- in-place ops --------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,other,expect", [
    ("+=", 2, 5.0), ("-=", 1, 2.0), ("*=", 4, 12.0), ("/=", 2, 1.5),
    ("+=", "nd", 5.0), ("-=", "nd", 1.0), ("*=", "nd", 6.0), ("/=", "nd", 1.5),
])
def test_inplace_ops_keep_identity_and_storage(op, other, expect):
    a = nd.full((2, 3), 3.0)
    view = a[0]
    alias = a
    rhs = nd.full((2, 3), 2.0) if other == "nd" else other
    ns = {"a": a, "rhs": rhs}
    exec(f"a {op} rhs", ns)
    assert ns["a"] is alias
    assert np.all(alias.asnumpy() == expect)
    assert np.all(view.asnumpy() == expect)  # the same storage was updated


def test_inplace_broadcast_rhs():
    a = nd.ones((2, 3))
    a += nd.array([1, 2, 3])
    assert np.array_equal(a.asnumpy(), [[2, 3, 4], [2, 3, 4]])


def test_inplace_int_array_with_float_scalar_stays_int():
    a = nd.array([1, 2, 3], dtype="int32")
    a += 1.7
    assert a.dtype == np.int32
    assert np.array_equal(a.asnumpy(), [2, 3, 4])


def test_out_of_place_ops_do_not_touch_operands():
    a = nd.ones((2,))
    b = nd.ones((2,)) * 2
    c = a + b
    assert c is not a and c is not b
    assert a.asnumpy().tolist() == [1, 1] and b.asnumpy().tolist() == [2, 2]


# --- copies across contexts ------------------------------------------------------------------------------
def test_copyto_context_makes_an_independent_array():
    a = nd.array([[1, 2], [3, 4]], ctx=mx.cpu(0))
    b = a.copyto(mx.cpu(1))
    assert b.context == mx.cpu(1)
    assert b is not a
    assert np.array_equal(b.asnumpy(), a.asnumpy())
    a[:] = 0
    assert np.array_equal(b.asnumpy(), [[1, 2], [3, 4]])


def test_copyto_ndarray_on_other_context_returns_target():
    a = nd.array([1, 2, 3], ctx=mx.cpu(1))
    t = nd.zeros((3,), ctx=mx.cpu(0))
    r = a.copyto(t)
    assert r is t
    assert t.context == mx.cpu(0)
    assert t.asnumpy().tolist() == [1, 2, 3]


def test_copyto_converts_dtype():
    t = nd.zeros((2,), dtype="float64")
    nd.array([1.5, 2.5]).copyto(t)
    assert t.dtype == np.float64
    assert t.asnumpy().tolist() == [1.5, 2.5]


def test_copyto_self_warns_and_returns_false():
    a = nd.ones((2,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert a.copyto(a) is False
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)


def test_copyto_bad_type_raises_type_error():
    with pytest.raises(TypeError):
        nd.ones((2,)).copyto(np.zeros(2))


def test_as_in_context_same_ctx_returns_self():
    a = nd.ones((2,), ctx=mx.cpu(1))
    assert a.as_in_context(mx.cpu(1)) is a


def test_as_in_context_other_ctx_copies():
    a = nd.ones((2,), ctx=mx.cpu(0))
    b = a.as_in_context(mx.cpu(1))
    assert b is not a and b.context == mx.cpu(1)
    b[:] = 5
    assert a.asnumpy().tolist() == [1, 1]


def test_copy_is_deep():
    a = nd.ones((2,), ctx=mx.cpu(1))
    b = a.copy()
    assert b.context == mx.cpu(1)
    b[:] = 3
    assert a.asnumpy().tolist() == [1, 1]


def test_mixed_cpu_ids_compute_on_first_operand_context():
    a = nd.ones((2,), ctx=mx.cpu(1))
    b = nd.ones((2,), ctx=mx.cpu(0)) * 2
    c = a + b
    assert c.context == mx.cpu(1)
    assert c.asnumpy().tolist() == [3, 3]
    assert (b - a).context == mx.cpu(0)


def test_ops_stay_on_their_context(ctx):
    a = nd.array([1, 2, 3], ctx=ctx)
    for res in (a + 1, a * a, -a, a.sum(), nd.dot(a, a), a.reshape((3, 1)), a[1:]):
        assert res.context == ctx


# --- asnumpy, waitall -------------------------------------------------------------------------------
def test_asnumpy_returns_a_copy():
    a = nd.ones((2, 2))
    n = a.asnumpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    n[:] = 7
    assert np.all(a.asnumpy() == 1)
    a[:] = 3
    assert np.all(n == 7)


def test_asnumpy_of_a_view_is_a_copy():
    a = nd.zeros((2, 2))
    n = a[0].asnumpy()
    n[:] = 4
    assert np.all(a.asnumpy() == 0)


def test_waitall_after_work():
    a = nd.ones((50, 50))
    for _ in range(5):
        a = nd.dot(a, a) / 50
    assert nd.waitall() is None
    assert np.allclose(a.asnumpy(), 1.0)


def test_wait_to_read():
    a = nd.ones((3,)) + 1
    a.wait_to_read()
    assert a.asnumpy().tolist() == [2, 2, 2]


# --- random seeding -------------------------------------------------------------------------------------
SAMPLERS = {
    "mx.random.uniform": lambda **kw: mx.random.uniform(-1, 1, shape=(4, 5), **kw),
    "mx.random.normal": lambda **kw: mx.random.normal(0, 2, shape=(4, 5), **kw),
    "mx.nd.random.uniform": lambda **kw: mx.nd.random.uniform(-1, 1, shape=(4, 5), **kw),
    "mx.nd.random.normal": lambda **kw: mx.nd.random.normal(0, 2, shape=(4, 5), **kw),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_seed_makes_draws_repeatable(name):
    sample = SAMPLERS[name]
    mx.random.seed(123)
    first = [sample().asnumpy() for _ in range(2)]
    mx.random.seed(123)
    second = [sample().asnumpy() for _ in range(2)]
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])
    mx.random.seed(124)
    assert not np.array_equal(sample().asnumpy(), first[0])


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_sampler_shape_dtype_context(name):
    mx.random.seed(0)
    x = SAMPLERS[name](ctx=mx.cpu(1))
    assert x.shape == (4, 5)
    assert x.dtype == np.float32
    assert x.context == mx.cpu(1)


def test_uniform_range_and_normal_moments():
    mx.random.seed(7)
    u = mx.random.uniform(2, 3, shape=(20000,)).asnumpy()
    assert u.min() >= 2 and u.max() < 3
    assert abs(u.mean() - 2.5) < 0.02
    n = mx.random.normal(1, 2, shape=(20000,)).asnumpy()
    assert abs(n.mean() - 1) < 0.1 and abs(n.std() - 2) < 0.1


def test_sampler_without_shape_gives_shape_1():
    assert mx.random.uniform().shape == (1,)
    assert mx.nd.random.normal().shape == (1,)


def test_sampler_out_argument():
    out = nd.zeros((3, 2))
    mx.random.seed(1)
    r = mx.random.uniform(0, 1, out=out)
    assert r is out
    o = out.asnumpy()
    assert np.all((o >= 0) & (o < 1)) and len(np.unique(o)) > 1


def test_seed_with_context_argument():
    mx.random.seed(5, ctx=mx.cpu(0))
    a = mx.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(5, ctx=mx.cpu(0))
    b = mx.random.uniform(shape=(3,)).asnumpy()
    assert np.array_equal(a, b)


# --- the engine --------------------------------------------------------------------------------------
class CountingEngine(engine.NaiveEngine):
    """Runs every push at once, like the naive engine, and records it.

    It reports asynchronous work in flight at all times, so operations take their engine path
    (when nothing is in flight, small operations may run directly: see ``engine.idle``)."""

    _inflight = frozenset({"always busy"})

    def __init__(self):
        self.pushes = []
        self.waits = 0

    def push(self, fn, reads=(), writes=(), ctx=None, *args, **kwargs):
        self.pushes.append((tuple(reads), tuple(writes), ctx))
        return super().push(fn, reads, writes, ctx, *args, **kwargs)

    def wait_all(self):
        self.waits += 1
        super().wait_all()

    def take(self):
        out, self.pushes = self.pushes, []
        return out


@pytest.fixture
def counting():
    eng = CountingEngine()
    token = engine.set_engine(eng)
    try:
        yield eng
    finally:
        engine.set_engine(token)
    assert engine.get_engine() is not eng


def test_engine_fixture_installs_and_resets(counting):
    assert engine.get_engine() is counting


@pytest.mark.parametrize("expr", [
    "a + b", "a - 1", "a * b", "2 / a", "-a", "a ** 2", "a > b", "a == 1", "a % 3",
])
def test_arithmetic_is_pushed(counting, expr):
    a, b = nd.ones((2, 3)), nd.ones((2, 3)) * 2
    counting.take()
    res = eval(expr, {"a": a, "b": b})
    assert counting.take(), f"{expr} did not push to the engine"
    res.asnumpy()


def test_inplace_arithmetic_is_pushed_with_a_write(counting):
    a = nd.ones((2, 3))
    counting.take()
    a += 1
    pushes = counting.take()
    assert pushes and any(writes for _, writes, _ in pushes)


@pytest.mark.parametrize("key,value", [
    (slice(None), 3.0),
    (0, 1),
    (slice(None), "nd"),
    ((slice(None), 1), "numpy"),
], ids=["all-scalar", "row-scalar", "all-ndarray", "column-numpy"])
def test_setitem_is_pushed_with_a_write(counting, key, value):
    a = nd.zeros((2, 3))
    src = {"nd": nd.ones((2, 3)), "numpy": np.ones(2)}.get(value, value)
    counting.take()
    a[key] = src
    pushes = counting.take()
    assert pushes and any(writes for _, writes, _ in pushes)


def test_copyto_is_pushed(counting):
    a = nd.ones((2, 3))
    t = nd.zeros((2, 3), ctx=mx.cpu(1))
    counting.take()
    a.copyto(t)
    pushes = counting.take()
    assert pushes and any(writes for _, writes, _ in pushes)
    a.copyto(mx.cpu(1))
    assert counting.take()


def test_creation_and_operators_are_pushed(counting):
    counting.take()
    nd.zeros((2,))
    assert counting.take()
    x = nd.array([1.0, 2.0])
    assert counting.take()
    nd.dot(x, x)
    assert counting.take()
    x.sum()
    assert counting.take()


def test_waitall_goes_to_the_engine(counting):
    nd.waitall()
    assert counting.waits == 1


def test_executor_forward_and_backward_are_pushed(counting):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(2, 4))
    counting.take()
    ex.forward(is_train=True)
    assert counting.take(), "forward did not push"
    ex.backward()
    assert counting.take(), "backward did not push"
