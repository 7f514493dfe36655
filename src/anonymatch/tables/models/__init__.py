"""Privacy models of tables beyond plain k-anonymity.

``sensitive`` (ℓ-diversity and t-closeness on the sensitive columns), ``kl`` ((k,ℓ)-anonymity
releases), ``suppress`` (which records a suppression limit removes), ``adaptive`` (per-record
anonymity levels: b-matching, suppression), and the criteria counted against a population:
``kmap`` (k-map, the average journalist risk, and the widening that enforces them all) and
``presence`` (δ-presence).

:data:`CRITERIA` registers the table criteria (``anonymatch.core.criteria``): the job's
keywords, the command line's flags, the job file's keys, the web form's fields and the
manifest's claims derive from it.
"""

from anonymatch.core.criteria import Registry
from anonymatch.tables.models.kmap import JournalistRisk, KMap
from anonymatch.tables.models.presence import DeltaPresence

CRITERIA = Registry(KMap, JournalistRisk, DeltaPresence)
"""The table criteria, in the order they are checked and described."""
