"""Typed exceptions. The CLI turns each into one line on stderr and an exit code."""

from __future__ import annotations


class AnonymatchError(Exception):
    """Base class for every error the library raises on purpose."""

    exit_code = 2


class InputError(AnonymatchError):
    """The input data, schema or parameters are unusable (CLI exit code 2)."""


class ArgumentTypeError(InputError, TypeError):
    """A public function got an argument of the wrong type (a list where a DataFrame is
    expected, ...): an ``InputError`` (CLI exit code 2) that ``except TypeError`` catches too."""


class InfeasibleError(AnonymatchError):
    """The requested guarantee cannot be met on this input, e.g. k > n (CLI exit code 3)."""

    exit_code = 3


class VerificationError(AnonymatchError):
    """A release failed the independent verification; nothing was written (CLI exit code 4)."""

    exit_code = 4


class WorkerError(AnonymatchError):
    """A worker process kept dying on the same job, e.g. out of memory (CLI exit code 5)."""

    exit_code = 5


class OutputError(AnonymatchError):
    """An output could not be written: permission denied, read-only file system, disk full,
    I/O error (CLI exit code 6). Nothing of the run's outputs is left behind."""

    exit_code = 6
