"""Hypothesis-driven hostile statistical files (issue 37): SPSS ``.sav``/``.zsav``, Stata
``.dta``, SAS ``.xpt`` and ``.sas7bdat`` inputs through ``anonymize``, ``verify``, ``risk`` and
``init``, held to the contract of ``contract.check``.

The files are valid ones written with pyreadstat — hostile column names, variable labels,
value labels (on numbers and codes without a label), user-missing ranges, values (NaN, huge,
negative, unicode text, empty strings) and column types — or damaged bytes: cut short, bits
flipped, a header overwritten, the extension of another format (a Stata file named ``.sav``,
CSV text named ``.dta``) or nothing at all. A file pyreadstat itself refuses to write is not a
case (the draw is skipped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.fuzz.contract import FUZZ, breaks, case_dir, check

pyreadstat = pytest.importorskip("pyreadstat", reason="the stats extra (pyreadstat) is missing")

WRITERS = {".sav": "write_sav", ".zsav": "write_sav", ".dta": "write_dta", ".xpt": "write_xport"}
EXTENSIONS = [".sav", ".zsav", ".dta", ".xpt", ".sas7bdat"]

NAME = st.one_of(
    st.sampled_from(["age", "sex", "zip", "v1", "_x", "Q", "a.b", "a b", "é", "日本", "x" * 40,
                     "1abc", "age", "AGE", "all", "to", "$x", "a,b", "@x", "a=b"]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=8),
)  # fmt: skip
LABEL = st.one_of(
    st.none(),
    st.sampled_from(["", "Age of the person", "é", "a\nb", "'", '"', "=1+1", "x" * 300]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=10),
)
NUMBER = st.one_of(
    st.integers(-5, 5),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=True, allow_infinity=False, width=64),
    st.sampled_from([0.5, -0.0, 1e300, -1e300, 5e-324, 8.98846567431158e307]),
)
TEXT = st.one_of(
    st.sampled_from(["", " ", "u", "v", "w", "?", "NA", "*", "1..2", "{a,b}", "a\nb", "é",
                     "'=1", "x" * 300]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=6),
)  # fmt: skip
DAMAGE = st.sampled_from(
    ["none", "none", "none", "none", "cut", "flip", "header", "other-extension", "csv-text",
     "empty"]
)  # fmt: skip


@st.composite
def stats_frames(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A frame and pyreadstat's keyword arguments: half the time plain (age, sex, zip with a
    few labelled codes), else hostile names, labels, values and types."""
    n = draw(st.integers(0, 30))
    plain = draw(st.booleans())
    if plain:
        frame = pd.DataFrame(
            {
                "age": [float(20 + (7 * i) % 40) for i in range(n)],
                "sex": [float(i % 2) for i in range(n)],
                "zip": ["abc"[i % 3] for i in range(n)],
            }
        )
        for row, col, value in draw(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 1),
                                                       NUMBER), max_size=2)):  # fmt: skip
            if n:
                frame.iat[row % n, col] = value
    else:
        n_cols = draw(st.integers(1, 4))
        names = draw(st.lists(NAME, min_size=n_cols, max_size=n_cols))
        columns: dict[int, list[Any]] = {}
        for j in range(n_cols):
            kind = draw(st.sampled_from(["number", "text", "small"]))
            cell = {"number": NUMBER, "text": TEXT, "small": st.sampled_from([0.0, 1.0, 2.0])}[kind]
            columns[j] = draw(st.lists(cell, min_size=n, max_size=n))
        frame = pd.DataFrame(columns)
        frame.columns = names
    kwargs: dict[str, Any] = {}
    names = [str(c) for c in frame.columns]
    labels = draw(st.lists(LABEL, min_size=len(names), max_size=len(names)))
    if any(x is not None for x in labels):
        kwargs["column_labels"] = labels
    value_labels: dict[str, dict[float, str]] = {}
    for name in names:
        if pd.api.types.is_numeric_dtype(frame[name]) and draw(st.booleans()):
            codes = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, -1.0, 99.0]), max_size=3))
            texts = draw(st.lists(TEXT, min_size=len(codes), max_size=len(codes)))
            value_labels[name] = dict(zip(codes, texts, strict=True))
    if value_labels:
        kwargs["variable_value_labels"] = value_labels
    numeric = [n for n in names if pd.api.types.is_numeric_dtype(frame[n])]
    if numeric and draw(st.booleans()):
        kwargs["missing_ranges"] = {
            numeric[0]: draw(st.sampled_from([[99.0], [-1.0, 99.0], [{"lo": 90.0, "hi": 100.0}]]))
        }
    return frame, kwargs


def _write(frame: pd.DataFrame, kwargs: dict[str, Any], path: Path, fmt: str) -> bool:
    """Write ``frame`` as ``fmt`` (a key of WRITERS) at ``path``; False when pyreadstat
    refuses it (a name, label or value the format cannot hold: not a case)."""
    options = dict(kwargs)
    if fmt != ".sav" and fmt != ".zsav":
        options.pop("missing_ranges", None)
    if fmt == ".xpt":
        options.pop("variable_value_labels", None)
    if fmt == ".zsav":
        options["compress"] = True
    if fmt == ".dta" and "variable_value_labels" in options:  # Stata: labels of integers only
        options["variable_value_labels"] = {
            c: {int(k): v for k, v in labels.items()}
            for c, labels in options["variable_value_labels"].items()
        }
    try:
        getattr(pyreadstat, WRITERS[fmt])(frame, str(path), **options)
    except Exception:  # noqa: BLE001 - pyreadstat's refusal of the draw itself
        return False
    return True


def _damage(path: Path, how: str, where: float) -> None:
    data = path.read_bytes()
    if how == "cut":
        path.write_bytes(data[: int(len(data) * where)])
    elif how == "flip" and data:
        at = int((len(data) - 1) * where)
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
    elif how == "header":
        path.write_bytes(b"\x00" * min(64, len(data)) + data[64:])
    elif how == "csv-text":
        path.write_text("age,sex,zip\n30,1,a\n31,0,b\n")
    elif how == "empty":
        path.write_bytes(b"")


@FUZZ
@given(
    drawn=stats_frames(),
    ext=st.sampled_from(EXTENSIONS),
    written_as=st.sampled_from(list(WRITERS)),
    damage=DAMAGE,
    where=st.floats(0, 1),
    k=st.sampled_from([1, 2, 3, 5]),
    release=st.sampled_from([".csv", ".csv", ".sav", ".dta"]),
)
@example(  # a transport file cut short: read as fewer rows with exit 0 before (issue 37)
    drawn=(pd.DataFrame({"age": [float(i % 9) for i in range(30)], "sex": [0.0, 1.0] * 15,
                         "zip": ["a", "b", "c"] * 10}), {}),
    ext=".xpt", written_as=".xpt", damage="cut", where=0.6, k=2, release=".csv",
)  # fmt: skip
def test_fuzz_stats_files(drawn, ext, written_as, damage, where, k, release) -> None:  # type: ignore[no-untyped-def]  # noqa: E501
    """anonymize/verify/risk/init on a statistical file, valid or damaged."""
    frame, kwargs = drawn
    work = case_dir("fuzz-stats-")
    src = work / f"in{ext}"
    fmt = written_as if damage == "other-extension" else (ext if ext in WRITERS else ".xpt")
    assume(_write(frame, kwargs, src, fmt))
    if ext == ".sas7bdat" and damage == "none":
        damage = "other-extension"  # pyreadstat writes no sas7bdat: a transport file named so
    _damage(src, damage, where)
    names = [str(c) for c in frame.columns]
    qi = names[: max(1, len(names) - 1)] if names else ["age"]
    numeric = [c for c in qi if pd.api.types.is_float_dtype(frame[c]) and c != "sex"]
    schema = ["--qi", ",".join(qi)] + (["--numeric", ",".join(numeric)] if numeric else [])
    out, report = work / f"out{release}", work / "m.json"
    verify = ["verify", src, out, "--k", k, *schema, "-q"]
    args = ["anonymize", src, "-o", out, "--k", k, *schema, "--report", report, "-q"]
    outcome = check("stats-anonymize", args, [out, report], verify, keep=True)
    released = out if outcome.code == 0 and out.exists() else src
    check("stats-verify", ["verify", src, released, "--k", k, *schema, "-q"])
    rep = work / "risk.json"
    check("stats-risk", ["risk", src, released, *schema, "--report", rep, "-q"], [rep])
    job = work / "job.toml"
    check("stats-init", ["init", src, "-o", job, "--k", k, "-q"], [job])


def test_stats_writer_draws_are_files() -> None:
    """The strategy's plain draw is a file every reader takes (the fuzz cases are not all
    pyreadstat refusals)."""
    work = case_dir("fuzz-stats-")
    frame = pd.DataFrame({"age": [30.0, 31.0], "sex": [0.0, 1.0], "zip": ["a", "b"]})
    for fmt in WRITERS:
        assert _write(frame, {"variable_value_labels": {"sex": {0.0: "f"}}}, work / f"x{fmt}", fmt)


@pytest.mark.parametrize("release", [".sav", ".dta"])
def test_quote_led_text_in_a_stats_release(release: str) -> None:
    """A text cell starting with ``'`` (``'=1``, a value label) is written to an SPSS/Stata
    release as it is; the readers took the CSV formula guard off it (``=1``) and ``verify``
    failed the tool's own release (fuzz soak, issue 37)."""
    work = case_dir("fuzz-stats-")
    frame = pd.DataFrame({"age": [30.0 + i for i in range(6)], "sex": ["'=1", "u"] * 3})
    pyreadstat.write_sav(frame, str(work / "in.sav"))
    src, out = work / "in.sav", work / f"out{release}"
    verify = ["verify", src, out, "--k", 2, "--qi", "sex", "-q"]
    outcome = check("stats-known", ["anonymize", src, "-o", out, "--k", 2, "--qi", "sex", "-q"],
                    [out], verify, keep=True)  # fmt: skip
    assert outcome.code == 0 and not breaks("stats-known"), breaks("stats-known")
    risk = check("stats-known", ["risk", src, out, "--qi", "sex", "--k", 2, "-q", "--json"])
    assert risk.code == 0 and not breaks("stats-known"), breaks("stats-known")


# A .sav from the soak (a plain draw with a byte changed) whose third variable has no name:
# pyreadstat reads it as a column named None (NaN in pandas), which the readers pass on.
NAMELESS_SAV = (
    "JEZMMkAoIykgU1BTUyBEQVRBIEZJTEUgLSBodHRwczovL2dpdGh1Yi5jb20vV2l6YXJkTWFjL1Jl"
    "YWRTdGF0IAIAAAADAAAAAAAAAAAAAAANAAAAAAAAAAAAWUAyOCBOb3YgMjYwOTowNTo1NCAgICAg"
    "ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg"
    "ICAAAAACAAAAAAAAAAEAAAACAAAAAggFAAIIBQBBR0UgICAgIAMAAAA/wpggAAAAAAAA8L8AAAAA"
    "AMBYQAIAAAAAAAAAAQAAAAAAAAACCAUAAggFAFNFWCAgICAgAwAAAFrCtiACAAAAAQAAAAAAAAAA"
    "AAAAAAEBAAABAQBaSVAgICAgIAcAAAADAAAABAAAAAgAAAAUAAAAAAAAAAAAAAD/////AQAAAAEA"
    "AAACAAAA6f0AAAcAAAAEAAAACAAAAAMAAAD////////v/////////+9//v//////7/8HAAAAFAAA"
    "AAEAAAAFAAAAVVRGLTgHAAAACwAAAAQAAAAJAAAAAAAAAAgAAAABAAAAAAAAAAgAAAABAAAAAAAA"
    "AAgAAAAAAAAABwAAAA0AAAABAAAAFwAAAEFHRT1hZ2UJU0VYPXNleAlaSVA9hWlwBwAAABAAAAAI"
    "AAAAAgAAAAEAAAAAAAAADQAAAAAAAADnAwAAAAAAAAAAAAAAADRAAAAAAAAAAABhICAgICAgIAAA"
    "AAAAADtAAAAAAAAA8D9iICAgICAgIAAAAAAAAEFAAAAAAAAAAABjICAgICAgIAAAAAAAgERAAAAA"
    "AAAA8D9hICAgICAgIAAAAAAAABBAAAAAAAAAAABiICAgICAgIAAAAAAAgEtAAAAAAAAA8D9jICAg"
    "ICAgIAAAAAAAADZAAAAAAAAAAABhICAgICAgIAAAAAAAAD1AAAAAAAAA8D9iICAgICAgIAAAAAAA"
    "AEJAAAAAAAAAAABjICAgICAgIAAAAAAAgEVAAAAAAAAA8D9hICAgICAgIAAAAAAAAElAAAAAAAAA"
    "AABiICAgICAgIAAAAAAAgExAAAAAAAAA8D9jICAgICAgIAAAAAAAADhAAAAAAAAAAABhICAgICAg"
    "IA=="
)


def test_a_stats_file_with_a_nameless_column() -> None:
    """Found by the soak (issue 37): a damaged .sav whose variable has no name ended in
    KeyError: 'nan' (exit 1); ``read_stats_file`` now refuses it in one line."""
    import base64

    work = case_dir("fuzz-stats-")
    src = work / "in.sav"
    src.write_bytes(base64.b64decode("".join(NAMELESS_SAV)))
    out, job = work / "out.csv", work / "job.toml"
    check("stats-nameless", ["anonymize", src, "-o", out, "--k", 2, "--qi", "age,sex", "-q"], [out])
    check("stats-nameless", ["init", src, "-o", job, "-q"], [job])
    assert not breaks("stats-nameless"), breaks("stats-nameless")  # the soak raises none
