"""The report printed to PDF by Chromium has no near-empty page (issue 25, report polish).

A table report with many columns released unchanged (its columns and leakage tables run over a
page) is printed to A4 by Debian's chromium driven by Playwright, as a reader's "Print → Save
as PDF" would. Each page is rasterized (``pdftoppm``, poppler-utils) and its content measured as
the share of pixel rows holding ink — text per page (``pdftotext``) undercounts the pages of
plots. Every page but the last must carry at least a quarter of the median page's. The print
stylesheet once kept every table whole (``break-inside: avoid``): a table longer than the rest
of a page then moved to the next one, leaving a page with one small table on it. Skips, saying
why, without Playwright, chromium or pdftoppm."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pytest

from anonymatch.cli import main
from tests.factories import random_frame

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
CHROMIUM = os.environ.get("ANONYMATCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
if shutil.which("pdftoppm") is None:
    pytest.skip(
        "pdftoppm is not installed (apt-get install -y poppler-utils)", allow_module_level=True
    )


def ink_per_page(pdf: Path) -> list[float]:
    """Per page, the share of pixel rows with ink (20 dpi, grey below 200)."""
    subprocess.run(
        ["pdftoppm", "-r", "20", "-gray", str(pdf), str(pdf.with_suffix(""))], check=True
    )
    pages = sorted(pdf.parent.glob(f"{pdf.stem}-*.pgm"))
    return [float((np.asarray(Image.open(p)) < 200).any(axis=1).mean()) for p in pages]


def test_printed_report_has_no_near_empty_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = random_frame(80, 3)
    rng = np.random.default_rng(0)
    for j in range(30):
        frame[f"kept_column_{j:02d}"] = rng.integers(0, 3, len(frame))
    frame.to_csv(tmp_path / "people.csv", index=False)
    html = tmp_path / "report.html"
    code = main(["anonymize", str(tmp_path / "people.csv"), "-o", str(tmp_path / "rel.csv"),
                 "--k", "3", "--qi", "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s",
                 "-q", "--report-html", str(html)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    pdf = tmp_path / "report.pdf"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(html.as_uri())
            pdf.write_bytes(page.pdf(format="A4"))
        finally:
            browser.close()
    ink = ink_per_page(pdf)
    assert len(ink) >= 4
    median = statistics.median(ink)
    thin = [(i + 1, round(v / median, 2)) for i, v in enumerate(ink[:-1]) if v < 0.25 * median]
    assert not thin, (thin, ink)
