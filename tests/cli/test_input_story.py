"""One input story (issue 25): the k^m commands never read a CSV as FIMI transactions, read
the long and basket formats, and the report re-reads the original as the manifest records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonymatch.cli import main
from anonymatch.sets.km import read_transactions


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def long_file(path: Path, n: int = 40, repeat: bool = True) -> Path:
    """n records of 3 items out of 8 (a deterministic pattern), each first item repeated."""
    lines = ["rid,item"]
    for r in range(n):
        items = [(r + j * (1 + r % 3)) % 8 for j in range(3)]
        items = list(dict.fromkeys(items))
        lines += [f"r{r},i{i}" for i in items]
        if repeat:
            lines.append(f"r{r},i{items[0]}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_km_refuses_a_csv_read_as_fimi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = long_file(tmp_path / "long.txt")  # no .csv: the first line gives it away
    for command in (
        ["check-km", str(src)],
        ["anonymize-km", str(src), "-o", str(tmp_path / "r.jsonl")],
    ):
        code, _, err = run([*command, "-k", "2", "-m", "1"], capsys)
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and "--format long" in err
        assert "`" not in err
    assert not (tmp_path / "r.jsonl").exists()


def test_km_long_and_basket(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = long_file(tmp_path / "long.csv")
    rel, manifest = tmp_path / "rel.jsonl", tmp_path / "m.json"
    code, _, err = run(
        [
            "anonymize-km",
            str(src),
            "--format",
            "long",
            "--dedupe",
            "-k",
            "3",
            "-m",
            "2",
            "-o",
            str(rel),
            "--report",
            str(manifest),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(manifest.read_text())["parameters"]["input_options"] == {
        "format": "long",
        "dedupe": True,
    }
    code, out, _ = run(["check-km", str(rel), "-k", "3", "-m", "2"], capsys)
    assert code == 0 and out.startswith("PASS")
    # the same records as a basket file and as a long file read alike
    long_m, long_items = read_transactions(str(src), "long", dedupe=True)
    basket = tmp_path / "basket.txt"
    rows = {}
    for line in src.read_text().splitlines()[1:]:
        rid, item = line.split(",")
        rows.setdefault(rid, dict.fromkeys([]))[item] = None
    basket.write_text("".join(",".join(v) + "\n" for v in rows.values()))
    b_m, b_items = read_transactions(str(basket), "basket")
    assert list(b_items) == list(long_items)
    assert (b_m != long_m).nnz == 0
    code, out, _ = run(
        [
            "check-km",
            str(src),
            "--format",
            "long",
            "--id-column",
            "rid",
            "--item-column",
            "item",
            "--dedupe",
            "-k",
            "1",
            "-m",
            "1",
        ],
        capsys,
    )
    assert code == 0 and out.startswith("PASS")


def test_sets_dedupe_report_and_recorded_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = long_file(tmp_path / "long.csv", n=30)
    rel, manifest, html = tmp_path / "rel.jsonl", tmp_path / "m.json", tmp_path / "r.html"
    code, _, err = run(
        [
            "anonymize-sets",
            str(src),
            "--format",
            "long",
            "--dedupe",
            "-k",
            "3",
            "--seed",
            "1",
            "-o",
            str(rel),
            "--report",
            str(manifest),
            "--report-html",
            str(html),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err  # the report re-reads the long file with --dedupe
    assert html.exists()
    # `report` with no reading option: the manifest's input options (long, dedupe)
    code, out, err = run(
        ["report", str(src), str(rel), "--manifest", str(manifest), "-o", str(tmp_path / "x.html")],
        capsys,
    )
    assert code == 0, err
    assert "as the manifest records: dedupe True, format 'long'" in out
    # an option on the command line wins (nothing is taken from the manifest)
    code, out, err = run(
        [
            "report",
            str(src),
            str(rel),
            "--manifest",
            str(manifest),
            "--format",
            "basket",
            "-o",
            str(tmp_path / "y.html"),
        ],
        capsys,
    )
    assert "as the manifest records" not in out + err
