"""The one release skeleton: what every release path states about its release, stated here.

Every kind and path (tables in memory, streamed, (k,ℓ) and per-record levels; sets and k^m;
sparse in memory and streamed; relational in memory and streamed; graphs) ends the same way:
the privacy step and the shuffle made a release, the verifier checked it from what is
published and the original, and the manifest says what the release promises. A path describes
what it produced in one :class:`Produced`; :func:`publish` then

1. refuses a release whose verification did not pass (:func:`refuse`: ``VerificationError``,
   nothing written — one wording for every path; a path that verifies partition by partition
   calls :func:`refuse` on each partition before it writes);
2. builds the manifest (``core.manifest.new_manifest``: this is its one call);
3. runs the release checks the path has (``core.criteria.Check``: identifiers never
   published, the kept-column leakage, the utility headline), refusing a release that fails
   one, then records the criteria it is given (``core.criteria.record``: each criterion's
   claim and its verdict on the attacker's view), the path's sensitive models, the plan and
   the checks' blocks (the top-level ``leakage``, ``loss.headline``).

The blocks are written in one order for every path — the path's own figures, the criteria's
claims and verdicts, the sensitive models', the plan, the leakage check, the headline — and that
order is the manifest's key order (the top-level keys: ``docs/manifest.md``), so that a path
that gains a criterion or a check states it where every other path does.

References
----------
.. [1] F. Prasser, F. Kohlmayer, "Putting statistical disclosure control into practice: the ARX
   data anonymization tool", 2015 (one engine checks every privacy model).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from anonymatch.core.criteria import Check, Criterion, Verdict, record
from anonymatch.core.errors import VerificationError
from anonymatch.core.manifest import new_manifest


@dataclass(frozen=True, kw_only=True)
class Produced:
    """What a release path produced, as its manifest states it.

    Every block is written in the order given (the manifest's key order).

    Attributes
    ----------
    kind : {"table", "transactions", "sparse", "graph", "relational"}
        The manifest's ``data_kind``.
    method : str
        The algorithm (``hungarian``, ``gray-tsp``, ``smooth``, …).
    parameters : mapping
        The run's settings (roles, partition sizes, executors, …); never the seed.
    guarantee : mapping
        The privacy model (``model``) and its levels; the criteria's and the sensitive
        models' claims follow it.
    verification : mapping
        The verifier's figures; ``passed`` True, False (refused) or None (nothing to check
        from data: a guarantee by construction, e.g. randomized response). ``reason``, when
        present, is the refusal's.
    loss : mapping
        The information-loss and utility figures.
    seconds : mapping
        Stage timings (``wall`` included when the path knows it).
    seeded : bool or None
        Whether a fixed seed drove the randomness (None: no randomness at all). The seed is
        never recorded.
    records_in, records_out : int or None
        Records (rows, transactions, people, vertices) read and published.
    input_extra, output_extra : mapping
        Further keys of the ``input`` and ``output`` blocks (``dropped_missing``,
        ``layout``, …).
    models, model_figures : mapping
        The sensitive models' claims (``guarantee.sensitive``, ``construction``,
        ``certificate``) and figures (``verification.sensitive``, ``ring_records``), written
        after the criteria's.
    plan : mapping, optional
        The run's ``plan`` block (the path taken and its partition size), after the
        top-level keys of the schema.
    """

    kind: str
    method: str
    parameters: Mapping[str, Any]
    guarantee: Mapping[str, Any]
    verification: Mapping[str, Any]
    loss: Mapping[str, Any]
    seconds: Mapping[str, float]
    seeded: bool | None
    records_in: int | None
    records_out: int | None
    input_extra: Mapping[str, Any] = field(default_factory=dict)
    output_extra: Mapping[str, Any] = field(default_factory=dict)
    models: Mapping[str, Any] = field(default_factory=dict)
    model_figures: Mapping[str, Any] = field(default_factory=dict)
    plan: Mapping[str, Any] | None = None


def refuse(passed: bool | None, reason: object) -> None:
    """Refuse a release (or a partition of one) whose verification did not pass.

    Parameters
    ----------
    passed : bool or None
        The verifier's verdict; None (nothing to check from data) is not a failure.
    reason : object
        Why it failed, in the verifier's words.

    Raises
    ------
    VerificationError
        ``the release failed verification (<reason>); nothing written`` when ``passed`` is
        False.

    Notes
    -----
    O(1).
    """
    if passed is False:
        raise VerificationError(f"the release failed verification ({reason}); nothing written")


def publish(
    produced: Produced,
    *,
    criteria: Sequence[Criterion] = (),
    view: Any = None,
    checks: Sequence[Check] = (),
    shown: Any = None,
    source: Mapping[str, Any] | None = None,
    widening: Mapping[str, Any] | None = None,
    risk: Mapping[str, Any] | Future[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The manifest of a verified release: refuse, run the checks, build, record the criteria
    and the checks.

    Parameters
    ----------
    produced : Produced
        What the path produced.
    criteria : sequence of Criterion
        The criteria the release was made to meet, checked on ``view``
        (``core.criteria.record``: ``guarantee.<name>`` and ``verification.<name>``).
    view : object, optional
        The attacker's view the criteria are checked on (required with ``criteria``).
    source : mapping, optional
        What the criteria were counted against (the population's path and SHA-256), added to
        each claim.
    widening : mapping, optional
        What enforcing the criteria cost (``loss.widening``).
    checks : sequence of Check
        The release checks the path runs (``core.criteria.Check``: the tables'
        ``tables.risk.checks.release_checks``), run on ``shown`` in order; a failed one
        refuses the release (:meth:`Check.refuse`), else each writes its block at its place
        (``leakage`` after ``plan``, ``loss.headline``) and its time in ``seconds``.
    shown : object, optional
        What the checks read: the release beside the original (required with ``checks``;
        the tables' ``ReleaseView``).
    risk : mapping, or a future of one, optional
        Risk figures measured on the release (the top-level ``risk`` block, last:
        ``known_person``). A future (figures measured on a worker thread while the checks
        run) is waited for after them; the wait counts in the wall time.

    Returns
    -------
    dict
        The manifest (``command`` ``python-api``, paths unknown: the CLI completes it with
        ``core.manifest.finish_manifest``).

    Raises
    ------
    VerificationError
        ``produced.verification`` did not pass (:func:`refuse`), or a check failed (its own
        error: an identifier published, ``VerificationError``; a leak under ``strict``,
        ``InputError``); nothing is built.

    Notes
    -----
    Time O(size of the blocks) plus the criteria's checks (see each criterion's ``check``).
    """
    verification = produced.verification
    refuse(verification.get("passed"), verification.get("reason", "see the verification"))
    assert view is not None or not criteria, "criteria are checked on a view"
    assert shown is not None or not checks, "checks are run on a view"
    blocks: list[tuple[Check, Verdict]] = []
    timed: dict[str, float] = {}
    for check in checks:
        clock = time.perf_counter()
        verdict = check.check(shown)
        check.refuse(verdict)  # its own error, else the one wording
        refuse(verdict.passed, verdict.reason)
        blocks.append((check, verdict))
        if check.seconds is not None:
            timed[check.seconds] = timed.get(check.seconds, 0.0) + time.perf_counter() - clock
    manifest = new_manifest(
        data_kind=produced.kind,
        method=produced.method,
        parameters=produced.parameters,
        guarantee=produced.guarantee,
        verification=verification,
        loss=produced.loss,
        seconds=produced.seconds,
        randomness_seeded=produced.seeded,
        input_records=produced.records_in,
        output_records=produced.records_out,
        input_extra=produced.input_extra,
        output_extra=produced.output_extra,
    )
    record(manifest, criteria, view, source)
    if widening is not None:
        manifest["loss"]["widening"] = dict(widening)
    manifest["guarantee"].update(produced.models)
    manifest["verification"].update(produced.model_figures)
    if produced.plan is not None:
        manifest["plan"] = dict(produced.plan)
    for check, verdict in blocks:
        *path, key = check.at or ("",)
        if key:
            place = manifest
            for part in path:
                place = place[part]
            place[key] = check.block(verdict)
    seconds = manifest["seconds"]
    for key, spent in timed.items():  # the checks' time, counted in the wall time too
        seconds[key] = seconds.get(key, 0.0) + spent
        if "wall" in seconds:
            seconds["wall"] += spent
    if isinstance(risk, Future):  # measured beside the checks: waited for last
        clock = time.perf_counter()
        risk = risk.result()
        if "wall" in seconds:
            seconds["wall"] += time.perf_counter() - clock
    if risk is not None:
        manifest["risk"] = dict(risk)
    return manifest
