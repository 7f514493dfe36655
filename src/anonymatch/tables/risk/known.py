"""The known-person attacker: what one person's true row reveals about the others.

The attacker of ``tables.risk.risk`` (every person's QIs, the whole release; for a ring
release, its certificate) who also knows the true row r of one person a — a data subject who
finds their own row, or one person re-identified elsewhere (docs/guarantees/known-person.md).
The worlds left are the perfect matchings of the public structure that pair a with r; for every
other person b of a's **unit** (the part of the release a's knowledge reaches):

* b's row is *certain* when every such world gives b the same row;
* b's sensitive value is certain when every such world gives b rows showing one value;
* the *posterior* of b's row (and of b's value) is its share of those worlds, the worlds being
  equally likely (the uniform draw inside a class, the uniform shift of a ring; for a freeform
  component, the attacker's indifference between the worlds consistent with the release).

The units, and how each is computed:

* a **class** (a component of the candidate graph that is a complete biclique of m people and
  m rows, drawn as a uniform permutation): the others take the other m − 1 rows uniformly, so a
  row is certain only when m = 2, the row posterior is 1 / (m − 1) and a value's is its share
  among the m − 1 rows left — exact, O(m + values);
* a **ring** (a certificate's ring of m rows, drawn as one of its k shifts): a's row fixes the
  shift, so every other member's row and value is certain — exact, O(1);
* a **freeform component** of the candidate graph (any other component): exactly, by listing
  its perfect matchings, when it has at most ``exact_max`` people; otherwise the certain rows
  and values of each hypothesis (a, r) are exact (the Dulmage–Mendelsohn candidates of the
  component without a and r: ``core.view.AttackerView.candidates``) and the hypotheses are
  sampled — the mean with its standard error, the max over the sample (a lower bound) — and the
  posterior is not computed there (1 when some row is certain).

Every figure is aggregated over the attacker: each person a, and each of a's candidate rows r
as the true one (equally weighted: the mechanism's 1/k for a class, a ring or a k-regular
graph); ``max`` over every hypothesis, ``mean`` over people.

Complexity: O(n + pairs between groups) for the components and the classes; O(m!·m⁴) at most for a
freeform component of m ≤ ``exact_max`` people; one max-flow per larger component (none when
the candidate view carries the perfect flow it was found from, as ``AttackerView.candidates``
views do), then per sampled hypothesis one breadth-first search that stops at a (the
alternating path that makes the component's perfect matching pair a with r) and the strongly
connected components of what is left: shown unchanged by a certificate built once per
component (``core.strong``, O(groups) and the arcs it re-reads) in most hypotheses, else one
compiled Tarjan pass, O(pairs of the component) time and O(groups) memory; the hypotheses on a
thread pool; never n × n.

References
----------
Choromanski, Jebara, Tang. "Adaptive Anonymity via b-Matching". NIPS 2013, §4 (an adversary
who knows true matches); Dulmage & Mendelsohn (1958); Xue et al. KDD 2012 §4.2 (the draw).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.runner import default_workers
from anonymatch.core.strong import Certificate, arc_end, arc_span
from anonymatch.core.view import AttackerView, component_labels, strong_components
from anonymatch.tables.models.sensitive import encode_sensitive

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.schema import Schema

EXACT_MAX = 6
"""Freeform components of at most this many people are computed by listing their worlds."""

SAMPLES = 200
"""Hypotheses (person, true row) sampled over the larger freeform components."""


@dataclass
class _Figure:
    """One figure (rows, or one sensitive column) accumulated over hypotheses."""

    certain_max: int = 0
    share_max: float = 0.0
    posterior_max: float = 0.0
    certain_sum: float = 0.0  # Σ over people of the expected number certain
    share_sum: float = 0.0
    sampled: list[float] = field(default_factory=list)  # shares of the sampled hypotheses
    sampled_certain: list[float] = field(default_factory=list)

    def add(self, people: float, certain: float, others: int, posterior: float) -> None:
        """``people`` attackers whose expected number of others certain is ``certain``."""
        self.certain_sum += people * certain
        self.share_sum += people * (certain / others if others else 0.0)
        self.posterior_max = max(self.posterior_max, posterior)

    def worst(self, certain: int, others: int) -> None:
        self.certain_max = max(self.certain_max, int(certain))
        self.share_max = max(self.share_max, certain / others if others else 0.0)

    def to_dict(self, n: int, sampled_people: int) -> dict[str, float]:
        certain, share, se = self.certain_sum, self.share_sum, 0.0
        if self.sampled:
            s = np.asarray(self.sampled)
            certain += sampled_people * float(np.mean(self.sampled_certain))
            share += sampled_people * float(s.mean())
            se = sampled_people / n * float(s.std(ddof=1) / np.sqrt(len(s))) if len(s) > 1 else 0
        return {
            "certain_max": self.certain_max,
            "certain_mean": float(certain / n) if n else 0.0,
            "share_max": float(self.share_max),
            "share_mean": float(share / n) if n else 0.0,
            "share_mean_standard_error": float(se),
            "posterior_max": float(self.posterior_max),
        }


@dataclass(frozen=True)
class KnownPersonRisk:
    """The known-person figures of a release (module docstring); ``to_dict()`` for JSON.

    ``rows`` and ``sensitive[column]``: ``certain_max`` (the most other people whose row — or
    value — one known person makes certain), ``certain_mean`` (its mean over people),
    ``share_max``/``share_mean`` (the same as a share of the other people of the known person's
    unit, with the standard error of the sampled part), ``posterior_max`` (the largest
    posterior of another person's row or value, over the units computed exactly; 1 when a
    sampled hypothesis makes a row certain). ``units``: how many classes, rings and freeform
    components (listed exactly, or sampled); ``samples``: hypotheses sampled."""

    people: int
    units: dict[str, int]
    samples: int
    sampled_people: int
    rows: dict[str, float]
    sensitive: dict[str, dict[str, float]]

    def lines(self) -> list[str]:
        """The figures in words, one line for the rows and one per sensitive column (the
        ``risk`` commands and the report). O(columns)."""
        out = []
        for what, fig in [("rows", self.rows)] + [
            (f"{c} values", f) for c, f in self.sensitive.items()
        ]:
            se = fig["share_mean_standard_error"]
            err = f" ± {100 * se:.2f}" if self.samples else ""
            out.append(
                f"one known person makes certain the {what} of up to {fig['certain_max']} "
                f"others (mean {fig['certain_mean']:.2f}, {100 * fig['share_mean']:.2f}%{err} "
                f"of their part); largest posterior {fig['posterior_max']:.3f}"
            )
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "model": "one person's true row known (docs/guarantees/known-person.md)",
            "people": self.people,
            "units": dict(self.units),
            "sampled": {"hypotheses": self.samples, "people": self.sampled_people},
            "rows": dict(self.rows),
            "sensitive": {c: dict(f) for c, f in self.sensitive.items()},
        }


def known_person(
    cand: AttackerView,
    values: Mapping[str, np.ndarray],
    certificate: tuple[int, Sequence[np.ndarray]] | None = None,
    samples: int = SAMPLES,
    exact_max: int = EXACT_MAX,
    seed: int = 0,
) -> KnownPersonRisk:
    """The known-person figures of a release.

    Parameters
    ----------
    cand : AttackerView
        The candidate view of the release (``AttackerView.candidates()``): people × published
        rows, on groups.
    values : mapping of str to numpy.ndarray
        Per sensitive column, the code of the value each published row shows (n_published).
    certificate : (int, sequence of numpy.ndarray), optional
        A ring release's certificate (``models.certified.parse_certificate``): k and each
        ring's rows in ring order. With it the units are the rings and the groups of
        identical rows outside them (the certified graph, as ``risk.certified_sensitive``);
        without it, the components of the candidate graph.
    samples : int
        Hypotheses sampled over the freeform components of more than ``exact_max`` people
        (all of them when they are fewer).
    exact_max : int
        The largest freeform component whose worlds are listed.
    seed : int
        The sampling's seed (a measurement, not a release: fixed for reproducible figures).

    Returns
    -------
    KnownPersonRisk

    Notes
    -----
    Time O(n + pairs between groups) plus O(m!·m⁴) at most per small freeform component
    (m ≤ ``exact_max``), at most one max-flow per larger one and O(its pairs) per sampled
    hypothesis; memory O(n + pairs between groups).

    References
    ----------
    Choromanski et al., NIPS 2013, §4; Dulmage & Mendelsohn (1958).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> view = AttackerView.singletons(sp.csr_array(np.ones((3, 3)))).candidates()
    >>> fig = known_person(view, {"s": np.array([0, 0, 1])})
    >>> fig.rows["certain_max"], fig.rows["posterior_max"], fig.sensitive["s"]["certain_max"]
    (0, 0.5, 2)
    """
    rng = np.random.default_rng(seed)
    rows, sens = _Figure(), {c: _Figure() for c in values}
    units = {"classes": 0, "rings": 0, "freeform_exact": 0, "freeform_sampled": 0}
    if certificate is not None:
        k, rings = certificate
        in_ring = np.zeros(cand.n_published, bool)
        for ring in rings:
            m = len(ring)
            units["rings"] += 1
            rows.add(m, m - 1, m - 1, 1.0)
            rows.worst(m - 1, m - 1)
            window = (np.arange(m)[:, None] - np.arange(k)) % m  # position p's k rows
            for col, fig in sens.items():
                shown = values[col][ring][window]
                h = int((shown == shown[:, :1]).all(axis=1).sum())  # certain already
                fig.add(m, m - 1 - h + h / m, m - 1, 1.0)
                fig.worst(m - 1 - h + (h > 0), m - 1)
            in_ring[ring] = True
        free = np.flatnonzero(~in_ring)
        order = free[np.argsort(cand.group[free], kind="stable")]
        cut = np.flatnonzero(np.diff(cand.group[order])) + 1
        for members in np.split(order, cut) if len(order) else []:
            units["classes"] += 1
            _class(rows, sens, values, members)
        return _result(cand.n, units, rows, sens, 0, 0)
    n_u, n_g = cand.c.shape
    # the components of the bipartite graph, read from ``c``'s own arrays (issue 38: scipy's
    # needed the graph laid out, then copied as float64 and transposed — the run's peak)
    label = component_labels(cand.c.indptr, cand.c.indices, n_u + n_g, n_u)
    person_label, row_label = label[cand.inverse], label[n_u + cand.group]
    # person-row pairs per component: Σ over original groups of counts · candidate rows
    pairs = np.bincount(label[:n_u], weights=cand.counts * cand.per_original())
    people = np.bincount(person_label, minlength=len(pairs))
    rows_of = np.argsort(row_label, kind="stable")
    row_start = np.r_[0, np.cumsum(np.bincount(row_label, minlength=len(pairs)))]
    people_of = np.argsort(person_label, kind="stable")
    person_start = np.r_[0, np.cumsum(people)]
    large, small = [], []
    for comp in range(len(pairs)):
        who = people_of[person_start[comp] : person_start[comp + 1]]
        where = rows_of[row_start[comp] : row_start[comp + 1]]
        m = len(who)
        if pairs[comp] == m * m:  # every person compatible with every row: a class
            units["classes"] += 1
            _class(rows, sens, values, where)
        elif m <= exact_max:
            units["freeform_exact"] += 1
            small.append((who, where))
        else:
            units["freeform_sampled"] += 1
            large.append((who, where))
    _listed(rows, sens, values, cand, small)
    total = _sampled(rows, sens, values, cand, large, samples, rng)
    return _result(cand.n, units, rows, sens, total, sum(len(w) for w, _ in large) * (total > 0))


def known_figures(
    view: AttackerView,
    published: pd.DataFrame,
    original: pd.DataFrame,
    schema: Schema,
    certificate: tuple[int, list[np.ndarray]] | None = None,
) -> KnownPersonRisk:
    """The known-person figures (``risk.known.known_person``) of a release's candidate
    ``view`` (or, with ``certificate``, its attacker's view), the sensitive columns read from
    the ``published`` and ``original`` tables (``schema``). O(n log n) plus ``known_person``."""
    values = {
        name: encode_sensitive(
            name, published[name], original[name], name in schema.numeric
        ).published
        for name in schema.sensitive
    }
    return known_person(view, values, certificate)


def _result(
    n: int,
    units: dict[str, int],
    rows: _Figure,
    sens: dict[str, _Figure],
    samples: int,
    sampled_people: int,
) -> KnownPersonRisk:
    return KnownPersonRisk(
        n,
        units,
        samples,
        sampled_people,
        rows.to_dict(n, sampled_people),
        {c: f.to_dict(n, sampled_people) for c, f in sens.items()},
    )


def _class(
    rows: _Figure, sens: dict[str, _Figure], values: Mapping[str, np.ndarray], where: np.ndarray
) -> None:
    """A class of m people on the rows ``where``, drawn as a uniform permutation: exact. The
    known person's row r is uniform over the m rows; the others share the m − 1 rows left."""
    m = len(where)
    others = m - 1
    rows.add(m, others if m == 2 else 0, others, 1 / others if others else 0.0)
    rows.worst(others if m == 2 else 0, others)
    for col, fig in sens.items():
        counts = np.bincount(values[col][where])
        shown = np.flatnonzero(counts)
        left = np.tile(counts, (len(shown), 1))  # one line per known value v: counts − e_v
        left[np.arange(len(shown)), shown] -= 1
        top = left.max(axis=1)
        certain = np.where((top == others) & (len(shown) > 1), others, 0)  # newly certain
        weight = counts[shown] / m
        fig.add(m, float(weight @ certain), others, float(top.max()) / others if others else 0)
        fig.worst(int(certain.max()), others)


def _listed(
    rows: _Figure,
    sens: dict[str, _Figure],
    values: Mapping[str, np.ndarray],
    cand: AttackerView,
    small: list[tuple[np.ndarray, np.ndarray]],
) -> None:
    """The freeform components of m ≤ ``EXACT_MAX`` people (``small``: their people and rows):
    every perfect matching listed, the worlds equally likely; each person's true row uniform
    over their candidate rows (the rows of some world). One person × row matrix for them all
    (block diagonal), then per component O(m!·m + worlds·m⁴)."""
    if not small:
        return
    people = np.concatenate([who for who, _ in small])
    where = np.concatenate([w for _, w in small])
    pairs = sp.coo_array(cand.c[cand.inverse[people]][:, cand.group[where]])  # block diagonal
    sizes = np.array([len(who) for who, _ in small])
    starts = np.r_[0, np.cumsum(sizes)]
    comp = np.searchsorted(starts, pairs.row, side="right") - 1
    order = np.argsort(comp, kind="stable")
    cuts = np.searchsorted(comp[order], np.arange(1, len(small)))
    blocks = zip(np.split(pairs.row[order], cuts), np.split(pairs.col[order], cuts), strict=True)
    for (who, w), start, (i, j) in zip(small, starts, blocks, strict=False):
        m = len(who)
        block = np.zeros((m, m), bool)
        block[i - start, j - start] = True
        worlds = _matchings(block)
        onehot = np.zeros((len(worlds), m, m), np.float64)  # world, person, row
        onehot[np.arange(len(worlds))[:, None], np.arange(m), worlds] = 1
        flat = onehot.reshape(len(worlds), m * m)
        joint = (flat.T @ flat).reshape(m, m, m, m)  # worlds with a → r and b → s
        total = joint[np.arange(m), :, np.arange(m), :].diagonal(axis1=1, axis2=2)  # a, r
        shown = [("rows", rows, np.eye(m))] + [
            (c, sens[c], np.eye(int(values[c][w].max()) + 1)[values[c][w]]) for c in sens
        ]
        for _, fig, code in shown:
            count = joint @ code  # a, r, b, value
            top = count.max(axis=3)
            before = (onehot.sum(axis=0) @ code > 0).sum(axis=1) == 1  # b: one value anyway
            valid = total > 0
            other = ~np.eye(m, dtype=bool)[:, None, :]  # b ≠ a
            certain = ((top == total[:, :, None]) & other & ~before).sum(axis=2)
            per_person = np.where(valid, certain, 0).sum(axis=1) / valid.sum(axis=1)
            fig.add(m, float(per_person.mean()), m - 1, 0.0)
            fig.worst(int(certain[valid].max()), m - 1)
            post = np.where(other & valid[:, :, None], top / np.maximum(total, 1)[:, :, None], 0)
            fig.posterior_max = max(fig.posterior_max, float(post.max()))


def _matchings(block: np.ndarray) -> np.ndarray:
    """Every perfect matching of a dense m × m 0/1 matrix, one per line (person → row): the
    partial matchings of the first i people extended by person i's free compatible rows,
    vectorized per (person, row). O(m² · partial matchings)."""
    m = block.shape[0]
    worlds = np.zeros((1, 0), np.int64)
    for person in range(m):
        grown = []
        for row in np.flatnonzero(block[person]):
            free = ~(worlds == row).any(axis=1)
            grown.append(np.column_stack([worlds[free], np.full(int(free.sum()), row)]))
        worlds = np.concatenate(grown) if grown else np.zeros((0, person + 1), np.int64)
    return worlds


def _sampled(
    rows: _Figure,
    sens: dict[str, _Figure],
    values: Mapping[str, np.ndarray],
    cand: AttackerView,
    large: list[tuple[np.ndarray, np.ndarray]],
    samples: int,
    rng: np.random.Generator,
) -> int:
    """The freeform components of more than ``EXACT_MAX`` people: the certain rows and values
    of each hypothesis (a, r), exact (Dulmage–Mendelsohn on the component without a and r);
    every hypothesis when there are at most ``samples``, else ``samples`` of them (a uniform
    person of these components, a uniform candidate row of theirs). Returns how many were
    sampled (0 when all were computed)."""
    if not large:
        return 0
    per_person = cand.per_original()[cand.inverse]  # candidate rows
    cands = [per_person[who] for who, _ in large]
    sizes = np.array([len(who) for who, _ in large])
    every = sum(int(c.sum()) for c in cands) <= samples
    if every:
        todo = [(u, a, r) for u, c in enumerate(cands) for a in range(len(c))
                for r in range(c[a])]  # fmt: skip
    else:
        pick = rng.choice(int(sizes.sum()), size=samples)
        unit = np.searchsorted(np.cumsum(sizes), pick, side="right")
        start = np.r_[0, np.cumsum(sizes)][unit]
        todo = [
            (int(u), int(p - s), int(rng.integers(cands[u][p - s])))
            for u, p, s in zip(unit, pick, start, strict=True)
        ]

    def part(u: int) -> _Part:
        who, where = large[u]
        return _Part(cand.restrict(who, where), {c: v[where] for c, v in values.items()})

    def hypothesis(h: tuple[int, int, int]) -> dict[str, int]:
        part = parts[h[0]]
        return part.certain(h[1], int(_candidate_rows(part.view, h[1])[h[2]]))

    # the components a hypothesis falls in, then the hypotheses: independent, their kernels run
    # without the GIL, so both on a thread pool, the results taken in order (the same sums as
    # one after the other)
    hit = sorted({u for u, _, _ in todo})
    with ThreadPoolExecutor(max_workers=min(default_workers(), len(todo))) as pool:
        parts = dict(zip(hit, pool.map(part, hit), strict=True))
        results = list(pool.map(hypothesis, todo))
    for (u, a, _), got in zip(todo, results, strict=True):
        m = int(sizes[u])
        for fig, name in [(rows, "rows")] + [(f, c) for c, f in sens.items()]:
            fig.worst(got[name], m - 1)
            if got["rows"]:
                fig.posterior_max = 1.0
            if every:
                fig.add(1.0 / cands[u][a], got[name], m - 1, fig.posterior_max)
            else:
                fig.sampled.append(got[name] / (m - 1))
                fig.sampled_certain.append(got[name])
    return 0 if every else len(todo)


class _Part:
    """One freeform component's view (groups), one perfect flow on it, its residual digraph
    (arcs u → g for every pair, g → u where the flow runs, the latter as per-g lists), and
    what is certain without any known row; :meth:`certain` conditions on one (a, r)."""

    def __init__(self, view: AttackerView, shown_values: Mapping[str, np.ndarray]) -> None:
        # carried from the candidates' view by its nonzero pairs: no max-flow, and no array
        # per pair (issue 38)
        nonzero = view.perfect_flow_nonzero()
        assert nonzero is not None  # a component of the candidate graph
        used, flow = nonzero  # the back arcs g → u (at most n), grouped by g below
        self.view = view
        n_u, n_g = view.c.shape
        self.c_ptr, self.c_idx = view.c.indptr, view.c.indices  # the view's own arrays
        pair_u = np.searchsorted(self.c_ptr, used, side="right") - 1
        order = np.argsort(self.c_idx[used], kind="stable")
        self.back_u, self.back_flow = pair_u[order], flow[order]
        self.back_ptr = np.r_[0, np.cumsum(np.bincount(self.c_idx[used], minlength=n_g))]
        # one root's out- and in-tree: most hypotheses leave the component strongly connected
        # (but for the groups they empty), which the trees show without Tarjan's O(pairs)
        self.certificate = Certificate.build(self.c_ptr, self.c_idx, self.back_ptr, self.back_u)
        cand = view.candidates()  # itself for a part of a candidates' view
        assert cand is not None
        shown = {c: np.bincount(view.group * (int(v.max()) + 1) + v,
                                minlength=n_g * (int(v.max()) + 1)).reshape(n_g, -1)
                 for c, v in shown_values.items()}  # fmt: skip  # rows per (group, value)
        self.columns = list(shown)
        widths = [t.shape[1] for t in shown.values()]
        self.off = np.r_[0, np.cumsum(widths)].astype(np.int64)
        self.table = np.hstack([np.zeros((n_g, 0), np.int64), *shown.values()])
        self.values = shown_values
        before = [cand.per_original() == 1]
        before += [_distinct(cand.c, table) == 1 for table in shown.values()]
        self.before = np.array(before, np.bool_).reshape(len(before), n_u)

    def certain(self, a: int, r: int) -> dict[str, int]:
        """Others made certain by knowing person ``a``'s row ``r`` (indices in the component):
        a perfect flow without them (the flow's alternating path from r's group to a's, found
        by a breadth-first search that stops at a's group), the strongly connected components
        of its residual digraph, then the people left with one candidate row or value. The
        components: when the part's certificate (``core.strong``) shows the digraph still
        strongly connected but for the groups a and r empty, that (O(U + G) and the arcs of
        the nodes it re-attaches); else one compiled Tarjan pass, the flow's changes kept
        aside (nothing of the size of the pairs is copied). O(pairs) time at most, O(U + G)
        memory beyond the part."""
        view = self.view
        u, g = int(view.inverse[a]), int(view.group[r])
        cert, none = self.certificate, np.empty(0, np.int64)
        t_ptr, t_u, in_ptr, in_g = (
            (cert.t_ptr, cert.t_u, cert.in_ptr, cert.in_g) if cert else (none, none, none, none)
        )  # the arcs into each node: the path searched from both ends
        dead, extra = _reroute(self.c_ptr, self.c_idx, self.back_ptr, self.back_u,
                               self.back_flow, t_ptr, t_u, in_ptr, in_g, u, g)  # fmt: skip
        n_u = len(view.counts)
        emptied = np.array([u if view.counts[u] == 1 else -1,
                            n_u + g if view.mult[g] == 1 else -1], np.int64)  # fmt: skip
        if self.certificate is not None and self.certificate.still_strong(
            self.c_ptr, self.c_idx, self.back_ptr, self.back_u, dead, extra, emptied
        ):
            scc = np.zeros(n_u + len(view.mult), np.int64)  # one component, and the emptied
            for label, node in enumerate(emptied.tolist(), start=1):
                if node >= 0:
                    scc[node] = label
            # the same component as before but for g's row taken out: only g's people can
            # be left with one row or value that had more (r's group is in all of their
            # counts, and in no one else's)
            assert cert is not None
            people = cert.t_u[cert.t_ptr[g] : cert.t_ptr[g + 1]].astype(np.int64)
        else:
            scc = strong_components(self.c_ptr, self.c_idx, self.back_ptr, self.back_u, dead, extra)
            people = np.arange(n_u)
        counts, mult = view.counts.copy(), view.mult.copy()
        counts[u] -= 1
        mult[g] -= 1
        v0 = np.array([self.off[i] + self.values[c][r] for i, c in enumerate(self.columns)])
        got = _newly_certain(self.c_ptr, self.c_idx, scc, counts, mult, self.before,
                             self.table, self.off, g, v0.astype(np.int64), people)  # fmt: skip
        return dict(zip(["rows", *self.columns], got.tolist(), strict=True))


@njit(cache=True, nogil=True)
def _reroute(
    c_ptr, c_idx, back_ptr, back_u, back_flow, t_ptr, t_u, in_ptr, in_g, u0, g0
):  # pragma: no cover - compiled
    """How the residual digraph of a part changes once one unit of group ``u0`` is matched to
    one row of group ``g0``: the flow rerouted along a shortest alternating path
    g0 → u1 → g1 → … → u0 of the residual digraph, row → person arcs losing a unit and
    person → row arcs gaining one; the digraph then has an arc u → g for every pair and
    g → u where the new flow runs. The path is found breadth first from both ends at once,
    a level of the smaller frontier at a time, when the arcs into each node are given
    (``t_ptr``/``t_u``: the pairs by published group; ``in_ptr``/``in_g``: the flow's pairs
    by original group, as ``core.strong.Certificate`` keeps them; empty: from g0 only). It
    stops at the first node both searches reach, so no node is on it twice (a node reached
    by both before it would have stopped the search first). Any such path gives the same
    components afterwards (the pairs in some perfect matching do not depend on the flow).
    Every node of the path is a distinct group, so each published group loses at most one
    back arc (``dead[g]``, −1: none) and gains at most one (``extra[g]``), kept aside instead
    of copying the flow (the arrays of ``core.view.strong_components``). O(U + G + the arcs
    the searches read): on Adult's greedy release at k = 100 the two-sided search read about
    a third of the time the one-sided one took."""
    n_u = len(c_ptr) - 1
    n_g = len(back_ptr) - 1
    n = n_u + n_g
    both = len(t_ptr) > 0
    fpred = np.full(n, -1, np.int64)  # forward: the node before, on a path from g0
    bnext = np.full(n, -1, np.int64)  # backward: the node after, on a path to u0
    fq = np.empty(n, np.int64)
    bq = np.empty(n, np.int64)
    start = n_u + g0
    fpred[start] = start
    bnext[u0] = u0
    fq[0], bq[0] = start, u0
    fh, ft, bh, bt = 0, 1, 0, 1
    meet = -1
    while meet < 0 and (fh < ft or bh < bt):
        # one level of the smaller frontier: forward along the arcs out of x, backward into x
        forward = not both or bh == bt or (fh < ft and ft - fh <= bt - bh)
        queue, seen, other = (fq, fpred, bnext) if forward else (bq, bnext, fpred)
        head, tail = (fh, ft) if forward else (bh, bt)
        end = tail
        while head < end and meet < 0:
            x = queue[head]
            head += 1
            lo, hi = arc_span(x, not forward, n_u, c_ptr, back_ptr, t_ptr, in_ptr)
            for p in range(lo, hi):
                y = arc_end(x, not forward, p, n_u, c_idx, back_u, t_u, in_g)
                if seen[y] < 0:
                    seen[y] = x
                    if other[y] >= 0:
                        meet = y
                        break
                    queue[tail] = y
                    tail += 1
        if forward:
            fh, ft = head, tail
        else:
            bh, bt = head, tail
    path = np.empty(n, np.int64)  # g0 … meet … u0
    length = 0
    x = meet
    while x != start:
        path[length] = x
        length += 1
        x = fpred[x]
    path[length] = start
    length += 1
    path[:length] = path[:length][::-1].copy()
    x = meet
    while x != u0:
        x = bnext[x]
        path[length] = x
        length += 1
    dead = np.full(n_g, -1, np.int64)  # the back arc g → dead[g] lost its last unit
    extra = np.full(n_g, -1, np.int64)  # the back arc g → extra[g] is new
    for q in range(length - 1):
        a, b = path[q], path[q + 1]
        if b < n_u:  # arc g → b: one unit less on the pair (b, g)
            g = a - n_u
            for t in range(back_ptr[g], back_ptr[g + 1]):
                if back_u[t] == b and back_flow[t] == 1:
                    dead[g] = b
        else:  # arc a → g: one unit more on the pair (a, g)
            g = b - n_u
            new = True
            for t in range(back_ptr[g], back_ptr[g + 1]):
                if back_u[t] == a:
                    new = False
            if new:
                extra[g] = a
    return dead, extra


@njit(cache=True, nogil=True)
def _newly_certain(  # pragma: no cover - compiled
    c_ptr, c_idx, scc, counts, mult, before, table, off, g0, v0, people
):
    """People whose candidate rows (the pairs inside one strongly connected component of
    ``scc``, group g counting ``mult[g]`` rows) number one, and, per sensitive column c,
    show one value (``table``: rows per published group and value, the columns' values at
    ``off[c]`` … ``off[c + 1]``, before one row of group ``g0`` showing ``v0[c]`` is taken
    out) — counted in people (``counts``), leaving out the groups ``before`` marks (line 0
    the rows, line 1 + c column c: certain anyway). Each group's scan stops at its second
    row or value. Only the groups ``people`` are looked at (the others cannot have changed).
    O(pairs of those groups · values) at most."""
    n_u = len(c_ptr) - 1
    n_c = len(off) - 1
    got = np.zeros(1 + n_c, np.int64)
    for u in people:
        if counts[u] == 0:
            continue
        if not before[0, u]:
            rows = 0
            for p in range(c_ptr[u], c_ptr[u + 1]):
                if scc[n_u + c_idx[p]] == scc[u]:
                    rows += mult[c_idx[p]]
                    if rows > 1:
                        break
            if rows == 1:
                got[0] += counts[u]
        for c in range(n_c):
            if before[1 + c, u]:
                continue
            first, distinct = -1, 0
            for p in range(c_ptr[u], c_ptr[u + 1]):
                g = c_idx[p]
                if scc[n_u + g] != scc[u]:
                    continue
                for v in range(off[c], off[c + 1]):
                    if v != first and table[g, v] - (g == g0 and v == v0[c]) > 0:
                        if first < 0:
                            first, distinct = v, 1
                        else:
                            distinct = 2
                            break
                if distinct > 1:
                    break
            if distinct == 1:
                got[1 + c] += counts[u]
    return got


def _candidate_rows(view: AttackerView, a: int) -> np.ndarray:
    """The candidate rows of person ``a`` of a candidate view, in increasing order. O(rows)."""
    groups = view.c.indices[view.c.indptr[view.inverse[a]] : view.c.indptr[view.inverse[a] + 1]]
    return np.flatnonzero(np.isin(view.group, groups))


def _distinct(c: sp.csr_array, table: np.ndarray) -> np.ndarray:
    """Distinct values each original group's candidate rows show: ``c`` its candidate groups
    (U × G), ``table`` rows per (row group, value) (G × values). O(pairs · values) time,
    O(U + values) memory (no upcast copy of ``c``: issue 38's peak)."""
    return _distinct_values(c.indptr, c.indices, np.ascontiguousarray(table > 0))


@njit(cache=True, nogil=True)
def _distinct_values(indptr, indices, shows):  # pragma: no cover - compiled
    """For each row u of a CSR pattern, the values v with ``shows[g, v]`` for some g among
    its columns, counted."""
    n, width = len(indptr) - 1, shows.shape[1]
    out = np.zeros(n, np.int64)
    seen = np.zeros(width, np.bool_)
    for u in range(n):
        seen[:] = False
        for p in range(indptr[u], indptr[u + 1]):
            row = shows[indices[p]]
            for v in range(width):
                seen[v] |= row[v]
        out[u] = seen.sum()
    return out
