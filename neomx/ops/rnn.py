"""The fused recurrent operator ``RNN`` (modes rnn_relu, rnn_tanh, lstm, gru) as MXNet 1.9.1's
(``src/operator/rnn.cc``, ``rnn-inl.h``).

``parameters`` is one flat vector in MXNet's layout: first every weight, per layer and per
direction the i2h weight ``(G*H, input)``, the h2h weight ``(G*H, P)`` and, with
``projection_size``, the h2r weight ``(P, H)``; then every bias, per layer and direction i2h
``(G*H,)`` and h2h ``(G*H,)``. ``G`` is 1, 4 (gates i, f, g, o) or 3 (r, z, n: cuDNN's GRU,
reset gate applied to ``W_hn h + b_hn``), ``H`` is ``state_size``, ``P`` the projection size
(else ``H``) and a layer's input is ``C`` for the first layer, ``D*P`` after it. These are
torch's gate orders and formulations, so the kernels are torch's fused ``_VF.lstm/gru/rnn_*``
over views of the flat vector; clipped LSTM states (and projection_size == state_size, which
torch cannot tell from no projection) run a plain per-step loop over the same views.

Where MXNet's CPU build and its cuDNN build differ, neomx follows the documented (cuDNN)
behaviour on every device: ``use_sequence_length`` zeroes the outputs past each sequence's
length and takes the states at its last valid step (the reverse direction starts there), and
``lstm_state_clip_min/max`` clip the cell state at every step (MXNet 1.9.1's CPU kernels ignore
both). A training forward runs under torch autograd and keeps its graph (the last few, keyed
by the output's storage), which the backward differentiates; a backward without one replays the
forward under torch autograd, and with dropout (``p`` > 0 in training) the forward's random seed
is kept, keyed by its output, so the replay draws the same masks.
"""
from __future__ import annotations

import math
import warnings
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as TF
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from ..base import MXNetError, dtype_code
from .registry import OpDef, Param, ShapeError, TypeInferError, register
from .replay import replay_vjp

__all__ = ["rnn_param_size", "unpack_params"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}

_PARAMS = (
    Param("state_size", "int", doc="size of the state for each layer"),
    Param("num_layers", "int", doc="number of stacked layers"),
    Param("bidirectional", "bool", False, "whether to use bidirectional recurrent layers"),
    Param("mode", "str", doc="the type of RNN to compute", choices=tuple(_GATES)),
    Param("p", "float", 0.0, "drop rate of the dropout on the outputs of each RNN layer, except "
                             "the last layer."),
    Param("state_outputs", "bool", False, "Whether to have the states as symbol outputs."),
    Param("projection_size", "int", None, "size of project size", optional=True),
    Param("lstm_state_clip_min", "float", None, "Minimum clip value of LSTM states. This option "
          "must be used together with lstm_state_clip_max.", optional=True),
    Param("lstm_state_clip_max", "float", None, "Maximum clip value of LSTM states. This option "
          "must be used together with lstm_state_clip_min.", optional=True),
    Param("lstm_state_clip_nan", "bool", False, "Whether to stop NaN from propagating in state by "
          "clipping it to min/max. If clipping range is not specified, this option is ignored."),
    Param("use_sequence_length", "bool", False, "If set to true, this layer takes in an extra "
          "input parameter `sequence_length` to specify variable length sequence"),
)


# --- geometry -------------------------------------------------------------------------------------
def _dims(p):
    """(gates G, directions D, state size H, layer output size P)."""
    h = p.state_size
    return (_GATES[p.mode], 2 if p.bidirectional else 1, h,
            h if p.projection_size is None else p.projection_size)


def rnn_param_size(p, input_size: int) -> int:
    """Length of the flat parameter vector (MXNet's GetRnnParamSize)."""
    g, d, h, proj = _dims(p)
    size = h * d * g
    first = (input_size + proj + 2) * size
    other = (proj * d + proj + 2) * size
    total = first + (p.num_layers - 1) * other
    if p.projection_size is not None:
        total += proj * h * p.num_layers * d
    return total


def _piece_shapes(p, input_size: int):
    """The shapes of the flat vector's pieces, in its layout order."""
    g, d, h, proj = _dims(p)
    weights, biases = [], []
    for layer in range(p.num_layers):
        ni = input_size if layer == 0 else proj * d
        for _ in range(d):
            weights += [(g * h, ni), (g * h, proj)]
            if p.projection_size is not None:
                weights.append((proj, h))
            biases += [(g * h,), (g * h,)]
    return weights + biases


def _pieces(flat, shapes):
    """Views of ``flat``, one per shape, consecutive."""
    res, pos = [], 0
    for shape in shapes:
        n = math.prod(shape)
        res.append(flat[pos:pos + n].view(shape))
        pos += n
    return res


def unpack_params(p, flat, input_size: int, pieces=None):
    """Views of ``flat``, one list per layer and direction (layer-major) in torch's order:
    ``[w_ih, w_hh, b_ih, b_hh]`` plus ``w_hr`` with a projection. ``pieces``: the flat
    vector's pieces in layout order (``_piece_shapes``) to use instead of views of ``flat``."""
    _, d, _, _ = _dims(p)
    it = iter(_pieces(flat, _piece_shapes(p, input_size)) if pieces is None else pieces)
    weights = []
    for _ in range(p.num_layers * d):
        w = [next(it), next(it)]
        weights.append(w + [next(it)] if p.projection_size is not None else w)
    return [[w[0], w[1], next(it), next(it)] + w[2:] for w in weights]


# --- arity, shapes, types -------------------------------------------------------------------------
def _check(p):
    if not 0.0 <= p.p <= 1.0:
        raise MXNetError(f"value {p.p:g} for Parameter p exceed bound [0,1]\np: drop rate of the "
                         "dropout on the outputs of each RNN layer, except the last layer., in "
                         "operator RNN")


def _inputs(p):
    _check(p)
    names = ["data", "parameters", "state"]
    if p.mode == "lstm":
        names.append("state_cell")
    if p.use_sequence_length:
        names.append("sequence_length")
    return tuple(names)


def _outputs(p):
    if not p.state_outputs:
        return ("output",)
    return ("output", "state_output", "statecell_output")[:3 if p.mode == "lstm" else 2]


def _tshape(s) -> str:
    return "(" + ",".join(str(int(x)) for x in s) + ("," if len(s) == 1 else "") + ")"


def _assign(ins, i, want):
    """MXNet's SHAPE_ASSIGN_CHECK (0 = unknown dimension)."""
    have = ins[i]
    if have is not None and len(have):
        if len(have) != len(want) or any(a and b and a != b for a, b in zip(have, want)):
            given = ",".join(str(int(x)) for x in have)
            raise ShapeError(f"Shape inconsistent, Provided = [{given}], inferred shape="
                             f"{_tshape(want)}")
        want = tuple(a or b for a, b in zip(have, want))
    ins[i] = tuple(want)


def _infer_shape(p, ins, outs):
    _check(p)
    ins = list(ins)
    data = ins[0]
    if not data:
        return ins, outs
    if len(data) != 3:
        raise ShapeError(f"Check failed: dshape.ndim() == 3U ({len(data)} vs. 3) : Input data "
                         "should be rank-3 tensor of dim [sequence length, batch size, input size]")
    t, n, c = (int(x) for x in data)
    g, d, h, proj = _dims(p)
    _assign(ins, 2, (d * p.num_layers, n, proj))
    if p.mode == "lstm":
        _assign(ins, 3, (d * p.num_layers, n, h))
    if c:
        _assign(ins, 1, (rnn_param_size(p, c),))
    if p.use_sequence_length:
        _assign(ins, len(ins) - 1, (n,))
    res = [(t, n, d * proj)]
    if p.state_outputs:
        res.append((d * p.num_layers, n, proj))
        if p.mode == "lstm":
            res.append((d * p.num_layers, n, h))
    return ins, res


def _infer_type(p, ins, outs):
    dt = ins[0]
    if dt is None:
        return ins, outs
    res = list(ins)
    for i, name in enumerate(_inputs(p)):
        if res[i] is None:
            res[i] = dt
        elif name != "sequence_length" and np.dtype(res[i]) != np.dtype(dt):
            raise TypeInferError(
                f"Check failed: (*in_type)[i] == dtype ({dtype_code(res[i])} vs. "
                f"{dtype_code(dt)}) : This layer requires uniform type. Expected "
                f"'{np.dtype(dt).name}' v.s. given '{np.dtype(res[i]).name}' at '{name}'")
    return res, [dt] * len(_outputs(p))


# --- kernels --------------------------------------------------------------------------------------
def _clipped(p) -> bool:
    if p.mode != "lstm" or (p.lstm_state_clip_min is None and p.lstm_state_clip_max is None):
        return False
    if p.lstm_state_clip_min is None or p.lstm_state_clip_max is None:
        raise MXNetError("RNN: lstm_state_clip_min and lstm_state_clip_max must be given together")
    return True


def _lengths(lens, t):
    """Sequence lengths as int64 on the CPU (MXNet truncates float lengths), checked."""
    lens = lens.detach().to("cpu", torch.int64)
    if lens.numel() and (int(lens.min()) < 1 or int(lens.max()) > t):
        raise MXNetError(f"RNN: sequence_length must be in [1, {t}] (the data's sequence length), "
                         f"got {lens.tolist()}")
    return lens


def _fused(p, x, weights, hx, cx, lens, train):
    """torch's fused kernel: (out, hy, cy or None)."""
    flat = [w for ws in weights for w in ws]
    kernel = {"lstm": torch._VF.lstm, "gru": torch._VF.gru, "rnn_tanh": torch._VF.rnn_tanh,
              "rnn_relu": torch._VF.rnn_relu}[p.mode]
    lstm = p.mode == "lstm"
    dropout = float(p.p) if train else 0.0
    if lens is None:
        with warnings.catch_warnings():  # "LSTM with projections is not supported with oneDNN"
            warnings.simplefilter("ignore", UserWarning)
            res = kernel(x, (hx, cx) if lstm else hx, flat, True, p.num_layers, dropout, train,
                         p.bidirectional, False)
        return res[0], res[1], (res[2] if lstm else None)
    packed = pack_padded_sequence(x, _lengths(lens, x.shape[0]), enforce_sorted=False)
    order, unorder = packed.sorted_indices, packed.unsorted_indices
    h0 = hx.index_select(1, order)
    state = (h0, cx.index_select(1, order)) if lstm else h0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = kernel(packed.data, packed.batch_sizes, state, flat, True, p.num_layers, dropout,
                     train, p.bidirectional)
    out, _ = pad_packed_sequence(PackedSequence(res[0], packed.batch_sizes, order, unorder),
                                 total_length=x.shape[0])
    return (out, res[1].index_select(1, unorder),
            res[2].index_select(1, unorder) if lstm else None)


def _cell(p, gi, h, c, w_hh, b_hh, w_hr):
    """One step of one direction: gi = W_ih x + b_ih for this step."""
    gh = TF.linear(h, w_hh, b_hh)
    if p.mode == "rnn_tanh":
        return torch.tanh(gi + gh), None
    if p.mode == "rnn_relu":
        return torch.relu(gi + gh), None
    if p.mode == "gru":
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    i, f, g, o = (gi + gh).chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    if _clipped(p):
        lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
        if p.lstm_state_clip_nan:  # cuDNN's NOT_PROPAGATE_NAN: min(max(nan, lo), hi) = lo
            c = torch.where(torch.isnan(c), torch.full_like(c, lo), c)
        c = c.clamp(lo, hi)
    h = torch.sigmoid(o) * torch.tanh(c)
    return (h if w_hr is None else TF.linear(h, w_hr)), c


def _reverse(x, lens):
    """Reverse the time axis within each sequence's length (all of it without lengths)."""
    if lens is None:
        return x.flip(0)
    t = x.shape[0]
    steps = torch.arange(t, device=x.device)[:, None]
    lens = lens.to(x.device)[None, :]
    src = torch.where(steps < lens, lens - 1 - steps, steps)
    return torch.gather(x, 0, src[:, :, None].expand_as(x))


def _direction(p, xs, ws, h, c, valid):
    """Run one direction over time-major ``xs``: (outputs, last h, last c)."""
    gi = TF.linear(xs, ws[0], ws[2])
    w_hr = ws[4] if len(ws) > 4 else None
    ys = []
    for t in range(xs.shape[0]):
        h_new, c_new = _cell(p, gi[t], h, c, ws[1], ws[3], w_hr)
        if valid is None:
            h, c = h_new, c_new
            ys.append(h)
        else:
            m = valid[t]
            h = torch.where(m, h_new, h)
            c = None if c is None else torch.where(m, c_new, c)
            ys.append(h_new * m)
    return torch.stack(ys), h, c


def _looped(p, x, weights, hx, cx, lens, train):
    """The recurrence written out step by step (clipped states; projection_size == state_size)."""
    _, d, _, _ = _dims(p)
    valid = None
    if lens is not None:
        lens = _lengths(lens, x.shape[0]).to(x.device)
        valid = (torch.arange(x.shape[0], device=x.device)[:, None] < lens[None, :])[:, :, None]
    hy, cy, inp = [], [], x
    for layer in range(p.num_layers):
        outs = []
        for k in range(layer * d, layer * d + d):
            rev = k % d == 1
            xs = _reverse(inp, lens) if rev else inp
            v = _reverse(valid, lens) if rev and valid is not None else valid
            y, h, c = _direction(p, xs, weights[k], hx[k], None if cx is None else cx[k], v)
            outs.append(_reverse(y, lens) if rev else y)
            hy.append(h)
            cy.append(c)
        inp = torch.cat(outs, 2) if d == 2 else outs[0]
        if train and p.p > 0 and layer < p.num_layers - 1:
            inp = TF.dropout(inp, p.p, True)
    return inp, torch.stack(hy), (torch.stack(cy) if cx is not None else None)


def _compute(p, ins, train, pieces=None):
    """(out, hy[, cy]) from the op's inputs, differentiably (``pieces``: see unpack_params)."""
    x, flat, hx = ins[0], ins[1], ins[2]
    lstm = p.mode == "lstm"
    cx = ins[3] if lstm else None
    lens = ins[-1] if p.use_sequence_length else None
    if p.projection_size is not None and not lstm:
        raise MXNetError("RNN: projection is only supported for LSTM (mode='lstm')")
    weights = unpack_params(p, flat, x.shape[2], pieces)
    looped = _clipped(p) or (p.projection_size is not None and p.projection_size == p.state_size)
    out, hy, cy = (_looped if looped else _fused)(p, x, weights, hx, cx, lens, train)
    return (out, hy, cy) if lstm else (out, hy)


# The seeds of forwards that drew dropout masks, keyed by a fingerprint of their output, so the
# backward's replay draws the same masks (MXNet's RNN has no mask output to carry them).
_SEEDS: OrderedDict = OrderedDict()
_MAX_SEEDS = 4096


def _fingerprint(out):
    """Shape, dtype and three sums of ``out`` (one device-to-host copy)."""
    with torch.no_grad():
        o = out.detach().reshape(-1).double()
        ramp = torch.arange(1, o.numel() + 1, device=o.device, dtype=o.dtype)
        sums = torch.stack([o.sum(), o.abs().sum(), (o * ramp).sum()]).tolist()
    return (tuple(out.shape), str(out.dtype), *sums)


def _seeded(seed, device, fn):
    cuda = device is not None and device.type == "cuda"
    with torch.random.fork_rng(devices=[device] if cuda else []):
        if cuda:
            torch.cuda.default_generators[device.index or 0].manual_seed(seed)
        else:
            torch.default_generator.manual_seed(seed)
        return fn()


# Training forwards keep their torch autograd graph here, keyed by where their first output
# lives (``_graph_key``), so the backward differentiates it instead of replaying the forward.
# A backward that finds no graph (evicted, a second backward, an output copied elsewhere or
# modified in place) replays the forward as before.
_GRAPHS: OrderedDict = OrderedDict()
_MAX_GRAPHS = 4


def _graph_key(out):
    return (out.data_ptr(), tuple(out.shape), out.dtype, out.device, out._version)


def _wanted(p, xs):
    wanted = [x.is_floating_point() for x in xs]
    if p.use_sequence_length:
        wanted[-1] = False
    return wanted


def _forward_keeping_graph(p, ins, compute):
    """``compute`` under torch autograd on detached leaves; returns the detached results and
    files (results, leaves, pieces) under the first output's key. The parameter vector's leaves
    are its pieces (unpack_params), so that its gradient is one concatenation of theirs rather
    than a sum of full-size gradients, one per view."""
    wanted = _wanted(p, ins)
    pieces = None
    with torch.enable_grad():
        leaves = [x.detach().requires_grad_(w) for x, w in zip(ins, wanted)]
        if wanted[1] and ins[0].dim() == 3:
            shapes = _piece_shapes(p, ins[0].shape[2])
            if sum(math.prod(s) for s in shapes) == ins[1].numel():
                leaves[1] = ins[1].detach()
                pieces = [v.requires_grad_() for v in _pieces(leaves[1], shapes)]
        res = compute(leaves, pieces)
    out = tuple(r.detach() if r is not None else None for r in res)
    _GRAPHS[_graph_key(out[0])] = (res, leaves, pieces)
    while len(_GRAPHS) > _MAX_GRAPHS:
        _GRAPHS.popitem(last=False)
    return out


def _forward(p, ins, oc):
    _check(p)
    dropout = oc.is_train and p.p > 0 and p.num_layers > 1
    if not dropout:
        def compute(xs, pieces=None):
            return _compute(p, xs, oc.is_train, pieces)
    else:
        seed = int(torch.randint(0, 2 ** 62, (), dtype=torch.int64))

        def compute(xs, pieces=None):
            return _seeded(seed, ins[0].device, lambda: _compute(p, xs, True, pieces))
    if oc.is_train:
        res = _forward_keeping_graph(p, ins, compute)
    else:
        res = compute(ins)
        _GRAPHS.pop(_graph_key(res[0]), None)  # a stale graph at this address
    if dropout:
        _SEEDS[_fingerprint(res[0])] = seed
        while len(_SEEDS) > _MAX_SEEDS:
            _SEEDS.popitem(last=False)
    res = res[:len(_outputs(p))]
    return res[0] if len(res) == 1 else tuple(res)


def _kept_vjp(out, heads, n_in):
    """Gradients from the forward's kept graph, or None when there is none (or it is stale)."""
    kept = _GRAPHS.pop(_graph_key(out), None)
    if kept is None:
        return None
    ys, leaves, pieces = kept
    pairs = [(y, g) for y, g in zip(ys, heads) if y is not None and y.requires_grad]
    wrt = [x for x in leaves if x.requires_grad] + (pieces or [])
    if len(leaves) != n_in or not pairs or not wrt:
        return None
    try:
        got = torch.autograd.grad([y for y, _ in pairs], wrt, [g for _, g in pairs],
                                  allow_unused=True)
    except RuntimeError:  # an input was modified in place since the forward
        return None
    n = len(wrt) - len(pieces or ())
    got, piece_grads = iter(got[:n]), got[n:]
    res = []
    for k, x in enumerate(leaves):
        if k == 1 and pieces is not None:
            v = torch.cat([(torch.zeros_like(w) if g is None else g).reshape(-1)
                           for w, g in zip(pieces, piece_grads)])
        else:
            v = next(got) if x.requires_grad else None
        res.append(torch.zeros_like(x) if v is None else v)
    return res


def _backward(p, ins, oc):
    n_heads = len(_outputs(p))
    heads, xs, out = ins[:n_heads], list(ins[n_heads:-1]), ins[-1]
    res = _kept_vjp(out, heads, len(xs))
    if res is not None:
        return tuple(res)
    seed = _SEEDS.get(_fingerprint(out)) if p.p > 0 and p.num_layers > 1 else None

    def compute(leaves):
        if seed is None:
            return _compute(p, leaves, False)
        return _seeded(seed, out.device, lambda: _compute(p, leaves, True))

    return tuple(replay_vjp(compute, xs, heads, _wanted(p, xs)))


def _gradient(F, p, ins, outs, ograds):
    heads = [g if g is not None else F.zeros_like(o) for g, o in zip(ograds, outs)]
    res = F._backward_RNN(*heads, *ins, outs[0], **p)
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    if p.use_sequence_length:
        res[-1] = None
    return res


def _backward_inputs(p):
    heads = ("out_grad", "state_grad", "statecell_grad")[:len(_outputs(p))]
    return heads + _inputs(p) + ("out",)


register(OpDef(
    "RNN", _forward, _infer_shape, params=_PARAMS, inputs=_inputs, outputs=_outputs,
    infer_type=_infer_type, gradient=_gradient, no_grad_inputs=("sequence_length",),
    deterministic=lambda p: p.p == 0 or p.num_layers < 2,
    doc="Applies recurrent layers to input data. Currently, vanilla RNN, LSTM and GRU are\n"
        "implemented, with both multi-layer and bidirectional support.\n\n"
        "``data`` is ``(seq_len, batch, input_size)``; ``parameters`` the flat vector of every\n"
        "weight then every bias (per layer and direction: i2h, h2h[, h2r]); ``state`` (and\n"
        "``state_cell`` for LSTM) ``(num_layers * directions, batch, state_size)``. The output is\n"
        "``(seq_len, batch, directions * state_size)`` (``projection_size`` instead of\n"
        "``state_size`` with a projection), followed with ``state_outputs`` by the last states.\n"
        "LSTM gates are ordered i, f, g, o and GRU gates r, z, n (cuDNN's GRU).\n\n"
        "Examples\n--------\n"
        ">>> import neomx as mx\n"
        ">>> x = mx.nd.ones((5, 2, 3))\n"
        ">>> n = 4 * 4 * (3 + 4 + 2)\n"
        ">>> out = mx.nd.RNN(x, mx.nd.zeros((n,)), mx.nd.zeros((1, 2, 4)),\n"
        "...                 mx.nd.zeros((1, 2, 4)), state_size=4, num_layers=1, mode='lstm')\n"
        ">>> out.shape\n"
        "(5, 2, 4)"))

register(OpDef(
    "_backward_RNN", _backward,
    lambda p, ins, outs: (ins, list(ins[len(_outputs(p)):-1])), params=_PARAMS,
    inputs=_backward_inputs, outputs=_inputs,
    infer_type=lambda p, ins, outs: (ins, list(ins[len(_outputs(p)):-1])), public=False,
    doc="Gradient of RNN: the forward replayed under torch autograd (same dropout masks)."))


# --- _rnn_param_concat: gluon.rnn's flat parameter vector -----------------------------------------
def _param_concat_shape(p, ins, outs):
    """Concat's rule plus MXNet's RNNParamConcatShape: inputs whose ``dim`` is unknown share what
    the output (known from the RNN op's parameter size) leaves over, in equal parts."""
    known = [s for s in list(ins) + [outs[0]] if s is not None and len(s)]
    if not known:
        return ins, outs
    nd = len(known[0])
    ax = p.dim % nd
    common = [0] * nd
    for s in known:
        if len(s) != nd:
            raise ShapeError(f"Incompatible input shape: expected {_tshape(common)}, got "
                             f"{_tshape(s)}")
        for i, d in enumerate(s):
            if i != ax and d:
                if common[i] and common[i] != d:
                    raise ShapeError(f"Incompatible input shape: expected {_tshape(common)}, got "
                                     f"{_tshape(s)}")
                common[i] = d
    ins = [tuple(s[ax] if (i == ax and s is not None and len(s)) else (0 if i == ax else c)
                 for i, c in enumerate(common)) for s in ins]
    unknown = [k for k, s in enumerate(ins) if not s[ax]]
    size = sum(s[ax] for s in ins)
    out = list(common)
    out[ax] = size if not unknown else (outs[0][ax] if outs[0] is not None and len(outs[0]) else 0)
    if unknown and out[ax]:
        residual = out[ax] - size
        if residual < 0 or residual % len(unknown):
            raise ShapeError(f"Check failed: residual >= 0 and divisible: {residual} over "
                             f"{len(unknown)} unknown inputs")
        for k in unknown:
            ins[k] = tuple(residual // len(unknown) if i == ax else d
                           for i, d in enumerate(ins[k]))
    elif outs[0] is not None and len(outs[0]) and outs[0][ax] and outs[0][ax] != out[ax]:
        raise ShapeError(f"Shape inconsistent, Provided = {_tshape(outs[0])}, inferred shape="
                         f"{_tshape(out)}")
    return ins, [tuple(out)]


def _param_concat_gradient(F, p, ins, outs, ograds):
    from .matrix import _concat_gradient
    return _concat_gradient(F, p, ins, outs, ograds)


register(OpDef(
    "_rnn_param_concat", lambda p, ins, oc: torch.cat(list(ins), dim=p.dim), _param_concat_shape,
    params=(Param("num_args", "int", doc="Number of inputs to be concated."),
            Param("dim", "int", 1, "the dimension to be concated.")),
    inputs=lambda p: [f"arg{i}" for i in range(p.num_args)], key_var_num_args="num_args",
    gradient=_param_concat_gradient, hint="_rnn_param_concat", public=False,
    doc="Concat for gluon.rnn's fused parameter vector: unknown input sizes along ``dim`` are\n"
        "inferred from the output's (MXNet's ``_rnn_param_concat``)."))
