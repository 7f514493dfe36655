"""Hostile files around a run, through the fuzzing contract (issue 24 items 2 and 7).

- job files: random TOML trees, alone or grafted onto a valid job, deep nesting, odd bytes;
- manifests: random JSON edits of real table and transaction manifests (a key dropped, a value
  of another type, a huge number, deep nesting, the text cut short) for ``verify --manifest``
  and ``report``;
- releases: random cells and sidecar edits for the release readers (verify, evaluate, risk,
  check-kl, report);
- the run's file set: random assignments of a few names to the input, the release, its
  sidecar, the manifest, the seed file, the HTML report, a hierarchy and the job file — a run
  either refuses and changes nothing, or writes only its outputs and no input;
- command-line values: odd ``--sep``, date QIs in mixed time zones.

Each test runs ``ANONYMATCH_FUZZ_EXAMPLES`` examples (6 by default, derandomized: seconds).
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import json
import math
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.contract import FUZZ, case_dir, check, run


def _table(path: Path, n: int = 24) -> Path:
    pd.DataFrame(
        {
            "age": [20 + (7 * i) % 40 for i in range(n)],
            "sex": ["FM"[i % 2] for i in range(n)],
            "zip": ["abc"[i % 3] for i in range(n)],
            "income": [i % 5 for i in range(n)],
        }
    ).to_csv(path, index=False)
    return path


_BASE: dict[str, Path] = {}


def _base() -> Path:
    """A directory holding a table, its release (with sidecar) and manifest, a transaction
    file with its release and manifest: made once per session, copied into each case."""
    if "dir" not in _BASE:
        d = Path(tempfile.mkdtemp(prefix="fuzz-base-"))
        atexit.register(shutil.rmtree, d, True)
        _table(d / "in.csv")
        args = ["anonymize", d / "in.csv", "-o", d / "rel.csv", "--report", d / "m.json"]
        outcome, _ = run([*args, "--k", 3, "--qi", "age,sex,zip", "--numeric", "age", "-q"])
        assert outcome.code == 0, outcome.errors
        (d / "t.dat").write_text("".join(f"{i % 4} {4 + i % 3}\n" for i in range(20)))
        args = ["anonymize-sets", d / "t.dat", "-o", d / "t.jsonl", "--report", d / "tm.json"]
        outcome, _ = run([*args, "--k", 2, "-q"])
        assert outcome.code == 0, outcome.errors
        _BASE["dir"] = d
    return _BASE["dir"]


def _case() -> Path:
    work = case_dir("fuzz-files-")
    for path in _base().iterdir():
        shutil.copy(path, work / path.name)
    return work


# -- JSON and TOML values -----------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "x", "age", "k-anonymity", "table", "..", "*", "1e400", "\\", "{"]),
    st.text(max_size=6),
)
KEYS = st.one_of(
    st.sampled_from(
        ["schema", "kind", "input", "path", "format", "sep", "columns", "age", "sex", "role",
         "type", "qi", "model", "k", "l", "t", "method", "name", "execution", "scheduler",
         "executor", "workers", "output", "report", "hierarchy", "order", "granularity", "na",
         "guarantee", "parameters", "verification", "loss", "seconds", "data_kind", "numeric"]
    ),
    st.text(max_size=5),
)  # fmt: skip
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


DEEP = st.sampled_from(["<deep 40>", "<deep 70>", "<deep 3000>"])
"""Stand-ins for :func:`_nested` values (hypothesis would print the values themselves)."""


def _deep(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("<deep "):
        return _nested(int(value[6:-1]))
    return value


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        items = [
            f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None
        ]
        return "{" + ", ".join(items) + "}"
    return '""'  # None: TOML has no null


def _toml(tree: dict[str, Any]) -> str:
    """A TOML document of ``tree`` (every table inline; None values left out)."""
    return "".join(
        f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in tree.items() if v is not None
    )


def _valid_job(work: Path) -> dict[str, Any]:
    return {
        "schema": "anonymatch-job/1",
        "kind": "table",
        "input": {"path": "in.csv"},
        "columns": {
            "age": {"role": "qi", "type": "numeric"},
            "sex": {"role": "qi"},
            "zip": {"role": "qi"},
        },
        "model": {"k": 3},
        "output": {"path": str(work / "out.csv"), "report": str(work / "out.json")},
    }


def _graft(tree: Any, path: list[Any], value: Any) -> Any:
    """``tree`` with the value at ``path`` replaced (the path cut where the tree ends)."""
    if not path or not isinstance(tree, dict | list) or not tree:
        return _deep(value)
    out = copy.copy(tree)
    key = path[0] % len(tree) if isinstance(tree, list) else list(tree)[path[0] % len(tree)]
    out[key] = _graft(tree[key], path[1:], value)
    return out


PATHS = st.lists(st.integers(0, 50), min_size=1, max_size=4)


@FUZZ
@given(
    tree=st.one_of(
        st.dictionaries(KEYS, JSON_VALUES, max_size=6),
        st.tuples(PATHS, st.one_of(JSON_VALUES, DEEP)),
        st.tuples(PATHS, st.none(), st.text(max_size=3)),  # a key added
    ),
    raw=st.sampled_from(["toml", "toml", "cut", "bytes", "deep"]),
    scheduler=st.booleans(),
)
@example(tree={}, raw="deep", scheduler=False)  # RecursionError in tomllib
@example(tree=([0], "anonymatch-job/1"), raw="toml", scheduler=True)  # a valid job's scheduler
def test_fuzz_job_files(tree, raw, scheduler) -> None:  # type: ignore[no-untyped-def]
    """anonymize/verify --config on random job trees: the contract, and a job-file scheduler
    never used without --scheduler on the command line."""
    work = _case()
    job = work / "job.toml"
    base = _valid_job(work)
    if isinstance(tree, tuple) and len(tree) == 2:
        data = _graft(base, tree[0], tree[1])
    elif isinstance(tree, tuple):
        data = _graft(base, tree[0][:1], {**base.get("model", {}), tree[2]: 1})
    else:
        data = tree
    data = data if isinstance(data, dict) else {"value": data}
    if scheduler:
        data = {**data, "execution": {"scheduler": "tcp://127.0.0.1:9"}}
    try:
        text = _toml(data).encode("utf-8", "surrogatepass")
    except RecursionError:  # a graft too deep for this writer: the same depth as raw text
        text = b"deep = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    if raw == "cut":
        text = text[: len(text) // 2]
    elif raw == "bytes":  # a NUL, and bytes that are not UTF-8
        text = text.replace(b'"', b"\x00", 1) + b"\xff\xfe\n"
    elif raw == "deep":
        text += b"deep = " + b"[" * 5000 + b"]" * 5000 + b"\n"
    job.write_bytes(text)
    out, report = work / "out.csv", work / "out.json"
    outcome = check("job-file", ["anonymize", "--config", job, "-q"], [out, report])
    if scheduler:  # a job's scheduler is never connected to: refused (or the job was)
        assert outcome.code != 0
    check("job-file", ["verify", "--config", job, "-q"], [])


def _edit(doc: Any, path: list[int], how: str, value: Any) -> Any:
    if how == "drop" and isinstance(doc, dict) and doc:
        key = list(doc)[path[0] % len(doc)]
        if len(path) == 1 or not isinstance(doc[key], dict | list):
            return {k: v for k, v in doc.items() if k != key}
        return {**doc, key: _edit(doc[key], path[1:], how, value)}
    return _graft(doc, path, value)


@FUZZ
@given(
    kind=st.sampled_from(["table", "table", "transactions"]),
    edits=st.lists(
        st.tuples(PATHS, st.sampled_from(["set", "set", "drop"]), st.one_of(JSON_VALUES, DEEP)),
        min_size=1,
        max_size=3,
    ),
    cut=st.one_of(st.none(), st.floats(0, 1)),
)
@example(kind="table", edits=[([0], "set", "<deep 3000>")], cut=None)  # RecursionError
@example(kind="table", edits=[([6, 0], "set", 1)], cut=None)  # parameters.qi = 1
@example(kind="table", edits=[([1], "set", [1])], cut=None)  # tool = [1]
@example(kind="transactions", edits=[([4], "set", [])], cut=0.5)  # data_kind = [], cut short
def test_fuzz_manifests(kind, edits, cut) -> None:  # type: ignore[no-untyped-def]
    """verify --manifest and report on randomly edited real manifests."""
    work = _case()
    name, original, release = (
        ("m.json", "in.csv", "rel.csv") if kind == "table" else ("tm.json", "t.dat", "t.jsonl")
    )
    doc = json.loads((work / name).read_text())
    for path, how, value in edits:
        doc = _edit(doc, path, how, value)
    try:
        text = json.dumps(doc)
    except (RecursionError, ValueError):
        text = "[" * 5000
    if cut is not None:
        text = text[: int(len(text) * cut)]
    manifest = work / "edited.json"
    manifest.write_text(text)
    html = work / "r.html"
    orig, rel = work / original, work / release
    if kind == "table":
        check("verify", ["verify", orig, rel, "--manifest", manifest, "-q"], [])
    check("report", ["report", "--manifest", manifest, orig, rel, "-o", html, "-q"], [html])
    check("report", ["report", "--manifest", manifest, "-o", html, "-q"], [html])


CELLS = st.one_of(
    st.sampled_from(
        ["", "*", "..", "5..3", "1e400..2", "-0..0", "nan", "inf..inf", "{a,b", "a|b", "~x",
         "20..", "..30", "9223372036854775807..9223372036854775808", "'=1", "F", "Q", " 25 "]
    ),
    st.text(max_size=5),
)  # fmt: skip


@FUZZ
@given(
    cells=st.lists(st.tuples(st.integers(0, 23), st.integers(0, 3), CELLS), max_size=5),
    sidecar=st.one_of(
        st.none(),
        st.tuples(PATHS, st.sampled_from(["set", "drop"]), st.one_of(JSON_VALUES, DEEP)),
    ),
)
@example(cells=[(0, 0, "1e400")], sidecar=None)  # an infinite bound (check-kl: exit 1)
@example(cells=[], sidecar=([1, 0, 0], "set", []))  # a sidecar column that is no object
def test_fuzz_release_readers(cells, sidecar) -> None:  # type: ignore[no-untyped-def]
    """The readers of a table release on random cells and sidecar edits."""
    work = _case()
    rel = work / "rel.csv"
    frame = pd.read_csv(rel, dtype=str, keep_default_na=False)
    for row, col, value in cells:
        frame.iat[row % len(frame), col % frame.shape[1]] = value
    frame.to_csv(rel, index=False)
    if sidecar is not None:
        side = work / "rel.csv.schema.json"
        doc = _edit(json.loads(side.read_text()), *sidecar)
        try:
            side.write_text(json.dumps(doc))
        except (RecursionError, ValueError):
            side.write_text("[" * 5000)
    src, schema = work / "in.csv", ["--qi", "age,sex,zip", "--numeric", "age"]
    check("verify", ["verify", src, rel, "--k", 3, *schema, "-q"])
    check("evaluate", ["evaluate", src, rel, *schema])
    check("risk", ["risk", src, rel, *schema, "--report", work / "risk.json", "-q"])
    check("check-kl", ["check-kl", rel, "--k", 2, "--known", 1, *schema, "-q"])
    html = work / "r.html"
    # the manifest names the untouched release by its SHA-256: read without the digest check
    # through --report-html, which reads the release just written
    check("report", ["report", "--manifest", work / "m.json", src, rel, "-o", html, "-q"], [html])


# -- the run's file set (item 2) ----------------------------------------------------------------

NAMES = ["in.csv", "r.csv", "r.csv.schema.json", "m.json", "s.json", "h.csv", "job.toml", "x.html"]
SIDE = ["r.csv.schema.json"] * 4 + NAMES  # the release's sidecar: the name that clashed


def _digests(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir()}


@FUZZ
@given(
    names=st.fixed_dictionaries(
        {
            "input": st.sampled_from(SIDE),
            "output": st.sampled_from(["r.csv"] * 4 + NAMES),
            "report": st.one_of(st.none(), st.sampled_from(SIDE)),
            "seed": st.one_of(st.none(), st.sampled_from(SIDE)),
            "html": st.one_of(st.none(), st.sampled_from(SIDE)),
            "tree": st.one_of(st.none(), st.sampled_from(NAMES)),
        }
    ),
    existing=st.lists(st.sampled_from(SIDE), unique=True, max_size=4),
    force=st.booleans(),
    config=st.booleans(),
)
@example(  # the sidecar of the release over an input of that name
    names={"input": "r.csv.schema.json", "output": "r.csv", "report": None, "seed": None,
           "html": None, "tree": None},
    existing=[], force=True, config=False,
)  # fmt: skip
@example(  # the seed file beside the release as its sidecar
    names={"input": "in.csv", "output": "r.csv", "report": None, "seed": "r.csv.schema.json",
           "html": None, "tree": None},
    existing=[], force=False, config=False,
)  # fmt: skip
def test_fuzz_the_file_set(names, existing, force, config) -> None:  # type: ignore[no-untyped-def]
    """A run given any assignment of a few names to its files either refuses and changes no
    file, or changes only files it was told to write (never an input, never a file it was not
    given, never an existing one without --force)."""
    work = case_dir("fuzz-files-")
    for name in {names["input"], *existing}:
        _table(work / name)
    tree = names["tree"]
    if tree is not None:
        (work / tree).write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    args = ["anonymize", work / names["input"], "-o", work / names["output"], "--k", 3]
    args += ["--qi", "age,zip", "--numeric", "age", "-q"]
    for flag, key in (("--report", "report"), ("--seed-file", "seed"), ("--report-html", "html")):
        if names[key] is not None:
            args += [flag, work / names[key]]
    if tree is not None:
        args += ["--hierarchy", f"zip={work / tree}"]
    if config:  # the job file names nothing the command line does not
        job = work / "job.toml"
        if not job.exists():
            job.write_text('schema = "anonymatch-job/1"\nkind = "table"\n[model]\nk = 3\n')
        args += ["--config", job]
    if force:
        args += ["--force"]
    before = _digests(work)
    outcome, left = run(args)
    after = _digests(work)
    assert not left, left
    assert len(outcome.errors) <= 1 and outcome.code in (0, 2, 3, 4, 5, 6), outcome.errors
    changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
    if outcome.code != 0:
        assert changed == set(), (args, outcome.errors, changed)
        return
    flags = ("-o", "--report", "--seed-file", "--report-html")
    written = {Path(str(args[i + 1])).name for i, f in enumerate(args[:-1]) if f in flags}
    if names["output"].endswith(".csv"):
        written.add(names["output"] + ".schema.json")
    read = {names["input"], *([tree] if tree else []), *(["job.toml"] if config else [])}
    assert changed <= written, (args, changed - written)
    assert not (changed & read), (args, changed & read)
    assert force or not (changed & set(before)), (args, changed & set(before))


# -- command-line values -------------------------------------------------------------------------

SEPS = st.one_of(
    st.sampled_from(["\\", "\\x", "\\x4", "\\u12", "\\N", "\\q", "ab", "é", ";;", "\\t\\t", "\\0",
                     "\\x00", "[", "(", "\\U0010ffff", "\\ud800", '"', "\\\\", "|", " "]),
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=3),
)  # fmt: skip


@FUZZ
@given(sep=SEPS)
@example(sep="\\")  # a trailing backslash (unicode_escape: exit 1)
@example(sep="a(")  # a regular expression to pandas
def test_fuzz_separators(sep) -> None:  # type: ignore[no-untyped-def]
    work = _case()
    src, rel, out = work / "in.csv", work / "rel.csv", work / "o.csv"
    schema = ["--qi", "age,sex", "--sep", sep]
    check("sep", ["anonymize", src, "-o", out, "--k", 3, *schema, "-q"], [out])
    check("sep", ["verify", src, rel, "--k", 3, *schema, "-q"])
    check("sep", ["init", src, "-o", work / "j.toml", "--sep", sep, "-q"], [work / "j.toml"])
    check("sep", ["evaluate", src, rel, *schema])


ZONES = st.sampled_from(["", "Z", "+01:00", "-05:00", "+00:00", "+05:30"])


@FUZZ
@given(
    stamps=st.lists(
        st.tuples(st.datetimes(), ZONES, st.sampled_from(["T", " "])), min_size=2, max_size=12
    ),
    granularity=st.sampled_from(["year", "month", "day", "second"]),
)
@example(  # Z beside +01:00: pandas' "Mixed timezones detected" (exit 1)
    stamps=[(datetime(2020, 1, 1), "Z", "T"), (datetime(2020, 1, 2), "+01:00", "T")],
    granularity="day",
)
def test_fuzz_date_time_zones(stamps, granularity) -> None:  # type: ignore[no-untyped-def]
    work = case_dir("fuzz-files-")
    src, out = work / "d.csv", work / "o.csv"
    text = [f"{d.isoformat(sep=s, timespec='seconds')}{z}" for d, z, s in stamps]
    pd.DataFrame({"d": text, "s": ["FM"[i % 2] for i in range(len(text))]}).to_csv(src, index=False)
    date = ["--qi", "d,s", "--date", f"d={granularity}"]
    verify = ["verify", src, out, "--k", 2, *date, "-q"]
    check("dates", ["anonymize", src, "-o", out, "--k", 2, *date, "-q"], [out], verify)
    check("dates", ["risk", src, src, *date, "-q"])
