"""Shared helpers for the operator tests: the MXNet 1.9.1 golden cases, symbol building,
binding, tolerances and numpy references.

The golden cases come from ``tests/golden/foundation/ops.json`` + ``ops.npz`` (written by
``tools/make_golden_foundation.py`` with the real MXNet 1.9.1). Each case is rebuilt here the
way the generator built it: one ``mx.sym.Variable`` per input passed by keyword, the op named
``op0`` (``_``-ops from ``mx.sym._internal``), inside a fresh ``NameManager`` and ``AttrScope``;
``_graph`` cases run the stored ``code`` (or load the stored MXNet ``symbol_json``).
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import zlib
from collections import OrderedDict

import numpy as np

import neomx as mx

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(os.path.dirname(HERE), "golden", "foundation")

# Per-dtype tolerances (rtol, atol). float32 follows the brief (rtol 1e-5 / atol 1e-6); float64
# is used for the numerical-gradient checks and for the closed-form loss references.
TOL = {
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-10, 1e-12),
}
SENTINEL = 12345.0


def tol_for(op, dtype=np.float32):
    """(rtol, atol) for comparing ``op``'s results with MXNet's. Every golden case currently
    passes at the plain float32 tolerance, so no op gets a looser entry; add one here (with the
    reason) if a future kernel legitimately rounds differently."""
    return TOL[np.dtype(dtype)]


# ----------------------------------------------------------------------------- golden data
@functools.lru_cache(maxsize=None)
def _load():
    with open(os.path.join(GOLDEN_DIR, "ops.json")) as f:
        meta = json.load(f, object_pairs_hook=OrderedDict)
    with np.load(os.path.join(GOLDEN_DIR, "ops.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def golden_meta():
    return _load()[0]


def cases():
    return list(golden_meta()["cases"])


def case_by_id(cid):
    for c in cases():
        if c["id"] == cid:
            return c
    raise KeyError(cid)


def arr(key):
    return _load()[1][key]


def has(key):
    return key in _load()[1]


def case_inputs(case, dtype=None):
    """``OrderedDict`` name -> golden input array (cast to ``dtype`` when given)."""
    out = OrderedDict()
    for n in case["inputs"]:
        a = arr("%s/in/%s" % (case["id"], n))
        out[n] = a.astype(dtype) if dtype is not None else a.copy()
    return out


def case_outputs(case):
    return [arr("%s/out%d" % (case["id"], i)) for i in range(case["outputs"])]


def case_heads(case):
    return [arr("%s/head%d" % (case["id"], i)) for i in range(case["outputs"])
            if has("%s/head%d" % (case["id"], i))]


def case_grads(case):
    return OrderedDict((n, arr("%s/grad/%s" % (case["id"], n))) for n in case["grad_inputs"])


def case_grad_inits(case):
    return OrderedDict((n, arr("%s/grad_init/%s" % (case["id"], n))) for n in case["inputs"]
                       if has("%s/grad_init/%s" % (case["id"], n)))


def rng_for(key):
    return np.random.RandomState(zlib.crc32(key.encode()) & 0x7FFFFFFF)


# ----------------------------------------------------------------------------- building
@contextlib.contextmanager
def fresh_scopes():
    """Fresh name counters and an empty attribute scope (as the generator did)."""
    with mx.name.NameManager():
        with mx.AttrScope():
            yield


def _py_params(params):
    """JSON stores tuples as lists: turn them back into tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


def sym_fn(op):
    f = getattr(mx.sym, op, None)
    return f if f is not None else getattr(mx.sym._internal, op)


def nd_fn(op):
    f = getattr(mx.nd, op, None)
    return f if f is not None else getattr(mx.nd._internal, op)


def build_symbol(case, how="code"):
    """The case's symbol. ``how``: 'code' (op call / stored code) or 'json' (graph cases:
    ``mx.sym.load_json`` of MXNet's stored JSON)."""
    if case["op"] == "_graph":
        if how == "json":
            return mx.sym.load_json(case["symbol_json"])
        ns = {"mx": mx}
        with fresh_scopes():
            exec(case["code"], ns)
        return ns["sym"]
    variables = OrderedDict((n, mx.sym.Variable(n)) for n in case["inputs"])
    with fresh_scopes():
        return sym_fn(case["op"])(name="op0", **variables, **_py_params(case["params"]))


def simple_bind(sym, inputs, grad_req="write", dtype=np.float32):
    """simple_bind on cpu with the inputs' shapes and ``dtype``, then copy the inputs in."""
    shapes = {n: a.shape for n, a in inputs.items()}
    types = {n: np.dtype(dtype).name for n in inputs}
    ex = sym.simple_bind(mx.cpu(), grad_req=grad_req, type_dict=types, **shapes)
    for n, a in inputs.items():
        ex.arg_dict[n][:] = a.astype(dtype)
    return ex


def outputs_np(ex):
    return [o.asnumpy().copy() for o in ex.outputs]


def is_loss_case(case):
    return bool(case["loss"])


def grad_enabled(case):
    """Cases with a backward pass recorded."""
    return case["grad_req"] != "null" and bool(case["grad_inputs"])


def assert_close(actual, expected, rtol, atol, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (
        "%s: shape %s, MXNet gives %s" % (what, actual.shape, expected.shape))
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        idx = np.unravel_index(np.argmax(diff), diff.shape) if diff.size else ()
        raise AssertionError(
            "%s mismatch (rtol=%g atol=%g): max |diff| %.3g at %s (got %r, want %r)\n"
            "got:\n%s\nwant:\n%s" % (what, rtol, atol, diff.max(), idx,
                                     actual[idx] if diff.size else None,
                                     expected[idx] if diff.size else None, actual, expected))


# ----------------------------------------------------------------------------- references
def reshape_ref(shape_code, dshape, reverse=False):
    """MXNet 1.9.1 ``InferReshapeShape`` (src/operator/tensor/matrix_op-inl.h), known dshape.
    Returns the output shape, or None where MXNet would fail a CHECK."""
    dv = list(dshape)
    pv = list(shape_code)
    if reverse:
        dv.reverse()
        pv.reverse()
    tmp, src, inf = [], 0, -1
    i = 0
    while i < len(pv):
        d = pv[i]
        if d == 0:
            if src >= len(dv):
                return None
            tmp.append(dv[src])
            src += 1
        elif d == -1:
            if inf >= 0:
                return None
            inf = len(tmp)
            tmp.append(1)
            src += 1
        elif d == -2:
            while src < len(dv):
                tmp.append(dv[src])
                src += 1
        elif d == -3:
            if src >= len(dv) - 1:
                return None
            tmp.append(dv[src] * dv[src + 1])
            src += 2
        elif d == -4:
            if i + 2 >= len(pv) or src >= len(dv):
                return None
            d0 = dv[src]
            src += 1
            d1, d2 = pv[i + 1], pv[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                return None
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                return None
            tmp.extend([d1, d2])
        else:
            if d < -4:
                return None
            tmp.append(d)
            src += 1
        i += 1
    if inf >= 0:
        rest = int(np.prod([x for k, x in enumerate(tmp) if k != inf]))
        if rest == 0:
            return None
        tmp[inf] = int(np.prod(dv)) // rest
    if reverse:
        tmp.reverse()
    out = tuple(int(x) for x in tmp)
    if any(x <= 0 for x in out) or int(np.prod(out)) != int(np.prod(dshape)):
        return None
    return out


def reduce_axes_ref(ishape, axis, keepdims, exclude):
    """MXNet 1.9.1 ``ReduceAxesShapeImpl`` plus the list of reduced axes (sorted)."""
    nd = len(ishape)
    if axis is None or (isinstance(axis, tuple) and len(axis) == 0):
        return ((1,) * nd if keepdims else (1,)), list(range(nd))
    axes = sorted(a + nd if a < 0 else a for a in (axis if isinstance(axis, tuple) else (axis,)))
    if keepdims and exclude:
        out = tuple(ishape[i] if i in axes else 1 for i in range(nd))
    elif keepdims:
        out = tuple(1 if i in axes else ishape[i] for i in range(nd))
    elif exclude:
        out = tuple(ishape[a] for a in axes)
    else:
        out = tuple(ishape[i] for i in range(nd) if i not in axes) or (1,)
    reduced = [i for i in range(nd) if (i not in axes) == exclude]
    return out, reduced


def softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_output_ref(params, data, label):
    """Forward output and data gradient of MXNet 1.9.1's SoftmaxOutput
    (src/operator/softmax_output-inl.h), head gradient ignored, ``out_grad=False``.

    Returns ``(out, grad)`` with ``out`` shaped like ``data``. With ``out_grad=True`` MXNet
    1.9.1 (executor, head gradient given) records ``grad = (p - onehot) * p``: the head-gradient
    buffer it multiplies by holds the output (golden case ``smo_out_grad``).
    """
    out, g = _softmax_output_ref(params, data, label)
    if bool(params.get("out_grad", False)):
        g = g * out
    return out, g


def _softmax_output_ref(params, data, label):
    grad_scale = float(params.get("grad_scale", 1.0))
    ignore_label = float(params.get("ignore_label", -1.0))
    multi_output = bool(params.get("multi_output", False))
    use_ignore = bool(params.get("use_ignore", False))
    preserve_shape = bool(params.get("preserve_shape", False))
    normalization = params.get("normalization", "null")
    smooth_alpha = float(params.get("smooth_alpha", 0.0))
    data = np.asarray(data, dtype=np.float64)
    label = np.asarray(label, dtype=np.float64)
    if multi_output:
        n, k = data.shape[0], data.shape[1]
        d3 = data.reshape(n, k, -1)
        out = softmax_np(d3, 1)
        lab = label.reshape(n, -1)                                  # (n, s)
        # rows = (n, s) positions, classes on axis 1
        p = out.transpose(0, 2, 1).reshape(-1, k)
        lab_flat = lab.reshape(-1)
        g = _softmax_grad_rows(p, lab_flat, use_ignore, ignore_label, smooth_alpha)
        g = g.reshape(n, -1, k).transpose(0, 2, 1)
        # MXNet 1.9.1 divides by the spatial size s = prod(shape[2:]) too, except with
        # normalization='valid' (checked against the golden smo_multi_output* cases).
        s = d3.shape[2]
        if normalization == "valid":
            g = g * grad_scale / max(1, int(np.sum(lab.astype(np.int64) != int(ignore_label))))
        elif normalization == "batch":
            g = g * grad_scale / s / n
        else:
            g = g * grad_scale / s
        return out.reshape(data.shape), g.reshape(data.shape)
    if preserve_shape:
        rows = data.reshape(-1, data.shape[-1])
    else:
        rows = data.reshape(data.shape[0], -1)
    out = softmax_np(rows, 1)
    if label.size == out.size:
        g = out - label.reshape(out.shape)                        # probability target
        valid = 1
        if normalization == "batch":
            valid = out.shape[0]
        g = g * grad_scale / valid
        return out.reshape(data.shape), g.reshape(data.shape)
    lab = label.reshape(-1)[: out.shape[0]]
    g = _softmax_grad_rows(out, lab, use_ignore, ignore_label, smooth_alpha)
    valid = 1
    if normalization == "batch":
        valid = out.shape[0]
    elif normalization == "valid":
        valid = max(1, int(np.sum(lab.astype(np.int64) != int(ignore_label))))
    g = g * grad_scale / valid
    return out.reshape(data.shape), g.reshape(data.shape)


def _softmax_grad_rows(p, lab, use_ignore, ignore_label, alpha):
    g = p.copy()
    k = p.shape[1]
    for r in range(p.shape[0]):
        c = int(lab[r])
        if use_ignore and c == int(ignore_label):
            g[r] = 0.0
            continue
        if alpha:
            g[r] -= alpha / (k - 1)
            if 0 <= c < k:
                g[r, c] += alpha / (k - 1)
                g[r, c] -= 1.0 - alpha
        elif 0 <= c < k:
            g[r, c] -= 1.0
    return g
