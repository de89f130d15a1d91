"""Loading the engine in the command: LangGraph, LangChain, pydantic's models and the session layer, about half of a
warm session's CPU (issue 46: 1.08 s of 2.08 s).

Importing them creates a few hundred thousand objects (classes, functions, pydantic schemas) that live as long as the
process. Python's cyclic garbage collector runs whenever allocations outnumber deallocations by 700, so during the
imports it ran again and again over a growing heap in which nothing was garbage. ``engine_loading`` pauses it while
the engine is imported and then freezes what was imported (``gc.freeze``: moved to a generation the collector never
scans; the ``gc`` documentation's advice for objects that live for the process), so the session's own collections scan
only the session's objects. Measured in one interleaved run (docs/benchmarks.md): a `saturate research` process
about 0.15 s of CPU less, its peak memory and its answers unchanged.

Only in the ``saturate`` command itself (``saturate._is_the_command``): a program that imports saturate keeps its
collector as it set it, and a collector that was already off is left off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from saturate import _is_the_command


@contextmanager
def engine_loading() -> Iterator[None]:
    """Around the command's import of the engine: the collector paused, then what was imported frozen."""
    if not (_is_the_command() and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:  # an import that failed (a missing extra, a Ctrl-C) leaves the collector as it found it, too
        gc.freeze()
        gc.enable()
