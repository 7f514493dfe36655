"""Command line for set-valued data: ``anonymize-sets``, ``verify-sets``, ``evaluate-sets``.

Errors raised on purpose become one line on stderr and exit 2 (bad input), 3 (infeasible, e.g.
not ℓ-eligible) or 4 (failed verification) through ``anonymatch.cli.main``; nothing is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.app.outputs import SET_RELEASE_EXTENSIONS
from anonymatch.cli.config import with_job_file
from anonymatch.cli.options import (
    SetSource,
    check_output_path,
    draw_seed,
    echo_check_summary,
    exit_verdict,
    json_default,
    output_options,
    parse_separator,
    seed_option,
    set_input_options,
    set_sensitive_options,
    source_options,
    stage_bar,
    verbosity_options,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError
from anonymatch.sets.io import Transactions, read_transactions
from anonymatch.sets.km import KM_FORMATS
from anonymatch.sets.methods import names

if TYPE_CHECKING:
    from anonymatch.sets.job import SetJob

F = TypeVar("F", bound=Callable[..., Any])


def _read(path: str, source: SetSource) -> Transactions:
    sep = parse_separator(source.item_sep, "--item-sep")  # escapes decoded; empty: InputError
    return read_transactions(
        path,
        source.fmt,
        item_sep=sep,
        labels_path=source.labels_path,
        label_column=source.label_column,
        id_column=source.id_column,
        item_column=source.item_column,
        dedupe=source.dedupe,
    )


def input_block(source: SetSource) -> dict[str, Any]:
    """``parameters.input_options`` of a set manifest: how the original was read, so that
    ``anonymatch report`` re-reads it the same way when its command line says nothing. O(1)."""
    block: dict[str, Any] = {"format": source.fmt}
    if source.fmt in ("auto", "basket"):
        sep = parse_separator(source.item_sep, "--item-sep")  # as --item-sep reads it
        block["item_sep"] = sep.replace("\\", "\\\\")
    for key in ("id_column", "item_column"):
        if getattr(source, key) is not None:
            block[key] = getattr(source, key)
    if source.dedupe:
        block["dedupe"] = True
    return block


def _km_input_options(help: str) -> Callable[[F], F]:
    """``--format`` (the k^m formats), ``--item-sep``, ``--id-column``/``--item-column`` and
    ``--dedupe`` as one :class:`SetSource` (parameter ``source``)."""
    return source_options(KM_FORMATS, help)


def _read_km(path: str, source: SetSource) -> Any:
    from anonymatch.sets.km import read_transactions

    sep = parse_separator(source.item_sep, "--item-sep")
    return read_transactions(
        path,
        source.fmt,
        item_sep=sep,
        id_column=source.id_column,
        item_column=source.item_column,
        dedupe=source.dedupe,
    )


def set_job(
    ctx: click.Context, k: int | None, ell: int | None, method: str, segment: str, seed: int | None
) -> SetJob:
    """``--k``/``--l``, ``--method``, ``--segment`` and the seed, over the ``--config`` job
    file's typed values (``with_job_file``), as one validated ``SetJob`` (parameter ``job``)."""
    from anonymatch.sets.job import SetJob

    flags = dict(k=k, ell=ell, method=method, segment=segment)
    keywords = with_job_file(ctx, flags)
    if isinstance(keywords["segment"], str):  # the flag's text (a job's is a pair already)
        keywords["segment"] = _segment(keywords["segment"])
    return SetJob.build(dict(keywords, seed=seed))


def set_levels(ctx: click.Context, k: int | None, ell: int | None) -> tuple[int | None, ...]:
    """``--k``/``--l`` over the ``--config`` job file's ``model.k``/``model.l``, checked:
    exactly one, an integer ≥ 1 (parameter ``levels``)."""
    from anonymatch.sets.job import levels

    return levels(**with_job_file(ctx, {"k": k, "ell": ell}))


def _segment(value: str) -> tuple[int, int]:
    try:
        lo, hi = (int(x) for x in value.split(","))
    except ValueError:
        raise InputError(f"--segment expects MIN,MAX, got {value!r}") from None
    if lo < 2 or hi < lo:
        raise InputError(f"--segment needs 2 ≤ MIN ≤ MAX, got {value!r}")
    return lo, hi


@command("anonymize-sets")
@click.argument("input_path", metavar="INPUT")
@output_options(
    "Release file (JSON Lines: .jsonl, .ndjson or .json).", extensions=SET_RELEASE_EXTENSIONS
)
@click.option("-k", "--k", "k", type=int, default=None, help="k-anonymity level.")
@click.option("-l", "--l", "ell", type=int, default=None, help="ℓ-diversity level.")
@set_sensitive_options
@click.option(
    "--method",
    type=click.Choice(names(command="anonymize-sets")),
    default=names(command="anonymize-sets")[0],
    show_default=True,
)
@click.option(
    "--segment", default="300,350", show_default=True, help="Gray-TSP segment sizes MIN,MAX."
)
@seed_option
@set_input_options
@with_step(set_job, "job")
def anonymize_sets_cmd(
    input_path: str,
    output: str,
    job: SetJob,
    report_path: str | None,
    quiet: bool,
    source: SetSource,
) -> None:
    """Publish transactions k-anonymous or ℓ-diverse, verified.

    Nonreciprocal recoding of INPUT (Xue et al.): Gray-TSP order, ring graph, random
    closed-walk assignment; the release is verified before it is written."""
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.sets.io import write_set_release
    from anonymatch.sets.pipeline import run_job

    started = time.perf_counter()
    for path in (output, report_path):
        check_output_path(path, input_path)
    with stage_bar(3, quiet, "anonymize-sets") as bar:
        t = _read(input_path, source)
        bar.update()
        clock = time.perf_counter()
        result = run_job(t, job)
        compute = time.perf_counter() - clock
        bar.update()
        clock = time.perf_counter()
        write_set_release(output, result.release)
        bar.update()
    report: dict[str, Any] = dict(result.report)
    report["parameters"] = {**report.get("parameters", {}), "input_options": input_block(source)}
    report["seconds"] = {
        **report["seconds"],
        "write": time.perf_counter() - clock,
        "compute": compute,
    }
    finish_manifest(report, input_path, output, started, command="anonymize-sets")
    write_manifest(report_path, report)
    if not quiet:
        v = result.verification
        level = f"k = {job.k}" if job.k is not None else f"ℓ = {job.ell}"
        click.echo(f"{job.method.name}, {level}, {t.n} records, {t.n_items} items -> {output}")
        if t.duplicates_removed:
            click.echo(f"duplicate (record, item) rows removed: {t.duplicates_removed}")
        if result.order_report is not None:
            o = result.order_report
            click.echo(
                f"order: Hamming ring length {o.hamming_input} (input) -> {o.hamming_gray}"
                f" (Gray) -> {o.hamming_gray_tsp} (Gray-TSP), {o.segments} segments"
            )
        click.echo(
            f"verified: {'PASS' if v.passed else 'FAIL'} - {v.k_factor_flow}/{v.k_factor_required}"
            f" disjoint matches; fewest matches per original {v.min_matches_original}"
        )
        click.echo(
            f"error rate {100 * float(report['loss']['error_rate']):.2f}%"
            f"; time {report['seconds']['wall']:.1f} s"
        )


@command("verify-sets")
@click.argument("original")
@click.argument("published")
@click.option("-k", "--k", "k", type=int, default=None, help="k-anonymity level.")
@click.option("-l", "--l", "ell", type=int, default=None, help="ℓ-diversity level.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
@set_input_options
@with_step(set_levels, "levels")
def verify_sets_cmd(
    original: str,
    published: str,
    levels: tuple[int | None, int | None],
    as_json: bool,
    source: SetSource,
) -> None:
    """Check a set-valued release: k-anonymous or ℓ-diverse.

    Is PUBLISHED (JSONL) k-anonymous / ℓ-diverse w.r.t. ORIGINAL? Exit 0 iff it is."""
    from anonymatch.sets.io import read_set_release
    from anonymatch.sets.verify import verify_sets

    k, ell = levels
    t = _read(original, source)
    release = read_set_release(published, t)
    report = verify_sets(release, t, k=k, ell=ell)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {report.reason}; {report.guarantee}"
            f" level {report.level}, {report.n_original} originals, {report.n_published}"
            f" published, fewest matches per original {report.min_matches_original}, per"
            f" published {report.min_matches_published}, factor flow"
            f" {report.k_factor_flow}/{report.k_factor_required}"
        )
    exit_verdict(report.passed)


@command("evaluate-sets")
@click.argument("original")
@click.argument("published", nargs=-1, required=True)
@click.option("--queries", type=int, default=500, show_default=True, help="Random queries.")
@click.option("--in-size", type=int, default=3, show_default=True, help="|In| of Type I.")
@click.option("--ex-size", type=int, default=4, show_default=True, help="|Ex| of Type II.")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@verbosity_options
@set_input_options
def evaluate_sets_cmd(
    original: str,
    published: Sequence[str],
    queries: int,
    in_size: int,
    ex_size: int,
    seed: int | None,
    as_json: bool,
    source: SetSource,
) -> None:
    """Report the utility of set-valued releases.

    Of each release of ORIGINAL: query error (Xue §5.2) and expected error rate.

    The error rate of §5.1 needs each record's true match, which a release hides; from the files
    we report its expectation over the compatible published records of each original (the true
    match is uniform over them when they are exactly the graph's matches). The ``report`` of
    ``anonymize-sets`` carries the exact ER."""
    from anonymatch.sets.io import read_set_release
    from anonymatch.sets.metrics import set_utility

    if queries < 1 or in_size < 1 or ex_size < 1:
        raise InputError("--queries, --in-size and --ex-size must be at least 1")
    t = _read(original, source)
    seed = draw_seed(seed)
    results: dict[str, Any] = {}
    for path in published:
        rel = read_set_release(path, t)
        results[path] = set_utility(t, rel, queries, in_size, ex_size, seed).to_dict()
    if as_json:
        click.echo(json.dumps({**results, "seed": seed}, indent=2))
        return
    names = [Path(p).name for p in published]
    width = max(14, *(len(x) for x in names))
    click.echo("metric".ljust(24) + "".join(x.rjust(width + 2) for x in names))
    for key in next(iter(results.values())):
        cells = "".join(f"{results[p][key]:.4f}".rjust(width + 2) for p in published)
        click.echo(key.ljust(24) + cells)
    click.echo(f"seed {seed}")


@command("check-km")
@click.argument("transactions")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-m", "--m", "m", required=True, type=int, help="Items the adversary knows.")
@click.option("--show", type=int, default=10, show_default=True, help="Violations to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
@_km_input_options(".jsonl/.json a k^m release, else FIMI .dat; a CSV is refused")
def check_km_cmd(
    transactions: str, k: int, m: int, show: int, as_json: bool, source: SetSource
) -> None:
    """Check that transactions are k^m-anonymous.

    Is TRANSACTIONS (FIMI .dat, a .jsonl release, or a basket or long CSV with --format)
    k^m-anonymous? Exit 0 iff it is."""
    from anonymatch.core.counting import check_km

    matrix, labels = _read_km(transactions, source)
    report = check_km(matrix, labels, k, m)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=json_default))
    else:
        echo_check_summary(report, f"k^m-anonymity with m = {report.level}", show)
    exit_verdict(report.passed)


@command("anonymize-km")
@click.argument("input_path", metavar="TRANSACTIONS")
@output_options(
    "Release (JSON Lines, one {items} per line: .jsonl, .ndjson or .json).",
    extensions=SET_RELEASE_EXTENSIONS,
)
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-m", "--m", "m", required=True, type=int, help="Items the adversary knows.")
@seed_option
@_km_input_options(".jsonl/.json JSON Lines with 'items', else FIMI .dat; a CSV is refused")
def anonymize_km_cmd(
    input_path: str,
    output: str,
    k: int,
    m: int,
    seed: int | None,
    source: SetSource,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Publish transactions k^m-anonymous, verified.

    Global item grouping of TRANSACTIONS (FIMI .dat, or a basket or long CSV with --format);
    the release is verified."""
    from anonymatch.core.files import write_atomically
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.sets.km import anonymize_km

    started = time.perf_counter()
    for path in (output, report_path):
        check_output_path(path, input_path)
    bar = stage_bar(3, quiet, "anonymize-km")  # read, anonymize, write
    matrix, labels = _read_km(input_path, source)
    bar.update()
    release = anonymize_km(matrix, labels, k, m, seed=seed)
    bar.update()
    text = release.jsonl()
    write_atomically(output, lambda tmp: tmp.write_text(text))
    bar.update()
    bar.close()
    report = finish_manifest(
        dict(release.report), input_path, output, started, command="anonymize-km"
    )
    report["parameters"] = {**report.get("parameters", {}), "input_options": input_block(source)}
    write_manifest(report_path, report)
    if not quiet:
        click.echo(
            f"k^m = {k}^{m}: {report['input']['records']} transactions,"
            f" {report['input']['items']} items in {report['loss']['item_groups']} groups"
            f" -> {output}"
        )
        ncp = report["loss"]["item_ncp"]
        click.echo(f"verified: PASS; information loss: item NCP {100 * ncp:.2f}%")


COMMANDS = [anonymize_sets_cmd, verify_sets_cmd, evaluate_sets_cmd, anonymize_km_cmd, check_km_cmd]
