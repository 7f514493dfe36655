"""The web app's relational runs (people with a row and a set) without a browser: an items
table uploaded beside the people table turns the form into an ``anonymize-rt`` job; the run is
verified, the result page shows the relational utility and the risk on the joint graph, the
release downloads as JSON Lines without the id column, the job file reproduces the run and
holds no seed; a bad items table or column choice is one line and leaves no file behind."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

pytest.importorskip("starlette", reason="the ui extra (starlette) is not installed")
pytest.importorskip("httpx", reason="starlette's test client needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402, F401

from anonymatch.ui.app import AppState  # noqa: E402
from tests.ui.test_app import files, login, make_app, wait  # noqa: E402


def people_and_items(n: int = 24) -> tuple[bytes, bytes]:
    """A small generated pair: n people (pid, age, sex, town) and their codes (−1: none)."""
    people = ["pid,age,sex,town"] + [
        f"p{i},{20 + (7 * i) % 50},{'FM'[i % 2]},{'abc'[i % 3]}" for i in range(n)
    ]
    items = ["pid,code"] + [f"p{i},{c}" for i in range(n) for c in ("x", "y", "z")[: i % 3]]
    items += ["p0,-1", "p3,-1"]
    return ("\n".join(people) + "\n").encode(), ("\n".join(items) + "\n").encode()


def send(client: TestClient, csrf: str, items: bytes | None = None) -> object:  # noqa: F811
    people, pairs = people_and_items()
    upload = {"file": ("people.csv", people), "items": ("codes.csv", items or pairs)}
    return client.post("/upload", data={"header": "on", "sep": "auto", "csrf": csrf},
                       files=upload)  # fmt: skip


@pytest.fixture()
def app(tmp_path: Path):  # noqa: ANN201
    client, state = make_app(tmp_path / "private")
    yield client, state
    state.stop_all()


def test_relational_round_trip(app: tuple[TestClient, AppState], tmp_path: Path) -> None:
    client, state = app
    csrf = login(client)
    page = send(client, csrf)
    assert page.url.path == "/dataset", page.text  # type: ignore[attr-defined]
    text = page.text  # type: ignore[attr-defined]
    assert 'id="items"' in text and "codes.csv" in text
    assert re.search(r'name="id_column">\s*<option value="pid" selected', text)
    assert '<option value="code" selected' in text
    assert 'id="population"' in text and 'name="delta_max"' in text  # criteria offered
    assert 'name="sampling_fraction"' not in text  # the table's population figures are not
    form = {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "role:sex": "qi",
            "type:sex": "categorical", "role:town": "other", "id_column": "pid",
            "item_column": "code", "item_na": "-1", "k": "3", "method": "hungarian"}  # fmt: skip
    client.post("/run", data=form)
    status = wait(client)
    assert status["state"] == "done", status
    result = client.get("/result").text
    assert "PASS" in result and "k-anonymity, k = 3" in result
    assert 'id="utility-relational"' in result and "Relational GCP" in result
    assert "Prosecutor risk: max <b>0.3333</b>" in result or "max <b>0.3" in result
    assert "JSON Lines" in result
    lines = client.get("/download/release").text.splitlines()
    assert len(lines) == 24
    record = json.loads(lines[0])
    assert {"age", "sex", "items", "uncertain", "max_errors", "town"} <= set(record)
    assert "pid" not in record and "-1" not in str(record["items"])
    job = client.get("/download/job").text
    assert 'kind = "relational"' in job and 'items = "codes.csv"' in job
    assert "seed" not in job
    manifest = client.get("/download/manifest").json()
    assert manifest["data_kind"] == "relational" and manifest["verification"]["passed"]
    assert manifest["randomness"]["source"] != "seed" and "seed" not in json.dumps(manifest)
    report = client.get("/report").text
    assert "joint" in report
    assert all(p.stat().st_mode & 0o077 == 0 for p in files(state))  # private files


def test_a_bad_items_table_is_one_line(app: tuple[TestClient, AppState]) -> None:
    client, state = app
    csrf = login(client)
    page = send(client, csrf, b"who,code\nq1,x\nq2,y\n")
    assert page.url.path == "/"  # type: ignore[attr-defined]
    error = page.text.split('<p class="error" id="error">')[1].split("</p>")[0]  # type: ignore[attr-defined]
    assert "shares no column" in error and "\n" not in error.strip()
    assert not [p for p in files(state) if p.name.startswith("upload-")]  # nothing kept
    assert send(client, csrf).url.path == "/dataset"  # type: ignore[attr-defined]
    form = {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "id_column": "pid",
            "item_column": "pid", "k": "3", "method": "classes"}  # fmt: skip
    page = client.post("/run", data=form)
    assert "must be another column" in page.text  # refused before any run
    assert client.get("/status").json()["state"] == "none"


def test_a_codes_table_is_read_without_role_inference(tmp_path: Path) -> None:
    """An items table of ids and codes has no quasi-identifier-like column (INFORMS' has
    thousands of ids and hundreds of codes): it is read without the inference, which would
    refuse it."""
    from anonymatch.core.errors import InputError
    from anonymatch.ui.data import Dataset, load

    path = tmp_path / "codes.csv"
    path.write_text("pid,code\n" + "".join(f"p{i},c{i}\n" for i in range(150)))
    with pytest.raises(InputError, match="quasi-identifier"):
        load(Dataset(path, "codes.csv", path.stat().st_size))
    items = load(Dataset(path, "codes.csv", path.stat().st_size), infer=False)
    assert items.columns == ["pid", "code"] and items.rows == 150


def test_the_id_column_is_guessed_as_init_guesses_it(tmp_path: Path) -> None:
    """INFORMS-like tables whose shared columns are the dwelling (DUID, several people each)
    before the person (DUPERSID): the form's first choice is DUPERSID, as ``init`` drafts it
    (issue 37: the form chose DUID and its first run failed)."""
    import pandas as pd

    from anonymatch.app.infer import infer_job, relational_job
    from anonymatch.ui.data import Dataset, load
    from anonymatch.ui.relational import attach_items

    people, codes = tmp_path / "people.csv", tmp_path / "codes.csv"
    pd.DataFrame({"DUID": [10 + i // 3 for i in range(60)],
                  "DUPERSID": [f"{10 + i // 3}{i % 3:03d}" for i in range(60)],
                  "age": [20 + i % 40 for i in range(60)], "sex": list("FM") * 30}
                 ).to_csv(people, index=False)  # fmt: skip
    pd.DataFrame({"DUID": [10 + i // 6 for i in range(120)],
                  "DUPERSID": [f"{10 + i // 6}{(i // 2) % 3:03d}" for i in range(120)],
                  "code": [f"c{i % 7}" for i in range(120)]}
                 ).to_csv(codes, index=False)  # fmt: skip
    form = attach_items(
        load(Dataset(people, "people.csv", people.stat().st_size)),
        load(Dataset(codes, "codes.csv", codes.stat().st_size), infer=False),
    )
    drafted = relational_job(infer_job(people), people, codes)
    assert form.id_column == drafted.input.id_column == "DUPERSID"
    assert form.item_column == "code" and form.roles["DUPERSID"] == "identifier"


def test_relational_criteria_against_an_uploaded_population(
    app: tuple[TestClient, AppState],
) -> None:
    """The form's criteria fields make a relational release meet them against the uploaded
    register (on the QI cells); without a register the form says so in one line."""
    client, _ = app
    csrf = login(client)
    send(client, csrf)
    people, _ = people_and_items()
    register = (
        people
        + "".join(
            f"q{i},{20 + (3 * i) % 50},{'FM'[i % 2]},{'abc'[i % 3]}\n" for i in range(60)
        ).encode()
    )
    form = {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "role:sex": "qi",
            "type:sex": "categorical", "role:town": "other", "id_column": "pid",
            "item_column": "code", "item_na": "-1", "k": "3", "method": "hungarian",
            "delta_max": "0.5"}  # fmt: skip
    page = client.post("/run", data=form)
    assert "delta-presence: upload the population table" in page.text  # type: ignore[attr-defined]
    client.post("/run", data=form, files={"population": ("register.csv", register)})
    status = wait(client)
    assert status["state"] == "done", status
    manifest = client.get("/download/manifest").json()
    assert manifest["guarantee"]["presence"]["delta_max"] == 0.5
    assert manifest["verification"]["presence"]["passed"]
    assert manifest["verification"]["presence"]["achieved_max"] <= 0.5
