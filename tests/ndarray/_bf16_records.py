"""How bfloat16 results are recorded, shared by tools/make_golden_bf16.py (MXNet 1.9.1 writes
tests/golden/amp/bf16.json with them) and tests/ndarray/test_bfloat16.py (neomx's values,
recorded the same way, are compared). Only numpy here: the arrays come from either framework."""
import numpy as np

BF = np.dtype([("bfloat16", np.uint16)])  # MXNet's bfloat16 stand-in dtype


def name(d):
    d = np.dtype(d)
    return d.names[0] if d.names else d.name


def bits(a):
    return a.asnumpy().view(np.uint16).tolist()


def floats(a):
    return [repr(float(v)) for v in a.asnumpy().reshape(-1)]  # repr keeps nan/inf
