"""Optimizer update operators (``sgd_update``, ``adam_update``, ...) as MXNet 1.9.1 defines
them, with the multi-tensor helpers (``multi_sum_sq``, ``multi_lars``, ``reset_arrays``) and the
operators behind ``mx.nd.contrib``'s AdamW and multi-tensor LAMB. (AMP's ``all_finite`` and
casts are in ``amp.py``.)

How they sit in the op table: MXNet's update operators take their optimizer states as inputs
that the kernel mutates (NNVM's ``FMutateInputs``), and NNVM lists mutated inputs of a symbol as
*auxiliary states* (as BatchNorm's moving statistics). Here each update op is one ``OpDef``
whose read-only inputs are ``inputs`` (``weight``, ``grad``) and whose mutated states are
``aux`` with ``mutates_aux=True``: the forward updates those tensors in place, the engine
orders the call as a write of them, and ``mx.nd.sgd_mom_update(w, g, mom, lr=.1, out=w)``
takes them positionally or by name as MXNet does. The single output is the new weight, which
callers write back with ``out=weight``. The mixed-precision forms also list ``weight32`` (the
float32 master copy) as a state; in ``mp_lamb_update_phase1`` it is only read (a state there
only to keep MXNet's input order), and ``mp_lamb_update_phase2`` neither mutates it nor lists it
as a state, as MXNet 1.9.1. Update ops have no gradient (as in MXNet).

Scalar parameters are MXNet ``float``s: they are rounded to single precision and combined in
single precision, as MXNet's kernels do. The tensor arithmetic is ``optimizer_kernels``, shared
with ``mx.optimizer``'s rules (``neomx/optimizer/kernels.py``, which combine their scalars in
double instead and differ in a few orders: see there).
"""
from __future__ import annotations

import numpy as np
import torch

from . import optimizer_kernels as _K
from .registry import OpDef, Param, Params, TypeInferError, assign_shape, register, same_shape, same_type

_F = np.float32


def _p32(p, *names):
    return [_F(p[n]) for n in names]


def _bound(c):
    """A clip parameter as the shared kernels take it: float32, or None (negative: no clip)."""
    return float(_F(c)) if c >= 0 else None


def _rescale_clip(g, p, clip_name="clip_gradient"):
    """clip(rescale_grad * grad) (no clipping when the bound is negative)."""
    return _K.rescaled(g, float(_F(p.rescale_grad)), _bound(p[clip_name]))


def _clip(x, c):
    """clip(x, c) in place on the new tensor ``x`` (no clipping when ``c`` is negative)."""
    return _K.clip_(x, _bound(c))


def _grad_wd(g, w, p, clip_name="clip_gradient"):
    """clip(rescale_grad * grad + wd * weight)."""
    return _K.grad_wd(g, w, float(_F(p.rescale_grad)), float(_F(p.wd)), _bound(p[clip_name]))


def _params(*extra, lr=True, wd=True, clip="clip_gradient", lazy=False):
    out = [Param("lr", "float", doc="Learning rate")] if lr else []
    out += list(extra)
    if wd:
        out.append(Param("wd", "float", 0.0, "Weight decay augments the objective function with a "
                         "regularization term that penalizes large weights."))
    out.append(Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = rescale_grad*grad."))
    out.append(Param(clip, "float", -1.0, "Clip gradient to the range of [-clip_gradient, "
                     "clip_gradient]. If clip_gradient <= 0, gradient clipping is turned off."))
    if lazy:
        out.append(Param("lazy_update", "bool", True, "If true, lazy updates are applied if "
                         "gradient's stype is row_sparse (no effect on dense arrays)."))
    return tuple(out)


_MOMENTUM = Param("momentum", "float", 0.0, "The decay rate of momentum estimates at each epoch.")


def _mp_type(p, ins, outs):
    """weight and grad share one type (float16); the float32 states are float32."""
    n_lo = 2
    lo = next((t for t in list(ins[:n_lo]) + list(outs) if t is not None), None)
    f32 = np.dtype(np.float32)
    for i, t in enumerate(ins[n_lo:], n_lo):
        if t is not None and np.dtype(t) != f32:
            raise TypeInferError(f"Incompatible attr in node {{node}} at {i}-th input: expected "
                                 f"float32, got {np.dtype(t).name}")
    if lo is not None:
        for i, t in enumerate(ins[:n_lo]):
            if t is not None and np.dtype(t) != np.dtype(lo):
                raise TypeInferError(f"Incompatible attr in node {{node}} at {i}-th input: "
                                     f"expected {np.dtype(lo).name}, got {np.dtype(t).name}")
    ins = [lo] * n_lo + [f32] * (len(ins) - n_lo) if lo is not None else \
        list(ins[:n_lo]) + [f32] * (len(ins) - n_lo)
    return ins, [lo] * len(outs)


def _update_op(name, forward, params, states, mp=False, doc=""):
    register(OpDef(name, forward, same_shape, params=params, inputs=("weight", "grad"),
                   aux=tuple(states) + (("weight32",) if mp else ()), mutates_aux=True,
                   infer_type=_mp_type if mp else same_type, doc=doc))


# --- SGD, momentum, Nesterov ---------------------------------------------------------------------
def _sgd_step(w, g, p):
    lr, wd = _p32(p, "lr", "wd")
    # (mx.optimizer's SGD: g * (lr * rescale) without clipping, see neomx/optimizer/kernels.py)
    return _K.decayed(w, float(_F(1) - lr * wd), _rescale_clip(g, p) * float(lr))


def _sgd_mom_step(w, g, mom, p):
    """mom = momentum*mom - lr*wd*w - lr*clip(rescale*g) (in place); returns w + mom."""
    lr, wd, m = _p32(p, "lr", "wd", "momentum")
    _K.momentum_(mom, w, float(m), float(lr * wd), _rescale_clip(g, p) * float(lr))
    return w + mom


def _nag_step(w, g, mom, p):
    """Nesterov momentum as MXNet 1.9.1's kernel computes it when called with ``out=weight``
    (as its optimizers do): with ``G = clip(rescale*g) + wd*w``, the new weight is
    ``w + momentum*(momentum*mom - lr*G) - lr*G``, then ``mom = momentum*mom - lr*(clip(
    rescale*g) + wd*new_weight)`` -- the kernel reads the weight after writing it (aliasing).
    (mx.optimizer's NAG computes the same update in another float32 order, kept separately in
    neomx/optimizer/kernels.py ``nag_mom``.)"""
    lr, wd, m = _p32(p, "lr", "wd", "momentum")
    gr = _rescale_clip(g, p)
    mom.mul_(float(m))
    new = w + mom * float(m) - (gr + w * float(wd)) * float((m + _F(1)) * lr)
    mom.sub_((gr + new * float(wd)) * float(lr))
    return new


_update_op("sgd_update", lambda p, ins, oc: _sgd_step(ins[0], ins[1], p), _params(lazy=True), (),
           doc="SGD: ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``.")
_update_op("sgd_mom_update", lambda p, ins, oc: _sgd_mom_step(*ins, p),
           _params(_MOMENTUM, lazy=True), ("mom",),
           doc="SGD with momentum: ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; "
               "``weight += mom``. ``mom`` is updated in place.")
_update_op("nag_mom_update", lambda p, ins, oc: _nag_step(*ins, p), _params(_MOMENTUM), ("mom",),
           doc="Nesterov momentum (MXNet's form): ``mom = momentum*mom - lr*g``, ``weight += "
               "momentum*mom - lr*g`` with ``g = clip(rescale_grad*grad) + wd*weight``. ``mom`` "
               "is updated in place; its weight decay term reads the new weight, as MXNet's "
               "kernel does when called with ``out=weight``.")


def _mp(step):
    """The mixed-precision form of an update: the step runs on the float32 master weight (the
    last state, updated in place) with a float32 gradient; the result is cast to weight's type."""
    def forward(p, ins, oc):
        w, g, *states = ins
        w32 = states[-1]
        w32.copy_(step(w32, g.float(), *states[:-1], p))
        return w32.to(w.dtype)
    return forward


_update_op("mp_sgd_update", _mp(_sgd_step), _params(lazy=True), (), mp=True,
           doc="``sgd_update`` on the float32 master weight ``weight32`` (updated in place).")
_update_op("mp_sgd_mom_update", _mp(_sgd_mom_step), _params(_MOMENTUM, lazy=True), ("mom",),
           mp=True, doc="``sgd_mom_update`` on the float32 master weight ``weight32``.")
_update_op("mp_nag_mom_update", _mp(_nag_step), _params(_MOMENTUM), ("mom",), mp=True,
           doc="``nag_mom_update`` on the float32 master weight ``weight32``.")


# --- Adam, RMSProp, FTRL, FTML ---------------------------------------------------------------------
def _adam(p, ins, oc):
    w, g, mean, var = ins
    lr, b1, b2, eps = _p32(p, "lr", "beta1", "beta2", "epsilon")
    return _K.adam(w, _grad_wd(g, w, p), mean, var, float(lr), float(b1), float(b2),
                   float(_F(1) - b1), float(_F(1) - b2), float(eps))


_update_op("adam_update", _adam, _params(
    Param("beta1", "float", 0.9, "The decay rate for the 1st moment estimates."),
    Param("beta2", "float", 0.999, "The decay rate for the 2nd moment estimates."),
    Param("epsilon", "float", 1e-8, "A small constant for numerical stability."), lazy=True),
    ("mean", "var"),
    doc="Adam without bias correction (the optimizer folds it into ``lr``): ``g = clip("
        "rescale_grad*grad + wd*weight)``, ``mean = beta1*mean + (1-beta1)*g``, ``var = beta2*var "
        "+ (1-beta2)*g^2``, ``weight -= lr * mean / (sqrt(var) + epsilon)``.")

_GAMMA1 = Param("gamma1", "float", 0.95, "The decay rate of the running mean of squared gradients.")
_EPS = Param("epsilon", "float", 1e-8, "A small constant for numerical stability.")
_CLIP_W = Param("clip_weights", "float", -1.0, "Clip weights to the range of [-clip_weights, "
                "clip_weights]. If clip_weights <= 0, weight clipping is turned off.")


# (mx.optimizer's RMSProp has 1 - gamma1 in double and (g / sqrt(n + eps)) * lr, kept
# separately in neomx/optimizer/kernels.py; here float32 1 - gamma1 and (g * lr) / sqrt(n + eps))
def _rmsprop(p, ins, oc):
    w, g, n = ins
    lr, g1, eps = _p32(p, "lr", "gamma1", "epsilon")
    gr = _grad_wd(g, w, p)
    _K.ema_sq_(n, gr, float(g1), float(_F(1) - g1))
    return _clip(w - gr * float(lr) / torch.sqrt(n + float(eps)), p.clip_weights)


def _rmspropalex(p, ins, oc):
    w, g, n, gbar, delta = ins
    lr, g1, g2, eps = _p32(p, "lr", "gamma1", "gamma2", "epsilon")
    gr = _grad_wd(g, w, p)
    _K.ema_sq_(n, gr, float(g1), float(_F(1) - g1))
    _K.ema_(gbar, gr, float(g1), float(_F(1) - g1))
    delta.mul_(float(g2)).sub_(gr * float(lr) / torch.sqrt(n - gbar * gbar + float(eps)))
    return _clip(w + delta, p.clip_weights)


_update_op("rmsprop_update", _rmsprop, _params(_GAMMA1, _EPS) + (_CLIP_W,), ("n",),
           doc="RMSProp (Tieleman & Hinton): ``n = gamma1*n + (1-gamma1)*g^2``, ``weight -= lr * g "
               "/ sqrt(n + epsilon)`` with ``g = clip(rescale_grad*grad + wd*weight)``.")
_update_op("rmspropalex_update", _rmspropalex, _params(
    _GAMMA1, Param("gamma2", "float", 0.9, "The decay rate of the momentum."), _EPS) + (_CLIP_W,),
    ("n", "g", "delta"),
    doc="Centered RMSProp (Graves 2013): running ``n`` and ``g`` of the gradient, ``delta = "
        "gamma2*delta - lr*grad / sqrt(n - g^2 + epsilon)``, ``weight += delta``.")


def _ftrl(p, ins, oc):
    w, g, z, n = ins
    lr, wd, l1, beta = _p32(p, "lr", "wd", "lamda1", "beta")
    return _K.ftrl(w, _rescale_clip(g, p), z, n, float(lr), float(wd), float(l1), float(beta))


_update_op("ftrl_update", _ftrl, _params(
    Param("lamda1", "float", 0.01, "The L1 regularization coefficient."),
    Param("beta", "float", 1.0, "Per-Coordinate Learning Rate beta.")), ("z", "n"),
    doc="FTRL-proximal: ``z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr``, ``n += g^2``, "
        "``weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where ``|z| > lamda1``.")


def _ftml(p, ins, oc):
    w, g, d, v, z = ins
    lr, b1, b2 = _p32(p, "lr", "beta1", "beta2")
    t = _F(p.t)
    return _K.ftml(w, _grad_wd(g, w, p, "clip_grad"), d, v, z, float(b1), float(b2),
                   float(_F(1) - b1), float(_F(1) - b2), float(_F(1) - b2 ** t), float(p.epsilon),
                   float((_F(1) - b1 ** t) / lr))


_update_op("ftml_update", _ftml, (
    Param("lr", "float", doc="Learning rate."),
    Param("beta1", "float", 0.6, "Generally close to 0.5."),
    Param("beta2", "float", 0.999, "Generally close to 1."),
    Param("epsilon", "float", 1e-8, "Epsilon to prevent div 0."),
    Param("t", "int", doc="Number of update."),
    Param("wd", "float", 0.0, "Weight decay augments the objective function with a "
          "regularization term that penalizes large weights."),
    Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = rescale_grad*grad."),
    Param("clip_grad", "float", -1.0, "Clip gradient to the range of [-clip_gradient, "
          "clip_gradient]. If clip_gradient <= 0, gradient clipping is turned off.")),
    ("d", "v", "z"),
    doc="FTML (Zheng & Kwok 2017), step ``t``: states ``d``, ``v``, ``z`` updated in place.")


# --- sign methods ---------------------------------------------------------------------------------
def _signsgd(p, ins, oc):
    w, g = ins
    lr, wd = _p32(p, "lr", "wd")
    return _K.decayed(w, float(_F(1) - lr * wd), torch.sign(g) * float(lr))


def _signum(p, ins, oc):
    w, g, mom = ins
    lr, wd, m, wd_lh = _p32(p, "lr", "wd", "momentum", "wd_lh")
    one_m = float(_F(1) - m)
    _K.momentum_(mom, w, float(m), one_m * float(wd), _rescale_clip(g, p) * one_m)
    return _K.signum_weight(w, mom, float(_F(1) - lr * wd_lh), float(lr))


_update_op("signsgd_update", _signsgd, _params(), (),
           doc="signSGD: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``.")
_update_op("signum_update", _signum, _params(_MOMENTUM) + (
    Param("wd_lh", "float", 0.0, "The amount of weight decay that does not go into gradient/"
          "momentum calculations otherwise do weight decay algorithmically only."),), ("mom",),
    doc="Signum: ``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad))``, "
        "``weight = (1 - lr*wd_lh) * weight + lr * sign(mom)``.")


# --- LAMB ----------------------------------------------------------------------------------------
def _lamb1_step(w, g, mean, var, p):
    b1, b2, eps, wd = _p32(p, "beta1", "beta2", "epsilon", "wd")
    gr = _rescale_clip(g, p)
    _K.ema_(mean, gr, float(b1), float(_F(1) - b1))
    _K.adam_var_(var, gr, float(b2), float(_F(1) - b2))  # (MXNet: (1-b2) * g * g)
    m, v = mean, var
    if p.bias_correction:
        m = mean / float(_F(1) - b1 ** _F(p.t))
        v = var / float(_F(1) - b2 ** _F(p.t))
    return m / (torch.sqrt(v) + float(eps)) + w * float(wd)


_LAMB1_PARAMS = (
    Param("beta1", "float", 0.9, "The decay rate for the 1st moment estimates."),
    Param("beta2", "float", 0.999, "The decay rate for the 2nd moment estimates."),
    Param("epsilon", "float", 1e-6, "A small constant for numerical stability."),
    Param("t", "int", doc="Index update count."),
    Param("bias_correction", "bool", True, "Whether to use bias correction."),
    Param("wd", "float", doc="Weight decay augments the objective function with a regularization "
          "term that penalizes large weights."),
    Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = rescale_grad*grad."),
    Param("clip_gradient", "float", -1.0, "Clip gradient to the range of [-clip_gradient, "
          "clip_gradient]. If clip_gradient <= 0, gradient clipping is turned off."))
_update_op("lamb_update_phase1", lambda p, ins, oc: _lamb1_step(*ins, p), _LAMB1_PARAMS,
           ("mean", "var"),
           doc="LAMB phase 1: updates ``mean``/``var`` in place and returns the update direction "
               "``g = mean_hat / (sqrt(var_hat) + epsilon) + wd*weight``.")


def _mp_lamb1(p, ins, oc):
    w, g, mean, var, w32 = ins
    return _lamb1_step(w32, g.float(), mean, var, p)


register(OpDef("mp_lamb_update_phase1", _mp_lamb1, same_shape, params=_LAMB1_PARAMS,
               inputs=("weight", "grad"), aux=("mean", "var", "weight32"), mutates_aux=True,
               infer_type=lambda p, ins, outs: (_mp_type(p, ins, [None])[0], [np.dtype(np.float32)]),
               doc="``lamb_update_phase1`` on the float32 master weight ``weight32`` (read only; "
                   "a state here so the inputs keep MXNet's order). The result is float32."))


def _lamb2_step(w, g, r1, r2, p):
    lr = float(_F(p.lr))
    r1 = r1.reshape(())
    if p.lower_bound >= 0:
        r1 = torch.clamp(r1, min=float(_F(p.lower_bound)))
    if p.upper_bound >= 0:
        r1 = torch.clamp(r1, max=float(_F(p.upper_bound)))
    r2 = r2.reshape(())
    ratio = torch.where((r1 == 0) | (r2 == 0), torch.ones_like(r1), r1 / r2)
    return w - g * (ratio * lr)


def _lamb2_shape(p, ins, outs):
    ins = list(ins)
    known = ins[0] if ins[0] is not None else (outs[0] if outs[0] is not None else ins[1])
    if known is not None:
        for i in (0, 1):
            assign_shape(ins, i, known)
    for i in (2, 3):
        assign_shape(ins, i, (1,))
    n = 5 if len(ins) == 5 else 4
    if n == 5 and known is not None:
        assign_shape(ins, 4, known)
    return ins, [known]


_LAMB2_PARAMS = (
    Param("lr", "float", doc="Learning rate"),
    Param("lower_bound", "float", -1.0, "Lower limit of norm of weight. If lower_bound <= 0, "
          "Lower limit is not set"),
    Param("upper_bound", "float", -1.0, "Upper limit of norm of weight. If upper_bound <= 0, "
          "Upper limit is not set"))
register(OpDef("lamb_update_phase2", lambda p, ins, oc: _lamb2_step(*ins, p), _lamb2_shape,
               params=_LAMB2_PARAMS, inputs=("weight", "g", "r1", "r2"),
               doc="LAMB phase 2: ``weight -= lr * (r1 / r2) * g`` (``r1 = ||weight||`` clipped "
                   "to the bounds, ``r2 = ||g||``; ratio 1 where either is 0)."))


def _mp_lamb2(p, ins, oc):
    w, g, r1, r2, w32 = ins
    return _lamb2_step(w32, g, r1, r2, p).to(w.dtype)


def _mp_lamb2_type(p, ins, outs):
    lo = ins[0] if ins[0] is not None else outs[0]
    f32 = np.dtype(np.float32)
    return [lo, f32, f32, f32, f32], [lo]


register(OpDef("mp_lamb_update_phase2", _mp_lamb2, _lamb2_shape, params=_LAMB2_PARAMS,
               inputs=("weight", "g", "r1", "r2", "weight32"), infer_type=_mp_lamb2_type,
               doc="``lamb_update_phase2`` from the float32 master weight ``weight32``, cast to "
                   "weight's type. As in MXNet 1.9.1, ``weight32`` itself is left unchanged (it is "
                   "an ordinary input, not a mutated state)."))


# --- multi-tensor helpers --------------------------------------------------------------------------
def _arrays(p):
    return [f"array_{i}" for i in range(p.num_arrays)]


def _fixed_out(shape_fn):
    def infer(p, ins, outs):
        return ins, [shape_fn(p)]
    return infer


def _float_out(p, ins, outs):
    return ins, [np.dtype(np.float32)]


register(OpDef(
    "multi_sum_sq",
    lambda p, ins, oc: torch.stack([t.float().square().sum() for t in ins]),
    _fixed_out(lambda p: (p.num_arrays,)), infer_type=_float_out,
    params=(Param("num_arrays", "int", doc="number of input arrays."),), inputs=_arrays,
    key_var_num_args="num_arrays",
    doc="The sum of squares of each input array, as one float32 array of ``num_arrays`` values."))


def _multi_lars(p, ins, oc):
    lrs, wsq, gsq, wds = ins
    eta, eps, rg = _p32(p, "eta", "eps", "rescale_grad")
    w_norm, g_norm = torch.sqrt(wsq), torch.sqrt(gsq) * float(rg)
    lars = w_norm * float(eta) / (g_norm + wds * w_norm + float(eps))
    return torch.where((wsq > 0) & (gsq > 0), lrs * lars, lrs)


register(OpDef(
    "multi_lars", _multi_lars, same_shape, inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
    params=(Param("eta", "float", doc="LARS eta"), Param("eps", "float", doc="LARS eps"),
            Param("rescale_grad", "float", 1.0, "Gradient rescaling factor")),
    doc="LARS learning rates: ``lrs * eta * |w| / (|g| + wds * |w| + eps)`` where both sums of "
        "squares are positive, else ``lrs`` (``|g|`` scaled by ``rescale_grad``)."))


def _reset(p, ins, oc):
    for t in ins:
        t.zero_()
    return ()


register(OpDef("reset_arrays", _reset, lambda p, ins, outs: (ins, outs), inputs=(), aux=_arrays,
               outputs=(), mutates_aux=True, key_var_num_args="num_arrays",
               infer_type=lambda p, ins, outs: (ins, outs),
               params=(Param("num_arrays", "int", doc="number of input arrays."),),
               doc="Sets every input array to zero in place (no outputs)."))


# --- multi-tensor SGD: num_weights groups in one call ----------------------------------------------
# MXNet interleaves each weight's arrays in the call (weight_0, grad_0, mom_0, weight_1, ...) and
# mutates the states among them. The table keeps mutated states last (aux), so the forms with
# states declare *every* input as a state: their call order is then MXNet's, and the engine
# orders the call as a write of all of them (weights and gradients are only read). The forms
# without states (multi_sgd_update, preloaded_multi_sgd_update) have plain inputs. Outputs are
# the new weights (``out=[weight_0, weight_1, ...]``).
def _floats(s, name):
    """A 'tuple of <float>' parameter (given as a tuple or as MXNet's string form)."""
    import ast
    v = ast.literal_eval(s) if isinstance(s, str) else s
    v = (v,) if isinstance(v, (int, float)) else tuple(v)
    return [float(_F(x)) for x in v]


def _multi_names(kinds, preloaded):
    def names(p):
        out = [f"{k}_{i}" for i in range(p.num_weights) for k in kinds]
        return out + (["lrs", "wds"] if preloaded else [])
    return names


def _multi_outputs(p):
    return ["output"] if p.num_weights == 1 else [f"output{i}" for i in range(p.num_weights)]


def _multi_shape(kinds, preloaded):
    k = len(kinds)

    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for i in range(p.num_weights):
            group = ins[i * k:(i + 1) * k] + [outs[i]]
            known = next((s for s in group if s is not None), None)
            if known is not None:
                for j in range(k):
                    assign_shape(ins, i * k + j, known)
                outs[i] = known
        if preloaded:
            for j in (-2, -1):
                assign_shape(ins, len(ins) + j, (p.num_weights,))
        return ins, outs
    return infer


def _multi_type(kinds, preloaded, mp):
    k = len(kinds)

    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        f32 = np.dtype(np.float32)
        for i in range(p.num_weights):
            lo = ins[i * k] if ins[i * k] is not None else ins[i * k + 1]
            for j, kind in enumerate(kinds):
                want = f32 if mp and kind in ("mom", "mean", "var", "weight32") else lo
                have = ins[i * k + j]
                if have is not None and want is not None and np.dtype(have) != np.dtype(want):
                    raise TypeInferError(f"Incompatible attr in node {{node}} at {i * k + j}-th "
                                         f"input: expected {np.dtype(want).name}, got "
                                         f"{np.dtype(have).name}")
                ins[i * k + j] = want if want is not None else have
            outs[i] = lo
        if preloaded:
            ins[-2:] = [f32, f32]
        return ins, outs
    return infer


def _multi_forward(kinds, preloaded, mp, momentum):
    k = len(kinds)

    def forward(p, ins, oc):
        n = p.num_weights
        if preloaded:
            lrs, wds = ins[-2].tolist(), ins[-1].tolist()
        else:
            lrs, wds = _floats(p.lrs, "lrs"), _floats(p.wds, "wds")
        res = []
        for i in range(n):
            group = ins[i * k:(i + 1) * k]
            q = Params(p, lr=lrs[i], wd=wds[i])
            w, g = group[0], group[1]
            states = group[2:]
            if mp:
                w32 = states[-1]
                new = (_sgd_mom_step(w32, g.float(), states[0], q) if momentum
                       else _sgd_step(w32, g.float(), q))
                w32.copy_(new)
                res.append(new.to(w.dtype))
            else:
                res.append(_sgd_mom_step(w, g, states[0], q) if momentum else _sgd_step(w, g, q))
        return res[0] if n == 1 else tuple(res)
    return forward


_NUM_WEIGHTS = Param("num_weights", "int", 1, "Number of updated weights.")
_LRS = Param("lrs", "str", doc="Learning rates (tuple of <float>).")
_WDS = Param("wds", "str", doc="Weight decay augments the objective function with a "
             "regularization term that penalizes large weights (tuple of <float>).")
for _pre in (False, True):
    for _mp_form in (False, True):
        for _mom in (False, True):
            _kinds = ("weight", "grad") + (("mom",) if _mom else ()) + (("weight32",) if _mp_form else ())
            _stateful = len(_kinds) > 2
            _name = ("preloaded_" if _pre else "") + "multi_" + ("mp_" if _mp_form else "") + \
                ("sgd_mom_update" if _mom else "sgd_update")
            _names = _multi_names(_kinds, _pre)
            _prm = (() if _pre else (_LRS, _WDS)) + ((_MOMENTUM,) if _mom else ()) + (
                Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = rescale_grad*grad."),
                Param("clip_gradient", "float", -1.0, "Clip gradient to the range of "
                      "[-clip_gradient, clip_gradient]. If clip_gradient <= 0, gradient clipping "
                      "is turned off."),
                _NUM_WEIGHTS)
            register(OpDef(
                _name, _multi_forward(_kinds, _pre, _mp_form, _mom),
                _multi_shape(_kinds, _pre), params=_prm,
                inputs=() if _stateful else _names, aux=_names if _stateful else (),
                outputs=_multi_outputs, mutates_aux=_stateful,
                infer_type=_multi_type(_kinds, _pre, _mp_form),
                doc=f"``{'mp_' if _mp_form else ''}{'sgd_mom_update' if _mom else 'sgd_update'}`` "
                    f"of ``num_weights`` weights in one call; inputs "
                    f"({', '.join(k + '_i' for k in _kinds)}) for each weight"
                    + (", then the arrays ``lrs`` and ``wds``" if _pre else "")
                    + (". Every input is declared a state (see the comment above)." if _stateful
                       else ".")))


# --- AdamW (mx.nd.contrib.adamw_update / mp_adamw_update wrap these) -----------------------------
# MXNet's inputs are (weight, grad, mean, var[, weight32], rescale_grad) with the states mutated;
# here rescale_grad is the third input, before the states (aux come last in the table). MXNet's
# contrib wrappers pass them by name, and a positional call in MXNet's order fails the shape
# check (rescale_grad has shape (1,)) instead of binding wrongly.
def _adamw_step(w, g, mean, var, rescale, p):
    """Returns the new weight, or None when rescale_grad is 0 or not finite (MXNet then skips
    the update: weight and states unchanged)."""
    r = float(rescale.reshape(-1)[0])
    if r == 0 or r != r or abs(r) == float("inf"):
        return None
    lr, wd, b1, b2, eps, eta = _p32(p, "lr", "wd", "beta1", "beta2", "epsilon", "eta")
    gr = _clip(g * float(_F(r)), p.clip_gradient)
    _K.ema_(mean, gr, float(b1), float(_F(1) - b1))
    _K.ema_sq_(var, gr, float(b2), float(_F(1) - b2))  # (MXNet's AdamW: g * g * (1-b2))
    return w - (mean * float(lr) / (torch.sqrt(var) + float(eps)) + w * float(wd)) * float(eta)


def _adamw(p, ins, oc):
    w, g, rescale, mean, var = ins
    new = _adamw_step(w, g, mean, var, rescale, p)
    return w.clone() if new is None else new


def _mp_adamw(p, ins, oc):
    w, g, rescale, mean, var, w32 = ins
    new = _adamw_step(w32, g.float(), mean, var, rescale, p)
    if new is None:
        return w.clone()
    w32.copy_(new)
    return new.to(w.dtype)


_ADAMW_PARAMS = (
    Param("lr", "float", doc="Learning rate"),
    Param("beta1", "float", 0.9, "The decay rate for the 1st moment estimates."),
    Param("beta2", "float", 0.999, "The decay rate for the 2nd moment estimates."),
    Param("epsilon", "float", 1e-8, "A small constant for numerical stability."),
    Param("wd", "float", 0.0, "Weight decay augments the objective function with a "
          "regularization term that penalizes large weights."),
    Param("eta", "float", doc="Learning rate schedule multiplier"),
    Param("clip_gradient", "float", -1.0, "Clip gradient to the range of [-clip_gradient, "
          "clip_gradient]. If clip_gradient <= 0, gradient clipping is turned off."))


def _adamw_shape(p, ins, outs):
    ins = list(ins)
    known = next((s for i, s in enumerate(list(ins) + list(outs)) if s is not None and i != 2), None)
    if known is not None:
        for i in range(len(ins)):
            if i != 2:
                assign_shape(ins, i, known)
    assign_shape(ins, 2, (1,))
    return ins, [known]


def _adamw_type(mp):
    def infer(p, ins, outs):
        lo = ins[0] if ins[0] is not None else outs[0]
        f32 = np.float32
        return [lo, lo, f32] + [f32 if mp else lo] * (len(ins) - 3), [lo]
    return infer


register(OpDef("_adamw_update", _adamw, _adamw_shape, params=_ADAMW_PARAMS,
               inputs=("weight", "grad", "rescale_grad"), aux=("mean", "var"), mutates_aux=True,
               infer_type=_adamw_type(False),
               doc="AdamW (decoupled weight decay): ``weight -= eta * (lr * mean / (sqrt(var) + "
                   "epsilon) + wd * weight)`` after Adam's moment updates of ``clip(rescale_grad * "
                   "grad)``; no update when ``rescale_grad`` is 0 or not finite."))
register(OpDef("_mp_adamw_update", _mp_adamw, _adamw_shape, params=_ADAMW_PARAMS,
               inputs=("weight", "grad", "rescale_grad"), aux=("mean", "var", "weight32"),
               mutates_aux=True, infer_type=_adamw_type(True),
               doc="``_adamw_update`` on the float32 master weight ``weight32`` (updated in place)."))


def _multi_adamw_forward(mp):
    k = 5 if mp else 4

    def forward(p, ins, oc):
        n, rescale = p.num_weights, ins[-1]
        lrs, wds, etas = _floats(p.lrs, "lrs"), _floats(p.wds, "wds"), _floats(p.etas, "etas")
        res = []
        for i in range(n):
            w, g, mean, var, *w32 = ins[i * k:(i + 1) * k]
            q = Params(p, lr=lrs[i], wd=wds[i], eta=etas[i])
            new = _adamw_step(w32[0] if mp else w, g.float() if mp else g, mean, var, rescale, q)
            if new is None:
                res.append(w.clone())
                continue
            if mp:
                w32[0].copy_(new)
            res.append(new.to(w.dtype))
        return res[0] if n == 1 else tuple(res)
    return forward


def _multi_adamw_shape(mp):
    group = _multi_shape(("weight", "grad", "mean", "var") + (("weight32",) if mp else ()), False)

    def infer(p, ins, outs):
        ins, outs = group(p, list(ins[:-1]), outs)
        rest = [None]
        assign_shape(rest, 0, (1,))
        return list(ins) + rest, outs
    return infer


def _multi_adamw_type(mp):
    group = _multi_type(("weight", "grad", "mean", "var") + (("weight32",) if mp else ()), False, mp)

    def infer(p, ins, outs):
        ins, outs = group(p, list(ins[:-1]), outs)
        return list(ins) + [np.float32], outs
    return infer


for _mp_form in (False, True):
    _kinds = ("weight", "grad", "mean", "var") + (("weight32",) if _mp_form else ())
    _per = _multi_names(_kinds, False)
    register(OpDef(
        "_multi_mp_adamw_update" if _mp_form else "_multi_adamw_update",
        _multi_adamw_forward(_mp_form), _multi_adamw_shape(_mp_form),
        infer_type=_multi_adamw_type(_mp_form),
        params=(_LRS,
                Param("beta1", "float", 0.9, "The decay rate for the 1st moment estimates."),
                Param("beta2", "float", 0.999, "The decay rate for the 2nd moment estimates."),
                Param("epsilon", "float", 1e-8, "A small constant for numerical stability."),
                _WDS,
                Param("etas", "str", doc="Learning rates schedule multiplier (tuple of <float>)."),
                Param("clip_gradient", "float", -1.0, "Clip gradient to the range of "
                      "[-clip_gradient, clip_gradient]. If clip_gradient <= 0, gradient clipping "
                      "is turned off."),
                _NUM_WEIGHTS),
        inputs=(), aux=lambda p, _per=_per: _per(p) + ["rescale_grad"], outputs=_multi_outputs,
        mutates_aux=True,
        doc=f"``{'_mp' if _mp_form else ''}_adamw_update`` of ``num_weights`` weights in one call "
            f"(what ``mx.nd.contrib.multi{'_mp' if _mp_form else ''}_adamw_update`` calls): inputs "
            f"({', '.join(k + '_i' for k in _kinds)}) for each weight, then ``rescale_grad``; "
            "every input is declared a state (see the multi-tensor SGD comment)."))


# --- multi-tensor LAMB (mx.nd.contrib.multi_lamb_update calls it) ---------------------------------
def _multi_lamb(p, ins, oc):
    n, res = p.num_tensors, []
    lrs, wds = _floats(p.learning_rates, "learning_rates"), _floats(p.wds, "wds")
    for i in range(n):
        w, g, mean, var = ins[i * 4:(i + 1) * 4]
        q = Params(p, wd=wds[i], t=p.step_count[i], lr=lrs[i])
        d = _lamb1_step(w, g, mean, var, q)
        r1 = torch.linalg.vector_norm(w.float()).reshape(1)
        r2 = torch.linalg.vector_norm(d.float()).reshape(1)
        res.append(_lamb2_step(w, d, r1, r2, q).to(w.dtype))
    return res[0] if n == 1 else tuple(res)


def _lamb_names(p):
    return [f"{k}_{i}" for i in range(p.num_tensors) for k in ("weight", "grad", "mean", "var")]


def _lamb_outputs(p):
    return ["output"] if p.num_tensors == 1 else [f"output{i}" for i in range(p.num_tensors)]


def _multi_lamb_shape(p, ins, outs):
    return _multi_shape(("weight", "grad", "mean", "var"), False)(
        Params(p, num_weights=p.num_tensors), ins, outs)


def _multi_lamb_type(p, ins, outs):
    return _multi_type(("weight", "grad", "mean", "var"), False, False)(
        Params(p, num_weights=p.num_tensors), ins, outs)


register(OpDef(
    "_multi_lamb_update", _multi_lamb, _multi_lamb_shape, infer_type=_multi_lamb_type,
    params=(Param("learning_rates", "str", doc="List of learning rates (tuple of <float>)"),
            Param("beta1", "float", 0.9, "Exponential decay rate for the first moment estimates."),
            Param("beta2", "float", 0.999, "Exponential decay rate for the second moment estimates."),
            Param("epsilon", "float", 1e-6, "Small value to avoid division by 0."),
            Param("wds", "str", doc="List of Weight decays (tuple of <float>)."),
            Param("rescale_grad", "float", 1.0, "Gradient rescaling factor"),
            Param("lower_bound", "float", -1.0, "Lower limit of norm of weight. If lower_bound <= "
                  "0, Lower limit is not set"),
            Param("upper_bound", "float", -1.0, "Upper limit of norm of weight. If upper_bound <= "
                  "0, Upper limit is not set"),
            Param("clip_gradient", "float", -1.0, "Clip gradient to the range of [-clip_gradient, "
                  "clip_gradient]. If clip_gradient <= 0, gradient clipping is turned off."),
            Param("bias_correction", "bool", True, "Whether to use bias correction."),
            Param("step_count", "shape", doc="Step count for each tensor"),
            Param("num_tensors", "int", 1, "Number of tensors")),
    inputs=(), aux=_lamb_names, outputs=_lamb_outputs, mutates_aux=True,
    doc="LAMB (phase 1, the norms, phase 2) of ``num_tensors`` weights in one call: inputs "
        "(weight_i, grad_i, mean_i, var_i) per weight, every one declared a state (see the "
        "multi-tensor SGD comment); ``mean_i``/``var_i`` are updated in place."))
