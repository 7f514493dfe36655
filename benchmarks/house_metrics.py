"""House metrics of issue 23 (the typed job): counted on the source tree, before and after.

Prints one JSON object:

- ``many_parameter_functions``: functions and methods taking more than 8 parameters
  (``self``/``cls`` not counted), with their names;
- ``flag_messages``: string literals in library code (everything but ``cli/`` and ``ui/``)
  inside a ``raise`` statement that name a command-line flag (``--something``);
- ``k_check_sites``: places outside ``cli/`` that check a privacy level against 1
  (``k < 1``, ``k >= 1``, ``check_k(``/``_check_k(`` calls, ``ge=1`` on a ``k`` field);
- ``partition_size_sites``: places that derive a default partition size
  (``partition_size(k)``, ``adaptive_partition_size(``, ``freeform_partition_size(`` calls);
- ``tables_top_level``: modules and packages directly in ``tables/``.

Usage: ``python benchmarks/house_metrics.py [SRC]`` (default ``src/anonymatch``). O(size of the
tree).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def _library(path: Path, root: Path) -> bool:
    top = path.relative_to(root).parts[0]
    return top not in ("cli", "ui")


def measure(root: Path) -> dict[str, object]:
    many: list[str] = []
    flags: list[str] = []
    k_sites: list[str] = []
    size_sites: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        text = path.read_text()
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _params(node) > 8:
                many.append(f"{rel}:{node.lineno}:{node.name}({_params(node)})")
            if isinstance(node, ast.Raise) and _library(path, root):
                for sub in ast.walk(node):
                    if (
                        isinstance(sub, ast.Constant)
                        and isinstance(sub.value, str)
                        and FLAG.search(sub.value)
                    ):
                        flags.append(f"{rel}:{sub.lineno}")
                        break
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in ("partition_size", "adaptive_partition_size", "freeform_partition_size"):
                    size_sites.append(f"{rel}:{node.lineno}")
                if name in ("check_k", "_check_k") and rel.parts[0] != "cli":
                    k_sites.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.Compare) and rel.parts[0] != "cli":
                left = node.left
                if (
                    isinstance(left, ast.Name)
                    and left.id in ("k", "level", "delta")
                    and len(node.comparators) == 1
                    and isinstance(node.comparators[0], ast.Constant)
                    and node.comparators[0].value == 1
                    and isinstance(node.ops[0], ast.Lt | ast.GtE)
                ):
                    k_sites.append(f"{rel}:{node.lineno}")
    tables = [
        p.name
        for p in (root / "tables").iterdir()
        if p.name not in ("__init__.py", "__pycache__")
        and (p.suffix == ".py" or (p / "__init__.py").exists())
    ]
    return {
        "many_parameter_functions": {"count": len(many), "where": many},
        "flag_messages": {"count": len(flags), "where": flags},
        "k_check_sites": {"count": len(k_sites), "where": k_sites},
        "partition_size_sites": {"count": len(size_sites), "where": size_sites},
        "tables_top_level": {"count": len(tables), "names": sorted(tables)},
    }


if __name__ == "__main__":
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src/anonymatch")
    print(json.dumps(measure(src), indent=1))
