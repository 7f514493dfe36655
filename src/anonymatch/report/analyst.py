"""The report's side-by-side tables (issue 39, item 3): the release, plain draws of it, the
original and the DP companion — what models learn from each, what each answers, and what each
promises.

Two tables, in the utility section:

- **models** (``report --test TEST --classify LABEL``): the accuracy of the models of
  ``evaluate --classify`` (``tables.models.learn.learn``) trained on the release, on each draw
  and on the original, tested on TEST's original rows — the figures ``evaluate ORIGINAL RELEASE
  DIR --classify LABEL --test TEST`` prints for the same files and ``--split-seed`` 0;
- **counts** (a release published with a companion, ``anonymize --dp-queries``): the
  companion's workload counted on the original (the truth), answered by the release (expected
  counts, each value uniform inside its cell), by the draws (the mean of their counts) and by
  the companion, beside each one's formal promise and risk.

The draws are those of ``report --draws DIR`` (written by ``anonymatch draw`` from this very
release: its digest is checked against ``DIR/draws.json``), else five anchored draws made for the
report (``tables.models.draws.plain_draws``, fresh randomness; none when the manifest states no
k).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import AnonymatchError, InputError
from anonymatch.report.model import Section, Table

DRAWS = 5
"""Anchored draws made for the report without ``--draws`` (``anonymatch draw -m 5``)."""


@dataclass(frozen=True)
class LearningInputs:
    """What the models table trains and tests on: the original (without the rows the release
    dropped), the test table's original rows (likewise) and the label to predict."""

    original: pd.DataFrame
    test: pd.DataFrame
    label: str


def report_draws(
    manifest: Mapping[str, Any], release_path: str, directory: str | None
) -> tuple[list[str], list[pd.DataFrame], str]:
    """The draws the side-by-side tables use, their names and where they come from.

    Parameters
    ----------
    manifest : mapping
        The release's manifest (its ``guarantee.k`` for the anchored draws).
    release_path : str
        The release file.
    directory : str, optional
        A directory of draws of this release (``anonymatch draw``), read as ``evaluate`` reads
        it; without it :data:`DRAWS` anchored draws are made with fresh randomness.

    Returns
    -------
    names : list of str
        One per draw: its path (``DIR/draw_i.EXT``) or ``draw i (fresh)``.
    tables : list of pandas.DataFrame
        The draws, typed as ``evaluate`` reads them; empty when none can be made.
    source : str
        Words for the captions.

    Raises
    ------
    InputError
        ``directory`` holds no draws manifest, or its draws were drawn from another file.

    Notes
    -----
    Time O(m·n·d) to read or draw m tables (plus the anchored draws' EM); memory O(m·n·d).
    """
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models.draws import DRAWS_MANIFEST, plain_draws, published_tables

    if directory is not None:
        from anonymatch.core.documents import load_json
        from anonymatch.core.manifest import file_digest

        meta = Path(directory) / DRAWS_MANIFEST
        if not meta.is_file():
            raise InputError(f"--draws {directory} holds no {DRAWS_MANIFEST} (anonymatch draw)")
        doc = load_json(meta, "draws manifest")
        source = doc.get("release") if isinstance(doc, dict) else None
        drawn_from = source.get("sha256") if isinstance(source, dict) else None
        if drawn_from != file_digest(release_path):
            raise InputError(f"the draws in {directory} were not drawn from this release")
        names, tables = published_tables([directory])
        return names, tables, f"the {len(tables)} draws of {Path(directory).name}/"
    k = (manifest.get("guarantee") or {}).get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return [], [], "no draws (the manifest states no k for anchored draws)"
    tables = plain_draws(read_release(release_path), DRAWS, weights="anchored", degree=k)
    names = [f"draw {i} (fresh)" for i in range(1, DRAWS + 1)]
    return names, tables, f"{DRAWS} anchored draws made for this report (fresh randomness)"


def _percent(value: float) -> str:
    return f"{100 * value:.2f}%"  # as evaluate --classify prints it


def models_table(
    learning: LearningInputs,
    release_path: str,
    draws: tuple[Sequence[str], Sequence[pd.DataFrame], str],
) -> Table:
    """Table the accuracy of models trained on the release, its draws and the original.

    The models are those of ``evaluate --classify``; each draw has its row, and their mean
    one more; every model is tested on the test table's rows.

    Parameters
    ----------
    learning : LearningInputs
        The original, the test table and the label.
    release_path : str
        The release file (typed by ``read_release``, as ``evaluate`` reads it).
    draws : (names, tables, source)
        As :func:`report_draws` returns them.

    Returns
    -------
    Table
        Rows: the release, each draw, the draws' mean, the original, the majority class;
        columns: the models' accuracies as ``evaluate`` prints them (``77.50%``).

    Raises
    ------
    InputError
        As :func:`~anonymatch.tables.models.learn.learn`.

    Notes
    -----
    One fit per model and table (1 + m + 1 tables, ``learn`` with seed 0, ``evaluate``'s
    ``--split-seed`` default): O((m + 2)·(n·F + the models' own cost)).
    """
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models.learn import learn

    names, tables, source = draws
    release_name = Path(release_path).name
    report = learn(learning.original, [read_release(release_path), *tables],
                   target=learning.label, test=learning.test,
                   names=[release_name, *names])  # fmt: skip
    models = list(report.original)
    rows: list[list[Any]] = [
        [f"the release ({release_name})", *(_percent(report.releases[0]["scores"][m])
                                            for m in models)]
    ]  # fmt: skip
    drawn = report.releases[1:]
    rows += [[Path(r["path"]).name if Path(r["path"]).suffix else r["path"],
              *(_percent(r["scores"][m]) for m in models)] for r in drawn]  # fmt: skip
    if len(drawn) > 1:
        rows.append([f"the draws: mean of {len(drawn)}",
                     *(_percent(float(np.mean([r["scores"][m] for r in drawn])))
                       for m in models)])  # fmt: skip
    rows.append(["the original (ceiling)", *(_percent(report.original[m]) for m in models)])
    rows.append(["majority class (floor)", _percent(report.floor), *[""] * (len(models) - 1)])
    return Table(
        ["trained on", *models],
        rows,
        caption=(
            f"Accuracy predicting {learning.label!r} on the {report.test_rows} original rows of "
            f"the test table, trained on the release, {source} and the original (as anonymatch "
            "evaluate ORIGINAL RELEASE DRAWS --classify LABEL --test TEST prints them)."
        ),
    )


def side_by_side(
    section: Section,
    manifest: Mapping[str, Any],
    original: pd.DataFrame,
    release_path: str,
    *,
    draws_dir: str | None = None,
    learning: LearningInputs | None = None,
) -> None:
    """Add the side-by-side tables to ``section``: the models table with ``learning``, the
    counts table when the manifest states a companion (nothing without either). A note replaces
    a table whose inputs cannot be read.

    Raises
    ------
    InputError
        ``draws_dir`` is not a directory of draws of this release, or the models cannot be
        trained (as ``evaluate --classify`` refuses them).

    Notes
    -----
    O(m·n·(q + d)) for m draws, n rows, q queries and d columns, plus the anchored draws' EM and
    (m + 2) fits of each model.
    """
    block = manifest.get("dp_companion")
    companion = block if isinstance(block, Mapping) else None
    if companion is None and learning is None and draws_dir is None:
        return
    try:
        draws = report_draws(manifest, release_path, draws_dir)
    except InputError:
        if draws_dir is not None:  # the steward's own draws: refused, not skipped
            raise
        draws = ([], [], "no draws")
    except (AnonymatchError, ValueError) as exc:
        draws = ([], [], f"no draws ({exc})")
    if learning is not None:
        section.tables.append(models_table(learning, release_path, draws))
    if companion is not None:
        _counts(section, manifest, companion, original, release_path, draws)


def _counts(
    section: Section,
    manifest: Mapping[str, Any],
    block: Mapping[str, Any],
    original: pd.DataFrame,
    release_path: str,
    draws: tuple[Sequence[str], Sequence[pd.DataFrame], str],
) -> None:
    """The counts table: the companion's workload answered by the release, the draws and the
    companion. O(m·n·q)."""
    from anonymatch.core.documents import load_json
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models.dp import (
        exact_answers,
        median_relative_error,
        parse_workload,
        release_answers,
    )

    _, tables, source = draws
    path = Path(release_path).parent / Path(str(block.get("path") or "")).name
    try:
        doc = load_json(path, "DP companion")
        workload = parse_workload({"queries": doc["queries"]})
        typed = read_release(release_path)
        k = (manifest.get("guarantee") or {}).get("k")
        truth = exact_answers(original, workload)
        drawn = np.mean([exact_answers(t, workload) for t in tables], axis=0) if tables else None
        errors = {
            "release": median_relative_error(release_answers(typed, workload), truth),
            "dp": median_relative_error([float(a) for a in doc["answers"]], truth),
        }
    except (AnonymatchError, KeyError, TypeError, ValueError) as exc:
        section.paragraphs.append(
            f"The release, its draws and its DP companion: not compared ({exc})."
        )
        return
    epsilon, delta = float(block.get("epsilon") or 0), float(block.get("delta") or 0)
    rows: list[list[Any]] = [
        ["the release (expected counts)", f"{100 * errors['release']:.1f}%",
         f"k-anonymity, k = {k}" if k else "the release's guarantee",
         "as verified above (candidates, prosecutor and sensitive figures)"],
    ]  # fmt: skip
    if drawn is not None:
        rows.append(
            [f"{len(tables)} draws (mean count)",
             f"{100 * median_relative_error(list(drawn), truth):.1f}%",
             "the release's, and no more", "the release's: a draw is a function of the release"
             " and fresh randomness"]
        )  # fmt: skip
    rows.append(
        [f"the DP companion ({path.name})", f"{100 * errors['dp']:.1f}%",
         f"(ε = {epsilon:.4g}, δ = {delta:.3g})-DP, these answers only",
         "bounded for any attacker by ε, δ; the release beside it is not DP"]
    )  # fmt: skip
    section.tables.append(
        Table(
            ["published", "count error (median)", "formal promise", "risk"],
            rows,
            caption=(
                f"The release, {source} and its DP companion on the companion's "
                f"{len(truth)} count queries: median |answer − truth| / truth, the truth counted "
                "on the original."
            ),
        )
    )
