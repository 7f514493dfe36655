"""Sections every kind shares, built from the manifest alone: what was published (digests,
counts), the guarantee in plain language with the verification certificate, parameters and
timings, and the limits of every release."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonymatch.report import plots
from anonymatch.report.check import UNCHECKED, ClaimCheck
from anonymatch.report.model import Figure, Section, Table, file_name, label_text

MODEL_NAMES = {
    "k-anonymity": "k-anonymity",
    "adaptive-anonymity": "adaptive anonymity (a level per person)",
    "(k,l)-anonymity": "(k,ℓ)-anonymity",
    "k^m-anonymity": "kᵐ-anonymity",
    "smooth-k-anonymity": "smooth k-anonymity",
    "graph-k-anonymity": "graph k-anonymity",
    "randomized-response": "randomized response (differential privacy)",
}


def _digest_text(digest: Any) -> str:
    if isinstance(digest, Mapping):
        return f"{len(digest)} parts: " + ", ".join(f"{k} {v}" for k, v in digest.items())
    return str(digest) if digest else "—"


def published(manifest: Mapping[str, Any]) -> Section:
    """Input and release: paths, SHA-256 digests, record counts."""
    source, output = manifest.get("input") or {}, manifest.get("output") or {}
    section = Section("published", "What was published")
    unit = {"table": "rows", "transactions": "transactions", "sparse": "rows", "graph": "vertices",
            "relational": "people"}  # fmt: skip
    noun = unit.get(str(manifest.get("data_kind")), "records")
    section.facts += [
        ("input", file_name(source.get("path")) or "(not recorded)"),
        ("input SHA-256", _digest_text(source.get("sha256"))),
        (f"input {noun}", source.get("records")),
        ("release", file_name(output.get("path")) or "(not recorded)"),
        ("release SHA-256", _digest_text(output.get("sha256"))),
        (f"released {noun}", output.get("records")),
    ]
    if source.get("dropped_missing"):
        section.facts.append(("rows dropped for a missing QI", source["dropped_missing"]))
    if output.get("layout"):
        section.facts.append(("release layout", output["layout"]))
    return section


def guarantee(manifest: Mapping[str, Any], check: ClaimCheck | None = None) -> Section:
    """The guarantee in plain language and the verifier's certificate: re-computed from the
    files when ``check`` re-ran the verifier, else every claim labelled unchecked."""
    check = check or ClaimCheck("unchecked", "not re-verified")
    g = dict(manifest.get("guarantee") or {})
    rerun = check.verification is not None
    claimed = manifest.get("verification")
    v = dict(
        check.verification
        if check.verification is not None
        else (claimed if isinstance(claimed, Mapping) else {})
    )
    model = str(g.get("model"))
    tag = "" if rerun else f" — {UNCHECKED}"
    section = Section("guarantee", "The guarantee and its verification")
    shown = {**manifest, "verification": v}
    if check.status == "mismatch":
        section.paragraphs.append(
            "THE MANIFEST'S CLAIMS DO NOT HOLD FOR THESE FILES. This report re-ran the verifier "
            "on the original and the release: "
            + "; ".join(check.problems)
            + ". The figures below are the verifier's, not the manifest's."
        )
    elif not rerun:
        section.paragraphs.append(
            f"Unchecked: this report did not re-run the verifier ({check.why}). Everything in "
            "this section is what the manifest claims."
        )
    elif not check.named:
        section.paragraphs.append(
            "Checked on the files given: this report re-ran the verifier on them. The manifest "
            "holds no SHA-256 of the files, so it does not name them; its other claims "
            "(method, parameters, timings) are unchecked."
        )
    text = plain_guarantee(shown)
    if rerun and v.get("passed") is False:
        text = f"Claimed, but the verifier finds that it does NOT hold: {text}"
    section.paragraphs.append(text if rerun else f"The manifest claims: {text}")
    passed = v.get("passed")
    verdict = {True: "PASSED", False: "FAILED", None: "nothing to check (by construction)"}
    section.facts.append((f"model{tag}", MODEL_NAMES.get(model, model)))
    for key, value in g.items():
        if key != "model" and not isinstance(value, list | dict):
            section.facts.append((f"{label_text(key)}{tag}", value))
    if rerun:
        how = "re-verified from the files by this report"
        section.facts.append(("verification", f"{verdict.get(passed, str(passed))} ({how})"))
    else:
        section.facts.append((f"verification{tag}", verdict.get(passed, str(passed))))
    if v.get("reason") and v.get("reason") != "ok":
        section.facts.append((f"verifier says{tag}", v["reason"]))
    rows = [(label_text(k), _value_text(x)) for k, x in v.items() if k not in ("passed", "reason")]
    if rows:
        caption = (
            "Verification certificate (re-computed from the files by this report)"
            if rerun
            else f"Verification figures: {UNCHECKED}, not a certificate"
        )
        section.tables.append(Table(["figure", "value"], rows, caption=caption))
    entries = g.get("sensitive")
    for model_entry in entries if isinstance(entries, list) else [entries] if entries else ():
        section.bullets.append(f"sensitive model{tag}: {_value_text(model_entry)}")
    return section


def plain_guarantee(manifest: Mapping[str, Any]) -> str:
    """One paragraph: what the guarantee means for a person in the data (the figures of
    ``manifest``'s ``verification`` block: pass the re-run's to certify them)."""
    g = manifest.get("guarantee") or {}
    v = manifest.get("verification") or {}
    model, k = g.get("model"), g.get("k")
    kind = manifest.get("data_kind")
    if model == "k-anonymity" and kind == "table":
        text = (
            f"Every person of the input can be matched to at least {k} published rows, and every "
            f"published row to at least {k} people, through {k} disjoint ways of pairing all "
            "people with all rows, one of which is the true one, chosen at random. An attacker "
            "who knows everyone's quasi-identifiers cannot narrow a person down to fewer than "
            f"{k} rows. The verifier checked this from the published cells and the original "
            "quasi-identifiers only: the compatibility graph has a "
            f"{k}-factor ({v.get('k_factor_flow', '?')} of {v.get('k_factor_required', '?')} "
            "disjoint matches found by max-flow)."
        )
        if v.get("partitions"):
            text += f" The release was checked partition by partition ({v['partitions']} parts)."
        if g.get("sensitive"):
            text += (
                " On top of that, the sensitive models listed below hold on every person's "
                "candidate rows (checked from the release)."
            )
            from anonymatch.app.honest import default_model_note

            note = default_model_note(manifest)
            text += f" The {note[0].lower()}{note[1:]}." if note else ""
        return text
    if model == "k-anonymity" and kind == "transactions":
        return (
            f"Every transaction of the input matches at least {k} published records and every "
            f"published record at least {k} transactions, through {k} disjoint pairings one of "
            "which is the true one (nonreciprocal recoding, Xue et al. 2012). The verifier "
            "rebuilt the matches from the published records and the original transactions."
        )
    if model == "k-anonymity" and kind == "relational":
        return (
            f"Every person of the input matches at least {k} published records, and every "
            f"record at least {k} people, through {k} disjoint pairings one of which is the true "
            "one, chosen at random. A person matches a record only if both parts do: each "
            "quasi-identifier lies in the record's cell and their item set agrees with the "
            "record's set part (items, uncertain, max_errors). An attacker who knows a person's "
            "quasi-identifiers and any of their items cannot narrow them down to fewer than "
            f"{k} records. The verifier rebuilt the joint compatibility graph from the published "
            "records and the original people only: it has a "
            f"{k}-factor ({v.get('k_factor_flow', '?')} of {v.get('k_factor_required', '?')} "
            "disjoint matches found by max-flow)."
        )
    if model == "k-anonymity":  # sparse nonsmooth / mondrian
        return (
            f"Every published row is identical to at least {k - 1 if k else '?'} others (classes "
            f"of at least {k} users), and each published entry is held by every user of its "
            "class."
        )
    if model == "adaptive-anonymity":
        levels = g.get("levels") or {}
        return (
            "Every person matches at least their own level of published rows (levels "
            f"{levels.get('min')}…{levels.get('max')}), through suppressed cells (*); the "
            "verifier checked each person's surplus from the published cells "
            f"(smallest surplus {v.get('min_slack')})."
        )
    if model == "(k,l)-anonymity":
        return (
            f"An attacker who knows at most {g.get('known')} attributes of a person finds at "
            f"least {k} rows consistent with them: every combination of at most "
            f"{g.get('known')} published values occurs 0 or ≥ {k} times (global "
            "generalization, Stokes)."
        )
    if model == "k^m-anonymity":
        return (
            f"An attacker who knows at most {g.get('m')} items of a person's transaction finds "
            f"at least {k} published transactions containing them: every itemset of at most "
            f"{g.get('m')} items occurs in 0 or ≥ {k} transactions."
        )
    if model == "smooth-k-anonymity":
        return (
            f"Users are published in classes of at least {k} identical rows; each published "
            "entry is held by at least half of its class (smooth k-anonymity, Esfandiari et "
            "al.)."
        )
    if model == "graph-k-anonymity":
        return (
            f"Every vertex shares its {g.get('neighbourhoods', 'open')} neighbourhood with at "
            f"least {(k or 1) - 1} other vertices, so an attacker who knows a person's "
            f"neighbours cannot tell them apart from {(k or 1) - 1} others."
        )
    if model == "randomized-response":
        return (
            f"Every entry was flipped at random with probability {g.get('flip_probability')}: "
            f"{g.get('dp_level', 'edge')}-level ε-differential privacy with "
            f"ε = {g.get('epsilon')}, by construction (there is nothing to check from data)."
        )
    return f"Privacy model: {model}."


def parameters(manifest: Mapping[str, Any]) -> Section:
    """Command, method, parameters, randomness and timings."""
    section = Section("parameters", "Parameters and timings")
    tool = manifest.get("tool") or {}
    section.facts += [
        ("command", manifest.get("command")),
        ("method", manifest.get("method")),
        ("tool", f"{tool.get('name', 'anonymatch')} {tool.get('version', '')}"),
        ("created", manifest.get("created")),
        ("randomness", _randomness(manifest.get("randomness") or {})),
    ]
    params = manifest.get("parameters") or {}
    rows = [(label_text(k), _value_text(v)) for k, v in params.items()]
    if rows:
        section.tables.append(Table(["parameter", "value"], rows))
    seconds = {
        k: float(v)
        for k, v in (manifest.get("seconds") or {}).items()
        if isinstance(v, int | float)
    }
    if seconds:
        section.tables.append(
            Table(["stage", "seconds"], [(label_text(k), f"{v:.2f}") for k, v in seconds.items()])
        )
        stages = {k: v for k, v in seconds.items() if k not in ("wall", "compute")}
        if len(stages) > 1:  # the total is in the table
            section.figures.append(Figure("Time per stage", plots.timings(stages)))
    return section


def _randomness(block: Mapping[str, Any]) -> str:
    source = block.get("source")
    text = {
        "seed": "a fixed seed (reproducible by anyone who knows it: tests and experiments only)",
        "os-entropy": "OS entropy",
        "none": "none (the method is deterministic)",
    }.get(str(source), str(source))
    if block.get("seed_file"):
        text += "; the seed is kept in a private seed file"
    return text


GENERAL_LIMITS = [
    "Presence: the release contains everyone of the input; it does not hide who is in the data "
    "set (membership disclosure).",
    "Background knowledge beyond the declared attacker: an attacker who knows more than the "
    "model assumes (other attributes, some true matches, the sensitive value itself) may "
    "narrow a person down further.",
    "Several releases of the same people: combining this release with another one (an earlier "
    "version, another tool's, or a release with other parameters) can break the guarantee.",
    "Inference from statistics: patterns that hold in the whole data (e.g. a value common in a "
    "group) are kept on purpose; they are not protected against.",
]


def limits(manifest: Mapping[str, Any], extra: list[str]) -> Section:
    """What the release does not protect against: the kind's own limits first."""
    section = Section("limits", "What this release does not protect against")
    section.bullets += extra + GENERAL_LIMITS
    if (manifest.get("randomness") or {}).get("source") == "seed":
        section.bullets.insert(
            0,
            "This release was made with a fixed --seed: anyone who knows the seed can redo the "
            "random choice of the true assignment. Do not publish a seeded release.",
        )
    return section


def _value_text(value: Any) -> str:
    """A manifest value in words: numbers rounded, lists joined (long ones cut), objects as
    "key value" phrases with the keys in words (:func:`label_text`), a path as its file name,
    a per-column object led by its column ("s: distinct ℓ 2, passed"). O(size of value)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list) and len(value) > 12:
        head = ", ".join(_value_text(x) for x in value[:12])
        return f"[{head}, … ({len(value)} items)]"
    if isinstance(value, list):
        return ", ".join(_value_text(x) for x in value) if value else "—"
    if isinstance(value, Mapping):
        if not value:
            return "—"
        if all(isinstance(v, Mapping) for v in value.values()):  # {column: {...}}
            return "; ".join(f"{k}: {_value_text(v)}" for k, v in value.items())
        column = value.get("column")
        parts = []
        for k, v in value.items():
            if k == "column" or v is None or (isinstance(v, Mapping) and v.get("column") == column):
                continue  # the column leads; a nested model repeats what follows
            if k == "path" and "file" in value:
                continue  # the file's name is shown; the manifest keeps the path
            shown = file_name(v) if k in ("path", "file") else _value_text(v)
            parts.append(f"{label_text(k)} {shown}")
        text = ", ".join(parts) or "—"
        return f"{column}: {text}" if column is not None else text
    if value is None:
        return "—"
    return str(value) if value != "" else '""'  # an empty token (e.g. a missing-value code)


def class_size_risk(
    risk: Section, classes: np.ndarray, k: int | None, one: str, many: str, same: str
) -> None:
    """Add to ``risk`` the class-size facts and histogram of a release whose people fall in
    classes they cannot be told apart in (``classes[i]``: person i's class id, 0-based):
    smallest and mean class size, people in classes smaller than ``k``. ``one``/``many`` name
    a person (``user``/``users``), ``same`` the x axis. O(n log n)."""
    import numpy as np

    size = np.bincount(classes)[classes]
    keys, counts = np.unique(size, return_counts=True)
    risk.facts += [
        (f"{many} per class: min", int(size.min())),
        ("mean", f"{size.mean():.2f}"),
        (f"{many} in classes smaller than k", int((size < (k or 1)).sum())),
    ]
    risk.figures.append(
        Figure(
            f"Class size per {one}",
            plots.count_histogram(
                {int(a): int(b) for a, b in zip(keys, counts, strict=True)}, same, many, k
            ),
        )
    )
