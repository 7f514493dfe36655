"""Hierarchies, ordinal and date QIs: loader errors, lowest common ancestors against brute force,
NCP on a worked example, the cell grammar with node labels, every method's release verified."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.core.params import Execution
from anonymatch.tables.columns.hierarchy import Hierarchy, parse_hierarchy, read_hierarchy
from anonymatch.tables.columns.qitypes import GRANULARITIES, DateScale, OrdinalScale, build_types
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import format_cells, parse_cells, release_arrow_table
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.methods import names
from anonymatch.tables.metrics import (
    PublishedCells,
    TreeTables,
    gcp_increase_weights,
    information_loss,
)
from anonymatch.tables.pipeline import evaluate_release, verify_release
from anonymatch.tables.recode import GeneralizedQI
from tests.factories import anonymize_table as anonymize

WORK = """Private;Non-Government;*
Self-emp-inc;Non-Government;*
Self-emp-not-inc;Non-Government;*
Federal-gov;Government;*
Local-gov;Government;*
State-gov;Government;*
Without-pay;Unemployed;*
"""

INLINE = Execution("inline")


# ------------------------------------------------------------------ loader


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "hierarchy h.csv: the file has no lines"),
        (
            "a;x;*\nb;y;*\nc;*\n",
            "hierarchy h.csv:3: 2 levels where line 1 has 3 (ragged levels; every leaf needs "
            "a label at every level: repeat one, e.g. c;c;*)",
        ),
        ("a;x;*\nb;x;*\na;x;*\n", "hierarchy h.csv:3: leaf 'a' is listed twice (first on line 1)"),
        (
            "a;x;p;*\nb;x;q;*\n",
            "hierarchy h.csv:2: 'x' (level 1) has two parents: 'p' (line 1) and 'q'",
        ),
        ("a;;*\n", "hierarchy h.csv:1: empty label at level 1"),
        ("a\nb\n", "hierarchy h.csv:1: a line needs a leaf and at least one level"),
        (
            "a;x;x;*\nb;y;x;*\nc;y;x;*\n",
            "hierarchy h.csv:1: label 'x' names different groups of leaves at levels 1 and 2",
        ),
    ],
)
def test_bad_hierarchies_give_one_located_line(text: str, expected: str) -> None:
    with pytest.raises(InputError) as err:
        parse_hierarchy(text, "h.csv")
    assert str(err.value).startswith(expected), str(err.value)
    assert "\n" not in str(err.value)


def test_real_arx_files_load_and_cover_adult() -> None:
    import os

    base = Path(os.environ.get("ANONYMATCH_DATA", "/nonexistent")) / "adult"
    if not (base / "adult.data").is_file():
        pytest.skip("Adult not available (set ANONYMATCH_DATA)")
    data = pd.read_csv(base / "adult.data", header=None, skipinitialspace=True, dtype=str)
    for column, name in ((1, "workclass"), (5, "marital-status"), (13, "native-country")):
        h = read_hierarchy(base / "arx_hierarchies" / f"adult_hierarchy_{name}.csv")
        values = data[column][data[column] != "?"].to_numpy()
        codes = h.codes(values, name)
        assert (h.leaves[codes] == values).all()
        assert h.count[h.root] == h.n_leaves and h.labels[h.root] == "*"


def test_value_missing_from_hierarchy_is_located(tmp_path: Path) -> None:
    path = tmp_path / "work.csv"
    path.write_text(WORK)
    h = read_hierarchy(path)
    with pytest.raises(InputError, match=r"value 'Never-worked' of column 'w' \(row 3\)"):
        h.codes(np.array(["Private", "State-gov", "Never-worked"]), "w")


def test_cli_bad_hierarchy_exit_2_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    pd.DataFrame({"w": ["Private", "Local-gov"] * 5, "a": range(10)}).to_csv(table, index=False)
    bad = tmp_path / "work.csv"
    bad.write_text(WORK + "Private;Government;*\n")
    out = tmp_path / "rel.csv"
    args = ["anonymize", str(table), "-o", str(out), "--k", "2", "--qi", "w,a"]
    code = main([*args, "--numeric", "a", "--hierarchy", f"w={bad}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [
        "anonymatch: error: hierarchy work.csv:8: leaf 'Private' is listed twice (first on line 1)"
    ]
    assert not out.exists()
    code = main([*args, "--ordinal", "a=0|1|2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "value '3' of ordinal quasi-identifier 'a' (row 4) is not in its order" in err[0]
    assert not out.exists()


# ------------------------------------------------------------------ random trees


@st.composite
def trees(draw: st.DrawFn) -> str:
    """The text of a random valid hierarchy: leaves v0…, 1–3 levels of groups, then ``*``."""
    n = draw(st.integers(2, 12))
    groups = list(range(n))
    labels = [[f"v{i}" for i in range(n)]]
    parents: list[list[int]] = []
    for depth in range(draw(st.integers(1, 3))):
        width = draw(st.integers(1, max(1, len(set(groups)))))
        up = [draw(st.integers(0, width - 1)) for _ in range(max(groups) + 1)]
        parents.append(up)
        groups = [up[g] for g in groups]
        labels.append([f"g{depth}_{g}" for g in groups])
    lines = [";".join([*(level[i] for level in labels), "*"]) for i in range(n)]
    return "\n".join(lines) + "\n"


def brute_lowest(h: Hierarchy, leaves: set[int]) -> int:
    """The node with the fewest leaves among those covering ``leaves`` (lowest level on ties)."""
    best = None
    for v in range(len(h.labels)):
        under = set(h.node_leaves[[v]].indices.tolist())
        if leaves <= under:
            key = (len(under), h.level[v])
            if best is None or key < best[0]:
                best = (key, v)
    assert best is not None
    return best[1]


@settings(max_examples=60, deadline=None)
@given(trees(), st.data())
def test_lowest_nodes_match_brute_force(text: str, data: st.DataObject) -> None:
    h = parse_hierarchy(text)
    rows = data.draw(
        st.lists(st.sets(st.integers(0, h.n_leaves - 1), min_size=1), min_size=1, max_size=8)
    )
    m = sp.lil_array((len(rows), h.n_leaves), dtype=np.int8)
    for r, row in enumerate(rows):
        for c in row:
            m[r, c] = 1
    got = h.lowest_nodes(sp.csr_array(m))
    for r, row in enumerate(rows):
        want = brute_lowest(h, row)
        assert h.count[got[r]] == h.count[want]
        assert set(h.node_leaves[[got[r]]].indices) == set(h.node_leaves[[want]].indices)
    closed = h.close(sp.csr_array(m))
    for r, row in enumerate(rows):
        assert set(row) <= set(closed[[r]].indices)


# ------------------------------------------------------------------ NCP and grammar


def test_ncp_of_nodes_worked_example() -> None:
    """|A| = 7 leaves. ``~Government`` (3 leaves): (3 − 1)/(7 − 1) = 1/3; a leaf 0; ``*`` 1;
    ``Without-pay`` (one-leaf node, shown as the leaf) 0. Ordinal a|b|c|d|e, cell b..d:
    (3 − 1)/(5 − 1) = 1/2 even if the data never shows a or e."""
    h = parse_hierarchy(WORK, "work.csv")
    types = build_types({"o": "a|b|c|d|e"}, hierarchies={"w": h})
    frame = pd.DataFrame(
        {"w": ["Federal-gov", "Local-gov", "State-gov", "Private"], "o": ["b", "c", "d", "c"]}
    )
    schema = Schema.build(["w", "o"], types=types)
    enc = encode_qi(frame, schema)
    release = pd.DataFrame({"w": ["~Government", "Private", "*", "Private"], "o": ["b..d"] * 4})
    cells = parse_cells(release, enc)
    loss = information_loss(cells, enc)
    assert loss.ncp["w"] == pytest.approx((2 / 6 + 0 + 1 + 0) / 4)
    assert loss.ncp["o"] == pytest.approx(0.5)
    assert loss.gcp == pytest.approx((loss.ncp["w"] + 0.5) / 2)


def test_node_labels_that_look_like_leaves_round_trip(tmp_path: Path) -> None:
    """Node ``a`` covers {b, c} while a leaf is also called ``a``; a leaf ``~x`` starts with
    the marker; a node label holds ``|``. CSV and Parquet read back the same leaf sets."""
    text = "a;x|y;*\nb;a;*\nc;a;*\n~x;x|y;*\n"
    h = parse_hierarchy(text)
    schema = Schema.build(["w"], types=build_types(hierarchies={"w": h}))
    enc = encode_qi(pd.DataFrame({"w": ["a", "b", "c", "~x"]}), schema)
    sets = [{"a"}, {"b", "c"}, {"a", "~x"}, {"~x"}, {"a", "b"}]
    code = {v: i for i, v in enumerate(enc.cat_domains[0])}
    m = sp.lil_array((len(sets), enc.cat_card[0]), dtype=np.int8)
    for r, row in enumerate(sets):
        for v in row:
            m[r, code[v]] = 1
    cells = GeneralizedQI(
        np.empty((5, 0)),
        np.empty((5, 0)),
        np.zeros((5, 0), bool),
        (h.close(sp.csr_array(m)),),
        np.zeros((5, 1), bool),
    )
    text_cells = format_cells(cells, enc)["w"]
    assert text_cells == ["a", "~a", "~x\\|y", "\\~x", "*"]
    back = parse_cells(pd.DataFrame({"w": text_cells}), enc)
    assert back.cat_star[:, 0].tolist() == [False, False, False, False, True]
    for r in range(4):
        assert set(back.cat_sets[0][[r]].indices) == set(cells.cat_sets[0][[r]].indices)
    path = tmp_path / "r.parquet"
    pq.write_table(release_arrow_table(pd.DataFrame({"w": text_cells}), cells, enc), path)
    typed = parse_cells(pd.read_parquet(path), enc)
    assert typed.cat_star[:, 0].tolist() == back.cat_star[:, 0].tolist()
    for r in range(4):
        assert set(typed.cat_sets[0][[r]].indices) == set(back.cat_sets[0][[r]].indices)
    with pytest.raises(InputError, match="not a node"):
        parse_cells(pd.DataFrame({"w": ["~nope"] * 4}), enc)
    plain = encode_qi(pd.DataFrame({"w": ["a", "b", "c", "~x"]}), Schema.build(["w"]))
    with pytest.raises(InputError, match="names a hierarchy node"):
        parse_cells(pd.DataFrame({"w": ["~a"] * 4}), plain)


def test_ordinal_labels_with_dots_and_bad_cells() -> None:
    scale = OrdinalScale(("1..2", "3", "4..5"))
    lo, hi = scale.parse(pd.Series(["1..2", "1..2..4..5", "3..4..5"]), "o")
    assert lo.tolist() == [0, 0, 1] and hi.tolist() == [0, 2, 2]
    with pytest.raises(InputError, match="malformed ordinal cell '3..1..2'"):
        scale.parse(pd.Series(["3..1..2"]), "o")


@pytest.mark.parametrize("granularity", GRANULARITIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stamps=st.lists(
        st.datetimes(min_value=pd.Timestamp("1900-01-01"), max_value=pd.Timestamp("2100-12-31")),
        min_size=1,
        max_size=5,
    )
)
def test_date_labels_round_trip(granularity: str, stamps: list[object]) -> None:
    scale = DateScale(granularity)
    periods = scale.encode(pd.Series([str(s) for s in stamps]), "d")
    labels = scale.text(periods)
    lo, hi = scale.parse(pd.Series(labels), "d")
    assert lo.tolist() == periods.tolist() == hi.tolist()
    for s, p in zip(stamps, periods, strict=True):  # the period's start is ≤ the instant
        assert scale.start(int(p)) <= pd.Timestamp(s) < scale.start(int(p) + 1)


# ------------------------------------------------------------------ freeform cost


def test_tree_weights_are_the_loss_increase() -> None:
    h = parse_hierarchy(WORK)
    schema = Schema.build(["w"], types=build_types(hierarchies={"w": h}))
    values = ["Private", "Self-emp-inc", "Federal-gov", "Without-pay"]
    enc = encode_qi(pd.DataFrame({"w": values}), schema)
    trees = TreeTables.build(enc)
    level = np.array([[0], [1], [0], [0]])  # record 1 shows ~Non-Government (3 leaves)
    member = [np.eye(4, dtype=bool)]
    cells = PublishedCells(np.empty((4, 0)), np.empty((4, 0)), member, enc.cat, level)
    w = gcp_increase_weights(enc, cells, trees, enc.cat)
    shown = [1, 3, 1, 1]
    for i in range(4):
        for j in range(4):
            rep = enc.cat[j, 0]
            node = h.anc[rep, level[j, 0]]
            want_node = h.lowest_nodes(
                sp.csr_array(
                    h.node_leaves[[node]].toarray() | h.node_leaves[[enc.cat[i, 0]]].toarray()
                )
            )[0]
            assert w[i, j] == pytest.approx((h.count[want_node] - shown[j]) / 6)


# ------------------------------------------------------------------ every method verified

METHODS = names(typed=True)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=trees(), data=st.data())
@pytest.mark.parametrize("method", METHODS)
def test_every_method_release_verifies(method: str, text: str, data: st.DataObject) -> None:
    h = parse_hierarchy(text, "h.csv")
    n = data.draw(st.integers(6, 8 if method == "mip" else 14))
    k = data.draw(st.integers(2, 3))
    pick = st.lists(st.integers(0, h.n_leaves - 1), min_size=n, max_size=n)
    order = ("lo", "mid", "hi", "top")
    frame = pd.DataFrame(
        {
            "w": h.leaves[data.draw(pick)],
            "o": [order[i] for i in data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))],
            "d": [
                f"2018-{m:02d}-{d:02d}"
                for m, d in data.draw(
                    st.lists(
                        st.tuples(st.integers(1, 12), st.integers(1, 28)), min_size=n, max_size=n
                    )
                )
            ],
            "x": data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)),
            "s": range(n),
        }
    )
    cells_mode = data.draw(st.sampled_from(["node", "set"]))
    types = build_types({"o": "|".join(order)}, {"d": "month"}, {"w": h}, cells_mode)
    qi = ["w", "o", "d", "x"]
    release = anonymize(
        frame,
        k,
        qi,
        numeric=["x"],
        sensitive=["s"],
        method=method,
        seed=1,
        types=types,
        time_limit=2.0,
        l=1,  # each method's own graph: s unprotected (no default ℓ = 2)
    )
    schema = Schema.build(qi, ["x"], ["s"], types=types)
    assert verify_release(release.table, frame, ReleaseCheck.of(schema, dict(k=k))).passed
    assert evaluate_release(release.table, frame, ReleaseCheck.of(schema)).gcp == pytest.approx(
        release.report["loss"]["gcp"]  # type: ignore[index]
    )
    shown = release.table["w"].astype(str)
    if cells_mode == "node":
        for cell in shown:
            assert cell == "*" or cell.startswith("~") or cell in set(h.leaves)
    assert release.table["d"].str.match(r"^2018-\d\d(\.\.2018-\d\d)?$").all()


# ------------------------------------------------------------------ command line


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_cli_round_trip_with_typed_qis(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(3)
    n = 40
    leaves = ["Private", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov"]
    table = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "w": rng.choice(leaves, n),
            "inst": rng.choice(["1+", "10+", "1,000+", "10,000+"], n),
            "when": [f"January {d}, 2018" for d in rng.integers(1, 29, n)],
            "age": rng.integers(20, 60, n),
            "s": rng.integers(0, 3, n),
        }
    ).to_csv(table, index=False)
    hier = tmp_path / "work.csv"
    hier.write_text(WORK)
    typed = [
        "--qi",
        "w,inst,when,age",
        "--numeric",
        "age",
        "--hierarchy",
        f"w={hier}",
        "--ordinal",
        "inst=1+|10+|100+|1,000+|10,000+",
        "--date",
        "when=day",
    ]
    out = tmp_path / f"rel.{suffix}"
    report = tmp_path / "rel.json"
    code = main(
        [
            "anonymize",
            str(table),
            "-o",
            str(out),
            "--k",
            "4",
            "--seed",
            "2",
            "--report",
            str(report),
            "-q",
            *typed,
        ]
    )
    assert code == 0, capsys.readouterr().err
    params = json.loads(report.read_text())["parameters"]
    assert params["ordinal"]["inst"][0] == "1+" and params["dates"] == {"when": "day"}
    assert params["hierarchies"]["w"]["file"] == "work.csv" and params["numeric"] == ["age"]
    capsys.readouterr()
    assert main(["verify", str(table), str(out), "--k", "4", *typed]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["evaluate", str(table), str(out), "--json", *typed]) == 0
    gcp = json.loads(capsys.readouterr().out)[str(out)]["gcp"]
    assert gcp == pytest.approx(json.loads(report.read_text())["loss"]["gcp"])
    assert main(["risk", str(table), str(out), "--k", "4", "--json", *typed]) == 0
    assert json.loads(capsys.readouterr().out)["release"]["claimed_k"]["holds"]
    # without the hierarchy the ~node cells cannot be read: one line, exit 2
    plain = [a for a in typed if a not in ("--hierarchy", f"w={hier}")]
    if suffix == "csv":
        assert pd.read_csv(out)["w"].str.startswith("~").any()  # nodes were published
        assert main(["verify", str(table), str(out), "--k", "4", *plain]) == 2
        assert "names a hierarchy node" in capsys.readouterr().err


def test_streamed_path_with_typed_qis(tmp_path: Path) -> None:
    """Chunks encoded separately and merged (``concat_encoded``) keep the hierarchy domain, the
    ordinal span and the date periods; the partitioned release verifies globally and blocked."""
    from anonymatch.tables.streamed import verify_file
    from tests.factories import stream_file as anonymize_file

    rng = np.random.default_rng(5)
    n = 120
    h = parse_hierarchy(WORK, "work.csv")
    table = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "w": rng.choice(h.leaves[:6], n),
            "o": rng.choice(["lo", "mid", "hi"], n),
            "d": [f"2019-{m:02d}-03" for m in rng.integers(1, 13, n)],
            "x": rng.integers(0, 50, n),
        }
    ).to_csv(table, index=False)
    types = build_types({"o": "lo|mid|hi|top"}, {"d": "quarter"}, {"w": h})
    schema = Schema.build(["w", "o", "d", "x"], ["x"], types=types)
    out = tmp_path / "rel.csv"
    report = anonymize_file(
        table, out, 3, schema, partition_size=40, chunk_rows=25, seed=4, executor="inline"
    )
    parts = report["parameters"]["partitions"]  # type: ignore[index]
    release = pd.read_csv(out, dtype=str)
    assert release["d"].str.match(r"^2019Q\d(\.\.2019Q\d)?$").all()
    original = pd.read_csv(table, dtype=str)
    check = ReleaseCheck.of(schema, dict(k=3))
    assert verify_release(release, original, check).passed
    assert verify_file(table, out, check, parts, execution=INLINE)["passed"]  # type: ignore[arg-type]
    loss = evaluate_release(release, original, ReleaseCheck.of(schema))
    assert loss.gcp == pytest.approx(report["loss"]["gcp"])  # type: ignore[index]


def test_arx_exports_without_node_marks_verify(tmp_path: Path) -> None:
    """Issue 25: a release written by ARX shows its nodes' labels without ``~``; given the
    hierarchy, the verifier reads them as nodes (a leaf label stays the leaf)."""
    tree = tmp_path / "work.csv"
    tree.write_text(WORK)
    rng = np.random.default_rng(2)
    leaves = [line.split(";")[0] for line in WORK.splitlines()]
    frame = pd.DataFrame({"work": rng.choice(leaves, 60), "age": rng.integers(20, 60, 60)})
    types = build_types(hierarchies={"work": tree})
    schema = Schema.build(["work", "age"], ["age"], types=types)
    release = anonymize(frame, 4, ["work", "age"], ["age"], types=types, seed=3).table
    assert release["work"].str.startswith("~").any()
    arx = release.assign(work=release["work"].str.replace("~", "", regex=False))
    assert verify_release(arx, frame, ReleaseCheck.of(schema, dict(k=4))).passed
    plain = Schema.build(["work", "age"], ["age"])  # without the hierarchy: a hint, not a pass
    assert not verify_release(arx, frame, ReleaseCheck.of(plain, dict(k=4))).passed


def test_read_release_gives_node_leaves_or_node_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: a ``~node`` cell reads back as the leaves under it (listed by the sidecar with
    the hierarchy's digest), or as a HierarchyNode beyond the sidecar's limit — never as the
    literal label."""
    from anonymatch.tables.io import sidecar
    from anonymatch.tables.io.cells import write_release
    from anonymatch.tables.io.release import HierarchyNode, read_release

    tree = tmp_path / "work.csv"
    tree.write_text(WORK)
    rng = np.random.default_rng(2)
    leaves = [line.split(";")[0] for line in WORK.splitlines()]
    frame = pd.DataFrame({"work": rng.choice(leaves, 40), "age": rng.integers(20, 60, 40)})
    types = build_types(hierarchies={"work": tree})
    release = anonymize(frame, 4, ["work", "age"], ["age"], types=types, seed=3)
    out = tmp_path / "r.csv"
    write_release(out, release.table, release.cells, release.qi)
    side = json.loads((tmp_path / "r.csv.schema.json").read_text())
    work = next(c for c in side["columns"] if c["name"] == "work")
    assert work["hierarchy"]["file"] == "work.csv" and "path" not in work["hierarchy"]
    typed = read_release(out)
    marked = release.table["work"].str.startswith("~")
    assert marked.any()
    for cell, value in zip(release.table["work"][marked], typed["work"][marked], strict=True):
        label = cell[1:]
        expected = {ln.split(";")[0] for ln in WORK.splitlines() if f";{label};" in ln}
        assert value == frozenset(expected)
    monkeypatch.setattr(sidecar, "NODE_MAP_LIMIT", 1)
    write_release(out, release.table, release.cells, release.qi)
    nodes = read_release(out)["work"][marked]
    assert all(isinstance(v, HierarchyNode) and v.hierarchy == "work.csv" for v in nodes)
