"""Helpers for comparing neomx against the MXNet 1.9.1 golden records in tests/golden/foundation.

The records are written by ``tools/make_golden_foundation.py``; these helpers replay the stored
code the same way (fresh name/attribute scopes, stdout and warnings captured) and compare
error records by exception class and by the human-readable core of MXNet's message.
"""
from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np

import neomx as mx

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "foundation"


def load_golden(name: str) -> dict:
    with open(GOLDEN_DIR / name, encoding="utf-8") as f:
        return json.load(f)


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


# --- error records --------------------------------------------------------------------------------
_TRACEBACK = re.compile(r'Traceback \(most recent call last\):\n(?:  File "[^"]*", line \d+\n)+')
_CHECK = re.compile(r"Check failed: [^:\n]*: ")
_OPERATOR = re.compile(r"(Error in operator [^:\s]+): ")
_PY_PREFIX_END = re.compile(r"MXNetError: |Traceback \(most recent call last\)|\[HH:MM:SS\]")


def squash(text: str) -> str:
    """Collapse runs of spaces (MXNet has some from Python line continuations) and strip."""
    return re.sub(r" {2,}", " ", text).strip()


def core_fragments(message: str) -> list[str]:
    """The human-readable parts of an MXNet ``error_message``.

    C++ locations (``Traceback ... File "../src/...", line N``) and ``Check failed: <expr>:``
    prefixes are dropped; an ``Error in operator <node>`` prefix is kept as its own fragment.
    """
    text = _TRACEBACK.sub("", message)
    frags = []
    m = _OPERATOR.match(text)
    if m:
        frags.append(m.group(1))
        text = text[m.end():]
    checks = list(_CHECK.finditer(text))
    if checks:
        text = text[checks[-1].end():]
    text = squash(text)
    if text:
        frags.append(text)
    return frags


def python_prefix(record: dict) -> str:
    """Text MXNet's Python layer put before the C++ message (``simple_bind error. Arguments:``)."""
    full = record.get("error", "")
    m = _PY_PREFIX_END.search(full)
    return full[:m.start()] if m and m.start() > 0 else ""


def assert_error_matches(exc: BaseException, record: dict, fragments=None):
    """``exc`` is in the recorded class family and its message holds the core of MXNet's text.

    ``fragments`` overrides the parts taken from ``record['error_message']``.
    """
    etype = record["error_type"]
    if etype == "MXNetError":
        assert isinstance(exc, mx.base.MXNetError), (
            f"expected MXNetError, got {type(exc).__name__}: {exc}")
    for base in record["error_is"]:
        assert isinstance(exc, getattr(builtins, base)), (
            f"expected a {base} ({etype}), got {type(exc).__name__}: {exc}")
    got = squash(str(exc))
    want = core_fragments(record["error_message"]) if fragments is None else fragments
    for frag in want:
        assert squash(frag) in got, (
            f"MXNet's message part {frag!r} not found in neomx's {type(exc).__name__} message "
            f"{str(exc)!r}")
    prefix = python_prefix(record)
    if prefix:
        assert str(exc).startswith(prefix), (
            f"expected the message to start with {prefix!r}, got {str(exc)!r}")


def assert_warnings(box: Captured, recorded: list[str]):
    """Every recorded MXNet warning text appears among the captured warnings."""
    for text in recorded:
        assert any(squash(text) in squash(w) for w in box.warnings), (
            f"warning {text!r} not raised; got {box.warnings!r}")
