"""Producer + activation in one kernel: the executor's plans may run a Convolution or a
FullyConnected whose only reader is an ``Activation`` (relu, sigmoid, tanh) as one oneDNN call
with the activation as a post-op, the way MXNet's oneDNN backend fuses them for inference
(``MXNET_SUBGRAPH_BACKEND``), here for training as well: those three activations differentiate
from their output, so the gradient pass never needs the pre-activation value the fused kernel
does not write.

Measured on the 2-core development machine (2 threads, LeNet at batch 256, milliseconds):

===========================  ==========  =====
                             separate    fused
===========================  ==========  =====
conv 1->20 5x5 + tanh        4.25        1.57
conv 20->50 5x5 + tanh (cl)  3.42        2.48
dense 800->500 + tanh        1.13        0.47
===========================  ==========  =====

ATen's ``tanh`` is the slow part there (~1 ns per element against ~0.1 for ``sigmoid``;
oneDNN's is within 7.4e-8 relative of the exact tanh, as ATen's); the convolution itself is the
same oneDNN kernel, so a fused relu gives the same bits as the separate calls.

Only float32 CPU tensors in MXNet's default layouts take the fused kernels; anything else runs
the two operators' own forwards, so a plan never depends on what the fused kernel supports.
"""
from __future__ import annotations

import torch

__all__ = ["activation_post_op"]

_POST_OPS = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}


def _available() -> bool:
    ops = getattr(torch.ops, "mkldnn", None)
    try:
        return (torch.backends.mkldnn.is_available() and ops is not None
                and hasattr(ops, "_convolution_pointwise") and hasattr(ops, "_linear_pointwise"))
    except (AttributeError, RuntimeError):
        return False


AVAILABLE = _available()


def _plain(t) -> bool:
    return t.device.type == "cpu" and t.dtype == torch.float32


def activation_post_op(producer, act):
    """The fused forward ``fn(params, ins, oc) -> activation output`` of the op nodes
    ``producer`` -> ``act`` (``act`` reading the producer's output), or None when they do not
    fuse. ``ins`` are the producer's inputs."""
    if not AVAILABLE or act.op is None or act.op.name != "Activation":
        return None
    attr = _POST_OPS.get(act.params.act_type)
    if attr is None or producer.op is None:
        return None
    if producer.op.name == "Convolution":
        return _conv_act(producer, act, attr)
    if producer.op.name == "FullyConnected":
        return _fc_act(producer, act, attr)
    return None


def _separate(producer, act):
    """The two operators' own forwards (the activation over the producer's fresh output)."""
    fwd, pp = producer.op.forward, producer.params
    act_fwd, pa = act.op.inplace_forward or act.op.forward, act.params

    def run(ins, oc):
        return act_fwd(pa, [fwd(pp, ins, oc)], oc)
    return run


def _conv_act(producer, act, attr):
    from .conv import _conv_geometry
    from .conv_kernels import conv_act_forward
    p = producer.params
    if len(p.kernel) != 2 or p.num_group != 1 or p.layout not in (None, "NCHW"):
        return None
    _, stride, dilate, pad = _conv_geometry(p)
    separate = _separate(producer, act)
    no_bias = p.no_bias

    def run(_params, ins, oc):
        x, w = ins[0], ins[1]
        b = None if no_bias else ins[2]
        if (x.dim() != 4 or not _plain(x) or not _plain(w) or (b is not None and not _plain(b))
                or x.shape[1] != w.shape[1]):
            return separate(ins, oc)
        return conv_act_forward(x, w, b, stride, pad, dilate, attr)
    return run


def _fc_act(producer, act, attr):
    p = producer.params
    separate = _separate(producer, act)
    no_bias, flatten = p.no_bias, p.flatten

    def run(_params, ins, oc):
        x, w = ins[0], ins[1]
        b = None if no_bias else ins[2]
        if flatten and x.dim() > 2:
            x = x.reshape(x.shape[0], -1)
        if (x.dim() != 2 or not _plain(x) or not _plain(w) or (b is not None and not _plain(b))
                or x.shape[1] != w.shape[1] or not w.is_contiguous()):
            return separate(ins, oc)
        return torch.ops.mkldnn._linear_pointwise(x, w, b, attr, [], "")
    return run
