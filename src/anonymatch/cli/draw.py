"""``anonymatch draw`` (issue 39): plain microdata tables drawn from a release, with a manifest
stating that they carry the release's guarantee and no more; ``--estimate`` combines estimates
over them by Rubin's rules (``cli.analysis``, shared with ``evaluate --estimate``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from anonymatch.cli.analysis import estimate_rows, print_estimates
from anonymatch.cli.options import seed_option, verbosity_options
from anonymatch.cli.steps import command
from anonymatch.core.errors import InputError


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
@click.option("--output-table", default=None, metavar="NAME",
              help="RELEASE a database URL: the draws are the tables NAME_1 … NAME_M of its "
              "database, created in one transaction (default RELEASE-TABLE_draw).")  # fmt: skip
@click.option("--estimate", "estimates", multiple=True, metavar="SPEC",
              help="Print an estimate combined over the draws by Rubin's rules: mean(COL), "
              "proportion(COL = VALUE), ols(Y ~ X1 + X2). Repeatable.")  # fmt: skip
@seed_option
@click.option("--force", is_flag=True, help="Replace existing draws of the same names.")
@verbosity_options
@click.pass_context
def draw(
    ctx: click.Context,
    release: str,
    m: int,
    out_dir: str,
    weights: str | None,
    manifest: str | None,
    release_table: str | None,
    output_table: str | None,
    estimates: tuple[str, ...],
    seed: int | None,
    force: bool,
    quiet: bool,
    seed_file: str | None = None,
) -> None:
    """Draw M plain microdata tables from a release.

    Each QI cell of RELEASE is replaced by a value drawn inside it; the tables keep the
    original's column types and the release's format: CSV, TSV, Parquet (also for a directory
    of parts), Excel, SPSS and Stata with the release's variable and value labels, or tables of
    the release's database (--output-table NAME: NAME_1 … NAME_M, all or none, kept columns
    with the release table's SQL types). DIR/draws.json states that the draws carry the
    release's guarantee and no more: a draw is a function of the release and fresh randomness
    only. Analyse the M draws together (--estimate, or evaluate --estimate)."""
    from anonymatch.app.outputs import JSON_EXTENSIONS, Output, check_outputs
    from anonymatch.cli.options import run_inputs
    from anonymatch.core.files import write_atomically
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models import draws as drawing
    from anonymatch.tables.models.draws import DRAWS_MANIFEST

    specs = [drawing.parse_estimate(s) for s in estimates]
    given_seed = ctx.params.get("seed")  # not one drawn for --seed-file
    document = _load_manifest(manifest)
    degree = _degree(document)
    chosen = weights or ("anchored" if document is not None else "uniform")
    if chosen == "anchored" and degree is None:
        raise InputError(
            "--weights anchored needs the release's k: pass its manifest (--manifest), or "
            "--weights uniform"
        )
    target = draw_target(release, release_table, output_table)
    directory, created = _draw_dir(out_dir)
    try:
        files = [str(directory / f"draw_{i}{target.extension}") for i in range(1, m + 1)]
        tables_out = [f"{target.prefix}_{i}" for i in range(1, m + 1)] if target.prefix else []
        meta = str(directory / DRAWS_MANIFEST)
        outputs = [Output("-o/--output-dir", f) for f in ([] if tables_out else files)]
        outputs.append(Output("the draws manifest", meta, JSON_EXTENSIONS))
        if seed_file is not None:  # written after the run (seed_option), never among the draws
            outputs.append(Output("--seed-file", seed_file, JSON_EXTENSIONS))
        check_outputs(outputs, run_inputs(ctx), force)
        if tables_out:  # each table free (or --force), none of them the release itself
            from anonymatch.tables.io.sql import SqlSource, check_output_table

            for name in tables_out:
                check_output_table(release, name, force, SqlSource(release, release_table))
        typed = read_release(release, manifest, table=release_table)
        tables = drawing.plain_draws(typed, m, weights=chosen, degree=degree, seed=seed)
        rows = estimate_rows(specs, {directory.name: tables}, None)  # refused before writing
        labels = _labels(release, document)
        for table in tables:
            table.attrs.update(labels)
        if tables_out:
            _write_tables(release, release_table, dict(zip(tables_out, tables, strict=True)),
                          list(typed.attrs.get("qi") or []), force)  # fmt: skip
        else:
            for path, table in zip(files, tables, strict=True):
                drawing.write_table(path, table)
        guarantee = (document or {}).get("guarantee")
        block = drawing.manifest(release, tables_out or files,
                                 weights=chosen, degree=degree if chosen == "anchored" else
                                 None, seeded=given_seed is not None, guarantee=guarantee,
                                 in_database=bool(tables_out),
                                 release_table=release_table)  # fmt: skip
        if seed_file is not None:  # kept privately: said, never the seed or the path
            block["randomness"] = {**block["randomness"], "seed_file": True}
        text = json.dumps(block, indent=2, ensure_ascii=False) + "\n"
        write_atomically(meta, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except BaseException:
        if created:
            _remove_if_empty(directory)
        raise
    if not quiet:
        first, last = (tables_out[0], tables_out[-1]) if tables_out else (
            Path(files[0]).name, Path(files[-1]).name)  # fmt: skip
        where = "its database" if tables_out else str(directory)
        click.echo(
            f"{m} draws ({chosen}) of {target.name} in {where}: {first} … {last}, manifest "
            f"{directory / DRAWS_MANIFEST}"
        )
    if specs:
        print_estimates(rows, with_original=False, as_json=False)


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


@dataclass(frozen=True)
class DrawTarget:
    """Where the draws of a release go: files with ``extension``, or (``prefix`` set) the
    tables ``prefix_1`` … of the release's database; ``name`` is the release as shown."""

    name: str
    extension: str = ""
    prefix: str | None = None


DRAW_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".xlsx", ".sav", ".zsav",
                   ".dta")  # fmt: skip
"""Release formats whose draws are written in the same format (a file each)."""


def draw_target(release: str, release_table: str | None, output_table: str | None) -> DrawTarget:
    """The format of the draws of a release: its own — the same extension for a CSV, TSV,
    Parquet, Excel, SPSS or Stata release, Parquet for a directory of Parquet parts, tables of
    its database (``output_table``, default ``RELEASE_TABLE_draw``) for a database release.
    InputError (exit 2) for what cannot be honoured: ``output_table`` for a file release, a
    release in another format. O(1)."""
    from anonymatch.tables.io.sql import check_identifier, is_database_url, redact_url

    if is_database_url(release):
        if release_table is None:
            raise InputError("RELEASE is a database URL: give its table (--release-table)")
        prefix = output_table or f"{release_table}_draw"
        check_identifier(f"{prefix}_1", "--output-table")
        return DrawTarget(f"{release_table} ({redact_url(release)})", prefix=prefix)
    if output_table is not None:
        raise InputError("--output-table names the draws' tables of a database RELEASE; "
                         "draws of a file are files in -o DIR")  # fmt: skip
    suffix = Path(release).suffix.lower()
    if Path(release).is_dir():
        return DrawTarget(Path(release).name, ".parquet")  # a release in Parquet parts
    if suffix in DRAW_EXTENSIONS:
        return DrawTarget(Path(release).name, suffix)
    formats = ", ".join(DRAW_EXTENSIONS)
    raise InputError(f"cannot write draws in the format of {Path(release).name}: draws are "
                     f"{formats} files or database tables")  # fmt: skip


def _labels(release: str, document: dict[str, Any] | None) -> dict[str, Any]:
    """The labels the draws carry into an SPSS/Stata file: the manifest's variable labels and,
    for an SPSS/Stata release, its own variable and value labels and user-missing definitions
    (of its kept columns: the release holds no value labels for the QIs it generalized). O(1)
    beyond reading the release's first row."""
    from anonymatch.tables.io.stats import is_stats_file, read_stats_file

    labels: dict[str, Any] = {}
    recorded = ((document or {}).get("input") or {}).get("variable_labels")
    if isinstance(recorded, dict) and recorded:
        labels["variable_labels"] = dict(recorded)
    if is_stats_file(release) and Path(release).is_file():
        attrs = read_stats_file(Path(release), nrows=1).attrs
        variable = {**(attrs.get("variable_labels") or {}), **labels.get("variable_labels", {})}
        labels.update(variable_labels=variable, value_labels=attrs.get("value_labels") or {},
                      missing_ranges=attrs.get("missing_ranges") or {})  # fmt: skip
    return labels


def _write_tables(release: str, release_table: str | None, frames: dict[str, Any],
                  qi: list[str], force: bool) -> None:  # fmt: skip
    """The draws as tables of the release's database, in one transaction (all or none): the
    kept columns with the release table's SQL types (the original's, where the release kept
    them), the drawn QIs as numbers or text. O(m·n·d)."""
    from anonymatch.tables.io.sql import ColumnTypes, SqlSource, source_types, write_sql_tables

    types = ColumnTypes(source_types(SqlSource(release, release_table)), frozenset(qi))
    write_sql_tables(release, frames, replace=force, types=types)
