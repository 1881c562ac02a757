"""API coverage: every public name of MXNet 1.9.1's Python modules is in neomx or excluded.

``tests/golden/api/names.json`` (made by ``tools/make_golden_api.py`` in the oracle) lists, per
module (``mx``, ``mx.io``, ``mx.gluon.nn`` ...), the public names MXNet 1.9.1 defines or exports
there, each with its kind (``module``, ``class``, ``function``, ``other``); operator functions
are left to the operator coverage test (``tests/ops/test_op_coverage.py``).
``tests/api/api_exclusions.txt`` lists every name neomx lacks, one ``<module>.<name>  <reason>``
per line; a reason is ``pending: <what will bring it> (issue N)`` or ``permanent: <why never>``.

The tests fail when a name is missing and not excluded, when an excluded name is present
(delete its line, or run ``.venv/bin/python tools/update_api_exclusions.py``, so the file
shrinks as the API lands), and when a name neomx has is of an incompatible kind (a module where
MXNet has a class, a function where MXNet has a class ...; a class where MXNet has a factory
function, as ``mx.io.MNISTIter``, is compatible: both are called the same way).
"""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

import neomx

ROOT = Path(__file__).resolve().parents[2]
NAMES_FILE = ROOT / "tests" / "golden" / "api" / "names.json"
EXCLUSIONS_FILE = ROOT / "tests" / "api" / "api_exclusions.txt"
UPDATE_CMD = ".venv/bin/python tools/update_api_exclusions.py"
REASON = re.compile(r"^(pending: .*\(issue \d+[^)]*\).*|permanent: .+)$")
_MISSING = object()


def load_names() -> dict[str, dict[str, str]]:
    """module key ('mx', 'mx.gluon.nn', ...) -> {name: kind} of MXNet 1.9.1's public names."""
    with open(NAMES_FILE) as f:
        return json.load(f)["modules"]


def load_exclusions(path=EXCLUSIONS_FILE) -> dict[tuple[str, str], str]:
    """(module key, name) -> reason, from the exclusion file (``#`` comments, blank lines)."""
    out = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        qualname, _, reason = line.partition(" ")
        key, _, name = qualname.rpartition(".")
        if not key.startswith("mx") or not name:
            raise ValueError(f"{path}:{lineno}: expected 'mx.<module>.<name>  <reason>': {line!r}")
        out[(key, name)] = reason.strip()
    return out


def neomx_module(key: str):
    """The neomx module for a key ('mx.gluon.nn' -> neomx.gluon.nn), None if there is none.

    Attribute access first (as users write ``mx.gluon.nn``), then an import (a module MXNet
    imports eagerly may be imported lazily in neomx; its parent's entry checks the attribute).
    """
    if key == "mx":
        return neomx
    obj = neomx
    for part in key.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            break
    else:
        return obj
    try:
        return importlib.import_module("neomx" + key[2:])
    except ImportError:
        return None


def lookup(key: str, name: str):
    """neomx's object for MXNet's ``<key>.<name>``, or ``_MISSING``."""
    module = neomx_module(key)
    if module is None:
        return _MISSING
    return getattr(module, name, _MISSING)


def has_name(key: str, name: str) -> bool:
    return lookup(key, name) is not _MISSING


def kind_of(obj) -> str:
    import inspect
    import types
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "function" if callable(obj) else "other"


def compatible(mxnet_kind: str, neomx_kind: str) -> bool:
    """Whether neomx's kind serves MXNet's: same kind, a class for a factory function, and
    anything for a constant."""
    if mxnet_kind == "other" or mxnet_kind == neomx_kind:
        return True
    return mxnet_kind == "function" and neomx_kind == "class"


NAMES = load_names()
EXCLUDED = load_exclusions() if EXCLUSIONS_FILE.exists() else {}


@pytest.mark.parametrize("key", sorted(NAMES))
def test_every_name_is_present_or_excluded(key):
    missing = [n for n in NAMES[key] if (key, n) not in EXCLUDED and not has_name(key, n)]
    assert not missing, (
        f"{key} lacks {len(missing)} of MXNet 1.9.1's public names that "
        f"{EXCLUSIONS_FILE.relative_to(ROOT)} does not exclude: {', '.join(missing)}.\n"
        f"Implement them, or exclude each with its reason (run `{UPDATE_CMD}` to add "
        f"'pending' lines).")


@pytest.mark.parametrize("key", sorted(NAMES))
def test_excluded_names_are_missing(key):
    present = sorted(n for (k, n) in EXCLUDED if k == key and has_name(key, n))
    assert not present, (
        f"{key} now has {', '.join(present)}, still listed in "
        f"{EXCLUSIONS_FILE.relative_to(ROOT)}. Delete the line(s) "
        + ", ".join(f"'{key}.{n}'" for n in present)
        + f" from that file (or run `{UPDATE_CMD}`).")


@pytest.mark.parametrize("key", sorted(NAMES))
def test_kinds_match(key):
    wrong = []
    for name, mxnet_kind in NAMES[key].items():
        obj = lookup(key, name)
        if obj is not _MISSING and not compatible(mxnet_kind, kind_of(obj)):
            wrong.append(f"{name} (MXNet: {mxnet_kind}, neomx: {kind_of(obj)})")
    assert not wrong, f"{key}: names of another kind than MXNet 1.9.1's: {', '.join(wrong)}"


def test_exclusion_file_is_well_formed():
    stale = sorted(f"{k}.{n}" for (k, n) in EXCLUDED if n not in NAMES.get(k, ()))
    assert not stale, f"excluded names that MXNet 1.9.1 does not have (delete them): {stale}"
    bad = sorted(f"{k}.{n}  {r!r}" for (k, n), r in EXCLUDED.items() if not REASON.match(r))
    assert not bad, ("each reason must read 'pending: <capability> (issue N)' or "
                     f"'permanent: <why>': {bad}")


def test_names_file_covers_the_modules():
    for key in ("mx", "mx.io", "mx.ndarray", "mx.symbol", "mx.gluon", "mx.gluon.nn",
                "mx.optimizer", "mx.model", "mx.module", "mx.contrib", "mx.test_utils"):
        assert NAMES.get(key), key
    assert NAMES["mx.model"]["FeedForward"] == "class"
    assert NAMES["mx"]["nd"] == "module" and "np" not in NAMES["mx"]
    assert "FullyConnected" not in NAMES["mx.ndarray"]  # operators: the op table's
    assert "zeros" in NAMES["mx.ndarray"] and "NDArray" in NAMES["mx.ndarray"]
    assert not any(k.startswith(("mx.numpy", "mx.np")) for k in NAMES)
    assert not any(n.startswith("_") for names in NAMES.values() for n in names)


def test_kind_rules():
    assert kind_of(neomx) == "module" and kind_of(neomx.nd.NDArray) == "class"
    assert kind_of(neomx.nd.zeros) == "function" and kind_of(1.0) == "other"
    assert compatible("function", "class") and compatible("other", "function")
    assert not compatible("class", "function") and not compatible("module", "class")
    assert lookup("mx.no_such_module", "x") is _MISSING
    assert lookup("mx", "nd") is neomx.nd


def test_update_tool_keeps_reasons_and_drops_present_names(tmp_path):
    """tools/update_api_exclusions.py: kept reasons, default reasons by module, present names
    dropped, and a file the loader reads back."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "update_api_exclusions", ROOT / "tools" / "update_api_exclusions.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    names = {"mx": {"cpu": "function", "no_such_name_xyz": "function"},
             "mx.kvstore": {"KVStoreServer": "class"},
             "mx.gluon.nn": {"no_such_layer_xyz": "class"},
             "mx.no_such_module": {"Thing": "class"}}
    old = {("mx", "cpu"): "pending: context (issue 99)",
           ("mx", "no_such_name_xyz"): "pending: written by hand (issue 99)"}
    new, wrong_permanent = tool.compute(names, old)
    assert ("mx", "cpu") not in new and wrong_permanent == []
    assert new[("mx", "no_such_name_xyz")] == "pending: written by hand (issue 99)"
    assert new[("mx.kvstore", "KVStoreServer")].startswith("permanent:")
    assert "(issue 12)" in new[("mx.gluon.nn", "no_such_layer_xyz")]
    assert "(issue 19)" in new[("mx.no_such_module", "Thing")]
    path = tmp_path / "ex.txt"
    path.write_text(tool.render(names, new))
    assert load_exclusions(path) == new
    assert all(REASON.match(r) for r in new.values())
