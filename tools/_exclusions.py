"""What tools/update_op_exclusions.py and tools/update_api_exclusions.py share: an exclusion file
(one ``<module>.<name>  <reason>`` line per MXNet name neomx lacks) recomputed from what neomx
has, keeping the reasons already written."""
from __future__ import annotations

import os
import re


def first_reason(rules, qualname: str, default: str) -> str:
    """The reason of the first ``(pattern, reason)`` rule matching ``qualname``."""
    for pattern, reason in rules:
        if re.match(pattern, qualname):
            return reason
    return default


def compute(names, old, has_name, default_reason):
    """(new exclusions {(module, name): reason}, names now present that had a permanent line):
    every name of ``names`` ({module: names}) that ``has_name`` denies, with its old reason or
    ``default_reason(qualname)``."""
    new, wrong_permanent = {}, []
    for key, entries in names.items():
        for name in entries:
            reason = old.get((key, name))
            if has_name(key, name):
                if reason and reason.startswith("permanent:"):
                    wrong_permanent.append(f"{key}.{name}")
                continue
            new[(key, name)] = reason or default_reason(f"{key}.{name}")
    return new, wrong_permanent


def render(header: str, names, excl) -> str:
    """The file: ``header``, then the permanent lines, then the pending ones, each in the order
    of ``names``' modules."""
    order = {key: i for i, key in enumerate(names)}
    items = sorted(excl.items(), key=lambda kv: (not kv[1].startswith("permanent:"),
                                                  order[kv[0][0]], kv[0][1]))
    width = max((len(f"{k}.{n}") for (k, n), _ in items), default=0) + 2
    lines = [header]
    section = None
    for (key, name), reason in items:
        kind = reason.split(":", 1)[0]
        if kind != section:
            section = kind
            lines.append(f"\n# --- {kind} ---\n")
        lines.append(f"{key}.{name}".ljust(width) + reason + "\n")
    return "".join(lines)


def report_changes(old, new, wrong_permanent):
    """Print the lines a rewrite drops and adds, and permanent lines now wrong."""
    dropped = sorted(f"{k}.{n}" for k, n in set(old) - set(new))
    added = sorted(f"{k}.{n}" for k, n in set(new) - set(old))
    for label, items in (("now present, line removed", dropped), ("missing, line added", added)):
        if items:
            print(f"{label} ({len(items)}): {' '.join(items)}")
    for q in wrong_permanent:
        print(f"note: {q} was excluded as permanent but neomx has it now")


def write_or_check(path, root, text: str, check: bool) -> int:
    """With ``check``: 0 when the file already says ``text``, else 1. Otherwise write it
    (atomically) when it differs."""
    current = path.read_text() if os.path.exists(path) else None
    if check:
        return 0 if current == text else 1
    if current != text:
        from neomx.util import atomic_write_text
        atomic_write_text(str(path), text)
        print(f"wrote {os.path.relpath(path, root)}")
    return 0
