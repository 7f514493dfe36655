"""Every kind's report in a real browser (Debian's chromium driven by Playwright, as
tests/ui/test_browser.py): no table overflows its container and no absolute machine path
(the temporary directory, /tmp/, /work/, the home directory) appears in the page text
(issue 25, report polish). Skips, saying why, without Playwright or chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from anonymatch.cli import main
from tests.factories import planted, random_frame

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
CHROMIUM = os.environ.get("ANONYMATCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)

OVERFLOWING = """() => [...document.querySelectorAll('.table-wrap')]
    .filter(w => w.scrollWidth > w.clientWidth + 1)
    .map(w => w.querySelector('thead').innerText.slice(0, 80))"""


def releases(tmp: Path) -> dict[str, list[str]]:
    """One release command per data kind, on small generated data."""
    frame = random_frame(60, 3)
    frame["a_rather_long_column_name_for_wrapping"] = np.arange(60) % 4
    frame.to_csv(tmp / "people.csv", index=False)
    x = planted(4, 8, 5, 0.05, 1)
    dat = tmp / "t.dat"
    dat.write_text(
        "\n".join(" ".join(str(j) for j in x.indices[x.indptr[i] : x.indptr[i + 1]])
                  for i in range(x.shape[0])) + "\n"
    )  # fmt: skip
    rng = np.random.default_rng(0)
    pairs = {tuple(sorted(rng.choice(30, 2, replace=False))) for _ in range(80)}
    edges = tmp / "g.csv"
    edges.write_text("source,target\n" + "".join(f"{a},{b}\n" for a, b in sorted(pairs)))
    qi = "n0,n1,c0,c1,a_rather_long_column_name_for_wrapping"
    return {
        "tables": ["anonymize", str(tmp / "people.csv"), "-o", str(tmp / "rel.csv"), "--k", "3",
                   "--qi", qi, "--numeric", "n0,n1", "--sensitive", "s", "--l", "2"],
        "sets": ["anonymize-sets", str(dat), "-o", str(tmp / "s.jsonl"), "--k", "3"],
        "km": ["anonymize-km", str(dat), "-o", str(tmp / "km.jsonl"), "--k", "3", "--m", "2"],
        "sparse": ["anonymize-sparse", str(dat), "-o", str(tmp / "sp.csv"), "--k", "3"],
        "graphs": ["anonymize-graph", str(edges), "-o", str(tmp / "g2.csv"), "--k", "2"],
    }  # fmt: skip


def test_reports_fit_and_name_no_machine_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages: dict[str, Path] = {}
    for kind, args in releases(tmp_path).items():
        html = tmp_path / f"{kind}.html"
        code = main([*args, "-q", "--report-html", str(html)])
        assert code == 0, (kind, capsys.readouterr().err)
        pages[kind] = html
    forbidden = ["/tmp/", "/work/", str(Path.home()) + "/", str(tmp_path)]
    with sync_api.sync_playwright() as p:
        browser: Any = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for width in (1200, 760):
                page = browser.new_page(viewport={"width": width, "height": 900})
                for kind, html in pages.items():
                    page.goto(html.as_uri())
                    assert page.locator(".table-wrap").count() > 0, kind
                    assert page.evaluate(OVERFLOWING) == [], (kind, width)
                    text = page.inner_text("main")
                    found = [f for f in forbidden if f in text]
                    assert not found, (kind, found)
                page.close()
        finally:
            browser.close()
