"""The version of anonymatch, in one place: ``anonymatch.__version__`` re-exports it, and core
(the manifest's ``tool`` block) reads it here without importing the package root."""

from __future__ import annotations

__version__ = "0.1.0"
