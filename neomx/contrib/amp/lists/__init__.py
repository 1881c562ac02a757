"""MXNet 1.9.1's AMP operator lists (generated data, see tools/make_golden_amp.py)."""
from . import symbol_bf16, symbol_fp16  # noqa: F401
