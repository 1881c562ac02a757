"""Golden SequentialModule / PythonLossModule runs (tests/module/test_sequential_module.py),
from MXNet 1.9.1.

    tools/mxnet-oracle tools/make_golden_module_seq.py

Runs ``tests/module/_sequential.py`` (the same code the tests run on neomx) and writes
``tests/golden/module_seq/records.json``.
"""
import json
import os
import sys

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
import mxnet as mx

sys.path.insert(0, os.path.join(common.ROOT, "tests", "module"))
import _sequential  # noqa: E402

OUT = common.golden_dir("module_seq")

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    rec = {"_meta": {"mxnet": mx.__version__, "script": "tools/make_golden_module_seq.py"}}
    for name, fn in _sequential.SCENARIOS.items():
        rec[name] = common.jsonable(fn(mx))
    with open(os.path.join(OUT, "records.json"), "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
