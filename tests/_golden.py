"""Shared helpers for the MXNet 1.9.1 golden records in tests/golden/foundation.

The records are written by ``tools/make_golden_foundation.py``. Error records are compared by
exception class and by the human-readable core of MXNet's message. Test packages import it as
``from .._golden import ...`` (every test folder is a package under ``tests``).
"""
from __future__ import annotations

import builtins
import json
import re
from pathlib import Path

import neomx as mx

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "foundation"


def load_golden(name: str) -> dict:
    with open(GOLDEN_DIR / name, encoding="utf-8") as f:
        return json.load(f)


_TRACEBACK = re.compile(r'Traceback \(most recent call last\):\n(?:  File "[^"]*", line \d+\n)+')
_CHECK = re.compile(r"Check failed: [^:\n]*: ")
_OPERATOR = re.compile(r"(Error in operator [^:\s]+): ")


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
