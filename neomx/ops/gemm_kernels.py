"""Matrix products on the CPU: which GEMM computes ``dot``, ``FullyConnected`` and the RNN
gates (the executor's equivalent of MXNet choosing between oneDNN's inner product and BLAS).

ATen sends float32 ``mm``/``addmm`` to MKL, whose kernels on the AMD EPYC development machine
(AVX-512) reach about half of what oneDNN's own JIT GEMM does; oneDNN's has a higher fixed cost.
Measured there (2 threads, microseconds; ``mm`` / oneDNN):

=================  ==============  ====================
m x k x n          a @ b           a @ bᵀ (a weight)
=================  ==============  ====================
64 x 100 x 128     17.8 / 18.5     17.4 / 19.8
128 x 128 x 128    31.2 / 24.4     30.8 / 25.9
256 x 800 x 500    1042 / 418      980 / 470
512 x 512 x 512    1250 / 572      1234 / 572
1120 x 200 x 800   1619 / 719      1626 / 922
=================  ==============  ====================

so float32 products of at least ``ONEDNN_MIN_MACS`` multiply-adds go to oneDNN (through
``torch.ops.mkldnn._linear_pointwise``, which takes transposed operands as they are), the rest
to ATen. Both are exact float32 GEMMs; their sums run in different orders (results agree to a
few units in the last place).
"""
from __future__ import annotations

import torch
import torch.nn.functional as TF

__all__ = ["mm", "linear", "ONEDNN_MIN_MACS"]

ONEDNN_MIN_MACS = 1 << 21
# (and a left operand of at least this many elements: one cheap test rejects the small products
# of imperative code, ~0.06 us; a 16x16 dot costs ~1.1 us in all)
_MIN_LHS = 2048


def _available() -> bool:
    ops = getattr(torch.ops, "mkldnn", None)
    try:
        return (torch.backends.mkldnn.is_available() and ops is not None
                and hasattr(ops, "_linear_pointwise"))
    except (AttributeError, RuntimeError):
        return False


AVAILABLE = _available()
_f32 = torch.float32


def _dense2d(t) -> bool:
    """A matrix in row- or column-major order (a transpose of a contiguous matrix included)."""
    s0, s1 = t.stride()
    return (s1 == 1 and s0 >= t.shape[1]) or (s0 == 1 and s1 >= t.shape[0])


def _onednn(a, w) -> bool:
    """Whether ``a @ wᵀ`` (a: m x k, w: n x k, large enough) goes to oneDNN."""
    return (AVAILABLE and a.dim() == 2 and w.dim() == 2 and a.shape[1] == w.shape[1]
            and a.dtype is _f32 and w.dtype is _f32 and a.device.type == "cpu"
            and w.device.type == "cpu" and _dense2d(a) and _dense2d(w)
            and not a.requires_grad and not w.requires_grad)


def mm(a, b):
    """``torch.mm(a, b)`` (and its errors for invalid operands). The size test comes first:
    small products, the common case of imperative code, pay only for it."""
    if (a.numel() >= _MIN_LHS and a.numel() * b.shape[-1] >= ONEDNN_MIN_MACS and b.dim() == 2
            and _onednn(a, b.t())):
        return torch.ops.mkldnn._linear_pointwise(a, b.t(), None, "none", [], "")
    return torch.mm(a, b)


def linear(x, w, b=None):
    """``TF.linear(x, w, b)``: ``x @ wᵀ + b``."""
    if (x.numel() >= _MIN_LHS and x.numel() * w.shape[0] >= ONEDNN_MIN_MACS and _onednn(x, w)
            and (b is None or (b.dtype is _f32 and b.dim() == 1 and b.shape[0] == w.shape[0]
                               and b.device.type == "cpu" and not b.requires_grad))):
        return torch.ops.mkldnn._linear_pointwise(x, w, b, "none", [], "")
    return TF.linear(x, w, b)
