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
each data kind has a small section builder (``tables``, ``sets``, ``sparse``, ``graphs``,
``relational``).

Cost: reading the files plus each kind's figures, e.g. the risk figures of a table
(O(pairs·√n), ``anonymatch.tables.risk.risk``); a few seconds on UCI Adult.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.report.check import UNCHECKED, ClaimCheck
from anonymatch.report.model import Figure, Inputs, KindSections, Section, Table

__all__ = [
    "CheckedReport",
    "ClaimCheck",
    "Figure",
    "Inputs",
    "Section",
    "Table",
    "build_report",
    "write_report",
]

_log = logging.getLogger(__name__)

_BUILDERS = {
    "table": "anonymatch.report.tables",
    "transactions": "anonymatch.report.sets",
    "sparse": "anonymatch.report.sparse",
    "graph": "anonymatch.report.graphs",
    "relational": "anonymatch.report.relational",
}


def build_report(
    manifest: Mapping[str, Any],
    original: str | os.PathLike[str] | None = None,
    release: str | os.PathLike[str] | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    threshold: float = 0.2,
    check_digests: bool = True,
    with_check: bool = False,
) -> str:
    """The HTML report of a release.

    The guarantee it shows (model, k, the verifier's verdict and certificate) is presented as
    checked only when the report re-ran the verifier on ``original`` and ``release``
    (``report.check``): a figure of the manifest that the re-run does not give is reported
    prominently, and ``anonymatch report`` then exits 4. Given the manifest alone, or for a
    kind it does not re-verify, every claim is labelled "unchecked (from the manifest)".

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
        ``id_column``, ``item_column``; for relational data ``items`` (the items table;
        default the manifest's), ``id_column``, ``item_column``, ``fmt``; for sparse data
        ``fmt``, ``adjacency``; for graphs ``n_vertices``. Tables also: ``test`` (a table of
        original rows, read like the original unless ``test_csv`` gives its own
        ``CsvOptions``) with ``classify`` (a kept column): the utility section then shows the
        accuracy of models trained on the release and on the original, tested on those rows
        (``anonymatch.tables.learn``).
    threshold : float, default 0.2
        Prosecutor risk above which a record counts as at risk (tables).
    check_digests : bool, default True
        Refuse files whose SHA-256 differs from the manifest's. A manifest without them does
        not name the files: the report then says so, and certifies only what it re-verified.
    with_check : bool, default False
        Return a :class:`CheckedReport` (the HTML, with ``.check``: the :class:`ClaimCheck`).

    Returns
    -------
    str
        A complete HTML document with no external resource.

    Raises
    ------
    anonymatch.core.errors.InputError
        An unknown or damaged manifest (``core.manifest.check_manifest``), only one of the
        two files, a file that is not the one the
        manifest describes, or unreadable data.
    """
    import importlib

    from anonymatch.core.manifest import check_manifest

    started = time.perf_counter()
    if not isinstance(manifest, Mapping) or "guarantee" not in manifest:
        raise InputError("not an anonymatch manifest (no 'guarantee' block)")
    manifest = check_manifest(manifest)  # every key the sections read has its type
    kind = manifest.get("data_kind")
    if kind not in _BUILDERS:
        raise InputError(f"the manifest has an unknown data kind {kind!r}")
    if (original is None) != (release is None):
        raise InputError("give both the original and the release, or neither")
    named = False
    _log.info("report of a %s release (%s)", kind, manifest.get("command"))
    if original is not None and release is not None and check_digests:
        named = _check_digest(manifest, "input", original)
        named = _check_digest(manifest, "output", release) and named
        _log.info("SHA-256 of the files checked against the manifest")
    inputs = Inputs(
        None if original is None else os.fspath(original),
        None if release is None else os.fspath(release),
        dict(options or {}),
        threshold,
    )
    from anonymatch.report import common

    published = common.published(manifest)
    builder = importlib.import_module(_BUILDERS[str(kind)])
    clock = time.perf_counter()
    parts: KindSections = builder.sections(manifest, inputs, published)
    _log.info(
        "risk and utility %s in %.2f s",
        "measured on the files" if inputs.complete else "taken from the manifest",
        time.perf_counter() - clock,
    )
    clock = time.perf_counter()
    check = claim_check(manifest, inputs, parts.check, named)
    _log.info("claims %s in %.2f s", check.status, time.perf_counter() - clock)
    published.facts.append(("files named by the manifest", _named_text(check, inputs)))
    guarantee = common.guarantee(manifest, check)
    guarantee.bullets += parts.guarantee.bullets
    from anonymatch.report.series import series_section

    series = series_section(manifest, inputs)  # a release of a series (None: not one)
    sections = [
        parts.published,
        guarantee,
        *([] if series is None else [series]),
        parts.risk,
        parts.utility,
        common.parameters(manifest),
        common.limits(manifest, parts.limits),
    ]
    clock = time.perf_counter()
    html = render(manifest, sections, inputs, time.perf_counter() - started, check, parts.headline)
    _log.info("rendered %d KiB in %.2f s", len(html) // 1024, time.perf_counter() - clock)
    return CheckedReport(html, check) if with_check else html


class CheckedReport(str):
    """The HTML of :func:`build_report` (a ``str``) with ``check``, the :class:`ClaimCheck` of
    the manifest's claims (``anonymatch report`` exits 4 when ``check.failed``)."""

    check: ClaimCheck

    def __new__(cls, html: str, check: ClaimCheck) -> CheckedReport:
        out = super().__new__(cls, html)
        out.check = check
        return out


def claim_check(
    manifest: Mapping[str, Any], inputs: Inputs, rerun: ClaimCheck | None, named: bool
) -> ClaimCheck:
    """What the report may certify: the kind's re-verification (``rerun``), or unchecked."""
    if not inputs.complete:
        return ClaimCheck("unchecked", "the report was given the manifest alone")
    if rerun is None:
        kind = manifest.get("data_kind")
        return ClaimCheck(
            "unchecked",
            f"this report does not re-verify {kind} releases (run the kind's verify or check "
            "command on the files)",
        )
    rerun.named = named
    return rerun


def _named_text(check: ClaimCheck, inputs: Inputs) -> str:
    if not inputs.complete:
        return "no files given: every claim is unchecked (from the manifest)"
    if check.named:
        return "yes: the manifest's SHA-256 of the input and of the release match the files given"
    return (
        "no: the manifest does not hold the SHA-256 of both files, so it does not name them; "
        "what it says about them (method, parameters, counts) is unchecked"
    )


def render(
    manifest: Mapping[str, Any],
    sections: list[Section],
    inputs: Inputs,
    seconds: float,
    check: ClaimCheck | None = None,
    headline: Mapping[str, Any] | None = None,
) -> str:
    """Render the sections through the Jinja2 templates (autoescaped). ``headline``: the
    utility headline measured from the files (else the manifest's ``loss.headline``), shown
    in a top card beside the guarantee: a useless release never sits under a bare "passed"."""
    import json

    from jinja2 import Environment, PackageLoader, select_autoescape

    from anonymatch.app.honest import flagged_columns, headline_of
    from anonymatch.core.manifest import to_json, utc_now
    from anonymatch.report.common import MODEL_NAMES

    env = Environment(
        loader=PackageLoader("anonymatch.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    check = check or ClaimCheck("unchecked", "not re-verified")
    g = manifest.get("guarantee") or {}
    v = check.verification if check.verification is not None else manifest.get("verification")
    model = str(g.get("model"))
    template = env.get_template("report.html.j2")
    return template.render(
        manifest=manifest,
        model=MODEL_NAMES.get(model, model),
        guarantee=g,
        passed=(v or {}).get("passed") if isinstance(v, Mapping) else None,
        check=check,
        unchecked=UNCHECKED,
        sections=sections,
        complete=inputs.complete,
        generated=utc_now(),
        seconds=seconds,
        manifest_json=json.dumps(to_json(manifest), indent=2),
        kept=headline if headline is not None else headline_of(manifest),
        leaks=list(flagged_columns(manifest)),  # the manifest's leakage block, any kind
    )


def write_report(path: str | os.PathLike[str], html: str) -> None:
    """Write the report atomically (a temporary sibling renamed into place)."""

    def write(tmp: Any) -> None:
        tmp.write_text(html, encoding="utf-8")

    write_atomically(path, write)


def _check_digest(manifest: Mapping[str, Any], block: str, path: str | os.PathLike[str]) -> bool:
    """Whether the manifest names ``path`` by its SHA-256 (False: it holds none); InputError
    if it names another file."""
    expected = (manifest.get(block) or {}).get("sha256")
    what = "original" if block == "input" else "release"
    from anonymatch.tables.io.sql import is_database_url

    if is_database_url(str(path)):  # the data lives on the server: no file, no digest
        return False
    if not os.path.exists(path):
        raise InputError(f"{what} not found: {path}")
    if not expected:
        return False
    from anonymatch.core.manifest import file_digest

    if file_digest(path) != expected:
        raise InputError(f"{path} is not the {what} the manifest describes (its SHA-256 differs)")
    return True
