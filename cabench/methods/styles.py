"""How figures and reports show the methods: display name, colour, marker.

Display data only: this module imports nothing, and cell keys do not hash it (a colour is not a
result; see :mod:`cabench.cell_keys`). A method of your own is shown by the display name it gives
and one of :data:`USER`, chosen by its name.
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
#: (colour, marker) a method of your own may get.
USER = (("#e377c2", "h"), ("#bcbd22", "d"), ("#000000", "p"))
