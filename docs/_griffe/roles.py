"""Griffe extension for the API pages: the docstrings' Sphinx roles as code.

The docstrings are numpydoc, read by Python's ``help`` and by Sphinx-minded readers, and name
other objects with roles (:func:`plan`, :class:`TableJob`, :meth:`TableJob.build`); mkdocstrings
renders Markdown, where a role would show as raw text (``:func:`plan```). This extension turns
each role into the code span it stands for, on every object griffe loads.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|obj|exc|const):(`[^`]+`)")
"""A Sphinx role and its target, the target kept as a Markdown code span."""


class SphinxRoles(griffe.Extension):
    """Replace ``:role:`target``` by ```target``` in every docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(r"\1", obj.docstring.value)
