"""Operator coverage: every public operator name of MXNet 1.9.1 is in neomx or excluded.

``tests/golden/optable/names.json`` (made by ``tools/make_golden_optable.py`` in the oracle)
lists MXNet 1.9.1's public operator functions per namespace (``nd``, ``sym``, and their
``random``, ``linalg``, ``contrib``, ``image``). ``tests/ops/op_exclusions.txt`` lists every name
neomx lacks, one ``<namespace>.<name>  <reason>`` per line; a reason is ``pending: <what will
bring it> (issue N)`` or ``permanent: <why never>``.

The tests fail when a name is missing and not excluded, and when an excluded name is present
(delete its line, or run ``.venv/bin/python tools/update_op_exclusions.py``, so the file
shrinks as operators land).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import neomx

ROOT = Path(__file__).resolve().parents[2]
NAMES_FILE = ROOT / "tests" / "golden" / "optable" / "names.json"
EXCLUSIONS_FILE = ROOT / "tests" / "ops" / "op_exclusions.txt"
UPDATE_CMD = ".venv/bin/python tools/update_op_exclusions.py"
REASON = re.compile(r"^(pending: .*\(issue \d+[^)]*\).*|permanent: .+)$")


def load_names() -> dict[str, list[str]]:
    """namespace key ('nd', 'sym.contrib', ...) -> MXNet 1.9.1's public operator names."""
    with open(NAMES_FILE) as f:
        return json.load(f)["namespaces"]


def load_exclusions(path=EXCLUSIONS_FILE) -> dict[tuple[str, str], str]:
    """(namespace, name) -> reason, from the exclusion file (``#`` comments, blank lines)."""
    out = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        qualname, _, reason = line.partition(" ")
        namespace, _, name = qualname.rpartition(".")
        if not namespace or not name:
            raise ValueError(f"{path}:{lineno}: expected '<namespace>.<name>  <reason>': {line!r}")
        out[(namespace, name)] = reason.strip()
    return out


def neomx_namespace(key: str):
    """The neomx module for a namespace key ('nd.linalg' -> neomx.nd.linalg), None if absent."""
    obj = neomx
    for part in key.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def has_name(key: str, name: str) -> bool:
    return callable(getattr(neomx_namespace(key), name, None))


NAMES = load_names()
EXCLUDED = load_exclusions() if EXCLUSIONS_FILE.exists() else {}


@pytest.mark.parametrize("key", sorted(NAMES))
def test_every_operator_is_present_or_excluded(key):
    missing = [n for n in NAMES[key] if not has_name(key, n) and (key, n) not in EXCLUDED]
    assert not missing, (
        f"mx.{key} lacks {len(missing)} of MXNet 1.9.1's public operators that "
        f"{EXCLUSIONS_FILE.relative_to(ROOT)} does not exclude: {', '.join(missing)}.\n"
        f"Implement them, or exclude each with its reason (run `{UPDATE_CMD}` to add "
        f"'pending' lines).")


@pytest.mark.parametrize("key", sorted(NAMES))
def test_excluded_operators_are_missing(key):
    present = sorted(n for (k, n) in EXCLUDED if k == key and has_name(key, n))
    assert not present, (
        f"mx.{key} now has {', '.join(present)}, still listed in "
        f"{EXCLUSIONS_FILE.relative_to(ROOT)}. Delete the line(s) "
        + ", ".join(f"'{key}.{n}'" for n in present)
        + f" from that file (or run `{UPDATE_CMD}`).")


def test_exclusion_file_is_well_formed():
    stale = sorted(f"{k}.{n}" for (k, n) in EXCLUDED if n not in NAMES.get(k, ()))
    assert not stale, f"excluded names that MXNet 1.9.1 does not have (delete them): {stale}"
    bad = sorted(f"{k}.{n}  {r!r}" for (k, n), r in EXCLUDED.items() if not REASON.match(r))
    assert not bad, ("each reason must read 'pending: <capability> (issue N)' or "
                     f"'permanent: <why>': {bad}")


def test_names_file_covers_the_namespaces():
    for base in ("nd", "sym"):
        for sub in ("", ".random", ".linalg", ".contrib", ".image"):
            assert NAMES.get(base + sub), base + sub
    assert "FullyConnected" in NAMES["nd"] and "Variable" in NAMES["sym"]
    assert not any(n.startswith("_") for names in NAMES.values() for n in names)


def test_update_tool_keeps_reasons_and_drops_present_names(tmp_path):
    """tools/update_op_exclusions.py: kept reasons, default reasons, present names dropped,
    and a file the loader reads back."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "update_op_exclusions", ROOT / "tools" / "update_op_exclusions.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    names = {"nd": ["FullyConnected", "BatchNorm_v1", "khatri_rao", "no_such_op_xyz"],
             "nd.contrib": ["backward_quadratic", "quantized_rnn", "dgl_no_such_op_xyz"]}
    old = {("nd", "FullyConnected"): "pending: operator table (issue 10)",
           ("nd", "no_such_op_xyz"): "pending: written by hand (issue 99)"}
    new, wrong_permanent = tool.compute(names, old)
    assert ("nd", "FullyConnected") not in new and wrong_permanent == []
    assert new[("nd", "no_such_op_xyz")] == "pending: written by hand (issue 99)"
    assert new[("nd", "BatchNorm_v1")].startswith("permanent:")
    assert new[("nd.contrib", "backward_quadratic")].startswith("permanent:")
    assert "(issue 16)" in new[("nd.contrib", "dgl_no_such_op_xyz")]
    assert "(issue 19)" in new[("nd.contrib", "quantized_rnn")]
    path = tmp_path / "ex.txt"
    path.write_text(tool.render(names, new))
    assert load_exclusions(path) == new
    assert all(REASON.match(r) for r in new.values())
