"""Ctrl-C and the worker processes the command spawns (``saturate batch``, ``saturate bench multi --jobs``).

A terminal's Ctrl-C goes to the whole job: the workers get it too. Left to Python, a worker that is starting (a
second of imports) or idle between tasks prints a KeyboardInterrupt traceback; the command itself says what the
interruption means, once. So a worker starts with SIGINT blocked (the mask a process is spawned with is the
spawning thread's: ``spawning_deaf`` around what may start one), and then either keeps it blocked (the parent alone
answers it) or, where a task under way should stop at once, listens while a task runs (``WorkerCtrlC``).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

_MASK = getattr(signal, "pthread_sigmask", None)  # POSIX; on Windows a Ctrl-C is the console's, not a signal mask's


@contextmanager
def spawning_deaf() -> Iterator[None]:
    """SIGINT blocked in this thread while the block may spawn a worker, which starts with it blocked; a Ctrl-C
    meanwhile is delivered here when the block ends (pending, not lost)."""
    if _MASK is None:
        yield
        return
    previous = _MASK(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        _MASK(signal.SIG_SETMASK, previous)


class WorkerCtrlC:
    """In a worker spawned under ``spawning_deaf``: a Ctrl-C stops the task under way as a Ctrl-C stops a session
    (a KeyboardInterrupt, the session checkpointed) and is ignored between tasks (nothing to stop; the parent says
    it). ``listen()`` once in the worker's initializer; ``with ctrl_c.task():`` around each task."""

    def __init__(self) -> None:
        self.busy = False

    def _interrupted(self, signum, frame) -> None:
        if self.busy:
            raise KeyboardInterrupt

    def listen(self) -> None:
        signal.signal(signal.SIGINT, self._interrupted)
        if _MASK is not None:  # a Ctrl-C that came while the worker started is handled now: ignored, idle
            _MASK(signal.SIG_UNBLOCK, {signal.SIGINT})

    @contextmanager
    def task(self) -> Iterator[None]:
        self.busy = True
        try:
            yield
        finally:
            self.busy = False
