"""Rewrite ``tests/api/api_exclusions.txt`` from what neomx has now.

Run with neomx's environment from the repository root, after landing (or removing) API::

    .venv/bin/python tools/update_api_exclusions.py          # rewrite the file
    .venv/bin/python tools/update_api_exclusions.py --check  # only report; exit 1 if it would change

For every name of ``tests/golden/api/names.json`` (MXNet 1.9.1's public Python API, see
``tools/make_golden_api.py``) that neomx lacks, the file keeps the reason it already has
(``permanent: ...`` reasons are never rewritten; a ``pending: ...`` reason someone wrote by
hand is kept too) or gets the default reason of the first matching rule in ``RULES`` below
(by module: the issue that brings that part of the API). Lines of names neomx now has are
dropped (a dropped *permanent* line is reported: its reason was wrong). The coverage test is
``tests/api/test_api_coverage.py``.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _exclusions  # noqa: E402  (shared with the other exclusion tool)
from tests.api.test_api_coverage import (  # noqa: E402
    EXCLUSIONS_FILE, has_name, load_exclusions, load_names)

STRAGGLERS = "pending: rest of MXNet's Python API (issue 19)"
RE_EXPORT = ("pending: re-exported from the MXNet module that defines it; neomx defines it "
             "elsewhere (issue 19)")
C_API = ("permanent: MXNet's ctypes plumbing for its C library (handles, C strings and arrays, "
         "error hooks); neomx has no C library")
NUMPY_IF = ("permanent: part of MXNet's NumPy interface (mx.np/mx.npx), outside neomx's "
            "scope (MXNet 1.x's NDArray/Symbol API only)")

# (regex on '<module>.<name>', reason) for names without a line yet; first match wins.
RULES = [
    # --- never -----------------------------------------------------------------------------
    (r"mx\.(kvstore\.)?(kvstore_server\.)?KVStoreServer$",
     "permanent: no parameter servers in neomx's design (dist stores are collective "
     "all-reduce over torch.distributed)"),
    (r"mx\.(torch|th)$", "permanent: MXNet's Lua-Torch plugin bridge (empty in MXNet 1.9.1 "
                         "builds); neomx runs on PyTorch itself"),
    (r"mx\.tvmop$", "permanent: TVM-compiled operators (not built in MXNet 1.9.1's wheels)"),
    (r"mx\.api$", "permanent: MXNet's FFI registry of C++ functions; neomx has no C library"),
    (r"mx\.(library$|library\.)", "permanent: loads C++ operator libraries built against MXNet's "
                                  "lib_api.h; neomx's custom operators are mx.operator.CustomOp"),
    (r"mx\.(rtc$|rtc\.)", "permanent: CUDA C kernels compiled by NVRTC through MXNet's C API; "
                          "write a torch extension or a CustomOp instead"),
    (r"mx\.symbol_doc$", "permanent: docstring fragments of MXNet's generated operators; "
                         "neomx's docs live in the op table"),
    (r"mx\.base\.(\w+Handle|c_\w+|ctypes2\w+|check_call|mx_\w+|MXCallbackList|c2pyerror|"
     r"get_last_ffi_error|register_error|error_types)$", C_API),
    (r"mx\.operator\.c_int_p$", C_API),
    (r"mx\.profiler\.profiler_kvstore_handle$", C_API),
    (r"mx\.ndarray\.ndarray\.(DL\w+|DeleterFunc|PyCapsuleDestructor|dl_managed_tensor_deleter)$",
     "permanent: ctypes structs of MXNet's DLPack bridge; neomx converts through "
     "torch.utils.dlpack"),
    (r"mx\.ndarray(\.ndarray)?\.(get_indexing_dispatch_code|get_oshape_of_gather_nd_op|"
     r"indexing_key_expand_implicit_axes|check_boolean_array_dimension)$",
     "permanent: MXNet's internal NDArray-indexing helper leaked into the namespace"),
    (r"mx\.util\.(np_ufunc_legal_option|wrap_np_\w+)$", NUMPY_IF),
    # --- other issues ----------------------------------------------------------------------
    (r"mx\.(ndarray|symbol)\.op$", "pending: operator table, the op namespace (issue 10)"),
    (r"mx\.(ndarray|symbol)(\.sparse)?\.(sparse|\w*Sparse\w*|CSRNDArray|csr_matrix|"
     r"row_sparse_array|gs_retain)$", "pending: sparse storage (issue 16)"),
    (r"mx\.(ndarray|symbol)\.sparse\.", "pending: sparse storage (issue 16)"),
    (r"mx\.contrib\.amp\.|mx\.contrib\.amp$", "pending: AMP, mx.contrib.amp (issue 18)"),
    (r"mx\.(onnx|contrib\.onnx)\.|mx\.(contrib\.)?onnx$",
     "pending: ONNX export/import (issue 15)"),
    (r"mx\.operator\.", "pending: custom operators, mx.operator (issue 15)"),
    (r"mx\.profiler\.", "pending: profiler (issue 15)"),
    (r"mx\.monitor\.", "pending: monitor (issue 15)"),
    (r"mx\.(gluon\.model_zoo|gluon\.rnn|gluon\.contrib\.rnn|rnn)(\.|$)|mx\.gluon\.rnn$|"
     r"mx\.initializer\.FusedRNN$", "pending: model zoo and RNNs (issue 14)"),
    (r"mx\.io\.\w+\.(ImageRecord\w+_v1|ImageRecordU?Int8Iter)$|"
     r"mx\.io\.(ImageRecord\w+_v1|ImageRecordU?Int8Iter)$",
     "pending: thin forms of the one ImageRecordIter (issue 19)"),
    (r"mx\.io\.(\w+\.)?MXDataIter$", "pending: iterator interface (issue 19)"),
    (r"mx\.(io|recordio|image|gluon\.data|gluon\.contrib\.data)(\.|$)",
     "pending: data pipelines (issue 13)"),
    (r"mx\.gluon(\.|$)", "pending: Gluon (issue 12)"),
    # --- this issue ------------------------------------------------------------------------
    (r"mx\.(ndarray\.(ndarray|utils)|symbol\.symbol|optimizer\.optimizer|kvstore\.base)\.",
     RE_EXPORT),
]

HEADER = """\
# Public names of MXNet 1.9.1's Python API (tests/golden/api/names.json) that neomx lacks, one
# per line:
#   mx.<module>.<name>  <reason>
# 'pending: <capability> (issue N)' -- another issue (or this one, 19) will bring it;
# 'permanent: <why>'               -- neomx will not have it.
# tests/api/test_api_coverage.py fails for a missing name without a line here, and for a line
# whose name neomx now has: delete that line, or rewrite the whole file from what neomx has with
#   .venv/bin/python tools/update_api_exclusions.py
# (it keeps the reasons written here; new missing names get its default reasons).
"""


def default_reason(qualname: str) -> str:
    return _exclusions.first_reason(RULES, qualname, STRAGGLERS)


def compute(names, old):
    """(new exclusions {(module, name): reason}, names now present that had a permanent line)."""
    return _exclusions.compute(names, old, has_name, default_reason)


def render(names, excl) -> str:
    return _exclusions.render(HEADER, names, excl)


def summary(names, excl) -> str:
    """Per module: MXNet's names, how many neomx has, how many are excluded for which issue."""
    rows = []
    for key, entries in names.items():
        reasons = {}
        for name in entries:
            reason = excl.get((key, name))
            if reason is not None:
                tag = re.search(r"\(issue (\d+)", reason)
                tag = f"issue {tag.group(1)}" if reason.startswith("pending") else "permanent"
                reasons[tag] = reasons.get(tag, 0) + 1
        have = len(entries) - sum(reasons.values())
        detail = ", ".join(f"{n} {t}" for t, n in sorted(reasons.items()))
        rows.append(f"{key:45s} {len(entries):4d} {have:4d}  {detail}")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="report only; exit 1 on a change")
    ap.add_argument("--summary", action="store_true",
                    help="print per module: MXNet's names, neomx has, exclusions by issue")
    args = ap.parse_args(argv)
    names = load_names()
    old = load_exclusions() if os.path.exists(EXCLUSIONS_FILE) else {}
    new, wrong_permanent = compute(names, old)
    text = render(names, new)
    _exclusions.report_changes(old, new, wrong_permanent)
    if args.summary:
        print(f"{'module':45s} {'mx':>4s} {'has':>4s}  excluded")
        print(summary(names, new))
    total = sum(len(v) for v in names.values())
    print(f"{total} names, {total - len(new)} present, {len(new)} excluded")
    return _exclusions.write_or_check(EXCLUSIONS_FILE, ROOT, text, args.check)


if __name__ == "__main__":
    sys.exit(main())
