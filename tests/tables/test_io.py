"""Reading CSV tables (``tables.io``): a row with fewer fields than the header is refused,
naming its line, by the in-memory reader and the streamed one alike (pandas' C engine pads it
with empty cells, which would be read as a person with missing values); empty trailing fields
of a full row are data."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.errors import InputError
from anonymatch.tables.io import CsvOptions, read_table
from anonymatch.tables.io.stream import iter_table_batches

cell = st.one_of(st.just(""), st.text(alphabet="ab1,;\"'", min_size=1, max_size=4))


def _text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=12),
    short=st.one_of(st.none(), st.integers(0, 11)),
    width=st.integers(1, 2),
)
def test_a_short_row_is_refused_by_its_line(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[list[str]],
    short: int | None,
    width: int,
) -> None:
    path = tmp_path_factory.mktemp("io") / "t.csv"
    if short is not None:
        short = min(short, len(rows) - 1)
        rows[short] = rows[short][:width]
        if width == 1 and rows[short] == [""]:
            rows[short] = ["a"]  # a blank line is skipped by every reader, not a short row
    path.write_text(_text([["x", "y", "z"], *rows]))

    def batches() -> list[object]:
        return list(iter_table_batches(path, CsvOptions(), batch_rows=5))

    if short is None:
        frame = read_table(path)
        assert frame.to_numpy().tolist() == rows  # empty trailing fields are data
        assert sum(b.num_rows for b in batches()) == len(rows)  # type: ignore[attr-defined]
        return
    with pytest.raises(InputError, match=f"line {short + 2} has fewer fields than the header"):
        read_table(path)
    with pytest.raises(InputError, match="malformed CSV"):  # a short first row: pandas' words
        batches()


def test_the_cli_refuses_a_short_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from anonymatch.cli import main

    src = tmp_path / "p.csv"
    src.write_text("age,sex,zip\n" + "".join(f"{20 + i},F,1{i % 3}\n" for i in range(9)) + "33,F\n")
    for executor in ("threads", "inline"):
        out = tmp_path / f"r-{executor}.csv"
        code = main(["anonymize", str(src), "-o", str(out), "--k", "2", "--qi", "age,sex,zip",
                     "-q", "--executor", executor])  # fmt: skip
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and err == [
            f"anonymatch: error: malformed CSV in {src}: line 11 has fewer fields than the header"
        ], err
        assert not out.exists()
