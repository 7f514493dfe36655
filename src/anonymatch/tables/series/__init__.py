"""Release series (issue 40): publishing the same population again without the releases
undoing each other (``publish``: m-invariance on classes; ``store``: the series directory)."""

from __future__ import annotations

from anonymatch.tables.series.publish import anonymize_series

__all__ = ["anonymize_series"]
