"""MXNet 1.9.1's public operator names per namespace -> ``tests/golden/optable/names.json``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_optable.py

Namespaces: ``nd``, ``sym`` and their ``random``, ``linalg``, ``contrib`` and ``image``
sub-namespaces. A name is listed when it is public (no leading ``_``), is a function (not a
module or class) and belongs to the namespace itself: generated from a registered operator
(``__module__`` is the namespace's module, or ``ndarray``/``symbol`` for MXNet's generated
top-level functions) or written by hand in one of the namespace's own Python modules
(``mx.nd.zeros``, ``mx.nd.array``, ``mx.nd.concatenate``, ``mx.sym.Variable`` ...). Helpers a
namespace merely imports (``current_context`` from ``mxnet.context``, ``check_call`` from
``mxnet.base``, ``uniform`` from the random namespace inside ``contrib``) are left out, as are
the NumPy interface (``mx.np``, ``mx.npx``, ``_np*``/``_npi*``) and the sparse-storage
namespaces ``mx.nd.sparse``/``mx.sym.sparse`` (the sparse issue covers them).

The test ``tests/ops/test_op_coverage.py`` reads the file; ``tools/update_op_exclusions.py``
rewrites ``tests/ops/op_exclusions.txt`` from it.
"""
import inspect
import os
import sys

from _oracle_common import golden_dir, write_json  # sets MXNET_SUBGRAPH_VERBOSE first
import mxnet as mx

# namespace key -> (module object, __module__ values that count as the namespace's own)
NAMESPACES = {
    'nd': (mx.nd, {'ndarray', 'mxnet.ndarray.ndarray', 'mxnet.ndarray.utils'}),
    'sym': (mx.sym, {'symbol', 'mxnet.symbol.symbol'}),
}
for _sub in ('random', 'linalg', 'contrib', 'image'):
    NAMESPACES['nd.' + _sub] = (getattr(mx.nd, _sub), {'mxnet.ndarray.' + _sub})
    NAMESPACES['sym.' + _sub] = (getattr(mx.sym, _sub), {'mxnet.symbol.' + _sub})


def public_names(module, own_modules):
    """Sorted public function names that ``module`` defines itself (see the module doc)."""
    names = []
    for name in dir(module):
        if name.startswith('_'):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
            continue
        if getattr(obj, '__module__', None) in own_modules:
            names.append(name)
    return sorted(names)


def main():
    out = {
        'mxnet_version': mx.__version__,
        'generator': 'tools/make_golden_optable.py',
        'python': '%d.%d' % sys.version_info[:2],
        'namespaces': {key: public_names(mod, own) for key, (mod, own) in NAMESPACES.items()},
    }
    folder = golden_dir('optable')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, 'names.json')
    write_json(path, out)
    counts = ', '.join('%s %d' % (k, len(v)) for k, v in out['namespaces'].items())
    print('wrote %s (%s)' % (path, counts))


if __name__ == '__main__':
    main()
