"""The kinds' method registries (issue 23): one shape in core, capabilities declared once, and
the CLI choices, the job file's enumeration and the capability checks derived from them."""

from __future__ import annotations

import dataclasses

import click
import pytest

from anonymatch.app import jobfile
from anonymatch.cli.graphs import anonymize_graph_cmd
from anonymatch.cli.sets import anonymize_sets_cmd
from anonymatch.cli.sparse import anonymize_sparse_cmd, verify_sparse_cmd
from anonymatch.core.errors import InputError
from anonymatch.core.registry import Method, lookup, names, registry_of
from anonymatch.graphs import methods as graph_methods
from anonymatch.relational import methods as relational_methods
from anonymatch.sets import methods as set_methods
from anonymatch.sparse import methods as sparse_methods
from anonymatch.tables import methods as table_methods

REGISTRIES = {
    "table": table_methods.registry(),
    "transactions": set_methods.registry(),
    "sparse": sparse_methods.registry(),
    "graph": graph_methods.registry(),
    "relational": relational_methods.registry(),
}


def test_names_filter_by_capabilities_in_registry_order() -> None:
    table = registry_of(
        Method(name="a", summary="x", sensitive=True),
        Method(name="b", summary="y"),
        Method(name="c", summary="z", sensitive=True, streamable=True),
    )
    assert names(table) == ("a", "b", "c")
    assert names(table, sensitive=True) == ("a", "c")
    assert names(table, sensitive=True, streamable=False) == ("a",)
    assert lookup(table, "b").summary == "y"
    with pytest.raises(InputError, match="^`method` must be one of a, b, c, got 'd'"):
        lookup(table, "d")
    with pytest.raises(InputError, match="must be one of"):
        lookup(table, True)


@pytest.mark.parametrize("kind", REGISTRIES)
def test_every_method_is_a_core_method_with_a_summary(kind: str) -> None:
    for name, method in REGISTRIES[kind].items():
        assert isinstance(method, Method) and method.name == name and method.summary


@pytest.mark.parametrize("kind", REGISTRIES)
def test_registry_entries_are_keyword_only(kind: str) -> None:
    # every kind's entry type is a kw_only dataclass: an entry is built with keywords only
    entry_type = type(next(iter(REGISTRIES[kind].values())))
    assert all(f.kw_only for f in dataclasses.fields(entry_type))
    with pytest.raises(TypeError):
        entry_type("x", "y")


def test_the_kinds_declare_their_capabilities() -> None:
    assert set_methods.names(sensitive=True) == ("gray-tsp", "gray", "cahd")
    assert set_methods.names(anonymity=True) == ("gray-tsp", "gray")
    assert set_methods.names(km=True) == ("km-hypergraph",)
    assert sparse_methods.names(streamable=True) == ("smooth", "nonsmooth")
    assert sparse_methods.names(epsilon=True) == ("rr",)
    assert sparse_methods.names(verified=False) == ("rr",)
    assert sparse_methods.rules() == ("smooth", "nonsmooth")
    assert graph_methods.names() == ("graph-kmeans-majority",)
    assert table_methods.names(levels=True) == ("bmatching", "bmatching-symmetric", "agglomerative")
    assert table_methods.names(missing=False) == ("mip",)
    assert table_methods.names(partitioned=False) == ("mondrian", "ring")
    assert relational_methods.names(classes=True) == ("classes",)
    assert relational_methods.names(step="hungarian") == ("hungarian",)
    assert sparse_methods.names(vote="majority") == ("smooth",)
    assert graph_methods.names(neighbourhood="closed") == ("graph-kmeans-majority",)
    assert set_methods.names(command="anonymize-km", sensitive=True) == ()


def test_filters_are_explicit_keyword_only_parameters() -> None:
    # a filter is a typed parameter (None: any): a capability the kind lacks, or a positional
    # value, is refused rather than read as an attribute
    with pytest.raises(TypeError):
        graph_methods.names(sensitive=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        set_methods.names(streamable=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        table_methods.names(True)  # type: ignore[misc]
    assert table_methods.names(levels=None) == table_methods.names()


def _choices(command: click.Command, option: str) -> tuple[str, ...]:
    (param,) = [p for p in command.params if p.name == option]
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


def test_cli_choices_come_from_the_registries() -> None:
    assert _choices(anonymize_sets_cmd, "method") == set_methods.names(command="anonymize-sets")
    assert _choices(anonymize_sparse_cmd, "method") == sparse_methods.names()
    assert _choices(verify_sparse_cmd, "rule") == sparse_methods.rules()
    assert not [p for p in anonymize_graph_cmd.params if p.name == "method"]  # one method


def test_the_job_file_enumeration_comes_from_the_registries() -> None:
    assert jobfile.methods() == jobfile.METHODS
    assert jobfile.METHODS["table"] == (*table_methods.names(), "kl-hypergraph")
    for kind, table in REGISTRIES.items():
        if kind != "table":  # the table kind adds kl-hypergraph (anonymize-kl)
            assert jobfile.METHODS[kind] == tuple(table)
    with pytest.raises(AttributeError):
        _ = jobfile.NOT_THERE  # type: ignore[attr-defined]
