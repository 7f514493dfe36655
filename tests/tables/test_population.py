"""Population figures of table releases: a brute-force oracle on small random tables, class
releases against ARX's class-based formulas, subsets and supersets, bad inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.methods import names
from anonymatch.tables.risk.population import (
    PopulationInput,
    PopulationSource,
    assess_population,
    population_risk,
)
from tests.factories import dense_compatibility, random_frame

QI = ["n0", "n1", "c0", "c1"]
NUMERIC = ["n0", "n1"]
OPTIONS = PopulationInput(qi=tuple(QI), numeric=tuple(NUMERIC))


def _sample_and_population(n: int, extra: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample and a population that contains it (its rows plus ``extra`` others)."""
    sample = random_frame(n, seed)
    others = random_frame(extra, seed + 1000)
    population = pd.concat([sample, others], ignore_index=True).sample(frac=1, random_state=seed)
    return sample, population


@pytest.mark.parametrize("method", [m for m in names(levels=False) if m != "mip"])
@pytest.mark.parametrize("seed", [0, 1])
def test_counts_match_brute_force(method: str, seed: int) -> None:
    sample, population = _sample_and_population(60, 140, seed)
    release = anonymatch.anonymize(
        sample, k=3, qi=QI, numeric=NUMERIC, method=method, seed=seed
    ).release
    report = population_risk(sample, release, population, OPTIONS)
    big = dense_compatibility(population, release, QI, NUMERIC).sum(axis=0)
    small = dense_compatibility(sample, release, QI, NUMERIC).sum(axis=0)
    assert report.population_per_row.tolist() == big.tolist()
    assert report.sample_per_row.tolist() == small.tolist()
    assert report.kmap == big.min() >= 3  # every row fits ≥ k sample people, all in the population
    assert report.journalist_max == pytest.approx(1 / big.min())
    assert report.marketer == pytest.approx(np.mean(1 / big))
    assert report.journalist_mean >= report.marketer
    assert report.presence is not None
    share = small / big
    assert report.presence.min == pytest.approx(share.min())
    assert report.presence.max == pytest.approx(share.max()) and share.max() <= 1
    fits_any = dense_compatibility(population, release, QI, NUMERIC).any(axis=1)
    assert report.presence.outside == int((~fits_any).sum())
    keys = population[QI].astype(str).agg("|".join, axis=1)
    sizes = keys.value_counts()
    own = sample[QI].astype(str).agg("|".join, axis=1)
    assert report.uniques.population_uniques == int((own.map(sizes) == 1).sum())
    assert report.uniques.not_in_population == 0
    assert report.population == len(population)


def test_class_release_gives_arx_class_formulas() -> None:
    """On a release of identical-row classes, F is the class's population size, marketer risk
    (1/n) Σ f/F and the journalist mean max(classes / Σ F, marketer) as in ARX."""
    sample, population = _sample_and_population(80, 300, 3)
    release = anonymatch.anonymize(sample, k=4, qi=QI, numeric=NUMERIC, method="mondrian").release
    report = population_risk(sample, release, population, OPTIONS)
    classes = release[QI].astype(str).agg("|".join, axis=1)
    f = classes.value_counts()
    big = pd.Series(report.population_per_row, index=classes).groupby(level=0).first()
    assert report.marketer == pytest.approx(float((f / big[f.index]).sum() / len(sample)))
    expected = max(len(f) / big.sum(), report.marketer)
    assert report.journalist_mean == pytest.approx(expected)
    # δ-presence of classes: f / F (Nergiz et al.)
    assert report.presence is not None
    assert report.presence.max == pytest.approx(float((f / big[f.index]).max()))


def test_population_equal_to_sample_is_the_prosecutor_view() -> None:
    sample = random_frame(50, 7)
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=1).release
    report = population_risk(sample, release, sample, OPTIONS)
    assert report.uniques.population_uniques == report.uniques.sample_uniques
    assert report.presence is not None and report.presence.min == report.presence.max == 1.0
    assert report.presence.outside == 0
    assert np.array_equal(report.population_per_row, report.sample_per_row)


def test_population_missing_sample_people() -> None:
    sample = random_frame(40, 11)
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=1).release
    population = random_frame(100, 12)  # independent of the sample
    report = population_risk(sample, release, population, OPTIONS)
    assert report.presence is None
    assert report.uniques.not_in_population > 0
    d = report.to_dict()
    assert d["presence"] is None and d["kmap"] == report.kmap
    assert set(d) >= {"kmap", "journalist_risk", "marketer_risk", "uniques", "presence"}
    assert set(d["journalist_risk"]) >= {"max", "mean"}  # type: ignore[arg-type]


def test_missing_values_match_only_star() -> None:
    sample = pd.DataFrame({"age": ["30", "31", "32", "33"], "sex": ["F", "F", "M", "M"]})
    release = pd.DataFrame({"age": ["30..31", "30..31", "*", "*"], "sex": ["F", "F", "M", "M"]})
    population = pd.DataFrame(
        {"age": ["30", "31", "32", "33", "", "", "35"], "sex": ["F", "F", "M", "M", "F", "M", "M"]}
    )
    options = PopulationInput(qi=("age", "sex"), numeric=("age",))
    report = population_risk(sample, release, population, options)
    assert report.population_per_row.tolist() == [2, 2, 4, 4]  # the F with no age fits no range
    assert report.presence is not None and report.presence.outside == 1
    dropped = population_risk(
        sample, release, population, PopulationInput(("age", "sex"), ("age",), drop_missing=True)
    )
    assert dropped.population == 5
    assert dropped.population_per_row.tolist() == [2, 2, 3, 3]


def test_bad_inputs() -> None:
    sample = random_frame(20, 5)
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=1).release
    with pytest.raises(InputError, match="population has no column 'c1'"):
        population_risk(sample, release, sample.drop(columns="c1"), OPTIONS)
    with pytest.raises(InputError, match="population has no data rows"):
        population_risk(sample, release, sample.iloc[:0], OPTIONS)
    with pytest.raises(InputError, match="release does not match"):
        population_risk(sample, release.iloc[:-1], sample, OPTIONS)
    with pytest.raises(InputError, match="sampling_fraction must be in"):
        assess_population(sample, release, OPTIONS, PopulationSource(fraction=1.5))
    with pytest.raises(InputError, match="no weights column"):
        assess_population(sample, release, OPTIONS, PopulationSource(weights="w"))
    weighted = sample.assign(w=[0.0] + [10.0] * 19)
    with pytest.raises(InputError, match="must be positive"):
        assess_population(weighted, release, OPTIONS, PopulationSource(weights="w"))
    with pytest.raises(InputError, match="give a population table"):
        assess_population(sample, release, OPTIONS, PopulationSource())


def test_report_with_population_includes_estimates_at_n_over_big_n() -> None:
    sample, population = _sample_and_population(60, 240, 9)
    release = anonymatch.anonymize(sample, k=3, qi=QI, numeric=NUMERIC, seed=2).release
    report = assess_population(sample, release, OPTIONS, PopulationSource(table=population))
    d = report.to_dict()
    assert d["sampling_fraction"] == pytest.approx(60 / 300)
    assert set(d["estimates"]) == {"pitman", "zayatz", "snb", "dankar"}  # type: ignore[arg-type]
    assert d["kmap"] == report.exact.kmap  # type: ignore[union-attr]
