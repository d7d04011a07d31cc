"""How figures and reports show the methods: display name, colour, marker.

Display data only: this module imports nothing, and cell keys do not hash it (a colour is not a
result; see :mod:`cabench.cell_keys`). A method of your own is shown by the display name it gives
and one of :data:`USER`, chosen by its name (another where a figure holds a method already shown so:
:func:`cabench.registry.distinct_styles`).
"""

#: (display name, colour, marker) of every built-in method, by name (online and identification alike).
BUILT_IN = {
    "cohv-ucb": ("CoHV-UCB", "#d62728", "o"),
    "hv-ucb": ("HV-UCB", "#1f77b4", "s"),
    "acc-cost-ucb": ("Accuracy-Cost-UCB", "#2ca02c", "^"),
    "uniform": ("Uniform", "#7f7f7f", "D"),
    "copsi": ("CoPSI", "#ff7f0e", "P"),
    "psi-sr": ("PSI-SR", "#9467bd", "v"),
    "copsi-r": ("CoPSI-R", "#8c564b", "*"),
    "ege-sh": ("EGE-SH", "#17becf", "X"),
}
_USER_COLOURS = ("#e377c2", "#bcbd22", "#000000", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
                 "#dbdb8d", "#9edae5", "#f7b6d2")
_USER_MARKERS = ("h", "d", "p", "<", ">", "8")
#: (colour, marker) a method of your own may get: every colour with every marker (none a built-in method's), each
#: differing from the one before in both.
USER = tuple((_USER_COLOURS[i % len(_USER_COLOURS)], _USER_MARKERS[(i // len(_USER_COLOURS) + i) % len(_USER_MARKERS)])
             for i in range(len(_USER_COLOURS) * len(_USER_MARKERS)))
