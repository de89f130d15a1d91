"""The two ways a page fetch ends without a page, shared by the guard, the decoders and ``fetch_page``.

``FetchRefused``: the guard said no (scheme, address, redirects, content type or coding); nothing unsafe was
contacted. ``FetchError``: the fetch was allowed but failed (DNS, connection, HTTP status, time cap). Each carries
a one-line ``reason`` and a ``fetch_status`` (what the page log records).
"""

from __future__ import annotations


class FetchRefused(RuntimeError):
    """The guard refused the URL (or a redirect, or the content type); nothing unsafe was contacted."""

    fetch_status = "refused"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class FetchError(RuntimeError):
    """The fetch was allowed but failed (DNS, connection, HTTP status, time cap...)."""

    fetch_status = "error"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
