"""Helpers for comparing neomx against the MXNet 1.9.1 golden records in tests/golden/foundation.

The records are written by ``tools/make_golden_foundation.py``; these helpers replay the stored
code the same way (fresh name/attribute scopes, stdout and warnings captured) and compare
error records by exception class and by the human-readable core of MXNet's message.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import warnings

import numpy as np

import neomx as mx
from .._golden import GOLDEN_DIR, load_golden, squash
from .._golden import assert_error_matches as _assert_error_core

__all__ = ["GOLDEN_DIR", "load_golden", "namespace", "fresh_scopes", "Captured", "capture",
           "build_symbol", "error_body", "jsonable", "squash", "python_prefix",
           "assert_error_matches", "assert_warnings"]


# --- replaying stored code ----------------------------------------------------------------------
def namespace() -> dict:
    return {"mx": mx, "np": np, "os": os, "GOLDEN_DIR": str(GOLDEN_DIR)}


@contextlib.contextmanager
def fresh_scopes():
    """Fresh name counters and an empty attribute scope (as the generator used)."""
    with mx.name.NameManager():
        with mx.AttrScope():
            yield


class Captured:
    """stdout text and warning messages seen inside :func:`capture`."""

    def __init__(self):
        self.stdout = ""
        self.warnings: list[str] = []
        self.categories: list[type] = []


@contextlib.contextmanager
def capture():
    box = Captured()
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(buf):
            try:
                yield box
            finally:
                box.stdout = buf.getvalue()
                box.warnings = [str(w.message) for w in caught]
                box.categories = [w.category for w in caught]


def build_symbol(code: str):
    """Exec a golden ``code`` snippet and return its ``sym``."""
    ns = namespace()
    with fresh_scopes():
        exec(code, ns)
    return ns["sym"]


def error_body(code: str) -> str:
    """The generator's rewrite of an error snippet: the last line becomes ``__result__ = ...``."""
    lines = code.rstrip("\n").split("\n")
    last = lines[-1]
    indent = len(last) - len(last.lstrip())
    return "\n".join(lines[:-1] + [last[:indent] + "__result__ = " + last[indent:]])


def jsonable(v):
    """Tuples -> lists, numpy scalars -> python (as the generator recorded values)."""
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


# --- error records (class family and message core: see _golden) ------------------------------
_PY_PREFIX_END = re.compile(r"MXNetError: |Traceback \(most recent call last\)|\[HH:MM:SS\]")


def python_prefix(record: dict) -> str:
    """Text MXNet's Python layer put before the C++ message (``simple_bind error. Arguments:``)."""
    full = record.get("error", "")
    m = _PY_PREFIX_END.search(full)
    return full[:m.start()] if m and m.start() > 0 else ""


def assert_error_matches(exc: BaseException, record: dict, fragments=None):
    """``exc`` is in the recorded class family and its message holds the core of MXNet's text
    (:func:`_golden.assert_error_matches`), and it starts with the recorded Python prefix.

    ``fragments`` overrides the parts taken from ``record['error_message']``.
    """
    _assert_error_core(exc, record, fragments)
    prefix = python_prefix(record)
    if prefix:
        assert str(exc).startswith(prefix), (
            f"expected the message to start with {prefix!r}, got {str(exc)!r}")


def assert_warnings(box: Captured, recorded: list[str]):
    """Every recorded MXNet warning text appears among the captured warnings."""
    for text in recorded:
        assert any(squash(text) in squash(w) for w in box.warnings), (
            f"warning {text!r} not raised; got {box.warnings!r}")
