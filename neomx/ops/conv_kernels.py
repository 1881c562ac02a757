"""Kernel choices for 2-D convolution on the CPU (the executor's equivalent of cuDNN's algorithm
selection): every path computes the same values with ATen kernels, the fastest formulation is
picked per shape.

Measured on the 2-core development machine (one thread, batch 256, LeNet's two convolutions,
milliseconds; see the notes of the benchmark issue):

=================  ==================  =====================
                   conv1 1->20, 28x28  conv2 20->50, 12x12
=================  ==================  =====================
forward NCHW       5.6                 17.8
forward NHWC       5.4                 12.8
d data (oneDNN)    30.5 (NHWC 52.2)    29.5 (NHWC 22.5)
d data (fold)      14.9                27.5
d weight (oneDNN)  27.9 (NHWC 46.7)    22.3 (NHWC 19.8)
d weight (conv)    7.7                 16.5
=================  ==================  =====================

* channels-last (NHWC) memory for inputs with many channels: oneDNN's NHWC kernels are faster;
* the data gradient of single-channel inputs as ``fold(Wᵀ·g)`` (col2im);
* the weight gradient as a convolution of the input with the output gradient, batch as channels
  (``dW = conv(xᵀ, gᵀ)ᵀ``) for unit stride and dilation, except for channels-last inputs: there
  oneDNN's own weight gradient is faster with the torch now used (remeasured: conv2 at batch 256,
  one thread, 4.4 against 11.8 ms; the table above is older);
* batch chunks (``CHUNK_BYTES`` of scratch) wherever a kernel would materialise columns or
  transposed copies for the whole batch: the NCHW forward (oneDNN's NCHW kernel for one input
  channel builds ~55 MiB of columns for LeNet's first layer at batch 1024, and the chunked form is
  also faster there: 39 ms against 65-76 ms, 2 threads), the single-channel backward, and the
  batch-as-channels weight gradient (whose copies were the peak of LeNet's backward).

On the whole LeNet step (batch 1024, 2 threads) this takes 445 ms against 564 ms for plain
``aten.convolution_backward`` in NCHW, and 539 ms for one channels-last oneDNN call per layer.
"""
from __future__ import annotations

import torch
import torch.nn.functional as TF

CHANNELS_LAST_MIN_CHANNELS = 8
FAST_PATH_MAX_REDUCTION = 512
# single-channel weight gradients up to this many output-gradient elements go to ATen (measured
# crossover between LeNet's batch 256 and 512, 1 and 2 threads)
ATEN_SINGLE_CHANNEL_DW_MAX = 4 << 20


def _fast_path(x, w, nsp, groups):
    """These formulations pay off for convolutions with a short reduction (input channels x
    kernel area, LeNet's 25 and 500); for wider ones (ResNet's 3x3 convolutions over 64-512
    channels: 576-4608) oneDNN's own NCHW kernels are faster (a ResNet-18 step at batch 32:
    2.05 -> 1.61 s)."""
    return (nsp == 2 and groups == 1 and x.device.type == "cpu" and x.dim() == 4
            and x.shape[1] * w.shape[2] * w.shape[3] <= FAST_PATH_MAX_REDUCTION)


def _memory_format(x):
    return torch.channels_last if x.shape[1] >= CHANNELS_LAST_MIN_CHANNELS else torch.contiguous_format


def is_channels_last(x):
    """Whether ``x`` is a 4-D tensor laid out channels-last (and not also plain contiguous, as
    tensors with one channel or one pixel are)."""
    return (x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last)
            and not x.is_contiguous())


def _wide_channels_last(x, w, nsp, groups):
    """Wide 2-D convolutions (ResNet's 3x3 over 64-512 channels, and the RGB stem feeding them)
    run in channels-last memory and leave their output so: oneDNN's NHWC kernels take about
    half the time of its NCHW ones there (ResNet-18's 64-channel 3x3 at batch 32, 2 threads:
    forward 38 -> 15 ms, backward 64 -> 32 ms), and the batch norms, activations, additions and
    poolings that follow keep the layout, so the conversion happens once, at the stem.
    Single-channel inputs (LeNet's) stay on the NCHW formulations below."""
    return (nsp == 2 and groups == 1 and x.device.type == "cpu" and x.dim() == 4
            and x.is_floating_point() and (x.shape[1] >= 3 or is_channels_last(x)))


def conv_forward(fn, x, w, b, stride, pad, dilate, groups, nsp):
    if not _fast_path(x, w, nsp, groups) or x.shape[1] >= 3:
        if _wide_channels_last(x, w, nsp, groups):
            fmt = torch.channels_last
            return fn(x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt), b,
                      stride, pad, dilate, groups)
    if _fast_path(x, w, nsp, groups):
        fmt = _memory_format(x)
        if fmt is torch.channels_last:
            x = x.contiguous(memory_format=fmt)
            w = w.contiguous(memory_format=fmt)
        else:
            step = _chunk_rows(x, w, stride, pad, dilate)
            if step < x.shape[0]:
                return _chunked_forward(fn, x, w, b, stride, pad, dilate, groups, step)
    return fn(x, w, b, stride, pad, dilate, groups)


def conv_act_forward(x, w, b, stride, pad, dilate, attr):
    """act(conv(x, w) + b) as one oneDNN call with ``attr`` ('relu', 'sigmoid', 'tanh') as its
    post-op (see fused_kernels), in the layout and batch chunks :func:`conv_forward` uses."""
    fused = torch.ops.mkldnn._convolution_pointwise
    stride, pad, dilate = list(stride), list(pad), list(dilate)
    if _wide_channels_last(x, w, 2, 1):
        fmt = torch.channels_last
        return fused(x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt), b, pad,
                     stride, dilate, 1, attr, [], "")
    x, w = x.contiguous(), w.contiguous()
    if _chunk_rows(x, w, stride, pad, dilate) >= x.shape[0]:
        return fused(x, w, b, pad, stride, dilate, 1, attr, [], "")
    step = _chunk_rows(x, w, stride, pad, dilate, FUSED_CHUNK_BYTES)
    y = None
    for i in range(0, x.shape[0], step):
        part = fused(x[i:i + step], w, b, pad, stride, dilate, 1, attr, [], "")
        if y is None:
            y = torch.empty((x.shape[0],) + tuple(part.shape[1:]), dtype=part.dtype, device=part.device)
        y[i:i + step] = part
    return y


def _chunk_rows(x, w, stride, pad, dilate, budget=None):
    """Samples per chunk so that an NCHW kernel's columns (C*kh*kw x L per sample) stay
    within ``budget`` bytes (CHUNK_BYTES by default)."""
    out = 1
    for h, k, s, p, d in zip(x.shape[2:], w.shape[2:], stride, pad, dilate):
        out *= max(0, (h + 2 * p - d * (k - 1) - 1) // s + 1)
    per_sample = w[0].numel() * out * x.element_size()
    return max(1, min(x.shape[0], (budget or CHUNK_BYTES) // max(1, per_sample)))


def _chunked_forward(fn, x, w, b, stride, pad, dilate, groups, step):
    """The NCHW forward in batch chunks written into one output: the oneDNN/im2col kernels
    materialise columns for the whole batch otherwise (LeNet's first layer at batch 1024:
    ~55 MiB of scratch, and slower: 39 ms against 65-76 ms, 2 threads)."""
    y = None
    for i in range(0, x.shape[0], step):
        part = fn(x[i:i + step], w, b, stride, pad, dilate, groups)
        if y is None:
            y = torch.empty((x.shape[0],) + tuple(part.shape[1:]), dtype=part.dtype, device=part.device)
        y[i:i + step] = part
    return y


def _aten_backward(g, x, w, has_bias, stride, pad, dilate, groups, nsp, fmt=None, need_dx=True):
    if fmt is not None:
        g, x, w = (t.contiguous(memory_format=fmt) for t in (g, x, w))
    else:
        g = g.contiguous()
    return torch.ops.aten.convolution_backward(
        g, x, w, [w.shape[0]] if has_bias else None, list(stride), list(pad), list(dilate),
        False, [0] * nsp, groups, [need_dx, True, has_bias])


def conv_backward(g, x, w, has_bias, stride, pad, dilate, groups, nsp, need_dx=True):
    """(dx or None, dw, db or None) of a convolution, by the fastest known formulation; dx only
    when ``need_dx`` (a network's input batch needs none)."""
    if not _fast_path(x, w, nsp, groups) or x.shape[1] >= 3:
        if _wide_channels_last(x, w, nsp, groups):
            dx, dw, db = _aten_backward(g, x, w, has_bias, stride, pad, dilate, groups, nsp,
                                        fmt=torch.channels_last, need_dx=need_dx)
            return dx, dw.contiguous(), db  # (the weight's own layout)
    if not _fast_path(x, w, nsp, groups):
        return _aten_backward(g, x, w, has_bias, stride, pad, dilate, groups, nsp, need_dx=need_dx)
    unit = all(s == 1 for s in stride) and all(d == 1 for d in dilate)
    if x.shape[1] == 1:
        if not need_dx and g.numel() <= ATEN_SINGLE_CHANNEL_DW_MAX:
            # the weight gradient alone of a small batch: oneDNN's own kernel is faster (LeNet's
            # conv1 at batch 256: 1.5 against 3.6 ms, 2 threads); its scratch grows past that
            return _aten_backward(g, x, w, has_bias, stride, pad, dilate, groups, nsp,
                                  need_dx=False)
        return _single_channel_backward(g, x, w, has_bias, stride, pad, dilate, unit, need_dx)
    # data and weight gradients in one oneDNN call on channels-last copies: its channels-last
    # weight gradient beats the batch-as-channels convolution here (LeNet's conv2 at batch 64,
    # 256 and 1024, one thread: 1.1, 4.4 and 20.5 ms against 1.8, 11.8 and 49.7 ms)
    fmt = _memory_format(x)
    if fmt is torch.channels_last or not unit:
        gg, xx, ww = (t.contiguous(memory_format=fmt) for t in (g, x, w))
        dx, dw, _ = torch.ops.aten.convolution_backward(
            gg, xx, ww, None, list(stride), list(pad), list(dilate), False, [0, 0], 1,
            [need_dx, True, False])
        del gg, xx
        dw = dw.contiguous()  # (the weight's own layout)
    else:
        dx = None
        if need_dx:
            gg, xx, ww = (t.contiguous(memory_format=fmt) for t in (g, x, w))
            dx = torch.ops.aten.convolution_backward(
                gg, xx, ww, None, list(stride), list(pad), list(dilate), False, [0, 0], 1,
                [True, False, False])[0]
            del gg, xx
        # in batch chunks: the transposed copies of x and g are bounded by CHUNK_BYTES
        per_sample = (x[0].numel() + g[0].numel()) * x.element_size()
        step = max(1, min(x.shape[0], CHUNK_BYTES // max(1, per_sample)))
        dw = None
        for i in range(0, x.shape[0], step):
            part = _dw_batch_as_channels(g[i:i + step], x[i:i + step], pad)
            dw = part if dw is None else dw.add_(part)
    db = g.sum(dim=(0, 2, 3)) if has_bias else None
    return dx, dw, db


def _dw_batch_as_channels(g, x, pad):
    """dW[f, c] = sum_n x[n, c] (*) g[n, f]: a convolution with the batch as channels."""
    return TF.conv2d(x.transpose(0, 1), g.transpose(0, 1), padding=tuple(pad)).transpose(0, 1).contiguous()


# The single-channel path materialises (chunk, kh*kw, L) columns and a transposed copy of g:
# working in batch chunks of this many bytes of columns bounds that extra memory.
CHUNK_BYTES = 16 << 20
# The fused convolution + activation (conv_act_forward) keeps oneDNN scratch of its own beside
# the columns: where a batch needs chunks, half-size ones keep LeNet's training peak at batch
# 1024 where the separate kernels had it (peak RSS above baseline: 16 MiB chunks 278, 8 MiB 245-268,
# separate kernels 264, MXNet 270; 4 MiB chunks slow the step). A batch within CHUNK_BYTES stays
# one call (gluon-lenet at batch 256: two chunks cost ~10%).
FUSED_CHUNK_BYTES = CHUNK_BYTES // 2


def _single_channel_backward(g, x, w, has_bias, stride, pad, dilate, unit, need_dx=True):
    n, f = x.shape[0], w.shape[0]
    per_sample = g[0].numel() // f * w[0].numel() * g.element_size()
    step = max(1, min(n, CHUNK_BYTES // max(1, per_sample)))
    wt = w.reshape(f, -1).t()
    dx = torch.empty_like(x, memory_format=torch.contiguous_format) if need_dx else None
    dw = None
    for i in range(0, n, step):
        gi, xi = g[i:i + step], x[i:i + step]
        if need_dx:
            cols = torch.matmul(wt, gi.reshape(gi.shape[0], f, -1))  # col2im of Wᵀ·g
            dx[i:i + step] = TF.fold(cols, tuple(x.shape[2:]), tuple(w.shape[2:]),
                                     dilation=tuple(dilate), padding=tuple(pad),
                                     stride=tuple(stride))
            del cols
        if unit:
            part = _dw_batch_as_channels(gi, xi, pad)
            dw = part if dw is None else dw.add_(part)
    if not unit:
        dw = _aten_backward(g, x, w, False, stride, pad, dilate, 1, 2)[1]
    db = g.sum(dim=(0, 2, 3)) if has_bias else None
    return dx, dw, db
