"""The one exception type users see.

Every problem with user input (a log file, a mapping, a config, a budget, an
output folder) is raised as :class:`CabenchError` with a one-line message that
says what is wrong, where, and how to fix it. The command line prints it and
exits with code 2; library users can catch it.
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Callable, Iterable


class CabenchError(Exception):
    """A user-facing error: one line, naming file, key, column or row."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class Interrupted(CabenchError):
    """The run was stopped by the user (Ctrl-C or SIGTERM); what it finished is kept. The command line prints the
    message and exits with code 130."""


def first_three(names: list[str]) -> str:
    """The first three of ``names``, with ', ...' when there are more: what a one-line message lists."""
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def did_you_mean(name: str, choices: Iterable[str], otherwise: str = "", cutoff: float = 0.6,
                 shown: Callable[[str], object] = str) -> str:
    """The end of a message refusing ``name``: ``; did you mean 'X'?`` with the closest of ``choices`` (``shown`` as
    the message writes it), else ``otherwise`` (for example the list of choices). Case is ignored: a method given by
    the name a report shows it by (``CoHV-UCB``) is pointed to the name a config gives (``cohv-ucb``)."""
    choices = list(choices)
    near = difflib.get_close_matches(name, choices, n=1, cutoff=cutoff)
    if not near:
        folded: dict[str, str] = {}
        for choice in choices:
            folded.setdefault(choice.lower(), choice)
        near = [folded[m] for m in difflib.get_close_matches(name.lower(), list(folded), n=1, cutoff=cutoff)]
    return f"; did you mean '{shown(near[0])}'?" if near else otherwise


def os_reason(exc: OSError) -> str:
    """Why the system refused a path, in words for the path's owner: a file where a folder is needed is said so
    (the system's own "File exists" and "Not a directory" name neither); else the system's words."""
    if exc.errno == errno.EEXIST and exc.filename is not None and os.path.isfile(exc.filename):
        return "a file is there, where a folder is needed"
    if exc.errno == errno.ENOTDIR:
        return "a part of this path is a file, not a folder"
    return str(exc.strerror or exc)
