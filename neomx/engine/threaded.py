"""ThreadedEngine: asynchronous pushes run on one worker thread per device."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from .base import bulk_state, sync_devices


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

    Bulk execution (``engine.bulk(size)``): while asynchronous work is in flight, an inline push
    normally takes the engine lock and scans its arrays' pending futures. Inside a bulk, the first
    push of each segment of ``size`` pushes takes the lock once and snapshots the Vars that
    in-flight work writes (``_busy_w``) and reads (``_busy_r``); the segment's later pushes whose
    arrays are in neither set run at once, lock-free. The snapshot stays valid (conservative)
    until the next asynchronous push, which bumps ``_gen`` and so ends the segment.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._workers: dict = {}
        self._inflight: set = set()
        self._errors: list = []
        self._fut_vars: dict = {}  # in-flight future -> (read Vars, write Vars), for bulk snapshots
        self._gen = 0  # bumped by every asynchronous push: ends the bulk segments of all threads

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
                if bulk_state.size > 0 and self._bulk_clear(reads, writes):
                    return fn()
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
            self._fut_vars[fut] = (rvars, wvars)
            self._gen += 1
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

    def _bulk_clear(self, reads, writes):
        """True when this push, inside a bulk segment, touches no array of in-flight work."""
        b = bulk_state
        if b.count == 0 or b.gen != self._gen:
            with self._lock:  # one lock per segment instead of one per push
                b.gen = self._gen
                b.busy_w = {v for rv, wv in self._fut_vars.values() for v in wv}
                b.busy_r = {v for rv, wv in self._fut_vars.values() for v in rv}
        b.count = b.count + 1 if b.count + 1 < b.size else 0
        busy_w, busy_r = b.busy_w, b.busy_r
        for a in reads:
            if getattr(a, "_var", None) in busy_w:
                return False
        for a in writes:
            v = getattr(a, "_var", None)
            if v in busy_w or v in busy_r:
                return False
        return True

    def _finished(self, fut):
        with self._lock:
            self._inflight.discard(fut)
            self._fut_vars.pop(fut, None)
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
        if not self._inflight and not self._errors:  # (a finished push's error: raised here)
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

    def drain(self):
        """Wait until no pushed work is in flight; errors stay recorded for ``wait_all``."""
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

    def wait_all(self):
        self.drain()
        sync_devices()
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            raise errors[0]
