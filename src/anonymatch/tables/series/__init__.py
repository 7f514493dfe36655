"""Release series: the same population published again, release after release (issue 40).

A series is a sequence of table releases of one population that changes over time (people
arrive, leave, change their sensitive value). Each release may be k-anonymous and ℓ-diverse on
its own while their combination is not: the *composition attacker* (Ganta, Kasiviswanathan and
Smith, KDD 2008) knows everyone's quasi-identifiers each year and who is in which release, and
intersects the sensitive values each release shows for a person. The series is protected by
the running intersection: every person's classes, over all their releases, show ≥ ℓ common
values (a relaxation of m-invariance, Xiao and Tao, SIGMOD 2007): docs/guarantees/series.md.

- :func:`verify_series` (``verify``): checks a series as that attacker sees it, from the
  releases and the originals only, and gives the attacker's figures (:class:`SeriesReport`).
- ``publish.publish_series``: the next release of a series directory (``store``: the index,
  the releases, the private map) keeping it (``repair``); the front is
  ``anonymatch.tables.anonymize(data, series=DIR, person_id=COLUMN, …)``.
"""

from __future__ import annotations

from anonymatch.tables.series.verify import ReleaseFigures, SeriesReport, verify_series

__all__ = ["ReleaseFigures", "SeriesReport", "verify_series"]
