"""MXNet 1.9.1's public Python API names per module -> ``tests/golden/api/names.json``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_api.py

For each module of ``MODULES`` (keys as users write them: ``mx``, ``mx.io``, ``mx.gluon.nn``
...) the file lists the public names (no leading ``_``) that the module *defines or exports*,
read from the module's source with ``ast`` and checked against the imported module:

* every name of its ``__all__``;
* names bound at the module's top level (also inside top-level ``if``/``try``/``with``) by
  ``def``, ``class`` or an assignment;
* names brought in by ``from <mxnet module> import *`` (a deliberate re-export:
  ``mx.random`` re-exports ``mx.nd.random``'s samplers): the source's ``__all__``, or when it
  has none, the names the source itself defines by these rules;
* in a package's ``__init__.py`` only, names imported explicitly from MXNet's own modules
  (``from .trainer import Trainer``, ``from . import nn``, ``from . import ndarray as nd``):
  a package's ``__init__`` is its public face. In a plain module such imports are the module's
  own helpers (``mx.model`` imports ``numpy as np``, ``Uniform``...) and are not listed.

Left out: the NumPy interface (``mx.np``, ``mx.npx``, ``mx.numpy*``, ``mx.symbol.numpy``, and
any name bound to one of those modules), imported third-party modules (``ctypes``,
``logging`` ...), and in ``mx.ndarray``/``mx.symbol`` the generated operator functions, which
``tools/make_golden_optable.py`` lists (recognised by their generated code object; the
hand-written functions and classes --
``NDArray``, ``array``, ``zeros``, ``save``, ``Variable``, ``Group`` -- stay). The operator
namespaces ``mx.nd.random/linalg/contrib/image/op/sparse`` and ``mx.contrib.ndarray/symbol``
appear only as module names.

Each name has a kind: ``module``, ``class``, ``function`` (any other callable) or ``other``
(a constant). The test ``tests/api/test_api_coverage.py`` reads the file;
``tools/update_api_exclusions.py`` rewrites ``tests/api/api_exclusions.txt`` from it.
"""
import ast
import importlib
import inspect
import os
import sys
import types

from _oracle_common import golden_dir, write_json  # sets MXNET_SUBGRAPH_VERBOSE first
import mxnet as mx

# User-facing module paths ('mx' is the package). Implementation files of a package (e.g.
# gluon/nn/basic_layers.py) are covered through the package that re-exports them.
MODULES = [
    'mx', 'mx.base', 'mx.context', 'mx.engine', 'mx.error', 'mx.executor', 'mx.log',
    'mx.registry', 'mx.library', 'mx.rtc', 'mx.misc', 'mx.executor_manager',
    'mx.io', 'mx.io.io', 'mx.io.utils',
    'mx.ndarray', 'mx.ndarray.ndarray', 'mx.ndarray.utils', 'mx.ndarray.sparse',
    'mx.symbol', 'mx.symbol.symbol', 'mx.symbol.sparse',
    'mx.autograd', 'mx.random', 'mx.name', 'mx.attribute',
    'mx.gluon', 'mx.gluon.block', 'mx.gluon.parameter', 'mx.gluon.trainer', 'mx.gluon.utils',
    'mx.gluon.nn', 'mx.gluon.rnn', 'mx.gluon.loss',
    'mx.gluon.data', 'mx.gluon.data.dataset', 'mx.gluon.data.sampler',
    'mx.gluon.data.dataloader', 'mx.gluon.data.vision', 'mx.gluon.data.vision.datasets',
    'mx.gluon.data.vision.transforms',
    'mx.gluon.model_zoo', 'mx.gluon.model_zoo.model_store', 'mx.gluon.model_zoo.vision',
    'mx.gluon.contrib', 'mx.gluon.contrib.nn', 'mx.gluon.contrib.rnn', 'mx.gluon.contrib.cnn',
    'mx.gluon.contrib.data', 'mx.gluon.contrib.data.text', 'mx.gluon.contrib.estimator',
    'mx.optimizer', 'mx.optimizer.optimizer', 'mx.optimizer.contrib',
    'mx.lr_scheduler', 'mx.metric', 'mx.initializer',
    'mx.module', 'mx.model', 'mx.callback', 'mx.monitor', 'mx.visualization',
    'mx.kvstore', 'mx.kvstore.base', 'mx.kvstore.kvstore', 'mx.kvstore.kvstore_server',
    'mx.recordio', 'mx.image', 'mx.image.image', 'mx.image.detection',
    'mx.rnn', 'mx.rnn.rnn_cell', 'mx.rnn.io', 'mx.rnn.rnn',
    'mx.operator', 'mx.profiler', 'mx.test_utils', 'mx.util', 'mx.runtime',
    'mx.contrib', 'mx.contrib.autograd', 'mx.contrib.io', 'mx.contrib.quantization',
    'mx.contrib.tensorboard', 'mx.contrib.text', 'mx.contrib.text.embedding',
    'mx.contrib.text.vocab', 'mx.contrib.text.utils', 'mx.contrib.svrg_optimization',
    'mx.contrib.svrg_optimization.svrg_module', 'mx.contrib.svrg_optimization.svrg_optimizer',
    'mx.contrib.amp', 'mx.contrib.onnx', 'mx.onnx',
]

# Module names (relative to their parent) that belong to the NumPy interface.
NUMPY_MODULES = ('mxnet.numpy', 'mxnet.numpy_extension', 'mxnet.ndarray.numpy',
                 'mxnet.ndarray.numpy_extension', 'mxnet.symbol.numpy',
                 'mxnet.symbol.numpy_extension', 'mxnet.numpy_op_signature',
                 'mxnet.numpy_dispatch_protocol', 'mxnet.numpy_op_fallback',
                 'mxnet.ndarray.numpy._internal', 'mxnet.symbol.numpy._symbol')
# Placeholders of optional third-party imports (``h5py = None`` when h5py is absent).
OPTIONAL_IMPORTS = {'h5py', 'pd', 'bokeh'}


def import_key(key):
    return importlib.import_module('mxnet' + key[2:])


def is_numpy_interface(obj):
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith(NUMPY_MODULES)
    return (getattr(obj, '__module__', None) or '').startswith(NUMPY_MODULES)


def kind(obj):
    if isinstance(obj, types.ModuleType):
        return 'module'
    if inspect.isclass(obj):
        return 'class'
    if callable(obj):
        return 'function'
    return 'other'


def is_generated_operator(obj):
    """MXNet builds its operator functions from generated source (``exec``): no real file."""
    code = getattr(obj, '__code__', None)
    return code is not None and not os.path.exists(code.co_filename)


def _mxnet_source(node, package):
    """Absolute module name of an ImportFrom when it imports from MXNet, else None."""
    if node.level:
        base = package.split('.')
        if node.level > 1:
            base = base[:-(node.level - 1)]
        return '.'.join(base + ([node.module] if node.module else []))
    if node.module and (node.module == 'mxnet' or node.module.startswith('mxnet.')):
        return node.module
    return None


def _statements(body):
    """Top-level statements, looking into if/try/with blocks but not into def/class bodies."""
    for node in body:
        yield node
        for field in ('body', 'orelse', 'finalbody'):
            if isinstance(node, (ast.If, ast.Try, ast.With)) and getattr(node, field, None):
                yield from _statements(getattr(node, field))
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                yield from _statements(handler.body)


def _targets(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _targets(elt)


def bound_names(module):
    """Names the module's source defines, star-imports from MXNet or (package) re-exports."""
    is_package = hasattr(module, '__path__')
    package = module.__name__ if is_package else module.__name__.rpartition('.')[0]
    with open(module.__file__) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in _statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                names.update(_targets(t))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            names.update(_targets(node.target))
        elif isinstance(node, ast.ImportFrom):
            source = _mxnet_source(node, package)
            if source is None:
                continue
            for alias in node.names:
                if alias.name == '*':  # the source's __all__, else what it defines itself
                    src = importlib.import_module(source)
                    star = getattr(src, '__all__', None)
                    names.update(star if star is not None else bound_names(src))
                elif is_package:
                    names.add(alias.asname or alias.name)
    return names


def module_names(key):
    module = import_key(key)
    candidates = set(getattr(module, '__all__', ())) | bound_names(module)
    out = {}
    for name in sorted(candidates):
        if name.startswith('_') or not hasattr(module, name):
            continue
        obj = getattr(module, name)
        if is_numpy_interface(obj) or name in ('np', 'npx', 'numpy', 'numpy_extension'):
            continue
        if isinstance(obj, types.ModuleType) and not obj.__name__.startswith('mxnet'):
            continue  # an imported third-party module (ctypes, logging, numpy as np ...)
        if name in OPTIONAL_IMPORTS or is_generated_operator(obj):
            continue  # (generated operators: the op table lists them)
        out[name] = kind(obj)
    return out


def main():
    modules = {key: module_names(key) for key in MODULES}
    modules = {key: names for key, names in modules.items() if names}  # (io.utils: all private)
    out = {
        'mxnet_version': mx.__version__,
        'generator': 'tools/make_golden_api.py',
        'python': '%d.%d' % sys.version_info[:2],
        'modules': modules,
    }
    folder = golden_dir('api')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, 'names.json')
    write_json(path, out)
    total = sum(len(v) for v in modules.values())
    print('wrote %s (%d modules, %d names)' % (path, len(modules), total))


if __name__ == '__main__':
    main()
