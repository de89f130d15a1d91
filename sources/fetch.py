"""Safe page fetching: the only way saturate reads a web page.

``fetch_page(url, ...)`` returns a ``Page`` or raises ``FetchRefused`` (the
guard said no: scheme, address, redirects, content type) or ``FetchError``
(the fetch was allowed but failed: DNS, connection, HTTP status, time cap).
Every exception carries a one-line ``reason``.

The guard (``check_url``):

- only ``http`` and ``https``; no credentials in the URL;
- the host is parsed as httpx will use it; literal IPv4 in any form the C
  resolver accepts (dotted, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``,
  ``127.1``) and IPv6 (``[::1]``, ``[::ffff:127.0.0.1]``, zone ids) is
  normalised with ``socket.inet_aton`` / ``ipaddress``; a name is resolved with
  ``getaddrinfo`` and refused if ANY address it resolves to is loopback,
  private, link-local, multicast, reserved, unspecified or otherwise not
  globally routable (IPv4-mapped, 6to4 and NAT64 IPv6 are judged by the IPv4
  address they carry), or in one of the special-purpose ranges that Python
  3.11's ``ipaddress`` calls global (``SPECIAL_PURPOSE``: 192.0.0.0/24,
  192.88.99.0/24, 3fff::/20, fec0::/10);
- a port, when given, is 1-65535;
- ``allow_hosts``: exact host names or IPs (from the ``fetch_allow_hosts``
  setting) that skip the address check, nothing else (a name that merely
  resolves to an allowed IP is not allowed).

DNS rebinding: the addresses that passed the check are the only ones ever
connected to. A custom httpcore network backend maps each vetted host to its
vetted IPs ("pins"), so httpx never resolves a name itself; the URL keeps its
host name, so the Host header, TLS SNI and certificate checks are the normal
ones. A host that was not vetted cannot be connected to at all. No proxy is
ever used (environment proxies included): a proxy would resolve names itself.

Redirects are followed by hand (at most ``max_redirects``, 5 by default; the
6th is refused), and every hop goes through the same guard before any
connection is made. Only GET, no cookies carried over by hand, no auth. httpx
never reads a Location itself (the transport is called directly, not through
``Client.send``, which parses it even with ``follow_redirects=False``);
``redirect_target`` does, and refuses with a reason: any scheme but http(s)
(``data:``, ``javascript:``, ``file:``...), whitespace or control characters,
and the forms that RFC 3986 (httpx) and WHATWG (browsers) parsers read as
different hosts: a scheme without ``//`` (``https:evil.com``), an empty host
(``///evil.com``) and backslashes (``/\\evil.com``).

Bounds: one deadline (``timeout_s``) covers DNS, connects, TLS, every
redirect and the body: every socket read and write gets the time that is left,
so a slow-drip body cannot exceed it. The body is streamed and read up to
``max_bytes``; a longer body is TRUNCATED there (not refused) and the page says
so in ``notes`` — the beginning of a long article is still its most useful
part. A body cut by the time cap is kept the same way when some of it arrived.

Content types: ``text/html``, ``application/xhtml+xml``, ``text/plain`` only;
anything else (PDF, images, binaries, a missing type) is refused before the
body is read.

Content codings (decompression bombs): we ask for ``gzip, deflate`` (and
``zstd`` when the zstandard package is installed) and undo them ourselves,
streaming, from the raw body: the bytes on the wire AND the output of every
decoding layer are each capped at ``max_bytes``, and no decoding step yields
more than ``DECODE_CHUNK`` bytes, so memory and time stay bounded whatever
the stack (``gzip, gzip`` of 1 GB of zeros is 1.8 KB). A page that decodes to
more than ``max_bytes`` is TRUNCATED at ``max_bytes`` like any long page, with
a note. Refused before the body is read: any other coding (``br``: no bounded
brotli decoder is installed, and we never ask for it), ``zstd`` without
zstandard, and more than ``MAX_CODINGS`` codings stacked. zstd frames may not
need a window above 8 MB (RFC 9659). A body that fails to decode is an error,
or is cut there (with a note) when some of it decoded.

Charsets: only the IANA charsets (charset_normalizer's list) are honoured from
the Content-Type header or a <meta> tag; ``punycode`` (quadratic: 2 MB takes
minutes), ``idna`` and the escape codecs are Python codecs, not charsets.
"""

from __future__ import annotations

import codecs
import ipaddress
import re
import socket
import ssl
import threading
import time
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from urllib.parse import unquote

import httpcore
import httpx

try:  # optional: not our dependency (httpx[zstd] and langsmith bring it); without it zstd is neither asked nor read
    import zstandard
except ImportError:  # pragma: no cover - installed in the test environment
    zstandard = None

ALLOWED_SCHEMES = ("http", "https")
ALLOWED_CONTENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5
USER_AGENT = "saturate/0.1 (research agent)"
ACCEPT = "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8"
# only the codings we can decode with a bound on the output (see "content codings" below)
ACCEPT_ENCODING = "gzip, deflate, zstd" if zstandard is not None else "gzip, deflate"
MAX_CODINGS = 2  # "gzip, gzip" is decoded (and capped); a third stacked coding is refused
DECODE_CHUNK = 64 * 1024  # the most one decoding step yields
ZSTD_MAX_WINDOW = 8 * 1024 * 1024  # RFC 9659: a zstd content coding needs no window above 8 MB

# Special-purpose ranges that Python 3.11's ipaddress calls global (is_global True, no other flag set), from IANA's
# IPv4 and IPv6 Special-Purpose Address Registries (iana.org/assignments/iana-ipv4-special-registry and
# /iana-ipv6-special-registry). Every other entry of both registries that is not globally reachable is already
# refused by the ipaddress checks in address_problem (tests/test_fetch.py walks them); the anycast entries that the
# registries do call globally reachable (2001:1::1, 2001:1::2, AS112...) serve no web pages, so over-refusing them
# (3.11 calls all of 2001::/23 private) costs nothing.
SPECIAL_PURPOSE: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(net), name)
    for net, name in (
        ("192.0.0.0/24", "IETF protocol assignment"),  # RFC 6890: as a whole; 3.11 knows only .0/29 and .170/31
        ("192.88.99.0/24", "6to4 relay anycast"),  # RFC 3068, deprecated by RFC 7526
        ("3fff::/20", "documentation"),  # RFC 9637 (2024); later ipaddress releases know it, 3.11 does not
        ("fec0::/10", "deprecated site-local"),  # RFC 3879; is_site_local, but is_global too in 3.11
    )
)

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LEGACY_IPV4 = re.compile(r"[0-9a-fx.]+")
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


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


# --------------------------------------------------------------------- the guard


def parse_ip(host: str) -> IP | None:
    """The address a host string denotes literally, in any form a resolver accepts; None for a name."""
    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if ":" in h:  # IPv6, possibly with a (percent-encoded) zone id
        h = unquote(h).split("%", 1)[0]
        try:
            return ipaddress.IPv6Address(h)
        except ValueError:
            return None
    h = h.rstrip(".")
    try:
        return ipaddress.IPv4Address(h)
    except ValueError:
        pass
    if h and _LEGACY_IPV4.fullmatch(h) and any(c.isdigit() for c in h):
        try:  # decimal 2130706433, hex 0x7f000001, octal 0177.0.0.1, short 127.1
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def address_problem(ip: IP) -> str | None:
    """Why an address must not be fetched from (None when it is a public unicast address)."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = (
            ip.ipv4_mapped or ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None)
        )
        if embedded is not None:
            inner = address_problem(embedded)
            return f"{inner} (IPv6 carrying {embedded})" if inner else None
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("not globally routable", not ip.is_global),
    )
    problem = next((name for name, hit in checks if hit), None)
    if problem is None:
        problem = next((name for net, name in SPECIAL_PURPOSE if ip in net), None)
    return problem


def normalize_host(host: str) -> str:
    """Lower case, no brackets, no trailing dot; a literal IP in its canonical form."""
    h = host.strip().lower()
    ip = parse_ip(h)
    if ip is not None:
        return str(ip)
    return h.strip("[]").rstrip(".")


def system_resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (getaddrinfo, TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[str] = []
    for *_, sockaddr in infos:
        addr = str(sockaddr[0]).split("%", 1)[0]
        if addr not in out:
            out.append(addr)
    return out


@dataclass(frozen=True)
class Target:
    """A URL that passed the guard: where to connect (the vetted IPs) and why it was allowed."""

    url: httpx.URL
    host: str  # as httpx will pass it to the network backend
    port: int
    ips: tuple[str, ...]
    allowed_by: str = ""  # "allow_hosts" when the address check was skipped


def check_url(
    url: str | httpx.URL,
    *,
    allow_hosts: Iterable[str] = (),
    resolve: Resolver = system_resolve,
    resolve_timeout_s: float | None = None,
) -> Target:
    """Vet a URL before any connection; raises FetchRefused (or FetchError when DNS fails)."""
    try:
        u = url if isinstance(url, httpx.URL) else httpx.URL(str(url).strip())
    except (httpx.InvalidURL, TypeError, ValueError) as err:
        raise FetchRefused(f"invalid URL {str(url)[:200]!r}: {err}") from None
    scheme = u.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchRefused(f"scheme {scheme or '(none)'}:// is not allowed (only http and https): {str(url)[:200]}")
    if u.userinfo:
        raise FetchRefused(f"URL carries credentials (user@host), refused: {u.copy_with(userinfo=None)}")
    raw_host = u.raw_host.decode("ascii", "replace")
    if not raw_host:
        raise FetchRefused(f"URL has no host: {str(url)[:200]}")
    if u.port is not None and not 0 < u.port < 65536:
        raise FetchRefused(f"port {u.port} is out of range (1-65535): {str(url)[:200]}")
    port = u.port or (443 if scheme == "https" else 80)
    allowed = {normalize_host(h) for h in allow_hosts if h and h.strip()}
    name = normalize_host(raw_host)
    ip = parse_ip(raw_host)
    if ip is not None:
        ips = [str(ip)]
    else:
        if not _HOST_NAME.fullmatch(name):
            raise FetchRefused(f"host {raw_host!r} is not a valid host name")
        try:
            ips = _resolve_with_timeout(resolve, name, port, resolve_timeout_s)
        except FetchError:
            raise
        except (OSError, UnicodeError, ValueError) as err:
            raise FetchError(f"cannot resolve host {name!r}: {err}") from None
        if not ips:
            raise FetchError(f"host {name!r} resolves to no address")
    if name in allowed:
        return Target(u, raw_host, port, tuple(ips), "allow_hosts")
    for addr in ips:
        try:
            vetted = ipaddress.ip_address(addr)
        except ValueError:
            raise FetchRefused(f"host {name!r} resolves to an unparsable address {addr!r}") from None
        problem = address_problem(vetted)
        if problem:
            what = f"host {raw_host!r} is" if ip is not None else f"host {name!r} resolves to"
            raise FetchRefused(f"{what} {problem} address {vetted}; refused (fetch_allow_hosts may allow exact hosts)")
    return Target(u, raw_host, port, tuple(ips))


def _resolve_with_timeout(resolve: Resolver, host: str, port: int, timeout_s: float | None) -> list[str]:
    """``resolve`` bounded by the time left (getaddrinfo has no timeout of its own)."""
    if timeout_s is None:
        return list(resolve(host, port))
    box: dict = {}

    def run() -> None:
        try:
            box["ips"] = list(resolve(host, port))
        except BaseException as err:  # noqa: BLE001 - handed to the caller
            box["err"] = err

    worker = threading.Thread(target=run, name=f"resolve-{host}", daemon=True)
    worker.start()
    worker.join(max(0.0, timeout_s))
    if worker.is_alive():
        raise FetchError(f"resolving {host!r} exceeded the time cap")
    if "err" in box:
        raise box["err"]
    return box["ips"]


_SCHEME_PREFIX = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def redirect_target(base: httpx.URL, location: str) -> httpx.URL:
    """The URL a redirect's Location points to (relative to ``base``); FetchRefused when it is not a plain one.

    The result still goes through ``check_url``. Refused here: whitespace and control or format characters
    (a Location is a URI reference, RFC 9110 10.2.2), any scheme but http(s), and the forms that RFC 3986 parsers
    (httpx) and WHATWG parsers (browsers) resolve to different hosts, rather than guessing which one is meant:
    a scheme without ``//`` (``https:evil.com``: no host for RFC 3986, a path or evil.com for WHATWG), an empty
    authority (``///evil.com``, ``http:///x``) and a backslash before the query (WHATWG reads it as ``/``).
    """
    shown = location[:200]
    if not location.strip():
        raise FetchRefused("empty Location")
    bad = next((c for c in location if c.isspace() or unicodedata.category(c) in ("Cc", "Cf")), None)
    if bad is not None:
        kind = "whitespace" if bad.isspace() else "a control character"
        raise FetchRefused(f"Location {shown!r} contains {kind} ({bad!r})")
    rest = location
    m = _SCHEME_PREFIX.match(location)
    if m:
        scheme = m.group(1).lower()
        if scheme not in ALLOWED_SCHEMES:
            raise FetchRefused(f"scheme {scheme}:// is not allowed (only http and https): {shown}")
        rest = location[m.end() :]
        if not rest.startswith("//"):
            raise FetchRefused(f"Location {shown!r} has a scheme but no //host (parsers disagree on its meaning)")
    if rest.startswith("//") and not re.split(r"[/?#]", rest[2:], maxsplit=1)[0]:
        raise FetchRefused(f"Location {shown!r} has an empty host (parsers disagree on its meaning)")
    if "\\" in re.split(r"[?#]", rest, maxsplit=1)[0]:
        raise FetchRefused(f"Location {shown!r} contains a backslash (browsers read it as /)")
    try:
        return base.join(location)
    except (httpx.InvalidURL, ValueError) as err:  # ValueError includes UnicodeError (IDNA)
        raise FetchRefused(f"invalid Location {shown!r}: {err}") from None


# --------------------------------------------------------------- pinned transport


class _Deadline:
    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.at = time.monotonic() + timeout_s

    def left(self) -> float:
        return self.at - time.monotonic()

    def clamp(self, timeout: float | None, exc: type[Exception]) -> float:
        left = self.left()
        if left <= 0:
            raise exc(f"total time cap of {self.timeout_s:g}s exceeded")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every read/write gets at most the time left before the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline):
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None):
        inner = self._inner.start_tls(
            ssl_context, server_hostname, self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Connects a host only to the IPs the guard vetted for it (``pins``); anything else is refused."""

    def __init__(self, deadline: _Deadline, inner: httpcore.NetworkBackend | None = None):
        self.pins: dict[str, tuple[str, ...]] = {}
        self.connected: list[tuple[str, int]] = []
        self._deadline = deadline
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        ips = self.pins.get(host.lower() if isinstance(host, str) else host)
        if not ips:
            raise httpcore.ConnectError(f"host {host!r} was not vetted by the fetch guard; not connecting")
        last: Exception | None = None
        for ip in ips:
            t = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
            try:
                stream = self._inner.connect_tcp(ip, port, t, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as err:
                last = err
                continue
            self.connected.append((ip, port))
            return _DeadlineStream(stream, self._deadline)
        assert last is not None
        raise last

    def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
        raise httpcore.ConnectError("unix sockets are never used for page fetching")

    def sleep(self, seconds: float) -> None:  # pragma: no cover
        time.sleep(seconds)


_EXC_MAP: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
)


def _mapped(err: Exception) -> Exception:
    for src, dst in _EXC_MAP:
        if isinstance(err, src):
            return dst(str(err) or type(err).__name__)
    return err


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, inner):
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._inner
        except Exception as err:  # noqa: BLE001 - re-raised as the httpx exception
            mapped = _mapped(err)
            if mapped is err:
                raise
            raise mapped from err

    def close(self) -> None:
        if hasattr(self._inner, "close"):
            self._inner.close()


_SSL_CONTEXT: ssl.SSLContext | None = None
_SSL_LOCK = threading.Lock()


def default_ssl_context() -> ssl.SSLContext:
    """httpx's verifying context (certifi CAs), built once per process and shared (it is read-only)."""
    global _SSL_CONTEXT
    with _SSL_LOCK:
        if _SSL_CONTEXT is None:
            _SSL_CONTEXT = httpx.create_ssl_context()
        return _SSL_CONTEXT


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore pool that uses ``PinnedBackend`` (HTTP/1.1, no proxy)."""

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext | None = None):
        self.backend = backend
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or default_ssl_context(),
            max_connections=2,
            max_keepalive_connections=2,
            network_backend=backend,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            resp = self._pool.handle_request(req)
        except Exception as err:  # noqa: BLE001
            mapped = _mapped(err)
            if mapped is err:
                raise
            raise mapped from err
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_ResponseStream(resp.stream),
            extensions=resp.extensions,
        )

    def close(self) -> None:
        self._pool.close()


# ------------------------------------------------------------------------ fetching


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _charset(content_type: str | None) -> str | None:
    m = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type or "", re.IGNORECASE)
    return m.group(1) if m else None


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


@cache
def _charset_codecs() -> frozenset[str]:
    """Python's codec names of the IANA charsets: what a page may name as its charset."""
    try:  # charset_normalizer (a trafilatura dependency) keeps the list; imported with the first page decoded
        from charset_normalizer.constant import IANA_SUPPORTED as names
    except ImportError:  # pragma: no cover - should it move: the codecs with aliases (no punycode, idna, escapes)
        from encodings.aliases import aliases

        names = list(aliases.values())
    found = set()
    for name in names:
        try:
            found.add(codecs.lookup(name).name)
        except LookupError:  # pragma: no cover - a platform without that codec
            continue
    return frozenset(found)


def _page_codec(label: str | None) -> str | None:
    """The codec a page's charset label names, if it is a charset (``punycode``, ``idna``... are not)."""
    if not label:
        return None
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return name if name in _charset_codecs() else None


def decode_body(body: bytes, content_type: str | None) -> str:
    """Header charset, else an HTML <meta> charset, else UTF-8, else a detected encoding."""
    candidates = [_charset(content_type)]
    m = _META_CHARSET.search(body[:4096])
    if m:
        candidates.append(m.group(1).decode("ascii", "ignore"))
    for enc in map(_page_codec, candidates):
        if enc:
            try:
                return body.decode(enc, errors="replace")
            except LookupError:  # pragma: no cover - not a text encoding (only with the fallback list)
                continue
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes  # only for bodies that are not UTF-8

        best = from_bytes(body[:200_000]).best()
        if best is not None and best.encoding:
            return body.decode(best.encoding, errors="replace")
    except Exception:  # noqa: BLE001 - detection is best effort
        pass
    return body.decode("utf-8", errors="replace")


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
    deadline = _Deadline(timeout_s)
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
                body, notes, truncated, wire_bytes = _read_body(resp, codings, max_bytes, deadline)
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


# ---------------------------------------------------------------- content codings
#
# httpx's decoders (Response.iter_bytes) inflate each network chunk in one call with no bound on the output: 1.8 KB
# of "gzip, gzip" became 1 GB in memory before max_bytes was ever looked at. So the raw body is read (iter_raw) and
# each coding is undone here by a generator whose every step yields at most DECODE_CHUNK bytes, with the bounded
# APIs of the libraries that decode: zlib's decompressobj().decompress(data, max_length) and zstandard's
# stream_reader().read(size). (urllib3 2.6+ has bounded decoders too, but not as public API, and it is no dependency
# of ours.) Every layer is then capped at max_bytes by _Capped, so a layer yields at most max_bytes + DECODE_CHUNK.


class _DecodeError(Exception):
    pass


def _drain(d, data: bytes) -> Iterator[bytes]:
    """Feed ``data`` to a zlib decompressor, DECODE_CHUNK bytes of output per step (zlib keeps the input it did not
    reach in ``unconsumed_tail``; a full step may leave output pending with no input left)."""
    while True:
        out = d.decompress(data, DECODE_CHUNK)
        if out:
            yield out
        data = d.unconsumed_tail
        if d.eof or (not data and len(out) < DECODE_CHUNK):
            return


def _gunzip(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """gzip, every member of it; what follows a complete member and is not gzip is ignored (as browsers and
    urllib3 do)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    first = True
    for data in chunks:
        while data:
            try:
                yield from _drain(d, data)
            except zlib.error as err:
                if first:
                    raise _DecodeError(f"gzip: {err}") from None
                return
            if not d.eof:
                break
            data = d.unused_data
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            first = False


def _inflate(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """deflate: zlib-wrapped as RFC 9110 says, or raw deflate as some servers send it, told apart by the zlib
    header (RFC 1950: CM 8, CINFO <= 7, the first two bytes a multiple of 31), as Chromium does."""
    d = None
    head = b""
    for data in chunks:
        if d is None:
            head += data
            if len(head) < 2:
                continue
            data, head = head, b""
            wrapped = data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and int.from_bytes(data[:2], "big") % 31 == 0
            d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        try:
            yield from _drain(d, data)
        except zlib.error as err:
            raise _DecodeError(f"deflate: {err}") from None
        if d.eof:
            return


class _ChunkReader:
    """``read(size)`` over an iterator of chunks: the source zstandard's stream_reader pulls its input from."""

    def __init__(self, chunks: Iterable[bytes]):
        self._chunks = iter(chunks)
        self._buf = b""

    def read(self, size: int = -1) -> bytes:
        while not self._buf:
            chunk = next(self._chunks, None)
            if chunk is None:
                return b""
            self._buf = chunk
        size = len(self._buf) if size < 0 else size
        out, self._buf = self._buf[:size], self._buf[size:]
        return out


def _unzstd(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """zstd, every frame of it, with at most an 8 MB window (RFC 9659)."""
    dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    reader = dctx.stream_reader(_ChunkReader(chunks), read_size=DECODE_CHUNK, read_across_frames=True, closefd=False)
    while True:
        try:
            out = reader.read(DECODE_CHUNK)
        except zstandard.ZstdError as err:
            raise _DecodeError(f"zstd: {err}") from None
        if not out:
            return
        yield out


_DECODERS: dict[str, Callable[[Iterable[bytes]], Iterator[bytes]]] = {"gzip": _gunzip, "deflate": _inflate}
if zstandard is not None:
    _DECODERS["zstd"] = _unzstd


def content_codings(headers: httpx.Headers, url: httpx.URL | str = "") -> list[str]:
    """The Content-Encoding of a response, in the order applied; FetchRefused when it cannot be decoded boundedly."""
    codings = []
    for value in headers.get_list("content-encoding", split_commas=True):
        coding = value.strip().lower()
        coding = "gzip" if coding == "x-gzip" else coding  # RFC 9110 8.4.1.3
        if coding in ("", "identity"):
            continue
        if coding not in _DECODERS:
            why = "no bounded brotli decoder is installed" if coding == "br" else "unknown or not installed"
            raise FetchRefused(
                f"content encoding {coding} is not decoded ({why}; we ask for {ACCEPT_ENCODING} only): {url}"
            )
        codings.append(coding)
    if len(codings) > MAX_CODINGS:
        raise FetchRefused(f"{len(codings)} content encodings stacked ({', '.join(codings)}), at most {MAX_CODINGS}")
    return codings


class _Capped:
    """The first ``limit`` bytes of a stream of chunks; ``n`` counts them, ``cut`` says more was coming.

    Each pull also checks the deadline: decoding may run on data that arrived long ago (no socket read to time out).
    """

    def __init__(self, chunks: Iterable[bytes], limit: int, deadline: _Deadline):
        self._chunks = chunks
        self._deadline = deadline
        self.limit = limit
        self.n = 0
        self.cut = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self._deadline.clamp(None, httpx.ReadTimeout)
            room = self.limit - self.n
            if len(chunk) > room:
                self.cut = True
                chunk = chunk[:room]
            self.n += len(chunk)
            if chunk:
                yield chunk
            if self.cut:
                return


def _read_body(
    resp: httpx.Response, codings: list[str], max_bytes: int, deadline: _Deadline
) -> tuple[bytes, list[str], bool, int]:
    """The body, decoded, at most ``max_bytes`` of it; its notes, whether it was cut, and the bytes on the wire."""
    timeout_s = deadline.timeout_s
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        notes = [f"declared {declared} bytes; only the first {max_bytes} are read (fetch_max_bytes)"]
    else:
        notes = []
    wire = _Capped(resp.iter_raw(), max_bytes, deadline)
    layers: list[tuple[str, _Capped]] = []
    stream: Iterable[bytes] = wire
    for coding in reversed(codings):  # the last coding applied is undone first
        stream = _Capped(_DECODERS[coding](stream), max_bytes, deadline)
        layers.append((coding, stream))
    encoded = f"Content-Encoding {', '.join(codings)}"
    chunks: list[bytes] = []
    size = 0
    cut_note = ""
    try:
        for chunk in stream:
            chunks.append(chunk)
            size += len(chunk)
    except httpx.TimeoutException:
        if not size:
            got = f" ({wire.n} bytes on the wire, none decoded)" if wire.n else ""
            raise FetchError(f"total time cap of {timeout_s:g}s exceeded before any of the body arrived{got}") from None
        cut_note = f"body cut by the total time cap of {timeout_s:g}s after {size} bytes"
    except _DecodeError as err:
        if not size:
            raise FetchError(f"cannot decode the body ({encoded}): {err}") from None
        cut_note = f"body cut after {size} bytes where it stopped decoding ({encoded}): {err}"
    except httpx.HTTPError as err:
        raise FetchError(f"reading the body failed: {type(err).__name__}: {err}") from None
    if wire.cut:
        where = f" on the wire ({encoded})" if codings else ""
        notes.append(f"body cut at {max_bytes} bytes{where} (fetch_max_bytes)")
    for i, (coding, layer) in enumerate(layers):
        if layer.cut:
            what = "decoded body" if i == len(layers) - 1 else f"{coding}-decoded data"
            notes.append(f"{what} cut at {max_bytes} bytes (fetch_max_bytes; {encoded}, {wire.n} bytes on the wire)")
    if cut_note:
        notes.append(cut_note)
    truncated = bool(cut_note) or wire.cut or any(layer.cut for _, layer in layers)
    return b"".join(chunks), notes, truncated, wire.n


__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "FetchError",
    "FetchRefused",
    "FetchedText",
    "MAX_REDIRECTS",
    "Page",
    "PinnedBackend",
    "Target",
    "address_problem",
    "check_url",
    "content_codings",
    "fetch_page",
    "normalize_host",
    "parse_ip",
    "redirect_target",
    "system_resolve",
]
