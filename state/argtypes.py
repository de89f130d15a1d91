"""argparse ``type=`` checkers for numeric flags, shared by every command and benchmark.

A bare ``type=int`` took ``--tasks -1`` and ``--latency-ms -5`` (a benchmark then printed "model novelty adds
-148.2 ms per round"); each numeric flag says its least value here instead, and argparse turns the refusal into
the usual one-line usage error (exit 2) before anything runs.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def at_least(minimum: float, kind: type = int) -> Callable[[str], float]:
    """An argparse type: a ``kind`` (int or float) number of at least ``minimum``; a float must be finite."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {what}: {text[:40]!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"not a finite number: {text[:40]!r}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum:g} or more, not {value:g}")
        return value

    parse.__name__ = f"{kind.__name__} >= {minimum:g}"  # argparse names the type in some messages
    return parse


positive_int = at_least(1)  # a count of things to run: questions, sessions, workers, folds
non_negative_int = at_least(0)  # a seed, or a count where 0 means none (or all, as the flag says)
non_negative_float = at_least(0.0, float)  # a duration: a latency in milliseconds


def port_number(text: str) -> int:
    """A TCP port (1-65535), else argparse's one-line error."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text[:40]!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, not {port}")
    return port
