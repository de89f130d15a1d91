"""The pinned transport of page fetching (``sources/fetch.py``): connect only where the guard said, in time.

DNS rebinding: the addresses that passed the guard (``sources/address_guard.py``) are the only ones ever
connected to. ``PinnedBackend``, an httpcore network backend, maps each vetted host to its vetted IPs ("pins"),
so httpx never resolves a name itself; the URL keeps its host name, so the Host header, TLS SNI and certificate
checks are the normal ones. A host that was not vetted cannot be connected to at all. ``PinnedTransport`` is an
httpx transport over an httpcore pool on that backend (HTTP/1.1); no proxy is ever used (environment proxies
included): a proxy would resolve names itself. httpcore's exceptions come out as httpx's (``_mapped``).

Bounds: one ``Deadline`` covers DNS, connects, TLS, every redirect and the body: every socket read and write
(``_DeadlineStream``) gets the time that is left, so a slow-drip body cannot exceed it.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator

import httpcore
import httpx


class Deadline:
    """The time left of one fetch's total time cap (``timeout_s``); ``clamp`` raises ``exc`` once it is spent."""

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

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline):
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

    def __init__(self, deadline: Deadline, inner: httpcore.NetworkBackend | None = None):
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
