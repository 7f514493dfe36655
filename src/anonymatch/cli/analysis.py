"""The analyst's options of ``evaluate`` and ``anonymize`` (issue 39), shared with
``cli.draw``: ``evaluate --estimate`` (Rubin's rules over draws), ``evaluate --queries`` (a
workload answered by the original, releases, draws and DP companions) and ``anonymize
--dp-queries/--epsilon/--delta`` (the differentially private companion ``RELEASE.dp.json``,
with OpenDP). Each group reaches its command as one typed value (:func:`analysis_options`,
:func:`dp_companion_options`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.cli.steps import with_step
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.models.dp import Workload
    from anonymatch.tables.models.draws import EstimateSpec

F = TypeVar("F", bound=Callable[..., Any])


def _apply(func: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


# --- evaluate --estimate / --queries --------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """``evaluate --estimate`` (estimates combined over draws by Rubin's rules) and
    ``--queries`` (a workload answered by the original, releases, draws and companions)."""

    estimates: tuple[EstimateSpec, ...]
    workload: Workload | None

    def run(self, original: pd.DataFrame, published: Sequence[str], as_json: bool,
            release_table: str | None) -> None:  # fmt: skip
        """Print what was asked, for the PUBLISHED paths of ``evaluate``."""
        if self.estimates:
            sets = _draw_sets(published)
            _echo_estimates(list(self.estimates), sets, original, as_json)
        if self.workload is not None:
            _echo_queries(self.workload, original, published, as_json, release_table)


def analysis(estimates: tuple[str, ...], queries: str | None) -> Analysis | None:
    """``--estimate`` and ``--queries`` as one :class:`Analysis` (None without either)."""
    if not estimates and queries is None:
        return None
    from anonymatch.tables.models.dp import load_workload
    from anonymatch.tables.models.draws import parse_estimate

    specs = tuple(parse_estimate(s) for s in estimates)
    return Analysis(specs, None if queries is None else load_workload(queries))


def analysis_options(func: F) -> F:
    """``--estimate SPEC`` (repeatable) and ``--queries FILE`` of ``evaluate`` (parameter
    ``analysis``)."""
    return _apply(
        with_step(analysis, "analysis")(func),
        [
            click.option(
                "--estimate",
                "estimates",
                multiple=True,
                metavar="SPEC",
                help="On draws (PUBLISHED: draw directories or draw files): an estimate "
                "combined by Rubin's rules, beside its value on ORIGINAL — mean(COL), "
                "proportion(COL = VALUE), ols(Y ~ X1 + X2). Repeatable.",
            ),
            click.option(
                "--queries",
                default=None,
                metavar="FILE",
                help="A workload (JSON count queries, as anonymize --dp-queries): its answers "
                "on ORIGINAL, each release (expected counts), draw directory (mean over the "
                "draws) and DP companion (RELEASE.dp.json), with the median relative error.",
            ),
        ],
    )


def _draw_sets(published: Sequence[str]) -> dict[str, list[pd.DataFrame]]:
    """Each directory one set of draws; the plain files given, together, another."""
    from anonymatch.tables.models.draws import draw_files, read_draw

    sets: dict[str, list[pd.DataFrame]] = {}
    loose = [p for p in published if not Path(p).is_dir()]
    for path in published:
        if Path(path).is_dir():
            sets[Path(path).name or path] = [read_draw(f) for f in draw_files(Path(path))]
    if loose:
        sets["draws" if len(sets) == 0 else "files"] = [read_draw(p) for p in loose]
    return sets


def _echo_estimates(
    specs: Sequence[EstimateSpec],
    sets: dict[str, list[pd.DataFrame]],
    original: pd.DataFrame | None,
    as_json: bool,
) -> None:
    print_estimates(estimate_rows(specs, sets, original), original is not None, as_json)


def estimate_rows(
    specs: Sequence[EstimateSpec],
    sets: dict[str, list[pd.DataFrame]],
    original: pd.DataFrame | None,
) -> list[dict[str, Any]]:
    """Each estimate combined over each set of draws (and its value on the original)."""
    from anonymatch.tables.models.draws import combine, complete_data, estimate_levels

    rows: list[dict[str, Any]] = []
    for spec in specs:
        for name, tables in sets.items():
            levels = estimate_levels(tables, spec)
            truth = complete_data(original, spec, levels) if original is not None else {}
            for term, result in combine(tables, spec).items():
                row = {"spec": spec.text, "term": term, "draws": name, **result.to_dict()}
                if original is not None:
                    row["original"] = truth[term]
                    row["covered"] = bool(result.interval[0] <= truth[term] <= result.interval[1])
                rows.append(row)
    return rows


def print_estimates(rows: list[dict[str, Any]], with_original: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    head = f"{'estimate':<32}{'draws':>10}{'combined':>14}{'95% interval':>30}{'FMI':>7}"
    click.echo(head + (f"{'original':>14}" if with_original else ""))
    shown = None
    for r in rows:
        label = r["spec"] if r["term"] == r["spec"] else f"  {r['term']}"
        if r["term"] != r["spec"] and (r["spec"], r["draws"]) != shown:
            click.echo(r["spec"])
            shown = (r["spec"], r["draws"])
        lo, hi = r["interval"]
        line = f"{label[:31]:<32}{r['draws'][:9]:>10}{r['estimate']:>14.6g}"
        line += f"{f'[{lo:.6g}, {hi:.6g}]':>30}{r['fraction_missing']:>7.2f}"
        if with_original:
            line += f"{r['original']:>14.6g}" + ("" if r["covered"] else "  (not covered)")
        click.echo(line)


def _companion_document(path: str) -> dict[str, Any]:
    from anonymatch.core.documents import load_json
    from anonymatch.tables.models.dp import COMPANION_SCHEMA

    doc = load_json(path, "DP companion")
    if not isinstance(doc, dict) or doc.get("schema") != COMPANION_SCHEMA:
        raise InputError(f"{path} is not a DP companion ({COMPANION_SCHEMA})")
    if not isinstance(doc.get("answers"), list) or not isinstance(doc.get("queries"), list):
        raise InputError(f"cannot read the DP companion {path}: no queries and answers")
    return doc


def _echo_queries(
    workload: Workload,
    original: pd.DataFrame,
    published: Sequence[str],
    as_json: bool,
    release_table: str | None,
) -> None:
    import numpy as np

    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models.dp import (
        companion_path,
        exact_answers,
        median_relative_error,
        release_answers,
    )
    from anonymatch.tables.models.draws import DRAWS_MANIFEST, draw_files, read_draw

    truth = exact_answers(original, workload)
    columns: dict[str, list[float]] = {}
    asked = workload.to_dict()["queries"]

    def add_companion(path: str) -> None:
        doc = _companion_document(path)
        if doc["queries"] != asked:
            raise InputError(f"the DP companion {path} answers another workload than --queries")
        columns[f"{Path(path).name} (ε={float(doc.get('epsilon') or 0):.3g})"] = [
            float(a) for a in doc["answers"]
        ]

    listed = {str(Path(p).resolve()) for p in published}
    for path in published:
        p = Path(path)
        if p.is_dir() and (p / DRAWS_MANIFEST).is_file():
            tables = [read_draw(f) for f in draw_files(p)]
            counts = np.mean([exact_answers(t, workload) for t in tables], axis=0)
            columns[f"{p.name}/ (mean of {len(tables)})"] = [float(c) for c in counts]
        elif path.endswith(".dp.json"):
            add_companion(path)
        else:
            typed = read_release(path, table=release_table)
            columns[p.name] = release_answers(typed, workload)
            beside = companion_path(path)
            if os.path.isfile(beside) and str(Path(beside).resolve()) not in listed:
                add_companion(beside)
    errors = {name: median_relative_error(values, truth) for name, values in columns.items()}
    if as_json:
        click.echo(json.dumps({"queries": asked, "original": truth, "answers": columns,
                               "median_relative_error": errors}, indent=2))  # fmt: skip
        return
    names = list(columns)
    width = max(12, *(len(n) + 2 for n in names)) if names else 12
    click.echo("query".ljust(8) + "original".rjust(10) + "".join(n.rjust(width) for n in names))
    for i, t in enumerate(truth):
        click.echo(f"{i + 1:<8}{t:>10}" + "".join(f"{columns[n][i]:>{width}.1f}" for n in names))
    click.echo(
        "median relative error".ljust(18)
        + "".join(f"{100 * errors[n]:.1f}%".rjust(width) for n in names)
    )


# --- anonymize --dp-queries -----------------------------------------------------------------


@dataclass(frozen=True)
class DpRequest:
    """``anonymize --dp-queries FILE --epsilon E [--delta D]``: the workload, the budget and
    where the companion goes."""

    workload: Workload
    epsilon: float
    delta: float
    path: str
    quiet: bool

    def publish(self, original: pd.DataFrame, table: pd.DataFrame, qi: Any) -> dict[str, Any]:
        """Compute the companion of the release ``table`` (its QIs ``qi``, an EncodedQI), write
        it atomically (committed with the run's other outputs) and return the manifest's
        ``dp_companion`` block."""
        from anonymatch.core.files import write_atomically
        from anonymatch.tables.models.dp import companion, summary

        published = table.copy(deep=False)
        published.attrs = {"qi": list(qi.names), "ranges": list(qi.num_names)}
        doc = companion(original, published, self.workload, epsilon=self.epsilon,
                        delta=self.delta)  # fmt: skip
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        write_atomically(self.path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        if not self.quiet:
            click.echo(
                f"DP companion {Path(self.path).name}: {len(doc['answers'])} answers, "
                f"{len(doc['marginals'])} marginals, ε = {doc['epsilon']:.6g}, δ = "
                f"{doc['delta']:.3g} (OpenDP); the release itself is not DP",
                err=True,
            )
        return summary(doc, self.path)


def dp_request(
    ctx: click.Context,
    dp_queries: str | None,
    epsilon: float | None,
    delta: float | None,
    output: str,
    report_path: str | None,
    force: bool,
    quiet: bool = False,
) -> DpRequest | None:
    """``--dp-queries``, ``--epsilon``, ``--delta`` as one :class:`DpRequest` (None without
    ``--dp-queries``); the companion ``RELEASE.dp.json`` claimed with the run's other outputs
    (the shared output policy) before any work."""
    if dp_queries is None:
        if epsilon is not None or delta is not None:
            raise InputError("--epsilon and --delta budget the DP companion: give --dp-queries")
        return None
    if epsilon is None:
        raise InputError("--dp-queries needs --epsilon (the companion's privacy budget)")
    from anonymatch.app.outputs import (
        JSON_EXTENSIONS,
        TABLE_RELEASE_EXTENSIONS,
        Output,
        check_outputs,
    )
    from anonymatch.cli.options import run_inputs
    from anonymatch.tables.io.sql import is_database_url
    from anonymatch.tables.models.dp import companion_path, load_workload

    if not (epsilon > 0 and epsilon < float("inf")):
        raise InputError(f"--epsilon must be a number > 0, got {epsilon}")
    if delta is not None and not 0 <= delta < 1:
        raise InputError(f"--delta must be in [0, 1), got {delta}")
    if is_database_url(output):
        raise InputError("--dp-queries publishes RELEASE.dp.json beside a release file, not a "
                         "database table")  # fmt: skip
    path = companion_path(output)
    outputs = [Output("-o/--output", output, TABLE_RELEASE_EXTENSIONS, sidecar=True),
               Output("the DP companion", path, JSON_EXTENSIONS)]  # fmt: skip
    if report_path is not None:
        outputs.append(Output("--report", report_path, JSON_EXTENSIONS))
    check_outputs(outputs, run_inputs(ctx), force)
    workload = load_workload(dp_queries)
    return DpRequest(workload, float(epsilon), float(delta or 0.0), path, quiet)


def dp_companion_options(func: F) -> F:
    """``--dp-queries FILE``, ``--epsilon E``, ``--delta D`` of ``anonymize`` (parameter
    ``dp``)."""
    return _apply(
        with_step(dp_request, "dp")(func),
        [
            click.option(
                "--dp-queries",
                default=None,
                metavar="FILE",
                help="Publish beside the release RELEASE.dp.json: noisy answers (OpenDP) to "
                "this workload — a JSON list of count queries, each {column: value or "
                "[lo, hi]}, or {queries: [...], marginals: [[col, ...]]}. Only the companion "
                "is DP, not the release.",
            ),
            click.option(
                "--epsilon",
                type=float,
                default=None,
                help="The DP companion's privacy budget ε > 0 (all its answers together).",
            ),
            click.option(
                "--delta",
                type=float,
                default=None,
                help="The DP companion's δ in [0, 1) (default 0: pure ε-DP, Laplace noise; "
                "> 0: Gaussian noise).",
            ),
        ],
    )
