"""Ctrl-C and the worker processes the command spawns (``saturate batch``, ``saturate bench multi --jobs``).

A terminal's Ctrl-C goes to the whole job: the workers get it too. Left to Python, a worker that is starting (a
second of imports) or idle between tasks prints a KeyboardInterrupt traceback; the command itself says what the
interruption means, once. So a worker starts with SIGINT blocked (the mask a process is spawned with is the
spawning thread's: ``spawning_deaf`` around what may start one), and then either keeps it blocked (the parent alone
answers it) or hears it only while a task runs, which then stops as a session stops on Ctrl-C (``worker_started``,
``task_hears_ctrl_c``).
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


_IGNORED = [False]  # whether this worker was started with Ctrl-C ignored (the command was: a background job)


def worker_started() -> None:
    """Once, in a worker spawned under ``spawning_deaf`` (its initializer): between tasks a Ctrl-C is ignored — there
    is nothing to stop, the parent says what it means — and so is one that came while the worker started."""
    _IGNORED[0] = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _MASK is not None:
        _MASK(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def task_hears_ctrl_c() -> Iterator[None]:
    """Around a task in such a worker: a Ctrl-C is Python's own again, which a session turns into a stop at its next
    step, checkpointed (graph/session.py), a second one at once. Not in a worker of a command that ignores it."""
    if _IGNORED[0]:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
