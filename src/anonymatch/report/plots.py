"""Small matplotlib plots rendered to inline SVG data URIs (text kept as text, no metadata,
no external reference), so the report stays one self-contained file.

Every function returns a ``data:image/svg+xml;base64,…`` URI. Figures are small (about
6 × 2.4 inches) and closed after rendering; figures are bare ``matplotlib.figure.Figure``
objects (no pyplot, no display, no global state). Cost: a few tens of milliseconds per plot.
"""

from __future__ import annotations

import base64
import functools
import io
import re
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import numpy as np

P = ParamSpec("P")

ORIGINAL = "#7f8c8d"
RELEASE = "#1f77b4"
ACCENT = "#d62728"


RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "anonymatch",
    "font.size": 8,
    "axes.titlesize": 9,
}
"""Text stays text in the SVG (smaller, selectable); fixed ids make the output deterministic."""


def _styled(func: Callable[P, str]) -> Callable[P, str]:
    """Run a plot function under the report's matplotlib settings (the caller's are kept)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        import matplotlib

        with matplotlib.rc_context(RC):  # type: ignore[arg-type]
            return func(*args, **kwargs)

    return wrapper


def _figure(
    width: float = 6.0, height: float = 2.4, left: float = 0.09, bottom: float = 0.18
) -> tuple[Any, Any]:
    # a bare Figure (no pyplot: no GUI backend, no global figure registry) with fixed margins
    # (layout engines draw every figure twice)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    ax = fig.add_subplot()
    fig.subplots_adjust(left=left, right=0.98, bottom=bottom, top=0.88)
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def to_uri(fig: Any) -> str:
    """Render ``fig`` as SVG (without metadata, DOCTYPE or XML declaration) and return it as a
    base64 data URI."""
    buffer = io.StringIO()
    fig.savefig(
        buffer,
        format="svg",
        metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
    )
    svg = buffer.getvalue()
    svg = re.sub(r"<\?xml[^>]*>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


@_styled
def count_histogram(
    histogram: dict[int, int], xlabel: str, ylabel: str = "people", mark: int | None = None
) -> str:
    """Bars of ``{value: count}``; values beyond 60 distinct ones are binned (1-2-5 steps).
    ``mark`` draws a dashed vertical line (e.g. at k)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    fig, ax = _figure()
    items = sorted(histogram.items())
    if len(items) > 60:
        values = np.repeat([v for v, _ in items], [c for _, c in items])
        edges = np.unique(np.geomspace(max(1, items[0][0]), items[-1][0] + 1, 40).astype(int))
        ax.hist(values, bins=edges, color=RELEASE)
        ax.set_xscale("log")
        # labels at 1-2-5 steps per decade only (a linear integer locator on a log axis puts
        # dozens of labels on top of each other at its left end); no minor labels
        decades = np.log10(max(edges[-1], 10)) - np.log10(max(edges[0], 1))
        ax.xaxis.set_major_locator(LogLocator(10, subs=(1.0, 2.0, 5.0) if decades < 3 else (1.0,)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.bar([v for v, _ in items], [c for _, c in items], width=0.8, color=RELEASE)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if mark is not None:
        ax.axvline(mark - 0.5, color=ACCENT, linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return to_uri(fig)


@_styled
def bars(labels: Sequence[str], values: Sequence[float], xlabel: str, percent: bool = True) -> str:
    """Horizontal bars, one per label (e.g. the loss per attribute)."""
    height = max(1.2, 0.28 * len(labels) + 0.6)
    longest = max((len(str(x)) for x in labels), default=4)
    fig, ax = _figure(6.0, height, left=min(0.4, 0.03 + 0.0115 * longest), bottom=0.5 / height)
    scale = 100.0 if percent else 1.0
    y = np.arange(len(labels))
    ax.barh(y, [scale * v for v in values], color=RELEASE)
    ax.set_yticks(y, labels=list(labels))
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    for yi, v in zip(y, values, strict=True):
        shown = f"{scale * v:.1f}%" if percent else f"{v:.2g}"  # seconds: 0.031, not 0.0
        ax.text(scale * v, yi, f" {shown}", va="center")
    return to_uri(fig)


def _comparison(fig: Any, ax: Any, title: str) -> str:
    """Finish an original-versus-release plot: title, records axis, legend top right."""
    ax.set_title(title)
    ax.set_ylabel("records")
    ax.legend(frameon=False, loc="upper right")
    return to_uri(fig)


@_styled
def compare_numeric(
    edges: np.ndarray, original: np.ndarray, release: np.ndarray, title: str
) -> str:
    """Original counts per bin against the release's (ranges spread uniformly) as two step
    lines over the same bins."""
    fig, ax = _figure()
    ax.stairs(original, edges, color=ORIGINAL, linewidth=1.5, label="original")
    ax.stairs(release, edges, color=RELEASE, linewidth=1.5, label="release (ranges spread)")
    return _comparison(fig, ax, title)


@_styled
def compare_categorical(
    labels: Sequence[str],
    original: np.ndarray,
    release: np.ndarray,
    title: str,
    spread: str = "value sets spread",
) -> str:
    """Grouped bars: original count of each value against the release's (value sets, or
    hierarchy nodes, spread uniformly over their values: ``spread`` says which)."""
    fig, ax = _figure(6.0, 2.6, bottom=0.3)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, original, width=0.4, color=ORIGINAL, label="original")
    ax.bar(x + 0.2, release, width=0.4, color=RELEASE, label=f"release ({spread})")
    ax.set_xticks(x, labels=[_short(s) for s in labels], rotation=35, ha="right")
    return _comparison(fig, ax, title)


@_styled
def two_histograms(
    a: np.ndarray, b: np.ndarray, labels: tuple[str, str], xlabel: str, title: str
) -> str:
    """Two integer distributions (e.g. degrees before and after) as step lines."""
    fig, ax = _figure()
    top = int(max(a.max(initial=0), b.max(initial=0))) + 1
    bins = np.unique(np.linspace(0, top, min(top, 50) + 1).astype(int))
    ha, _ = np.histogram(a, bins=bins)
    hb, _ = np.histogram(b, bins=bins)
    ax.stairs(ha, bins, color=ORIGINAL, linewidth=1.5, label=labels[0])
    ax.stairs(hb, bins, color=RELEASE, linewidth=1.5, label=labels[1])
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(frameon=False)
    return to_uri(fig)


def timings(stages: dict[str, float]) -> str:
    """Horizontal bars of the stage timings in seconds."""
    from anonymatch.report.model import label_text

    return bars([label_text(x) for x in stages], list(stages.values()), "seconds", percent=False)


def _short(label: str, width: int = 18) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"
