"""The one release skeleton (``core.release``): a failed verification is refused in one wording,
the blocks are written in one order for every path, and ``new_manifest`` has one caller."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from anonymatch.core.criteria import Check, Criterion, Parameter, Registry, Verdict
from anonymatch.core.errors import InputError, VerificationError
from anonymatch.core.manifest import TOP_LEVEL_KEYS
from anonymatch.core.release import Produced, publish, refuse

SRC = Path(__file__).resolve().parents[2] / "src"


def produced(verification: Mapping[str, Any], **more: Any) -> Produced:
    return Produced(
        kind="table",
        method="m",
        parameters={"qi": ["a"]},
        guarantee={"model": "k-anonymity", "k": 2},
        verification=verification,
        loss={"gcp": 0.5},
        seconds={"wall": 0.0},
        seeded=False,
        records_in=4,
        records_out=4,
        **more,
    )


class Floor(Criterion):
    """A criterion passing when the view is at least its level."""

    name = title = "floor"
    parameters = ()

    def __init__(self, level: int) -> None:
        self.level = level

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> Criterion:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"level": self.level}

    def check(self, view: Any) -> Verdict:
        return Verdict(view >= self.level, "ok", {"achieved": view})


def test_a_failed_verification_is_refused_in_one_wording() -> None:
    with pytest.raises(VerificationError) as caught:
        publish(produced({"passed": False, "reason": "2 rows alone"}))
    assert str(caught.value) == "the release failed verification (2 rows alone); nothing written"
    with pytest.raises(VerificationError, match=r"\(a partition\); nothing written"):
        refuse(False, "a partition")
    refuse(True, "ok")
    refuse(None, "nothing to check from data: a guarantee by construction")
    report = publish(produced({"passed": None, "reason": "by construction"}))
    assert report["verification"]["passed"] is None


class Stamp(Check):
    """A check stating what it was shown at the top-level ``leakage`` key (timed)."""

    name = title = "stamp"
    parameters = (Parameter(name="strict", kind="flag", default=False, help="Refuse."),)
    at = ("leakage",)
    seconds = "leakage"

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> Stamp:
        return cls(bool(values.get("strict")))

    def describe(self) -> dict[str, Any]:
        return {"strict": self.strict}

    def check(self, view: Any) -> Verdict:
        return Verdict(not self.strict, "strict", {"flagged": [], "shown": view})


class Keeps(Stamp):
    """A check writing ``loss.headline``, never failing, on tables in memory only."""

    name = "keeps"
    parameters = ()
    at = ("loss", "headline")
    paths = ("memory",)

    def check(self, view: Any) -> Verdict:
        return Verdict(True, "ok", {"keeps": 1})


def test_a_failed_check_refuses_the_release() -> None:
    """A check that fails refuses the release (its own error; by default the one wording)."""
    with pytest.raises(VerificationError, match=r"failed verification \(strict\); nothing"):
        publish(produced({"passed": True}), checks=(Stamp(strict=True),), shown=1)


def test_checks_for_a_release_come_from_the_registry() -> None:
    """Every check of the kind and path runs, asked or not; one a run asks for by a parameter
    on a path that does not run it is refused (exit 2), and values are checked by their
    parameters' kinds."""
    registry = Registry(Stamp, Keeps)
    assert [type(c) for c in registry.for_release({}, "table", "memory")] == [Stamp, Keeps]
    assert [type(c) for c in registry.for_release({}, "table", "streamed")] == [Stamp]
    assert registry.for_release({}, "sets", "memory") == ()
    with pytest.raises(InputError, match="`strict` is not checked on the memory path of sets"):
        registry.for_release({"strict": True}, "sets", "memory")
    with pytest.raises(InputError, match="`strict` must be true or false"):
        registry.for_release({"strict": "yes"}, "table", "memory")
    columns = Parameter(name="identifiers", kind="columns", help="")
    assert columns.check("a, b") == ("a", "b") and columns.check(["c"]) == ("c",)
    with pytest.raises(InputError, match="identifiers"):
        columns.check(3)
    flag = Parameter(name="strict", kind="flag", help="")
    assert flag.parse("true") is True and flag.parse("0") is False and flag.python_type is bool


def test_blocks_are_written_in_one_order() -> None:
    report = publish(
        produced(
            {"passed": True, "reason": "ok", "sensitive": []},
            input_extra={"dropped_missing": 0},
            output_extra={"layout": "partitioned"},
            models={"sensitive": [{"l": 2}], "construction": "classes"},
            model_figures={"sensitive": [{"passed": True}], "ring_records": 0},
            plan={"path": "memory"},
        ),
        criteria=(Floor(3),),
        view=5,
        source={"population": "p.csv"},
        widening={"rows": 0},
        checks=(Stamp(), Keeps()),
        shown=7,
    )
    assert tuple(report) == (*TOP_LEVEL_KEYS, "plan", "leakage")
    assert report["leakage"] == {"flagged": [], "shown": 7}
    assert report["loss"]["headline"] == {"keeps": 1}
    assert report["seconds"]["leakage"] >= 0 and report["seconds"]["wall"] >= 0
    assert list(report["guarantee"]) == ["model", "k", "floor", "sensitive", "construction"]
    assert report["guarantee"]["floor"] == {"level": 3, "population": "p.csv"}
    # a figure the verifier already names keeps its place; the criteria's come before the models'
    figures = ["passed", "reason", "sensitive", "floor", "ring_records"]
    assert list(report["verification"]) == figures
    assert report["verification"]["floor"] == {"passed": True, "reason": "ok", "achieved": 5}
    assert list(report["loss"]) == ["gcp", "widening", "headline"]
    assert report["input"] == {"path": None, "sha256": None, "records": 4, "dropped_missing": 0}
    assert report["output"]["layout"] == "partitioned"
    assert report["randomness"] == {"source": "os-entropy"}


def test_new_manifest_has_one_caller() -> None:
    calls = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"(?<!def )\bnew_manifest\(", line)
    ]
    assert len(calls) == 1 and calls[0].startswith("anonymatch/core/release.py:"), calls
