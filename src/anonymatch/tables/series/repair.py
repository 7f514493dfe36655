"""Repairing an independent release's classes so that a series keeps the running intersection.

A series release (``tables.series.publish``) starts from this year's people clustered exactly as
an independent release (``methods.diverse.diverse_clusters``). A person p published before
carries R_p, the values shown by all of p's classes so far (their intersection over p's earlier
releases, ≥ ℓ values); p may stay in a class C of this release only if R_p ∩ vals(C) still has
≥ ℓ values. :func:`repair` fixes the people who violate it by the cheapest local change in GCP
(the class cost: its people times the NCP of its cell, GCP weights):

- **move** p to another class C′ with |R_p ∩ (vals(C′) ∪ {p's value})| ≥ ℓ, if C keeps ≥ k
  people, ℓ distinct values, and every other constrained member of C keeps its ≥ ℓ values;
- **pull** into C a person q of another class D holding a value of R_p that C lacks, if D keeps
  ≥ k people, ℓ values and its constrained members' values, and q keeps its own in C;
- **exchange** p — or, when that fails, a classmate s of p — with a nearby person q of
  another class D, if afterwards C keeps p's intersection, q's and every other member's, D
  keeps s's and its other members', and both stay ℓ-diverse (the sizes do not change: the
  repair for classes of exactly k people, most of an independent release's);
- **merge** C with another class C″ with |R_p ∩ (vals(C) ∪ vals(C″))| ≥ ℓ (a merge only adds
  values to every member: it breaks nobody's constraint, keeps ≥ k people and ℓ-diversity);
- else **suppress** p (not published, counted): if C then has fewer than k people or ℓ values
  it is merged into the class whose cost grows least; members it leaves short are queued.

Adding a person to a class only adds values, so a repaired person is never broken again by a
later move (every removal is checked against the other members): the work list empties after
at most one pass per violation plus the people queued by suppressions. Each step is vectorized
over the classes (G) — O(G·(d + V)) per move, O(G·(d + V + card)) per merge — or over a window
of the :data:`WINDOW` people nearest in the lexicographic order — O(W·(d + V + k·V)) per pull
or exchange, k + 1 exchanges at most — never a person × person matrix. The option of least
GCP growth wins.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from anonymatch.tables.columns.schema import EncodedQI

WINDOW = 400
"""People nearest a violator in the lexicographic QI order among whom a pull or an exchange
looks."""


class Classes:
    """Mutable classes of one release with their cells and value counts, for :func:`repair`.

    Parameters
    ----------
    enc : EncodedQI
        This release's encoded QIs (n people).
    codes : numpy.ndarray
        (n,) each person's sensitive value code, 0..V−1.
    labels : numpy.ndarray
        (n,) each person's class, 0..G−1.
    n_values : int
        V, the number of sensitive value codes.
    """

    def __init__(
        self, enc: EncodedQI, codes: np.ndarray, labels: np.ndarray, n_values: int
    ) -> None:
        self.enc = enc
        self.codes = codes
        self.labels = labels.astype(np.int64).copy()
        g = int(self.labels.max()) + 1
        self.num_scale, self.cat_scale = enc.ncp_scales()
        self.num = np.nan_to_num(enc.num.astype(np.float64))
        self.cat = enc.cat.astype(np.int64)
        self.size = np.bincount(self.labels, minlength=g).astype(np.int64)
        self.alive = self.size > 0
        self.count = np.zeros((g, n_values), dtype=np.int64)
        np.add.at(self.count, (self.labels, codes), 1)
        dn = self.num.shape[1]
        self.lo = np.full((g, dn), np.inf)
        self.hi = np.full((g, dn), -np.inf)
        for a in range(dn):
            np.minimum.at(self.lo[:, a], self.labels, self.num[:, a])
            np.maximum.at(self.hi[:, a], self.labels, self.num[:, a])
        self.cat_count = []
        for a in range(self.cat.shape[1]):
            table = np.zeros((g, int(self.cat[:, a].max(initial=0)) + 1), dtype=np.int64)
            np.add.at(table, (self.labels, self.cat[:, a]), 1)
            self.cat_count.append(table)
        self.dist = np.zeros((g, len(self.cat_count)))  # categorical values per class cell
        for a, t in enumerate(self.cat_count):
            self.dist[:, a] = (t > 0).sum(axis=1)
        self.now = self.ncp(self.lo, self.hi, self.dist)  # each class cell's NCP

    def _refresh(self, c: int) -> None:
        """Recompute class ``c``'s categorical counts and NCP after a change. O(d · card)."""
        for a, t in enumerate(self.cat_count):
            self.dist[c, a] = (t[c] > 0).sum()
        self.now[c] = self.ncp(self.lo[c], self.hi[c], self.dist[c]) if self.alive[c] else 0.0

    def ncp(self, lo: np.ndarray, hi: np.ndarray, distinct: np.ndarray) -> np.ndarray:
        """The NCP of cells with numeric bounds ``lo``/``hi`` (…, dn) and ``distinct``
        categorical values (…, dc), GCP weights. O(cells · d)."""
        width = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
        return width @ self.num_scale + np.maximum(distinct - 1, 0) @ self.cat_scale

    def cost(self, c: int) -> float:
        """Class ``c``'s GCP mass: its people times its cell's NCP. O(1)."""
        return float(self.size[c] * self.now[c]) if self.alive[c] else 0.0

    def members(self, c: int) -> np.ndarray:
        """The people of class ``c``. O(n)."""
        return np.flatnonzero(self.labels == c)

    def widened(
        self, r: int, index: np.ndarray | slice = slice(None)
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each class's cell NCP with person ``r`` added, and as it is (``index``: those
        classes only, all by default). O(classes · d)."""
        x = self.num[r]
        lo, hi = np.minimum(self.lo[index], x), np.maximum(self.hi[index], x)
        dist = self.dist[index]
        extra = np.stack(
            [t[index, self.cat[r, a]] == 0 for a, t in enumerate(self.cat_count)], axis=-1
        ) if self.cat_count else np.zeros((len(dist), 0))  # fmt: skip
        return self.ncp(lo, hi, dist + extra), self.now[index]

    def add_costs(self, r: int) -> np.ndarray:
        """(G,) how much each class's GCP mass grows when person ``r`` joins it. O(G · d)."""
        grown, now = self.widened(r)
        return np.asarray((self.size + 1) * grown - self.size * now)

    def remove_cost(self, r: int) -> float:
        """How much class ``labels[r]``'s GCP mass changes when person ``r`` leaves it
        (≤ 0). O(class · d)."""
        c = int(self.labels[r])
        rest = self.members(c)
        rest = rest[rest != r]
        if len(rest) == 0:
            return -self.cost(c)
        lo, hi = self.num[rest].min(axis=0), self.num[rest].max(axis=0)
        distinct = np.array(
            [(t[c] > 0).sum() - (t[c, self.cat[r, a]] == 1) for a, t in enumerate(self.cat_count)],
            dtype=np.float64,
        )
        return float(len(rest) * self.ncp(lo, hi, distinct)) - self.cost(c)

    def merge_costs(self, c: int) -> np.ndarray:
        """(G,) how much the GCP mass grows when class ``c`` merges with each class. O(G·d)."""
        lo, hi = np.minimum(self.lo, self.lo[c]), np.maximum(self.hi, self.hi[c])
        union = self.dist.copy()
        for a, t in enumerate(self.cat_count):  # the values of c each class lacks
            union[:, a] += (t[:, np.flatnonzero(t[c] > 0)] == 0).sum(axis=1)
        merged = (self.size + self.size[c]) * self.ncp(lo, hi, union)
        return np.asarray(merged - self.size * self.now - self.cost(c))

    def take_out(self, r: int) -> None:
        """Person ``r`` leaves their class (label −1). O(class · d)."""
        c = int(self.labels[r])
        self.labels[r] = -1
        self.size[c] -= 1
        self.count[c, self.codes[r]] -= 1
        for a, t in enumerate(self.cat_count):
            t[c, self.cat[r, a]] -= 1
        rest = self.members(c)
        if len(rest):
            self.lo[c], self.hi[c] = self.num[rest].min(axis=0), self.num[rest].max(axis=0)
        else:
            self.alive[c] = False
            self.lo[c], self.hi[c] = np.inf, -np.inf
        self._refresh(c)

    def put(self, r: int, c: int) -> None:
        """Person ``r`` (in no class) joins class ``c``. O(d)."""
        self.labels[r] = c
        self.size[c] += 1
        self.count[c, self.codes[r]] += 1
        for a, t in enumerate(self.cat_count):
            t[c, self.cat[r, a]] += 1
        self.lo[c] = np.minimum(self.lo[c], self.num[r])
        self.hi[c] = np.maximum(self.hi[c], self.num[r])
        self._refresh(c)

    def merge(self, c: int, into: int) -> None:
        """Class ``c``'s people join class ``into``; ``c`` dies. O(n + d · card)."""
        self.labels[self.labels == c] = into
        self.size[into] += self.size[c]
        self.count[into] += self.count[c]
        for t in self.cat_count:
            t[into] += t[c]
            t[c] = 0
        self.lo[into] = np.minimum(self.lo[into], self.lo[c])
        self.hi[into] = np.maximum(self.hi[into], self.hi[c])
        self.size[c], self.count[c] = 0, 0
        self.alive[c] = False
        self.lo[c], self.hi[c] = np.inf, -np.inf
        self._refresh(c)
        self._refresh(into)


def repair(
    enc: EncodedQI,
    codes: np.ndarray,
    labels: np.ndarray,
    kept: np.ndarray,
    rank: np.ndarray,
    k: int,
    l: int,  # noqa: E741 - the model's own name
) -> tuple[np.ndarray, dict[str, int]]:
    """Classes of this release keeping every constrained person's running intersection
    (module docstring).

    Parameters
    ----------
    enc : EncodedQI
        This release's encoded QIs.
    codes : numpy.ndarray
        (n,) each person's sensitive value code, 0..V−1.
    labels : numpy.ndarray
        (n,) the independent release's classes (each ≥ k people, ℓ distinct values).
    kept : numpy.ndarray
        (n, V) bool: R_p, the values person p's earlier classes all showed (all True for a
        person never published: no constraint).
    rank : numpy.ndarray
        (n,) each person's position in the lexicographic QI order (where pulls and exchanges
        look).
    k, l : int
        The fewest people and distinct values of a class, the fewest values of R_p ∩ vals.

    Returns
    -------
    labels : numpy.ndarray
        (n,) classes (ids with gaps), −1 for the suppressed.
    moves : dict
        How many people were moved, pulled, exchanged, classes merged, people suppressed.

    Notes
    -----
    Time O(violations · (G·(d + V + card) + k·WINDOW·(d + k·V) + n)), memory
    O(n·V + G·(d + V + card)).
    """
    n_values = kept.shape[1]
    state = Classes(enc, codes, labels, n_values)
    bound = np.asarray(~kept.all(axis=1), dtype=bool)
    value = np.eye(n_values, dtype=bool)
    order = np.argsort(rank, kind="stable")
    done = {"moved": 0, "pulled": 0, "swapped": 0, "merged": 0, "suppressed": 0}

    def short(r: int, c: int) -> bool:
        return bool((kept[r] & (state.count[c] > 0)).sum() < l)

    def can_lose(r: int) -> bool:  # r may leave its class without breaking it
        c = int(state.labels[r])
        if state.size[c] <= k:
            return False
        if state.count[c, codes[r]] > 1:
            return True
        shows: np.ndarray = state.count[c] > 0
        shows[codes[r]] = False
        if shows.sum() < l:
            return False
        rest = state.members(c)
        rest = rest[(rest != r) & bound[rest]]
        return bool(((kept[rest] & shows).sum(axis=1) >= l).all())

    def nearby(r: int, c: int) -> np.ndarray:  # the published people near r, not in c
        at = int(np.searchsorted(rank[order], rank[r]))
        near = order[max(at - WINDOW // 2, 0) : at + WINDOW // 2]
        return near[(state.labels[near] >= 0) & (state.labels[near] != c)]

    def swap_option(r: int, c: int) -> tuple[float, str, int, int] | None:
        """The cheapest exchange of a member s of c (r first) with a nearby person q of
        another class D such that c then keeps r's intersection, every other member's and
        q's, D keeps s's and its other members', and both stay ℓ-diverse."""
        near = nearby(r, c)
        if len(near) == 0:
            return None
        mine = state.members(c)
        best = exchange(r, c, r, near, mine)
        if best is not None:
            return best
        # a classmate s leaving instead: q must bring a value of R_r that c lacks
        near = near[(kept[r] & (state.count[c] == 0))[codes[near]]]
        for s in mine[mine != r].tolist() if len(near) else []:
            found = exchange(r, c, s, near, mine)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        return best

    def exchange(
        r: int, c: int, s: int, near: np.ndarray, mine: np.ndarray
    ) -> tuple[float, str, int, int] | None:
        """The cheapest exchange of s (in c, whose members are ``mine``) with one of ``near``
        keeping every condition (``swap_option``), as (GCP growth, "swap", q, s), or None.
        O(|near|·(d + V + |mine|·V))."""
        held = value[codes[near]]
        in_c = (state.count[c] - value[codes[s]])[None, :] + held > 0  # q instead of s
        klass = state.labels[near]
        in_d = (state.count[klass] - held + value[codes[s]]) > 0  # s instead of q
        ok = (in_c.sum(axis=1) >= l) & (in_d.sum(axis=1) >= l)
        if bound[s]:
            ok &= (kept[s] & in_d).sum(axis=1) >= l
        ok &= ~bound[near] | ((kept[near] & in_c).sum(axis=1) >= l)
        others = mine[(mine != s) & bound[mine]]  # r among them when s is not r
        if len(others) and ok.any():
            shared = kept[others].astype(np.float32) @ in_c.T.astype(np.float32)
            ok &= (shared >= l - 0.5).all(axis=0)
        if not ok.any():
            return None
        near, in_d, klass = near[ok], in_d[ok], klass[ok]
        # c's cell with q instead of s; D's cell with s (q's leaving not counted: an upper
        # bound on D's cost)
        stay = mine[mine != s]
        lo, hi = state.num[stay].min(axis=0), state.num[stay].max(axis=0)
        x = state.num[near]
        width = np.maximum(hi, x) - np.minimum(lo, x)
        distinct = np.zeros((len(near), len(state.cat_count)))
        for a, t in enumerate(state.cat_count):
            left = t[c].copy()
            left[state.cat[s, a]] -= 1
            distinct[:, a] = (left > 0).sum() + (left[state.cat[near, a]] == 0)
        c_cost = len(mine) * (
            np.where(np.isfinite(width), width, 0.0) @ state.num_scale
            + np.maximum(distinct - 1, 0) @ state.cat_scale
        )
        grown, now = state.widened(s, klass)
        cost = c_cost - state.cost(c) + state.size[klass] * (grown - now)
        for j in np.argsort(cost, kind="stable")[:8].tolist():
            q, d = int(near[j]), int(klass[j])
            theirs = state.members(d)
            theirs = theirs[(theirs != q) & bound[theirs]]
            if ((kept[theirs] & in_d[j]).sum(axis=1) >= l).all():
                return float(cost[j]), "swap", q, s
        return None

    queue = deque(np.flatnonzero(bound).tolist())
    while queue:
        r = queue.popleft()
        c = int(state.labels[r])
        if c < 0 or not short(r, c):
            continue
        shows: np.ndarray = state.count > 0
        options: list[tuple[float, str, int, int]] = []
        if can_lose(r):  # move r to a class where its intersection keeps ≥ ℓ values
            fits = ((shows | value[codes[r]]) & kept[r]).sum(axis=1) >= l
            fits &= state.alive
            fits[c] = False
            if fits.any():
                cost = np.where(fits, state.add_costs(r), np.inf)
                best = int(np.argmin(cost))
                options.append((float(cost[best]) + state.remove_cost(r), "move", best, r))
        # pull a holder of a value of R_p that c lacks from a class that can lose them
        lacking = kept[r] & ~shows[c]
        if (kept[r] & shows[c]).sum() == l - 1 and lacking.any():
            near = nearby(r, c)
            near = near[lacking[codes[near]]]
            if len(near):
                mine = state.members(c)
                lo, hi = state.lo[c], state.hi[c]
                x = state.num[near]
                width = np.maximum(hi, x) - np.minimum(lo, x)
                cat_new = np.stack(
                    [state.cat_count[a][c][state.cat[near, a]] == 0
                     for a in range(len(state.cat_count))], axis=-1,
                ) if state.cat_count else np.zeros((len(near), 0))  # fmt: skip
                distinct = state.dist[c]
                grow = (len(mine) + 1) * (
                    np.where(np.isfinite(width), width, 0.0) @ state.num_scale
                    + np.maximum(distinct + cat_new - 1, 0) @ state.cat_scale
                ) - state.cost(c)
                for q in near[np.argsort(grow, kind="stable")][:8].tolist():
                    with_q = shows[c] | value[codes[q]]
                    if bound[q] and (kept[q] & with_q).sum() < l:
                        continue
                    if can_lose(q):
                        extra = float(grow[near == q][0]) + state.remove_cost(q)
                        options.append((extra, "pull", c, q))
                        break
        swap = swap_option(r, c)
        if swap is not None:
            options.append(swap)
        fix = ((shows | shows[c]) & kept[r]).sum(axis=1) >= l
        fix &= state.alive
        fix[c] = False
        if fix.any():
            cost = np.where(fix, state.merge_costs(c), np.inf)
            best = int(np.argmin(cost))
            options.append((float(cost[best]), "merge", best, r))
        if options:
            _, how, target, who = min(options)
            if how == "merge":
                state.merge(c, target)
                done["merged"] += 1
            elif how == "swap":  # who (r or a classmate) into target's class, target into c
                into = int(state.labels[target])
                state.take_out(who)
                state.take_out(target)
                state.put(who, into)
                state.put(target, c)
                done["swapped"] += 1
            else:
                state.take_out(who)
                state.put(who, target)
                done["moved" if how == "move" else "pulled"] += 1
            continue
        # nothing fixes r: suppressed; a class left too small or too uniform is merged away
        state.take_out(r)
        done["suppressed"] += 1
        if state.alive[c] and (state.size[c] < k or (state.count[c] > 0).sum() < l):
            cost = np.where(state.alive, state.merge_costs(c), np.inf)
            cost[c] = np.inf
            if np.isfinite(cost).any():
                into = int(np.argmin(cost))
                state.merge(c, into)
                done["merged"] += 1
                queue.extend(state.members(into)[bound[state.members(into)]].tolist())
            else:  # the last class: its people cannot be published
                for q in state.members(c).tolist():
                    state.take_out(q)
                    done["suppressed"] += 1
        elif state.alive[c]:
            queue.extend(state.members(c)[bound[state.members(c)]].tolist())
    return state.labels, done
