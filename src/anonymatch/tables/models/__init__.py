"""Privacy models of tables beyond plain k-anonymity.

``diversity`` (the sensitive models as one criterion: ℓ-diversity and t-closeness, their
parameters and defaults) and ``sensitive`` (their statistics on a release), ``kl`` ((k,ℓ)-
anonymity releases), ``suppress`` (which records a suppression limit removes), ``adaptive``
(per-record anonymity levels: b-matching, suppression), and the criteria counted against a
population: ``kmap`` (k-map, the average journalist risk, and the widening that enforces them
all) and ``presence`` (δ-presence).

:data:`CRITERIA` registers the table criteria (``anonymatch.core.criteria``): the job's
keywords, the command line's flags, the job file's keys, the web form's fields and the
manifest's claims derive from it.
"""

from anonymatch.core.criteria import Registry
from anonymatch.tables.models.diversity import SensitiveModels
from anonymatch.tables.models.kmap import JournalistRisk, KMap
from anonymatch.tables.models.presence import DeltaPresence

CRITERIA = Registry(SensitiveModels, KMap, JournalistRisk, DeltaPresence)
"""The table criteria, in the order they are checked and described."""

POPULATION_CRITERIA = CRITERIA.where(lambda c: c.needs_population)
"""The criteria counted against a population table (the web form reads them with the
population's upload)."""

SAMPLE_CRITERIA = CRITERIA.where(lambda c: not c.needs_population)
"""The criteria checked from the release and the original alone (the sensitive models)."""
