"""The address guard of page fetching (``sources/fetch.py``): which URLs may be connected to, and where.

``check_url`` vets a URL before any connection and returns a ``Target`` (the URL, and the vetted IPs the
transport will connect to, ``sources/transport.py``), or raises ``FetchRefused`` (or ``FetchError`` when DNS
fails):

- only ``http`` and ``https``; no credentials in the URL;
- the host is parsed as httpx will use it; literal IPv4 in any form the C
  resolver accepts (dotted, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``,
  ``127.1``) and IPv6 (``[::1]``, ``[::ffff:127.0.0.1]``, zone ids) is
  normalised with ``socket.inet_aton`` / ``ipaddress``; a name is resolved with
  ``getaddrinfo`` (bounded by the time left: ``_resolve_with_timeout``) and refused if ANY address it resolves
  to is loopback, private, link-local, multicast, reserved, unspecified or otherwise not
  globally routable (IPv4-mapped, 6to4 and NAT64 IPv6 are judged by the IPv4
  address they carry), or in one of the special-purpose ranges that Python
  3.11's ``ipaddress`` calls global (``SPECIAL_PURPOSE``: 192.0.0.0/24,
  192.88.99.0/24, 3fff::/20, fec0::/10);
- a port, when given, is 1-65535;
- ``allow_hosts``: exact host names or IPs (from the ``fetch_allow_hosts``
  setting) that skip the address check, nothing else (a name that merely
  resolves to an allowed IP is not allowed).

Redirects: ``redirect_target`` reads a redirect's Location (httpx never does: ``fetch_page`` calls the transport
directly) and refuses with a reason: any scheme but http(s) (``data:``, ``javascript:``, ``file:``...),
whitespace or control characters, and the forms that RFC 3986 (httpx) and WHATWG (browsers) parsers read as
different hosts: a scheme without ``//`` (``https:evil.com``), an empty host (``///evil.com``) and backslashes
(``/\\evil.com``). The URL it returns goes through ``check_url`` like the first one.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

import httpx

from saturate.sources.fetch_errors import FetchError, FetchRefused

ALLOWED_SCHEMES = ("http", "https")

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
