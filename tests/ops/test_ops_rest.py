"""The rest of MXNet 1.9.1's operator table (issue 10): ``mx.nd.op`` / ``mx.sym.op``, ``nanprod``,
the ``random_pdf_*`` densities, ``contrib.BatchNormWithReLU``, ``contrib.SyncBatchNorm``,
``contrib.RROIAlign``, and the GPU-only ``contrib.fft``/``ifft``/``count_sketch``.

Golden values (forward, gradients, symbolic shapes, error texts) come from the real MXNet 1.9.1
through ``tools/make_golden_ops_rest.py`` (``tests/golden/ops_rest``); float64 numeric gradient
checks and nd-vs-sym parity complete them.
"""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx


# --- mx.nd.op / mx.sym.op ------------------------------------------------------------------------
def test_op_modules_are_the_generated_functions():
    import neomx.ndarray.op as ndop
    import neomx.symbol.op as symop
    assert mx.nd.op is ndop and mx.sym.op is symop
    for name in ("broadcast_add", "FullyConnected", "Convolution", "softmax", "sum", "take"):
        assert getattr(mx.nd.op, name) is getattr(mx.nd, name)
        assert getattr(mx.sym.op, name) is getattr(mx.sym, name)
        assert name in mx.nd.op.__all__ and name in mx.sym.op.__all__
    # internal (underscore) operators and Python-level wrappers are not in MXNet's op modules
    for name in ("_plus", "maximum", "power", "zeros", "array"):
        assert not hasattr(mx.nd.op, name), name
    assert not hasattr(mx.sym.op, "_plus") and not hasattr(mx.sym.op, "Variable")
    out = mx.nd.op.broadcast_add(mx.nd.ones((2, 1)), mx.nd.array([1, 2, 3]))
    np.testing.assert_array_equal(out.asnumpy(), [[2, 3, 4], [2, 3, 4]])
    s = mx.sym.op.FullyConnected(mx.sym.var("x"), num_hidden=4, name="fc")
    assert s.list_arguments() == ["x", "fc_weight", "fc_bias"]
    # every public op of the table is reachable there
    from neomx.ops import registry
    public = {n for n, op in registry.all_ops().items() if op.public and not n.startswith("_")}
    assert public <= set(dir(mx.nd.op)) and public <= set(dir(mx.sym.op))
