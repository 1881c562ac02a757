"""Golden Monitor output (tests/monitor/test_monitor.py), from MXNet 1.9.1.

    tools/mxnet-oracle tools/make_golden_monitor.py

Runs ``tests/monitor/_scenario.py`` (the same code the test runs on neomx) and writes
``tests/golden/monitor/records.json``: the rows of ``toc()`` and the lines of ``toc_print()``.
"""
import json
import os
import sys

import _oracle_common as common  # noqa: F401  (sets MXNet's environment first)
import mxnet as mx

sys.path.insert(0, os.path.join(common.ROOT, "tests", "monitor"))
import _scenario  # noqa: E402

OUT = common.golden_dir("monitor")

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    rec = dict(_scenario.run(mx), _meta={"mxnet": mx.__version__,
                                         "script": "tools/make_golden_monitor.py"})
    with open(os.path.join(OUT, "records.json"), "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
