"""No library log lines on the console while a command only reads sessions.

LangGraph logs ``Ignoring unknown node name follow in pending sends`` (``langgraph/pregel/_algo.py``, on the
``langgraph`` logger, level WARNING; with logging not configured, Python prints it on stderr) for each checkpoint
whose pending ``Send`` packets go to a node the reading graph lacks: a multi-source session read with the
single-loop graph, as ``checkpoints``, ``show --checkpoints`` and ``fork`` do with any thread. Nothing is wrong
then (the checkpoints are only read, and those commands say in one line what they make of a multi-source
session), so ``inspecting`` drops exactly those records while such a command runs. A session that runs is left
alone: there the same line would mean pending work written by another graph, which a user must see.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

# the logger langgraph/pregel/_algo.py writes to (``langgraph.pregel._log.logger``); named, not imported, so the
# CLI starts without LangGraph (tests/test_cli_runs.py checks that it is the one)
PENDING_SENDS_LOGGER = "langgraph"


class _PendingSends(logging.Filter):
    """Drops LangGraph's "Ignoring ... in pending sends" records (unknown node name, invalid packet type)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Ignoring ") and message.endswith(" in pending sends"))


_FILTER = _PendingSends()
_LOCK = threading.Lock()
_DEPTH = [0]  # inspecting() blocks open (nested or in threads): the filter stays until the last one closes


@contextmanager
def inspecting():
    """While the block runs (or the decorated function: ``@inspecting()``), LangGraph's pending-sends warnings
    are dropped at their logger, so no handler (the console, pytest's caplog) sees them."""
    logger = logging.getLogger(PENDING_SENDS_LOGGER)
    with _LOCK:
        if _DEPTH[0] == 0:
            logger.addFilter(_FILTER)
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                logger.removeFilter(_FILTER)
