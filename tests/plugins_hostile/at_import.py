"""A module that ends the interpreter when it is imported."""

import sys

sys.exit(0)


def index(n, upper, lower_cost):
    return n
