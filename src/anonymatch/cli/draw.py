"""The analyst's side on the command line (issue 39): ``anonymatch draw`` (plain microdata
tables drawn from a release), ``evaluate --estimate/--queries`` (Rubin's rules over the draws;
the release, the draws and a DP companion on a workload) and ``anonymize --dp-queries`` (the
differentially private companion ``RELEASE.dp.json``, with OpenDP).

The options of ``evaluate`` and ``anonymize`` are declared here (:func:`analysis_options`,
:func:`dp_companion_options`) and reach those commands as one typed value each.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.cli.options import seed_option, verbosity_options
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.models.dp import Workload
    from anonymatch.tables.models.draws import EstimateSpec

F = TypeVar("F", bound=Callable[..., Any])

DRAWS_MANIFEST = "draws.json"
"""The draws manifest written beside the draws, ``DIR/draws.json``."""


def _apply(func: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def _load_manifest(path: str | None) -> dict[str, Any] | None:
    from anonymatch.core.manifest import load_manifest

    return None if path is None else load_manifest(path)


def _degree(manifest: dict[str, Any] | None) -> int | None:
    """The release's k as its manifest states it (``guarantee.k``), None without one."""
    if manifest is None:
        return None
    k = (manifest.get("guarantee") or {}).get("k")
    return int(k) if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else None


def _draw_dir(path: str) -> tuple[Path, bool]:
    """``DIR``, created when absent (its parent must exist); whether it was created."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {path} is a file; draws go into a directory")
    if out.is_dir():
        return out, False
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"output directory does not exist: {parent}")
    out.mkdir()
    return out, True


@command("draw")
@click.argument("release")
@click.option("-m", "m", type=click.IntRange(min=1, max=1000), default=5, show_default=True,
              help="Number of tables drawn (≥ 2 for Rubin's rules).")  # fmt: skip
@click.option("-o", "--output-dir", "out_dir", required=True, metavar="DIR",
              help="Directory of the draws DIR/draw_1.EXT … and their manifest DIR/draws.json "
              "(created when absent).")  # fmt: skip
@click.option(
    "--weights",
    type=click.Choice(["anchored", "uniform"]),
    default=None,
    help="The draw model: anchored (proper imputations: needs the release's k, from "
    "--manifest; the default with --manifest) or uniform (every value of a cell equally "
    "likely; biased; the default without --manifest).",
)
@click.option("--manifest", default=None, help="The release's manifest (anonymize --report): "
              "its k for anchored draws, its guarantee stated in draws.json.")  # fmt: skip
@click.option("--release-table", default=None,
              help="The release table when RELEASE is a database URL.")  # fmt: skip
@click.option("--estimate", "estimates", multiple=True, metavar="SPEC",
              help="Print an estimate combined over the draws by Rubin's rules: mean(COL), "
              "proportion(COL = VALUE), ols(Y ~ X1 + X2). Repeatable.")  # fmt: skip
@seed_option
@click.option("--force", is_flag=True, help="Replace existing draws of the same names.")
@verbosity_options
def draw(
    release: str,
    m: int,
    out_dir: str,
    weights: str | None,
    manifest: str | None,
    release_table: str | None,
    estimates: tuple[str, ...],
    seed: int | None,
    force: bool,
    quiet: bool,
    seed_file: str | None = None,
) -> None:
    """Draw M plain microdata tables from a release.

    Each QI cell of RELEASE is replaced by a value drawn inside it; the tables keep the
    original's column types and the release's format (CSV, TSV, Parquet, SPSS, Stata; Parquet
    for a directory of parts or a database table). DIR/draws.json states that the draws carry
    the release's guarantee and no more: a draw is a function of the release and fresh
    randomness only. Analyse the M draws together (--estimate, or evaluate --estimate)."""
    from anonymatch.app.outputs import JSON_EXTENSIONS, Output, check_outputs
    from anonymatch.cli.options import run_inputs
    from anonymatch.core.files import write_atomically
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models import draws as drawing

    specs = [drawing.parse_estimate(s) for s in estimates]
    given_seed = click.get_current_context().params.get("seed")  # not one drawn for --seed-file
    document = _load_manifest(manifest)
    degree = _degree(document)
    chosen = weights or ("anchored" if document is not None else "uniform")
    if chosen == "anchored" and degree is None:
        raise InputError(
            "--weights anchored needs the release's k: pass its manifest (--manifest), or "
            "--weights uniform"
        )
    ext = drawing.draw_extension(release)
    directory, created = _draw_dir(out_dir)
    try:
        files = [str(directory / f"draw_{i}{ext}") for i in range(1, m + 1)]
        meta = str(directory / DRAWS_MANIFEST)
        outputs = [Output("-o/--output-dir", f) for f in files]
        outputs.append(Output("the draws manifest", meta, JSON_EXTENSIONS))
        if seed_file is not None:  # written after the run (seed_option), never among the draws
            outputs.append(Output("--seed-file", seed_file, JSON_EXTENSIONS))
        check_outputs(outputs, run_inputs(click.get_current_context()), force)
        typed = read_release(release, manifest, table=release_table)
        tables = drawing.plain_draws(typed, m, weights=chosen, degree=degree, seed=seed)
        rows = _estimate_rows(specs, {directory.name: tables}, None)  # refused before writing
        labels = ((document or {}).get("input") or {}).get("variable_labels")
        for path, table in zip(files, tables, strict=True):
            if labels:
                table.attrs["variable_labels"] = labels
            drawing.write_table(path, table)
        guarantee = (document or {}).get("guarantee")
        block = drawing.manifest(release, files, weights=chosen, degree=degree if chosen ==
                                 "anchored" else None, seeded=given_seed is not None,
                                 guarantee=guarantee)  # fmt: skip
        if seed_file is not None:  # kept privately: said, never the seed or the path
            block["randomness"] = {**block["randomness"], "seed_file": True}
        text = json.dumps(block, indent=2, ensure_ascii=False) + "\n"
        write_atomically(meta, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except BaseException:
        if created:
            _remove_if_empty(directory)
        raise
    if not quiet:
        click.echo(
            f"{m} draws ({chosen}) of {Path(release).name} in {directory}: "
            f"{Path(files[0]).name} … {Path(files[-1]).name}, manifest {DRAWS_MANIFEST}"
        )
    if specs:
        _print_estimates(rows, with_original=False, as_json=False)


def _remove_if_empty(directory: Path) -> None:
    """Undo a failed run's directory: its staged files removed now (the run's outputs are
    all-or-nothing anyway), then the directory it created, if nothing else is in it."""
    import contextlib

    from anonymatch.core.files import staging

    staged = staging()
    if staged is not None:
        staged.abort()
    with contextlib.suppress(OSError):
        directory.rmdir()


COMMANDS = [draw]


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


def _read_plain(path: str) -> pd.DataFrame:
    """A draw as written by ``draw`` (CSV safety undone; numbers typed back). O(n·d)."""
    import pandas as pd

    from anonymatch.core.csvsafe import unescape_frame
    from anonymatch.tables.io import CsvOptions, is_parquet, read_table
    from anonymatch.tables.io.sidecar import kept_column_dtype, typed_kept_column

    frame = read_table(path, CsvOptions())
    if is_parquet(path):
        return frame
    frame = unescape_frame(frame)
    for name in frame.columns:  # numbers where every cell is the exact text of one
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name].dtype):
            dtype = kept_column_dtype(frame[name])
            if dtype != "string":
                frame[name] = typed_kept_column(frame[name], dtype, str(name))
    return frame


def _draw_files(directory: Path) -> list[str]:
    """The draws of a directory, as its manifest lists them (else ``draw_*`` by number)."""
    meta = directory / DRAWS_MANIFEST
    if meta.is_file():
        from anonymatch.core.documents import load_json

        doc = load_json(meta, "draws manifest")
        files = doc.get("files") if isinstance(doc, dict) else None
        if isinstance(files, list) and all(
            isinstance(f, dict) and isinstance(f.get("path"), str) for f in files
        ):
            return [str(directory / Path(f["path"]).name) for f in files]
        raise InputError(f"cannot read the draws manifest {meta}: no list of files")
    found = sorted(directory.glob("draw_*"), key=lambda p: (len(p.name), p.name))
    if not found:
        raise InputError(f"{directory} holds no draw (draw_1.csv, …)")
    return [str(p) for p in found]


def _draw_sets(published: Sequence[str]) -> dict[str, list[pd.DataFrame]]:
    """Each directory one set of draws; the plain files given, together, another."""
    sets: dict[str, list[pd.DataFrame]] = {}
    loose = [p for p in published if not Path(p).is_dir()]
    for path in published:
        if Path(path).is_dir():
            sets[Path(path).name or path] = [_read_plain(f) for f in _draw_files(Path(path))]
    if loose:
        sets["draws" if len(sets) == 0 else "files"] = [_read_plain(p) for p in loose]
    return sets


def _echo_estimates(
    specs: Sequence[EstimateSpec],
    sets: dict[str, list[pd.DataFrame]],
    original: pd.DataFrame | None,
    as_json: bool,
) -> None:
    _print_estimates(_estimate_rows(specs, sets, original), original is not None, as_json)


def _estimate_rows(
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


def _print_estimates(rows: list[dict[str, Any]], with_original: bool, as_json: bool) -> None:
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
            tables = [_read_plain(f) for f in _draw_files(p)]
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
