"""Hypothesis-driven hostile relational input (issue 37): a people table and its long items
table through ``anonymize-rt``, ``verify-rt``, ``risk-rt`` and ``init --items``, held to the
contract of ``contract.check``.

The draws: hostile ids (empty, ``NA``, unicode, separators, quotes, numbers written two ways),
ids repeated in the people table, items naming ids that are not people, people without items,
the item column equal to the id column (or absent, or also a people column), ragged rows,
other separators than the extension says (``;`` or tabs in a ``.csv``, commas in a ``.tsv``),
empty tables (no rows, no header, no bytes), one long table instead of two, and persons with
many items (up to 400 each, within the limits), in memory and streamed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.contract import FUZZ, case_dir, check

ID = st.one_of(
    st.sampled_from(["p1", "p2", "p3", "1", "01", "1.0", "", " ", "NA", "?", "nan", "é", "日本",
                     "a,b", 'x"y', "a;b", "a\tb", "a\nb", "=1", "-0", "🙂", "0x1"]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=4),
)  # fmt: skip
ITEM = st.one_of(
    st.sampled_from(["a", "b", "c", "d", "-1", "", "NA", "1", "2", "x y", ",", '"', "é", "*"]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=3),
)
SEPARATORS = {".csv": ",", ".tsv": "\t"}


@st.composite
def relational_case(draw: st.DrawFn) -> dict[str, Any]:
    """People rows (id, age, sex), item rows (id, code) and how they are written."""
    plain = draw(st.booleans())
    n = draw(st.integers(0, 24) if not plain else st.integers(4, 24))
    if plain:
        ids = [f"p{i}" for i in range(n)]
    else:
        ids = draw(st.lists(ID, min_size=n, max_size=n))
        if ids and draw(st.booleans()):
            ids = [f"p{i}" for i in range(n)]
            ids[draw(st.integers(0, n - 1))] = draw(ID)  # one hostile or repeated id
    people = [[pid, str(20 + (7 * i) % 40), "FM"[i % 2]] for i, pid in enumerate(ids)]
    items: list[list[str]] = []
    item = st.sampled_from(["a", "b", "c", "d", "e"]) if plain else ITEM
    for pid in ids:
        for code in draw(st.lists(item, min_size=int(plain), max_size=4)):
            items.append([pid, code])
    if ids and draw(st.integers(0, 4)) == 0:  # one person with many items
        many = draw(st.integers(20, 400))
        items += [[ids[0], f"i{j}"] for j in range(many)]
    if draw(st.integers(0, 4)) == 0:  # an item of someone who is not a person
        items.append([draw(ID), "a"])
    return {
        "people": people,
        "items": items,
        "people_ext": draw(st.sampled_from([".csv", ".csv", ".tsv"])),
        "items_ext": draw(st.sampled_from([".csv", ".csv", ".tsv"])),
        "sep": draw(st.sampled_from([None] * 8 + [";", "\t", ",", "|"])),
        "ragged": draw(st.sampled_from([None, None, None, "short", "long"])),
        "empty": draw(st.sampled_from([None] * 6 + ["people-rows", "items-rows", "no-bytes"])),
        "item_column": draw(st.sampled_from(["code"] * 6 + ["pid", "nope", "age"])),
        "long": draw(st.integers(0, 5)) == 0,
        "quote": draw(st.booleans()),
    }


def _line(cells: list[str], sep: str, quote: bool) -> str:
    if quote:
        return sep.join('"' + c.replace('"', '""') + '"' for c in cells)
    return sep.join(cells)


def _write(path: Path, header: list[str], rows: list[list[str]], case: dict[str, Any]) -> None:
    sep = case["sep"] or SEPARATORS[path.suffix]
    lines = [_line(header, sep, False)] + [_line(r, sep, case["quote"]) for r in rows]
    if case["ragged"] and len(lines) > 1:
        where = 1 + len(lines) // 2
        if where < len(lines):
            lines[where] = (
                lines[where].rsplit(sep, 1)[0]
                if case["ragged"] == "short"
                else (lines[where] + sep + "extra")
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@FUZZ
@given(
    case=relational_case(),
    k=st.sampled_from([1, 2, 2, 3, 5]),
    stream=st.booleans(),
    method=st.sampled_from(["hungarian", "sortgreedy", "classes"]),
)
@example(  # the item column is the id column
    case={"people": [[f"p{i}", "30", "F"] for i in range(6)],
          "items": [[f"p{i}", "a"] for i in range(6)], "people_ext": ".csv", "items_ext": ".csv",
          "sep": None, "ragged": None, "empty": None, "item_column": "pid", "long": False,
          "quote": False},
    k=2, stream=True, method="hungarian",
)  # fmt: skip
def test_fuzz_relational(case, k, stream, method) -> None:  # type: ignore[no-untyped-def]
    """anonymize-rt/verify-rt/risk-rt/init on a hostile people table and items table."""
    work = case_dir("fuzz-rt-")
    people = work / f"people{case['people_ext']}"
    items = work / f"items{case['items_ext']}"
    if case["long"]:  # one long table: the person's attributes repeated on each item row
        by_id = {row[0]: row for row in case["people"]}
        rows = [[*by_id.get(pid, [pid, "", ""]), code] for pid, code in case["items"]]
        _write(people, ["pid", "age", "sex", "code"], rows, case)
        source = []
    else:
        _write(people, ["pid", "age", "sex"], case["people"], case)
        _write(items, ["pid", "code"], case["items"], case)
        source = ["--items", items]
    empty = case["empty"]
    if empty == "people-rows":
        people.write_text(people.read_text().splitlines()[0] + "\n")
    elif empty == "items-rows" and not case["long"]:
        items.write_text(items.read_text().splitlines()[0] + "\n")
    elif empty == "no-bytes":
        (people if case["long"] else items).write_bytes(b"")
    join = [*source, "--id", "pid", "--item-column", case["item_column"], "--na", "code=-1"]
    schema = [*join, "--qi", "age,sex", "--numeric", "age"]
    out, report = work / "out.jsonl", work / "m.json"
    verify = ["verify-rt", people, out, *schema, "-k", k, "-q"]
    args = ["anonymize-rt", people, "-o", out, *schema, "-k", k, "--method", method]
    args += ["--report", report, "-q", "--seed", 1, *(["--stream"] if stream else [])]
    outcome = check("anonymize-rt", args, [out, report], verify, keep=True)
    if outcome.code != 0:  # a release of other people: refused or failed, never a crash
        out.write_text(json.dumps({"age": "20..59", "sex": "*", "items": ["a"]}) + "\n")
    check("verify-rt", ["verify-rt", people, out, *schema, "-k", k, "-q"])
    rep = work / "risk.json"
    check("risk-rt", ["risk-rt", people, out, *schema, "-k", k, "--report", rep, "-q"], [rep])
    job = work / "job.toml"
    drafted = join[:-2] if source else []  # one long table: drafted as a table
    check("init-rt", ["init", people, *drafted, "-o", job, "-q"], [job])
