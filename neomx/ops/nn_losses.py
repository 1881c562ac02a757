"""Loss layers: softmax_cross_entropy, SVMOutput, IdentityAttachKLSparseReg and CTCLoss
(ctc_loss).

Parameter names, defaults, hidden outputs and check messages follow MXNet 1.9.1
(``src/operator/loss_binary_op.cc``, ``svm_output.cc``, ``identity_attach_KL_sparse_reg.cc``,
``nn/ctc_loss.cc``). Label-like inputs (labels, lengths) get no gradient.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

from .nn_layers import data_typed, replay_op, set_shape
from .registry import OpDef, Param, ShapeError, TypeInferError, register


# --- softmax_cross_entropy -----------------------------------------------------------------------
def _sce_infer_shape(p, ins, outs):
    ins = list(ins)
    data, label = ins
    if label is None or (not data and not label):
        raise ShapeError(f"Check failed: (*in_attrs)[1].ndim() == 1U ({len(label) if label else -1}"
                         " vs. 1) : SoftmaxCrossEntropy only accept 1D label")
    if not data:
        return ins, [(1,)]
    if len(data) != 2:
        raise ShapeError(f"Check failed: (*in_attrs)[0].ndim() == 2U ({len(data)} vs. 2) : "
                         "SoftmaxCrossEntropy only accept 2D data")
    if len(label) != 1:
        raise ShapeError(f"Check failed: (*in_attrs)[1].ndim() == 1U ({len(label)} vs. 1) : "
                         "SoftmaxCrossEntropy only accept 1D label")
    if data[0] and label[0] and data[0] != label[0]:
        raise ShapeError(f"Check failed: (*in_attrs)[0][0] == (*in_attrs)[1][0] ({data[0]} vs. "
                         f"{label[0]}) : SoftmaxCrossEntropy: data label shape mismatch")
    set_shape(ins, 1, (data[0],))
    return ins, [(1,)]


def _sce_compute(p, ins):
    x, label = ins
    logp = torch.log_softmax(x, dim=1)
    idx = label.to(torch.int64).clamp(0, x.shape[1] - 1).reshape(-1, 1)
    return -logp.gather(1, idx).sum().reshape(1)


replay_op(
    "softmax_cross_entropy", _sce_compute, lambda p, ins, oc: _sce_compute(p, ins),
    _sce_infer_shape, params=(), inputs=("data", "label"), no_grad=(1,), infer_type=data_typed(),
    no_grad_inputs=("label",),
    doc="Calculate cross entropy of softmax output and one-hot label.\n\n"
        "``data`` is ``(batch, classes)``, ``label`` ``(batch,)`` class indices; the output, of\n"
        "shape ``(1,)``, is ``sum_i -log(softmax(data[i])[label[i]])``.\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> y = mx.nd.softmax_cross_entropy(mx.nd.array([[0, 0]]), mx.nd.array([1]))\n"
        ">>> round(float(y.asscalar()), 4)\n"
        "0.6931")


# --- SVMOutput -----------------------------------------------------------------------------------
_SVM_PARAMS = (
    Param("margin", "float", 1.0, "The loss function penalizes outputs that lie outside this "
                                  "margin. Default margin is 1."),
    Param("regularization_coefficient", "float", 1.0, "Regularization parameter for the SVM. "
                                                      "This balances the tradeoff between "
                                                      "coefficient size and error."),
    Param("use_linear", "bool", False, "Whether to use L1-SVM objective. L2-SVM objective is "
                                       "used by default."),
)


def _svm_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0] if ins[0] else outs[0]
    if not data:
        return ins, outs
    data = tuple(data)
    set_shape(ins, 1, (data[0],), brackets=True)
    ins[0] = data
    return ins, [data]


def _svm_infer_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    if t is None:
        return ins, outs
    for i, (x, name) in enumerate(zip(ins, ("data", "label"))):
        if x is not None and np.dtype(x) != np.dtype(t):
            raise TypeInferError(f"Check failed: (*in_type)[i] == dtype ({_TYPE_FLAG[np.dtype(x)]} "
                                 f"vs. {_TYPE_FLAG[np.dtype(t)]}) : This layer requires uniform "
                                 f"type. Expected '{np.dtype(t).name}' v.s. given "
                                 f"'{np.dtype(x).name}' at '{name}'")
    return [t, t], [t]


# MXNet's type flags (mshadow::TypeFlag) in its type-check messages
_TYPE_FLAG = {np.dtype(n): i for i, n in enumerate(
    ("float32", "float64", "float16", "uint8", "int32", "int8", "int64"))}


def _svm_backward(p, ins, oc):
    """MXNet's L1_SVM / L2_SVM kernels (src/operator/svm_output.cc): at the label
    ``-c * [m > x]`` (L1) or ``-2c * max(m - x, 0)`` (L2), elsewhere ``c * [m > -x]`` or
    ``2c * max(m + x, 0)``."""
    out, label = ins
    x = out.reshape(out.shape[0], -1)
    onehot = TF.one_hot(label.to(torch.int64).clamp(0, x.shape[1] - 1), x.shape[1]).bool()
    m, c = p.margin, p.regularization_coefficient
    if p.use_linear:
        at_label = -(m > x).to(x.dtype) * c
        others = (m > -x).to(x.dtype) * c
    else:
        at_label = torch.where(m > x, 2 * (m - x), torch.zeros_like(x)) * -c
        others = torch.where(m > -x, 2 * (m + x), torch.zeros_like(x)) * c
    return torch.where(onehot, at_label, others).reshape(out.shape)


register(OpDef(
    "SVMOutput", lambda p, ins, oc: ins[0].clone(), _svm_infer_shape, params=_SVM_PARAMS,
    infer_type=_svm_infer_type,
    inputs=("data", "label"), is_loss=True, no_grad_inputs=("label",),
    gradient=lambda F, p, ins, outs, ograds: [F._backward_SVMOutput(outs[0], ins[1], **p), None],
    doc="Computes support vector machine based transformation of the input.\n\n"
        "Forward is the identity; the gradient (the head gradient is ignored) is MXNet's L2-SVM\n"
        "(default) or L1-SVM (``use_linear``) hinge gradient for ``margin`` and\n"
        "``regularization_coefficient``, with ``label`` holding class indices."))
register(OpDef("_backward_SVMOutput", _svm_backward, lambda p, ins, outs: (ins, [ins[0]]),
               params=_SVM_PARAMS, inputs=("output", "label"), public=False,
               doc="Gradient of SVMOutput."))


# --- IdentityAttachKLSparseReg -------------------------------------------------------------------
_KL_PARAMS = (
    Param("sparseness_target", "float", 0.1, "The sparseness target"),
    Param("penalty", "float", 0.001, "The tradeoff parameter for the sparseness penalty"),
    Param("momentum", "float", 0.9, "The momentum for running average"),
)


def _kl_infer_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0] if ins[0] else outs[0]
    if not data:
        return ins, outs
    data = tuple(data)
    ins[0] = data
    set_shape(ins, 1, (data[1],))
    return ins, [data]


def _kl_forward(p, ins, oc):
    """Identity; a training forward moves the running average of the mean activation (MXNet
    does it in backward, which follows a training forward)."""
    x, avg = ins
    if oc.is_train:
        mean = x.reshape(x.shape[0], x.shape[1], -1).sum(dim=2).mean(dim=0)
        avg.mul_(p.momentum).add_(mean.to(avg.dtype), alpha=1 - p.momentum)
    return x.clone()


def _kl_backward(p, ins, oc):
    g, avg = ins
    shape = [1, -1] + [1] * (g.dim() - 2)
    t, a = p.sparseness_target, avg.reshape(shape).to(g.dtype)
    return g + p.penalty * (-t / a + (1 - t) / (1 - a))


register(OpDef(
    "IdentityAttachKLSparseReg", _kl_forward, _kl_infer_shape, params=_KL_PARAMS,
    aux=("moving_avg",), mutates_aux=True, deterministic=False,
    input_init=lambda p: {"moving_avg": '["zero", {}]'},
    gradient=lambda F, p, ins, outs, ograds: [
        F._backward_IdentityAttachKLSparseReg(ograds[0], ins[1], **p)],
    doc="Apply a sparse regularization to the output a sigmoid activation function.\n\n"
        "Forward is the identity. ``moving_avg`` (one entry per channel, axis 1) follows the\n"
        "batch mean activation with ``momentum``; the gradient adds\n"
        "``penalty * (-sparseness_target / avg + (1 - sparseness_target) / (1 - avg))``."))
register(OpDef("_backward_IdentityAttachKLSparseReg", _kl_backward,
               lambda p, ins, outs: (ins, [ins[0]]), params=_KL_PARAMS,
               inputs=("out_grad", "moving_avg"), public=False,
               doc="Gradient of IdentityAttachKLSparseReg."))


# --- CTCLoss -------------------------------------------------------------------------------------
_CTC_PARAMS = (
    Param("use_data_lengths", "bool", False, "Whether the data lenghts are decided by "
                                             "`data_lengths`. If false, the lengths are equal to "
                                             "the max sequence length."),
    Param("use_label_lengths", "bool", False, "Whether the label lenghts are decided by "
                                              "`label_lengths`, or derived from `padding_mask`. "
                                              "If false, the lengths are derived from the first "
                                              "occurrence of the value of `padding_mask`. The "
                                              "value of `padding_mask` is ``0`` when first CTC "
                                              "label is reserved for blank, and ``-1`` when last "
                                              "label is reserved for blank. See `blank_label`."),
    Param("blank_label", "str", "first", "Set the label that is reserved for blank label.If "
                                         "\"first\", 0-th label is reserved, and label values "
                                         "for tokens in the vocabulary are between ``1`` and "
                                         "``alphabet_size-1``, and the padding mask is ``-1``. "
                                         "If \"last\", last label value ``alphabet_size-1`` is "
                                         "reserved for blank label instead, and label values "
                                         "for tokens in the vocabulary are between ``0`` and "
                                         "``alphabet_size-2``, and the padding mask is ``0``.",
          choices=("first", "last")),
)


def _ctc_inputs(p):
    return (("data", "label") + (("data_lengths",) if p.use_data_lengths else ())
            + (("label_lengths",) if p.use_label_lengths else ()))


def _ctc_infer_shape(p, ins, outs):
    ins = list(ins)
    data, label = ins[0], ins[1]
    if label is None:
        raise ShapeError("Check failed: lshape.ndim() == 2U (-1 vs. 2) : The number of dimensions "
                         "of labels array must be 2.")
    if not data or not label:
        return ins, outs
    if len(label) != 2:
        raise ShapeError(f"Check failed: lshape.ndim() == 2U ({len(label)} vs. 2) : The number of "
                         "dimensions of labels array must be 2.")
    if len(data) != 3:
        raise ShapeError(f"Check failed: dshape.ndim() == 3U ({len(data)} vs. 3) : The number "
                         "of dimensions of data array must be 3.")
    if data[1] != label[0]:
        raise ShapeError(f"Check failed: dshape[1] == lshape[0] ({data[1]} vs. {label[0]}) : The "
                         "batch size for the labels and data arrays must be the same.")
    for i in range(2, len(ins)):
        set_shape(ins, i, (data[1],))
    return ins, [(data[1],), tuple(data)]


def _ctc_infer_type(p, ins, outs):
    """The label's type must be known (MXNet decides nothing without it); the rest follow the
    data's."""
    if ins[1] is None:
        return ins, outs
    return data_typed(*range(1, len(ins)))(p, ins, outs)


def _ctc_labels(p, ins):
    """(targets (N, L) int64, target lengths) with MXNet's padding rules."""
    label = ins[1].to(torch.int64)
    if p.use_label_lengths:
        lens = ins[-1].to(torch.int64)
    else:
        pad = 0 if p.blank_label == "first" else -1
        is_pad = label == pad
        first = torch.where(is_pad.any(dim=1), is_pad.to(torch.int64).argmax(dim=1),
                            torch.full_like(label[:, 0], label.shape[1]))
        lens = first
    return label.clamp(min=0), lens


def _ctc_compute(p, ins):
    data = ins[0]
    t, n, c = data.shape
    if p.use_data_lengths:
        dlens = ins[2].to(torch.int64)
    else:
        dlens = torch.full((n,), t, dtype=torch.int64, device=data.device)
    targets, tlens = _ctc_labels(p, ins)
    blank = 0 if p.blank_label == "first" else c - 1
    logp = torch.log_softmax(data.double() if data.dtype != torch.float64 else data, dim=2)
    loss = TF.ctc_loss(logp, targets, dlens, tlens, blank=blank, reduction="none",
                       zero_infinity=False)
    return loss.to(data.dtype)


def _ctc_forward(p, ins, oc):
    """(loss, d loss.sum() / d data): the gradient is computed with the loss and kept as the
    hidden output, as MXNet's kernel does; backward only scales it."""
    data = ins[0]
    with torch.enable_grad():
        x = data.detach().requires_grad_(True)
        loss = _ctc_compute(p, [x] + list(ins[1:]))
        (grad,) = torch.autograd.grad(loss.sum(), x)
    return loss.detach(), grad


def _ctc_gradient(F, p, ins, outs, ograds):
    n = len(_ctc_inputs(p))
    return [F._backward_CTCLoss(ograds[0], outs[1], **p)] + [None] * (n - 1)


register(OpDef(
    "CTCLoss", _ctc_forward, _ctc_infer_shape, params=_CTC_PARAMS, inputs=_ctc_inputs,
    outputs=("output0",), num_hidden_outputs=1, infer_type=_ctc_infer_type,
    gradient=_ctc_gradient, no_grad_inputs=("label", "data_lengths", "label_lengths"),
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    doc="Connectionist Temporal Classification Loss.\n\n"
        "``data`` ``(seq_len, batch, alphabet)`` holds unnormalized scores (softmax is applied\n"
        "inside); ``label`` ``(batch, max_label_len)`` holds the label sequences, padded with 0\n"
        "(``blank_label='first'``: blank is class 0) or -1 (``'last'``: blank is the last\n"
        "class), unless ``label_lengths`` gives their lengths; ``data_lengths`` the sequence\n"
        "lengths. The output ``(batch,)`` is each sequence's negative log-likelihood."))
register(OpDef(
    "_backward_CTCLoss", lambda p, ins, oc: ins[0].reshape(1, -1, 1) * ins[1],
    lambda p, ins, outs: (ins, [ins[1]]), params=_CTC_PARAMS, inputs=("out_grad", "grad"),
    infer_type=lambda p, ins, outs: (ins, [ins[1]]), public=False,
    doc="Gradient of CTCLoss: the saved gradient scaled per sequence by the head gradient."))
