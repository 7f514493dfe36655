"""Option groups as steps (``anonymatch.cli.steps``): each group's value built by one function
from the parameters it names, in the order of the decorators; the command's function gets its
own parameters and the steps' values, nothing else."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import click
import pytest

from anonymatch.cli.steps import Command, command, with_step


def _pair(a: str, b: int = 0) -> tuple[str, int]:
    return a, b


def test_a_group_reaches_the_function_as_one_value() -> None:
    seen: dict[str, Any] = {}

    @command("t")
    @click.option("--a", default="x")
    @click.option("--b", type=int, default=2)
    @click.option("--c", default="z")
    @with_step(_pair, "pair")
    def cmd(pair: tuple[str, int], c: str) -> None:
        seen.update(pair=pair, c=c)

    assert isinstance(cmd, Command)
    cmd.main(["--a", "y"], standalone_mode=False)
    assert seen == {"pair": ("y", 2), "c": "z"}


def test_steps_run_outermost_first_and_a_later_step_takes_an_earlier_value() -> None:
    order: list[str] = []

    def first(a: str) -> str:
        order.append("first")
        return a.upper()

    def second(ctx: click.Context, word: str, quiet: bool) -> str:
        order.append("second")
        assert isinstance(ctx, click.Context)
        return f"{word}!" if not quiet else word

    @command("t")
    @click.option("--a", default="x")
    @click.option("--quiet", is_flag=True)
    @with_step(first, "word")
    @with_step(second, "shout")
    def cmd(shout: str, quiet: bool) -> None:  # quiet: named, so passed on too
        order.append(f"cmd {shout} {quiet}")

    cmd.main(["--a", "b"], standalone_mode=False)
    assert order == ["first", "second", "cmd B! False"]


def test_around_steps_wrap_the_run_and_see_its_failure() -> None:
    events: list[str] = []

    @contextlib.contextmanager
    def around(n: int) -> Iterator[int]:
        events.append("enter")
        try:
            yield n + 1
        except ValueError:
            events.append("failed")
            raise
        events.append("exit")

    @command("t")
    @click.option("--n", type=int, default=1)
    @with_step(around, "n", around=True)
    def cmd(n: int) -> None:
        events.append(f"run {n}")
        if n > 5:
            raise ValueError("too big")

    cmd.main([], standalone_mode=False)
    assert events == ["enter", "run 2", "exit"]
    events.clear()
    with pytest.raises(ValueError, match="too big"):
        cmd.main(["--n", "9"], standalone_mode=False)
    assert events == ["enter", "run 10", "failed"]


def test_takes_passes_declared_parameters_as_one_mapping() -> None:
    seen: dict[str, Any] = {}

    @command("t")
    @click.option("--kmap", type=int, default=None)
    @click.option("--other", default="o")
    @with_step(dict, "criteria", takes=["kmap", "absent"])
    def cmd(criteria: dict[str, Any], other: str) -> None:
        seen.update(criteria=criteria, other=other)

    cmd.main(["--kmap", "3"], standalone_mode=False)
    assert seen == {"criteria": {"kmap": 3}, "other": "o"}
