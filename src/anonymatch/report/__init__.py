"""The privacy officer's HTML report of a release: one self-contained file.

``build_report(manifest, original, release)`` renders the report of any release anonymatch
made (tables, adaptive, (k,ℓ), transactions, kᵐ, sparse, graphs) from its audit manifest and,
when given, the original and the release files; ``write_report`` writes it atomically. The
sections are what was published (digests, counts, columns by role, columns released unchanged
and flagged), the guarantee in plain language and the verification certificate, risk, utility,
parameters and timings, and what the release does not protect against.

The HTML is rendered by Jinja2 templates (package data ``templates/``) with inline CSS and
plots as inline SVG data URIs (matplotlib), so it opens without network access and prints to a
clean PDF (print stylesheet). Shared machinery lives in ``common``, ``model`` and ``plots``;
each data kind has a small section builder (``tables``, ``sets``, ``sparse``, ``graphs``).

Cost: reading the files plus each kind's figures, e.g. the risk figures of a table
(O(pairs·√n), ``anonymatch.tables.risk.risk``); a few seconds on UCI Adult.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.report.model import Figure, Inputs, KindSections, Section, Table

__all__ = ["Figure", "Inputs", "Section", "Table", "build_report", "write_report"]

_BUILDERS = {
    "table": "anonymatch.report.tables",
    "transactions": "anonymatch.report.sets",
    "sparse": "anonymatch.report.sparse",
    "graph": "anonymatch.report.graphs",
}


def build_report(
    manifest: Mapping[str, Any],
    original: str | os.PathLike[str] | None = None,
    release: str | os.PathLike[str] | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    threshold: float = 0.2,
    check_digests: bool = True,
) -> str:
    """The HTML report of a release.

    Parameters
    ----------
    manifest : mapping
        The release's audit manifest (``anonymatch-manifest/1``).
    original, release : path-like, optional
        The input the release was made from and the release itself. Without them the report
        holds what the manifest says (risk and distributions are marked as not computed).
    options : mapping, optional
        How to read the original: for tables ``csv`` (a ``tables.io.CsvOptions``),
        ``na_values``, ``drop_missing``; for transactions ``fmt``, ``item_sep``,
        ``id_column``, ``item_column``; for sparse data ``fmt``, ``adjacency``; for graphs
        ``n_vertices``.
    threshold : float, default 0.2
        Prosecutor risk above which a record counts as at risk (tables).
    check_digests : bool, default True
        Refuse files whose SHA-256 differs from the manifest's.

    Returns
    -------
    str
        A complete HTML document with no external resource.

    Raises
    ------
    anonymatch.core.errors.InputError
        An unknown manifest, only one of the two files, a file that is not the one the
        manifest describes, or unreadable data.
    """
    import importlib

    started = time.perf_counter()
    if not isinstance(manifest, Mapping) or "guarantee" not in manifest:
        raise InputError("not an anonymatch manifest (no 'guarantee' block)")
    kind = manifest.get("data_kind")
    if kind not in _BUILDERS:
        raise InputError(f"the manifest has an unknown data kind {kind!r}")
    if (original is None) != (release is None):
        raise InputError("give both the original and the release, or neither")
    if original is not None and release is not None and check_digests:
        _check_digest(manifest, "input", original)
        _check_digest(manifest, "output", release)
    inputs = Inputs(
        None if original is None else os.fspath(original),
        None if release is None else os.fspath(release),
        dict(options or {}),
        threshold,
    )
    from anonymatch.report import common

    published = common.published(manifest)
    builder = importlib.import_module(_BUILDERS[str(kind)])
    parts: KindSections = builder.sections(manifest, inputs, published)
    guarantee = common.guarantee(manifest)
    guarantee.bullets += parts.guarantee.bullets
    sections = [
        parts.published,
        guarantee,
        parts.risk,
        parts.utility,
        common.parameters(manifest),
        common.limits(manifest, parts.limits),
    ]
    return render(manifest, sections, inputs, time.perf_counter() - started)


def render(
    manifest: Mapping[str, Any], sections: list[Section], inputs: Inputs, seconds: float
) -> str:
    """Render the sections through the Jinja2 templates (autoescaped)."""
    import json

    from jinja2 import Environment, PackageLoader, select_autoescape

    from anonymatch.core.manifest import to_json, utc_now
    from anonymatch.report.common import MODEL_NAMES

    env = Environment(
        loader=PackageLoader("anonymatch.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    g = manifest.get("guarantee") or {}
    v = manifest.get("verification") or {}
    model = str(g.get("model"))
    template = env.get_template("report.html.j2")
    return template.render(
        manifest=manifest,
        model=MODEL_NAMES.get(model, model),
        guarantee=g,
        passed=v.get("passed"),
        sections=sections,
        complete=inputs.complete,
        generated=utc_now(),
        seconds=seconds,
        manifest_json=json.dumps(to_json(manifest), indent=2),
    )


def write_report(path: str | os.PathLike[str], html: str) -> None:
    """Write the report atomically (a temporary sibling renamed into place)."""

    def write(tmp: Any) -> None:
        tmp.write_text(html, encoding="utf-8")

    write_atomically(path, write)


def _check_digest(manifest: Mapping[str, Any], block: str, path: str | os.PathLike[str]) -> None:
    expected = (manifest.get(block) or {}).get("sha256")
    what = "original" if block == "input" else "release"
    if not os.path.exists(path):
        raise InputError(f"{what} not found: {path}")
    if not expected:
        return
    from anonymatch.core.manifest import file_digest

    if file_digest(path) != expected:
        raise InputError(f"{path} is not the {what} the manifest describes (its SHA-256 differs)")
