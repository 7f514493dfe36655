"""Privacy models of tables beyond plain k-anonymity.

``levels`` (the release's level as a criterion: k for everyone, or per-record levels),
``disclosure`` (the sensitive models as one criterion: ℓ-diversity and t-closeness, their
parameters and defaults) and ``sensitive`` (their statistics on a release), ``kl`` ((k,ℓ)-
anonymity as a criterion, and its releases), ``suppress`` (which records a suppression limit
removes), ``adaptive`` (per-record anonymity levels: b-matching, suppression), and the
criteria counted against a population: ``kmap`` (k-map, the average journalist risk, and the
widening that enforces them all) and ``presence`` (δ-presence).

:data:`CRITERIA` registers the table criteria (``anonymatch.core.criteria``): the job's
keywords, the command line's flags, the job file's keys, the web form's fields and the
manifest's claims derive from it. The other names are views of it, by what the criteria
declare. :data:`KL_CRITERIA` registers (k,ℓ)-anonymity apart: the ``anonymize-kl`` and
``check-kl`` commands' flags and the job file's ``[model] known`` key derive from it.
"""

from anonymatch.core.criteria import Registry
from anonymatch.tables.models.disclosure import SensitiveModels
from anonymatch.tables.models.kl import KLAnonymity
from anonymatch.tables.models.kmap import JournalistRisk, KMap
from anonymatch.tables.models.levels import KAnonymity, PerRecordLevels
from anonymatch.tables.models.presence import DeltaPresence

CRITERIA = Registry(
    KAnonymity, PerRecordLevels, SensitiveModels, KMap, JournalistRisk, DeltaPresence
)
"""The table criteria, in the order they are checked and described."""

POPULATION_CRITERIA = CRITERIA.where(lambda c: c.needs_population)
"""The criteria counted against a population table (the web form reads them with the
population's upload)."""

SAMPLE_CRITERIA = CRITERIA.where(lambda c: not c.needs_population)
"""The criteria checked from the release and the original alone (the level, the sensitive
models): what a manifest's claims are read back with, beside the population's."""

SENSITIVE_CRITERIA = SAMPLE_CRITERIA.where(lambda c: not c.level)
"""The criteria on the sensitive columns (the ℓ-diversity family and t-closeness)."""

RELATIONAL_CRITERIA = CRITERIA.where(lambda c: "relational" in c.kinds)
"""The criteria relational data (people with a row and a set) take."""

KL_CRITERIA = Registry(KLAnonymity)
"""(k,ℓ)-anonymity (``k`` and ``known``), the level of the (k,ℓ) commands only: not in
:data:`CRITERIA`, so ``anonymize`` and ``verify`` take no ``--known`` (why:
:class:`~anonymatch.tables.models.kl.KLAnonymity`)."""

ALL_CRITERIA = Registry(*CRITERIA.criteria, *KL_CRITERIA.criteria)
"""Every table criterion, (k,ℓ)-anonymity's among them: the job file's ``[model]`` keys
(``known`` beside the others) and the claims a table manifest can make."""
