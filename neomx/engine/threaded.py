"""ThreadedEngine: asynchronous pushes run on one worker thread per device."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from .base import sync_devices


def _vars(arrays):
    out = []
    for a in arrays:
        v = getattr(a, "_var", None)
        if v is not None:
            out.append(v)
    return out


class ThreadedEngine:
    """Per-device worker threads with MXNet's read/write dependency tracking.

    Inline pushes (most NDArray operations) run on the caller's thread once their dependencies are
    done; when nothing asynchronous is in flight this costs one check. Asynchronous pushes
    (executor forward/backward) go to the worker of their context and return at once.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._workers: dict = {}
        self._inflight: set = set()
        self._errors: list = []

    # --- dependencies ---------------------------------------------------------------------
    def _deps(self, rvars, wvars):
        deps = []
        for v in rvars:
            f = v.write
            if f is not None and not f.done():
                deps.append(f)
        for v in wvars:
            f = v.write
            if f is not None and not f.done():
                deps.append(f)
            deps.extend(r for r in v.reads if not r.done())
        return deps

    @staticmethod
    def _wait(deps):
        for f in deps:
            f.result()  # re-raises the error of a failed dependency

    # --- pushing --------------------------------------------------------------------------
    def push(self, fn, reads=(), writes=(), ctx=None, asynchronous=False):
        if not asynchronous or ctx is None:
            if self._inflight:
                with self._lock:
                    deps = self._deps(_vars(reads), _vars(writes))
                self._wait(deps)
            return fn()
        rvars, wvars = _vars(reads), _vars(writes)
        fut: Future = Future()
        with self._lock:
            deps = self._deps(rvars, wvars)
            for v in rvars:
                v.reads = [r for r in v.reads if not r.done()]
                v.reads.append(fut)
            for v in wvars:
                v.write = fut
                v.reads = []
            self._inflight.add(fut)
        fut.add_done_callback(self._finished)
        self._worker(ctx).submit(self._run, fn, deps, fut)
        return None

    def _run(self, fn, deps, fut):
        if not fut.set_running_or_notify_cancel():
            return
        try:
            self._wait(deps)
            fut.set_result(fn())
        except BaseException as e:  # delivered at the next wait, like MXNet's engine
            fut.set_exception(e)

    def _finished(self, fut):
        with self._lock:
            self._inflight.discard(fut)
            if fut.exception() is not None:
                self._errors.append(fut.exception())

    def _worker(self, ctx):
        key = (ctx.device_typeid, ctx.device_id)
        w = self._workers.get(key)
        if w is None:
            with self._lock:
                w = self._workers.get(key)
                if w is None:
                    w = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"neomx-{ctx}")
                    self._workers[key] = w
        return w

    # --- waiting --------------------------------------------------------------------------
    def wait_for(self, array):
        if not self._inflight:
            return
        v = getattr(array, "_var", None)
        if v is None:
            return
        f = v.write
        if f is not None:
            try:
                f.result()
            except BaseException as e:
                with self._lock:  # reported here, so not again by wait_all
                    self._errors = [x for x in self._errors if x is not e]
                raise

    def wait_all(self):
        while True:
            with self._lock:
                pending = list(self._inflight)
            if not pending:
                break
            for f in pending:
                try:
                    f.result()
                except BaseException:
                    pass
        sync_devices()
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            raise errors[0]
