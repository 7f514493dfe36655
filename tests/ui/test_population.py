"""The web app's population figures (issue 28): the result page's population headline is the
figures of ``anonymatch risk --population / --sampling-fraction``; the form's population
table and sampling fraction are checked in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.ui import data
from tests.factories import random_frame

ROLES = ["--qi", "n0,n1,c0,c1", "--numeric", "n0,n1"]
FORM = {
    **{f"role:{c}": "qi" for c in ("n0", "n1", "c0", "c1")},
    "type:n0": "numeric",
    "type:n1": "numeric",
    "k": "3",
    "method": "hungarian",
}


def test_headline_is_the_figures_of_risk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = random_frame(60, 5)
    sample_path, register = tmp_path / "sample.csv", tmp_path / "register.csv"
    sample.to_csv(sample_path, index=False)
    pd.concat([sample, random_frame(240, 6)], ignore_index=True).to_csv(register, index=False)
    release, manifest = tmp_path / "release.csv", tmp_path / "release.json"
    args = ["anonymize", str(sample_path), "-o", str(release), "--k", "3", *ROLES, "--seed", "1"]
    assert main([*args, "-q", "--report", str(manifest)]) == 0
    ds = data.load(data.Dataset(sample_path, "sample.csv", sample_path.stat().st_size))
    settings = data.Settings.from_form(FORM, ds)
    upload = data.HierarchyFile(register, "register.csv")
    data.check_population(upload, settings, data.Limits(), tmp_path)
    settings.population, settings.sampling_fraction = data.population_choice({}, None, upload)
    written = json.loads(manifest.read_text())
    headline = data.population_headline(settings, ds, release, written)
    capsys.readouterr()
    risk = ["risk", str(sample_path), str(release), *ROLES, "--json"]
    assert main([*risk, "--population", str(register)]) == 0
    figures = json.loads(capsys.readouterr().out)["population"]
    assert headline is not None and headline["exact"] is not None
    assert headline["exact"]["kmap"] == figures["kmap"] >= 3
    assert headline["exact"]["journalist_max"] == pytest.approx(figures["journalist_risk"]["max"])
    assert headline["exact"]["journalist_mean"] == pytest.approx(figures["journalist_risk"]["mean"])
    assert headline["fraction"] == pytest.approx(60 / 300)
    settings.population, settings.sampling_fraction = data.population_choice(
        {"sampling_fraction": "0.1"}, settings, None
    )
    assert settings.population is upload  # kept from the previous settings
    settings.population = None
    headline = data.population_headline(settings, ds, release, written)
    assert main([*risk, "--sampling-fraction", "0.1"]) == 0
    dankar = json.loads(capsys.readouterr().out)["population"]["estimates"]["dankar"]
    assert headline is not None and headline["exact"] is None
    assert headline["model"] == dankar["model"] and headline["share"] == dankar["share"]
    settings.sampling_fraction = None
    assert data.population_headline(settings, ds, release, written) is None


def test_bad_population_input_is_one_line(tmp_path: Path) -> None:
    sample_path = tmp_path / "sample.csv"
    random_frame(30, 2).to_csv(sample_path, index=False)
    ds = data.load(data.Dataset(sample_path, "sample.csv", sample_path.stat().st_size))
    settings = data.Settings.from_form(FORM, ds)
    lacking = tmp_path / "population-0123.csv"
    random_frame(30, 3).drop(columns="c1").to_csv(lacking, index=False)
    upload = data.HierarchyFile(lacking, "census.csv")
    with pytest.raises(InputError, match=r"^population: census.csv lacks .* c1$"):
        data.check_population(upload, settings, data.Limits(), tmp_path)
    with pytest.raises(InputError, match="budget"):
        data.check_population(upload, settings, data.Limits(max_cells=10), tmp_path)
    for bad in ("0", "1.5", "-1"):
        with pytest.raises(InputError, match=r"the sampling fraction must be in \(0, 1\]"):
            data.population_choice({"sampling_fraction": bad}, None, None)
    with pytest.raises(InputError, match="must be a number"):
        data.population_choice({"sampling_fraction": "a tenth"}, None, None)
    settings.population = upload
    kept, fraction = data.population_choice({"population_clear": "on"}, settings, None)
    assert kept is None and fraction is None


def test_form_criteria_run_against_the_uploaded_population(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The form's criteria fields (derived from ``tables.models.CRITERIA``) go into the job the
    run executes, counted against the uploaded population; without one the form says so."""
    sample = random_frame(60, 5)
    sample_path, register = tmp_path / "sample.csv", tmp_path / "population-01.csv"
    sample.to_csv(sample_path, index=False)
    pd.concat([sample, random_frame(140, 6)], ignore_index=True).to_csv(register, index=False)
    ds = data.load(data.Dataset(sample_path, "sample.csv", sample_path.stat().st_size))
    settings = data.Settings.from_form({**FORM, "delta_max": "0.5", "kmap": "8"}, ds)
    view = data.form_view(ds, settings)
    assert view["delta_max"] == "0.5" and view["kmap"] == "8" and view["delta_min"] == ""
    with pytest.raises(InputError, match="k-map, delta-presence: upload the population table"):
        settings.table_job(ds)
    settings.population = data.HierarchyFile(register, "register.csv")
    job = settings.table_job(ds)
    assert [c.name for c in job.criteria] == ["kmap", "presence"]
    run_job = settings.run_job(ds, tmp_path)
    assert run_job.model.population == "population-01.csv"  # relative to the job file
    from anonymatch.app.jobfile import render_toml

    (tmp_path / "job.toml").write_text(render_toml(run_job))
    (tmp_path / "run").mkdir()
    code = main(["anonymize", "--config", str(tmp_path / "job.toml"), "-q", "--", str(sample_path)])
    assert code == 0, capsys.readouterr().err
    written = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert written["verification"]["presence"]["achieved_max"] <= 0.5
    assert written["verification"]["kmap"]["achieved"] >= 8
