"""Small helpers shared across layers."""
from __future__ import annotations

import os
import tempfile


def atomic_write_bytes(fname: str, data: bytes) -> None:
    """Write ``data`` to ``fname`` through a temp file in the same folder, renamed into place,
    so a crash never leaves a half-written file (nor destroys an existing one)."""
    fname = os.fspath(fname)
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, fname)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(fname: str, text: str) -> None:
    atomic_write_bytes(fname, text.encode("utf-8"))
