"""The house rules of the package layout (CONTRIBUTING.md): checked on the source tree.

- no import circle between anonymatch's modules (module-level and deferred imports alike);
- no module name carries a data kind as a suffix or prefix: the kind is the package;
- core imports nothing but core (no data kind, no application layer, not the package root);
- app (job files, output paths, ``anonymatch init``'s drafting) is imported only by cli, ui and
  report: no data kind and not core;
- a data kind (tables, sets, sparse, graphs, relational) imports only from core and from
  itself; the exceptions are declared here with their reason;
- tables has at most 15 top-level modules and packages (``__init__`` aside);
- the command modules of ``cli`` import nothing from each other but the shared ``options``,
  ``steps`` (option groups as typed values) and ``config`` (``--config`` job files, ``verify
  --manifest``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

SRC = Path(__file__).resolve().parents[1] / "src"
KINDS = ("tables", "sets", "sparse", "graphs", "relational")
# Cross-kind imports allowed on purpose (importer prefix, imported prefix): the sparse and set
# dataset loaders read the same public Adult file as the tables.
ALLOWED_CROSS_KIND = {
    ("anonymatch.sets.datasets", "anonymatch.tables"),
    ("anonymatch.sparse.datasets", "anonymatch.tables"),
    # relational data is a table and a set per person: its kind composes the two kinds' cell
    # grammars, encodings, builders, recodings and compatibility checks instead of copying them
    ("anonymatch.relational", "anonymatch.tables"),
    ("anonymatch.relational", "anonymatch.sets"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every anonymatch module a file imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("anonymatch"):
                found.add(node.module)
                found.update(
                    f"{node.module}.{a.name}" for a in node.names if is_module(node.module, a.name)
                )
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("anonymatch"))
    return found


def is_module(package: str, name: str) -> bool:
    base = SRC.joinpath(*package.split("."))
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}
GRAPH = nx.DiGraph(
    (name, target)
    for name, path in MODULES.items()
    for target in imports(path)
    if target in MODULES and target != name
)


def test_no_import_circle() -> None:
    # A package's __init__ re-exporting its own submodules is not a circle of code: a submodule
    # importing its package only needs the package object, which exists before its __init__ runs.
    graph = GRAPH.copy()
    graph.remove_edges_from(
        [(a, b) for a, b in GRAPH.edges if b.startswith(a + ".") or a.startswith(b + ".")]
    )
    assert list(nx.simple_cycles(graph)) == []


def test_no_data_kind_in_module_names() -> None:
    kind = re.compile(r"(^|_)(sets|sparse|tables|graphs|cli)(_|$)")
    offenders = [
        name
        for name in MODULES
        if kind.search(name.rsplit(".", 1)[-1]) and name.rsplit(".", 1)[-1] not in KINDS + ("cli",)
    ]
    assert offenders == []


def test_kinds_import_only_core_and_themselves() -> None:
    crossing = []
    for a, b in GRAPH.edges:
        kind_a = next((k for k in KINDS if a.startswith(f"anonymatch.{k}")), None)
        kind_b = next((k for k in KINDS if b.startswith(f"anonymatch.{k}")), None)
        allowed = any(a.startswith(x) and b.startswith(y) for x, y in ALLOWED_CROSS_KIND)
        if kind_a and kind_b and kind_a != kind_b and not allowed:
            crossing.append((a, b))
    assert crossing == []


def test_core_imports_only_core() -> None:
    # core is the bottom layer: no data kind, no application layer (app, cli, ui, report) and
    # not the package root (the version is core.version, re-exported by the root)
    assert [
        (a, b)
        for a, b in GRAPH.edges
        if in_package(a, "anonymatch.core") and not in_package(b, "anonymatch.core")
    ] == []


def test_app_is_imported_only_by_the_front_ends() -> None:
    # app (job files, output paths, drafting a job) sits above the kinds and core: only the
    # command line, the web app and the report use it
    front_ends = ("anonymatch.app", "anonymatch.cli", "anonymatch.ui", "anonymatch.report")
    assert [
        (a, b)
        for a, b in GRAPH.edges
        if in_package(b, "anonymatch.app") and not any(in_package(a, f) for f in front_ends)
    ] == []


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_tables_has_few_top_level_entries() -> None:
    # tables reads like the other kinds: its modules are grouped into inner packages (columns,
    # io, models, risk, methods) rather than piling up side by side; 15 since release series
    # (issue 40): a package of their own (series: verify, publish, store)
    entries = [
        p.name
        for p in (SRC / "anonymatch" / "tables").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()
    ]
    assert len(entries) <= 15, sorted(entries)


def test_cli_modules_share_only_options() -> None:
    for a, b in GRAPH.edges:
        if a.startswith("anonymatch.cli.") and b.startswith("anonymatch.cli."):
            # cli.analysis: the analyst's options of evaluate and anonymize, shared with draw;
            # cli.series: beside verify-series, the --series options of risk and report
            shared = ("anonymatch.cli.options", "anonymatch.cli.steps", "anonymatch.cli.config",
                      "anonymatch.cli.analysis", "anonymatch.cli.series")  # fmt: skip
            assert b in shared, (a, b)
