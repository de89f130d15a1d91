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
  address they carry);
- ``allow_hosts``: exact host names or IPs (from the ``fetch_allow_hosts``
  setting) that skip the address check, nothing else (a name that merely
  resolves to an allowed IP is not allowed).

DNS rebinding: the addresses that passed the check are the only ones ever
connected to. A custom httpcore network backend maps each vetted host to its
vetted IPs ("pins"), so httpx never resolves a name itself; the URL keeps its
host name, so the Host header, TLS SNI and certificate checks are the normal
ones. A host that was not vetted cannot be connected to at all. Environment
proxies are ignored (``trust_env=False``): a proxy would resolve names itself.

Redirects are followed by hand (at most ``max_redirects``, 5 by default; the
6th is refused), and every hop goes through the same guard before any
connection is made. Only GET, no cookies carried over by hand, no auth.

Bounds: one deadline (``timeout_s``) covers DNS, connects, TLS, every
redirect and the body: every socket read and write gets the time that is left,
so a slow-drip body cannot exceed it. The body is streamed and read up to
``max_bytes``; a longer body is TRUNCATED there (not refused) and the page says
so in ``notes`` — the beginning of a long article is still its most useful
part. A body cut by the time cap is kept the same way when some of it arrived.
Content types: ``text/html``, ``application/xhtml+xml``, ``text/plain`` only;
anything else (PDF, images, binaries, a missing type) is refused before the
body is read.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

import httpcore
import httpx

ALLOWED_SCHEMES = ("http", "https")
ALLOWED_CONTENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5
USER_AGENT = "saturate/0.1 (research agent)"
ACCEPT = "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8"

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
    n_bytes: int = 0  # body bytes read
    ms: float = 0.0


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
    return next((name for name, hit in checks if hit), None)


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


def decode_body(body: bytes, content_type: str | None) -> str:
    """Header charset, else an HTML <meta> charset, else UTF-8, else a detected encoding."""
    candidates = [_charset(content_type)]
    m = _META_CHARSET.search(body[:4096])
    if m:
        candidates.append(m.group(1).decode("ascii", "ignore"))
    for enc in candidates:
        if enc:
            try:
                return body.decode(enc, errors="replace")
            except LookupError:
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
    transport = PinnedTransport(backend, ssl_context)
    redirects: list[str] = []
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": "identity"}
    with httpx.Client(transport=transport, trust_env=False, follow_redirects=False, headers=headers) as client:
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
                left = deadline.clamp(None, httpx.ConnectTimeout)
                resp = client.send(client.build_request("GET", request_url, timeout=httpx.Timeout(left)), stream=True)
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
                        nxt = request_url.join(location.strip())
                    except (httpx.InvalidURL, ValueError) as err:
                        raise FetchRefused(f"invalid redirect Location {location[:200]!r}: {err}") from None
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
                body, notes, truncated = _read_body(resp, max_bytes, timeout_s)
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
            )


def _read_body(resp: httpx.Response, max_bytes: int, timeout_s: float) -> tuple[bytes, list[str], bool]:
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        note = [f"declared {declared} bytes; only the first {max_bytes} are read (fetch_max_bytes)"]
    else:
        note = []
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in resp.iter_bytes():
            if size + len(chunk) > max_bytes:
                chunks.append(chunk[: max_bytes - size])
                size = max_bytes
                return b"".join(chunks), note + [f"body cut at {max_bytes} bytes (fetch_max_bytes)"], True
            chunks.append(chunk)
            size += len(chunk)
    except httpx.TimeoutException:
        if not size:
            raise FetchError(f"total time cap of {timeout_s:g}s exceeded before any of the body arrived") from None
        return b"".join(chunks), note + [f"body cut by the total time cap of {timeout_s:g}s after {size} bytes"], True
    except httpx.HTTPError as err:
        raise FetchError(f"reading the body failed: {type(err).__name__}: {err}") from None
    return b"".join(chunks), note, False


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
    "fetch_page",
    "normalize_host",
    "parse_ip",
    "system_resolve",
]
