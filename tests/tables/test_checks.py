"""The release checks as criteria (tables.risk.checks): identifiers never published, the kept
columns' leakage and the utility headline — their verdicts, refusals and where they run."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError, VerificationError
from anonymatch.core.release import Produced, publish
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.risk.checks import CHECKS, Identifiers, ReleaseView, release_checks
from anonymatch.tables.risk.headline import Kept, headline
from anonymatch.tables.risk.leakage import LeakRefused, RowCells, check_leakage
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS, Leakage

SCHEMA = Schema.build(["num"], ["num"], identifiers=["pid"])


def view(release: pd.DataFrame, data: pd.DataFrame) -> ReleaseView:
    enc = encode_qi(data, SCHEMA)
    return ReleaseView.of(data, enc, parse_cells(release, enc), release, SCHEMA)


def leaking() -> tuple[pd.DataFrame, pd.DataFrame]:
    """education → num: the range published beside ``edu`` is really one number."""
    edu = ["a"] * 20 + ["b"] * 20
    data = pd.DataFrame({"pid": [f"p{i}" for i in range(40)],
                         "num": ["9"] * 20 + ["13"] * 20, "edu": edu})  # fmt: skip
    return data, pd.DataFrame({"num": ["9..13"] * 40, "edu": edu})


def produced() -> Produced:
    return Produced(kind="table", method="m", parameters={}, guarantee={"model": "k"},
                    verification={"passed": True}, loss={"gcp": 0.1}, seconds={"wall": 0.0},
                    seeded=None, records_in=40, records_out=40)  # fmt: skip


def test_an_identifier_shown_fails_and_refuses_the_release() -> None:
    data, release = leaking()
    assert Identifiers(["pid"]).check(view(release, data)).passed
    shown = release.assign(pid=data["pid"])
    verdict = Identifiers(["pid"]).check(view(shown, data))
    assert not verdict.passed and verdict.reason == "the identifier column 'pid' is published"
    with pytest.raises(VerificationError, match="identifier column 'pid' is published"):
        publish(produced(), checks=(Identifiers(["pid"]),), shown=view(shown, data))


def test_verify_fails_a_release_showing_an_identifier() -> None:
    """``verify`` runs the same check: the k-anonymous cells do not save a published id."""
    data, release = leaking()
    report = anonymatch.verify(data, release.assign(pid=data["pid"]), k=2, qi=["num"],
                               numeric=["num"], identifiers=["pid"])  # fmt: skip
    assert not report.passed and "'pid' is published" in report.reason


def test_leakage_check_is_the_leakage_report_and_strict_refuses() -> None:
    data, release = leaking()
    seen = view(release, data)
    enc = encode_qi(data, SCHEMA)
    want = check_leakage(data, enc, parse_cells(release, enc), release, SCHEMA).to_dict()
    verdict = Leakage().check(seen)
    assert verdict.passed and verdict.figures == want and want["flagged"] == ["edu"]
    manifest = publish(produced(), checks=(Leakage(),), shown=seen)
    assert manifest["leakage"] == want and manifest["seconds"]["leakage"] >= 0
    refused = Leakage(strict=True).check(seen)
    assert not refused.passed and "edu" in refused.reason
    with pytest.raises(LeakRefused, match=r"refused \(`strict`\): column 'edu'.*nothing written"):
        publish(produced(), checks=(Leakage(strict=True),), shown=seen)


def test_headline_check_is_the_headline() -> None:
    data, release = leaking()
    seen = view(release, data)
    verdict = Kept().check(seen)
    want = headline(parse_cells(release, seen.enc), seen.enc).to_dict()
    assert verdict.passed and verdict.figures == want
    manifest = publish(produced(), checks=(Kept(),), shown=seen)
    assert list(manifest["loss"]) == ["gcp", "headline"] and manifest["loss"]["headline"] == want


def test_where_the_checks_run() -> None:
    """From the registry: tables in memory and streamed run all three; (k,ℓ) no headline;
    relational releases identifiers and leakage; per-record levels identifiers only, and
    ``--strict`` there is refused (exit 2) rather than ignored."""
    names = {
        (kind, path): [type(c).__name__ for c in release_checks(kind, path, (), False)]
        for kind, path in [("table", "memory"), ("table", "streamed"), ("table", "kl"),
                           ("relational", "memory"), ("relational", "streamed"),
                           ("table", "adaptive"), ("transactions", "memory")]
    }  # fmt: skip
    assert names[("table", "memory")] == names[("table", "streamed")]
    assert names[("table", "memory")] == ["Identifiers", "Leakage", "Kept"]
    assert names[("table", "kl")] == ["Identifiers", "Leakage"]
    assert names[("relational", "memory")] == names[("relational", "streamed")]
    assert names[("relational", "memory")] == ["Identifiers", "Leakage"]
    assert names[("table", "adaptive")] == ["Identifiers"]
    assert names[("transactions", "memory")] == []
    with pytest.raises(InputError, match="`strict` is not checked on the"):
        release_checks("table", "adaptive", (), True)
    assert release_checks("table", "memory", (), True)[1].describe() == {"strict": True}
    assert release_checks("table", "memory", (), False)[1].describe() == {"strict": False}
    for wrong in ("yes", 1, 0.0):  # a flag is a bool: text or a number is refused
        with pytest.raises(InputError, match="`strict` must be true or false"):
            release_checks("table", "memory", (), wrong)  # type: ignore[arg-type]
    assert [p.name for p in CHECKS.parameters()] == ["identifiers", "strict"]
    assert [p.name for p in CHECK_OPTIONS.parameters()] == ["strict"]
    assert CHECK_OPTIONS.parameters()[0] is Leakage.parameters[0]  # declared once


def _close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == pytest.approx(b[k], rel=1e-12) if isinstance(b[k], float) else a[k] == b[k]
        for k in a
    )


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("xyz")), min_size=4, max_size=40),
       st.integers(1, 3))  # fmt: skip
def test_streamed_rows_give_the_in_memory_figures(rows: list[tuple[int, str]], width: int) -> None:
    """The view of a release given as distinct cells with each row's cell number (the
    streamed path) gives the leakage and headline figures of the same release in memory."""
    data = pd.DataFrame({"pid": [f"p{i}" for i in range(len(rows))],
                         "num": [str(n) for n, _ in rows],
                         "word": [w for _, w in rows]})  # fmt: skip
    release = pd.DataFrame({
        "num": [f"{n - n % width}..{n - n % width + width - 1}" if width > 1 else str(n)
                for n, _ in rows], "word": data["word"]})  # fmt: skip
    seen = view(release, data)
    cells = parse_cells(release, seen.enc)
    distinct = release["num"].drop_duplicates()
    group = release["num"].map({v: i for i, v in enumerate(distinct)}).to_numpy()
    rows_view = RowCells(parse_cells(release.loc[distinct.index], seen.enc), group)

    def kept() -> tuple[tuple[str, pd.Series, None], ...]:
        return (("word", data["word"], None),)

    streamed = ReleaseView(seen.enc, rows_view, SCHEMA, tuple(release.columns), kept)
    assert Leakage().check(streamed).figures == Leakage().check(seen).figures
    got, want = Kept().check(streamed).figures, Kept().check(seen).figures
    by_qi = want.pop("loss_present_by_qi")  # the same shares, summed in another order
    assert got.pop("loss_present_by_qi") == pytest.approx(by_qi, rel=1e-12)
    assert _close(got, want)
    assert cells.n == len(rows)
