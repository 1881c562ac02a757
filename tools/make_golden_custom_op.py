"""Golden records for custom operators (tests/operator/test_custom_op_golden.py), from MXNet 1.9.1.

    tools/mxnet-oracle tools/make_golden_custom_op.py

Runs every scenario of ``tests/operator/_custom_ops.py`` (the same custom-op code the tests run
on neomx) and writes ``tests/golden/custom_op/records.json``: per scenario, its values (arrays
as nested lists), names, JSON graphs and error kinds.
"""
import json
import os
import sys

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
import mxnet as mx

sys.path.insert(0, os.path.join(common.ROOT, "tests", "operator"))
import _custom_ops  # noqa: E402

OUT = common.golden_dir("custom_op")


def main():
    os.makedirs(OUT, exist_ok=True)
    records = {"_meta": {"mxnet": mx.__version__, "script": "tools/make_golden_custom_op.py"}}
    for name, fn in _custom_ops.SCENARIOS.items():
        records[name] = common.jsonable(fn(mx))
    with open(os.path.join(OUT, "records.json"), "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
