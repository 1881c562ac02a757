"""Rewrite ``tests/ops/op_exclusions.txt`` from what neomx has now.

Run with neomx's environment from the repository root, after landing (or removing) operators::

    .venv/bin/python tools/update_op_exclusions.py          # rewrite the file
    .venv/bin/python tools/update_op_exclusions.py --check  # only report; exit 1 if it would change

For every name of ``tests/golden/optable/names.json`` (MXNet 1.9.1's public operators, see
``tools/make_golden_optable.py``) that neomx lacks, the file keeps the reason it already has
(``permanent: ...`` reasons are never rewritten; a ``pending: ...`` reason someone wrote by
hand is kept too) or gets the default reason of the first matching rule in ``RULES`` below.
Lines of names neomx now has are dropped (a dropped *permanent* line is reported: its reason
was wrong). The coverage test is ``tests/ops/test_op_coverage.py``.
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _exclusions  # noqa: E402  (shared with the other exclusion tool)
from tests.ops.test_op_coverage import (  # noqa: E402
    EXCLUSIONS_FILE, has_name, load_exclusions, load_names)

OP_TABLE = "pending: operator table (issue 10)"
SPARSE = "pending: sparse storage (issue 16)"

# (regex on '<namespace>.<name>', reason) for names without a line yet; first match wins.
RULES = [
    (r".*_v1$", "permanent: deprecated pre-1.0 form (MXNet keeps it only for old code; "
                "the current operator is in the table)"),
    (r"nd\.(get_indexing_dispatch_code|get_oshape_of_gather_nd_op|"
     r"indexing_key_expand_implicit_axes)$",
     "permanent: MXNet's internal NDArray-indexing helper leaked into mx.nd, not an operator"),
    (r".*contrib\.backward_\w+$",
     "permanent: backward node of a contrib operator exposed by the contrib prefix; neomx's "
     "gradient rules build backward graphs from forward operators"),
    (r".*\.(quantize|quantize_v2|quantize_asym|dequantize|requantize|calibrate_entropy|"
     r"quantized_\w+)$", "pending: INT8 quantization, contrib.quantization (issue 19)"),
    (r".*\.Custom$", "pending: custom operators, mx.operator (issue 15)"),
    (r"nd\.imdecode$", "pending: data pipelines, mx.image (issue 13)"),
    (r".*\.(cast_storage|SparseEmbedding|getnnz|edge_id|dgl_\w+)$", SPARSE),
]

HEADER = """\
# Operators of MXNet 1.9.1 (tests/golden/optable/names.json) that neomx lacks, one per line:
#   <namespace>.<name>  <reason>
# 'pending: <capability> (issue N)' -- another issue or the operator-table work will bring it;
# 'permanent: <why>'               -- neomx will not have it.
# tests/ops/test_op_coverage.py fails for a missing name without a line here, and for a line
# whose name neomx now has: delete that line, or rewrite the whole file from what neomx has with
#   .venv/bin/python tools/update_op_exclusions.py
# (it keeps the reasons written here; new missing names get its default reasons).
"""


def default_reason(qualname: str) -> str:
    return _exclusions.first_reason(RULES, qualname, OP_TABLE)


def compute(names, old):
    """(new exclusions {(module, name): reason}, names now present that had a permanent line)."""
    return _exclusions.compute(names, old, has_name, default_reason)


def render(names, excl) -> str:
    return _exclusions.render(HEADER, names, excl)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="report only; exit 1 on a change")
    args = ap.parse_args(argv)
    names = load_names()
    old = load_exclusions() if os.path.exists(EXCLUSIONS_FILE) else {}
    new, wrong_permanent = compute(names, old)
    text = render(names, new)
    _exclusions.report_changes(old, new, wrong_permanent)
    counts = {}
    for reason in new.values():
        counts[reason] = counts.get(reason, 0) + 1
    print(f"{len(new)} exclusions: " + "; ".join(f"{n} {r}" for r, n in sorted(counts.items())))
    return _exclusions.write_or_check(EXCLUSIONS_FILE, ROOT, text, args.check)


if __name__ == "__main__":
    sys.exit(main())
