"""What the report certifies: the manifest's claims re-verified from the files.

A manifest is a claim. The report presents the guarantee (model, k, the verifier's verdict and
certificate) as *checked* only when it re-ran the verifier on the original and the release
itself, and says where the manifest's figures differ (then ``anonymatch report`` exits 4, the
verification-failure code). Without the files, or for a release this report does not re-verify,
every claim is labelled "unchecked (from the manifest)". A manifest without the SHA-256 of the
files does not name them: the re-run figures hold for the files given, and the manifest's own
claims (method, parameters, that it describes these files) stay unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["checked", "mismatch", "unchecked"]

UNCHECKED = "unchecked (from the manifest)"
"""The label of every claim the report did not re-verify."""


@dataclass
class ClaimCheck:
    """The outcome of re-verifying a manifest's claims.

    ``status``: ``checked`` (the verifier re-ran on the files and agrees with every figure the
    manifest states), ``mismatch`` (it re-ran and some figure differs: ``problems``) or
    ``unchecked`` (nothing re-ran: ``why``). ``verification`` is the re-run's certificate
    (the ``verification`` block it would have written); ``named`` whether the manifest's
    SHA-256 digests name the files given (both present and equal)."""

    status: Status
    why: str = ""
    verification: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    named: bool = False

    @property
    def failed(self) -> bool:
        """Whether the report must end with the verification-failure exit code."""
        return self.status == "mismatch"


def compare(claimed: Mapping[str, Any], rerun: Mapping[str, Any]) -> list[str]:
    """The figures of the manifest's ``verification`` block that differ from the re-run's (keys
    both hold), and a ``passed`` the manifest states that the re-run does not give."""
    problems = []
    for key, value in rerun.items():
        if key in claimed and _normal(claimed[key]) != _normal(value):
            problems.append(
                f"the manifest says {key} = {_short(claimed[key])}, the verifier finds "
                f"{_short(value)}"
            )
    if "passed" not in claimed and rerun.get("passed") is False:
        problems.append("the verifier finds that the release does not pass")
    return problems


def _normal(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)


def _short(value: Any) -> str:
    text = _normal(value)
    return text if len(text) <= 80 else text[:77] + "…"
