"""``mx.profiler``: per-operator timings as MXNet 1.9.1's profiler gives them.

``set_config(...)`` then ``set_state('run')`` (or ``start()``) records every operator neomx
runs: imperative ``mx.nd`` calls (category ``operator``, from the imperative dispatch), the
steps of executors and cached graphs (``operator``, named by the op, the node in ``args``),
and the user's ``Domain``/``Task``/``Frame``/``Event``/``Counter``/``Marker`` objects.
``dump()`` writes them as a Chrome trace (``{"traceEvents": [...]}``: chrome://tracing and
Perfetto open it), ``dumps()`` returns MXNet's aggregate table (or JSON).

When the profiler is off the hooks cost one attribute test: ``STATE.imperative`` in the
imperative dispatch and ``STATE.symbolic`` once per executor plan run.
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time

from .base import MXNetError

__all__ = ["set_config", "profiler_set_config", "set_state", "profiler_set_state", "dump",
           "dump_profile", "dumps", "pause", "resume", "start", "stop", "Domain", "Task", "Frame",
           "Event", "Counter", "Marker", "scope", "set_kvstore_handle"]


class _State:
    """What the hooks read: plain attributes, False while the profiler does not record."""

    __slots__ = ("imperative", "symbolic")

    def __init__(self):
        self.imperative = False
        self.symbolic = False


STATE = _State()
_CONFIG_KEYS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory",
                "profile_api", "filename", "continuous_dump", "dump_period", "aggregate_stats",
                "profile_process")
_config = {"profile_all": False, "profile_symbolic": True, "profile_imperative": True,
           "profile_memory": True, "profile_api": True, "filename": "profile.json",
           "continuous_dump": False, "dump_period": 1.0, "aggregate_stats": False}
_run = {"state": "stop", "paused": False}
_lock = threading.Lock()
_events: list = []      # Chrome trace events
_stats: dict = {}       # category -> name -> [count, total_us, min_us, max_us]
_pids: dict = {}        # category -> pid of its "process" row in the trace
_scope = threading.local()
_T0 = time.perf_counter_ns()
_EPOCH_US = time.time_ns() // 1000


def _now_us() -> float:
    return _EPOCH_US + (time.perf_counter_ns() - _T0) / 1000.0


def _truthy(v):
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true")


def set_config(**kwargs):
    """Set up the profiler: ``profile_all``, ``profile_symbolic``, ``profile_imperative``,
    ``profile_memory``, ``profile_api``, ``filename``, ``continuous_dump``, ``dump_period``,
    ``aggregate_stats`` (collect the statistics ``dumps`` prints), ``profile_process``."""
    for k, v in kwargs.items():
        if k not in _CONFIG_KEYS:
            raise MXNetError(f"Cannot find argument '{k}', Possible Arguments: "
                             + ", ".join(_CONFIG_KEYS))
        _config[k] = v if k in ("filename", "profile_process", "dump_period") else _truthy(v)
    if _truthy(_config.get("profile_all")):
        for k in ("profile_symbolic", "profile_imperative", "profile_memory", "profile_api"):
            _config[k] = True
    _apply()


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated form of :func:`set_config`."""
    set_config(**{"profile_" + mode: True, "filename": filename})


def _apply():
    on = _run["state"] == "run" and not _run["paused"]
    STATE.imperative = on and bool(_config["profile_imperative"])
    STATE.symbolic = on and bool(_config["profile_symbolic"])


def set_state(state="stop", profile_process="worker"):
    """``'run'`` starts recording, ``'stop'`` stops it."""
    if state not in ("run", "stop"):
        raise MXNetError(f"Invalid Input: '{state}', valid values are: {{'run', 'stop'}}")
    _run["state"] = state
    _apply()


profiler_set_state = set_state


def start(profile_process="worker"):
    set_state("run", profile_process)


def stop(profile_process="worker"):
    set_state("stop", profile_process)


def pause(profile_process="worker"):
    """Stop recording until :func:`resume` (the configuration and the records stay)."""
    _run["paused"] = True
    _apply()


def resume(profile_process="worker"):
    _run["paused"] = False
    _apply()


def _recording() -> bool:
    return _run["state"] == "run" and not _run["paused"]


# --- recording ---------------------------------------------------------------------------------
def _pid(cat):
    pid = _pids.get(cat)
    if pid is None:
        pid = _pids[cat] = len(_pids)
    return pid


def record(name, cat, start_us, end_us, args=None):
    """One complete event (``B``/``E`` pair in the trace) and its statistics."""
    tid = threading.get_ident()
    sc = getattr(_scope, "name", None)
    if sc is not None:
        args = dict(args or {}, scope=sc)
    with _lock:
        pid = _pid(cat)
        b = {"name": name, "cat": cat, "ph": "B", "ts": start_us, "pid": pid, "tid": tid}
        if args:
            b["args"] = args
        _events.append(b)
        _events.append({"name": name, "cat": cat, "ph": "E", "ts": end_us, "pid": pid, "tid": tid})
        _add_stat(cat, name, end_us - start_us)


def _add_stat(cat, name, dur):
    st = _stats.setdefault(cat, {}).get(name)
    if st is None:
        _stats[cat][name] = [1, dur, dur, dur]
    else:
        st[0] += 1
        st[1] += dur
        st[2] = min(st[2], dur)
        st[3] = max(st[3], dur)


def _sync(out):
    """Wait for a GPU result so the event covers the kernel, not only its launch."""
    t = getattr(out, "_data", None)
    if t is not None and t.is_cuda:
        import torch
        torch.cuda.synchronize(t.device)


def call_imperative(opname, fn, args, kwargs):
    """The imperative dispatch while the profiler records: ``fn(*args, **kwargs)`` timed."""
    t0 = _now_us()
    res = fn(*args, **kwargs)
    _sync(res[0] if isinstance(res, (list, tuple)) and res else res)
    record(opname, "operator", t0, _now_us())
    return res


def step_event(node, t0_ns, res, fused_from=None):
    """An executor step that started at ``t0_ns`` and returned ``res`` (``Plan.run`` with the
    symbolic profiler on). A fused step (``fused_from``: the producer node it computes first)
    is one event named after both operators, e.g. ``Convolution+Activation``."""
    first = res[0] if isinstance(res, (list, tuple)) and res else res
    if getattr(first, "is_cuda", False):
        import torch
        torch.cuda.synchronize(first.device)
    name, label = node.op.name, node.name
    if fused_from is not None:
        name, label = f"{fused_from.op.name}+{name}", f"{fused_from.name} + {label}"
    record(name, "operator", _EPOCH_US + (t0_ns - _T0) / 1000.0, _now_us(), {"node": label})


# --- output ------------------------------------------------------------------------------------
def dump(finished=True, profile_process="worker"):
    """Write the trace to the configured file (Chrome trace JSON). ``finished`` stops the
    profiler (MXNet: no more dumps after the final one)."""
    with _lock:
        meta = [{"ph": "M", "args": {"name": cat}, "pid": pid, "name": "process_name"}
                for cat, pid in _pids.items()]
        doc = {"traceEvents": meta + list(_events), "displayTimeUnit": "ms"}
    path = _config["filename"]
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)
    if finished:
        set_state("stop")


def dump_profile():
    """Deprecated form of :func:`dump`."""
    dump(True)


_SORT = {"total": 1, "avg": None, "min": 2, "max": 3, "count": 0}


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """The aggregate statistics (``aggregate_stats=True``) as MXNet's table or JSON; ``reset``
    clears them afterwards."""
    if format not in ("table", "json"):
        raise MXNetError(f"Invalid format '{format}', expected 'table' or 'json'")
    if sort_by not in _SORT:
        raise MXNetError(f"Invalid sort_by '{sort_by}', expected one of {sorted(_SORT)}")
    with _lock:
        stats = {c: {n: list(v) for n, v in d.items()} for c, d in _stats.items()}
        if reset:
            _stats.clear()

    def key(item):
        c, tot, mn, mx = item[1]
        return tot / c if sort_by == "avg" else item[1][_SORT[sort_by]]

    def ms(us):
        return us / 1000.0

    if format == "json":
        doc = {"Time": {}, "Unit": {"Time": "ms"}}
        for cat in sorted(stats):
            items = sorted(stats[cat].items(), key=key, reverse=not ascending)
            doc["Time"][cat] = {n: {"Count": c, "Total": round(ms(t), 4), "Min": round(ms(a), 4),
                                    "Max": round(ms(b), 4), "Avg": round(ms(t) / c, 4)}
                                for n, (c, t, a, b) in items}
        return json.dumps(doc, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for cat in sorted(stats):
        lines += [cat, "=================",
                  f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                  f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}",
                  f"{'----':<30}{'-----------':>11}{'---------':>17}{'-------------':>17}"
                  f"{'-------------':>17}{'-------------':>17}"]
        for n, (c, t, a, b) in sorted(stats[cat].items(), key=key, reverse=not ascending):
            lines.append(f"{n:<30}{c:>11}{ms(t):>17.4f}{ms(a):>17.4f}{ms(b):>17.4f}"
                         f"{ms(t) / c:>17.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"


def set_kvstore_handle(handle):
    """(MXNet: the kvstore whose server process a distributed profiler controls; unused.)"""


# --- user objects ------------------------------------------------------------------------------
class Domain:
    """A named category of Tasks, Frames, Counters and Markers."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Span:
    _cat_suffix = ""

    def __init__(self, domain, name):
        self.domain, self.name = domain, name
        self._t0 = None

    def start(self):
        self._t0 = _now_us()

    def stop(self):
        if self._t0 is not None and _recording():
            cat = str(self.domain) + self._cat_suffix
            record(self.name, cat, self._t0, _now_us())
        self._t0 = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Span):
    """A span of work in a domain (``start()``/``stop()``)."""


class Frame(_Span):
    """A frame (a span recorded in the domain's ``,frame`` category, as MXNet's)."""

    _cat_suffix = ",frame"


class Event(_Span):
    """A span in the ``event`` category."""

    def __init__(self, name):
        super().__init__("event", name)


class Counter:
    """A value in a domain, recorded on every change (a ``C`` event in the trace)."""

    def __init__(self, domain, name, value=None):
        self.domain, self.name = domain, name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        self.value = int(value)
        if _recording():
            t = _now_us()
            with _lock:
                _events.append({"name": self.name, "cat": str(self.domain), "ph": "C", "ts": t,
                                "args": {self.name: self.value}, "pid": _pid(str(self.domain)),
                                "tid": threading.get_ident()})
                _add_stat(str(self.domain), self.name, 0.0)

    def increment(self, delta=1):
        self.set_value(self.value + delta)

    def decrement(self, delta=1):
        self.set_value(self.value - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """An instant in a domain: ``mark(scope)`` with scope 'global', 'process', 'thread',
    'task' or 'marker'."""

    def __init__(self, domain, name):
        self.domain, self.name = domain, name

    def mark(self, scope="process"):  # noqa: A002
        if not _recording():
            return
        cat = str(self.domain) + ",instant_marker"
        with _lock:
            _events.append({"name": self.name, "cat": cat, "ph": "i", "ts": _now_us(),
                            "s": {"global": "g", "thread": "t"}.get(scope, "p"),
                            "pid": _pid(cat), "tid": threading.get_ident()})
            _stats.setdefault(cat, {})


@contextlib.contextmanager
def scope(name="<unk>:", append_mode=True):
    """Operators run inside are tagged with this scope (``args.scope`` in the trace); with
    ``append_mode`` it is appended to the enclosing scope."""
    name = name if name.endswith(":") else name + ":"
    prev = getattr(_scope, "name", None)
    _scope.name = (prev + name) if (append_mode and prev and prev != "<unk>:") else name
    try:
        yield
    finally:
        _scope.name = prev
