"""``mx.engine.bulk`` / ``set_bulk_size`` as MXNet 1.9.1 (thread-local size, previous size
returned, scopes restore it) and their effect on the threaded engine: inside a bulk, pushes on
arrays that in-flight work does not touch run without the engine lock, pushes on arrays it does
touch still wait for it, and an asynchronous push ends the segment.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import neomx as mx
from neomx import engine


def test_set_bulk_size_returns_previous():
    # MXNet 1.9.1: initial 0; set_bulk_size(5) -> 0, (7) -> 5; a bulk scope restores the size
    prev = engine.set_bulk_size(0)
    try:
        assert engine.set_bulk_size(5) == 0
        assert engine.set_bulk_size(7) == 5
        with engine.bulk(3) as scope:
            assert engine.set_bulk_size(3) == 3
        assert isinstance(scope, engine._BulkScope)
        assert engine.set_bulk_size(np.int64(9)) == 7
        with pytest.raises(ValueError):
            with engine.bulk(4):
                raise ValueError("inside")
        assert engine.set_bulk_size(0) == 9
    finally:
        engine.set_bulk_size(prev)


@pytest.mark.parametrize("bad, msg", [("a", "'str' object cannot be interpreted as an integer"),
                                      (2.5, "'float' object cannot be interpreted as an integer")])
def test_set_bulk_size_bad_input(bad, msg):
    with pytest.raises(TypeError, match=msg):
        engine.set_bulk_size(bad)
    with pytest.raises(TypeError, match=msg):
        with engine.bulk(bad):
            pass


def test_bulk_size_is_per_thread():
    prev = engine.set_bulk_size(11)
    seen = []
    t = threading.Thread(target=lambda: seen.append(engine.set_bulk_size(1)))
    t.start()
    t.join()
    try:
        assert seen == [0] and engine.set_bulk_size(11) == 11
    finally:
        engine.set_bulk_size(prev)


class _CountingLock:
    """A lock that counts how often the calling thread takes it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.main = threading.get_ident()
        self.taken = 0

    def __enter__(self):
        if threading.get_ident() == self.main:
            self.taken += 1
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)


@contextlib.contextmanager
def threaded_with_job():
    """A fresh ThreadedEngine whose cpu(1) worker holds ``y`` until ``release`` is set."""
    eng = engine.ThreadedEngine()
    eng._lock = lock = _CountingLock()
    prev = engine.set_engine(eng)
    release = threading.Event()
    y = mx.nd.zeros((2, 2))
    try:
        engine.push(lambda: release.wait(10), reads=(), writes=(y,), ctx=mx.cpu(1),
                    asynchronous=True)
        yield eng, lock, release, y
    finally:
        release.set()
        engine.set_engine(prev)


def test_bulk_skips_the_lock_for_unrelated_arrays():
    x = mx.nd.zeros((2, 2))
    with threaded_with_job() as (eng, lock, release, y):
        assert not engine.idle()
        lock.taken = 0
        for _ in range(30):
            x += 1
        unbulked = lock.taken
        lock.taken = 0
        with engine.bulk(10):
            for _ in range(30):
                x += 1
        bulked = lock.taken
        release.set()
    assert unbulked >= 30 and bulked == 3  # one snapshot per segment of 10 pushes
    assert x.asnumpy().tolist() == [[60, 60], [60, 60]]


def test_bulk_still_waits_for_in_flight_work_on_its_arrays():
    order = []
    with threaded_with_job() as (eng, lock, release, y):
        def first():
            release.wait(10)
            order.append("async")
        engine.push(first, reads=(), writes=(y,), ctx=mx.cpu(1), asynchronous=True)
        with engine.bulk(100):
            threading.Timer(0.05, release.set).start()
            engine.push(lambda: order.append("inline"), reads=(y,), writes=())
    assert order == ["async", "inline"]


def test_async_push_ends_the_segment():
    x = mx.nd.zeros((2, 2))
    order = []
    with threaded_with_job() as (eng, lock, release, y):
        with engine.bulk(100):
            x += 1  # snapshot: x is free
            gate = threading.Event()

            def writer():
                gate.wait(10)
                order.append("async-x")
            engine.push(writer, reads=(), writes=(x,), ctx=mx.cpu(0), asynchronous=True)
            threading.Timer(0.05, gate.set).start()
            engine.push(lambda: order.append("inline-x"), reads=(x,), writes=())
        release.set()
    assert order == ["async-x", "inline-x"]


def test_bulk_on_the_naive_engine_changes_nothing():
    prev = engine.set_engine(engine.NaiveEngine())
    try:
        x = mx.nd.ones((3,))
        with engine.bulk(5):
            for _ in range(7):
                x *= 2
        assert x.asnumpy().tolist() == [128, 128, 128]
    finally:
        engine.set_engine(prev)
