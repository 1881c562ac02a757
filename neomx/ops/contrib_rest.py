"""The last ``mx.nd.contrib`` operators of MXNet 1.9.1's table: ``BatchNormWithReLU``,
``SyncBatchNorm``, ``RROIAlign``, and the GPU-only ``fft``, ``ifft`` and ``count_sketch``.

Semantics follow MXNet 1.9.1 (``src/operator/contrib/batch_norm_relu.cc``,
``sync_batch_norm-inl.h``, ``rroi_align.cc``, ``fft-inl.h``, ``ifft-inl.h``,
``count_sketch-inl.h``):

* ``BatchNormWithReLU`` is ``relu(BatchNorm(...))`` with BatchNorm's parameters, outputs (the
  hidden mean and inverse std) and moving-statistics update; its gradient masks the output
  gradient with ``output > 0`` and goes through BatchNorm's. MXNet 1.9.1 has it only as a oneDNN
  kernel: 4-D float32 data with the channel on axis 1; anything else raises MXNet's
  "only supports MKL-DNN Backend" error, here too.
* ``SyncBatchNorm`` normalises with the statistics of the whole batch spread over ``ndev``
  devices: each device's forward contributes its per-channel sums and waits for the others with
  the same ``key`` (MXNet's sync-once scheme: mean and ``E[x^2] - mean^2``), and its backward
  likewise shares the sums of the output gradient. In neomx the devices of one process meet in
  the engine's per-device worker threads, which run executors' forward and backward passes
  concurrently (``Module`` over several contexts, ``bind`` per device); an imperative call (run
  on the calling thread, one device after the other) with ``ndev > 1`` raises an MXNetError
  instead of waiting forever, and so does a group that is not complete within
  ``MXNET_SYNCBN_TIMEOUT`` seconds (default 60). With ``ndev=1`` it is BatchNorm with the
  hidden outputs mean and (biased) variance. Gamma and beta gradients are each device's own, as
  in MXNet (a kvstore sums them).
* ``RROIAlign``: rotated ROI align (rois ``[batch, cx, cy, w, h, angle in degrees]``), average
  of ``sampling_ratio`` x ``sampling_ratio`` bilinear samples per bin (adaptive
  ``ceil(roi size / pooled size)`` when ``sampling_ratio <= 0``); not differentiable, as MXNet's.
* ``fft`` / ``ifft`` / ``count_sketch`` exist only in MXNet's GPU build: on CPU contexts they
  raise MXNet's "only available for GPU" errors, on CUDA devices they compute (``fft``: the
  complex DFT of the last axis interleaved as ``[re0, im0, re1, im1, ...]``; ``ifft``: the real
  part of the unnormalised inverse DFT of such data; ``count_sketch``:
  ``out[n, h[j]] += s[j] * data[n, j]``) with their true gradients. Shape inference works
  everywhere (2-D or 4-D data for fft/ifft, as MXNet's).
"""
from __future__ import annotations

import math
import os
import threading

import numpy as np
import torch

from ..base import MXNetError
from .nn_layers import data_typed, replay_op, set_shape
from .norm import (_BN_PARAMS, _bn_axis, _bn_backward, _bn_forward, _bn_infer_shape,
                   _bn_infer_type, _bcast_shape)
from .registry import OpDef, Param, ShapeError, register


# --- BatchNormWithReLU ---------------------------------------------------------------------------
def _bnrelu_supported(p, x):
    return x.dim() == 4 and p.axis in (1, -3) and x.dtype in (torch.float32, torch.bfloat16)


def _bnrelu_forward(p, ins, oc):
    x = ins[0]
    if not _bnrelu_supported(p, x):
        raise MXNetError("BatchNormWithReLU operator only supports MKL-DNN Backend.")
    y, mean, invstd = _bn_forward(p, ins, oc)
    return torch.relu(y), mean, invstd


def _bnrelu_gradient(F, p, ins, outs, ograds):
    dx, dgamma, dbeta = F._backward_contrib_BatchNormWithReLU(
        ograds[0], outs[0], ins[0], ins[1], outs[1], outs[2], **p)
    return [dx, dgamma, dbeta]


def _bnrelu_backward(p, ins, oc):
    g, y, x, gamma, mean, invstd = ins
    return _bn_backward(p, [g * (y > 0).to(g.dtype), x, gamma, mean, invstd], oc)


def _bn_outputs(p):
    return ("output", "mean", "var") if p.output_mean_var else ("output",)


register(OpDef(
    "_contrib_BatchNormWithReLU", _bnrelu_forward, _bn_infer_shape, params=_BN_PARAMS,
    inputs=("data", "gamma", "beta"), aux=("moving_mean", "moving_var"), outputs=_bn_outputs,
    num_hidden_outputs=lambda p: 0 if p.output_mean_var else 2, infer_type=_bn_infer_type,
    mutates_aux=True, gradient=_bnrelu_gradient, hint="batchnormwithrelu",
    doc="Batch normalization with ReLU fusion: ``relu(BatchNorm(data, gamma, beta, moving_mean, "
        "moving_var))`` with BatchNorm's parameters, hidden outputs (mean, inverse std) and "
        "moving-statistics update. As MXNet 1.9.1's (a oneDNN kernel), only 4-D float32 data "
        "with the channel on axis 1."))
register(OpDef(
    "_backward_contrib_BatchNormWithReLU", _bnrelu_backward,
    lambda p, ins, outs: (ins, [ins[2], ins[3], ins[3]]), params=_BN_PARAMS,
    inputs=("out_grad", "output", "data", "gamma", "mean", "var"),
    outputs=("data", "gamma", "beta"),
    infer_type=lambda p, ins, outs: (ins, [ins[2], ins[3], ins[3]]), public=False,
    doc="Gradient of BatchNormWithReLU: BatchNorm's, of the output gradient where output > 0."))


# --- SyncBatchNorm -------------------------------------------------------------------------------
_SYNC_PARAMS = (
    Param("eps", "float", 1e-3, "Epsilon to prevent div 0."),
    Param("momentum", "float", 0.9, "Momentum for moving average."),
    Param("fix_gamma", "bool", True, "Fix gamma while training."),
    Param("use_global_stats", "bool", False, "Whether use global moving statistics instead of "
                                             "local batch-norm. This will force change batch-norm "
                                             "into a scale shift operator."),
    Param("output_mean_var", "bool", False, "Output All,normal mean and var."),
    Param("ndev", "int", 1, "The count of devices whose batches are normalised together."),
    Param("key", "str", doc="Hash key for synchronization, please set the same hash key for "
                            "same layer, Block.prefix is typically used as in "
                            ":class:`gluon.nn.contrib.SyncBatchNorm`."),
)


class _Rendezvous:
    """Sums of per-device tensors among the ``ndev`` callers of one ``key`` (one thread each)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._rounds: dict = {}  # key -> [generation, contributions, {generation: [parts, left]}]

    def allreduce(self, key, ndev, t):
        timeout = float(os.environ.get("MXNET_SYNCBN_TIMEOUT", "60"))
        with self._cond:
            st = self._rounds.setdefault(key, [0, [], {}])
            gen = st[0]
            st[1].append(t)
            if len(st[1]) == ndev:
                st[2][gen] = [st[1], ndev]
                st[0], st[1] = gen + 1, []
                self._cond.notify_all()
            elif not self._cond.wait_for(lambda: st[0] > gen, timeout):
                st[1] = [c for c in st[1] if c is not t]
                raise MXNetError(
                    f"SyncBatchNorm(key={key!r}): {len(st[1]) + 1} of ndev={ndev} devices "
                    f"reached the synchronisation within {timeout:g} s (MXNET_SYNCBN_TIMEOUT); "
                    "every device of the group must run this layer, each in its own executor")
            done = st[2][gen]
            parts = done[0]
            done[1] -= 1
            if done[1] == 0:
                del st[2][gen]
        return sum(p.to(t.device) for p in parts)


_RENDEZVOUS = _Rendezvous()


def _sync_sum(p, t, what):
    """``t`` summed over the ``ndev`` devices of the group (``t`` itself on one device)."""
    if p.ndev <= 1:
        return t
    if not threading.current_thread().name.startswith("neomx-"):
        raise MXNetError(
            f"SyncBatchNorm(key={p.key!r}, ndev={p.ndev}): the {what} of several devices are "
            "synchronised in executors (Module over several contexts, or one bound executor per "
            "device), whose passes neomx runs concurrently, one thread per device; this call runs "
            "on the calling thread and cannot wait for the other devices (use ndev=1 here)")
    return _RENDEZVOUS.allreduce(f"{p.key}/{what}", p.ndev, t)


def _syncbn_forward(p, ins, oc):
    x, gamma, beta, mm, mv = ins
    if p.fix_gamma:
        gamma.fill_(1)
    shape = _bcast_shape(x.dim(), 1)
    red = tuple(d for d in range(x.dim()) if d != 1)
    xc = x.double() if x.dtype == torch.float64 else x.float()
    if oc.is_train and not p.use_global_stats:
        n = torch.tensor([x.numel() // x.shape[1]], dtype=xc.dtype, device=x.device)
        local = torch.cat([xc.sum(red), (xc * xc).sum(red), n])
        total = _sync_sum(p, local, "statistics")
        c = x.shape[1]
        count = total[2 * c]
        mean = total[:c] / count
        var = (total[c:2 * c] / count - mean * mean).clamp_min(0)
        m = p.momentum
        mm.mul_(m).add_(mean.to(mm.dtype), alpha=1 - m)
        mv.mul_(m).add_(var.to(mv.dtype), alpha=1 - m)
    else:
        mean, var = mm.to(xc.dtype), mv.to(xc.dtype)
    invstd = torch.rsqrt(var + p.eps)
    scale = invstd * gamma.to(xc.dtype)
    y = (xc - mean.reshape(shape)) * scale.reshape(shape) + beta.to(xc.dtype).reshape(shape)
    return y.to(x.dtype), mean.to(mm.dtype).clone(), var.to(mv.dtype).clone()


def _syncbn_gradient(F, p, ins, outs, ograds):
    dx, dgamma, dbeta = F._backward_contrib_SyncBatchNorm(ograds[0], ins[0], ins[1], outs[1],
                                                          outs[2], **p)
    return [dx, dgamma, dbeta]


def _syncbn_backward(p, ins, oc):
    g, x, gamma, mean, var = ins
    shape = _bcast_shape(x.dim(), 1)
    red = tuple(d for d in range(x.dim()) if d != 1)
    dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    gc, xc = g.to(dt), x.to(dt)
    invstd = torch.rsqrt(var.to(dt) + p.eps)
    xhat = (xc - mean.to(dt).reshape(shape)) * invstd.reshape(shape)
    dbeta = gc.sum(red)
    dgamma = (gc * xhat).sum(red)
    scale = invstd * gamma.to(dt)
    if oc.is_train and not p.use_global_stats:
        c = x.shape[1]
        n = torch.tensor([x.numel() // c], dtype=dt, device=x.device)
        total = _sync_sum(p, torch.cat([dbeta, dgamma, n]), "gradient sums")
        count = total[2 * c]
        dx = (gc - (total[:c] / count).reshape(shape)
              - xhat * (total[c:2 * c] / count).reshape(shape)) * scale.reshape(shape)
    else:
        dx = gc * scale.reshape(shape)
    if p.fix_gamma:
        dgamma = torch.zeros_like(dgamma)
    return dx.to(x.dtype), dgamma.to(gamma.dtype), dbeta.to(gamma.dtype)


def _syncbn_infer_shape(p, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    if data is not None and len(data) < 2:
        raise ShapeError(f"Check failed: dshape.ndim() >= 2U ({len(data)} vs. 2) ")
    return _bn_infer_shape(_axis1(p), ins, outs)


def _axis1(p):
    q = type(p)(p)
    q["axis"] = 1
    return q


register(OpDef(
    "_contrib_SyncBatchNorm", _syncbn_forward, _syncbn_infer_shape, params=_SYNC_PARAMS,
    inputs=("data", "gamma", "beta"), aux=("moving_mean", "moving_var"), outputs=_bn_outputs,
    num_hidden_outputs=lambda p: 0 if p.output_mean_var else 2, infer_type=_bn_infer_type,
    mutates_aux=True, gradient=_syncbn_gradient, hint="syncbatchnorm",
    doc="Batch normalization over the whole batch spread across ``ndev`` devices (channel axis "
        "1): the per-device sums are combined among the devices whose executors run this layer "
        "with the same ``key``. The hidden outputs are the batch mean and biased variance; the "
        "moving statistics are updated with them. With ``ndev=1`` it is BatchNorm."))
register(OpDef(
    "_backward_contrib_SyncBatchNorm", _syncbn_backward,
    lambda p, ins, outs: (ins, [ins[1], ins[2], ins[2]]), params=_SYNC_PARAMS,
    inputs=("out_grad", "data", "gamma", "mean", "var"), outputs=("data", "gamma", "beta"),
    infer_type=lambda p, ins, outs: (ins, [ins[1], ins[2], ins[2]]), public=False,
    doc="Gradient of SyncBatchNorm (the data gradient from the group's gradient sums)."))


# --- RROIAlign -----------------------------------------------------------------------------------
def _rroi_shape(p, ins, outs):
    ins = list(ins)
    data, rois = ins
    if data is not None and len(data) != 4:
        raise ShapeError(f"Check failed: dshape.ndim() == 4U ({len(data)} vs. 4) : data should "
                         "be a 4D tensor")
    if rois is not None and len(rois) != 2:
        raise ShapeError(f"Check failed: bshape.ndim() == 2U ({len(rois)} vs. 2) : bbox should "
                         "be a 2D tensor of shape [batch, 6]")
    if rois is not None and rois[1] != 6:
        raise ShapeError(f"Check failed: bshape[1] == 6U ({rois[1]} vs. 6) : bbox should be a "
                         "2D tensor of shape [batch, 6]")
    if data is None or rois is None:
        return ins, outs
    ph, pw = p.pooled_size
    return ins, [(rois[0], data[1], ph, pw)]


def _rroi_forward(p, ins, oc):
    data, rois = ins
    n, c, h, w = data.shape
    ph, pw = p.pooled_size
    dt = data.dtype
    out = torch.zeros((rois.shape[0], c, ph, pw), dtype=dt, device=data.device)
    flat = data.reshape(n, c, h * w)
    r64 = rois.detach().to("cpu", torch.float64).numpy()
    for i, (b, cx, cy, rw, rh, ang) in enumerate(r64):
        s = p.spatial_scale
        cx, cy = np.float32(cx * s), np.float32(cy * s)
        rw, rh = max(np.float32(rw * s), np.float32(1)), max(np.float32(rh * s), np.float32(1))
        theta = np.float32(ang * math.pi / 180.0)
        bh, bw = rh / ph, rw / pw
        gh = p.sampling_ratio if p.sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = p.sampling_ratio if p.sampling_ratio > 0 else int(math.ceil(rw / pw))
        iy = (torch.arange(gh, dtype=torch.float64) + 0.5) * float(bh) / gh
        ix = (torch.arange(gw, dtype=torch.float64) + 0.5) * float(bw) / gw
        yy = (-float(rh) / 2 + torch.arange(ph, dtype=torch.float64)[:, None] * float(bh)
              + iy[None, :])  # (ph, gh)
        xx = (-float(rw) / 2 + torch.arange(pw, dtype=torch.float64)[:, None] * float(bw)
              + ix[None, :])  # (pw, gw)
        yy = yy[:, None, :, None]
        xx = xx[None, :, None, :]  # -> (ph, pw, gh, gw)
        ct, st = math.cos(float(theta)), math.sin(float(theta))
        x = xx * ct + yy * st + float(cx)
        y = yy * ct - xx * st + float(cy)
        valid = ~((y < -1.0) | (y > h) | (x < -1.0) | (x > w))
        y, x = y.clamp_min(0), x.clamp_min(0)
        y0, x0 = y.floor().long(), x.floor().long()
        ytop, xtop = y0 >= h - 1, x0 >= w - 1
        y0 = torch.where(ytop, torch.full_like(y0, h - 1), y0)
        x0 = torch.where(xtop, torch.full_like(x0, w - 1), x0)
        y = torch.where(ytop, y0.double(), y)
        x = torch.where(xtop, x0.double(), x)
        y1 = torch.where(ytop, y0, y0 + 1)
        x1 = torch.where(xtop, x0, x0 + 1)
        ly, lx = y - y0, x - x0
        hy, hx = 1 - ly, 1 - lx
        v = valid.double()
        idx = torch.stack([y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1]).reshape(-1)
        wts = torch.stack([hy * hx * v, hy * lx * v, ly * hx * v, ly * lx * v]).reshape(4, -1)
        vals = flat[int(b)][:, idx.to(data.device)].reshape(c, 4, ph * pw * gh * gw)
        res = (vals.double() * wts.to(data.device)[None]).sum(1).reshape(c, ph, pw, gh * gw)
        out[i] = (res.sum(-1) / (gh * gw)).to(dt)
    return out


register(OpDef(
    "_contrib_RROIAlign", _rroi_forward, _rroi_shape,
    params=(Param("pooled_size", "shape", doc="RROI align output shape (h,w)."),
            Param("spatial_scale", "float", doc="Ratio of input feature map height (or width) "
                                                 "to raw image height (or width). Equals the "
                                                 "reciprocal of total stride in convolutional "
                                                 "layers."),
            Param("sampling_ratio", "int", -1, "Optional sampling ratio of RROI align, using "
                                               "adaptive size by default.")),
    inputs=("data", "rois"), hint="rroialign",
    doc="Rotated ROI align: ``rois`` rows are ``[batch index, center x, center y, width, "
        "height, angle (degrees)]`` in image coordinates (times ``spatial_scale`` on the feature "
        "map); each of the ``pooled_size`` bins of the rotated box averages bilinear samples "
        "of ``data`` (sampling_ratio per side, adaptive when <= 0). Output ``(num_rois, C, "
        "pooled_h, pooled_w)``. Not differentiable (as MXNet's)."))


# --- fft / ifft / count_sketch (GPU-only in MXNet) -----------------------------------------------
_COMPUTE_SIZE = Param("compute_size", "int", 128, "Maximum size of sub-batch to be forwarded at "
                                                  "one time (ignored).")


def _gpu_only(x, name):
    if x.device.type == "cpu":
        raise MXNetError(f"{name} is only available for GPU.")


def _fft_shape(factor):
    def infer(p, ins, outs):
        d = ins[0]
        if d is None or len(d) not in (2, 4):
            return ins, outs  # MXNet: 2-D or 4-D only (no decision otherwise)
        return ins, [tuple(d[:-1]) + (int(d[-1] * factor),)]
    return infer


def fft_interleaved(x):
    """The DFT of ``x``'s last axis as ``[re0, im0, re1, im1, ...]`` (``fft``'s kernel)."""
    z = torch.fft.fft(x, dim=-1)
    return torch.view_as_real(z).reshape(tuple(x.shape[:-1]) + (2 * x.shape[-1],)).to(x.dtype)


def ifft_interleaved(x):
    """The real part of the unnormalised inverse DFT of interleaved complex data (``ifft``)."""
    n = x.shape[-1] // 2
    z = torch.view_as_complex(x[..., :2 * n].reshape(tuple(x.shape[:-1]) + (n, 2)).contiguous())
    return (torch.fft.ifft(z, dim=-1).real * n).to(x.dtype)


def _fft_forward(p, ins, oc):
    _gpu_only(ins[0], "fft")
    return fft_interleaved(ins[0])


def _ifft_forward(p, ins, oc):
    _gpu_only(ins[0], "ifft")
    return ifft_interleaved(ins[0])


replay_op(
    "_contrib_fft", lambda p, ins: fft_interleaved(ins[0]), _fft_forward, _fft_shape(2),
    params=(_COMPUTE_SIZE,), hint="fft",
    doc="1-D FFT of the last axis of real 2-D ``(N, d)`` or 4-D ``(N1, N2, N3, d)`` data: "
        "``(..., 2*d)`` interleaved ``[re0, im0, re1, im1, ...]``. GPU only (MXNet 1.9.1's CPU "
        "build raises 'fft is only available for GPU.', and so does neomx on CPU).")
replay_op(
    "_contrib_ifft", lambda p, ins: ifft_interleaved(ins[0]), _ifft_forward, _fft_shape(0.5),
    params=(_COMPUTE_SIZE,), hint="ifft",
    doc="1-D inverse FFT of interleaved complex data ``(..., 2*d)`` (2-D or 4-D): the real part "
        "of the unnormalised inverse DFT, ``(..., d)``. GPU only (as MXNet 1.9.1's).")


def _cs_shape(p, ins, outs):
    ins = list(ins)
    data, h, s = ins
    if data is None:
        return ins, outs
    if h is None or s is None:
        raise ShapeError("Check failed: i >= 0 && i < ndim(): index = 1 must be in range [0, -1)")
    set_shape(ins, 2, h, brackets=True)
    return ins, [(data[0], p.out_dim)]


def count_sketch(data, h, s, out_dim):
    """``out[n, h[j]] += s[j] * data[n, j]`` (``count_sketch``'s kernel)."""
    idx = h.reshape(-1).long()
    out = torch.zeros((data.shape[0], out_dim), dtype=data.dtype, device=data.device)
    return out.index_add(1, idx, data * s.reshape(1, -1).to(data.dtype))


def _cs_forward(p, ins, oc):
    _gpu_only(ins[0], "CountSketch")
    return count_sketch(ins[0], ins[1], ins[2], p.out_dim)


replay_op(
    "_contrib_count_sketch", lambda p, ins: count_sketch(ins[0], ins[1], ins[2], p.out_dim),
    _cs_forward, _cs_shape,
    params=(Param("out_dim", "int", doc="The output dimension."),
            Param("processing_batch_size", "int", 32, "How many sketch vectors to process at one "
                                                       "time (ignored).")),
    inputs=("data", "h", "s"), no_grad=(1, 2), infer_type=data_typed(1, 2), hint="count_sketch",
    doc="CountSketch of ``data`` ``(N, d)`` with index hashes ``h`` and signs ``s`` (``(1, d)``): "
        "``out[n, h[j]] += s[j] * data[n, j]``, shape ``(N, out_dim)``. GPU only (MXNet 1.9.1's "
        "CPU build raises 'CountSketch is only available for GPU.').")


def get_op_kernel_for_tests(name):
    """``kernel(*tensors)`` running op ``name``'s forward with default parameters (tests use it
    for the GPU-only operators' backward kernels on CPU tensors)."""
    from .registry import OpContext, get
    op = get(name)
    p, _ = op.parse_params({})
    return lambda *ins: op.forward(p, list(ins), OpContext(is_train=True))
