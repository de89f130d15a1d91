"""Imported first by ``saturate.cli``: a Ctrl-C while the command line is still loading says so in one line.

Before ``main`` runs nothing has started, so nothing was saved; without this, a Ctrl-C in the first second (the
imports) printed a KeyboardInterrupt traceback from inside an import. Installed only for the console script and
``python -m saturate.cli`` (a program that imports ``saturate.cli`` keeps its own Ctrl-C); ``main`` hands Ctrl-C back
to Python's handler as it starts, and says what an interruption after that means.
"""

from __future__ import annotations

import os
import signal
import sys


def interrupted_early(signum, frame) -> None:
    os.write(2, b"saturate: interrupted before anything started; nothing was saved\n")
    os._exit(130)


if os.path.basename(sys.argv[0] if sys.argv else "") in ("saturate", "-m"):
    signal.signal(signal.SIGINT, interrupted_early)
