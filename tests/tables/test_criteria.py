"""The table criteria's declarations (``tables.models.CRITERIA``): what derives from them, and
each criterion's manifest claim read back as the parameters that made it (issue 35, item 2)."""

from __future__ import annotations

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonymatch.cli import cli, load_all_commands
from anonymatch.core.errors import InputError
from anonymatch.tables.job import PARAMETERS, ReleaseCheck
from anonymatch.tables.models import CRITERIA, RELATIONAL_CRITERIA
from anonymatch.tables.models.disclosure import DEFAULT_L, DIVERSITY, L, SensitiveModels, T
from anonymatch.tables.models.levels import K, KAnonymity, PerRecordLevels

COLUMNS = ["s0", "s1", "s2"]


def _options(name: str) -> dict[str, click.Option]:
    load_all_commands()
    command = cli.commands[name]
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name}


@pytest.mark.parametrize("command", ["anonymize", "verify"])
def test_every_parameter_is_a_flag_of_the_table_commands(command: str) -> None:
    options = _options(command)
    for p in CRITERIA.parameters():
        option = options[p.name]
        assert p.flag in option.opts and option.help == p.help
        assert option.default == p.default
        assert (p.short in option.opts) if p.short else len(option.opts) == 1


@pytest.mark.parametrize("command", ["anonymize-rt", "verify-rt"])
def test_relational_commands_take_the_relational_criteria_only(command: str) -> None:
    options = _options(command)
    relational = {p.name for p in RELATIONAL_CRITERIA.parameters()}
    assert relational <= set(options)
    assert "k_column" not in relational and "k_column" not in options  # tables only


def test_job_keywords_come_from_the_registry() -> None:
    for p in CRITERIA.parameters():
        assert PARAMETERS[p.name] == p.default


per_column = st.dictionaries(st.sampled_from(COLUMNS), st.integers(1, 9), min_size=1)


@given(per_column)
def test_a_per_column_value_parses_back(values: dict[str, int]) -> None:
    text = ",".join(f"{c}={v}" for c, v in values.items())
    assert L.parse(text) == values
    assert L.check(L.parse(text)) == values


def test_bad_values_name_the_parameter() -> None:
    with pytest.raises(InputError, match="`l` expects a number or column=number pairs"):
        L.parse("s0=x")
    with pytest.raises(InputError, match=r"`l\['s0'\]` must be an integer of at least 1"):
        L.check({"s0": 0})
    with pytest.raises(InputError, match="`t` must be a number"):
        T.check("0.5")
    with pytest.raises(InputError, match="`diversity` must be one of distinct, entropy"):
        DIVERSITY.check("maximal")
    with pytest.raises(InputError, match="`k` must be an integer of at least 1, got True"):
        K.check(True)


models = st.fixed_dictionaries(
    {
        "l": st.none()
        | st.integers(1, 4)
        | st.dictionaries(st.sampled_from(COLUMNS), st.integers(1, 4)),
        "t": st.none()
        | st.dictionaries(st.sampled_from(COLUMNS), st.sampled_from([0.2, 0.5, 1.0])),
        "diversity": st.sampled_from(["distinct", "entropy"]),
    }
)


@given(models, st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True))
def test_the_sensitive_claim_reads_back_as_the_same_models(
    values: dict[str, object], sensitive: list[str]
) -> None:
    if isinstance(values["l"], dict):
        values["l"] = {c: v for c, v in values["l"].items() if c in sensitive} or None
    if isinstance(values["t"], dict):
        values["t"] = {c: v for c, v in values["t"].items() if c in sensitive} or None
    ells = values["l"]
    if ells is None or 1 in (ells.values() if isinstance(ells, dict) else [ells]):
        values["diversity"] = "distinct"  # entropy asks for l >= 2 wherever l is given
    made = CRITERIA.build({**values, "sensitive": sensitive})
    criterion = next(c for c in made if isinstance(c, SensitiveModels))
    guarantee = criterion.describe()
    again = SensitiveModels.from_values(
        {**SensitiveModels.claimed_in(guarantee, {"sensitive": sensitive}), "sensitive": sensitive}
    )
    assert again == criterion
    # a named column without l or t gets the default, and only there
    defaulted = {m.column for m in criterion.models if m.default}
    named = set(ells) if isinstance(ells, dict) else set(sensitive) if ells else set()
    named |= set(values["t"] or {})
    assert defaulted == set(sensitive) - named
    assert all(m.l == DEFAULT_L for m in criterion.models if m.default)


@given(st.integers(1, 500))
def test_the_level_claims_read_back(k: int) -> None:
    for criterion in (KAnonymity(k), PerRecordLevels(f"level{k}")):
        claimed = CRITERIA.claims(criterion.describe())
        rebuilt = [c for c in CRITERIA.build(claimed) if c.level]
        assert rebuilt == [criterion]


def test_the_release_check_holds_what_the_registry_built() -> None:
    check = ReleaseCheck.build({"qi": ["a"], "sensitive": ["s0", "s1"], "k": 3, "l": {"s0": 1}})
    assert check.level == KAnonymity(3)
    assert [m.column for m in check.models] == ["s1"] and check.unprotected == ("s0",)
    assert check.sensitive_models.describe() == {
        "sensitive": [{"column": "s1", "diversity": "distinct", "l": DEFAULT_L, "default": True}],
        "unprotected": ["s0"],
    }
