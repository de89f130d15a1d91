"""Safe page fetching: the only way saturate reads a web page.

``fetch_page(url, ...)`` returns a ``Page`` or raises ``FetchRefused`` (the
guard said no: scheme, address, redirects, content type) or ``FetchError``
(the fetch was allowed but failed: DNS, connection, HTTP status, time cap);
both are in ``sources/fetch_errors.py``. Every exception carries a one-line ``reason``.

Its parts, each a module of its own:

- ``sources/address_guard.py``: which URLs may be connected to (``check_url``: http(s) only, no credentials,
  no loopback, private, link-local, multicast, reserved or special-purpose address, literal IPs in any spelling,
  every address a name resolves to; ``allow_hosts`` for exact hosts) and which redirects may be followed
  (``redirect_target``);
- ``sources/transport.py``: the connection goes to exactly the vetted addresses (no DNS rebinding), with normal
  TLS verification and no proxy, and one deadline bounds every socket read and write;
- ``sources/decoding.py``: content codings undone with a bound on every layer, and the charset.

Redirects are followed by hand here (at most ``max_redirects``, 5 by default; the
6th is refused), and every hop goes through the same guard before any
connection is made. Only GET, no cookies carried over by hand, no auth. httpx
never reads a Location itself (the transport is called directly, not through
``Client.send``, which parses it even with ``follow_redirects=False``).

Bounds: one deadline (``timeout_s``) covers DNS, connects, TLS, every
redirect and the body. The body is streamed and read up to
``max_bytes``; a longer body is TRUNCATED there (not refused) and the page says
so in ``notes`` — the beginning of a long article is still its most useful
part. A body cut by the time cap is kept the same way when some of it arrived.

Content types: ``text/html``, ``application/xhtml+xml``, ``text/plain`` only;
anything else (PDF, images, binaries, a missing type) is refused before the
body is read.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass

import httpcore
import httpx

from saturate.sources.address_guard import Resolver, check_url, redirect_target, system_resolve
from saturate.sources.decoding import ACCEPT_ENCODING, content_codings, decode_body, media_type, read_body
from saturate.sources.fetch_errors import FetchError, FetchRefused
from saturate.sources.transport import Deadline, PinnedBackend, PinnedTransport

ALLOWED_CONTENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5
USER_AGENT = "saturate/0.1 (research agent)"
ACCEPT = "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8"


@dataclass(frozen=True)
class Page:
    url: str  # as asked
    final_url: str  # after redirects
    content_type: str  # media type only, lower case (text/html)
    text: str  # the decoded body (HTML or plain text), at most max_bytes of it
    status: int
    redirects: tuple[str, ...] = ()  # the URLs redirected to, in order
    truncated: bool = False
    notes: tuple[str, ...] = ()  # e.g. "body cut at 2000000 bytes (fetch_max_bytes)"
    n_bytes: int = 0  # body bytes kept (after content decoding), at most max_bytes
    ms: float = 0.0
    wire_bytes: int = 0  # body bytes read from the network (before content decoding), at most max_bytes


class FetchedText(str):
    """A page's main text (a ``str``) that also carries how it was fetched.

    ``SearchSource.fetch`` returns a str; enrichment reads these attributes
    when present to log the final URL, the content type and any notes.
    """

    final_url: str
    content_type: str
    notes: tuple[str, ...]

    def __new__(cls, text: str, *, final_url: str = "", content_type: str = "", notes: Iterable[str] = ()):
        obj = super().__new__(cls, text)
        obj.final_url = final_url
        obj.content_type = content_type
        obj.notes = tuple(notes)
        return obj


def fetch_page(
    url: str,
    *,
    allow_hosts: Iterable[str] = (),
    max_bytes: int = 2_000_000,
    timeout_s: float = 10.0,
    max_redirects: int = MAX_REDIRECTS,
    resolve: Resolver = system_resolve,
    network_backend: httpcore.NetworkBackend | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> Page:
    """GET ``url`` through the guard; see the module docstring for every rule.

    ``resolve``, ``network_backend`` and ``ssl_context`` exist for tests (a
    fake DNS, a spying backend, a test CA); production code leaves them alone
    (certificates are verified against certifi's CA bundle).
    """
    started = time.monotonic()
    deadline = Deadline(timeout_s)
    allow = tuple(allow_hosts)
    backend = PinnedBackend(deadline, network_backend)
    redirects: list[str] = []
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": ACCEPT_ENCODING}
    # The transport is called directly: httpx.Client.send parses a redirect's Location itself (to fill
    # response.next_request) even with follow_redirects=False, and raises InvalidURL on data:, javascript:...
    with PinnedTransport(backend, ssl_context) as transport:
        current: str | httpx.URL = url
        while True:
            try:
                target = check_url(
                    current, allow_hosts=allow, resolve=resolve, resolve_timeout_s=max(0.0, deadline.left())
                )
            except (FetchRefused, FetchError) as err:
                if not redirects:
                    raise
                raise type(err)(f"redirect {len(redirects)} (to {str(current)[:200]}): {err.reason}") from None
            backend.pins[target.host.lower()] = target.ips
            # the fragment is never sent; the URL keeps its host name (Host header, SNI, certificate)
            request_url = target.url.copy_with(fragment=None)
            try:
                request = httpx.Request("GET", request_url, headers=headers)
            except (httpx.InvalidURL, ValueError) as err:  # check_url accepted it: not expected, refused all the same
                raise FetchRefused(f"invalid URL {str(request_url)[:200]!r}: {err}") from None
            try:
                left = deadline.clamp(None, httpx.ConnectTimeout)
                request.extensions["timeout"] = httpx.Timeout(left).as_dict()
                resp = transport.handle_request(request)
            except httpx.TimeoutException:
                raise FetchError(f"total time cap of {timeout_s:g}s exceeded before {request_url} answered") from None
            except httpx.HTTPError as err:
                raise FetchError(f"cannot fetch {request_url}: {type(err).__name__}: {err}") from None
            try:
                if resp.status_code in REDIRECT_STATUSES:
                    location = resp.headers.get("location")
                    if not location:
                        raise FetchError(f"HTTP {resp.status_code} redirect without a Location header at {request_url}")
                    if len(redirects) >= max_redirects:
                        raise FetchRefused(
                            f"too many redirects: more than {max_redirects} (last {request_url} -> {location[:200]})"
                        )
                    try:
                        nxt = redirect_target(request_url, location)
                    except FetchRefused as err:
                        raise FetchRefused(f"redirect {len(redirects) + 1} from {request_url}: {err.reason}") from None
                    redirects.append(str(nxt))
                    current = nxt
                    continue
                if not 200 <= resp.status_code < 300:
                    raise FetchError(f"HTTP {resp.status_code} {resp.reason_phrase} at {request_url}")
                ctype = resp.headers.get("content-type")
                mtype = media_type(ctype)
                if mtype not in ALLOWED_CONTENT_TYPES:
                    shown = mtype or "none"
                    raise FetchRefused(
                        f"content type {shown} is not fetched (only {', '.join(ALLOWED_CONTENT_TYPES)}): {request_url}"
                    )
                codings = content_codings(resp.headers, request_url)
                body, notes, truncated, wire_bytes = read_body(resp, codings, max_bytes, deadline)
            finally:
                resp.close()
            return Page(
                url=url,
                final_url=str(request_url),
                content_type=mtype,
                text=decode_body(body, ctype),
                status=resp.status_code,
                redirects=tuple(redirects),
                truncated=truncated,
                notes=tuple(notes),
                n_bytes=len(body),
                ms=round((time.monotonic() - started) * 1000, 3),
                wire_bytes=wire_bytes,
            )
