"""Option groups as steps: how a command's options reach its function as typed values.

A decorator of ``cli.options`` (``table_input_options``, ``seed_option``, …) or a command module
declares its options with click and, with :func:`with_step`, the one function that builds their
value from them (its parameters name the options it is made of). :class:`Command` runs those
steps, outermost decorator first, then calls the command's function with its own parameters
and the steps' values: no wrapper moves a parameter behind ``**kwargs`` or ``params.pop``, and
no step reads the click context from a global (a builder that needs it names ``ctx``).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Step:
    """One group of a command's options that reaches its function as one typed value.

    ``build`` is one function whose parameters name what it is made of: the command's
    parameters (click names; a parameter with a default may be missing from a command), the
    value of an earlier step (by its ``name``), and ``ctx`` for the click context. ``name`` is
    the function parameter that receives what ``build`` returns (None: nothing, e.g. the
    logging set-up). With ``around``, ``build`` is a context manager entered before the
    command runs and left after it (``--seed-file`` is written after a successful run, the
    HTML report rendered from the release just written); the value is what it yields.

    With ``takes``, ``build`` gets those parameters (the ones the command has) as one mapping
    instead: the options a registry declares as data (``cli.options.criteria_options``).

    The parameters a step was built from are not passed on to the command's function, unless
    its signature names them (``quiet``, ``suppression_limit``): the function's signature
    lists what it uses, each builder's what it is made of."""

    build: Callable[..., Any]
    name: str | None = None
    around: bool = False
    takes: tuple[str, ...] = ()


STEPS = "__anonymatch_steps__"
"""The attribute of a command's function holding its steps, outermost decorator first (it
travels outwards with ``functools.wraps``)."""


LOCATE = "anonymatch.locate"
"""``ctx.meta`` key of a context manager the run's steps and function run in: a ``--config``
job file's (``cli.config``) says at which key of the file a bad value was written."""


def steps_of(func: Callable[..., Any] | None) -> tuple[Step, ...]:
    """The steps declared on a command's function (:func:`with_step`)."""
    return cast(tuple[Step, ...], getattr(func, STEPS, ()))


def with_step(
    build: Callable[..., Any],
    name: str | None = None,
    around: bool = False,
    takes: Sequence[str] = (),
) -> Callable[[F], F]:
    """Decorator: run ``build`` (a :class:`Step`) before the command's function, after the
    steps of the decorators below it, before those above it (the order of nested
    wrappers)."""

    def decorate(func: F) -> F:
        setattr(func, STEPS, (Step(build, name, around, tuple(takes)), *steps_of(func)))
        return func

    return decorate


class Command(click.Command):
    """A command whose function gets its option groups built by their steps
    (:class:`Step`): each step's builder is called with the parameters it names, in the order
    of the decorators, outermost first; the function gets its own parameters and the steps'
    values. O(parameters) per run."""

    def invoke(self, ctx: click.Context) -> Any:
        callback = self.callback
        steps = steps_of(callback)
        if callback is None or not steps:
            with ctx.meta.get(LOCATE, contextlib.nullcontext)():
                return super().invoke(ctx)
        own = set(inspect.signature(callback).parameters)
        values: dict[str, Any] = dict(ctx.params)
        taken: set[str] = set()
        with ctx.meta.get(LOCATE, contextlib.nullcontext)(), contextlib.ExitStack() as stack:
            for step in steps:
                if step.takes:  # one mapping of the declared parameters
                    mapping = {n: values[n] for n in step.takes if n in values}
                    taken.update(mapping)
                    value = step.build(mapping)
                else:
                    wanted = inspect.signature(step.build).parameters
                    args = {n: ctx if n == "ctx" else values[n] for n in wanted
                            if n in values or n == "ctx"}  # fmt: skip
                    taken.update(n for n in args if n != "ctx")
                    value = step.build(**args)
                if step.around:
                    value = stack.enter_context(value)
                if step.name is not None:
                    values[step.name] = value
                    taken.discard(step.name)
            given = {n: v for n, v in values.items() if n not in taken or n in own}
            return ctx.invoke(callback, **given)


def command(name: str | None = None) -> Callable[[Callable[..., Any]], Command]:
    """``click.command`` making a :class:`Command` (its steps run)."""
    return cast(Callable[[Callable[..., Any]], Command], click.command(name, cls=Command))
