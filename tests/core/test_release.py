"""The one release skeleton (``core.release``): a failed verification is refused in one wording,
the blocks are written in one order for every path, and ``new_manifest`` has one caller."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from anonymatch.core.criteria import Criterion, Verdict
from anonymatch.core.errors import VerificationError
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
        leakage={"flagged": []},
        headline={"keeps": 1},
    )
    assert tuple(report) == (*TOP_LEVEL_KEYS, "plan", "leakage")
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
