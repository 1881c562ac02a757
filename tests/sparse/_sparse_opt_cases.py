"""Scenarios of optimizers and update operators with row_sparse gradients, written once against
the ``mx`` they are given: ``tools/make_golden_sparse_opt.py`` runs them in MXNet 1.9.1 and
records the results (tests/golden/sparse_opt/cases.json); tests/sparse/test_sparse_opt.py runs
them with neomx and compares. Only numpy and the given ``mx`` are used here (no neomx, no mxnet
import).

The weight is a dense (5, 3) array; the gradients of :func:`step_inputs` never touch row 2.
A scenario that fails raises (the generator records the error, the test expects it).
"""
import numpy as np

# Optimizer configurations: name -> (optimizer, kwargs), run for three steps through an Updater
# (SGLD is random: test_sparse_opt.py checks only its structure).
OPTIMIZERS = {
    "sgd_mom_lazy": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "sgd_mom_std": ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "sgd_mom_clip": ("sgd", dict(learning_rate=0.1, momentum=0.5, rescale_grad=2.0,
                                 clip_gradient=0.4)),
    "nag": ("nag", dict(learning_rate=0.1, wd=0.01)),
    "nag_mom": ("nag", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "signum": ("signum", dict(learning_rate=0.1, wd=0.01)),
    "signsgd": ("signum", dict(learning_rate=0.1, momentum=0.0, wd=0.01)),
    "rmsprop": ("rmsprop", dict(learning_rate=0.01, wd=0.01)),
    "rmsprop_centered": ("rmsprop", dict(learning_rate=0.01, centered=True, clip_weights=0.5)),
    "adadelta": ("adadelta", dict(wd=0.01)),
    "ftml": ("ftml", dict(learning_rate=0.05, wd=0.01)),
    "dcasgd": ("dcasgd", dict(learning_rate=0.1, wd=0.01)),
    "adamax": ("adamax", dict(wd=0.01)),
    "nadam": ("nadam", dict(wd=0.01)),
    "lars": ("lars", dict(learning_rate=0.1, wd=0.01)),
    "lars_mom": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01)),
    "lars_mom_std": ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, lazy_update=False)),
    "lbsgd": ("lbsgd", dict(learning_rate=0.1, momentum=0.9)),
    "lamb": ("lamb", dict(learning_rate=0.01, wd=0.01)),
    "adagrad_eps": ("adagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                    clip_gradient=0.7)),
    "groupadagrad": ("groupadagrad", dict(learning_rate=0.1)),
    "groupadagrad_eps": ("groupadagrad", dict(learning_rate=0.1, eps=0.5, rescale_grad=2.0,
                                              clip_gradient=0.7)),
    "groupadagrad_wd": ("groupadagrad", dict(learning_rate=0.1, wd=0.01)),
    "test": ("test", dict(rescale_grad=0.5)),
}

# Optimizers of a local KVStore holding a row_sparse weight (what dist servers run), each with
# learning_rate=0.1.
_LR = dict(learning_rate=0.1)
KV_OPTIMIZERS = {
    "sgd_mom": ("sgd", dict(_LR, momentum=0.9)),
    **{n: (n, _LR) for n in ("adam", "groupadagrad")},
    "sgd_std": ("sgd", dict(_LR, lazy_update=False, momentum=0.9, wd=0.1)),
    "nag_mom": ("nag", dict(_LR, momentum=0.9)),
    **{n: (n, _LR) for n in ("nag", "signum", "rmsprop", "adagrad", "ftrl")},
    "adam_std": ("adam", dict(_LR, lazy_update=False)),
    "lars_mom": ("lars", dict(_LR, momentum=0.9)),
    **{n: (n, _LR) for n in ("ftml", "dcasgd", "adadelta", "nadam", "lamb", "lbsgd")},
}


def step_inputs():
    """The weight and three (gradient rows, row ids) steps."""
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    steps = [(rng.uniform(-1, 1, (2, 3)).astype(np.float32), [0, 3]),
             (rng.uniform(-1, 1, (2, 3)).astype(np.float32), [1, 3]),
             (rng.uniform(-1, 1, (1, 3)).astype(np.float32), [4])]
    return w0, steps


def rsp(mx, data, rows):
    return mx.nd.sparse.row_sparse_array((data, rows), shape=(5, 3))


def arrays(state):
    """An optimizer state's arrays, flattened."""
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in arrays(s)]
    return [state]


def run_updater(mx, name, w0, steps):
    """The optimizer ``name`` of OPTIMIZERS through an Updater, a row_sparse gradient a step:
    the weight and the state's arrays."""
    opt_name, kw = OPTIMIZERS[name]
    upd = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kw))
    w = mx.nd.array(w0)
    for data, rows in steps:
        upd(0, rsp(mx, data, rows), w)
    w.wait_to_read()
    return w, arrays(upd.states[0])


# The update operators called directly with a row_sparse gradient g (w the weight, s states).
UPDATE_OPS = {
    "sparse.adagrad_update": lambda mx, w, s, g: mx.nd.sparse.adagrad_update(
        w, g, s[0], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
    "sparse.adagrad_update_wd": lambda mx, w, s, g: mx.nd.sparse.adagrad_update(
        w, g, s[0], out=w, lr=0.1, wd=0.1),
    "contrib.group_adagrad_update": lambda mx, w, s, g: mx.nd.contrib.group_adagrad_update(
        w, g, s[1], out=w, lr=0.1, epsilon=0.01, rescale_grad=2.0, clip_gradient=0.7),
    "contrib.group_adagrad_update_dense": lambda mx, w, s, g: mx.nd.contrib.group_adagrad_update(
        w, g.tostype("default"), s[1], out=w, lr=0.1),
    "sgd_update_lazy": lambda mx, w, s, g: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1),
    "sgd_update_std": lambda mx, w, s, g: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.1,
                                                           lazy_update=False),
    "sgd_mom_update_lazy": lambda mx, w, s, g: mx.nd.sparse.sgd_mom_update(
        w, g, s[0], out=w, lr=0.1, wd=0.1, momentum=0.9),
    "adam_update_std": lambda mx, w, s, g: mx.nd.adam_update(
        w, g, s[0], s[2], out=w, lr=0.1, wd=0.1, lazy_update=False),
}


def update_op_states(mx):
    return [mx.nd.ones((5, 3)) * 0.5, mx.nd.ones((5, 1)) * 0.25, mx.nd.ones((5, 3)) * 0.1]


def run_update_op(mx, name, w, states, g):
    """The operator ``name`` of UPDATE_OPS on the weight ``w`` (updated in place)."""
    UPDATE_OPS[name](mx, w, states, g)
    w.wait_to_read()


def rsp_update_cases(mx, w0, g):
    """Update operators with row_sparse weights and states (lazy, the states' rows updated in
    place) and the standard forms: name -> (make the arrays, call on them)."""
    rsp_ = lambda a: a.tostype("row_sparse")  # noqa: E731
    return {
        "ftrl_dense": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1,
                                mx.nd.ones((5, 3)) * 0.2],
                       lambda a: mx.nd.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                   wd=0.1)),
        "ftrl_rsp": (lambda: [rsp_(mx.nd.array(w0)), rsp_(mx.nd.ones((5, 3)) * 0.1),
                              rsp_(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.ftrl_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_mom_rsp": (lambda: [rsp_(mx.nd.array(w0)), rsp_(mx.nd.ones((5, 3)) * 0.1)],
                        lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1,
                                                              wd=0.1, momentum=0.9)),
        "sgd_mom_rsp_empty_state": (
            lambda: [rsp_(mx.nd.array(w0)), mx.nd.sparse.zeros("row_sparse", (5, 3))],
            lambda a: mx.nd.sparse.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                  momentum=0.9)),
        "adam_rsp": (lambda: [rsp_(mx.nd.array(w0)), rsp_(mx.nd.ones((5, 3)) * 0.1),
                              rsp_(mx.nd.ones((5, 3)) * 0.2)],
                     lambda a: mx.nd.sparse.adam_update(a[0], g, a[1], a[2], out=a[0], lr=0.1,
                                                        wd=0.1)),
        "sgd_rsp_w": (lambda: [rsp_(mx.nd.array(w0))],
                      lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1)),
        "sgd_rsp_w_std": (lambda: [rsp_(mx.nd.array(w0))],
                          lambda a: mx.nd.sparse.sgd_update(a[0], g, out=a[0], lr=0.1, wd=0.1,
                                                            lazy_update=False)),
        "sgd_mom_std": (lambda: [mx.nd.array(w0), mx.nd.ones((5, 3)) * 0.1],
                        lambda a: mx.nd.sgd_mom_update(a[0], g, a[1], out=a[0], lr=0.1, wd=0.1,
                                                       momentum=0.9, lazy_update=False)),
        "group_adagrad_rsp": (lambda: [rsp_(mx.nd.array(w0)), rsp_(mx.nd.ones((5, 1)) * 0.1)],
                              lambda a: mx.nd.contrib.group_adagrad_update(
                                  a[0], g, a[1], out=a[0], lr=0.1)),
    }


def run_kvstore(mx, name, w0, steps):
    """A local KVStore with a row_sparse weight and the optimizer ``name`` of KV_OPTIMIZERS,
    one push a step: the weight pulled back (every row asked for)."""
    opt_name, kw = KV_OPTIMIZERS[name]
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(opt_name, **kw))
    kv.init("w", mx.nd.array(w0).tostype("row_sparse"))
    for data, rows in steps:
        kv.push("w", rsp(mx, data, rows))
    res = mx.nd.sparse.zeros("row_sparse", (5, 3))
    kv.row_sparse_pull("w", out=res, row_ids=mx.nd.arange(5))
    return res
