"""``anonymatch draw`` (issue 39): plain microdata tables drawn from a release, with a manifest
stating that they carry the release's guarantee and no more; ``--estimate`` combines estimates
over them by Rubin's rules (``cli.analysis``, shared with ``evaluate --estimate``).
"""

from __future__ import annotations

import json
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
    ext = draw_extension(release)
    directory, created = _draw_dir(out_dir)
    try:
        files = [str(directory / f"draw_{i}{ext}") for i in range(1, m + 1)]
        meta = str(directory / DRAWS_MANIFEST)
        outputs = [Output("-o/--output-dir", f) for f in files]
        outputs.append(Output("the draws manifest", meta, JSON_EXTENSIONS))
        if seed_file is not None:  # written after the run (seed_option), never among the draws
            outputs.append(Output("--seed-file", seed_file, JSON_EXTENSIONS))
        check_outputs(outputs, run_inputs(ctx), force)
        typed = read_release(release, manifest, table=release_table)
        tables = drawing.plain_draws(typed, m, weights=chosen, degree=degree, seed=seed)
        rows = estimate_rows(specs, {directory.name: tables}, None)  # refused before writing
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


def draw_extension(release_path: str) -> str:
    """The extension of the draws of a release: the release's own (``.csv``, ``.tsv``,
    ``.parquet``, ``.sav``, ``.dta``, …), Parquet for a directory of parts or a database
    table, CSV for an Excel workbook. O(1)."""
    from anonymatch.app.outputs import STATS_RELEASE_EXTENSIONS
    from anonymatch.tables.io.sql import is_database_url

    if is_database_url(release_path):
        return ".parquet"
    suffix = Path(release_path).suffix.lower()
    if suffix in (".csv", ".tsv", ".tab", ".parquet", ".pq", *STATS_RELEASE_EXTENSIONS):
        return suffix
    if Path(release_path).is_dir() or not suffix:
        return ".parquet"
    return ".csv"
