"""Report polish (issue 25): manifest values in words (no raw keys, no dict dumps, no machine
paths), readable log axes, the sets report explaining its error rates, ``-v`` logging stages."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from anonymatch.cli import main
from anonymatch.report import plots
from anonymatch.report.common import _value_text
from anonymatch.report.model import file_name, label_text
from tests.factories import planted


def test_values_in_words() -> None:
    entry = {"column": "s", "model": {"column": "s", "diversity": "distinct", "l": 2},
             "passed": True, "worst_emd": None, "worst_l": 2}  # fmt: skip
    assert _value_text(entry) == "s: passed yes, smallest ℓ reached 2"
    tree = {"zip": {"file": "/home/x/zip.csv", "path": "/home/x/zip.csv", "leaves": 9}}
    assert _value_text(tree) == "zip: file zip.csv, leaves 9"
    assert label_text("min_matches_original") == "fewest matches per person"
    assert label_text("privacy_step") == "privacy step"
    assert file_name("/tmp/a/b/people.csv") == "people.csv"
    assert file_name("C:\\data\\people.csv") == "people.csv"
    assert file_name("postgresql://db/x") == "postgresql://db/x"


def test_log_axis_labels_are_few() -> None:
    histogram = {v: 1 for v in range(1, 3000, 7)}  # > 60 distinct values: a log axis
    svg = base64.b64decode(plots.count_histogram(histogram, "candidates").split(",")[1]).decode()
    xticks = svg.split('id="matplotlib.axis_1"')[1].split('id="matplotlib.axis_2"')[0]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", xticks)
    labels = [x.strip() for x in labels if x.strip() and x.strip() != "candidates"]
    assert 3 <= len(labels) <= 12, labels
    assert len(set(labels)) == len(labels)


def test_sets_report_explains_and_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = planted(4, 8, 5, 0.05, 1)
    dat = tmp_path / "t.dat"
    dat.write_text(
        "\n".join(" ".join(str(j) for j in x.indices[x.indptr[i] : x.indptr[i + 1]])
                  for i in range(x.shape[0])) + "\n"
    )  # fmt: skip
    html = tmp_path / "s.html"
    code = main(["anonymize-sets", str(dat), "-o", str(tmp_path / "s.jsonl"), "--k", "3",
                 "-v", "--report-html", str(html)])  # fmt: skip
    logged = capsys.readouterr().err
    assert code == 0, logged
    assert "risk and utility measured on the files" in logged and "rendered" in logged
    text = html.read_text().split("<details>")[0]
    assert "§" not in text
    assert "Error rate: for each transaction" in text and "Query error:" in text
    assert "min_matches" not in text and "n_original" not in text
