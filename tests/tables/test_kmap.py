"""k-map repair: every published row ends compatible with ≥ K population records, the release
stays k-anonymous (checked by the verifier from the cells), rows already at K are untouched."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.tables.models.kmap import JournalistRisk, KMap
from anonymatch.tables.models.widening import enforce_population
from anonymatch.tables.risk.population import PopulationInput, population_risk
from tests.factories import one_per_shape, random_frame

QI = ["n0", "n1", "c0", "c1"]
NUMERIC = ["n0", "n1"]
OPTIONS = PopulationInput(qi=tuple(QI), numeric=tuple(NUMERIC))


@pytest.mark.parametrize("method", one_per_shape())
@pytest.mark.parametrize("kmap", [8, 25])
def test_repair_meets_kmap_and_keeps_k(method: str, kmap: int) -> None:
    sample = random_frame(80, 21)
    population = pd.concat([sample, random_frame(220, 22)], ignore_index=True)
    release = anonymatch.anonymize(
        sample, k=2, qi=QI, numeric=NUMERIC, method=method, seed=3
    ).release
    before = population_risk(sample, release, population, OPTIONS)
    out, report, view = enforce_population(sample, release, population, [KMap(kmap)], OPTIONS, k=2)
    after = population_risk(sample, out, population, OPTIONS)
    assert after.kmap >= kmap and view.kmap == after.kmap
    assert report.before == before.kmap
    assert anonymatch.verify(sample, out, k=2, qi=QI, numeric=NUMERIC).passed
    kept = before.population_per_row >= kmap
    assert out.loc[kept, QI].equals(release.loc[kept, QI])  # rows at K are not touched
    assert report.widened_rows == int((out[QI] != release[QI]).any(axis=1).sum())
    assert list(out.columns) == list(release.columns)


def test_already_met_is_unchanged_and_too_large_is_infeasible() -> None:
    sample = random_frame(40, 5)
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=1).release
    out, report, _ = enforce_population(sample, release, sample, [KMap(2)], OPTIONS, k=2)
    assert report.rounds == 0 and out.equals(release)
    with pytest.raises(InfeasibleError, match="only 40 records"):
        enforce_population(sample, release, sample, [KMap(41)], OPTIONS)
    # K = N: every row must match the whole population
    out, report, _ = enforce_population(sample, release, sample, [KMap(40)], OPTIONS, k=2)
    assert np.all(population_risk(sample, out, sample, OPTIONS).population_per_row == 40)


def test_typed_job_runs_kmap_and_records_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from anonymatch.tables.job import TableJob, plan
    from tests.factories import anonymize_table

    sample = random_frame(80, 31)
    population = pd.concat([sample, random_frame(200, 32)], ignore_index=True)
    path = tmp_path / "population.csv"
    population.to_csv(path, index=False)
    for source in (population, str(path)):
        made = anonymize_table(sample, 2, QI, NUMERIC, kmap=20, population=source, seed=4)
        assert population_risk(sample, made.table, population, OPTIONS).kmap >= 20
        assert anonymatch.verify(sample, made.table, k=2, qi=QI, numeric=NUMERIC).passed
        block = made.report["guarantee"]["kmap"]  # type: ignore[index]
        figures = made.report["verification"]["kmap"]  # type: ignore[index]
        assert block["k"] == 20 and figures["achieved"] >= 20 and figures["passed"]
        assert block["population"] == (None if source is population else str(path))
    with pytest.raises(InputError, match="`kmap` needs `population`"):
        TableJob.build(dict(qi=QI, k=2, kmap=5))
    with pytest.raises(InputError, match="`population` is only read with `kmap`"):
        TableJob.build(dict(qi=QI, k=2, population=str(path)))
    with pytest.raises(InputError, match="`kmap` must be an integer"):
        TableJob.build(dict(qi=QI, k=2, kmap=True, population=str(path)))
    with pytest.raises(InputError, match="does not apply to method"):
        TableJob.build(dict(qi=QI, k_column="d", method="bmatching", kmap=5, population=str(path)))
    job = TableJob.build(dict(qi=QI, k=2, kmap=5, population=str(path)))
    with pytest.raises(InputError, match="`kmap` runs in memory only"):
        plan(job, rows=80, streamed=True)
    with pytest.raises(InfeasibleError):
        anonymize_table(sample, 2, QI, NUMERIC, kmap=10_000, population=population)


def test_job_file_and_manifest_carry_kmap(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from anonymatch.app.jobfile import load_job
    from anonymatch.app.tablejob import job_file_keywords, manifest_keywords
    from anonymatch.tables.job import TableJob

    (tmp_path / "register.csv").write_text("n0,c0\n1,a\n")
    job_path = tmp_path / "job.toml"
    job_path.write_text(
        '[input]\npath = "people.csv"\n[columns]\nn0 = { role = "qi", type = "numeric" }\n'
        'c0 = { role = "qi" }\n[model]\nk = 2\nkmap = 10\npopulation = "register.csv"\n'
        '[output]\npath = "out.csv"\n'
    )
    keywords = job_file_keywords(load_job(job_path))
    assert keywords["kmap"] == 10
    assert keywords["population"] == str(tmp_path / "register.csv")  # relative to the job file
    job = TableJob.build(keywords)
    assert job.criteria == (KMap(10),)
    block = {**job.criteria[0].describe(), "population": str(tmp_path / "register.csv")}
    manifest = {
        "data_kind": "table",
        "method": "hungarian",
        "parameters": {"qi": ["n0", "c0"], "numeric": ["n0"]},
        "guarantee": {"model": "k-anonymity", "k": 2, "kmap": block},
    }
    again = manifest_keywords(manifest)
    assert (again["kmap"], again["population"]) == (10, str(tmp_path / "register.csv"))


def test_python_front_takes_kmap() -> None:
    sample = random_frame(50, 41)
    population = pd.concat([sample, random_frame(150, 42)], ignore_index=True)
    made = anonymatch.tables.anonymize(
        sample, k=2, qi=QI, numeric=NUMERIC, kmap=12, population=population, seed=1
    )
    assert population_risk(sample, made.release, population, OPTIONS).kmap >= 12
    assert made.report["guarantee"]["kmap"]["population"] is None  # type: ignore[index]


@pytest.mark.parametrize("method", one_per_shape())
def test_average_journalist_risk_bound(method: str) -> None:
    sample = random_frame(80, 51)
    population = pd.concat([sample, random_frame(220, 52)], ignore_index=True)
    made = anonymatch.tables.anonymize(
        sample, k=2, qi=QI, numeric=NUMERIC, method=method, seed=2,
        journalist_risk=0.08, population=population,
    )  # fmt: skip
    figures = population_risk(sample, made.release, population, OPTIONS)
    assert figures.journalist_mean <= 0.08
    block = made.report["guarantee"]["journalist_risk"]  # type: ignore[index]
    figures = made.report["verification"]["journalist_risk"]  # type: ignore[index]
    assert block["journalist_risk"] == 0.08 and figures["mean_risk"] <= 0.08
    assert anonymatch.verify(sample, made.release, k=2, qi=QI, numeric=NUMERIC).passed
    with pytest.raises(InfeasibleError, match="`journalist_risk` = 0.001 cannot be met"):
        enforce_population(sample, made.release, population, [JournalistRisk(0.001)], OPTIONS, k=2)
    with pytest.raises(InputError, match="`journalist_risk` needs `population`"):
        anonymatch.tables.anonymize(sample, k=2, qi=QI, journalist_risk=0.1)
