"""ℓ-diversity and t-closeness on Adult (issue 13): information loss, time, what the model buys.

Adult, the 30,162 complete rows, in one process (the Python API; every release goes through
``anonymatch.tables.verify`` with its model, and every ANJANA release through the same verifier).

(i) QIs age, workclass, education-num, marital-status, race, sex, native-country (numeric: age,
    education-num); sensitive ``occupation`` (14 values). Plain k = 5, 10 and (k, ℓ) = (5, 3),
    (10, 4), (10, 6), distinct and entropy ℓ-diversity.
(ii) The 8 QIs of ``make run``; sensitive ``income``. Plain k = 10 and t = 0.15, 0.2, 0.3.
(iii) heart_statlog (QIs age, sex, chest pain, resting blood pressure, cholesterol; sensitive
    ``disease``) at k = 5: plain vs ℓ = 2.

Methods: hungarian (classes by greedy k-member clustering when a model is given), mondrian, and
ANJANA (global recoding with the ARX hierarchies; ``_anjana.py``) when installed. GCP is ours
for every tool. "homogeneous" is the share of people whose candidate rows all show one value.
Writes docs/results.md (section sensitive_adult), benchmarks/results/sensitive_adult.json and
docs/img/sensitive_gcp.png.

Usage: python benchmarks/sensitive_adult.py [--no-anjana]

``--rings`` (issue 26) runs the ring construction instead (``methods.circulant``): hungarian's
default with a model (the cheaper of a sensitive ring and classes, per partition: "auto") and
rings wherever they exist ("rings"), on the same models; it writes the section
sensitive_rings of docs/results.md and benchmarks/results/sensitive_rings.json, beside the
class, Mondrian and ANJANA figures of the last full run (read from sensitive_adult.json, not
re-run). Risk figures there: the largest posterior P(s_i = v | release) of any person under
the mechanism-aware attacker of docs/guarantees/sensitive.md §3/§6, and the share of people
whose neighbours all show one value.

Usage: python benchmarks/sensitive_adult.py --rings [--rewrite]

``--cheap LABEL`` (issue 36, item 4: cheaper ℓ/t with classes) runs hungarian on the five
releases of the goal — plain k = 10 and (10, 4) distinct on occupation (7 QIs), plain k = 10,
(10, 2) distinct and t = 0.2 on income (8 QIs) — each release checked by ``verify`` from the
release and the original alone (the candidate check, no certificate), stores them under LABEL
in benchmarks/results/sensitive_cheap.json and writes the section sensitive_cheap of
docs/results.md from the labels ``before`` and ``after``. Run ``before`` with the library of the
commit before (``PYTHONPATH=<that tree>/src``), ``after`` with this one, on the same machine.

Usage: python benchmarks/sensitive_adult.py --cheap before|after [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import ADULT_NAMES, ROOT, adult_path, dump, machine, update_results

import anonymatch
from anonymatch.tables.models.disclosure import build_models
from anonymatch.tables.models.sensitive import encode_sensitive, grouped_person_stats, person_stats
from anonymatch.tables.verify import attacker_view

QI7 = ["age", "workclass", "education-num", "marital-status", "race", "sex", "native-country"]
QI8 = QI7[:4] + ["occupation"] + QI7[4:]
NUMERIC = ["age", "education-num"]
HEART_NAMES = [
    "age",
    "sex",
    "chest_pain",
    "resting_bp",
    "cholesterol",
    "fasting_blood_sugar",
    "resting_ecg",
    "max_heart_rate",
    "exercise_angina",
    "oldpeak",
    "slope",
    "major_vessels",
    "thal",
    "disease",
]
HEART_QI = ["age", "sex", "chest_pain", "resting_bp", "cholesterol"]
HEART_NUMERIC = ["age", "resting_bp", "cholesterol"]


def load_adult() -> pd.DataFrame:
    frame = pd.read_csv(
        adult_path(), names=ADULT_NAMES.split(","), skipinitialspace=True, na_values="?"
    )
    frame = frame.dropna().reset_index(drop=True)
    return frame.astype({c: str for c in frame.columns if frame[c].dtype == object})


def load_heart() -> pd.DataFrame:
    path = Path(adult_path()).parent.parent / "heart_statlog" / "heart.dat"
    return pd.read_csv(path, sep=r"\s+", header=None, names=HEART_NAMES)


def homogeneous_share(release: pd.DataFrame, data: pd.DataFrame, qi, numeric, column) -> float:
    """Share of people whose candidate rows all show one value of ``column``."""
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.pipeline import prepare

    _, enc, _ = prepare(data, Schema.build(qi, numeric))
    cand = attacker_view(parse_cells(release, enc), enc).candidates()
    assert cand is not None
    sens = encode_sensitive(column, release[column], data[column], False)
    return float(np.mean(grouped_person_stats(cand, sens).distinct == 1))


def class_check(release, data, qi, numeric, column, k, models) -> tuple[bool, float]:
    """For a global-recoding release (rows in input order, classes = identical QI rows whose
    cells do not overlap, so a person's candidates are their class): every row contains its own
    original (``_anjana.class_check``), every class has ≥ k rows and satisfies the models
    (class-based, ``SensitiveTarget.ok``). Returns (passed, share of people in a class with one
    value). Our full verifier needs memory per compatible pair, which coarse releases (classes of
    thousands of rows) make too many for this machine."""
    from _anjana import class_check as truthful

    from anonymatch.tables.pipeline import sensitive_target

    smallest, contains = truthful(release, data, qi, numeric)
    keys = release[qi].astype(str).agg("\x1f".join, axis=1)
    labels = pd.factorize(keys)[0]
    sens = encode_sensitive(column, release[column], data[column], False)
    counts = np.zeros((labels.max() + 1, sens.m), dtype=np.int64)
    np.add.at(counts, (labels, sens.published), 1)
    homogeneous = float(np.mean((counts > 0).sum(1)[labels] == 1))
    ok = True
    if models:
        target = sensitive_target(data, models)
        assert target is not None
        ok = bool(target.ok(counts).all())
    return bool(contains and smallest >= k and ok), homogeneous


def run(
    tool: str, data: pd.DataFrame, qi, numeric, column, k: int, model: dict
) -> dict[str, object]:
    """One release by ``tool`` with ``model`` ({} plain, {"l":…, "diversity":…} or {"t":…}).
    Plain is ``l=1``: since issue 36 a named sensitive column otherwise gets ℓ = 2."""
    given = model or {"l": 1}
    started = time.perf_counter()
    if tool == "anjana":
        from _anjana import anjana_release

        kind = model.get("diversity", "t" if "t" in model else "k")
        value = model.get("l", model.get("t", 0))
        release, _ = anjana_release(data, qi, numeric, column, k, kind, value)
    else:
        release = anonymatch.tables.anonymize(
            data, k=k, qi=qi, numeric=numeric, sensitive=column, method=tool, **given
        ).release
    seconds = time.perf_counter() - started
    models = build_models(
        [column], given.get("l"), given.get("diversity", "distinct"), None, given.get("t")
    )
    loss = anonymatch.tables.evaluate(data, release, qi=qi, numeric=numeric)
    if tool == "anjana":  # global recoding: classes of identical rows, checked class by class
        verified, homogeneous = class_check(release, data, qi, numeric, column, k, models)
    else:
        verified = anonymatch.tables.verify(
            data, release, k=k, qi=qi, numeric=numeric, sensitive=column, **given
        ).passed
        homogeneous = homogeneous_share(release, data, qi, numeric, column)
    return {
        "tool": tool,
        "k": k,
        **{key: value for key, value in model.items()},
        "models": [m.describe() for m in models],
        "gcp": loss.gcp,
        "seconds": seconds,
        "verified": bool(verified),
        "homogeneous": homogeneous,
    }


def rewrite() -> None:
    """Regenerate the results section from benchmarks/results/sensitive_adult.json."""
    import json

    write_results(
        json.loads((ROOT / "benchmarks" / "results" / "sensitive_adult.json").read_text())
    )


RING_CASES = [  # the targets first
    ("occupation", 10, {"l": 4}),
    ("income", 10, {"t": 0.2}),
    ("occupation", 5, {"l": 3}),
    ("occupation", 10, {"l": 6}),
    ("occupation", 5, {"l": 3, "diversity": "entropy"}),
    ("occupation", 10, {"l": 4, "diversity": "entropy"}),
    ("occupation", 10, {"l": 6, "diversity": "entropy"}),
    ("income", 10, {"t": 0.15}),
    ("income", 10, {"t": 0.3}),
]


def ring_risk(result, data, qi, numeric, column) -> tuple[float, float]:
    """(largest posterior, share of people whose neighbours show one value) of a release:
    over the certified graph's neighbourhoods (every draw: the ring windows and classes) for
    a ring release, over the candidates otherwise (a class's members: the class)."""
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.models.certified import parse_certificate, units
    from anonymatch.tables.pipeline import prepare

    release = result.release
    _, enc, _ = prepare(data, Schema.build(qi, numeric))
    cells = parse_cells(release, enc)
    certificate = result.report["guarantee"].get("certificate")
    if certificate is not None:
        k, rings = parse_certificate(certificate, cells.n)
        stats = person_stats(
            units(cells, k, rings), encode_sensitive(column, release[column], data[column], False)
        )
    else:
        cand = attacker_view(cells, enc).candidates()
        assert cand is not None
        stats = grouped_person_stats(
            cand, encode_sensitive(column, release[column], data[column], False)
        )
    return float((stats.top / stats.size).max()), float(np.mean(stats.distinct == 1))


def run_rings(variant: str, data, qi, column: str, k: int, model: dict) -> dict[str, object]:
    """One release of hungarian with ``model`` and ``structure="rings"``: ``auto`` (a ring
    where cheaper than classes; the library's default from issue 26 to issue 36) or ``rings``
    (rings wherever they exist: ``sensitive_build(prefer_rings=True)``)."""
    import functools

    from anonymatch.tables.methods import circulant

    build = circulant.sensitive_build
    if variant == "rings":
        circulant.sensitive_build = functools.partial(build, prefer_rings=True)
    try:
        started = time.perf_counter()
        result = anonymatch.tables.anonymize(
            data, k=k, qi=qi, numeric=NUMERIC, sensitive=column, method="hungarian",
            structure="rings", **model,
        )  # fmt: skip
        seconds = time.perf_counter() - started
    finally:
        circulant.sensitive_build = build
    verified = anonymatch.tables.verify(
        data, result, k=k, qi=qi, numeric=NUMERIC, sensitive=column, **model
    ).passed
    posterior, homogeneous = ring_risk(result, data, qi, NUMERIC, column)
    return {
        "part": column,
        "variant": variant,
        "k": k,
        **model,
        "gcp": float(result.report["loss"]["gcp"]),
        "seconds": seconds,
        "verified": bool(verified),
        "ring_records": int(result.report["verification"].get("ring_records", 0)),
        "records": len(data),
        "posterior": posterior,
        "homogeneous": homogeneous,
    }


def rings_main(rewrite: bool) -> None:
    import json

    path = ROOT / "benchmarks" / "results" / "sensitive_rings.json"
    if not rewrite:
        adult = load_adult()
        anonymatch.tables.anonymize(
            adult.head(300), k=5, qi=QI7, numeric=NUMERIC, sensitive="occupation", l=2
        )  # warm the numba caches
        rows = []
        for column, k, model in RING_CASES:
            qi = QI7 if column == "occupation" else QI8
            for variant in ("auto", "rings"):
                rows.append(run_rings(variant, adult, qi, column, k, model))
                print(rows[-1], flush=True)
                dump("sensitive_rings", rows)  # kept as it goes
    rows = json.loads(path.read_text())
    old = json.loads((ROOT / "benchmarks" / "results" / "sensitive_adult.json").read_text())
    write_rings(rows, old)


def _order(case: tuple) -> tuple:
    _, k, model = case
    return (model.get("diversity", "distinct"), k, model.get("l", 0), model.get("t", 0))


def write_rings(rows: list[dict], old: list[dict]) -> None:
    part_of = {"occupation": "occupation", "income": "income"}
    before = {(r["part"], r["tool"], _label(r)): r for r in old}
    lines = [
        "Command: `python benchmarks/sensitive_adult.py --rings` — machine: " + machine() + ".",
        "",
        "hungarian with a model, two ways: **auto** (`--structure rings`, the default from issue",
        "26 to 36: per partition the cheaper of a sensitive ring and classes; since issue 36 the",
        "default is classes) and **rings** (a ring wherever one exists,",
        "classes elsewhere), beside the class construction of the previous section (**classes**:",
        "hungarian's release before issue 26), its plain k release, Mondrian and ANJANA (their",
        "figures copied from that section's run, not re-run). Ring records: the share of people in",
        "rings. Largest posterior: max over people of P(s_i = v | release) for the attacker who",
        "knows the graph (§3/§6 of docs/guarantees/sensitive.md; a class member's is their",
        "class's distribution); homog.: people whose neighbours all show one value. Every",
        "release passed `verify` with its model (with its certificate) unless marked ✗.",
        "",
        "| sensitive | model | plain k GCP | classes GCP | classes s | auto GCP | auto s "
        "| auto ring rec. | rings GCP | rings s | rings ring rec. "
        "| auto/rings largest posterior | auto/rings homog. | mondrian GCP | anjana GCP |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for column, k, model in sorted(RING_CASES, key=lambda c: (c[0] == "income", _order(c))):
        label = _label({"k": k, **model})
        part = part_of[column]
        get = {r["variant"]: r for r in rows if r["part"] == column and _label(r) == label}
        auto, ring = get.get("auto"), get.get("rings")
        plain = before.get((part, "hungarian", f"k = {k} (plain)"))
        cls = before.get((part, "hungarian", label))
        mond = before.get((part, "mondrian", label))
        anj = before.get((part, "anjana", label))

        def pct(r, key="gcp"):
            if r is None:
                return "–"
            return f"{100 * r[key]:.2f}%" + ("" if r.get("verified", True) else " ✗")

        def sec(r):
            return "–" if r is None else f"{r['seconds']:.1f}"

        def share(r):
            return "–" if r is None else f"{100 * r['ring_records'] / r['records']:.0f}%"

        lines.append(
            f"| {column} | {label} | {pct(plain)} | {pct(cls)} | {sec(cls)} | {pct(auto)} | "
            f"{sec(auto)} | {share(auto)} | {pct(ring)} | {sec(ring)} | {share(ring)} | "
            + (
                f"{auto['posterior']:.2f} / {ring['posterior']:.2f} | "
                f"{100 * auto['homogeneous']:.1f}% / {100 * ring['homogeneous']:.1f}% | "
                if auto and ring
                else "– | – | "
            )
            + f"{pct(mond)} | {pct(anj)} |"
        )
    hk = before.get(("occupation", "hungarian", "k = 10 (plain)"))
    ml = before.get(("occupation", "mondrian", "(10, 4) distinct"))
    a = next((r for r in rows if r["variant"] == "auto" and _label(r) == "(10, 4) distinct"), None)
    b = next((r for r in rows if r["variant"] == "rings" and _label(r) == "(10, 4) distinct"), None)
    ik = before.get(("income", "hungarian", "k = 10 (plain)"))
    it = next(
        (r for r in rows if r["variant"] == "auto" and r["part"] == "income" and r.get("t") == 0.2),
        None,
    )
    if hk and ml and a and b and ik and it:
        lines += [
            "",
            f"Targets (issue 26): (10, 4) distinct ≤ 1.15× plain k = 10 GCP — auto "
            f"{a['gcp'] / hk['gcp']:.2f}×, rings {b['gcp'] / hk['gcp']:.2f}× (classes 1.47×); "
            f"≤ 0.6× Mondrian — auto {a['gcp'] / ml['gcp']:.2f}×, rings "
            f"{b['gcp'] / ml['gcp']:.2f}×; t = 0.2 on income ≤ 2× plain — auto "
            f"{it['gcp'] / ik['gcp']:.2f}× (classes 2.75×).",
        ]
    update_results("sensitive_rings", "\n".join(lines))


CHEAP_CASES = [  # (part, QIs, column, k, model); l = 1: the column named, unprotected (plain)
    ("occupation", QI7, "occupation", 10, {"l": 1}),
    ("occupation", QI7, "occupation", 10, {"l": 4}),
    ("income", QI8, "income", 10, {"l": 1}),
    ("income", QI8, "income", 10, {"l": 2}),
    ("income", QI8, "income", 10, {"t": 0.2}),
]


def cheap_main(label: str | None, repeat: int) -> None:
    """Issue 36, item 4: the goal's releases under ``label`` (None: only rewrite the section)."""
    import json

    path = ROOT / "benchmarks" / "results" / "sensitive_cheap.json"
    store = json.loads(path.read_text()) if path.exists() else {}
    if label is not None:
        adult = load_adult()
        anonymatch.tables.anonymize(
            adult.head(300), k=5, qi=QI7, numeric=NUMERIC, sensitive="occupation", l=2
        )  # warm the numba cache
        rows = []
        for part, qi, column, k, model in CHEAP_CASES:
            runs = [run("hungarian", adult, qi, NUMERIC, column, k, model) for _ in range(repeat)]
            row = {"part": part, **runs[0]}
            row["seconds"] = float(np.median([r["seconds"] for r in runs]))
            row["gcp_runs"] = [r["gcp"] for r in runs]
            row["verified"] = all(r["verified"] for r in runs)
            rows.append(row)
            print(label, rows[-1])
        store[label] = {"machine": machine(), "rows": rows}
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(store, indent=2) + "\n")
    write_cheap(store)


def write_cheap(store: dict) -> None:
    """The section sensitive_cheap of docs/results.md from the stored labels."""
    before = {(r["part"], _label(r)): r for r in store.get("before", {}).get("rows", [])}
    after = {(r["part"], _label(r)): r for r in store.get("after", {}).get("rows", [])}
    lines = [
        "Command: `python benchmarks/sensitive_adult.py --cheap before` (with the library "
        "before this change on `PYTHONPATH`: main at 3b6049f), then `--cheap after` (that main "
        "with this change), 3 runs each; same session, same machine: "
        + store.get("after", store.get("before", {})).get("machine", "?")
        + " (shared with other jobs: the seconds are noisy — the plain releases, the same code "
        "before and after, differ by up to 1.6×).",
        "",
        "hungarian, classes (the default structure). GCP of the release (every run drew the",
        "same classes; only the draw is random), seconds of `anonymize` (median), and whether",
        "`verify` passed from the release and the original alone (the candidate check, no",
        "certificate). Ratio: GCP / the plain k = 10 GCP of the same QIs.",
        "",
        "| QIs, sensitive | model | GCP before | GCP after | ratio to plain before → after "
        "| goal | s before | s after | verify (no manifest) |",
        "|---|---|---:|---:|---|---|---:|---:|---|",
    ]
    goals = {"(10, 4) distinct": "≤ 1.3×", "(10, 2) distinct": "≤ 2×"}
    for part, qis in [("occupation", "7 QIs, occupation"), ("income", "8 QIs, income")]:
        plain_b = before.get((part, "k = 10 (plain)"))
        plain_a = after.get((part, "k = 10 (plain)"))
        for key in [k for k in after if k[0] == part] or [k for k in before if k[0] == part]:
            b, a = before.get(key), after.get(key)

            def pct(r: dict | None) -> str:
                return "–" if r is None else f"{100 * r['gcp']:.2f}%"

            def ratio(r: dict | None, plain: dict | None) -> str:
                return "–" if r is None or plain is None else f"{r['gcp'] / plain['gcp']:.2f}×"

            def sec(r: dict | None) -> str:
                return "–" if r is None else f"{r['seconds']:.1f}"

            verdict = " / ".join(
                ("PASS" if r["verified"] else "FAIL") for r in (b, a) if r is not None
            )
            shown = "k = 10 (plain, `--l 1`)" if key[1] == "k = 10 (plain)" else key[1]
            lines.append(
                f"| {qis} | {shown} | {pct(b)} | {pct(a)} | "
                f"{ratio(b, plain_b)} → {ratio(a, plain_a)} | {goals.get(key[1], '')} | "
                f"{sec(b)} | {sec(a)} | {verdict} |"
            )
    lines += [
        "",
        "Reading. Where the GCP went before (profile of (10, 2) on income): the builder cuts the",
        "QI order (lowest cardinality first: sex, race, marital status, …) into partitions of 300",
        "records and clusters each greedily. A partition can hold only as many ℓ = 2 classes as",
        "it has `>50K` records, which are rare in some (1 person in 2,000 aged ≤ 20), and the",
        "greedy spent several on one class; the rest of such a partition ended as leftovers",
        "joined to a few classes: 20 classes of more than 100 records (4,257 people, the largest",
        "592) gave 2.86 of the 8.49 points. The three changes (`methods.diverse`), with the",
        "(10, 2) GCP after each, measured on the classes alone:",
        "",
        "1. a partition short of the values its classes need takes the nearest records of them",
        "   from its neighbours (`_rebalance`, distinct ℓ only): 8.49 % → 6.91 %;",
        "2. a class does not spend a rare value it does not need while the classes still to",
        "   come lack it (`_unhelpful`): → 6.30 %, largest class 19 records;",
        "3. members are swapped between the classes of a partition, then of each pair of",
        "   neighbouring partitions, wherever that lowers the GCP and both classes still satisfy",
        "   the model (`_improve`, every model): → 5.46 %; (10, 4) on occupation 2.90 % → 2.54 %.",
        "   The class structure itself got cheaper: with a model that binds nothing (t = 1) the",
        "   classes cost 2.21 % on the occupation QIs and 3.77 % on the income QIs (2.44 % and",
        "   4.16 % before), against 1.97 % and 3.42 % for the freeform plain releases.",
        "",
        "Both goals are met: (10, 2) on income at 1.60× plain (goal ≤ 2×), (10, 4) on",
        "occupation at 1.29× (goal ≤ 1.3×, a thin margin). Larger partitions would buy more",
        "(1,000 records: 2.52 % on occupation before the swaps between neighbours) at several",
        "times the time; the default partition size is unchanged. t = 0.2 gets only the swaps",
        "(rebalancing is for distinct ℓ): 9.40 % → 8.29 %, at more time — its partitions,",
        "merged until they satisfy t, reach 7,000 records, and the search pairs each class with",
        "its next 60 classes only. With `--structure rings`, (10, 4) on occupation now publishes",
        "no ring (5 rings, 1,507 people, before): the classes are cheaper, and a partition that",
        "exchanged records with a neighbour is no longer a ring candidate. The known-person",
        "figures (`benchmarks/known_person.py`, run before and after) did not get worse: on the",
        "default ℓ = 2 release of income one known person makes at most 14 others' income",
        "certain (70 before), 0.20 on average (0.33); on (10, 4) occupation none, as before,",
        "with the largest posterior 0.778 (0.857).",
    ]
    update_results("sensitive_cheap", "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-anjana", action="store_true")
    parser.add_argument("--rewrite", action="store_true", help="only rewrite docs/results.md")
    parser.add_argument("--rings", action="store_true", help="the ring construction (issue 26)")
    parser.add_argument("--cheap", metavar="LABEL", help="issue 36 item 4: before or after")
    parser.add_argument("--repeat", type=int, default=1, help="runs per release (--cheap)")
    args = parser.parse_args()
    if args.cheap:
        cheap_main(args.cheap, args.repeat)
        return
    if args.rings:
        rings_main(args.rewrite)
        return
    if args.rewrite:
        rewrite()
        return
    tools = ["hungarian", "mondrian"]
    if not args.no_anjana:
        try:
            import _anjana  # noqa: F401

            tools.append("anjana")
        except ImportError:
            print("ANJANA adapter not available; skipping it")
    adult = load_adult()
    anonymatch.tables.anonymize(
        adult.head(300), k=5, qi=QI7, numeric=NUMERIC, sensitive="occupation", l=2
    )  # warm the numba cache
    rows = []
    for tool in tools:
        for k, model in [
            (5, {}),
            (10, {}),
            (5, {"l": 3}),
            (10, {"l": 4}),
            (10, {"l": 6}),
            (5, {"l": 3, "diversity": "entropy"}),
            (10, {"l": 4, "diversity": "entropy"}),
            (10, {"l": 6, "diversity": "entropy"}),
        ]:
            row = run(tool, adult, QI7, NUMERIC, "occupation", k, model)
            rows.append({"part": "occupation", **row})
            print(rows[-1])
        for model in [{}, {"t": 0.15}, {"t": 0.2}, {"t": 0.3}]:
            row = run(tool, adult, QI8, NUMERIC, "income", 10, model)
            rows.append({"part": "income", **row})
            print(rows[-1])
    heart = load_heart()
    for model in [{}, {"l": 2}]:
        row = run("hungarian", heart, HEART_QI, HEART_NUMERIC, "disease", 5, model)
        rows.append({"part": "heart", **row, "people": len(heart)})
        print(rows[-1])
    dump("sensitive_adult", rows)
    write_results(rows)


def _label(row: dict) -> str:
    if row.get("l", 1) != 1:
        return f"({row['k']}, {row['l']}) {row.get('diversity', 'distinct')}"
    if "t" in row:
        return f"k = {row['k']}, t = {row['t']}"
    return f"k = {row['k']} (plain)"


def write_results(rows: list[dict]) -> None:
    by = {(r["part"], r["tool"], _label(r)): r for r in rows}
    tools = sorted(
        {r["tool"] for r in rows if r["part"] != "heart"},
        key=["hungarian", "mondrian", "anjana"].index,
    )
    lines = [
        "Command: `python benchmarks/sensitive_adult.py` — machine: " + machine() + ".",
        "",
        "GCP (ours, for every tool), seconds, and the share of people whose candidate rows all",
        "show one sensitive value (homogeneous). Every release passed `verify` with its model",
        "unless marked ✗.",
        "",
    ]
    for part, title in [
        ("occupation", "(i) 7 QIs, sensitive occupation"),
        ("income", "(ii) 8 QIs, sensitive income"),
    ]:
        labels = list(dict.fromkeys(_label(r) for r in rows if r["part"] == part))
        lines += [
            f"**{title}**",
            "",
            "| model | " + " | ".join(f"{t} GCP | {t} s | {t} homog." for t in tools) + " |",
            "|---|" + "---:|" * (3 * len(tools)),
        ]
        for label in labels:
            cells = []
            for tool in tools:
                r = by.get((part, tool, label))
                if r is None:
                    cells += ["–", "–", "–"]
                    continue
                mark = "" if r["verified"] else " ✗"
                cells += [
                    f"{100 * r['gcp']:.2f}%{mark}",
                    f"{r['seconds']:.1f}",
                    f"{100 * r['homogeneous']:.1f}%",
                ]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    h = {(r["part"], _label(r)): r for r in rows if r["part"] == "heart"}
    plain, div = h.get(("heart", "k = 5 (plain)")), h.get(("heart", "(5, 2) distinct"))
    if plain and div:
        lines += [
            f"**(iii) heart_statlog, k = 5, sensitive disease**: plain hungarian leaves "
            f"{round(plain['homogeneous'] * plain['people'])} of {plain['people']} patients "
            f"with a homogeneous candidate set (GCP {100 * plain['gcp']:.2f}%); with ℓ = 2, "
            f"{round(div['homogeneous'] * div['people'])} (GCP {100 * div['gcp']:.2f}%).",
            "",
        ]
    hk = by.get(("occupation", "hungarian", "k = 10 (plain)"))
    hl = by.get(("occupation", "hungarian", "(10, 4) distinct"))
    ml = by.get(("occupation", "mondrian", "(10, 4) distinct"))
    if hk and hl and ml:
        lines += [
            f"Targets at (10, 4) distinct: hungarian GCP / its plain k = 10 GCP = "
            f"{hl['gcp'] / hk['gcp']:.2f} (target ≤ 1.3); hungarian / mondrian = "
            f"{hl['gcp'] / ml['gcp']:.2f} (target ≤ 0.6); time / plain k = 10 time = "
            f"{hl['seconds'] / hk['seconds']:.2f} (target ≤ 2).",
            "",
        ]
    lines += [
        "Reading. With a model every method publishes classes (docs/guarantees/sensitive.md §3",
        "explains why a freeform graph cannot keep shown values diverse for every draw), so the",
        "ℓ-diverse hungarian release pays the class structure, not only the model: with a",
        "near-empty model (ℓ = 2 distinct on occupation, run separately) its classes cost",
        "2.53 % GCP against 1.97 % for the freeform k = 10 release. That is why the (10, 4)",
        "targets of 1.3× its plain GCP and 0.6× Mondrian's are not met; the clustering beats",
        "Mondrian on every ℓ model and by 2.3–4.6× on t-closeness, where Mondrian's cuts stall.",
        "ANJANA (global recoding, greedy walk up ARX's hierarchies, no suppression) generalizes",
        "age, workclass, race and native-country to `*` already for k = 5, so its ℓ runs equal",
        "its k runs (every class already shows 13 occupations) and its GCP is 65–88 %. Its",
        "releases are checked class by class (identical published rows, non-overlapping cells:",
        "a person's candidates are their class) because our verifier needs memory per",
        "compatible pair and its classes hold thousands of rows. t = 0.3 on income still",
        "leaves classes of one value: a class of only `<=50K` is at distance 0.25 from the",
        "table's 75/25 split.",
        "",
        "![GCP by model](img/sensitive_gcp.png)",
    ]
    update_results("sensitive_adult", "\n".join(lines))
    plot(rows, tools)


def plot(rows: list[dict], tools: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, part in zip(axes, ["occupation", "income"], strict=True):
        labels = list(dict.fromkeys(_label(r) for r in rows if r["part"] == part))
        width = 0.8 / len(tools)
        for t, tool in enumerate(tools):
            values = [
                next(
                    (
                        100 * r["gcp"]
                        for r in rows
                        if r["part"] == part and r["tool"] == tool and _label(r) == label
                    ),
                    np.nan,
                )
                for label in labels
            ]
            ax.bar(np.arange(len(labels)) + t * width, values, width, label=tool)
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=30, ha="right")
        ax.set_ylabel("GCP (%)")
        ax.set_title(f"Adult, sensitive {part}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "img" / "sensitive_gcp.png", dpi=110)


if __name__ == "__main__":
    main()
