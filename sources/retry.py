"""Bounded retries of one web search, shared by the web sources (``ddg``, ``searxng``).

A transient failure (the source's own ``transient`` test: timeouts, connection errors, rate limits, HTTP 429/5xx)
is retried up to ``retries`` times with exponential backoff and jitter (``base_s`` x 2^n, between half and all of
it), or after the server's Retry-After when it names one (capped at ``MAX_RETRY_AFTER_S``: a server asking for
an hour does not hold a session for an hour; it fails and the next source in a chain answers). Each retry is
logged. Then, and for every other failure, a SearchError names the source, the query, the attempts and the
underlying error; nothing is swallowed (the search node records it in the round).

Why a loop here and not LangGraph's RetryPolicy or tenacity: the search node records failures instead of raising
(a RetryPolicy would never fire and would re-run the whole node), and the attempt count belongs in the error the
round shows; the loop is ten lines, bounded per query and testable with an injected ``sleep``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from saturate.state.context import SearchError
from saturate.state.text import clip

T = TypeVar("T")
MAX_RETRY_AFTER_S = 30.0
log = logging.getLogger("saturate.search")


def backoff_delay(retry: int, base_s: float, jitter: float) -> float:
    """Delay before retry number ``retry`` (0-based): base x 2^retry, scaled into [1/2, 1] by ``jitter`` in [0, 1)."""
    full = base_s * (2**retry)
    return full / 2 + full / 2 * jitter


class RateLimited(Exception):
    """The server said "too many requests" (HTTP 429, or 503/202 with a rate-limit body); ``retry_after_s`` is what
    its Retry-After header asked for, if anything."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


def with_retries(
    ask: Callable[[], T],
    *,
    source: str,
    query: str,
    retries: int,
    base_s: float,
    transient: Callable[[BaseException], bool],
    sleep: Callable[[float], None],
    jitter: Callable[[], float],
) -> T:
    """``ask()``, retried on transient failures as the module says; a SearchError once it gives up."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return ask()
        except SearchError:  # already the user's line (the source said what went wrong)
            raise
        except Exception as err:  # noqa: BLE001 - retried or re-raised as SearchError below
            is_transient = transient(err)
            if is_transient and attempt <= retries:
                delay = backoff_delay(attempt - 1, base_s, jitter())
                asked = getattr(err, "retry_after_s", None)
                if asked is not None:
                    if asked > MAX_RETRY_AFTER_S:  # longer than a session should wait: give up now
                        raise SearchError(
                            f"{source} search for {clip(query, 200)!r} rate-limited: the server asks to wait "
                            f"{asked:.0f} s (more than {MAX_RETRY_AFTER_S:.0f} s): {err}"
                        ) from err
                    delay = max(delay, asked)
                log.warning(
                    "%s search %r attempt %d/%d failed (%s: %s); retrying in %.2fs",
                    source,
                    clip(query, 200),
                    attempt,
                    retries + 1,
                    type(err).__name__,
                    err,
                    delay,
                )
                sleep(delay)
                continue
            kind = "transient failure" if is_transient else "failure"
            raise SearchError(
                f"{source} search for {clip(query, 200)!r} failed after {attempt} attempt(s) ({kind}): "
                f"{type(err).__name__}: {err}"
            ) from err
