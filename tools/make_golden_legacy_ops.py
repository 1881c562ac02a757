"""Golden records for MXNet's legacy Python operators (tests/operator/test_legacy_ops.py).

    tools/mxnet-oracle tools/make_golden_legacy_ops.py

MXNet 1.9.1's NumpyOp/NDArrayOp crash in shape inference, so this runs the scenario code of
the test module (``reference``): the built-in operators the legacy example ops reimplement, in
an executor and in Module.fit, plus the names of the legacy symbols (which MXNet still builds).
Writes ``tests/golden/legacy_ops/records.json``.
"""
import json
import os
import sys

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
import mxnet as mx

sys.path.insert(0, os.path.join(common.ROOT, "tests", "operator"))
import test_legacy_ops  # noqa: E402

OUT = common.golden_dir("legacy_ops")


def main():
    os.makedirs(OUT, exist_ok=True)
    records = {"_meta": {"mxnet": mx.__version__, "script": "tools/make_golden_legacy_ops.py"}}
    records.update(common.jsonable(test_legacy_ops.reference(mx)))
    with open(os.path.join(OUT, "records.json"), "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
