"""The CPU convolution kernel choices compute the same values as ATen's reference backward."""
import itertools

import pytest
import torch

from neomx.ops import conv_kernels as ck

CONFIGS = [  # (C, F, H, k, stride, pad, dilate)
    (1, 4, 9, 3, 1, 0, 1), (1, 4, 9, 3, 2, 1, 1), (1, 3, 10, 3, 1, 2, 2), (3, 5, 8, 3, 1, 1, 1),
    (16, 6, 7, 3, 1, 0, 1), (16, 6, 9, 3, 2, 1, 1), (8, 4, 9, 2, 1, 1, 2), (20, 50, 12, 5, 1, 0, 1),
]


@pytest.mark.parametrize("cfg,bias", list(itertools.product(CONFIGS, [True, False])), ids=str)
def test_conv_backward_matches_aten(cfg, bias):
    c, f, h, k, s, p, d = cfg
    g0 = torch.Generator().manual_seed(0)
    x = torch.randn(5, c, h, h, dtype=torch.float64, generator=g0)
    w = torch.randn(f, c, k, k, dtype=torch.float64, generator=g0)
    b = torch.randn(f, dtype=torch.float64, generator=g0) if bias else None
    y = ck.conv_forward(torch.nn.functional.conv2d, x, w, b, (s, s), (p, p), (d, d), 1, 2)
    ref_y = torch.nn.functional.conv2d(x, w, b, s, p, d)
    torch.testing.assert_close(y, ref_y)
    g = torch.randn(ref_y.shape, dtype=torch.float64, generator=g0)
    got = ck.conv_backward(g, x, w, bias, (s, s), (p, p), (d, d), 1, 2)
    ref = torch.ops.aten.convolution_backward(g, x, w, [f] if bias else None, [s, s], [p, p],
                                              [d, d], False, [0, 0], 1, [True, True, bias])
    for name, a, r in zip(("dx", "dw", "db"), got, ref):
        if r is None:
            assert a is None
            continue
        assert a.shape == r.shape, name
        torch.testing.assert_close(a, r, msg=name)


@pytest.mark.parametrize("chunk", [1, 3000], ids=["1 sample", "a few samples"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_chunked_forward_and_backward(cfg, chunk, monkeypatch):
    """Batch chunks (NCHW forward, single-channel backward, weight gradients) change nothing."""
    monkeypatch.setattr(ck, "CHUNK_BYTES", chunk)
    test_conv_backward_matches_aten(cfg, True)


def test_nchw_forward_is_chunked_for_large_columns(monkeypatch):
    calls = []
    conv = torch.nn.functional.conv2d

    def counting(x, *args):
        calls.append(x.shape[0])
        return conv(x, *args)
    x, w = torch.randn(10, 1, 12, 12), torch.randn(4, 1, 5, 5)
    per_sample = 25 * 8 * 8 * 4  # columns of one sample: C*kh*kw x L float32
    monkeypatch.setattr(ck, "CHUNK_BYTES", 4 * per_sample)
    y = ck.conv_forward(counting, x, w, None, (1, 1), (0, 0), (1, 1), 1, 2)
    assert calls == [4, 4, 2]
    torch.testing.assert_close(y, conv(x, w))


@pytest.mark.parametrize("limit", [0, 1 << 30], ids=["own kernel", "ATen"])
@pytest.mark.parametrize("cfg", [c for c in CONFIGS if c[0] == 1], ids=str)
def test_single_channel_weight_gradient_only(cfg, limit, monkeypatch):
    """A first layer's backward (no data gradient): both kernel choices give ATen's values."""
    monkeypatch.setattr(ck, "ATEN_SINGLE_CHANNEL_DW_MAX", limit)
    c, f, h, k, s, p, d = cfg
    g0 = torch.Generator().manual_seed(1)
    x = torch.randn(6, c, h, h, dtype=torch.float64, generator=g0)
    w = torch.randn(f, c, k, k, dtype=torch.float64, generator=g0)
    y = torch.nn.functional.conv2d(x, w, None, s, p, d)
    g = torch.randn(y.shape, dtype=torch.float64, generator=g0)
    dx, dw, db = ck.conv_backward(g, x, w, True, (s, s), (p, p), (d, d), 1, 2, need_dx=False)
    ref = torch.ops.aten.convolution_backward(g, x, w, [f], [s, s], [p, p], [d, d], False,
                                              [0, 0], 1, [False, True, True])
    assert dx is None
    torch.testing.assert_close(dw, ref[1])
    torch.testing.assert_close(db, ref[2])


def test_wide_reductions_use_atens_kernels(monkeypatch):
    """Convolutions whose reduction (channels x kernel area) is wide skip the LeNet-tuned
    formulations (ATen's own kernels are faster there) and still give ATen's values."""
    calls = []
    monkeypatch.setattr(ck, "_chunk_rows", lambda *a: calls.append("chunk") or 10**9)
    x = torch.randn(2, 64, 8, 8, dtype=torch.float64)
    w = torch.randn(8, 64, 3, 3, dtype=torch.float64)  # 576 > FAST_PATH_MAX_REDUCTION
    assert not ck._fast_path(x, w, 2, 1)
    y = ck.conv_forward(torch.nn.functional.conv2d, x, w, None, (1, 1), (1, 1), (1, 1), 1, 2)
    torch.testing.assert_close(y, torch.nn.functional.conv2d(x, w, None, 1, 1))
    assert calls == []
    assert ck._fast_path(x[:, :20], w[:, :20, :, :], 2, 1)  # 180: the tuned path
