"""``cabench`` and ``python -m cabench``: start the command line.

Loading the command line (typer, and through it click and rich) takes a few tenths of a second. The command
line is loaded here, so that a Ctrl-C meanwhile is said in one line with the exit code of every other interrupted
command (130), as is one that escapes the command itself, rather than as a traceback of whichever import it
landed in. (A SIGTERM before the command line has loaded ends the process as the system's default does; from then
on it is said as a Ctrl-C is, also while a command loads what it needs.)
"""

from __future__ import annotations

import importlib
import sys


def main() -> None:
    """Load :mod:`cabench.cli` and run the command; an interrupt meanwhile is one line and exit code 130."""
    try:
        cli = importlib.import_module("cabench.cli")
        cli.main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
