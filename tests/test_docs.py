"""The public fronts are documented (numpydoc) and their examples run; the documentation site
(mkdocs.yml) covers every page of docs/ and builds strictly; README.md stays a front page.

``pytest`` collects the doctests of ``src/anonymatch`` (``--doctest-modules`` in pyproject); the
examples of the fronts are run here as well so that ``pytest tests`` checks them too.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
from pathlib import Path

import pytest
from numpydoc.docscrape import FunctionDoc, get_doc_object
from numpydoc.validate import validate

FRONTS = [
    "anonymatch.tables",
    "anonymatch.sets",
    "anonymatch.sparse",
    "anonymatch.graphs",
    "anonymatch.relational",
]
FUNCTIONS = [(m, f) for m in FRONTS for f in ("anonymize", "verify", "evaluate")]
FUNCTIONS.append(("anonymatch.tables", "risk"))
SECTIONS = ["Parameters", "Returns", "Raises", "Notes", "References", "Examples"]


def _function(module: str, name: str) -> object:
    # getattr, not numpydoc's name lookup: ``anonymatch.<kind>.verify`` is also a module
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("module", "name"), FUNCTIONS)
def test_front_docstring_is_complete(module: str, name: str) -> None:
    func = _function(module, name)
    assert callable(func)
    doc = FunctionDoc(func)
    for section in SECTIONS:
        assert doc[section], f"{module}.{name}: no {section} section"
    notes = "\n".join(doc["Notes"])
    assert "Time" in notes or "time" in notes, f"{module}.{name}: no complexity in Notes"
    documented = {p.name.lstrip("*") for p in doc["Parameters"]}  # numpydoc: ``**kwargs``
    actual = set(inspect.signature(func).parameters)  # type: ignore[arg-type]
    assert documented == actual, f"{module}.{name}: documented {documented}, actual {actual}"


@pytest.mark.parametrize(("module", "name"), FUNCTIONS)
def test_front_docstring_passes_numpydoc_validation(module: str, name: str) -> None:
    result = validate(get_doc_object(_function(module, name)))
    assert result["errors"] == [], f"{module}.{name}: {result['errors']}"


def test_top_level_functions_are_the_documented_table_front() -> None:
    import anonymatch

    for name in ("anonymize", "verify", "evaluate", "risk"):
        assert getattr(anonymatch, name) is _function("anonymatch.tables", name)
    assert "original" in (anonymatch.__doc__ or "")


@pytest.mark.parametrize("module", [*FRONTS, "anonymatch"])
def test_examples_run(module: str) -> None:
    mod = importlib.import_module(module)
    failed, attempted = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert failed == 0
    if module != "anonymatch":
        assert attempted >= 9  # at least three examples per front function


@pytest.mark.parametrize(
    ("page", "least", "needs"),
    [
        ("reading-releases.md", 10, None),  # reading a release
        ("analysing.md", 30, "opendp"),  # draws, Rubin's rules and the DP companion
    ],
)
def test_page_runs_on_heart_statlog(
    monkeypatch: pytest.MonkeyPatch, page: str, least: int, needs: str | None
) -> None:
    """A docs page's code and the outputs shown, on the real data."""
    if needs is not None:
        pytest.importorskip(needs, reason=f"{needs} not installed (pip install 'anonymatch[dp]')")
    root = Path(__file__).resolve().parents[1]
    data = Path(os.environ.get("ANONYMATCH_DATA", root.parent / "shared" / "datasets"))
    if not (data / "heart_statlog" / "heart.dat").exists():
        pytest.skip("heart_statlog not available (set ANONYMATCH_DATA)")
    monkeypatch.setenv("ANONYMATCH_DATA", str(data))
    monkeypatch.chdir(root)
    failed, attempted = doctest.testfile(
        str(root / "docs" / page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert attempted >= least
    assert failed == 0


ANALYST = [
    ("anonymatch.tables.models.draws", f)
    for f in ("plain_draws", "parse_estimate", "combine", "read_draw", "published_tables")
] + [("anonymatch.tables.models.dp", f) for f in ("parse_workload", "companion")]
ANALYST += [("anonymatch.report.analyst", f) for f in ("report_draws", "models_table")]


@pytest.mark.parametrize(("module", "name"), ANALYST)
def test_analyst_functions_pass_numpydoc_validation(module: str, name: str) -> None:
    result = validate(get_doc_object(_function(module, name)))
    errors = [e for e in result["errors"] if e[0] not in ("SA01", "EX01", "ES01")]
    assert errors == [], f"{module}.{name}: {errors}"


READERS = [
    ("anonymatch.tables.io.release", f)
    for f in ("read_release", "midpoints", "mean_bounds", "uniform_histogram")
] + [
    ("anonymatch.app.infer", "infer_job"),
    ("anonymatch.app.jobfile", "load_job"),
    ("anonymatch.app.jobfile", "parse_job"),
    ("anonymatch.app.jobfile", "render_toml"),
]


@pytest.mark.parametrize(("module", "name"), READERS)
def test_job_and_reader_functions_pass_numpydoc_validation(module: str, name: str) -> None:
    result = validate(get_doc_object(_function(module, name)))
    errors = [e for e in result["errors"] if e[0] not in ("SA01", "EX01", "ES01")]
    assert errors == [], f"{module}.{name}: {errors}"


def test_release_readers_are_top_level() -> None:
    import anonymatch
    from anonymatch.tables.io import release

    for name in ("read_release", "midpoints", "mean_bounds", "uniform_histogram"):
        assert getattr(anonymatch, name) is getattr(release, name)
    with pytest.raises(AttributeError):
        anonymatch.no_such_function  # noqa: B018


# --- the documentation site (mkdocs.yml) ----------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def _nav_pages(node: object) -> list[str]:
    """The page paths of a mkdocs nav (a list of pages, ``{title: page}`` and sections)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_every_docs_page_is_in_the_site_nav() -> None:
    """Every docs/**/*.md is reachable from mkdocs.yml's nav, and every nav entry exists."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page is twice in the nav"
    excluded = [e.strip() for e in config.get("exclude_docs", "").splitlines() if e.strip()]
    docs = ROOT / "docs"
    pages = {
        p.relative_to(docs).as_posix()
        for p in docs.rglob("*.md")
        if not any(p.relative_to(docs).as_posix().startswith(e) for e in excluded)
    }
    assert sorted(pages - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - pages) == [], "nav entries without a page"


def test_readme_is_a_front_page_whose_links_resolve() -> None:
    """README.md stays short (the manual is docs/cli.md, docs/python.md, …); its links work."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) < 6 * 1024
    for needle in ("make run", "make test", "make docs", "docs/cli.md", "docs/python.md"):
        assert needle in text, needle
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to missing {target}"


def test_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict`` (what ``make docs`` runs): no warning, the fronts rendered.

    Not ``--quiet``: mkdocs 1.6 then no longer counts the warnings, and a strict build passes.
    """
    import subprocess
    import sys

    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason=f"{module} not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"]
        + ["-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for module, name in FUNCTIONS:
        page = (site / "api" / module.split(".")[1] / "index.html").read_text(encoding="utf-8")
        assert f'id="{module}.{name}"' in page, f"{module}.{name} not on its API page"
    errors = (site / "api" / "errors" / "index.html").read_text(encoding="utf-8")
    assert 'id="anonymatch.core.errors.InputError"' in errors
    # the docstrings' Sphinx roles render as code, never as raw `:func:` text (issue 37)
    for page in (site / "api").rglob("index.html"):
        raw = re.findall(r":(?:func|class|meth|attr|mod|data):<code>", page.read_text("utf-8"))
        assert not raw, f"{page.parent.name}: {len(raw)} raw roles"
