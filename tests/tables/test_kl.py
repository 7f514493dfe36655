"""(k,ℓ)-anonymity and k^m-anonymity: the slides' tables, brute force, anonymizers, CLI."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from itertools import combinations
from pathlib import Path

import click
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.cli import cli, load_all_commands, main
from anonymatch.cli import tables as cli_tables
from anonymatch.core.counting import check_km
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.sets.km import anonymize_km, read_transactions, verify_item_generalization
from anonymatch.sets.methods.km import km_anonymize, transactions_matrix
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.models import ALL_CRITERIA, KL_CRITERIA
from anonymatch.tables.models.kl import (
    KNOWN,
    KLAnonymity,
    anonymize_kl,
    check_kl,
    verify_generalization,
)
from tests.factories import random_frame
from tests.tables.kl_examples import SLIDES_TABLE_1, SLIDES_TABLE_2


def frame_of(table: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({chr(ord("A") + j): table[:, j].astype(str) for j in range(table.shape[1])})


def brute_minimal(table: np.ndarray, k: int, level: int) -> set[tuple]:
    """Minimal rare combinations by enumeration of every subset and value combination."""
    n, d = table.shape
    rare: set[tuple] = set()
    for s in range(1, level + 1):
        for subset in combinations(range(d), s):
            counts = Counter(map(tuple, table[:, subset].tolist()))
            for values, c in counts.items():
                if c >= k:
                    continue
                combo = tuple(zip(subset, values, strict=True))
                if not any(
                    tuple(x for x in combo if x[0] in sub) in rare
                    for t in range(1, s)
                    for sub in combinations(subset, t)
                ):
                    rare.add(combo)
    return rare


def brute_kl(table: np.ndarray, k: int, level: int) -> bool:
    d = table.shape[1]
    return all(
        min(Counter(map(tuple, table[:, subset].tolist())).values()) >= k
        for s in range(1, level + 1)
        for subset in combinations(range(d), s)
    )


QI16 = [chr(ord("A") + j) for j in range(16)]


def test_slides_first_table_is_2_anonymous() -> None:
    frame = frame_of(SLIDES_TABLE_1)
    # k-anonymity w.r.t. all 16 attributes = the full record repeated ≥ 2 times
    assert min(Counter(map(tuple, SLIDES_TABLE_1.tolist())).values()) == 2
    report = check_kl(frame, 2, 16, QI16)
    assert report.passed and report.max_level == 16
    assert not check_kl(frame, 3, 1, QI16).passed


def test_slides_second_table() -> None:
    frame = frame_of(SLIDES_TABLE_2)
    assert len(set(map(tuple, SLIDES_TABLE_2.tolist()))) == 16  # not 2-anonymous
    two = check_kl(frame, 2, 3, QI16)
    assert not two.passed and two.max_level == 2  # (2,2) but not (2,3)
    assert check_kl(frame, 2, 2, QI16).passed
    assert check_kl(frame, 3, 1, QI16).passed
    # brute force agrees
    assert brute_kl(SLIDES_TABLE_2, 2, 2) and not brute_kl(SLIDES_TABLE_2, 2, 3)
    assert brute_kl(SLIDES_TABLE_2, 3, 1) and not brute_kl(SLIDES_TABLE_2, 2, 16)
    # every reported violation is a rare combination of 3 attributes, worst first
    assert all(len(v.attributes) == 3 and v.count == 1 for v in two.violations)
    assert two.n_violations == len(brute_minimal(SLIDES_TABLE_2, 2, 3))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 25),
    d=st.integers(1, 5),
    card=st.integers(1, 4),
    k=st.integers(1, 4),
    level=st.integers(1, 3),
)
def test_checker_matches_brute_force(
    seed: int, n: int, d: int, card: int, k: int, level: int
) -> None:
    level = min(level, d)
    table = np.random.default_rng(seed).integers(0, card, size=(n, d))
    qi = [chr(ord("A") + j) for j in range(d)]
    report = check_kl(frame_of(table), k, level, qi, max_report=10_000)
    assert report.passed == brute_kl(table, k, level)
    expected = brute_minimal(table, k, level)
    got = {
        tuple((qi.index(a), int(v)) for a, v in zip(x.attributes, x.values, strict=True))
        for x in report.violations
    }
    assert got == expected
    for s in range(1, level + 1):
        assert (report.max_level >= s) == brute_kl(table, k, s)


def test_generalized_cells_count_as_their_value() -> None:
    frame = pd.DataFrame(
        {
            "hair": ["brown|blond", "blond|brown", "red", "red", "brown|blond"],
            "age": ["30..39", "30..39", "40", "40..40", "30..39"],
        }
    )
    report = check_kl(frame, 2, 2, ["hair", "age"], numeric=["age"])
    assert report.passed  # 3 × (brown|blond, 30..39) and 2 × (red, 40)
    assert not check_kl(frame, 3, 2, ["hair", "age"], numeric=["age"]).passed


def test_bad_level_and_k() -> None:
    frame = frame_of(SLIDES_TABLE_1)
    for level in (0, 17):
        with pytest.raises(InputError, match="ℓ"):
            check_kl(frame, 2, level, QI16)
    with pytest.raises(InputError, match="k must be"):
        check_kl(frame, 0, 1, QI16)
    with pytest.raises(InputError, match="ℓ = 3 exceeds"):
        anonymize_kl(frame, 2, 3, ["A", "B"])
    with pytest.raises(InfeasibleError):
        anonymize_kl(frame, 17, 1, ["A", "B"])


def mixed_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(str),
            "hours": rng.integers(1, 60, n).astype(str),
            "hair": rng.choice(["brown", "blond", "red", "black", "grey"], n),
            "sport": rng.choice(["judo", "tennis", "golf", "none", "chess", "swim"], n),
            "married": rng.choice(["yes", "no"], n),
            "city": [f"c{x}" for x in rng.integers(0, 12, n)],
            "disease": rng.choice(["flu", "cold", "none"], n),
        }
    )


KL_QI = ["age", "hours", "hair", "sport", "married", "city"]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 1000), k=st.integers(2, 5), level=st.integers(1, 3))
def test_anonymizer_output_passes_checker(seed: int, k: int, level: int) -> None:
    data = mixed_table(60, seed)
    release = anonymize_kl(
        data, k, level, KL_QI, numeric=["age", "hours"], sensitive=["disease"], seed=seed
    )
    table = release.table
    assert check_kl(table, k, level, KL_QI, numeric=["age", "hours"]).passed
    ok, how = verify_generalization(parse_cells(table, release.qi), release.qi)
    assert ok and "global recoding" in how
    assert release.report["verification"]["passed"]  # type: ignore[index]
    # the sensitive column travels with its record: same multiset of (age cell ∋ age, disease)
    assert Counter(table["disease"]) == Counter(data["disease"])
    # (k, ℓ) needs less generalization than (k, ℓ+1): GCP is monotone on this instance family
    assert 0.0 <= release.report["loss"]["gcp"] <= 1.0  # type: ignore[index]


def test_loss_grows_with_level_and_tampering_is_detected() -> None:
    data = mixed_table(200, 7)
    gcps = []
    for level in (1, 2, 3):
        rel = anonymize_kl(data, 4, level, KL_QI, numeric=["age", "hours"], seed=1)
        gcps.append(rel.report["loss"]["gcp"])  # type: ignore[index]
    assert gcps[0] < gcps[2]
    table = rel.table.copy()
    # tampering 1: a published row that is no longer the generalization of its record
    bad = table.copy()
    cell = bad.loc[0, "married"]
    bad.loc[0, "married"] = "no" if cell == "yes" else "yes"
    ok, _ = verify_generalization(parse_cells(bad, rel.qi), rel.qi)
    assert not ok
    # tampering 2: un-generalize one cell -> a rare value appears
    bad = table.copy()
    j = int(np.flatnonzero(bad["hair"].str.contains("|", regex=False))[0])
    bad.loc[j, "hair"] = bad.loc[j, "hair"].split("|")[0]
    assert not check_kl(bad, 4, 3, KL_QI, numeric=["age", "hours"]).passed


def test_slides_second_table_anonymized_to_2_3() -> None:
    frame = frame_of(SLIDES_TABLE_2)
    release = anonymize_kl(frame, 2, 3, QI16, seed=0)
    assert check_kl(release.table, 2, 3, QI16).passed


# ----------------------------------------------------------------------------- transactions


def brute_km(rows: list[set[int]], k: int, m: int) -> bool:
    counts: Counter[tuple[int, ...]] = Counter()
    for t in rows:
        for s in range(1, m + 1):
            counts.update(combinations(sorted(t), s))
    return all(c >= k for c in counts.values())


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 30),
    items=st.integers(1, 8),
    k=st.integers(1, 4),
    m=st.integers(1, 3),
)
def test_km_checker_matches_brute_force(seed: int, n: int, items: int, k: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [set(np.flatnonzero(rng.random(items) < 0.4).tolist()) for _ in range(n)]
    matrix, labels = transactions_matrix([[str(x) for x in sorted(r)] for r in rows])
    report = check_km(matrix, labels, k, m)
    assert report.passed == brute_km(rows, k, m)
    for s in range(1, m + 1):
        assert (report.max_level >= s) == brute_km(rows, k, s)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 1000), k=st.integers(2, 4), m=st.integers(1, 3))
def test_km_anonymizer_output_passes(seed: int, k: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [
        [str(x) for x in np.flatnonzero(rng.random(10) < rng.uniform(0.1, 0.5)).tolist()]
        for _ in range(40)
    ]
    matrix, labels = transactions_matrix(rows)
    release = anonymize_km(matrix, labels, k, m, seed=seed)
    pub, pub_labels = transactions_matrix(release.transactions)
    assert check_km(pub, pub_labels, k, m).passed
    assert verify_item_generalization(matrix, labels, release.transactions)[0]
    # tampering: drop one generalized item from a transaction
    bad = [list(t) for t in release.transactions]
    j = next(i for i, t in enumerate(bad) if t)
    bad[j] = bad[j][1:]
    assert not verify_item_generalization(matrix, labels, bad)[0]


def test_km_infeasible() -> None:
    matrix, _ = transactions_matrix([["1"], [], []])
    with pytest.raises(InfeasibleError):
        km_anonymize(matrix, 2, 1)


# ----------------------------------------------------------------------------- CLI


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_kl_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "people.csv"
    mixed_table(80, 3).to_csv(src, index=False)
    qi = ",".join(KL_QI)
    code, out, _ = run(["check-kl", str(src), "--k", "3", "--known", "2", "--qi", qi], capsys)
    assert code == 4 and out.startswith("FAIL")
    rel, rep = tmp_path / "rel.csv", tmp_path / "rel.json"
    args = ["anonymize-kl", str(src), "-o", str(rel), "--k", "3", "--known", "2", "--qi", qi]
    args += ["--numeric", "age,hours", "--sensitive", "disease", "--seed", "2"]
    code, out, err = run([*args, "--report", str(rep), "-q"], capsys)
    assert code == 0, err
    manifest = json.loads(rep.read_text())
    assert manifest["verification"]["passed"] and manifest["guarantee"]["known"] == 2
    check = ["check-kl", str(rel), "--k", "3", "--known", "2", "--qi", qi, "--numeric", "age,hours"]
    code, out, _ = run(check, capsys)
    assert code == 0 and out.startswith("PASS")
    code, out, _ = run([*check, "--json"], capsys)
    assert code == 0 and json.loads(out)["max_level"] == 2
    # the release also parses with the core's verifier as a 1-anonymous generalization
    code, out, _ = run(
        ["verify", str(src), str(rel), "--k", "1", "--qi", qi, "--numeric", "age,hours"], capsys
    )
    assert code == 0, out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--known", "0"], "--known must be an integer of at least 1"),
        (["--known", "7"], "exceeds the number of attributes"),
        (["--known", "1", "--k", "0"], "--k must be an integer of at least 1"),
        ([], "missing --known"),  # the criterion's two parameters are both needed
        (["--known", "2", "--k", "-"], "missing --k"),
    ],
)
def test_cli_kl_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    src = tmp_path / "people.csv"
    mixed_table(20, 1).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    base = ["--qi", ",".join(KL_QI)]
    if "--k" not in extra:
        base += ["--k", "2"]
    extra = extra[:-2] if extra[-2:] == ["--k", "-"] else extra  # no -k at all
    code, _, err = run(["anonymize-kl", str(src), "-o", str(out), *base, *extra], capsys)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()
    code, _, err = run(["check-kl", str(src), *base, *extra], capsys)
    assert code == 2 and message in err


def test_cli_km_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(4)
    dat = tmp_path / "tx.dat"
    lines = [
        " ".join(str(x) for x in np.flatnonzero(rng.random(12) < 0.3)) + " " for _ in range(50)
    ]
    dat.write_text("\n".join(lines) + "\n")
    code, out, _ = run(["check-km", str(dat), "--k", "4", "--m", "2"], capsys)
    assert code == 4 and out.startswith("FAIL")
    rel = tmp_path / "rel.jsonl"
    code, out, err = run(
        ["anonymize-km", str(dat), "-o", str(rel), "--k", "4", "--m", "2", "--seed", "0", "-q"],
        capsys,
    )
    assert code == 0, err
    code, out, _ = run(["check-km", str(rel), "--k", "4", "--m", "2"], capsys)
    assert code == 0 and out.startswith("PASS")
    matrix, labels = read_transactions(str(rel))
    assert matrix.shape[0] == 50
    code, _, err = run(["check-km", str(dat), "--k", "4", "--m", "0"], capsys)
    assert code == 2 and "m must be" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"nope": 1}\n')
    code, _, err = run(["check-km", str(bad), "--k", "2", "--m", "1"], capsys)
    assert code == 2 and "items" in err


# ----------------------------------------------------------------------------- the criterion


@given(k=st.integers(1, 500), known=st.integers(1, 40))
def test_the_kl_claim_reads_back(k: int, known: int) -> None:
    """describe → claimed_in → build gives the same criterion; no other model claims it."""
    criterion = KLAnonymity(k, known)
    guarantee = criterion.describe()
    assert guarantee == {"model": "(k,l)-anonymity", "k": k, "known": known}
    assert KLAnonymity.build(KL_CRITERIA.claims(guarantee)) == criterion
    assert ALL_CRITERIA.claims(guarantee)["known"] == known
    assert KLAnonymity.claimed_in({"model": "k-anonymity", "k": k, "known": known}, {}) == {}


def _options(name: str) -> dict[str, click.Option]:
    load_all_commands()
    return {p.name: p for p in cli.commands[name].params if isinstance(p, click.Option) and p.name}


@pytest.mark.parametrize("command", ["anonymize-kl", "check-kl"])
def test_kl_flags_derive_from_the_criterion(command: str) -> None:
    options = _options(command)
    for p in KL_CRITERIA.parameters():
        option = options[p.name]
        assert p.flag in option.opts and option.help == p.help and option.metavar == p.metavar
        assert (p.short in option.opts) if p.short else option.opts == [p.flag]
    assert not hasattr(cli_tables, "known_option")
    for other in ("anonymize", "verify"):  # (k,ℓ) stays off them (KLAnonymity's docstring)
        assert "known" not in _options(other)
    assert _options("attack")["true_matches"].opts == ["--known"]  # another parameter


def test_the_job_files_known_derives_from_the_criterion() -> None:
    from anonymatch.app.jobfile import PrivacyModel, parse_job

    assert PrivacyModel.model_fields["known"].description == KNOWN.help
    text = '[input]\npath = "x.csv"\n[columns]\na = { role = "qi" }\n[model]\nk = 2\n'
    assert parse_job(tomllib.loads(text + "known = 2\n")).model.known == 2
    with pytest.raises(InputError, match="model.known"):
        parse_job(tomllib.loads(text + "known = 0\n"))


KL_JOB = """\
[input]
path = "people.csv"

[columns]
n0 = { role = "qi", type = "numeric" }
n1 = { role = "qi", type = "numeric" }
c0 = { role = "qi" }
c1 = { role = "qi" }
pid = { role = "sensitive" }

[model]
k = 3
l = 1
known = 2

[output]
path = "release.csv"
"""


def test_job_file_known_is_kl_and_never_attacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[model] known`` is (k,ℓ)'s ℓ for anonymize-kl and check-kl; anonymize refuses it (it
    would publish another model); attack's --known (true matches) never takes it."""
    frame = random_frame(60, 3).drop(columns="s")
    frame["pid"] = [f"p{i}" for i in range(len(frame))]
    frame.to_csv(tmp_path / "people.csv", index=False)
    job = tmp_path / "job.toml"
    job.write_text(KL_JOB)
    kl, manifest = tmp_path / "kl.csv", tmp_path / "kl.json"
    code, _, err = run(["anonymize-kl", "--config", str(job), "-o", str(kl), "--report",
                        str(manifest), "--seed", "1", "-q"], capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(manifest.read_text())["guarantee"]["known"] == 2
    code, out, err = run(["check-kl", str(kl), "--config", str(job), "--json"], capsys)
    assert code == 0 and json.loads(out)["level"] == 2, err
    code, out, err = run(["check-kl", str(kl), "--config", str(job), "--known", "1"], capsys)
    assert code == 0 and "ℓ = 1" in out, err  # the command line wins
    code, _, err = run(["anonymize", "--config", str(job), "-q"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "model.known: (k,ℓ)-anonymity is published by anonymatch anonymize-kl" in err
    assert not (tmp_path / "release.csv").exists()
    job.write_text(KL_JOB.replace("known = 2\n", ""))  # a k-anonymous release to attack
    code, _, err = run(["anonymize", "--config", str(job), "--seed", "1", "-q"], capsys)
    assert code == 0, err
    job.write_text(KL_JOB)
    attack = ["attack", "--config", str(job), "--key", "pid", "--trials", "3", "--seed", "1"]
    code, _, err = run(attack, capsys)
    assert code == 2 and "--known" in err  # its own option, not the job's ℓ
    code, out, err = run([*attack, "--known", "1", "--json"], capsys)
    assert code == 0 and json.loads(out)["known"] == 1, err


def test_verify_and_report_recheck_the_kl_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify --manifest and report re-check a (k,ℓ) claim through the criterion: PASS on the
    release; a manifest edited to claim a larger k or known, or known without the model: FAIL
    or UNCHECKED, exit 4. A missing categorical value is published as a label of its own and
    read back so."""
    src, rel, manifest = tmp_path / "people.csv", tmp_path / "rel.csv", tmp_path / "rel.json"
    frame = mixed_table(120, 5)
    frame.loc[::9, "hair"] = np.nan
    frame["pid"] = range(len(frame))
    frame.to_csv(src, index=False)
    args = ["anonymize-kl", str(src), "-o", str(rel), "--k", "3", "--known", "2", "--qi"]
    args += [",".join(KL_QI), "--numeric", "age,hours", "--sensitive", "disease"]
    args += ["--identifiers", "pid"]
    code, _, err = run([*args, "--report", str(manifest), "--seed", "4", "-q"], capsys)
    assert code == 0, err
    verify = ["verify", str(src), str(rel), "--manifest"]
    code, out, err = run([*verify, str(manifest)], capsys)
    assert code == 0 and out.startswith("PASS") and "(k,ℓ) = (3, 2)" in out, err + out
    code, out, err = run(["verify", str(src), str(src), "--manifest", str(manifest)], capsys)
    assert code == 4 and out.startswith("FAIL: the identifier column 'pid' is published"), out
    code, out, err = run([*verify, str(manifest), "--l", "2"], capsys)  # not checked: refused
    assert code == 2 and "checked for its claim alone" in err, err
    html = tmp_path / "r.html"
    report = ["report", str(src), str(rel), "-o", str(html), "-q", "--force", "--manifest"]
    code, out, err = run([*report, str(manifest)], capsys)
    assert code == 0, err
    honest = json.loads(manifest.read_text())
    for edit in ({"k": 40}, {"known": 5}, {"model": "k-anonymity"}):
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps({**honest, "guarantee": {**honest["guarantee"], **edit}}))
        code, out, err = run([*verify, str(edited), "--json"], capsys)
        assert code == 4, (edit, out, err)
        if "model" not in edit:  # the criterion's own verdict: rare combinations
            assert not json.loads(out)["passed"] and json.loads(out)["kl"]["n_violations"] > 0
        else:  # a k-factor check, and the known nobody reads
            assert "guarantee.known: claimed without" in json.loads(out)["unchecked"][0]
        code, out, err = run([*report, str(edited)], capsys)
        if "model" in edit:  # read as k-anonymity, the missing labels pair with nothing: exit 2
            assert code == 2 and "does not match the original" in err, err
        else:
            assert code == 4 and "do not hold" in err, (edit, err)


@pytest.mark.parametrize(
    ("guarantee", "unchecked"),
    [
        ({"model": "(k,l)-anonymity", "k": 3, "known": 2, "unprotected": ["s"]}, []),
        ({"model": "k-anonymity", "k": 3}, []),
        ({"model": "adaptive-anonymity", "k": None, "levels": {"column": "lvl", "min": 2}}, []),
        ({"model": "adaptive-anonymity", "k": 2, "levels": {"column": "lvl", "min": 2}}, []),
        ({"model": "k-anonymity", "k": 3, "known": 2}, ["guarantee.known: claimed without"]),
    ],
)
def test_a_known_is_checked_with_its_model_only(
    guarantee: dict[str, object], unchecked: list[str]
) -> None:
    """``known`` is re-checked as (k,ℓ)'s claim; beside another model no check reads it."""
    from anonymatch.app.tablejob import unchecked_claims

    found = unchecked_claims({"guarantee": guarantee}, None)
    assert len(found) == len(unchecked)
    assert all(f.startswith(u) for f, u in zip(found, unchecked, strict=True))
