"""Golden records of sparse storage in symbols, executors and Module from MXNet 1.9.1
(tests/golden/sparse_symbol/cases.json; tests/sparse/test_sparse_symbol.py and
test_sparse_module.py).

The scenarios live in tests/sparse/_sparse_symbol_cases.py, written against the ``mx`` they
are given; this script runs them in MXNet. Run with the oracle's interpreter from the
repository root: ``tools/mxnet-oracle tools/make_golden_sparse_symbol.py``.
"""
import os
import sys
import warnings

from _oracle_common import ROOT, golden_dir, write_json  # noqa: I001  (sets MXNet's env first)
import mxnet as mx

sys.path.insert(0, os.path.join(ROOT, "tests", "sparse"))
import _sparse_symbol_cases as cases  # noqa: E402

os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"
warnings.simplefilter("ignore")


def main():
    res = {"mxnet": mx.__version__, "script": "tools/make_golden_sparse_symbol.py"}
    for name, fn in cases.SCENARIOS.items():
        res[name] = fn(mx)
    out = golden_dir("sparse_symbol")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "cases.json")
    write_json(path + ".tmp", res)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
