"""The imperative fast paths (operators, ``mx.nd`` functions, ``a[:] -= x``) give the results of
the general path, and respect asynchronous work in flight on the threaded engine."""
import threading

import numpy as np
import pytest

import neomx as mx
from neomx import engine, nd


@pytest.fixture
def threaded():
    prev = engine.set_engine(engine.ThreadedEngine())
    try:
        yield engine.get_engine()
    finally:
        engine.set_engine(prev)


def _slow_fill(arr, value, gate):
    """An asynchronous write to ``arr`` that waits for ``gate``: work in flight."""
    t = arr._data

    def fill():
        assert gate.wait(10)
        t.fill_(value)
    engine.push(fill, writes=(arr,), ctx=arr.context, asynchronous=True)


@pytest.mark.parametrize("expr, expect", [
    ("a + b", 7.0), ("a * b", 10.0), ("a - 1.0", 4.0), ("0.5 * a", 2.5), ("a / 2.0", 2.5),
    ("nd.relu(a)", 5.0), ("nd.tanh(a)", np.tanh(5.0)), ("nd.sum(a)", 30.0),
    ("nd.dot(a, b)", 30.0), ("a[:]", 5.0), ("nd.sum(a, axis=1)", 15.0),
])
def test_reads_wait_for_an_asynchronous_write(threaded, expr, expect):
    a, b = nd.ones((2, 3)), nd.ones((3, 3)) * 2 if "dot" in expr else nd.ones((2, 3)) * 2
    for _ in range(2):  # the second call takes the cached fast path
        gate = threading.Event()
        a[:] = 1
        _slow_fill(a, 5.0, gate)
        assert not engine.idle()
        timer = threading.Timer(0.05, gate.set)
        timer.start()
        res = eval(expr, {"a": a, "b": b, "nd": nd})
        assert np.allclose(res.asnumpy(), expect, rtol=1e-6)
        timer.join()
    mx.nd.waitall()
    assert engine.idle()


@pytest.mark.parametrize("stmt", ["a += b", "a -= 1.0", "a[:] -= b", "a *= b"])
def test_inplace_updates_wait_for_an_asynchronous_write(threaded, stmt):
    a, b = nd.ones((2, 3)), nd.ones((2, 3)) * 2
    gate = threading.Event()
    _slow_fill(a, 5.0, gate)
    timer = threading.Timer(0.05, gate.set)
    timer.start()
    exec(stmt, {"a": a, "b": b})
    expect = {"a += b": 7.0, "a -= 1.0": 4.0, "a[:] -= b": 3.0, "a *= b": 10.0}[stmt]
    assert np.allclose(a.asnumpy(), expect)
    timer.join()


def _general(name, *args, **kwargs):
    """The same op through the general path (an ``out=`` call never takes the fast path)."""
    res = getattr(nd, name)(*args, **kwargs)
    out = nd.zeros(res.shape, dtype=res.dtype)
    getattr(nd, name)(*args, out=out, **kwargs)
    return out


@pytest.mark.parametrize("name, kwargs", [
    ("relu", {}), ("tanh", {}), ("sigmoid", {}), ("exp", {}), ("sum", {}), ("mean", {}),
    ("nansum", {}), ("max", {}), ("prod", {}), ("sum", {"keepdims": True}), ("sum", {"axis": 1}),
    ("mean", {"axis": (0, 1), "exclude": True}),
])
def test_fast_unary_matches_general_path(name, kwargs):
    rng = np.random.RandomState(0)
    for shape in [(4, 5), (3, 1, 7), (200, 300)]:
        x = nd.array(rng.randn(*shape))
        for _ in range(3):  # first call: general path; then the fast path
            fast = getattr(nd, name)(x, **kwargs)
            assert fast.shape == _general(name, x, **kwargs).shape
            np.testing.assert_array_equal(fast.asnumpy(), _general(name, x, **kwargs).asnumpy())


def test_fast_dot_matches_general_path_and_checks():
    rng = np.random.RandomState(1)
    for sa, sb in [((4, 5), (5, 3)), ((2, 3, 4), (4, 6)), ((5,), (5,)), ((5,), (5, 2))]:
        a, b = nd.array(rng.randn(*sa)), nd.array(rng.randn(*sb))
        for _ in range(3):
            np.testing.assert_array_equal(nd.dot(a, b).asnumpy(), _general("dot", a, b).asnumpy())
    a = nd.ones((2, 3))
    nd.dot(a, nd.ones((3, 2)))
    with pytest.raises(mx.base.MXNetError, match=r"dot shape error: \[2,3\] X \[4,5\]"):
        nd.dot(a, nd.ones((4, 5)))
    with pytest.raises(mx.base.MXNetError, match="expected float32, got float64"):
        nd.dot(a, nd.ones((3, 2), dtype="float64"))


def test_fast_operators_keep_mxnet_rules():
    a = nd.ones((2, 3))
    with pytest.raises(mx.base.MXNetError, match=r"could not be broadcast.*\[2,3\] \[4,3\]"):
        a + nd.ones((4, 3))
    with pytest.raises(mx.base.MXNetError, match="could not be broadcast"):
        a += nd.ones((4, 3))
    with pytest.raises(mx.base.MXNetError, match="does not fit"):
        a += nd.ones((2, 2, 3))
    with pytest.raises(mx.base.MXNetError, match="expected float32, got int32"):
        a + nd.ones((2, 3), dtype="int32")
    a += nd.ones((3,))  # broadcasting into the array is fine
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 2.0))
    i = nd.array([3, 4], dtype="int32")
    assert (i * 1.5).asnumpy().tolist() == [3, 4]  # the scalar is cast to the array's dtype
    assert (i / 2.0).asnumpy().tolist() == [1, 2]


def test_whole_slice_is_a_view_of_the_same_storage():
    a = nd.ones((2, 3))
    v = a[:]
    v += 1
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 2.0))
    a[:] -= nd.ones((2, 3))
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 3)))
    a[:] = a[:]
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 3)))


def test_fluent_methods_reuse_the_cached_function():
    a = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.sum.__name__ == "sum"
    np.testing.assert_array_equal(a.sum(axis=1).asnumpy(), [3, 12])
    np.testing.assert_array_equal(a.sum(axis=1).asnumpy(), [3, 12])


@pytest.mark.parametrize("shape", [(1,), (1, 1), (3,), (0,), (2, 3, 4)])
def test_full_reductions_return_new_arrays(shape):
    x = nd.array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1)
    for _ in range(2):  # general path, then the fast path
        for name in ("sum", "mean", "max", "nansum"):
            if name == "max" and not x.size:
                continue
            r = getattr(nd, name)(x)
            assert r.shape == (1,)
            before = x.asnumpy().copy()
            r[:] = -7
            np.testing.assert_array_equal(x.asnumpy(), before)


def test_full_sum_of_one_element_is_a_new_array_while_the_engine_is_busy(threaded):
    nd.sum(nd.array([1.0]))
    nd.sum(nd.array([1.0]))  # the fast plan exists
    x = nd.array([3.0])
    gate = threading.Event()
    _slow_fill(x, 5.0, gate)
    assert not engine.idle()
    timer = threading.Timer(0.05, gate.set)
    timer.start()
    r = nd.sum(x)  # the plan's engine path (the kernel returns a (1,) input itself)
    r[:] = -1
    timer.join()
    assert r.asnumpy().tolist() == [-1.0]
    assert x.asnumpy().tolist() == [5.0]


# --- one dispatch --------------------------------------------------------------------------------
def test_operators_and_functions_share_one_dispatch():
    """``a + b`` and ``nd.broadcast_add(a, b)`` run the op's one direct computation (the plan of
    the function calls it too), and give the same results and errors, first call and later."""
    from neomx.ndarray import register
    run, run_inplace = register.direct_arithmetic("broadcast_add")
    fn = nd.broadcast_add
    fn.plans.clear()
    a, b = nd.ones((2, 3)), nd.ones((2, 3)) * 2
    (a + b).asnumpy()
    assert 2 not in fn.plans  # the operator needs no plan ...
    np.testing.assert_array_equal(fn(a, b).asnumpy(), 3.0)
    plan = fn.plans[2]  # ... the function's plan, made by its first call, runs the same code
    assert run in [c.cell_contents for c in plan.run.__closure__]
    cases = [(nd.ones((2, 3)), nd.ones((3,))), (nd.ones((2, 3)), nd.ones((2, 1), dtype="float64")),
             (nd.array([7, -7], dtype="int32"), nd.array([2, 2], dtype="int32")),
             (nd.ones((2, 3)), nd.ones((4,)))]
    for x, y in cases:
        for op, f in ((lambda u, v: u + v, nd.broadcast_add), (lambda u, v: u / v, nd.broadcast_div),
                      (lambda u, v: u * v, nd.broadcast_mul)):
            for _ in range(2):
                try:
                    want = f(x, y).asnumpy()
                except mx.base.MXNetError as e:
                    with pytest.raises(mx.base.MXNetError) as got:
                        op(x, y)
                    assert str(got.value) == str(e)
                    continue
                got = op(x, y).asnumpy()
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    s = nd._internal._mul_scalar
    s.plans.clear()
    s(a, scalar=3.0).asnumpy()
    assert (1, "scalar", 3.0, float) in s.plans
    for x in (nd.array([1, 2], dtype="int32"), nd.array([1.5, 2], dtype="float16")):
        for k in (3, 1.5, -2.5):
            for _ in range(2):
                got, want = (x * k).asnumpy(), s(x, scalar=k).asnumpy()
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)


def test_inplace_updates_keep_the_storage():
    a, b = nd.ones((2, 3)), nd.ones((3,))
    t = a._data
    for _ in range(2):  # general path, then the plan's in-place kernel
        a += b
        a *= 2.0
        a -= b
        a /= 2.0
    assert a._data is t
    np.testing.assert_allclose(a.asnumpy(), 2.0)  # ((1 + 1) * 2 - 1) / 2, twice


def test_inplace_integer_division_truncates_and_dtypes_must_match():
    i = nd.array([7, -7], dtype="int32")
    for _ in range(2):
        j = i.copy()
        j /= nd.array([2, 2], dtype="int32")
        assert j.asnumpy().tolist() == [3, -3]
    a = nd.ones((2,))
    with pytest.raises(mx.base.MXNetError, match="expected float32, got float64"):
        a += nd.ones((2,), dtype="float64")
    with pytest.raises(mx.base.MXNetError, match="expected float32, got float64"):
        a + nd.ones((2,), dtype="float64")


def test_many_scalars_overflow_the_plan_table():
    a = nd.ones((2,))
    for k in range(600):  # the table starts over when full; results stay right
        assert (a * float(k)).asnumpy().tolist() == [k, k]
        assert nd._internal._mul_scalar(a, scalar=float(k)).asnumpy().tolist() == [k, k]
    assert len(nd._internal._mul_scalar.plans) <= 2 * 256


def test_recording_uses_the_cached_plans():
    from neomx import autograd
    a, b = nd.ones((2, 3)), nd.ones((2, 3)) * 3
    a.attach_grad()
    for _ in range(2):
        a * b
        nd.relu(a)  # plans exist
        with autograd.record():
            y = nd.relu(a * b) + a
        assert y._ag is not None and y._ag[0].op.name == "broadcast_add"
        y.backward()
        np.testing.assert_array_equal(a.grad.asnumpy(), 4.0)


def test_only_the_engine_reads_its_in_flight_set():
    import pathlib
    root = pathlib.Path(mx.__file__).parent
    readers = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if "_inflight" in p.read_text() and p.parent.name != "engine"]
    assert readers == []
