"""The web app's relational run in a real browser (Debian's chromium driven by Playwright): a
small generated people table and its long items table uploaded together, the id and item
columns chosen, an ``anonymize-rt`` run verified, the result page's relational utility and
risk, the JSON Lines release downloaded. Skips as ``test_browser`` does; screenshots go to
$ANONYMATCH_SCREENSHOTS when set (docs/img/ui_relational.png, shown in docs/webapp.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.ui.test_browser import browser, server, shots  # noqa: F401 - its fixtures
from tests.ui.test_relational import people_and_items

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_relational_round_trip(server: str, browser: Any, shots: Path, tmp_path: Path) -> None:  # noqa: F811
    people_csv, items_csv = tmp_path / "people.csv", tmp_path / "diagnoses.csv"
    people, items = people_and_items(30)
    people_csv.write_bytes(people)
    items_csv.write_bytes(items)
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.goto(server)
    page.set_input_files("#file", str(people_csv))
    page.set_input_files("#items", str(items_csv))
    page.click("#upload-button")
    page.wait_for_url("**/dataset")
    assert "Items table diagnoses.csv" in page.inner_text("#items-facts")
    assert page.locator("#population input[name=delta_max]").count() == 1  # the criteria
    assert page.locator("input[name=sampling_fraction]").count() == 0  # tables' figures only
    assert page.input_value("select[name=id_column]") == "pid"
    assert page.input_value("select[name=item_column]") == "code"
    assert page.input_value("select[name='role:pid']") == "identifier"
    for column, role in {"age": "qi", "sex": "qi", "town": "other"}.items():
        page.select_option(f"select[name='role:{column}']", role)
    page.select_option("select[name='type:age']", "numeric")
    page.fill("input[name=item_na]", "-1")
    page.fill("input[name=k]", "3")
    page.check("input[name=method][value=hungarian]")
    page.click("#run-button")  # (a full-page screenshot just before loses this click)
    page.wait_for_url("**/result", timeout=120_000)
    assert page.inner_text("#verified").startswith("PASS")
    assert page.inner_text("#model") == "k-anonymity, k = 3"
    assert page.inner_text("#utility-relational").startswith("Relational GCP")
    assert page.inner_text("#risk-headline").startswith("Prosecutor risk: max 0.3")
    with page.expect_download() as download:
        page.click("#download-release")
    assert download.value.suggested_filename == "people_release.jsonl"
    lines = Path(download.value.path()).read_text().splitlines()
    assert len(lines) == 30 and "pid" not in json.loads(lines[0])
    page.screenshot(path=shots / "ui_relational.png", full_page=True)
    context.close()
