"""The joint cost of a relational-transaction release and the builders that use it.

A published record j covers the people compatible with it (its preimages in the generalization
graph). Its QI cells are their covering cells (``anonymatch.tables.recode``) and its set part is
their bit vote (``anonymatch.sets.methods.nonreciprocal.bit_vote``): the items held by some but
not all of them are *uncertain*. The joint cost of a release is

    Σ_j GCP(cells of j) + λ · Σ_j |uncertain(j)|,

GCP being the weighted NCP average of Doka et al. (in [0, 1] per record) and λ = ``item_weight``
the price of one uncertain item in GCP units (docs/guarantees/relational.md). Extending record
j's preimages U_j (union of their items) and A_j (intersection) with person i of items x_i adds
|x_i ∖ U_j| + |A_j ∖ x_i| uncertain items: :class:`UncertainItems` prices that on every edge of a
partition, and the tables' freeform shell (``anonymatch.tables.methods.freeform.build_freeform``)
adds it to the GCP increase of each of its k−1 assignments.

The class baseline (:func:`classes`) publishes Mondrian's classes (LeFevre et al. 2006) with the
items held by all members certain and the others uncertain (:func:`cover_vote`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods.freeform import STEPS, build_freeform
from anonymatch.tables.methods.mondrian import mondrian


class UncertainItems:
    """The extra cost λ·Δ|uncertain| of one partition (``freeform.ExtraCost``).

    ``items`` holds the partition's people (m × b CSR); ``order`` the shell's local order.
    State: U (union) and A (intersection) of every published record's preimages, dense over
    the b' ≤ b items present in the partition. Time per call O(nnz(items) · m + m·b'), memory
    O(m·b') — never m² beyond the weight matrix the shell already holds.
    """

    def __init__(self, items: sp.csr_array, order: np.ndarray, weight: float) -> None:
        x = sp.csr_array(items)[order]
        present, local = np.unique(x.indices, return_inverse=True)
        x = sp.csr_array(
            (np.ones(len(local), np.float64), local.reshape(-1), x.indptr),
            shape=(x.shape[0], len(present)),
        )
        self.x = x
        self.dense = x.toarray().astype(bool)
        self.union = self.dense.copy()
        self.inter = self.dense.copy()
        self.size = np.diff(x.indptr).astype(np.float64)
        self.weight = weight
        self._refresh()

    def _refresh(self) -> None:
        # (U + A)ᵀ, contiguous for the sparse product, and |A_j|: once per assignment
        self.both_t = np.ascontiguousarray((self.union.astype(np.float64) + self.inter).T)
        self.inter_size = self.inter.sum(axis=1).astype(np.float64)

    def weights(self) -> np.ndarray:
        """w[i, j] = λ·(|x_i ∖ U_j| + |A_j ∖ x_i|)
        = λ·(|x_i| + |A_j| − |x_i ∩ U_j| − |x_i ∩ A_j|)."""
        delta = np.asarray(self.x @ self.both_t)
        np.subtract(self.size[:, None], delta, out=delta)
        delta += self.inter_size[None, :]
        delta *= self.weight
        return delta

    def grow(self, match: np.ndarray) -> None:
        """Published ``match[i]`` now covers original i (match is a permutation)."""
        self.union[match] |= self.dense
        self.inter[match] &= self.dense
        self._refresh()


def freeform(
    qi: EncodedQI, items: sp.csr_array, k: int, step: str, item_weight: float
) -> GeneralizationGraph:
    """A k-regular freeform generalization graph of one partition on the joint cost.

    Parameters
    ----------
    qi : EncodedQI
        The partition's encoded QIs (m people).
    items : scipy.sparse.csr_array
        Their items (m × b).
    k : int
        The level.
    step : str
        The inner assignment routine (``hungarian``, ``sortgreedy``, ``greedy``).
    item_weight : float
        λ, the price of an uncertain item in GCP units (0: the table's freeform graph).

    Returns
    -------
    GeneralizationGraph
        The union of k disjoint assignments (self-assignment first).

    Notes
    -----
    Time O(k·m²·d) for the weights plus the step's (Hungarian: O(k·m³) worst case); memory
    O(m² + m·b'). Reference: Doka, Xue, Tsoumakos, Karras, "k-Anonymization by freeform
    generalization", ASIACCS 2015, §5–7, with the set part of Xue et al., KDD 2012.
    """
    extra = None
    if item_weight > 0:
        extra = lambda order: UncertainItems(items, order, item_weight)  # noqa: E731
    return build_freeform(qi, k, STEPS[step](k), extra)


def classes(qi: EncodedQI, k: int) -> GeneralizationGraph:
    """Mondrian's classes of ≥ k people on the QIs (the baseline), as bicliques. O(d·n log n
    per level of the cut tree)."""
    return mondrian(qi, k, BuildOptions())


def cover_vote(
    items: sp.csr_array, graph: GeneralizationGraph
) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
    """The set part of the class baseline: for published record j, the items held by all of
    its preimages (certain), those held by some only (uncertain) and the threshold t_j = the
    largest number of uncertain items a preimage holds. Same shapes as ``bit_vote``.
    Time O(Σ_j Σ_preimages |x|) through one sparse product."""
    x = sp.csr_array(items).astype(np.int64)
    members = graph.published_members().astype(np.int64)  # n_pub × n
    counts = sp.csr_array(members @ x)
    counts.sort_indices()
    size = np.diff(members.indptr)
    row = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    full = counts.data == size[row]
    shape = counts.shape
    # (eliminate_zeros compacts data and indices in place: each matrix gets its own arrays)
    base = sp.csr_array((full.copy(), counts.indices.copy(), counts.indptr.copy()), shape=shape)
    base.eliminate_zeros()
    unc = sp.csr_array((~full, counts.indices.copy(), counts.indptr.copy()), shape=shape)
    unc.eliminate_zeros()
    held = np.diff(x.indptr)
    # every preimage holds the certain items: its distance to the base is |x| − |base|
    most = np.zeros(shape[0], np.int64)
    np.maximum.at(most, np.repeat(np.arange(shape[0]), size), held[members.indices])
    t = np.maximum(most - np.diff(base.indptr), 0)
    return sp.csr_array(base.astype(bool)), sp.csr_array(unc.astype(bool)), t
