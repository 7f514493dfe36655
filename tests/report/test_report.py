"""The HTML report: self-contained, every section, figures that agree with the library's,
atomic and refused when it would be wrong; ``--report-html`` on every anonymize* command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.report import build_report
from anonymatch.report.tables import categorical_distributions, numeric_distributions
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.recode import GeneralizedQI
from tests.factories import planted, random_frame

ROLES = ["--qi", "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s"]
SECTIONS = ("published", "guarantee", "risk", "utility", "parameters", "limits")
RESOURCE = re.compile(
    r"""\b(?:src|href|xlink:href|action|srcset)\s*=\s*["']?\s*(?:https?:)?//""", re.I
)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def assert_self_contained(html: str) -> None:
    assert not RESOURCE.search(html), RESOURCE.search(html)
    assert "@import" not in html and "url(" not in html.replace("data:", "")
    assert "<script" not in html  # nothing to run, nothing to fetch


@pytest.fixture()
def table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path, Path]:
    """A table with an identifying 'other' column, released at k = 3 with an HTML report."""
    frame = random_frame(60, 3)
    frame["serial"] = np.arange(60) * 7  # released unchanged and unique: must be flagged
    original = tmp_path / "people.csv"
    frame.to_csv(original, index=False)
    out, manifest, html = tmp_path / "rel.csv", tmp_path / "rel.json", tmp_path / "rel.html"
    args = ["anonymize", str(original), "-o", str(out), "--k", "3", *ROLES, "--seed", "2"]
    code, stdout, err = run([*args, "--report", str(manifest), "--report-html", str(html)], capsys)
    assert code == 0, err
    assert f"report: {html}" in stdout
    return original, out, manifest, html


def test_table_report_has_every_section_and_is_self_contained(
    table: tuple[Path, Path, Path, Path],
) -> None:
    original, release, manifest_path, html_path = table
    html = html_path.read_text()
    manifest = json.loads(manifest_path.read_text())
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert_self_contained(html)
    assert "@media print" in html
    assert manifest["input"]["sha256"] in html and manifest["output"]["sha256"] in html
    assert html.count("data:image/svg+xml;base64,") >= 6  # candidates, NCP, 4 QIs, timings
    # the unchanged unique column is flagged, the QIs are not
    # (in the columns table and in the leakage table of the risk section)
    rows = re.findall(r'<tr class="flagged"><td>(\w+)</td>', html)
    assert rows == ["serial", "serial"]
    assert html.count('class="flagged"') == 2


def test_table_report_figures_agree_with_risk(table: tuple[Path, Path, Path, Path]) -> None:
    import anonymatch

    original, release, manifest_path, html_path = table
    report = anonymatch.risk(
        pd.read_csv(original), pd.read_csv(release), qi="n0,n1,c0,c1", numeric="n0,n1",
        sensitive="s", k=3,
    )  # fmt: skip
    html = html_path.read_text()
    cand = report.candidates
    expected = f"<td>candidates per person: min</td><td>{cand.min}</td>"
    assert expected in html
    assert f"<td>prosecutor risk: max</td><td>{report.prosecutor.max:.4f}</td>" in html
    homogeneous = report.sensitive[0].homogeneous
    assert f"<td>s</td><td>{homogeneous} (" in html
    known = report.known
    assert known is not None
    assert f"<td>rows</td><td>{known.rows['certain_max']}</td>" in html
    assert f"<td>s values</td><td>{known.sensitive['s']['certain_max']}</td>" in html


def test_report_command_checks_digests_and_writes_nothing_on_error(
    table: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, release, manifest, _ = table
    other = tmp_path / "other.csv"
    other.write_text(release.read_text().replace("s0", "s1", 1))
    out = tmp_path / "r.html"
    code, _, err = run(["report", str(original), str(other), "--manifest", str(manifest),
                        "-o", str(out)], capsys)  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "SHA-256 differs" in err
    assert not out.exists() and not list(tmp_path.glob(".r.html.*"))
    code, _, err = run(["report", str(original), "--manifest", str(manifest), "-o", str(out)],
                       capsys)  # fmt: skip
    assert code == 2 and "neither" in err and not out.exists()
    code, _, err = run(["report", "--manifest", str(original), "-o", str(out)], capsys)
    assert code == 2 and "cannot read the manifest" in err and not out.exists()
    # manifest alone: the shared sections, risk marked as not computed
    code, stdout, err = run(["report", "--manifest", str(manifest), "-o", str(out)], capsys)
    assert code == 0, err
    html = out.read_text()
    assert "Not computed: needs the original and the release" in html
    assert_self_contained(html)
    # an existing report is kept without --force
    code, _, err = run(["report", "--manifest", str(manifest), "-o", str(out)], capsys)
    assert code == 2 and "exists" in err
    code, _, err = run(["report", str(original), str(release), "--manifest", str(manifest),
                        "-o", str(out), "--force", "-q"], capsys)  # fmt: skip
    assert code == 0, err
    assert '<section id="risk">' in out.read_text()


def test_report_html_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = tmp_path / "people.csv"
    random_frame(30, 1).to_csv(original, index=False)
    html = tmp_path / "r.html"
    html.write_text("old")
    out = tmp_path / "rel.csv"
    args = ["anonymize", str(original), "-o", str(out), "--k", "3", *ROLES, "-q"]
    code, _, err = run([*args, "--report-html", str(html)], capsys)
    assert code == 2 and "exists" in err and not out.exists() and html.read_text() == "old"
    code, _, err = run([*args, "--report-html", str(out)], capsys)
    assert code == 2 and not out.exists()
    code, _, err = run([*args, "--report-html", str(tmp_path / "none" / "r.html")], capsys)
    assert code == 2 and "does not exist" in err and not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["anonymize", "--k", "3", "--method", "bmatching", "--qi", "c0,c1"],
        ["anonymize", "--k", "3", "--method", "mondrian", *ROLES, "--l", "2"],
        ["anonymize-kl", "--k", "3", "--known", "1", "--qi", "c0,c1"],
    ],
    ids=["adaptive", "mondrian-l", "kl"],
)
def test_every_table_command(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = tmp_path / "people.csv"
    random_frame(40, 4).to_csv(original, index=False)
    html = tmp_path / "r.html"
    args = [command[0], str(original), "-o", str(tmp_path / "rel.csv"), *command[1:]]
    code, _, err = run([*args, "--seed", "1", "-q", "--report-html", str(html)], capsys)
    assert code == 0, err
    text = html.read_text()
    assert_self_contained(text)
    for section in SECTIONS:
        assert f'<section id="{section}">' in text
    assert "Not computed" not in text


def test_other_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = planted(4, 8, 5, 0.05, 1)
    dat = tmp_path / "t.dat"
    dat.write_text(
        "\n".join(" ".join(str(j) for j in x.indices[x.indptr[i] : x.indptr[i + 1]])
                  for i in range(x.shape[0])) + "\n"
    )  # fmt: skip
    rng = np.random.default_rng(0)
    edges = tmp_path / "g.csv"
    pairs = {tuple(sorted(rng.choice(30, 2, replace=False))) for _ in range(80)}
    edges.write_text("source,target\n" + "".join(f"{a},{b}\n" for a, b in sorted(pairs)))
    cases = {
        "sets": ["anonymize-sets", str(dat), "-o", str(tmp_path / "s.jsonl"), "--k", "3"],
        "km": ["anonymize-km", str(dat), "-o", str(tmp_path / "km.jsonl"), "--k", "3", "--m", "2"],
        "sparse": ["anonymize-sparse", str(dat), "-o", str(tmp_path / "sp.csv"), "--k", "3"],
        "graph": ["anonymize-graph", str(edges), "-o", str(tmp_path / "g2.csv"), "--k", "2"],
    }
    for name, args in cases.items():
        html = tmp_path / f"{name}.html"
        code, _, err = run([*args, "-q", "--report-html", str(html)], capsys)
        assert code == 0, (name, err)
        text = html.read_text()
        assert_self_contained(text)
        for section in SECTIONS:
            assert f'<section id="{section}">' in text, (name, section)
        if name != "km":
            assert "Not computed" not in text, name
            assert text.count("data:image/svg+xml;base64,") >= 2, name


def test_build_report_rejects_bad_input() -> None:
    from anonymatch.core.errors import InputError

    with pytest.raises(InputError, match="not an anonymatch manifest"):
        build_report({"schema": "x"})
    with pytest.raises(InputError, match="unknown data kind"):
        build_report({"guarantee": {"model": "k-anonymity"}, "data_kind": "video"})


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_distributions_keep_every_record(data: st.DataObject) -> None:
    """The release's spread distribution of a QI has one unit of mass per record, whatever the
    ranges, sets and stars; an exact release reproduces the original's counts."""
    n = data.draw(st.integers(1, 30))
    values = data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    labels = data.draw(st.lists(st.sampled_from("abcdefghijklmnopq"), min_size=n, max_size=n))
    frame = pd.DataFrame({"x": values, "c": labels})
    enc = encode_qi(frame, Schema.build(["x", "c"], ["x"]))
    width = np.array(data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
    star = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    lo = enc.num[:, 0] - width
    hi = enc.num[:, 0] + width // 2
    import scipy.sparse as sp

    card = int(enc.cat_card[0])
    extra = (enc.cat[:, 0] + 1) % card
    pairs = np.column_stack([enc.cat[:, 0], extra]).ravel()
    sets = sp.csr_array((np.ones(2 * n), (np.repeat(np.arange(n), 2), pairs)), shape=(n, card))
    sets.sum_duplicates()
    sets.data[:] = 1
    cells = GeneralizedQI(lo[:, None], hi[:, None], star[:, None], (sp.csr_array(sets),),
                          star[:, None])  # fmt: skip
    edges, orig, rel = numeric_distributions(enc, cells, 0)
    assert orig.sum() == n and rel.sum() == pytest.approx(n)
    _, corig, crel = categorical_distributions(enc, cells, 0)
    assert corig.sum() == n and crel.sum() == pytest.approx(n)
    own = sp.csr_array((np.ones(n), (np.arange(n), enc.cat[:, 0])), shape=(n, card))
    none = np.zeros((n, 1), bool)
    exact = GeneralizedQI(enc.num, enc.num, none, (own,), none)
    _, orig2, rel2 = numeric_distributions(enc, exact, 0)
    assert np.allclose(orig2, rel2)
    _, c1, c2 = categorical_distributions(enc, exact, 0)
    assert np.allclose(c1, c2)


def _expanded(view: object) -> tuple[object, np.ndarray, np.ndarray]:
    """(U × n_published compatibility, counts, inverse) of an attacker's view."""
    return view.expanded(), view.counts, view.inverse  # type: ignore[attr-defined]


def test_reused_compatibility_is_the_same_graph() -> None:
    """Within reuse_parsed_release the graph is computed once per content, and equals a fresh
    computation; other content gets its own."""
    import importlib

    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.pipeline import prepare
    from tests.factories import anonymize_table as anonymize

    verify = importlib.import_module("anonymatch.tables.verify")  # the package shadows it
    frame = random_frame(30, 9)
    schema = Schema.build(["n0", "c0"], ["n0"])
    release = anonymize(frame, 3, ["n0", "c0"], ["n0"], seed=1).table
    _, enc, _ = prepare(frame, schema)
    cells = parse_cells(release, enc)
    fresh = _expanded(verify.attacker_view(cells, enc))
    calls = []
    original = verify._compatibility
    from anonymatch.tables.io.reuse import reuse_parsed_release

    def counting(*args: object) -> object:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]

    verify._compatibility = counting  # type: ignore[assignment]
    try:
        with reuse_parsed_release():
            a = _expanded(verify.attacker_view(cells, enc))
            a[0].data[:] = 0  # callers get copies
            b = _expanded(verify.attacker_view(parse_cells(release, enc), enc))
            other = _expanded(verify.attacker_view(cells.take(np.arange(29, -1, -1)), enc))
    finally:
        verify._compatibility = original  # type: ignore[assignment]
    assert len(calls) == 2
    assert (b[0] != fresh[0]).nnz == 0 and np.array_equal(b[1], fresh[1])
    assert (other[0] != fresh[0][:, ::-1]).nnz == 0


def test_partitioned_release_reports_the_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = tmp_path / "people.csv"
    random_frame(40, 6).to_csv(original, index=False)
    html = tmp_path / "r.html"
    args = ["anonymize", str(original), "-o", f"{tmp_path / 'parts'}/", "--k", "3", *ROLES]
    code, _, err = run([*args, "--executor", "inline", "-q", "--report-html", str(html)], capsys)
    assert code == 0, err
    text = html.read_text()
    assert "not done for releases of more than" in text and "in parts" in text
    assert '<section id="guarantee">' in text and "partition by partition" in text
    assert_self_contained(text)


def test_missing_values_suppression_and_hierarchy_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--report-html`` on a release with per-column missing codes, suppressed records and a
    hierarchy: the report reads the original as the release did (codes, published people,
    ``~node`` cells), and its distributions leave the missing values out of both sides."""
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.io.cells import parse_cells
    from tests.factories import anonymize_table as anonymize

    rng = np.random.default_rng(3)
    n = 150
    frame = pd.DataFrame(
        {
            "n0": rng.integers(0, 50, n),
            "n1": rng.integers(0, 9, n),
            "c0": rng.choice(list("abcd"), n),
            "s": rng.choice(list("xy"), n),
        }
    )
    frame.loc[rng.random(n) < 0.15, "n0"] = -9
    frame.loc[rng.random(n) < 0.15, "c0"] = "-8"
    original, tree = tmp_path / "t.csv", tmp_path / "c0.csv"
    frame.to_csv(original, index=False)
    tree.write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n")
    out, manifest, html = tmp_path / "r.csv", tmp_path / "r.json", tmp_path / "r.html"
    args = ["anonymize", str(original), "-o", str(out), "--report", str(manifest),
            "--report-html", str(html), "--k", "3", "--qi", "n0,n1,c0", "--numeric", "n0,n1",
            "--na", "n0=-9", "--na", "c0=-8", "--hierarchy", f"c0={tree}",
            "--suppression-limit", "0.05", "--seed", "1", "-q"]  # fmt: skip
    code, _, err = run(args, capsys)
    assert code == 0, err
    report = json.loads(manifest.read_text())
    assert report["input"]["suppressed"] > 0 and report["input"]["missing_values"] > 0
    assert "Utility" in html.read_text()
    # the distributions of a release with missing values: n − m on both sides
    codes = MissingCodes(("",), {"n0": ("-9",), "c0": ("-8",)})
    release = anonymize(frame.astype(str), 3, ["n0", "n1", "c0"], ["n0", "n1"], seed=2,
                        na_values=codes)  # fmt: skip
    enc = release.qi
    cells = parse_cells(release.table, enc)
    gone = int(enc.num_missing[:, 0].sum())
    _, orig, rel = numeric_distributions(enc, cells, 0)
    assert orig.sum() == n - gone and rel.sum() == pytest.approx(n - gone)
    assert np.all(rel >= -1e-9)
    gone = int(enc.cat_missing[:, 0].sum())
    _, corig, crel = categorical_distributions(enc, cells, 0)
    assert corig.sum() == n - gone and crel.sum() == pytest.approx(n - gone)


# --------------------------------------------- the report certifies only what it re-verified


def _edited(manifest: Path, tmp_path: Path, name: str, edit: object) -> Path:
    document = json.loads(manifest.read_text())
    edit(document)  # type: ignore[operator]
    out = tmp_path / name
    out.write_text(json.dumps(document))
    return out


def _report(args: list[str], capsys: pytest.CaptureFixture[str], out: Path) -> tuple[int, str, str]:
    code, stdout, err = run(["report", *args, "-o", str(out), "--force"], capsys)
    return code, (out.read_text() if out.exists() else ""), err


def test_honest_manifest_is_reported_as_checked(
    table: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, release, manifest, _ = table
    code, html, err = _report([str(original), str(release), "--manifest", str(manifest)],
                              capsys, tmp_path / "r.html")  # fmt: skip
    assert code == 0, err
    assert "checked: passed" in html and "re-computed from the files by this report" in html
    assert "unchecked" not in html.split("<details>")[0] and "do not hold" not in html


@pytest.mark.parametrize(
    "name, edit",
    [
        ("k50", lambda m: m["guarantee"].update(k=50)),
        ("flow", lambda m: m["verification"].update(passed=True, k_factor_flow=7)),
        ("passed", lambda m: m["verification"].update(passed=False)),
        ("k2", lambda m: m["guarantee"].update(k=2)),
    ],
)
def test_tampered_claims_exit_4_and_say_so(
    table: tuple[Path, Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    edit: object,
) -> None:
    original, release, manifest, _ = table
    tampered = _edited(manifest, tmp_path, f"{name}.json", edit)
    code, html, err = _report([str(original), str(release), "--manifest", str(tampered)],
                              capsys, tmp_path / "r.html")  # fmt: skip
    assert code == 4, err
    assert "claims do not hold" in err
    assert "claims do not hold for these files" in html
    assert "FAILED: the manifest" in html
    assert "checked: passed" not in html


def test_manifest_without_hashes_names_no_file(
    table: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, release, manifest, _ = table

    def unhash(m: dict) -> None:  # type: ignore[type-arg]
        del m["input"]["sha256"], m["output"]["sha256"]

    bare = _edited(manifest, tmp_path, "bare.json", unhash)
    code, html, err = _report([str(original), str(release), "--manifest", str(bare)],
                              capsys, tmp_path / "r.html")  # fmt: skip
    assert code == 0, err
    assert "does not name them" in html and "its other claims are unchecked" in html
    # another release of the same original (k = 2) presented under the manifest (k = 3)
    other = tmp_path / "other.csv"
    args = ["anonymize", str(original), "-o", str(other), "--k", "2", *ROLES, "--seed", "9"]
    assert run(args, capsys)[0] == 0
    code, html, err = _report([str(original), str(other), "--manifest", str(bare)],
                              capsys, tmp_path / "s.html")  # fmt: skip
    assert code == 4 and "do not hold" in html


def test_manifest_alone_is_labelled_unchecked_everywhere(
    table: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, manifest, _ = table
    code, html, err = _report(["--manifest", str(manifest)], capsys, tmp_path / "r.html")
    assert code == 0, err
    # `report M.json -o R.html`: the lone JSON argument is the manifest (it asked for --manifest)
    code, alone, err = _report([str(manifest)], capsys, tmp_path / "alone.html")
    assert code == 0 and alone.split("<footer")[0] == html.split("<footer")[0], err
    code, _, err = _report([], capsys, tmp_path / "none.html")
    assert code == 2 and "--manifest M.json" in err and not (tmp_path / "none.html").exists()
    body = html.split("<details>")[0]
    assert "certificate" not in body.lower().replace("not a certificate", "")
    assert "re-computed" not in body and "checked: passed" not in body
    for label in ("Privacy model (unchecked", "k (unchecked", "Verification (unchecked",
                  "<dt>verification — unchecked (from the manifest)</dt>",
                  "<dt>k — unchecked (from the manifest)</dt>"):  # fmt: skip
        assert label in body, label


_EDITS = st.one_of(
    st.tuples(st.just("guarantee"), st.sampled_from(["k", "model", "sensitive"])),
    st.tuples(
        st.just("verification"),
        st.sampled_from(
            [
                "passed",
                "k",
                "n_original",
                "n_published",
                "min_matches_original",
                "min_matches_published",
                "k_factor_flow",
                "k_factor_required",
                "compatible_pairs",
                "reason",
                "sensitive",
            ]
        ),
    ),  # fmt: skip
)
_VALUES = st.one_of(
    st.integers(-3, 400), st.booleans(), st.none(), st.text(max_size=5),
    st.sampled_from(["k-anonymity", "adaptive-anonymity", "(k,l)-anonymity"]),
    st.just([]), st.just([{"column": "s", "l": 3, "diversity": "distinct"}]),
)  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # the fixture's files are only read
@given(edit=_EDITS, value=_VALUES, drop=st.booleans())
def test_any_edit_of_the_guarantee_is_detected_or_unchecked(
    table: tuple[Path, Path, Path, Path], edit: tuple[str, str], value: object, drop: bool
) -> None:
    from anonymatch.core.errors import InputError

    original, release, manifest_path, _ = table
    manifest = json.loads(manifest_path.read_text())
    honest = json.loads(manifest_path.read_text())
    block, key = edit
    if (manifest[block].get(key, object()) == value and not drop) or (
        drop and key not in manifest[block]
    ):
        return  # no edit
    if drop:
        manifest[block].pop(key, None)
    else:
        manifest[block][key] = value
    try:
        report = build_report(manifest, original, release, with_check=True)
    except InputError:
        return  # refused
    check = report.check  # type: ignore[attr-defined]
    head = str(report).split("<details>")[0]  # the report without the raw manifest
    if check.status == "checked":
        # only removing one of the verifier's own figures leaves nothing to contradict: the
        # report shows the re-run's figure in its place
        none_claimed = key == "sensitive" and not value and key not in honest[block]
        assert (drop and block == "verification") or none_claimed, (edit, value)
        assert "checked: passed" in head
    else:
        assert check.failed or check.status == "unchecked"
        assert "do not hold" in head or "unchecked (from the manifest)" in head
        assert "checked: passed" not in head


def test_useless_release_is_called_useless_beside_the_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25: a release whose cells keep nothing still verifies, but its top card does not
    say "passed" alone; a kept column that recodes a QI is in the leakage table."""
    n = 60
    frame = pd.DataFrame({"num": [i % 3 for i in range(n)], "other": [i % 4 for i in range(n)]})
    frame["word"] = "w" + frame["num"].astype(str)
    original = tmp_path / "d.csv"
    frame.to_csv(original, index=False)
    out, html = tmp_path / "r.csv", tmp_path / "r.html"
    code, _, err = run(
        ["anonymize", str(original), "-o", str(out), "--k", "30", "--qi", "num",
         "--numeric", "num", "--method", "mondrian", "--seed", "1", "--report-html", str(html)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    text = html.read_text()
    assert "but the release is useless" in text
    assert '<div class="label">Utility</div><div class="value fail">useless</div>' in text
    assert "column released unchanged" in text


def test_table_report_shows_population_figures(
    table: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    """With a population table (issue 28) the risk section shows k-map, journalist and
    marketer risk and the estimates, the same figures as ``population_risk``."""
    from anonymatch.report import build_report
    from anonymatch.tables.risk.population import PopulationInput, population_risk

    original, release, manifest_path, _ = table
    people = pd.read_csv(original)
    population = pd.concat([people, random_frame(140, 8)], ignore_index=True)
    population_path = tmp_path / "register.csv"
    population.to_csv(population_path, index=False)
    manifest = json.loads(manifest_path.read_text())
    html = build_report(manifest, original, release, options={"population": population_path})
    exact = population_risk(
        people, pd.read_csv(release), population,
        PopulationInput(("n0", "n1", "c0", "c1"), ("n0", "n1")),
    )  # fmt: skip
    assert f"<td>k-map: fewest population records a published row fits</td><td>{exact.kmap}<" in (
        html
    )
    assert f"{exact.marketer:.4f}" in html and "population uniques estimated" in html
    plain = build_report(manifest, original, release)
    assert "k-map: fewest" not in plain


def test_ring_release_report_shows_the_certified_posterior(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools

    import anonymatch
    from anonymatch.tables.methods import circulant

    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 120),
            "zip": rng.choice(list("abcd"), 120),
            "s": rng.choice([f"v{i}" for i in range(5)], 120),
        }
    )
    roles = ["--qi", "age,zip", "--numeric", "age", "--sensitive", "s"]
    source, release, manifest = tmp_path / "p.csv", tmp_path / "r.csv", tmp_path / "r.json"
    frame.to_csv(source, index=False)
    code, _, err = run(["anonymize", str(source), "-o", str(release), "--report", str(manifest),
                        "--k", "3", *roles, "--l", "2", "--seed", "1", "-q",
                        "--structure", "rings"], capsys)  # fmt: skip
    assert code == 0, err
    assert "anonymatch: warning: this release is made of sensitive rings: a person who" in err
    assert json.loads(manifest.read_text())["guarantee"]["construction"] == "rings"
    code, html, err = _report([str(source), str(release), "--manifest", str(manifest)],
                              capsys, tmp_path / "r.html")  # fmt: skip
    assert code == 0, err
    assert "ring certificate proves" in html
    assert "finds it among their rows learns every ring member" in html  # the limits
    figures = anonymatch.tables.risk(
        frame, pd.read_csv(release), qi="age,zip", numeric="age", sensitive="s", k=3,
        certificate=json.loads(manifest.read_text())["guarantee"]["certificate"],
    )  # fmt: skip
    (s,) = figures.sensitive
    assert f"{s.posterior_max:.3f} / {s.posterior_mean:.3f}" in html
    assert figures.known is not None and figures.known.units["rings"] >= 1
    assert f"<td>rows</td><td>{figures.known.rows['certain_max']}</td>" in html
