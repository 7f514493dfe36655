"""The public fronts are documented (numpydoc) and their examples run.

``pytest`` collects the doctests of ``src/anonymatch`` (``--doctest-modules`` in pyproject); the
examples of the fronts are run here as well so that ``pytest tests`` checks them too.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest
from numpydoc.docscrape import FunctionDoc, get_doc_object
from numpydoc.validate import validate

FRONTS = ["anonymatch.tables", "anonymatch.sets", "anonymatch.sparse", "anonymatch.graphs"]
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
    documented = {p.name for p in doc["Parameters"]}
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


def test_reading_releases_page_runs_on_heart_statlog(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reading-releases.md: its code and the outputs shown, on the real data."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    data = Path(os.environ.get("ANONYMATCH_DATA", root.parent / "shared" / "datasets"))
    if not (data / "heart_statlog" / "heart.dat").exists():
        pytest.skip("heart_statlog not available (set ANONYMATCH_DATA)")
    monkeypatch.setenv("ANONYMATCH_DATA", str(data))
    monkeypatch.chdir(root)
    failed, attempted = doctest.testfile(
        str(root / "docs" / "reading-releases.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert attempted >= 10
    assert failed == 0


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
