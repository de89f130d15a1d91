"""A wall-clock bound on a blocking call (a search that may hang, a slow model reply).

The call runs in a daemon thread; if it has not returned within ``timeout``
seconds, ``DeadlineExceeded`` is raised and its eventual result is discarded
(a thread cannot be killed; a daemon thread never holds up the process's exit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class DeadlineExceeded(TimeoutError):
    pass


def call_with_deadline(fn: Callable[..., Any], *args: Any, timeout: float, **kwargs: Any) -> Any:
    if timeout <= 0:
        raise DeadlineExceeded("no time left")
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="saturate-deadline")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise DeadlineExceeded(f"no answer within {timeout:.2f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
