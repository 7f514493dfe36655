"""Issue 25, report polish: the report printed to PDF, page by page, before and after the print
stylesheet let tables break between rows.

Two reports: Adult (30,162 complete rows, k = 10, ``make run``'s old roles: every column but the
8 QIs kept, so its leakage table has 7 rows; rendered by ``anonymatch report`` from the files
and the manifest), and a generated table of 80 rows with 4 QIs and 30 kept columns (the test's
report, tests/report/test_report_pdf.py: its columns and leakage tables run over a page). Each
is printed to A4 by Debian's chromium driven by Playwright, with the stylesheet of this tree and
with ``--before`` (a report.css, default main's), swapped into the same HTML. Per page: the
characters of text (``pdftotext``) and the share of pixel rows holding ink (``pdftoppm`` at 20
dpi; plots carry little text). A page is *near-empty* when it is not the last and holds less
than a quarter of the median page's ink. Writes docs/results.md (section report_pdf) and
benchmarks/results/report_pdf.json.

Usage: ANONYMATCH_DATA=/work/shared/datasets python benchmarks/report_pdf.py
       [--before /work/main/src/anonymatch/report/templates/report.css]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import ROOT, adult_path, dump, machine, update_results
from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(ROOT))
from anonymatch.cli import main as cli  # noqa: E402
from tests.factories import random_frame  # noqa: E402

CSS = ROOT / "src" / "anonymatch" / "report" / "templates" / "report.css"
NAMES = "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,"
NAMES += "race,sex,capital-gain,capital-loss,hours-per-week,native-country,income"
QI = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"


def adult_report(tmp: Path) -> Path:
    opts = ["--names", NAMES, "--qi", QI, "--numeric", "age,education-num", "--na-values", "?"]
    opts += ["--drop-missing"]
    release, manifest, html = tmp / "adult.csv", tmp / "adult.json", tmp / "adult.html"
    cli(["anonymize", adult_path(), "-o", str(release), "--k", "10", "--sensitive", "income",
         "--report", str(manifest), "-q", *opts])  # fmt: skip
    cli(["report", adult_path(), str(release), "--manifest", str(manifest), "-o", str(html)])
    return html


def wide_report(tmp: Path) -> Path:
    frame = random_frame(80, 3)
    rng = np.random.default_rng(0)
    for j in range(30):
        frame[f"kept_column_{j:02d}"] = rng.integers(0, 3, len(frame))
    frame.to_csv(tmp / "people.csv", index=False)
    html = tmp / "wide.html"
    cli(["anonymize", str(tmp / "people.csv"), "-o", str(tmp / "rel.csv"), "--k", "3", "--qi",
         "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s", "-q", "--report-html",
         str(html)])  # fmt: skip
    return html


def pages(pdf: Path) -> tuple[list[int], list[float]]:
    """Characters of text and share of pixel rows with ink, per page."""
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True)
    chars = [len("".join(p.split())) for p in text.stdout.split("\f")]
    stem = pdf.with_suffix("")
    subprocess.run(["pdftoppm", "-r", "20", "-gray", str(pdf), str(stem)], check=True)
    shots = sorted(pdf.parent.glob(f"{stem.name}-*.pgm"))
    ink = [float((np.asarray(Image.open(p)) < 200).any(axis=1).mean()) for p in shots]
    return chars[: len(ink)], ink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", type=Path, default=Path("/work/main/src/anonymatch/report/templates/report.css")
    )
    args = parser.parse_args()
    now, before = CSS.read_text().strip(), args.before.read_text().strip()
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as d, sync_playwright() as p:
        tmp = Path(d)
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        for name, html in (
            ("Adult, k = 10", adult_report(tmp)),
            ("generated, 30 kept columns", wide_report(tmp)),
        ):
            text = html.read_text()
            assert now in text, "the report inlines its stylesheet"
            for which, css in (("before", before), ("after", now)):
                variant = tmp / f"{html.stem}_{which}.html"
                variant.write_text(text.replace(now, css))
                page.goto(variant.as_uri())
                pdf = variant.with_suffix(".pdf")
                pdf.write_bytes(page.pdf(format="A4"))
                chars, ink = pages(pdf)
                median = statistics.median(ink)
                thin = [i + 1 for i, v in enumerate(ink[:-1]) if v < 0.25 * median]
                results[f"{name} / {which}"] = {"chars": chars, "ink": ink, "near_empty": thin}
        browser.close()
    dump("report_pdf", results)
    rows = "\n".join(
        f"| {key} | {len(r['ink'])} | {', '.join(str(c) for c in r['chars'])} | "
        f"{', '.join(f'{v:.2f}' for v in r['ink'])} | "
        f"{', '.join(map(str, r['near_empty'])) or 'none'} |"
        for key, r in results.items()
    )
    body = f"""## The report printed to PDF: no near-empty page (issue 25)

`ANONYMATCH_DATA=/work/shared/datasets python benchmarks/report_pdf.py`: the report printed to
A4 by Debian's chromium (Playwright's `page.pdf`), with the print stylesheet before (tables kept
whole: `table {{ break-inside: avoid }}`) and after (tables break between rows, their head
repeated; the footer kept with the last section). Per page: characters of text (`pdftotext`)
and the share of pixel rows holding ink (`pdftoppm`, 20 dpi; pages of plots carry little
text). Near-empty: a page, not the last, with less than a quarter of the median page's ink.
The Adult report is `make run`'s old roles (7 columns kept); the generated one has 30 kept
columns, whose leakage table, kept whole, left the page before it holding one small table.
{machine()}.

| report / stylesheet | pages | text per page (characters) | ink per page | near-empty pages |
|---|---:|---|---|---|
{rows}
"""
    update_results("report_pdf", body)
    print(body)


if __name__ == "__main__":
    main()
