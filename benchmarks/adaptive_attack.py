"""Sustained attacks (Choromanski et al. §4): an adversary who knows c true matches.

For real releases of bupa (uniform δ = 10) and Reed98 (adaptive δᵢ = 10 − (F − ⌊log fᵢ⌋)) by
Algorithm 1 (asymmetric), Algorithm 2 (symmetric) and agglomerative k-anonymity (cliques), and
c ∈ {0, 1, 2, 4, 6, 8} known pairs chosen at random (30 trials each), count every other
person's candidate rows, i.e. the rows that some perfect matching containing the c known pairs
gives them. Two adversary views: the method's own graph Ĝ (the guarantee of Lemmas 4.3/4.5 and
Theorem 4.1 is about it) and the full compatibility graph rebuilt from the published cells
(what an attacker actually sees; it contains Ĝ, so candidates only grow).

    python benchmarks/adaptive_attack.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _adaptive_data import Binarized, facebook, facebook_levels, uci  # noqa: E402
from _common import ROOT, machine, update_results  # noqa: E402

from anonymatch.tables.models.adaptive import solve
from anonymatch.tables.risk.attack import simulate_attack

METHODS = ("bmatching", "bmatching-symmetric", "agglomerative")
KNOWN = (0, 1, 2, 4, 6, 8)
TRIALS = 30
OUT = ROOT / "benchmarks" / "results" / "adaptive_attack.json"
IMG = ROOT / "docs" / "img" / "adaptive_attack.png"


def compatibility_of(data: Binarized, stars: np.ndarray) -> sp.csr_array:
    """Original i ~ published j iff they agree wherever j is not starred (missing values are
    their own value, as in the release). Blocked over published rows; fine at n ≈ 1000."""
    codes = np.where(data.forced, -1, data.codes)
    n = len(codes)
    rows, cols = [], []
    for start in range(0, n, 256):
        pub = codes[start : start + 256]
        mask = ~stars[start : start + 256]
        ok = np.all((codes[None, :, :] == pub[:, None, :]) | ~mask[:, None, :], axis=2)
        j, i = np.nonzero(ok)
        rows.append(i)
        cols.append(j + start)
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((np.ones(len(r), np.int8), (r, c)), shape=(n, n))


def run(name: str, data: Binarized, delta: np.ndarray) -> dict[str, dict[str, list[float]]]:
    problem = data.problem(delta)
    n = problem.n
    truth = np.arange(n)
    out: dict[str, dict[str, list[float]]] = {}
    for method in METHODS:
        sol = solve(problem, method)
        level = np.full(n, int(delta.max())) if method == "agglomerative" else delta
        views = {
            "graph": sp.csr_array(sol.adjacency(n).T),  # original × published
            "compatibility": compatibility_of(data, sol.stars),
        }
        for view, c in views.items():
            series: dict[str, list[float]] = {"below": [], "success": [], "min_slack": []}
            for known in KNOWN:
                rep = simulate_attack(c, truth, level, known, TRIALS, np.random.default_rng(known))
                series["below"].append(rep.below_guarantee_fraction)
                series["success"].append(rep.success_probability)
                series["min_slack"].append(rep.min_slack)
            out[f"{method}|{view}"] = series
            print(name, method, view, series, flush=True)
    return out


def _random_regular(n: int, delta: int, symmetric: bool, rng: np.random.Generator) -> np.ndarray:
    """Identity plus δ − 1 random perfect matchings disjoint from it and each other
    (asymmetric), or identity plus a random (δ − 1)-regular simple graph (symmetric)."""
    from scipy.optimize import linear_sum_assignment

    g = np.eye(n, dtype=bool)
    if symmetric:
        import networkx as nx

        h = nx.random_regular_graph(delta - 1, n, seed=int(rng.integers(2**31)))
        for a, b in h.edges():
            g[a, b] = g[b, a] = True
        return g
    for _ in range(delta - 1):
        cost = rng.random((n, n))
        cost[g] = 1e9
        r, c = linear_sum_assignment(cost)
        g[r, c] = True
    return g


def small_graph_census(graphs: int = 2000) -> dict[str, float]:
    """Share of random 3-regular graphs on 6 or 8 vertices in which revealing one true pair
    leaves some person fewer than δ − 1 = 2 candidates (every choice of the known pair)."""
    from anonymatch.tables.risk.attack import candidate_counts

    rng = np.random.default_rng(0)
    out = {}
    for symmetric in (False, True):
        bad = 0
        for t in range(graphs):
            n = 6 if t % 2 else 8
            c = sp.csr_array(_random_regular(n, 3, symmetric, rng).astype(np.int8))
            for i in range(n):
                known = np.zeros(n, bool)
                known[i] = True
                if candidate_counts(c, np.arange(n), known).min() < 2:
                    bad += 1
                    break
        out["symmetric" if symmetric else "asymmetric"] = bad / graphs
    return out


def main() -> None:
    if "--plot-only" in sys.argv:
        _plot(json.loads(OUT.read_text())["releases"])
        return
    bupa = uci("bupa")
    reed, friends = facebook("Reed98")
    results = {
        "bupa (δ = 10)": run("bupa", bupa, np.full(len(bupa.codes), 10)),
        "Reed98 (adaptive, δ = 10)": run("Reed98", reed, facebook_levels(friends, 10)),
    }
    census = small_graph_census()
    print("census", census, flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"releases": results, "census": census}, indent=1))
    lines = [
        "## Adaptive anonymity: sustained attacks (Choromanski et al. §4)",
        "",
        f"Adversary knowing c true matches ({TRIALS} random trials per c). *below*: share of",
        "(trial, unknown person) pairs left with fewer than δᵢ − c candidate rows; *min slack*:",
        "fewest candidates − (δᵢ − c) seen; *success*: a random attack's success probability.",
        "Agglomerative is judged against its own k = max δᵢ.",
        "",
        "| data | method | view | c = " + " / ".join(map(str, KNOWN)) + " : below | min slack |"
        " success |",
        "|---|---|---|---|---|---|",
    ]
    for data_name, res in results.items():
        for key, s in res.items():
            method, view = key.split("|")
            lines.append(
                f"| {data_name} | {method} | {view} | "
                + " / ".join(f"{100 * b:.1f}%" for b in s["below"])
                + " | "
                + " / ".join(str(int(v)) for v in s["min_slack"])
                + " | "
                + " / ".join(f"{v:.3f}" for v in s["success"])
                + " |"
            )
    lines += [
        "",
        "Where asymmetric graphs degrade (Theorem 4.1): on these real releases no person fell",
        "below δᵢ − c in any method. The degradation the theory allows shows in small sparse",
        "graphs: among 2,000 random 3-regular graphs on 6 or 8 vertices (identity plus random",
        "disjoint perfect matchings), revealing one true pair leaves someone with fewer than",
        f"δ − 1 = 2 candidates in {100 * census['asymmetric']:.2f}% of the asymmetric graphs and"
        f" {100 * census['symmetric']:.2f}% of the symmetric ones (Lemma 4.5). A 6-vertex example",
        "is in `tests/test_adaptive.py::test_asymmetric_graph_can_degrade`.",
        "",
        "![attack](img/adaptive_attack.png)",
        "",
        "Command: `python benchmarks/adaptive_attack.py`; machine: " + machine() + ".",
    ]
    update_results("adaptive_attack", "\n".join(lines))
    _plot(results)


def _plot(results: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for col, (data_name, res) in enumerate(results.items()):
        for key, s in res.items():
            method, view = key.split("|")
            style = "-" if view == "graph" else "--"
            axes[0, col].plot(KNOWN, s["min_slack"], style + "o", ms=3, label=f"{method} ({view})")
            axes[1, col].plot(KNOWN, s["success"], style + "o", ms=3, label=f"{method} ({view})")
        axes[0, col].set_title(data_name)
        axes[0, col].axhline(0, color="k", lw=0.8)
        axes[0, col].set_ylabel("fewest candidates − (δᵢ − c)  (≥ 0: guarantee kept)")
        axes[1, col].set_ylabel("random attack success probability")
        for row in range(2):
            axes[row, col].set_xlabel("c (true matches known)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    IMG.parent.mkdir(exist_ok=True)
    fig.savefig(IMG, dpi=90)


if __name__ == "__main__":
    main()
