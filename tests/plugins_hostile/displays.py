"""Index functions of your own whose ``display`` attribute tables, reports and legends cannot show apart, or at all."""

from __future__ import annotations


def _index(n, upper, lower_cost):
    return upper[..., 0] * upper[..., 1] / lower_cost


def _shown(display):
    def index(n, upper, lower_cost):
        return _index(n, upper, lower_cost)

    index.display = display
    return index


as_cohv = _shown("CoHV-UCB")  # the built-in cohv-ucb's display
as_cohv_name = _shown("  COHV-ucb ")  # the built-in's name, in other case and spaced
as_hv_lower = _shown("hv-ucb")  # the built-in hv-ucb's name
mine = _shown("Mine")
mine_again = _shown("mine")  # another method of one's own shown as `mine` is
two_lines = _shown("Line1\nLine2, with comma")
blank = _shown("   ")
tabbed = _shown("a\tb")
number = _shown(3)
plain = _shown("A | B, c (mine)")  # one printable line: fine
