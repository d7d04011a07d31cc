"""The plan's figure: each method's predicted metric against budget, one panel per target."""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend)
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

from cabench import registry  # noqa: E402
from cabench.storage import figure_bytes  # noqa: E402
from cabench.units import LABELS  # noqa: E402

MODE_LINE = {"": "-", "deterministic": "-", "stochastic": "--"}
#: Characters of the 10-point title that fit an inch of the figure (wider than most: digits and capitals).
TITLE_CHARACTERS_PER_INCH = 11


def plan_figure(curves: pd.DataFrame, marks: dict[tuple[str, str, str], float], unit: str,
                exhaustive: float | None, title: str, note: str | None = None) -> bytes:
    """Draw ``curves`` (method, cost_mode, target, budget, profiling, low, high) as a PNG's bytes: the metric on the
    profiling rows themselves as a line, the band between the draws' ``low`` and ``high`` quantiles shaded, the
    target as a dotted line, each planned budget (``marks``) as a dot and the exhaustive evaluation's cost (replayed
    logs) as a grey vertical line; ``title`` is wrapped to the figure's width, ``note`` written below the panels
    (the surrogate logs' note)."""
    targets = list(dict.fromkeys(curves["target"]))
    fig, axes = plt.subplots(1, len(targets), figsize=(5.2 * len(targets), 3.8), squeeze=False)
    methods = list(dict.fromkeys(curves["method"]))
    with registry.distinct_styles(methods):  # a colour of its own for each method
        colours = {method: registry.style(method)[0] for method in methods}
    for ax, target in zip(axes[0], targets):
        bound = float(target.split("=")[-1])
        for (method, mode), g in curves[curves["target"] == target].groupby(["method", "cost_mode"], sort=False):
            color = colours[method]
            label = registry.display(method) + (f" ({mode})" if mode else "")
            ax.plot(g["budget"], g["profiling"], MODE_LINE.get(mode, "-"), color=color, label=label)
            ax.fill_between(g["budget"], g["low"], g["high"], color=color, alpha=0.15, linewidth=0)
            at = marks.get((method, mode, target), math.inf)
            if math.isfinite(at):
                ax.plot([at], [bound], "o", color=color)
        ax.axhline(bound, color="black", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel(f"budget B ({LABELS[unit]})")
        if exhaustive is not None:
            ax.axvline(exhaustive, color="grey", linewidth=1)
            ax.set_xlabel(f"budget B ({LABELS[unit]})\ngrey: every configuration on every instance once")
        ax.set_ylabel(target.split("<")[0].split(">")[0])
        ax.set_title(f"target {target}", fontsize=10)
        ax.legend(fontsize=8)
        _budget_ticks(ax)
    fig.suptitle(textwrap.fill(title, int(TITLE_CHARACTERS_PER_INCH * 5.2 * len(targets))), fontsize=10)
    fig.tight_layout()
    if note:
        fig.text(0.5, -0.01, note, ha="center", va="top", fontsize=7, style="italic")
    png = figure_bytes(fig, "png", dpi=150, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return png


def _budget_ticks(ax) -> None:
    """Label the log budget axis at the powers of ten where it spans two decades or more, at 1, 2 and 5 times them
    where that gives two labels or more, else at every multiple (a span under half a decade), else at a few evenly
    spaced budgets. matplotlib's own choice labelled 2, 3, 4 and 6 times a power of ten over one to two decades, and
    every hundred over a tenth of one, labels that ran into one another."""
    low, high = sorted(ax.get_xlim())

    def inside(subs: tuple[float, ...]) -> int:
        powers = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        return sum(low <= c * 10.0 ** e <= high for e in powers for c in subs)

    subs = next((s for s in ((1.0,), (1.0, 2.0, 5.0), tuple(map(float, range(1, 10))))
                 if inside(s) >= 2 and (s == (1.0,)) == (math.log10(high / low) >= 2)), None)
    # under two multiples of a power of ten in the span: a few evenly spaced budgets
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4) if subs is None else  # powers alone: every few over wide spans
                               LogLocator(base=10, subs=subs, numticks=10 if subs == (1.0,) else 100))
    ax.xaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _power_of_ten(value: float, _position: object = None) -> str:
    """A tick at ``c`` times a power of ten as ``c×10^e`` (``10^e`` where ``c`` is 1), in mathtext; none at 0 or
    below, which a log axis does not show."""
    if not value > 0:
        return ""
    exponent = math.floor(math.log10(value) + 1e-9)
    coefficient = round(value / 10.0 ** exponent, 6)
    power = f"10^{{{exponent}}}"
    return f"${power}$" if coefficient == 1 else f"${coefficient:g}\\times{power}$"
