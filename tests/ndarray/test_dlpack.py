"""DLPack and zero-copy numpy: mx.nd.to_dlpack_for_read/write, from_dlpack, from_numpy
(MXNet 1.9.1's semantics: shared memory, waits on the engine, MXNet's errors)."""
import threading
import time

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import engine


def test_read_capsule_round_trip_shares_memory():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    cap = mx.nd.to_dlpack_for_read(x)
    assert type(cap).__name__ == "PyCapsule"
    z = mx.nd.from_dlpack(cap)
    assert type(z) is mx.nd.NDArray and z.context == mx.cpu(0) and z.dtype == np.float32
    np.testing.assert_array_equal(z.asnumpy(), x.asnumpy())
    x[:] = 7  # same storage
    assert z.asnumpy()[1, 2] == 7


def test_write_capsule_writes_through():
    x = mx.nd.ones((2, 3))
    u = mx.nd.from_dlpack(x.to_dlpack_for_write())
    u += 1
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 2, np.float32))


def test_capsule_consumed_once_and_bad_input():
    x = mx.nd.ones((2,))
    cap = x.to_dlpack_for_read()
    mx.nd.from_dlpack(cap)
    with pytest.raises(AssertionError, match="consumed only once"):
        mx.nd.from_dlpack(cap)
    with pytest.raises(AssertionError):
        mx.nd.from_dlpack(3)
    with pytest.raises(AttributeError, match="wait_to_read"):
        mx.nd.to_dlpack_for_read(np.ones(2))


def test_interop_with_torch_and_views():
    v = mx.nd.arange(10)[2:5]
    t = torch.utils.dlpack.from_dlpack(mx.nd.to_dlpack_for_read(v))
    assert t.tolist() == [2.0, 3.0, 4.0]
    src = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    a = mx.nd.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    assert a.dtype == np.int32 and a.shape == (2, 3)
    src[0, 0] = 9
    assert a.asnumpy()[0, 0] == 9


def _slow_async_write(x, value, delay=0.2):
    def job():
        time.sleep(delay)
        x._data.fill_(value)
    engine.push(job, writes=(x,), ctx=mx.cpu(1), asynchronous=True)


def test_read_waits_for_pending_write():
    x = mx.nd.zeros((3,), ctx=mx.cpu(1))
    _slow_async_write(x, 5.0)
    t = torch.utils.dlpack.from_dlpack(mx.nd.to_dlpack_for_read(x))
    assert t.tolist() == [5.0, 5.0, 5.0]


def test_write_waits_for_pending_read():
    x = mx.nd.ones((3,), ctx=mx.cpu(1))
    seen = []
    done = threading.Event()

    def reader():
        time.sleep(0.2)
        seen.append(x._data.clone())
        done.set()
    engine.push(reader, reads=(x,), ctx=mx.cpu(1), asynchronous=True)
    cap = mx.nd.to_dlpack_for_write(x)
    assert done.is_set()  # the earlier read finished before the capsule was handed out
    torch.utils.dlpack.from_dlpack(cap).fill_(4)
    assert seen[0].tolist() == [1.0, 1.0, 1.0]
    mx.nd.waitall()


def test_from_numpy_zero_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = mx.nd.from_numpy(a)
    assert type(b) is mx.nd.NDArray and b.context == mx.cpu(0) and b.shape == (2, 3)
    assert not a.flags["WRITEABLE"]  # MXNet forbids writing the consumed numpy array
    with pytest.raises(ValueError, match="read-only"):
        a[0, 0] = 1
    b[0, 0] = 7
    assert a[0, 0] == 7


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "uint8", "int32", "int64",
                                   "bool"])
def test_from_numpy_dtypes(dtype):
    a = np.ones((2,), dtype=dtype)
    b = mx.nd.from_numpy(a)
    assert b.dtype == np.dtype(dtype).type
    np.testing.assert_array_equal(b.asnumpy(), a)


def test_from_numpy_errors_and_copy():
    t = np.arange(6.0).reshape(2, 3).T
    with pytest.raises(ValueError, match="Only c-contiguous arrays are supported for zero-copy"):
        mx.nd.from_numpy(t)
    c = mx.nd.from_numpy(t, zero_copy=False)  # a copy keeping the dtype
    assert c.dtype == np.float64
    np.testing.assert_array_equal(c.asnumpy(), t)
    assert t.flags["WRITEABLE"]
    with pytest.raises(ValueError, match="int8 is not supported."):
        mx.nd.from_numpy(np.ones(2, dtype=np.int8))
    with pytest.raises(ValueError, match="Cannot set flags on array scalars"):
        mx.nd.from_numpy(np.float64(3.0))


def test_names_in_both_modules():
    from neomx.ndarray import ndarray as nd_mod
    for name in ("from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write"):
        assert getattr(mx.nd, name) is getattr(nd_mod, name)
    assert mx.kvstore.base.create is mx.kv.create
