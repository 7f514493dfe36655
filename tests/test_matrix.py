"""One promise, every path (issue 35): every kind × every path × every criterion and check it
supports gives the same verdict as the in-memory path of the same kind, and an unsupported
combination exits 2 with one line on stderr and nothing written.

The axes are derived from the registries, never listed by hand: the table criteria from
``anonymatch.tables.models.POPULATION_CRITERIA`` (their parameters, and the paths and kinds that run
them), the ℓ-diversity variants from ``DIVERSITY_KINDS``, the methods and their capabilities
from each kind's registry and the flags a command takes from the command itself. A new
criterion or method is in the matrix as soon as it is registered.

- tables (``anonymize``): in memory, streamed (inline, processes, a directory of Parquet
  parts), from a database, to a database, database to database streamed × k, each ℓ-diversity,
  t-closeness, each registered criterion and the suppression limit; identifiers, kept-column
  leakage, ``--strict``, ``--report-html``; every registered method × both run paths × k/ℓ;
  infeasible models (exit 3, nothing left); ``anonymize-kl`` from a file and a database;
- relational (``anonymize-rt``): in memory, streamed inline and on processes × the same models
  and criteria, every method; identifiers (flag and job file), leakage, ``--strict``;
- sets (``anonymize-sets`` from FIMI and long CSV, every method × k/ℓ; ``anonymize-km``),
  sparse (in memory, chunked, streamed Parquet × every method) and graphs (open, closed);
- every table criterion and check a kind's command does not take: exit 2.

A supported combination is run through the command line (``anonymatch.cli.main``): the
release is made, checked again by the kind's verifier (and ``verify --manifest`` and
``report``), its identifiers are looked for in what was published, its manifest's claims are
read (and, edited to claim more, fail), and its verdict is compared with the in-memory path's.
The eleven bugs this matrix found when it was written (listed in the CHANGELOG, issue 35) are
fixed; a new one is written as the correct behaviour, marked ``xfail(strict=True)`` with its
reproduction until it is fixed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import load_all_commands, main
from anonymatch.relational.methods import registry as relational_registry
from anonymatch.sets.methods import names as set_names
from anonymatch.sets.methods import registry as set_registry
from anonymatch.sparse.methods import registry as sparse_registry
from anonymatch.tables.methods import names as table_names
from anonymatch.tables.methods import registry as table_registry
from anonymatch.tables.models import POPULATION_CRITERIA
from anonymatch.tables.models.disclosure import DIVERSITY_KINDS
from anonymatch.tables.risk.checks import CHECKS
from tests.factories import planted, random_frame


def sql() -> Any:
    """sqlalchemy (the sql extra): only the database paths need it; they skip without it."""
    return pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")


QI = ["--qi", "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s", "--k", "3"]
IDENTIFIERS = ["pid", "note"]  # a direct identifier and a free-text column, both dropped
SEED = ["--seed", "1", "-q"]
KL = ["--k", "3", "--known", "2", "--qi", "n0,n1,c0,c1", "--numeric", "n0,n1"]


# ---------------------------------------------------------------------------------------------
# helpers


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def seedless(err: str) -> list[str]:
    """stderr's lines without the seed warning every seeded run prints."""
    return [x for x in err.splitlines() if x.strip() and "--seed makes this run" not in x]


def files_in(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


def db_tables(url: str) -> set[str]:
    engine = sql().create_engine(url)
    try:
        return set(sql().inspect(engine).get_table_names())
    finally:
        engine.dispose()


def assert_refused(
    code: int, err: str, before: set[str], directory: Path, url: str | None = None,
    tables: set[str] | None = None,
) -> None:  # fmt: skip
    """Exit 2, one line on stderr, nothing written (no file, sidecar, manifest or table)."""
    lines = seedless(err)
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("anonymatch: error:"), err
    assert files_in(directory) == before, sorted(files_in(directory) - before)
    if url is not None:
        assert db_tables(url) == tables


def command_flags(command: str) -> set[str]:
    """Every flag the command takes (from the click command itself)."""
    params = load_all_commands().commands[command].params
    return {opt for p in params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("--")}


def table_checks() -> list[str]:
    """The table release checks that are flags of their own (beside the criteria): the
    parameters of the registered checks (``tables.risk.checks.CHECKS``)."""
    return [p.flag for p in CHECKS.parameters()]


def criterion_values(criterion: Any) -> list[str]:
    """Flags and values asking for one registered criterion: a value its kind accepts and a
    small register can meet (k-map 10 of 300, journalist risk 0.2, δ in [0.05, 0.5])."""
    chosen = {"kmap": "10", "journalist_risk": "0.2", "delta_max": "0.5", "delta_min": "0.05"}
    by_kind = {"integer": "5", "fraction": "0.5", "share": "0.0"}
    out: list[str] = []
    for p in criterion.parameters:
        out += [p.flag, chosen.get(p.name, by_kind.get(p.kind, "0.5"))]
    return out


# ---------------------------------------------------------------------------------------------
# the table axes, from the registries


@dataclass(frozen=True)
class Model:
    """One criterion or model of the matrix: its flags and where the registry says it runs."""

    id: str
    args: tuple[str, ...]
    routes: tuple[str, ...]  # run paths that enforce it ("memory", "streamed")
    kinds: tuple[str, ...]  # data kinds that take it ("table", "relational", …)
    criterion: str | None = None  # the CRITERIA name (guarantee.<name>, verify's <name>)
    population: bool = False
    sensitive: bool = False  # a model of the sensitive column (guarantee.sensitive)


def sensitive_models() -> list[Model]:
    """k, every ℓ-diversity variant and t-closeness: sensitive models run on every path of the
    kinds that take --l/--t (tables and relational)."""
    both, kinds = ("memory", "streamed"), ("table", "relational")
    out = [Model("k", (), both, kinds)]
    for d in DIVERSITY_KINDS:
        extra = ("--c", "3") if d == "recursive" else ()
        args = ("--l", "2", "--diversity", d, *extra)
        out.append(Model(f"l-{d}", args, both, kinds, sensitive=True))
    out.append(Model("t", ("--t", "0.4"), both, kinds, sensitive=True))
    return out


def population_models() -> list[Model]:
    """One case per registered population criterion (``POPULATION_CRITERIA``), with the paths
    and kinds it declares (the sensitive models: :func:`sensitive_models`)."""
    return [
        Model(
            c.name,
            tuple(criterion_values(c)),
            tuple(c.paths),
            tuple(c.kinds),
            c.name,
            c.needs_population,
        )  # fmt: skip
        for c in POPULATION_CRITERIA.criteria
    ]


SUPPRESSION = Model("suppression", ("--suppression-limit", "0.05"), ("memory",), ("table",))
"""ARX's suppression limit: in memory only (the streamed path publishes every record)."""
MODELS = [*sensitive_models(), *population_models(), SUPPRESSION]


@dataclass(frozen=True)
class TablePath:
    """A way through ``anonymize``: where the input comes from, where the release goes, and the
    run path it must take (the manifest's ``plan.path``)."""

    id: str
    route: str
    source: str  # "csv" | "parquet" | "db"
    target: str  # "csv" | "parquet" | "xlsx" | "dir" | "db"
    executor: tuple[str, ...] = ()


REFUSED = "refused"  # a path no model runs on (an Excel release is written in memory only)
PARTS = ("--partition-size", "20")  # 3 partitions of the 60 people on the streamed paths
TABLE_PATHS = [
    TablePath("memory", "memory", "csv", "csv", ("--executor", "threads")),
    TablePath("streamed", "streamed", "csv", "csv", ("--executor", "inline", *PARTS)),
    TablePath(
        "streamed-processes",
        "streamed",
        "csv",
        "csv",
        ("--executor", "processes", "--workers", "2", *PARTS, "--chunk-rows", "20"),
    ),
    TablePath("streamed-directory", "streamed", "csv", "dir", PARTS),  # auto: a directory streams
    TablePath("parquet", "memory", "parquet", "parquet", ("--executor", "threads")),
    TablePath(
        "parquet-streamed", "streamed", "parquet", "parquet", ("--executor", "inline", *PARTS)
    ),
    TablePath("excel", "memory", "csv", "xlsx", ("--executor", "threads")),
    TablePath("excel-streamed", REFUSED, "csv", "xlsx", ("--executor", "inline")),
    TablePath("db-in", "memory", "db", "csv"),
    TablePath("db-out", "memory", "csv", "db"),
    TablePath("db-streamed", "streamed", "db", "db", ("--executor", "inline", *PARTS)),
]
RUNNING_PATHS = [p for p in TABLE_PATHS if p.route != REFUSED]

# the bugs the matrix found, one entry each (the tests assert the correct behaviour)


@pytest.fixture(scope="module")
def table_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """60 sampled people (an id, 4 QIs, a sensitive column, a free-text note) and a register of
    300 that contains them."""
    root = tmp_path_factory.mktemp("tables")
    sample = random_frame(60, 5)
    sample.insert(0, "pid", [f"id{i:03d}" for i in range(60)])
    sample["note"] = [f"free text {i}" for i in range(60)]
    sample.to_csv(root / "sample.csv", index=False)
    others = random_frame(240, 6).assign(pid=[f"x{i}" for i in range(240)], note="x")
    pd.concat([sample, others], ignore_index=True).to_csv(root / "register.csv", index=False)
    sample.to_parquet(root / "sample.parquet", index=False)
    return {"sample": root / "sample.csv", "parquet": root / "sample.parquet",
            "register": root / "register.csv"}  # fmt: skip


def table_command(
    path: TablePath, data: dict[str, Path], tmp: Path, extra: list[str], name: str = "rel"
) -> tuple[list[str], dict[str, Any]]:
    """The anonymize command of ``path`` in ``tmp`` and where its pieces are."""
    where: dict[str, Any] = {"manifest": tmp / f"{name}.json", "url": None}
    if path.source == "db" or path.target == "db":
        url = f"sqlite:///{tmp / 'data.db'}"
        where["url"] = url
        if not (tmp / "data.db").exists():
            engine = sql().create_engine(url)
            pd.read_csv(data["sample"]).to_sql("sample", engine, index=False)
            engine.dispose()
    source = {"db": [where["url"], "--table", "sample"], "parquet": [data["parquet"]]}.get(
        path.source, [data["sample"]]
    )
    if path.target == "db":
        target = [where["url"], "--output-table", name]
        where["release"] = [where["url"], "--release-table", name]
    elif path.target == "dir":
        target = [str(tmp / name) + "/"]
        where["release"] = [tmp / name]
    else:
        target = [tmp / f"{name}.{path.target}"]
        where["release"] = target
    where["original"] = source
    args = ["anonymize", *source, "-o", *target, *QI, *path.executor, *extra]
    return [*args, "--report", where["manifest"]], where


def published(path: TablePath, where: dict[str, Any], name: str = "rel") -> pd.DataFrame:
    """The release as published (every cell as text)."""
    if path.target == "db":
        engine = sql().create_engine(where["url"])
        try:
            return pd.read_sql_table(name, engine).astype(str)
        finally:
            engine.dispose()
    if path.target == "dir":
        parts = sorted(Path(where["release"][0]).glob("*.parquet"))
        return pd.concat([pd.read_parquet(p) for p in parts]).astype(str)
    if path.target == "parquet":
        return pd.read_parquet(where["release"][0]).astype(str)
    if path.target == "xlsx":
        return pd.read_excel(where["release"][0], dtype=str)
    return pd.read_csv(where["release"][0], dtype=str)


def model_args(model: Model, data: dict[str, Path]) -> list[str]:
    return [*model.args, *(["--population", str(data["register"])] if model.population else [])]


def claims(guarantee: dict[str, Any]) -> dict[str, Any]:
    """A manifest's claims: the model, k, the sensitive models and every registered criterion
    (not how the release was built: ``construction``, a ring ``certificate``)."""
    keys = {"model", "k", "sensitive", *(c.name for c in POPULATION_CRITERIA.criteria)}
    return {key: value for key, value in guarantee.items() if key in keys}


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """What a verifier's JSON says, without the figures that depend on the draw."""
    out: dict[str, Any] = {"passed": report["passed"], "k": report.get("k")}
    if report.get("sensitive"):
        out["sensitive"] = [(s["column"], s["model"], s["passed"]) for s in report["sensitive"]]
    for c in POPULATION_CRITERIA.criteria:
        if c.name in report:
            out[c.name] = report[c.name]["passed"]
    return out


def run_table(
    path: TablePath, model: Model, data: dict[str, Path], tmp: Path,
    capsys: pytest.CaptureFixture[str],
) -> dict[str, Any]:  # fmt: skip
    """Run one supported combination end to end; returns its verdict for the comparison."""
    extra = [*model_args(model, data), "--identifiers", ",".join(IDENTIFIERS), *SEED]
    args, where = table_command(path, data, tmp, extra)
    code, _, err = run(args, capsys)
    assert code == 0, err
    manifest = json.loads(where["manifest"].read_text())
    assert manifest["plan"]["path"] == path.route
    # identifiers never published: neither the columns nor any of their values
    release = published(path, where)
    assert not set(IDENTIFIERS) & set(release.columns)
    cells = set(release.to_numpy().ravel().tolist())
    original = pd.read_csv(data["sample"], dtype=str)
    assert not cells & set(original["pid"]) and not cells & set(original["note"])
    assert manifest["parameters"]["identifiers"] == IDENTIFIERS
    # the manifest's claims
    guarantee = manifest["guarantee"]
    assert guarantee["k"] == 3 and manifest["verification"]["passed"]
    if model.sensitive:
        assert guarantee["sensitive"] and manifest["verification"]["sensitive"]
        assert all(s["passed"] for s in manifest["verification"]["sensitive"])
    if model is SUPPRESSION:
        assert manifest["parameters"]["suppression_limit"] == float(model.args[1])
    if model.criterion is not None:
        assert model.criterion in guarantee
        assert manifest["verification"][model.criterion]["passed"]
    # the verifier, from explicit claims and from the manifest
    check = ["verify", *where["original"], *where["release"], *QI, *model_args(model, data)]
    if path.target == "dir" or "certificate" in guarantee:
        # a directory of parts is verified with its manifest (docs/cli.md), and so is a
        # release of sensitive rings: its certificate is in the manifest only
        # (docs/guarantees/sensitive.md §6); the flags still state every claim
        check += ["--manifest", where["manifest"], "--executor", "inline"]
    code, out, err = run([*check, "--json"], capsys)
    assert code == 0, err + out
    explicit = verdict(json.loads(out))
    stricter = [*check, "--json"]
    stricter[stricter.index("--k") + 1] = "10"  # more than the release holds: FAIL, exit 4
    code, text, err = run(stricter, capsys)
    assert code == 4 and not json.loads(text)["passed"], err + text
    inline = ["--executor", "inline"] if path.route == "streamed" else []
    mcheck = ["verify", *where["original"], *where["release"], "--manifest", where["manifest"]]
    code, out, err = run([*mcheck, *inline, "--json"], capsys)
    assert code == 0, err + out
    # every claim is re-checked: a manifest claiming more than the release holds fails
    for name, edited in tampered(manifest, model).items():
        forged = tmp / f"{name}.json"
        forged.write_text(json.dumps(edited))
        forge = ["verify", *where["original"], *where["release"], "--manifest", forged]
        code, text, err = run([*forge, *inline, "--json"], capsys)
        assert code == 4 and not json.loads(text)["passed"], (name, err + text)
    html = tmp / "report.html"
    report = ["report", *where["original"][:1], where["release"][0], "--manifest",
              where["manifest"], "-o", html, "-q"]  # fmt: skip
    return {
        "report": report,
        "guarantee": claims(guarantee),
        "verify": explicit,
        "verify_manifest": verdict(json.loads(out)),
    }


def first_of(name: str) -> Any:
    """The registered criterion called ``name``."""
    return next(c for c in POPULATION_CRITERIA.criteria if c.name == name)


def tampered(manifest: dict[str, Any], model: Model) -> dict[str, dict[str, Any]]:
    """Copies of ``manifest`` claiming more than the release holds: k = 10 instead of 3, and
    the model's own claim raised (ℓ = 30, t = 0.001, a criterion's numbers 30 times
    stricter, its other parameters at their defaults)."""
    out = {"k": json.loads(json.dumps(manifest))}
    out["k"]["guarantee"]["k"] = 10  # (a partition of 20 fits 2k)
    if not model.sensitive and model.criterion is None:
        return out
    edited = json.loads(json.dumps(manifest))
    guarantee = edited["guarantee"]
    if model.sensitive:
        claim = guarantee["sensitive"][0]
        if "l" in claim:
            claim["l"] = 30
        else:
            claim["t"] = 0.001
    else:
        block = guarantee[model.criterion]
        for other in first_of(model.criterion).parameters[1:]:
            block.pop(other.name, None)  # the others at their defaults (δmin = 0)
        for key, value in block.items():  # its numbers (the register's digest is text)
            if isinstance(value, int | float) and not isinstance(value, bool):
                block[key] = value * 30 if isinstance(value, int) else value / 30
    out[model.id] = edited
    return out


_REFERENCE: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def reference(
    table_data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The in-memory verdict of a model, run once (by its own test, or here on demand)."""

    def get(model: Model, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
        if model.id not in _REFERENCE:
            tmp = tmp_path_factory.mktemp(f"reference-{model.id}")
            _REFERENCE[model.id] = run_table(TABLE_PATHS[0], model, table_data, tmp, capsys)
        return _REFERENCE[model.id]

    yield get
    _REFERENCE.clear()


def table_cases() -> list[Any]:
    return list(_table_cases())


def _table_cases() -> Iterator[Any]:
    for path in TABLE_PATHS:
        for model in MODELS:
            yield pytest.param(path, model, id=f"{path.id}-{model.id}")


@pytest.mark.parametrize(("path", "model"), table_cases())
def test_table_matrix(
    path: TablePath, model: Model, table_data: dict[str, Path], reference: Any, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Tables: every path × every model and criterion. A supported one gives the in-memory
    verdict (the same claims, verify and verify --manifest agreeing); an unsupported one (a
    criterion the path cannot enforce) exits 2, one line, nothing written."""
    if path.route in model.routes and "table" in model.kinds:
        got = run_table(path, model, table_data, tmp_path, capsys)
        if path is TABLE_PATHS[0]:
            _REFERENCE.setdefault(model.id, got)  # the in-memory path is the reference
        want = reference(model, capsys)
        assert got["guarantee"] == want["guarantee"]
        assert got["verify"] == want["verify"]
        assert got["verify_manifest"] == want["verify_manifest"] == want["verify"]
        # report re-checks the claims from the same files (exit 0: every claim checked, passed)
        code, said, err = run(got["report"], capsys)
        assert code == 0 and Path(got["report"][-2]).exists(), err + said
        return
    extra = [*model_args(model, table_data), "--identifiers", ",".join(IDENTIFIERS), "-q"]
    args, where = table_command(path, table_data, tmp_path, extra)
    url = where["url"]
    before, tables = files_in(tmp_path), db_tables(url) if url else None
    code, _, err = run(args, capsys)
    assert_refused(code, err, before, tmp_path, url, tables)
    if path.route != REFUSED:  # the path runs, the criterion does not: its flag is named
        assert model.criterion is None or model.args[0] in err


def leakage_cases() -> list[Any]:
    return list(_leakage_cases())


def _leakage_cases() -> Iterator[Any]:
    for path in RUNNING_PATHS:
        yield pytest.param(path, id=path.id)


@pytest.mark.parametrize("path", leakage_cases())
def test_table_kept_column_leakage(
    path: TablePath, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A kept free-text column (``note``, one value per person) is flagged on every path: the
    manifest's ``leakage`` block and a warning on stderr, as for a CSV in memory."""
    args, where = table_command(path, table_data, tmp_path, ["--identifiers", "pid", *SEED])
    code, _, err = run(args, capsys)
    assert code == 0, err
    assert json.loads(where["manifest"].read_text())["leakage"]["flagged"] == ["note"]
    assert "warning: column 'note' is released unchanged" in err


@pytest.mark.parametrize("path", RUNNING_PATHS, ids=[p.id for p in RUNNING_PATHS])
def test_table_strict_refuses_leaks(
    path: TablePath, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``--strict`` refuses the leaking release on every path: exit 2, one line, nothing
    written (no release, sidecar, part, manifest or table)."""
    args, where = table_command(
        path, table_data, tmp_path, ["--identifiers", "pid", "--strict", "-q"]
    )
    url = where["url"]
    before, tables = files_in(tmp_path), db_tables(url) if url else None
    code, _, err = run(args, capsys)
    assert_refused(code, err, before, tmp_path, url, tables)
    assert "refused (--strict)" in err and "'note'" in err


# ---------------------------------------------------------------------------------------------
# the release checks (identifiers, leakage, headline: ``tables.risk.checks.CHECKS``): each one's
# verdict on every path that runs it is the in-memory path's, and what the manifest states is the
# check's own verdict on the files written


def at(manifest: dict[str, Any], where: tuple[str, ...]) -> Any:
    """The manifest's block at a check's place (None: absent)."""
    block: Any = manifest
    for key in where:
        block = block.get(key) if isinstance(block, dict) else None
    return block


def same(a: Any, b: Any) -> bool:
    """Equal JSON, floats to 1e-12 (a streamed release sums its shares in another order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return bool(a == pytest.approx(b, rel=1e-12, abs=1e-12))
    return bool(a == b)


def table_check_cases() -> list[Any]:
    return [
        pytest.param(c, path, id=f"{c.name}-{path.id}")
        for c in CHECKS.criteria
        for path in RUNNING_PATHS
    ]


_CHECK_REFERENCE: dict[str, Any] = {}


@pytest.mark.parametrize(("check", "path"), table_check_cases())
def test_table_check_verdicts(
    check: Any, path: TablePath, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Every registered release check on every table path: where the registry runs it, the
    block at its place is its verdict on the written release and the original (re-checked
    here from the files, in memory), and its verdict is the in-memory path's; where it does
    not run, no block."""
    from anonymatch.cli.tables import read_release
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.io import read_table
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.pipeline import prepare
    from anonymatch.tables.risk.checks import ReleaseView

    args, where = table_command(path, table_data, tmp_path, ["--identifiers", "pid", *SEED])
    code, _, err = run(args, capsys)
    assert code == 0, err
    manifest = json.loads(where["manifest"].read_text())
    runs = check.runs("table", path.route)
    if not check.at:  # a check that only refuses: the release passed it
        assert runs
    elif not runs:
        assert at(manifest, check.at) is None
        return
    schema = Schema.build(QI[1].split(","), QI[3].split(","), ["s"], ["pid"])
    data, enc, _ = prepare(read_table(str(table_data["sample"])).astype(str), schema)
    release = read_release(*map(str, where["release"][:1]), *where["release"][2:])
    view = ReleaseView.of(data, enc, parse_cells(release, enc), release, schema)
    verdict = CHECKS.for_release({"identifiers": ("pid",)}, "table", path.route)
    again = next(c for c in verdict if type(c) is check).check(view)
    assert again.passed
    if check.at:
        assert same(at(manifest, check.at), json.loads(json.dumps(again.figures)))
    summary = (again.passed, again.reason)
    assert _CHECK_REFERENCE.setdefault(check.name, summary) == summary  # memory runs first
    # the same check fails a release that shows what it guards against
    if check.name == "identifiers":
        shown = release.assign(pid="x")
        assert not check(("pid",)).check(ReleaseView.of(data, enc, view.rows.cells, shown,
                                                         schema)).passed  # fmt: skip


def test_relational_check_verdicts(
    rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The registered checks that run on relational releases give the same verdict on every
    relational path (the flagged kept column, the identifier and the id never published) and
    the others write nothing."""
    blocks = []
    for path in RT_PATHS:
        out, report = tmp_path / f"{path.id}.jsonl", tmp_path / f"{path.id}.json"
        args = ["anonymize-rt", *rt_base(rt_data, "named"), *path.executor, *SEED]
        code, _, err = run([*args, "-o", out, "--report", report], capsys)
        assert code == 0, err
        manifest = json.loads(report.read_text())
        route = "memory" if path.id == "memory" else "streamed"
        found = {}
        for check in CHECKS.criteria:
            if check.at:
                block = at(manifest, check.at)
                assert (block is not None) == check.runs("relational", route), check.name
                found[check.name] = block and block.get("flagged", block.get("verdict"))
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert all("pid" not in r for r in records)
        blocks.append(found)
    assert blocks[0]["leakage"] == ["name"] and all(b == blocks[0] for b in blocks)


# ---------------------------------------------------------------------------------------------
# tables: every method of the registry on both run paths, with and without a sensitive model


def table_method_cases() -> list[Any]:
    cases = []
    for method in table_registry().values():
        if method.levels:
            continue  # per-record levels: the adaptive path (test_table_levels_methods)
        for path in (TABLE_PATHS[0], TABLE_PATHS[1]):
            for model in ("k", "l"):
                cases.append(pytest.param(method.name, path, model,
                                          id=f"{method.name}-{path.id}-{model}"))  # fmt: skip
    return cases


@pytest.mark.parametrize(("method", "path", "model"), table_method_cases())
def test_table_methods(
    method: str, path: TablePath, model: str, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Each registered method runs where its capabilities say (``streamable``, ``sensitive``)
    and its release verifies; elsewhere exit 2, one line, nothing written."""
    small = tmp_path / "small.csv"
    pd.read_csv(table_data["sample"]).head(24).to_csv(small, index=False)
    data = {**table_data, "sample": small}
    m = table_registry()[method]
    supported = (path.route == "memory" or m.streamable) and (model == "k" or m.sensitive)
    extra = ["--method", method, "--identifiers", ",".join(IDENTIFIERS), *SEED]
    extra += ["--time-limit", "0.5"] if method == "mip" else []  # HiGHS, partitions of 8
    extra += ["--l", "2"] if model == "l" else ["--l", "1"]  # k: the column unprotected
    args, where = table_command(path, data, tmp_path, extra)
    if not supported:
        before = files_in(tmp_path)
        code, _, err = run(args, capsys)
        assert_refused(code, err, before, tmp_path)
        return
    code, _, err = run(args, capsys)
    assert code == 0, err
    manifest = json.loads(where["manifest"].read_text())
    assert manifest["plan"]["path"] == path.route and manifest["method"] == method
    release = published(path, where)
    assert not set(IDENTIFIERS) & set(release.columns)
    check = ["verify", small, where["release"][0], *QI, "--l", "2" if model == "l" else "1"]
    code, out, err = run([*check, "--json"], capsys)
    assert code == 0 and json.loads(out)["passed"], err + out
    code, out, err = run(["verify", small, where["release"][0], "--manifest",
                          where["manifest"], "--json"], capsys)  # fmt: skip
    assert code == 0 and json.loads(out)["passed"], err + out


@pytest.mark.parametrize("method", table_names(levels=True))
@pytest.mark.parametrize(
    "model",
    [m for m in MODELS if m.criterion is not None or m.id == "l-distinct"],
    ids=lambda m: m.id,
)
def test_table_levels_methods_refuse_models(
    method: str, model: Model, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The per-record-level methods take no population criterion and no sensitive model:
    exit 2, one line, nothing written."""
    extra = ["--method", method, *model_args(model, table_data), "--identifiers", "pid,note"]
    args, _ = table_command(TABLE_PATHS[0], table_data, tmp_path, [*extra, "-q"])
    before = files_in(tmp_path)
    code, _, err = run(args, capsys)
    assert_refused(code, err, before, tmp_path)


# ---------------------------------------------------------------------------------------------
# relational: anonymize-rt in memory and streamed


@dataclass(frozen=True)
class RtPath:
    id: str
    executor: tuple[str, ...]


RT_PATHS = [
    RtPath("memory", ("--executor", "threads")),
    RtPath("streamed", ("--stream", "--executor", "inline")),
    RtPath("streamed-processes", ("--stream",)),  # auto on --stream: local processes
]
RT_QI = ["--id", "pid", "--item-column", "code", "--qi", "age,sex", "--numeric", "age"]


@pytest.fixture(scope="module")
def rt_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """40 people (an id, two QIs, a disease; and a copy with a free-text ``name``), their items
    in a long table, and a register of 240 that contains them."""
    root = tmp_path_factory.mktemp("relational")
    rng = np.random.default_rng(3)
    n = 40
    people = pd.DataFrame({
        "pid": [f"p{i:02d}" for i in range(n)],
        "age": rng.integers(20, 60, n),
        "sex": rng.choice(list("FM"), n),
        "disease": rng.choice(["flu", "cold", "hiv"], n),
    })  # fmt: skip
    items = pd.DataFrame({
        "pid": [f"p{i % n:02d}" for i in range(100)],
        "code": [f"c{x}" for x in rng.integers(0, 6, 100)],
    }).drop_duplicates()  # fmt: skip
    people.to_csv(root / "people.csv", index=False)
    items.to_csv(root / "items.csv", index=False)
    with_name = people.assign(name=[f"person {i}" for i in range(n)])
    with_name.to_csv(root / "people_named.csv", index=False)
    others = pd.DataFrame({"age": rng.integers(20, 60, 200), "sex": rng.choice(list("FM"), 200)})
    pd.concat([people[["age", "sex"]], others]).to_csv(root / "register.csv", index=False)
    return {"people": root / "people.csv", "items": root / "items.csv",
            "named": root / "people_named.csv", "register": root / "register.csv"}  # fmt: skip


def rt_base(data: dict[str, Path], people: str = "people") -> list[str]:
    return [data[people], "--items", data["items"], *RT_QI, "--sensitive", "disease", "-k", "3"]


def rt_run(
    path: RtPath, model: Model, data: dict[str, Path], tmp: Path,
    capsys: pytest.CaptureFixture[str], method: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    out, report = tmp / "rel.jsonl", tmp / "rel.json"
    method_args = ["--method", method] if method else []
    args = ["anonymize-rt", *rt_base(data, "named"), "--identifiers", "name"]
    args += [*model_args(model, data), *method_args]
    code, _, err = run([*args, *path.executor, "-o", out, "--report", report, *SEED], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["data_kind"] == "relational" and manifest["verification"]["passed"]
    streamed = (
        manifest["output"].get("layout") == "partitioned"
        or "partitions" in manifest["verification"]
    )
    assert streamed == (path.id != "memory")
    assert manifest["guarantee"]["k"] == 3
    if model.sensitive:
        assert manifest["guarantee"]["sensitive"]
    if model.criterion is not None:
        assert model.criterion in manifest["guarantee"]
        assert manifest["verification"][model.criterion]["passed"]
    assert manifest["parameters"]["identifiers"] == ["name"]
    # the id and the identifier are never published, in no field
    named = pd.read_csv(data["named"])
    ids = set(named["pid"]) | set(named["name"])
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert "pid" not in record and "name" not in record
        values = [v for x in record.values() for v in (x if isinstance(x, list) else [x])]
        assert not ids & {str(v) for v in values}
    assert_reported(data["named"], out, report, tmp, capsys)
    base = rt_base(data, "named")
    check = ["verify-rt", base[0], out, *base[1:]]
    code, text, err = run([*check, *model_args(model, data), "--json"], capsys)
    assert code == 0, err + text
    return {"guarantee": manifest["guarantee"], "verify": verdict(json.loads(text)),
            "manifest": report, "release": out}  # fmt: skip


_RT_REFERENCE: dict[str, dict[str, Any]] = {}


def rt_supported(path: RtPath, model: Model) -> bool:
    route = "memory" if path.id == "memory" else "streamed"
    return "relational" in model.kinds and route in model.routes


def rt_cases() -> list[Any]:
    cases = []
    for path in RT_PATHS:
        for model in MODELS:
            cases.append(pytest.param(path, model, id=f"{path.id}-{model.id}"))
    return cases


@pytest.mark.parametrize(("path", "model"), rt_cases())
def test_relational_matrix(
    path: RtPath, model: Model, rt_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """anonymize-rt: every path × every model and criterion. A model the registry runs on
    relational data on that path (``kinds``, ``paths``) gives the in-memory verdict, with the
    identifier and the id never published; any other (the population criteria on the streamed
    path) exits 2, one line, nothing written."""
    if rt_supported(path, model):
        got = rt_run(path, model, rt_data, tmp_path, capsys)
        if path is RT_PATHS[0]:
            _RT_REFERENCE.setdefault(model.id, got)  # the in-memory path is the reference
        if model.id not in _RT_REFERENCE:
            ref = tmp_path / "reference"
            ref.mkdir()
            _RT_REFERENCE[model.id] = rt_run(RT_PATHS[0], model, rt_data, ref, capsys)
        want = _RT_REFERENCE[model.id]
        assert got["guarantee"] == want["guarantee"] and got["verify"] == want["verify"]
        return
    args = ["anonymize-rt", *rt_base(rt_data), *model_args(model, rt_data), *path.executor]
    before = files_in(tmp_path)
    code, _, err = run([*args, "-o", tmp_path / "r.jsonl", "--report", tmp_path / "r.json"], capsys)
    assert_refused(code, err, before, tmp_path)


@pytest.mark.parametrize("path", RT_PATHS, ids=[p.id for p in RT_PATHS])
@pytest.mark.parametrize("method", list(relational_registry()))
def test_relational_methods(
    method: str, path: RtPath, rt_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Every registered relational method on every path (``streamable`` says where)."""
    m = relational_registry()[method]
    if path.id == "memory" or m.streamable:
        rt_run(path, MODELS[0], rt_data, tmp_path, capsys, method=method)
        return
    args = ["anonymize-rt", *rt_base(rt_data), "--method", method, *path.executor]
    before = files_in(tmp_path)
    code, _, err = run([*args, "-o", tmp_path / "r.jsonl"], capsys)
    assert_refused(code, err, before, tmp_path)


@pytest.mark.parametrize("path", RT_PATHS[:2], ids=[p.id for p in RT_PATHS[:2]])
def test_relational_kept_column_is_checked(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A people column that is no QI, sensitive column or id (``name``: one value per person)
    is released unchanged: as for tables, the leakage check warns about it on stderr and the
    manifest records it."""
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    args = ["anonymize-rt", *rt_base(rt_data, "named"), *path.executor, *SEED]
    code, _, err = run([*args, "-o", out, "--report", report], capsys)
    assert code == 0, err
    assert "column 'name'" in err
    assert json.loads(report.read_text())["leakage"]["flagged"] == ["name"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(RT_PATHS[0], id="memory"),
        pytest.param(RT_PATHS[1], id="streamed"),
    ],
)  # fmt: skip
def test_relational_item_column_is_not_the_id(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--item-column equal to --id would publish the ids as items: exit 2 on both paths, one
    line, nothing written."""
    args = ["anonymize-rt", rt_data["people"], "--items", rt_data["items"], "--id", "pid",
            "--item-column", "pid", "--qi", "age,sex", "--numeric", "age", "-k", "3"]  # fmt: skip
    before = files_in(tmp_path)
    code, _, err = run([*args, *path.executor, "-q", "-o", tmp_path / "r.jsonl"], capsys)
    assert_refused(code, err, before, tmp_path)


# ---------------------------------------------------------------------------------------------
# sets (anonymize-sets, anonymize-km), sparse matrices and graphs


@pytest.fixture(scope="module")
def other_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """60 transactions with a label each, a 48 × 36 binary matrix (CSV and Parquet edge lists)
    and a 30-vertex graph."""
    from anonymatch.sparse.io import write_sparse

    root = tmp_path_factory.mktemp("others")
    rng = np.random.default_rng(3)
    lines = [
        " ".join(map(str, sorted(set(rng.integers(0, 15, rng.integers(1, 6)).tolist()))))
        for _ in range(60)
    ]
    (root / "t.dat").write_text("\n".join(lines) + "\n")
    (root / "labels.txt").write_text("\n".join(f"job{i % 10}" for i in range(60)) + "\n")
    long = [f"rec{i:03d},{item},job{i % 10}" for i, x in enumerate(lines) for item in x.split()]
    (root / "t_long.csv").write_text("rid,item,job\n" + "\n".join(long) + "\n")
    matrix = planted(blocks=6, size=8, items=6, noise=0.05, seed=1)
    write_sparse(root / "m.csv", matrix)
    write_sparse(root / "m.parquet", matrix)
    edges = [(a, b) for a in range(30) for b in range(a + 1, 30) if rng.random() < 0.3]
    (root / "g.csv").write_text("".join(f"{a},{b}\n" for a, b in edges))
    return {"dat": root / "t.dat", "long": root / "t_long.csv", "labels": root / "labels.txt",
            "csv": root / "m.csv",
            "parquet": root / "m.parquet", "graph": root / "g.csv"}  # fmt: skip


def assert_reported(
    original: Path, release: Path, manifest: Path, tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report`` re-checks the release's claims from the files: exit 0 and the HTML file."""
    html = tmp / "report.html"
    args = ["report", original, release, "--manifest", manifest, "-o", html, "-q", "--force"]
    code, said, err = run(args, capsys)
    assert code == 0 and html.exists(), err + said


SET_MODELS = {"k": ["--k", "4"], "l": ["--l", "3"]}


SET_SOURCES = {
    "dat": ([], lambda data: ["--sensitive-file", data["labels"]]),  # FIMI, labels in a file
    "long": (["--format", "long", "--id-column", "rid", "--item-column", "item"],
             lambda data: ["--sensitive", "job"]),  # one row per record and item, with ids
}  # fmt: skip


@pytest.mark.parametrize("source", list(SET_SOURCES))
@pytest.mark.parametrize("model", list(SET_MODELS))
@pytest.mark.parametrize("method", set_names(command="anonymize-sets"))
def test_sets_matrix(
    method: str, model: str, source: str, other_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """anonymize-sets: every method × k / ℓ as its capabilities say (``anonymity``,
    ``sensitive``), from a FIMI file and a long CSV with record ids: verify-sets and report
    agree with the manifest's verdict, no record id is published; otherwise exit 2."""
    m = set_registry()[method]
    supported = m.anonymity if model == "k" else m.sensitive
    reading, labels = SET_SOURCES[source]
    label_args = labels(other_data) if model == "l" else []
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    data = other_data[source]
    args = ["anonymize-sets", data, *reading, "--method", method, *SET_MODELS[model], *label_args]
    args += ["--segment", "10,14"] if m.tsp else []
    args += ["-o", out, "--report", report]
    if not supported:
        before = files_in(tmp_path)
        code, _, err = run([*args, "-q"], capsys)
        assert_refused(code, err, before, tmp_path)
        return
    code, _, err = run([*args, *SEED], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["verification"]["passed"]
    assert "rec0" not in out.read_text()
    check = ["verify-sets", data, out, *reading, *SET_MODELS[model], "--json"]
    code, text, err = run(check, capsys)
    assert code == 0 and json.loads(text)["passed"], err + text
    assert json.loads(text)["level"] == int(SET_MODELS[model][1])
    assert_reported(data, out, report, tmp_path, capsys)


@pytest.mark.parametrize("method", set_names(command="anonymize-km"))
def test_km_matrix(
    method: str, other_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anonymize-km: its release is k^m-anonymous by check-km and its manifest claims it."""
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    args = ["anonymize-km", other_data["dat"], "-k", "3", "-m", "2", "-o", out]
    code, _, err = run([*args, "--report", report, *SEED], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"] == {"model": "k^m-anonymity", "k": 3, "m": 2}
    code, text, err = run(["check-km", out, "-k", "3", "-m", "2", "--json"], capsys)
    assert code == 0 and json.loads(text)["passed"], err + text
    assert_reported(other_data["dat"], out, report, tmp_path, capsys)


SPARSE_PATHS = {
    "memory": ("csv", "csv", ()),
    "chunked": ("csv", "csv", ("--chunk-rows", "16", "--executor", "threads")),  # 3 chunks
    "streamed": ("parquet", "parquet", ()),  # a Parquet edge list streams (smooth, nonsmooth)
}


def sparse_run(
    method: str, path: str, data: dict[str, Path], tmp: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    m = sparse_registry()[method]
    source, target, chunks = SPARSE_PATHS[path]
    out, report = tmp / f"rel.{target}", tmp / "rel.json"
    extra = ["--epsilon", "2"] if m.epsilon else []
    args = ["anonymize-sparse", data[source], "-o", out, "--k", "4", "--method", method, *extra]
    code, _, err = run([*args, *chunks, "--report", report, *SEED], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    if chunks and m.partitioned:
        assert manifest["parameters"]["chunks"] > 1
    # the streamed path runs the streamable methods; the others read the Parquet file whole
    assert bool(manifest["parameters"].get("streamed")) == (path == "streamed" and m.streamable)
    result: dict[str, Any] = {"guarantee": manifest["guarantee"]}
    if m.verified:
        assert manifest["verification"]["passed"]
        check = ["verify-sparse", data[source], out, "--k", "4", "--rule", m.rule, "--json"]
        code, text, err = run(check, capsys)
        assert code == 0, err + text
        figures = json.loads(text)
        result["verify"] = {key: figures[key] for key in ("passed", "k", "rule")}
        assert_reported(data[source], out, report, tmp, capsys)
    return result


@pytest.mark.parametrize("path", list(SPARSE_PATHS))
@pytest.mark.parametrize("method", list(sparse_registry()))
def test_sparse_matrix(
    method: str, path: str, other_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """anonymize-sparse: every method on the in-memory path (a CSV edge list) and the streamed
    one (a Parquet edge list): the same claims and verify-sparse verdict."""
    got = sparse_run(method, path, other_data, tmp_path, capsys)
    if path != "memory":
        ref = tmp_path / "reference"
        ref.mkdir()
        assert got == sparse_run(method, "memory", other_data, ref, capsys)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
def test_graph_matrix(
    closed: bool, other_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anonymize-graph (open and closed neighbourhoods): check-graph agrees with the manifest."""
    out, report = tmp_path / "g.csv", tmp_path / "g.json"
    flag = ["--closed"] if closed else []
    args = ["anonymize-graph", other_data["graph"], "-o", out, "--k", "3", *flag]
    code, _, err = run([*args, "--report", report, *SEED], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["verification"]["passed"] and manifest["guarantee"]["k"] == 3
    assert manifest["guarantee"]["neighbourhoods"] == ("closed" if closed else "open")
    code, text, err = run(["check-graph", out, "--k", "3", "--n", "30", *flag, "--json"], capsys)
    assert code == 0 and json.loads(text)["passed"], err + text
    assert_reported(other_data["graph"], out, report, tmp_path, capsys)


# ---------------------------------------------------------------------------------------------
# every criterion and check a kind's command does not take: exit 2, one line, nothing written


KIND_COMMANDS = {
    "relational": ["anonymize-rt", "{people}", "--items", "{items}", *RT_QI, "-k", "3"],
    "kl": ["anonymize-kl", "{sample}", *KL],
    "sets": ["anonymize-sets", "{dat}", "--k", "3"],
    "km": ["anonymize-km", "{dat}", "-k", "3", "-m", "2"],
    "sparse": ["anonymize-sparse", "{csv}", "--k", "3"],
    "graph": ["anonymize-graph", "{graph}", "--k", "3"],
}


def foreign_flags() -> list[tuple[str, list[str]]]:
    """Every table criterion's parameters (the registry's), the sensitive models and the table
    checks, as flags with a value."""
    out = [(p.flag, [p.flag, "{register}" if p.kind == "table" else "0.5"])
           for p in POPULATION_CRITERIA.parameters()]  # fmt: skip
    out += [("--l", ["--l", "2"]), ("--t", ["--t", "0.4"])]
    out += [(flag, [flag, "x"] if flag == "--identifiers" else [flag]) for flag in table_checks()]
    return out


def foreign_cases() -> list[Any]:
    cases = []
    for kind, base in KIND_COMMANDS.items():
        flags = command_flags(base[0])
        for flag, args in foreign_flags():
            if flag not in flags:
                cases.append(pytest.param(kind, args, id=f"{kind}-{flag[2:]}"))
    return cases


@pytest.mark.parametrize(("kind", "extra"), foreign_cases())
def test_unsupported_on_other_kinds(
    kind: str, extra: list[str], other_data: dict[str, Path], rt_data: dict[str, Path],
    table_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A criterion or check a kind's command does not take is refused, not ignored."""
    data = {**other_data, **rt_data, **table_data}
    words = {f"{{{key}}}": str(value) for key, value in data.items()}
    args = [words.get(a, a) for a in (*KIND_COMMANDS[kind], *extra)]
    output = tmp_path / ("r.jsonl" if kind in ("relational", "sets", "km") else "r.csv")
    before = files_in(tmp_path)
    code, _, err = run([*args, "-o", output, "--report", tmp_path / "r.json", "-q"], capsys)
    assert_refused(code, err, before, tmp_path)


# ---------------------------------------------------------------------------------------------
# identifiers given by a job file's roles (docs/jobs.md): never published, on every path


def job_file(tmp: Path, kind: str, path: Path, extra: str, numeric: str) -> Path:
    """A job file giving the columns' roles: the QIs, the sensitive column and an identifier."""
    job = tmp / "job.toml"
    job.write_text(f'kind = "{kind}"\n\n[input]\npath = "{path}"\n{extra}\n'
                   f'[columns.{numeric}]\nrole = "qi"\ntype = "numeric"\n\n{{columns}}'
                   '[model]\nk = 3\n')  # fmt: skip
    return job


@pytest.mark.parametrize("path", TABLE_PATHS[:2], ids=[p.id for p in TABLE_PATHS[:2]])
def test_table_job_file_identifiers(
    path: TablePath, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A table job marking ``pid`` and ``note`` as identifiers publishes neither."""
    job = job_file(tmp_path, "table", table_data["sample"], "", "n0")
    roles = "".join(f'[columns.{c}]\nrole = "qi"\n\n' for c in ("n1", "c0", "c1"))
    roles += "".join(f'[columns.{c}]\nrole = "identifier"\n\n' for c in IDENTIFIERS)
    job.write_text(
        job.read_text().replace("{columns}", roles + '[columns.s]\nrole = "sensitive"\n\n')
    )
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    args = ["anonymize", "--config", job, "-o", out, "--report", report, *path.executor, *SEED]
    code, _, err = run(args, capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["plan"]["path"] == path.route
    assert manifest["parameters"]["identifiers"] == IDENTIFIERS
    assert not set(IDENTIFIERS) & set(pd.read_csv(out).columns)


@pytest.mark.parametrize("path", RT_PATHS[:2], ids=[p.id for p in RT_PATHS[:2]])
def test_relational_job_file_identifiers(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A relational job marking ``name`` as an identifier never publishes it, and the manifest
    says so (``parameters.identifiers``), as docs/jobs.md promises."""
    items = f'items = "{rt_data["items"]}"\nid_column = "pid"\nitem_column = "code"\n'
    job = job_file(tmp_path, "relational", rt_data["named"], items, "age")
    roles = '[columns.sex]\nrole = "qi"\n\n[columns.name]\nrole = "identifier"\n\n'
    job.write_text(job.read_text().replace("{columns}", roles))
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    args = ["anonymize-rt", "--config", job, "-o", out, "--report", report, *path.executor]
    code, _, err = run([*args, *SEED], capsys)
    assert code == 0, err
    assert json.loads(report.read_text())["parameters"].get("identifiers") == ["name"]
    names = set(pd.read_csv(rt_data["named"])["name"])
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert "name" not in record and not names & {str(v) for v in record.values()}


# ---------------------------------------------------------------------------------------------
# (k,ℓ)-anonymity: anonymize-kl from a file and from a database


@pytest.mark.parametrize("source", ["csv", "db"])
def test_kl_matrix(
    source: str, table_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anonymize-kl: check-kl passes on the release, identifiers are not published, the
    manifest claims (k, ℓ) and report re-checks it."""
    path = TablePath(source, "memory", source, "csv")
    args, where = table_command(path, table_data, tmp_path, [])
    original = where["original"]
    out, report = tmp_path / "kl.csv", tmp_path / "kl.json"
    args = ["anonymize-kl", *original, "-o", out, *KL, "--sensitive", "s",
            "--identifiers", ",".join(IDENTIFIERS), "--report", report, *SEED]  # fmt: skip
    code, _, err = run(args, capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"] == {  # no model on the sensitive column: flagged
        "model": "(k,l)-anonymity", "k": 3, "known": 2, "unprotected": ["s"]
    }  # fmt: skip
    release = pd.read_csv(out, dtype=str)
    assert not set(IDENTIFIERS) & set(release.columns)
    code, text, err = run(["check-kl", out, *KL, "--json"], capsys)
    assert code == 0 and json.loads(text)["passed"], err + text
    assert_reported(original[0], out, report, tmp_path, capsys)


def test_kl_kept_column_leakage(
    table_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The free-text ``note`` kept by anonymize-kl is flagged as anonymize flags it."""
    out, report = tmp_path / "kl.csv", tmp_path / "kl.json"
    args = ["anonymize-kl", table_data["sample"], "-o", out, *KL, "--sensitive", "s"]
    code, _, err = run([*args, "--identifiers", "pid", "--report", report, *SEED], capsys)
    assert code == 0, err
    assert "warning: column 'note' is released unchanged" in err
    assert json.loads(report.read_text())["leakage"]["flagged"] == ["note"]


# ---------------------------------------------------------------------------------------------
# an infeasible model on every path: exit 3, one line, nothing left behind


def infeasible_cases() -> list[Any]:
    cases = [pytest.param(p, ["--l", "4"], id=f"{p.id}-l4") for p in RUNNING_PATHS]  # 3 values
    for c in POPULATION_CRITERIA.criteria:  # more than the register allows, where it runs
        args = {"kmap": ["--kmap", "301"], "journalist_risk": ["--journalist-risk", "0.001"],
                "presence": ["--delta-max", "0.1"]}.get(c.name)  # fmt: skip
        for p in RUNNING_PATHS:
            if args and p.route in c.paths:
                cases.append(pytest.param(p, [*args, "--population", "{register}"],
                                          id=f"{p.id}-{c.name}"))  # fmt: skip
    return cases


@pytest.mark.parametrize(("path", "extra"), infeasible_cases())
def test_table_infeasible_leaves_nothing(
    path: TablePath, extra: list[str], table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A model the data cannot meet ends with exit 3 and one line on every path, and leaves
    no release, sidecar, part, manifest or database table behind."""
    extra = [str(table_data["register"]) if a == "{register}" else a for a in extra]
    args, where = table_command(path, table_data, tmp_path, [*extra, "--identifiers", "pid,note"])
    url = where["url"]
    before, tables = files_in(tmp_path), db_tables(url) if url else None
    code, _, err = run([*args, "-q"], capsys)
    lines = seedless(err)
    assert code == 3 and len(lines) == 1, err
    assert files_in(tmp_path) == before and (url is None or db_tables(url) == tables)


@pytest.mark.parametrize("path", RT_PATHS, ids=[p.id for p in RT_PATHS])
def test_relational_infeasible_leaves_nothing(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ℓ = 4 of a column with 3 values: exit 3, one line, nothing written, on every path."""
    before = files_in(tmp_path)
    args = ["anonymize-rt", *rt_base(rt_data), "--l", "4", *path.executor, "-q"]
    code, _, err = run([*args, "-o", tmp_path / "r.jsonl", "--report", tmp_path / "r.json"], capsys)
    assert code == 3 and len(seedless(err)) == 1, err
    assert files_in(tmp_path) == before


@pytest.mark.parametrize("path", RT_PATHS[:2], ids=[p.id for p in RT_PATHS[:2]])
def test_relational_strict_refuses_leaks(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anonymize-rt --strict`` refuses the kept free-text ``name`` on both paths: exit 2,
    one line, nothing written."""
    before = files_in(tmp_path)
    args = ["anonymize-rt", *rt_base(rt_data, "named"), "--strict", *path.executor, "-q"]
    code, _, err = run([*args, "-o", tmp_path / "r.jsonl", "--report", tmp_path / "r.json"], capsys)
    assert_refused(code, err, before, tmp_path)
    assert "'name'" in err


def rt_forged_cases() -> list[Any]:
    cases = []
    for model in MODELS:
        if not rt_supported(RT_PATHS[0], model) or model.sensitive or model is SUPPRESSION:
            continue
        cases.append(pytest.param(model, id=model.id))
    return cases


@pytest.mark.parametrize("model", rt_forged_cases())
def test_relational_report_rechecks_claims(
    model: Model, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report re-checks every claim of a relational manifest: a manifest claiming more than
    the release holds (k = 10, or the criterion 30 times stricter) exits 4."""
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    args = ["anonymize-rt", *rt_base(rt_data, "named"), "--identifiers", "name"]
    args += [*model_args(model, rt_data), *RT_PATHS[0].executor, "-o", out, "--report", report]
    code, _, err = run([*args, *SEED], capsys)
    assert code == 0, err
    assert_reported(rt_data["named"], out, report, tmp_path, capsys)
    for name, edited in tampered(json.loads(report.read_text()), model).items():
        if model.criterion is not None and name == "k":
            continue  # the k claim is checked by the k case
        forged = tmp_path / f"{name}.json"
        forged.write_text(json.dumps(edited))
        html = tmp_path / f"{name}.html"
        got = run(["report", rt_data["named"], out, "--manifest", forged, "-o", html, "-q"],
                  capsys)  # fmt: skip
        assert got[0] == 4, (name, got)


def report_html_cases() -> list[Any]:
    cases = []
    for path in RUNNING_PATHS:
        cases.append(pytest.param(path, id=path.id))
    return cases


@pytest.mark.parametrize("path", report_html_cases())
def test_table_report_html_at_release(
    path: TablePath, table_data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``anonymize --report-html`` writes the HTML report with the release on every path."""
    html = tmp_path / "release.html"
    extra = ["--identifiers", ",".join(IDENTIFIERS), "--l", "2", "--report-html", html, *SEED]
    args, where = table_command(path, table_data, tmp_path, extra)
    code, _, err = run(args, capsys)
    assert code == 0, err
    assert html.exists() and where["manifest"].exists()


@pytest.mark.parametrize("path", RT_PATHS[:2], ids=[p.id for p in RT_PATHS[:2]])
def test_relational_one_long_table(
    path: RtPath, rt_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anonymize-rt from one long table (each person's row repeated per item, no --items) on
    both paths: verify-rt and report pass, the id and the identifier are never published."""
    people, items = pd.read_csv(rt_data["named"]), pd.read_csv(rt_data["items"])
    long = tmp_path / "long.csv"
    people.merge(items, on="pid", how="left").fillna({"code": "none"}).to_csv(long, index=False)
    roles = [*RT_QI, "--na", "code=none", "--sensitive", "disease", "-k", "3", "--l", "2"]
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    args = ["anonymize-rt", long, *roles, "--identifiers", "name", *path.executor]
    code, _, err = run([*args, "-o", out, "--report", report, *SEED], capsys)
    assert code == 0, err
    secret = set(people["pid"]) | set(people["name"])
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert "name" not in record and not secret & {str(v) for v in record.values()}
    code, text, err = run(["verify-rt", long, out, *roles, "--json"], capsys)
    assert code == 0 and json.loads(text)["passed"], err + text
    assert_reported(long, out, report, tmp_path, capsys)
