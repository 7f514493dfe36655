"""Tests of anonymatch.cli."""

from anonymatch.cli import load_all_commands

load_all_commands()  # the tests here walk cli.commands, which the CLI fills lazily
