"""Sensitive rings (``methods.circulant``) and their certified check (``models.certified``):
every draw of the privacy step keeps every person's neighbours within the model, the verifier
proves it from the release, the original and the certificate, and rejects a release where a
draw fails (docs/guarantees/sensitive.md §6)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.methods import circulant
from anonymatch.tables.models.certified import check_certified, ring_certificate
from anonymatch.tables.models.disclosure import build_models
from anonymatch.tables.models.sensitive import check_model, encode_sensitive
from anonymatch.tables.pipeline import prepare, sensitive_target
from anonymatch.tables.recode import recode
from tests.factories import person_candidates


def _frame(n: int, values: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "zip": rng.choice(list("abcd"), n),
            "s": rng.choice([f"v{i}" for i in range(values)], n),
        }
    )


def _release(data, enc, build, draw):
    """The release of ``build`` for one shift per ring (``draw[r]``), rows in record order."""
    cells = recode(build.graph, enc)
    source = np.arange(enc.n)  # source[j]: the person whose values row j shows
    for ring, t in zip(build.rings, draw, strict=True):
        p = np.arange(len(ring))
        source[ring[(p - t) % len(ring)]] = ring
    table = pd.DataFrame(format_cells(cells, enc))
    table["s"] = data["s"].to_numpy()[source]
    return table, source


def _neighbours_ok(build, source, target) -> bool:
    """Straight from the graph: every person's k rows, under this draw, satisfy the model."""
    shown = target.codes[source, 0]
    m = build.graph.matrix
    slots = int(target.offsets[-1])
    counts = np.stack(
        [
            np.bincount(shown[m.indices[m.indptr[i] : m.indptr[i + 1]]], minlength=slots)
            for i in range(m.shape[0])
        ]
    )
    return bool(target.ok(counts).all())


MODELS = [
    {"l": 2},
    {"l": 3},
    {"l": 2, "diversity": "entropy"},
    {"l": 2, "diversity": "recursive", "c": 2.0},
    {"t": 0.4},
]


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(10, 30),
    k=st.integers(2, 4),
    values=st.integers(3, 5),
    which=st.sampled_from(range(len(MODELS))),
    seed=st.integers(0, 10_000),
)
def test_every_draw_passes_the_verifier(n, k, values, which, seed):
    data = _frame(n, values, seed)
    models = build_models(["s"], **MODELS[which])
    target = sensitive_target(data, models)
    _, enc, _ = prepare(data, Schema.build(["age", "zip"], ["age"], sensitive=["s"]))
    try:
        build = circulant.sensitive_build(enc, k, target, max(2 * k, 12), prefer_rings=True)
    except anonymatch.InfeasibleError:
        return
    if not build.rings:
        return
    cert = ring_certificate(k, build.rings)
    # every combination of shifts would be many; every shift of each ring with the others at 0
    draws = [np.zeros(len(build.rings), np.int64)]
    for r in range(len(build.rings)):
        for t in range(1, k):
            d = np.zeros(len(build.rings), np.int64)
            d[r] = t
            draws.append(d)
    for draw in draws:
        table, source = _release(data, enc, build, draw)
        assert _neighbours_ok(build, source, target)
        checks = check_certified(parse_cells(table, enc), enc, table, data, models, cert)
        assert all(c.passed for c in checks), checks[0].reason


def _hand_ring(values: list[str]):
    """8 people aged 20…27, one ring of k = 2 in age order: row j generalizes the people at
    positions j and j + 1, so every cell spans the whole table (20..27): every row is a
    candidate of everybody. Shows ``values`` along the ring (draw 0)."""
    n = len(values)
    data = pd.DataFrame({"age": 20 + np.arange(n), "s": values})
    published = pd.DataFrame({"age": ["20..27"] * n, "s": values})
    return data, published, {"k": 2, "rings": [list(range(n))]}


def test_hand_made_ring_where_a_draw_fails_is_rejected():
    # windows of 2 consecutive rows: (A, A) at rows 0-1 fails distinct 2-diversity, so the
    # person whose two rows are those sees one value — in this draw and in every other one
    data, published, cert = _hand_ring(["A", "A", "B", "C", "B", "C", "B", "C"])
    kw = {"k": 2, "qi": "age", "numeric": "age", "sensitive": "s", "l": 2}
    report = anonymatch.tables.verify(data, published, certificate=cert, **kw)
    assert not report.passed and "some draw fails" in report.reason
    # the candidate check alone passes it: every row is everybody's candidate
    assert anonymatch.tables.verify(data, published, **kw).passed
    # the same rows with the values interleaved pass
    data2, published2, cert2 = _hand_ring(["A", "B", "A", "C", "B", "C", "B", "C"])
    assert anonymatch.tables.verify(data2, published2, certificate=cert2, **kw).passed


def test_certificate_that_does_not_fit_the_people_is_rejected():
    n = 8
    data = pd.DataFrame({"age": 20 + np.arange(n), "s": list("ABABABAB")})
    # each row generalizes two neighbours in age order, but the certificate claims another order
    cells = [f"{20 + j}..{21 + j}" if j < n - 1 else "20..27" for j in range(n)]
    published = pd.DataFrame({"age": cells, "s": list("ABABABAB")})
    kw = {"k": 2, "qi": "age", "numeric": "age", "sensitive": "s", "l": 2}
    good = {"k": 2, "rings": [list(range(n))]}
    assert anonymatch.tables.verify(data, published, certificate=good, **kw).passed
    bad = {"k": 2, "rings": [[0, 2, 4, 6, 1, 3, 5, 7]]}
    report = anonymatch.tables.verify(data, published, certificate=bad, **kw)
    assert not report.passed and "does not fit" in report.reason


@pytest.mark.parametrize(
    "cert",
    [
        {"k": 0, "rings": []},
        {"k": 2, "rings": [[0]]},
        {"k": 2, "rings": [[0, 1], [1, 2]]},
        {"k": 2, "rings": [[0, 99]]},
        {"k": 2, "rings": "0,1"},
    ],
)
def test_malformed_certificate(cert):
    data, published, _ = _hand_ring(list("ABABABAB"))
    with pytest.raises(InputError, match="certificate"):
        anonymatch.tables.verify(
            data, published, certificate=cert, k=2, qi="age", numeric="age", sensitive="s", l=2
        )


def test_pipeline_ring_release_is_certified(monkeypatch):
    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    data = _frame(200, 5, 3)
    kw = {"k": 4, "qi": "age,zip", "numeric": "age", "sensitive": "s", "l": 3}
    result = anonymatch.tables.anonymize(data, seed=2, structure="rings", **kw)
    guarantee = result.report["guarantee"]
    assert guarantee["construction"] == "rings"
    cert = guarantee["certificate"]
    assert sum(len(r) for r in cert["rings"]) == result.report["verification"]["ring_records"]
    assert anonymatch.tables.verify(data, result, **kw).passed  # certificate from the report
    assert anonymatch.tables.verify(data, result.release, certificate=cert, **kw).passed
    # the draw shows, on each ring, the ring's people's values rotated
    values = result.release["s"].to_numpy()
    assert sorted(values) == sorted(data["s"])


def test_auto_choice_never_costs_more_than_classes():
    data = _frame(300, 6, 7)
    models = build_models(["s"], 3)
    target = sensitive_target(data, models)
    _, enc, _ = prepare(data, Schema.build(["age", "zip"], ["age"], sensitive=["s"]))
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.metrics import information_loss

    auto = circulant.sensitive_build(enc, 5, target, 100)
    classes, _ = diverse_clusters(enc, 5, target, 100)
    gcp = lambda g: information_loss(recode(g, enc), enc).gcp  # noqa: E731
    assert gcp(auto.graph) <= gcp(classes) + 1e-12


def test_candidates_of_a_ring_include_the_neighbours():
    data, published, cert = _hand_ring(list("ABCABCAB"))
    _, enc, _ = prepare(data, Schema.build(["age"], ["age"], sensitive=["s"]))
    cand = person_candidates(parse_cells(published, enc), enc)
    assert cand is not None and cand.sum() == 64  # one class of 8 in effect: all rows
    sens = encode_sensitive("s", published["s"], data["s"], False)
    assert check_model(cand, sens, build_models(["s"], 3)[0]).passed


def test_cli_verify_reads_the_certificate_from_the_manifest(tmp_path, monkeypatch, capsys):
    import json

    from anonymatch.cli import main

    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    data = tmp_path / "people.csv"
    _frame(120, 5, 4).to_csv(data, index=False)
    release, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    args = ["--k", "3", "--qi", "age,zip", "--numeric", "age", "--sensitive", "s"]
    code = main(["anonymize", str(data), "-o", str(release), "--report", str(report), "--l", "2"]
                + args + ["--seed", "1", "--structure", "rings"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["construction"] == "rings"
    capsys.readouterr()
    assert main(["verify", str(data), str(release), "--manifest", str(report)]) == 0
    # a certificate whose ring order does not fit the release fails the check
    rings = manifest["guarantee"]["certificate"]["rings"]
    rings[0] = rings[0][::2] + rings[0][1::2]
    report.write_text(json.dumps(manifest))
    code = main(["verify", str(data), str(release), "--manifest", str(report)])
    out = capsys.readouterr().out
    assert code == 4 and "FAIL" in out


def test_verify_without_the_certificate_points_at_it(tmp_path, monkeypatch, capsys):
    import json

    from anonymatch.cli import main

    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    data = _frame(120, 4, 1)
    kw = {"k": 4, "qi": "age,zip", "numeric": "age", "sensitive": "s", "l": 2}
    result = anonymatch.tables.anonymize(data, seed=1, diversity="entropy", structure="rings", **kw)
    assert result.report["guarantee"]["construction"] == "rings"
    # the candidates of some person fail entropy diversity although every draw passes
    alone = anonymatch.tables.verify(data, result.release, diversity="entropy", **kw)
    assert not alone.passed and "`certificate`" in alone.reason
    assert anonymatch.tables.verify(data, result, diversity="entropy", **kw).passed
    source, release, report = tmp_path / "p.csv", tmp_path / "r.csv", tmp_path / "r.json"
    data.to_csv(source, index=False)
    result.release.to_csv(release, index=False)
    report.write_text(json.dumps(result.report))
    args = ["verify", str(source), str(release), "--k", "4", "--qi", "age,zip", "--numeric"]
    args += ["age", "--sensitive", "s", "--l", "2", "--diversity", "entropy"]
    capsys.readouterr()
    assert main(args) == 4
    out = capsys.readouterr().out
    assert "FAIL" in out and "certificate" in out and "pass it as --manifest" in out
    assert main([*args, "--manifest", str(report)]) == 0
    # a class release fails without a hint when its manifest was given
    assert "pass it as" not in capsys.readouterr().out


# -- the structure option (issue 36): classes by default, rings only by name ---------------


@pytest.mark.parametrize("model", [{"l": 3}, {"l": 2, "diversity": "entropy"}, {"t": 0.4}])
def test_default_structure_is_classes_and_verifies_without_a_certificate(monkeypatch, model):
    # rings wherever they exist if asked for: the default must still publish none
    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    data = _frame(200, 5, 3)
    kw = {"k": 4, "qi": "age,zip", "numeric": "age", "sensitive": "s", **model}
    result = anonymatch.tables.anonymize(data, seed=2, **kw)
    guarantee = result.report["guarantee"]
    assert guarantee["construction"] == "classes"
    assert "certificate" not in guarantee and "insider_weakness" not in guarantee
    assert result.report["verification"]["ring_records"] == 0
    assert anonymatch.tables.verify(data, result.release, **kw).passed  # no certificate
    rings = anonymatch.tables.anonymize(data, seed=2, structure="rings", **kw)
    guarantee = rings.report["guarantee"]
    assert guarantee["construction"] == "rings" and guarantee["certificate"]["rings"]
    assert "learns every ring member's value" in guarantee["insider_weakness"]
    assert anonymatch.tables.verify(
        data, rings.release, certificate=guarantee["certificate"], **kw
    ).passed


def test_cli_structure_default_classes_rings_by_name(tmp_path, monkeypatch, capsys):
    import json

    from anonymatch.app.honest import warnings_of
    from anonymatch.cli import main

    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    data = tmp_path / "people.csv"
    _frame(120, 5, 4).to_csv(data, index=False)
    release, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    roles = ["--k", "3", "--qi", "age,zip", "--numeric", "age", "--sensitive", "s", "--t", "0.5"]
    base = ["anonymize", str(data), "-o", str(release), "--report", str(report), "-q", "--force"]
    assert main([*base, *roles]) == 0
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["construction"] == "classes"
    assert "certificate" not in manifest["guarantee"]
    assert not any("ring" in w for w in warnings_of(manifest))
    assert "ring" not in capsys.readouterr().err
    assert main(["verify", str(data), str(release), *roles]) == 0  # no --manifest
    assert main([*base, *roles, "--structure", "rings"]) == 0
    err = capsys.readouterr().err
    line = (
        "anonymatch: warning: this release is made of sensitive rings: a person who knows "
        "their own sensitive value and finds it among their rows learns every ring member's value"
    )
    assert line in err.splitlines()  # even with -q
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["construction"] == "rings"
    assert main(["verify", str(data), str(release), "--manifest", str(report)]) == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--l", "1"], "error: --structure 'rings' needs a sensitive model (--l or --t)"),
        (["--l", "2", "--method", "mondrian"], "the method 'mondrian' builds no rings"),
        (["--l", "2", "--method", "ring"], "does not support"),  # no model with ring at all
    ],
)
def test_cli_structure_rings_bad_combinations_exit_2(tmp_path, capsys, args, says):
    from anonymatch.cli import main

    data = tmp_path / "people.csv"
    _frame(120, 5, 4).to_csv(data, index=False)
    roles = ["--k", "3", "--qi", "age,zip", "--numeric", "age", "--sensitive", "s"]
    argv = ["anonymize", str(data), "-o", str(tmp_path / "r.csv"), "-q", *roles, *args]
    code = main([*argv, "--structure", "rings"])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(InputError, match="structure"):
        anonymatch.tables.anonymize(_frame(40, 5, 1), k=3, qi="age,zip", structure="bogus")


def test_report_limits_state_the_insider_weakness():
    from anonymatch.report.tables import _limits

    manifest = {"guarantee": {"model": "k-anonymity", "construction": "rings"}, "parameters": {}}
    assert any("learns every ring member's value" in line for line in _limits(manifest))
    manifest["guarantee"]["construction"] = "classes"
    assert not any("ring member" in line for line in _limits(manifest))
