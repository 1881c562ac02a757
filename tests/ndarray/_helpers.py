"""Helpers for the NDArray tests: golden records and MXNet error-message cores (see _golden)."""
from __future__ import annotations

from .._golden import GOLDEN_DIR, assert_error_matches, core_fragments, load_golden, squash

__all__ = ["GOLDEN_DIR", "assert_error_matches", "core_fragments", "load_golden", "squash"]
