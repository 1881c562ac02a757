"""``op-bench``: operator micro-benchmark of the 30 operators MXNet 1.x models call most.

For each operator and two shapes (``small``: latency-bound, a few hundred elements; ``large``:
kernel-bound, millions of elements or GFLOPs), two timings per process:

* ``fwd``: the operator called imperatively (``mx.nd.<op>(...)``; PyTorch: the natural
  ``torch`` call under ``no_grad``),
* ``fwd+bwd``: the same call under ``autograd.record()`` (``train_mode`` for Dropout) followed by
  ``backward`` with a fixed head gradient, every float input having ``attach_grad`` (PyTorch:
  ``requires_grad`` leaves, ``y.backward(head)``).

Each timing is the fastest of ``BLOCKS`` short blocks of ``n`` calls (``n`` calibrated so that a
block takes about ``BLOCK_S``; the single calls of the calibration count too): on a shared machine
the least disturbed block is the measurement. Every block starts and ends with ``waitall()`` (the
asynchronous engines). The
results are microseconds per call, in the extras as ``<op>|<shape>|<mode>``; the workload's value
is their geometric mean. ``run.py`` prints the per-operator table (neomx, MXNet, PyTorch,
neomx / min(peers)) under the main table, and lists the large-shape cells where neomx is more
than 2x slower than the faster peer.
"""
from __future__ import annotations

import math
import time

import numpy as np

METRIC = ("geomean_us", "us", "30 ops x 2 shapes, fwd and fwd+bwd (geomean per call)")
BLOCK_S = 0.01
BLOCKS = 9
LIMIT = 2.0  # the issue: no operator more than 2x slower than the faster peer on large shapes

M = 1024 * 4  # large elementwise: 1024 x 4096 = 4M float32 (16 MB)
SHAPES = {"small": {"ew": (16, 16), "fc": (4, 64, 64), "conv": (1, 8, 16, 16, 8),
                    "pool": (1, 8, 16, 16), "bn": (4, 8, 8, 8), "cls": (16, 10),
                    "dot": (16, 16, 16), "bdot": (4, 16, 16), "emb": (100, 16, 32)},
          "large": {"ew": (1024, M), "fc": (256, 1024, 1024), "conv": (8, 64, 28, 28, 64),
                    "pool": (32, 64, 56, 56), "bn": (32, 64, 56, 56), "cls": (4096, 1000),
                    "dot": (1024, 1024, 1024), "bdot": (32, 256, 256),
                    "emb": (50000, 256, 8192)}}


OPS = ("FullyConnected", "Convolution", "Pooling", "BatchNorm", "Activation", "softmax",
       "SoftmaxOutput", "elemwise_add", "elemwise_mul", "broadcast_add", "broadcast_mul", "dot",
       "batch_dot", "sum", "mean", "transpose", "reshape", "Concat", "slice", "take", "Embedding",
       "exp", "log", "sqrt", "tanh", "sigmoid", "LayerNorm", "Dropout", "where", "clip")


def _cases(size, seed):
    """[(name, inputs as numpy arrays, float-input positions to differentiate, call spec)]."""
    S = SHAPES[size]
    rng = np.random.RandomState(seed)
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    pos = lambda *s: rng.uniform(0.1, 2, s).astype(np.float32)  # noqa: E731
    r, c = S["ew"]
    n, k, h = S["fc"]
    cn, cc, ch, cw, cf = S["conv"]
    cls_n, cls_k = S["cls"]
    dm, dk, dn = S["dot"]
    bb, bm, bk = S["bdot"]
    vocab, edim, nidx = S["emb"]
    idx = rng.randint(0, vocab, nidx).astype(np.float32)
    return [
        ("FullyConnected", [f(n, k), f(h, k), f(h)], (0, 1, 2)),
        ("Convolution", [f(cn, cc, ch, cw), f(cf, cc, 3, 3), f(cf)], (0, 1, 2)),
        ("Pooling", [f(*S["pool"])], (0,)),
        ("BatchNorm", [f(*S["bn"]), pos(S["bn"][1]), f(S["bn"][1]), f(S["bn"][1]),
                       pos(S["bn"][1])], (0, 1, 2)),
        ("Activation", [f(r, c)], (0,)),
        ("softmax", [f(r, c)], (0,)),
        ("SoftmaxOutput", [f(cls_n, cls_k), rng.randint(0, cls_k, cls_n).astype(np.float32)],
         (0,)),
        ("elemwise_add", [f(r, c), f(r, c)], (0, 1)),
        ("elemwise_mul", [f(r, c), f(r, c)], (0, 1)),
        ("broadcast_add", [f(r, c), f(1, c)], (0, 1)),
        ("broadcast_mul", [f(r, c), f(1, c)], (0, 1)),
        ("dot", [f(dm, dk), f(dk, dn)], (0, 1)),
        ("batch_dot", [f(bb, bm, bk), f(bb, bk, bm)], (0, 1)),
        ("sum", [f(r, c)], (0,)),
        ("mean", [f(r, c)], (0,)),
        ("transpose", [f(r, c)], (0,)),
        ("reshape", [f(r, c)], (0,)),
        ("Concat", [f(r, c // 2), f(r, c // 2)], (0, 1)),
        ("slice", [f(r, c)], (0,)),
        ("take", [f(vocab, edim), idx], (0,)),
        ("Embedding", [idx, f(vocab, edim)], (1,)),
        ("exp", [f(r, c)], (0,)),
        ("log", [pos(r, c)], (0,)),
        ("sqrt", [pos(r, c)], (0,)),
        ("tanh", [f(r, c)], (0,)),
        ("sigmoid", [f(r, c)], (0,)),
        ("LayerNorm", [f(r, c), pos(c), f(c)], (0, 1, 2)),
        ("Dropout", [f(r, c)], (0,)),
        ("where", [(f(r, c) > 0).astype(np.float32), f(r, c), f(r, c)], (1, 2)),
        ("clip", [f(r, c)], (0,)),
    ]


def _mx_call(mx, name, size):
    nd = mx.nd
    S = SHAPES[size]
    c = S["ew"][1]
    vocab, edim, _ = S["emb"]
    return {
        "FullyConnected": lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=S["fc"][2]),
        "Convolution": lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), pad=(1, 1),
                                                      num_filter=S["conv"][4]),
        "Pooling": lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max"),
        "BatchNorm": lambda x, g, b, m, v: nd.BatchNorm(x, g, b, m, v, fix_gamma=False),
        "Activation": lambda x: nd.Activation(x, act_type="relu"),
        "softmax": lambda x: nd.softmax(x, axis=-1),
        "SoftmaxOutput": lambda x, y: nd.SoftmaxOutput(x, y),
        "elemwise_add": lambda a, b: nd.elemwise_add(a, b),
        "elemwise_mul": lambda a, b: nd.elemwise_mul(a, b),
        "broadcast_add": lambda a, b: nd.broadcast_add(a, b),
        "broadcast_mul": lambda a, b: nd.broadcast_mul(a, b),
        "dot": lambda a, b: nd.dot(a, b),
        "batch_dot": lambda a, b: nd.batch_dot(a, b),
        "sum": lambda x: nd.sum(x, axis=1),
        "mean": lambda x: nd.mean(x, axis=1),
        "transpose": lambda x: nd.transpose(x),
        "reshape": lambda x: nd.reshape(x, shape=(c, -1)),
        "Concat": lambda a, b: nd.Concat(a, b, dim=1),
        "slice": lambda x: nd.slice(x, begin=(0, c // 4), end=(None, 3 * c // 4)),
        "take": lambda w, i: nd.take(w, i),
        "Embedding": lambda i, w: nd.Embedding(i, w, input_dim=vocab, output_dim=edim),
        "exp": nd.exp, "log": nd.log, "sqrt": nd.sqrt, "tanh": nd.tanh, "sigmoid": nd.sigmoid,
        "LayerNorm": lambda x, g, b: nd.LayerNorm(x, g, b, axis=-1),
        "Dropout": lambda x: nd.Dropout(x, p=0.5),
        "where": lambda cnd, a, b: nd.where(cnd, a, b),
        "clip": lambda x: nd.clip(x, -0.5, 0.5),
    }[name]


def _torch_call(torch, name, size):
    F = torch.nn.functional
    S = SHAPES[size]
    c = S["ew"][1]
    return {
        "FullyConnected": lambda x, w, b: F.linear(x, w, b),
        "Convolution": lambda x, w, b: F.conv2d(x, w, b, padding=1),
        "Pooling": lambda x: F.max_pool2d(x, 2, 2),
        "BatchNorm": lambda x, g, b, m, v: F.batch_norm(x, m, v, g, b, training=True,
                                                        momentum=0.1, eps=1e-3),
        "Activation": torch.relu,
        "softmax": lambda x: torch.softmax(x, -1),
        # (SoftmaxOutput's forward is a softmax and its gradient cross-entropy's: summed)
        "SoftmaxOutput": None,
        "elemwise_add": torch.add, "elemwise_mul": torch.mul,
        "broadcast_add": torch.add, "broadcast_mul": torch.mul,
        "dot": torch.mm, "batch_dot": torch.bmm,
        "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1),
        "transpose": lambda x: x.t().contiguous(),
        "reshape": lambda x: x.reshape(c, -1),
        "Concat": lambda a, b: torch.cat([a, b], 1),
        "slice": lambda x: x[:, c // 4:3 * c // 4].contiguous(),
        "take": lambda w, i: w[i.long()],
        "Embedding": lambda i, w: F.embedding(i, w),
        "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "LayerNorm": lambda x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5),
        "Dropout": lambda x: F.dropout(x, 0.5, training=True),
        "where": lambda cnd, a, b: torch.where(cnd, a, b),
        "clip": lambda x: torch.clamp(x, -0.5, 0.5),
    }[name]


def _time(fn, sync, quick):
    """The fastest of ``BLOCKS`` blocks of the seconds per call of ``fn``: on a shared machine the
    minimum is the least disturbed measurement. ``n`` calls per block, from the fastest of three
    single calls, so that a block takes about ``BLOCK_S``."""
    fn()
    one = 1.0
    for _ in range(1 if quick else 3):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        one = min(one, time.perf_counter() - t0)
    n = max(1, min(2000, int(BLOCK_S / (10 if quick else 1) / max(one, 1e-7))))
    best = one
    for _ in range(1 if quick else BLOCKS):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _result(times):
    vals = [v for v in times.values() if v > 0]
    return {"value": math.exp(sum(math.log(v) for v in vals) / len(vals)), "extra": times}


def run_mx(mx, cfg):
    times = {}
    sync = mx.nd.waitall
    for size in cfg.get("sizes", ("small", "large")):
        for name, arrays, wrt in _cases(size, cfg["seed"]):
            f = _mx_call(mx, name, size)
            ins = [mx.nd.array(a) for a in arrays]
            if name == "Dropout":
                def fwd(f=f, ins=ins):
                    with mx.autograd.train_mode():
                        return f(*ins)
            else:
                def fwd(f=f, ins=ins):
                    return f(*ins)
            times[f"{name}|{size}|fwd"] = 1e6 * _time(fwd, sync, cfg["quick"])
            for k in wrt:
                ins[k].attach_grad()
            out_shape = fwd().shape
            head = None if name == "SoftmaxOutput" else mx.nd.array(
                np.random.RandomState(1).uniform(-1, 1, out_shape).astype(np.float32))

            def step(f=f, ins=ins, head=head):
                with mx.autograd.record():
                    y = f(*ins)
                y.backward(head)
            times[f"{name}|{size}|fwd+bwd"] = 1e6 * _time(step, sync, cfg["quick"])
            del ins
    return _result(times)


def run_torch(torch, cfg):
    times = {}
    F = torch.nn.functional

    def sync():
        pass
    for size in cfg.get("sizes", ("small", "large")):
        for name, arrays, wrt in _cases(size, cfg["seed"]):
            ins = [torch.from_numpy(a) for a in arrays]
            if name in ("take", "Embedding"):
                ins = [t.long() if i == (1 if name == "take" else 0) else t
                       for i, t in enumerate(ins)]
            if name == "where":
                ins[0] = ins[0] > 0
            if name == "SoftmaxOutput":
                ins[1] = ins[1].long()
                f_fwd = lambda x, y: torch.softmax(x, -1)  # noqa: E731
                f_loss = lambda x, y: F.cross_entropy(x, y, reduction="sum")  # noqa: E731
            else:
                f_fwd = f_loss = _torch_call(torch, name, size)

            def fwd(ins=ins, f=f_fwd):
                with torch.no_grad():
                    return f(*ins)
            times[f"{name}|{size}|fwd"] = 1e6 * _time(fwd, sync, cfg["quick"])
            for k in wrt:
                ins[k].requires_grad_(True)
            out_shape = fwd().shape
            head = None if name == "SoftmaxOutput" else torch.from_numpy(
                np.random.RandomState(1).uniform(-1, 1, tuple(out_shape)).astype(np.float32))

            def step(ins=ins, f=f_loss, head=head, wrt=wrt):
                for k in wrt:
                    ins[k].grad = None  # (MXNet's grad_req='write')
                y = f(*ins)
                y.backward(head)
            times[f"{name}|{size}|fwd+bwd"] = 1e6 * _time(step, sync, cfg["quick"])
            del ins
    return _result(times)


# --- the table run.py prints ---------------------------------------------------------------------
def _fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def table(w, peers):
    """Per operator and shape: each peer's median microseconds per call (fwd and fwd+bwd) and
    neomx / min(other peers); then the large-shape cells over ``LIMIT``. ``w`` is run.py's
    workload record."""
    med = {p: w["peers"].get(p, {}).get("extra_median", {}) for p in peers}
    others = [p for p in peers if p != "neomx"]
    keys = [k for k in med.get("neomx", {}) if k.count("|") == 2]
    ops = list(dict.fromkeys(k.split("|")[0] for k in keys))
    label = {"neomx": "neomx", "mxnet": "MXNet", "torch": "torch"}
    cols = ["op", "shape"]
    for mode in ("fwd", "fwd+bwd"):
        cols += [f"{mode} {label[p]}" for p in peers] + ([f"{mode} ratio"] if others else [])
    rows, slow = [], []
    for op in ops:
        for size in ("small", "large"):
            row = [op, size]
            for mode in ("fwd", "fwd+bwd"):
                key = f"{op}|{size}|{mode}"
                vals = {p: med[p].get(key) for p in peers}
                row += [_fmt_us(vals[p]) for p in peers]
                if others:
                    best = min((vals[p] for p in others if vals[p]), default=None)
                    ratio = vals["neomx"] / best if best and vals.get("neomx") else None
                    row.append("-" if ratio is None else f"{ratio:.2f}x")
                    if ratio is not None and size == "large" and ratio > LIMIT:
                        slow.append(f"{op} {size} {mode}: {ratio:.2f}x")
            rows.append(row)
    widths = [max(len(str(r[i])) for r in [cols] + rows) for i in range(len(cols))]
    line = lambda r: "  ".join(str(x).ljust(wd) if i < 2 else str(x).rjust(wd)  # noqa: E731
                               for i, (x, wd) in enumerate(zip(r, widths)))
    out = ["op-bench: microseconds per call (median of the repeats' medians); ratio = neomx / "
           "min(" + ", ".join(label[p] for p in others) + "): < 1 means neomx is faster", "",
           line(cols), line(["-" * wd for wd in widths])] + [line(r) for r in rows]
    if others:
        out += ["", f"large shapes more than {LIMIT:g}x slower than the faster peer: "
                + (", ".join(slow) if slow else "none")]
    return "\n".join(out)
