"""Reductions keep an integer input's dtype as MXNet 1.9.1 does (sums and products wrap around
in it, integer means truncate toward zero); golden values from
tools/make_golden_reduce_dtypes.py. Each case runs twice: the first call takes the general
path, the second the cached direct kernel."""
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

CASES = json.loads((Path(__file__).resolve().parents[1] / "golden" / "reduce_dtypes"
                    / "cases.json").read_text())


def _kw(kw):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}


@pytest.mark.parametrize("dtype", sorted({c["dtype"] for c in CASES}))
def test_reductions_match_mxnet(dtype):
    cases = [c for c in CASES if c["dtype"] == dtype]
    assert cases
    for c in cases:
        x = mx.nd.array(np.array(c["data"]).astype(dtype), dtype=dtype)
        f = getattr(mx.nd, c["op"])
        for _ in range(2):
            out = f(x, **_kw(c["kwargs"]))
            what = f"{c['op']}({dtype}, {c['kwargs']})"
            assert np.dtype(out.dtype).name == c["out_dtype"], what
            want = np.array(c["out"])
            got = out.asnumpy().astype(np.float64)
            assert got.shape == want.shape, what
            rtol = 1e-3 if dtype == "float16" else 1e-6
            np.testing.assert_allclose(got, want, rtol=rtol, err_msg=what)


def test_out_of_range_and_repeated_axes():
    x = mx.nd.ones((2, 3))
    for _ in range(2):  # general path, then the direct kernel's refusal falls back to it
        with pytest.raises(mx.base.MXNetError, match="axis 2 exceeds the input dimension of 2"):
            mx.nd.sum(x, axis=2)
        with pytest.raises(mx.base.MXNetError, match="axis -3 exceeds"):
            mx.nd.mean(x, axis=-3)
        np.testing.assert_array_equal(mx.nd.sum(x, axis=(0, 0)).asnumpy(), [2, 2, 2])
