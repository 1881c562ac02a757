"""Golden values of reductions over integer and float arrays (MXNet 1.9.1 keeps an integer
input's dtype: sums and products wrap around in it, integer means truncate toward zero).

    tools/mxnet-oracle tools/make_golden_reduce_dtypes.py

writes ``tests/golden/reduce_dtypes/cases.json`` (read by tests/ops/test_reduce_dtypes.py)."""
import json
import os

import _oracle_common as oc
import mxnet as mx
import numpy as np

DATA = {
    "small": [[1, 2], [2, 5], [-1, -2]],
    "wrap": [[100, 100, 100], [20, 20, 7]],
}
OPS = ("sum", "mean", "prod", "nansum", "max", "min")
DTYPES = ("int8", "uint8", "int32", "int64", "float16", "float32", "float64")
FORMS = ({}, {"axis": 0}, {"axis": 1}, {"axis": (0, 1)}, {"axis": 0, "keepdims": True},
         {"axis": 1, "exclude": True}, {"axis": -1})


def main():
    cases = []
    for dname, data in DATA.items():
        for dt in DTYPES:
            arr = np.array(data, dtype=np.int64)
            if dt == "uint8":
                arr = np.abs(arr)
            x = mx.nd.array(arr.astype(dt), dtype=dt)
            for op in OPS:
                for kw in FORMS:
                    out = getattr(mx.nd, op)(x, **kw)
                    cases.append({"data": arr.tolist(), "dtype": dt, "op": op, "kwargs": oc.jsonable(kw),
                                  "out_dtype": np.dtype(out.dtype).name,
                                  "out": oc.jsonable(out.asnumpy().astype(np.float64))})
    path = os.path.join(oc.golden_dir("reduce_dtypes"), "cases.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(cases, f, separators=(",", ":"))
    os.replace(tmp, path)
    print(f"{len(cases)} cases -> {path}")


if __name__ == "__main__":
    main()
