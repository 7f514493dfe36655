"""House metrics of issues 23 (the typed job) and 35 (what a maintainer pays): counted on the
source tree, before and after.

Prints one JSON object:

- ``many_parameter_functions``: functions and methods taking more than 8 parameters
  (``self``/``cls`` not counted), with their names;
- ``flag_messages``: string literals in library code (everything but ``cli/`` and ``ui/``)
  inside a ``raise`` statement that name a command-line flag (``--something``);
- ``k_check_sites``: places outside ``cli/`` that check a privacy level against 1
  (``k < 1``, ``k >= 1``, ``check_k(``/``_check_k(`` calls, ``ge=1`` on a ``k`` field);
- ``partition_size_sites``: places that derive a default partition size
  (``partition_size(k)``, ``adaptive_partition_size(``, ``freeform_partition_size(`` calls);
- ``tables_top_level``: modules and packages directly in ``tables/``;
- ``kwargs_functions``: functions and methods taking ``**anything``;
- ``decorator_wrappers``: functions nested in a decorator (or decorator factory) that take
  ``**anything`` and call the function being decorated (a parameter of an enclosing function);
- ``params_pop``: ``params.pop(``/``kwargs.pop(`` calls (any receiver that is a function's
  ``**`` parameter, or named ``params``/``kwargs``);
- ``get_current_context``: ``click.get_current_context()`` calls (the context as a side
  channel instead of a parameter);
- ``locals_captures``: ``locals()`` calls;
- ``new_manifest_sites``: ``new_manifest(`` call sites;
- ``context_vars``: module-level ``ContextVar(`` definitions, each ``file:line:name``, and
  ``context_parameters``: those of them that pass a run's parameters (a side channel: what
  the run does or states depends on a value its callers never pass). The others are plumbing,
  listed in :data:`PLUMBING` with why: they carry no parameter of a release. Before issue 35's
  ``strict`` change there was also ``tables/risk/leakage.py``'s ``_REFUSING`` (``--strict``
  reaching the release checks), now a field of the typed jobs;
- ``files_per_option``: for each job field (the keys of ``anonymatch.tables.job.PARAMETERS``,
  imported from the measured tree), the number of files of the tree naming it as an
  identifier or as a string (a token equal to it), and the sum over the fields.

Usage: ``python benchmarks/house_metrics.py [SRC]`` (default ``src/anonymatch``); several
trees: ``python benchmarks/house_metrics.py BEFORE AFTER`` prints each and, for every count,
before → after. O(size of the trees).
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

PLUMBING = {
    "_STAGING": "core/files.py: the all-or-nothing output set the writes of a block join (one "
    "commit of the release, its manifest and sidecars): where files go, not what they hold",
    "_CAPTURED": "core/manifest.py: collects the manifests completed inside a block for the "
    "caller (the web app's run): an output handed back, never read by the release",
    "_CACHE": "tables/io/reuse.py: a memo of parsed releases by content within a block: the "
    "same result, computed once",
}
"""The module-level ContextVars that pass no run parameter, and why. ``_SEED_FILE``
(core/manifest.py: ``--seed-file`` makes ``finish_manifest`` state ``seed_file: true``) is
not among them: what the manifest states depends on it, so it counts as a parameter."""


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def _library(path: Path, root: Path) -> bool:
    top = path.relative_to(root).parts[0]
    return top not in ("cli", "ui")


def _functions(
    tree: ast.AST, enclosing: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...] = ()
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, tuple[ast.AST, ...]]]:
    """Every function of ``tree`` with the functions enclosing it, outermost first."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, enclosing
            yield from _functions(node, (*enclosing, node))
        else:
            yield from _functions(node, enclosing)


def _names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = node.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def _wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef, enclosing: tuple[ast.AST, ...]) -> bool:
    """A function taking ``**x`` that calls a parameter of a function enclosing it: the
    wrapper a decorator returns around the function it decorates."""
    if node.args.kwarg is None or not enclosing:
        return False
    wrapped = set().union(*(_names(f) for f in enclosing if isinstance(f, ast.FunctionDef)))
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in wrapped
        for sub in ast.walk(node)
    )


def _pops(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[int]:
    """Lines of ``X.pop(`` calls in ``node`` (not in nested functions: they count alone) whose
    receiver is its ``**`` parameter or is named ``params``/``kwargs``."""
    receivers = {"params", "kwargs"} | ({node.args.kwarg.arg} if node.args.kwarg else set())
    lines = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == "pop"
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id in receivers
        ):
            lines.append(sub.lineno)
        stack.extend(ast.iter_child_nodes(sub))
    return lines


def _context_vars(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of the module-level assignments of a ``ContextVar(...)`` call."""
    out = []
    value: ast.expr | None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Call):
            called = getattr(value.func, "id", None) or getattr(value.func, "attr", None)
            if called == "ContextVar":
                out += [(node.lineno, t.id) for t in targets if isinstance(t, ast.Name)]
    return out


def _tokens(text: str) -> set[str]:
    """The identifiers of a module and the values of its plain string literals."""
    out: set[str] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME:
            out.add(tok.string)
        elif tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):  # f-strings and the like
                continue
            if isinstance(value, str):
                out.add(value)
    return out


def job_fields(root: Path) -> list[str]:
    """The keys of ``anonymatch.tables.job.PARAMETERS`` of the tree at ``root`` (imported in a
    child process, from that tree)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from anonymatch.tables.job import PARAMETERS; print(json.dumps(list(PARAMETERS)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root.resolve().parent)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def measure(root: Path) -> dict[str, object]:
    many: list[str] = []
    flags: list[str] = []
    k_sites: list[str] = []
    size_sites: list[str] = []
    kwargs: list[str] = []
    wrappers: list[str] = []
    pops: list[str] = []
    contexts: list[str] = []
    captures: list[str] = []
    manifests: list[str] = []
    context_vars: list[str] = []
    tokens: dict[Path, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        text = path.read_text()
        tree = ast.parse(text)
        tokens[rel] = _tokens(text)
        context_vars += [f"{rel}:{line}:{name}" for line, name in _context_vars(tree)]
        for func, enclosing in _functions(tree):
            if func.args.kwarg is not None:
                kwargs.append(f"{rel}:{func.lineno}:{func.name}(**{func.args.kwarg.arg})")
            if _wrapper(func, enclosing):
                wrappers.append(f"{rel}:{func.lineno}:{func.name}")
            pops += [f"{rel}:{line}" for line in _pops(func)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if called == "get_current_context":
                    contexts.append(f"{rel}:{node.lineno}")
                elif called == "locals" and isinstance(node.func, ast.Name):
                    captures.append(f"{rel}:{node.lineno}")
                elif called == "new_manifest":
                    manifests.append(f"{rel}:{node.lineno}")
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
    parameters = [c for c in context_vars if c.rsplit(":", 1)[1] not in PLUMBING]
    fields = job_fields(root)
    per_option = {f: sum(f in names for names in tokens.values()) for f in fields}
    return {
        "kwargs_functions": {"count": len(kwargs), "where": kwargs},
        "decorator_wrappers": {"count": len(wrappers), "where": wrappers},
        "params_pop": {"count": len(pops), "where": pops},
        "get_current_context": {"count": len(contexts), "where": contexts},
        "locals_captures": {"count": len(captures), "where": captures},
        "new_manifest_sites": {"count": len(manifests), "where": manifests},
        "context_vars": {"count": len(context_vars), "where": context_vars},
        "context_parameters": {"count": len(parameters), "where": parameters},
        "files_per_option": {"count": sum(per_option.values()), "fields": per_option},
        "many_parameter_functions": {"count": len(many), "where": many},
        "flag_messages": {"count": len(flags), "where": flags},
        "k_check_sites": {"count": len(k_sites), "where": k_sites},
        "partition_size_sites": {"count": len(size_sites), "where": size_sites},
        "tables_top_level": {"count": len(tables), "names": sorted(tables)},
    }


def compare(trees: list[Path]) -> dict[str, object]:
    """Each tree's figures and, per count, the counts from the first tree to the last."""
    figures = {str(t): measure(t) for t in trees}
    first, last = figures[str(trees[0])], figures[str(trees[-1])]
    counts = {
        name: " -> ".join(str(cast_count(figures[str(t)][name])) for t in trees)
        for name in first
        if name in last
    }
    return {"counts": counts, "trees": figures}


def cast_count(figure: object) -> object:
    return figure.get("count") if isinstance(figure, dict) else figure


if __name__ == "__main__":
    trees = [Path(a) for a in sys.argv[1:]] or [Path("src/anonymatch")]
    if len(trees) == 1:
        print(json.dumps(measure(trees[0]), indent=1))
    else:
        print(json.dumps(compare(trees), indent=1))
