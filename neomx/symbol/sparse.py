"""``mx.sym.sparse``: the symbol functions of MXNet 1.9.1's sparse namespace.

They are the op table's functions (one definition per operator); storage types are decided
when a graph is bound: variables declared with ``stype='csr'`` / ``'row_sparse'`` (or given in
``simple_bind(stype_dict=...)``) reach these operators' sparse kernels in the executor
(``neomx/graph/storage.py``), e.g. ``mx.sym.sparse.dot(csr_data, row_sparse_weight)``.

Examples
--------
>>> import neomx as mx
>>> x = mx.sym.Variable('x', stype='csr')
>>> w = mx.sym.Variable('w', stype='row_sparse')
>>> mx.sym.sparse.dot(x, w).list_arguments()
['x', 'w']
"""
from __future__ import annotations

from ..ops import registry as _reg
from .register import make_function

# MXNet 1.9.1's names, and the operator each one is (when not its own name).
_NAMES = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "_contrib_round_ste", "_contrib_sign_ste",
    "abs", "adagrad_update", "adam_update", "add_n", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctanh", "broadcast_add", "broadcast_div", "broadcast_minus", "broadcast_mul",
    "broadcast_plus", "broadcast_sub", "cast_storage", "cbrt", "ceil", "clip", "concat", "cos",
    "cosh", "degrees", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
    "exp", "expm1", "fix", "floor", "ftrl_update", "gamma", "gammaln", "log", "log10", "log1p",
    "log2", "make_loss", "mean", "negative", "norm", "radians", "relu", "retain", "rint",
    "round", "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice",
    "sqrt", "square", "stop_gradient", "sum", "tan", "tanh", "trunc", "where", "zeros_like")
_OPS = {"retain": ("_sparse_retain",), "adagrad_update": ("_sparse_adagrad_update", "adagrad_update")}


def _lookup(name):
    for opname in _OPS.get(name, (name,)):
        op = _reg.find(opname)
        if op is not None:
            return make_function(op, name)
    return None


__all__ = []
for _name in _NAMES:
    _f = _lookup(_name)
    if _f is not None:
        globals()[_name] = _f
        __all__.append(_name)


def __getattr__(name):
    # (an operator registered after this module was imported: found on first use)
    if name in _NAMES:
        f = _lookup(name)
        if f is not None:
            globals()[name] = f
            return f
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
