"""The package's layering, beyond what the import contracts check: no module reaches into
another module's private names (a leading underscore), so each module's surface is what it
chose to make public."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "analysis" / "hepfmt"


def _private_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    modules: set[str] = set()  # local names bound to hepfmt modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hepfmt"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {node.module} import {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.startswith("hepfmt")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    offenders = {str(p.relative_to(ROOT)): uses for p in sorted(PACKAGE.rglob("*.py"))
                 if (uses := _private_uses(p))}
    assert offenders == {}
