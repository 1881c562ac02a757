"""The package layers import downwards only: ``ir`` under the passes (``graph``), ``symbol`` and
``executor``; ``ndarray`` beside them; no import cycle among ``symbol``, ``graph``,
``executor`` and ``ndarray``, at module level or inside functions."""
from __future__ import annotations

import ast
import pathlib

import neomx

ROOT = pathlib.Path(neomx.__file__).parent
LAYERS = ("ops", "engine", "ir", "graph", "symbol", "executor", "ndarray")

# what each layer may import among LAYERS (modules not listed, such as base, context or util,
# are leaves)
ALLOWED = {
    "ops": set(),
    "engine": set(),
    "ir": {"ops"},
    "graph": {"ir", "ops"},
    "symbol": {"ir", "graph", "ops"},
    "ndarray": {"ops", "engine"},
    "executor": {"ir", "graph", "symbol", "ndarray", "ops", "engine"},
}


def _imports(path: pathlib.Path, package: str):
    """neomx top-level packages imported by ``path`` (a module of ``package``), anywhere in it."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] == "neomx" and len(parts) > 1:
                    found.add(parts[1])
                continue
            base = ["neomx"] + package.split(".")
            if path.name != "__init__.py" or node.level > 1:
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = base[1:] + ((node.module or "").split(".") if node.module else [])
            if target and target[0]:
                found.add(target[0])
            elif not node.module:  # "from .. import x"
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "neomx" and len(parts) > 1:
                    found.add(parts[1])
    return found


def _layer_imports():
    deps = {}
    for layer in LAYERS:
        out = set()
        for path in (ROOT / layer).rglob("*.py"):
            out |= _imports(path, layer)
        deps[layer] = (out & set(LAYERS)) - {layer}
    return deps


def test_import_scanner_sees_relative_and_function_level_imports(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    from ..symbol import x\n    from . import y\n"
                   "import neomx.executor\nfrom neomx.graph.plan import Plan\n")
    assert _imports(mod, "ndarray") >= {"symbol", "executor", "graph"}


def test_layers_import_downwards_only():
    deps = _layer_imports()
    for layer, used in deps.items():
        assert used <= ALLOWED[layer], f"neomx.{layer} imports {sorted(used - ALLOWED[layer])}"


def test_no_cycles_among_the_core_packages():
    deps = _layer_imports()

    def reach(a, seen):
        for b in deps[a]:
            if b not in seen:
                seen.add(b)
                reach(b, seen)
        return seen
    for layer in LAYERS:
        assert layer not in reach(layer, set()), f"import cycle through neomx.{layer}"
