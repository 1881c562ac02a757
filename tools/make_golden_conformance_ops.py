"""Golden values for operator behaviours neomx once got wrong: mod by zero (integer and float),
Python-style mod signs, and the gradients of ``dot`` with transposed N-D operands.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_conformance_ops.py

Writes ``tests/golden/conformance/ops.json``.
"""
import os

import numpy as np

from _oracle_common import golden_dir, rng_for, write_json

import mxnet as mx

MOD_CASES = [  # (id, lhs, rhs (list or scalar), dtype)
    ("int_by_zero", [5, -7, 3, 0], [0, 2, 0, 0], "int32"),
    ("int_scalar_zero", [5, -7, 3], 0, "int32"),
    ("float_by_zero", [5.0, -7.0, 3.5], [0.0, 2.0, 0.0], "float32"),
    ("float_scalar_zero", [5.0, -7.0], 0.0, "float32"),
    ("int_signs", [5, -7, 3, -4], [3, 3, -2, -3], "int32"),
    ("float_signs", [5.5, -7.0, 3.0, -4.5], [3.0, 3.0, -2.0, -3.0], "float32"),
    ("int64_broadcast", [[4, 9], [-3, 8]], [[0, 4]], "int64"),
]
DOT_CASES = [  # (id, shape a, shape b, transpose_a, transpose_b)
    ("nd_tb", (2, 3, 4), (5, 4), False, True),
    ("nd_ta", (4, 3), (4, 2, 5), True, False),
    ("nd_both", (4, 3, 2), (5, 4), True, True),
    ("nd_3x3_ta", (4, 2, 3), (4, 5), True, False),
    ("vec_matrix_tb", (4,), (3, 4), False, True),
    ("nd_rhs_tb", (2, 4), (3, 5, 4), False, True),
    ("nd_rhs_both", (4, 2), (3, 5, 4), True, True),
]


def main():
    out = {"mxnet_version": mx.__version__, "generator": "tools/make_golden_conformance_ops.py",
           "mod": [], "dot": []}
    for cid, lhs, rhs, dtype in MOD_CASES:
        a = mx.nd.array(lhs, dtype=dtype)
        res = a % (mx.nd.array(rhs, dtype=dtype) if isinstance(rhs, list) else rhs)
        if isinstance(rhs, list) and np.array(rhs).shape != np.array(lhs).shape:
            res = mx.nd.broadcast_mod(a, mx.nd.array(rhs, dtype=dtype))
        out["mod"].append({"id": cid, "lhs": lhs, "rhs": rhs, "dtype": dtype,
                           "result": res.asnumpy().tolist()})
    for cid, sa, sb, ta, tb in DOT_CASES:
        r = rng_for("dot-" + cid)
        a = mx.nd.array(r.uniform(-1, 1, sa))
        b = mx.nd.array(r.uniform(-1, 1, sb))
        a.attach_grad()
        b.attach_grad()
        with mx.autograd.record():
            y = mx.nd.dot(a, b, transpose_a=ta, transpose_b=tb)
        g = mx.nd.array(r.uniform(-1, 1, y.shape))
        y.backward(g)
        out["dot"].append({"id": cid, "a": a.asnumpy().tolist(), "b": b.asnumpy().tolist(),
                           "transpose_a": ta, "transpose_b": tb, "head_grad": g.asnumpy().tolist(),
                           "out": y.asnumpy().tolist(), "grad_a": a.grad.asnumpy().tolist(),
                           "grad_b": b.grad.asnumpy().tolist()})
    d = golden_dir("conformance")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "ops.json"), out)
    print("wrote", d)


if __name__ == "__main__":
    main()
