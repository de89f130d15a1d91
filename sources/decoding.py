"""The bounded decoders of page fetching (``sources/fetch.py``): a body's content codings and its charset.

Content codings (decompression bombs): we ask for ``gzip, deflate`` (and
``zstd`` when the zstandard package is installed: ``ACCEPT_ENCODING``) and undo them ourselves,
streaming, from the raw body (``read_body``): the bytes on the wire AND the output of every
decoding layer are each capped at ``max_bytes``, and no decoding step yields
more than ``DECODE_CHUNK`` bytes, so memory and time stay bounded whatever
the stack (``gzip, gzip`` of 1 GB of zeros is 1.8 KB). A page that decodes to
more than ``max_bytes`` is TRUNCATED at ``max_bytes`` like any long page, with
a note. Refused before the body is read (``content_codings``): any other coding (``br``: no bounded
brotli decoder is installed, and we never ask for it), ``zstd`` without
zstandard, and more than ``MAX_CODINGS`` codings stacked. zstd frames may not
need a window above 8 MB (RFC 9659). A body that fails to decode is an error,
or is cut there (with a note) when some of it decoded. A body cut by the time cap is kept the same way when some
of it arrived.

Charsets (``decode_body``): only the IANA charsets (charset_normalizer's list) are honoured from
the Content-Type header or a <meta> tag; ``punycode`` (quadratic: 2 MB takes
minutes), ``idna`` and the escape codecs are Python codecs, not charsets.
"""

from __future__ import annotations

import codecs
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import cache

import httpx

from saturate.sources.fetch_errors import FetchError, FetchRefused
from saturate.sources.transport import Deadline

try:  # optional: not our dependency (httpx[zstd] and langsmith bring it); without it zstd is neither asked nor read
    import zstandard
except ImportError:  # pragma: no cover - installed in the test environment
    zstandard = None

# only the codings we can decode with a bound on the output (see the module docstring)
ACCEPT_ENCODING = "gzip, deflate, zstd" if zstandard is not None else "gzip, deflate"
MAX_CODINGS = 2  # "gzip, gzip" is decoded (and capped); a third stacked coding is refused
DECODE_CHUNK = 64 * 1024  # the most one decoding step yields
ZSTD_MAX_WINDOW = 8 * 1024 * 1024  # RFC 9659: a zstd content coding needs no window above 8 MB


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
    if zstandard is None:  # pragma: no cover - only registered in _DECODERS when zstandard is installed
        raise _DecodeError("zstd: the zstandard package is not installed")
    dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    # zstandard reads its source through read(size) alone ("an object with a read(size) method", its docs); its
    # stub asks for a whole IO[bytes]
    source = _ChunkReader(chunks)
    reader = dctx.stream_reader(source, read_size=DECODE_CHUNK, read_across_frames=True, closefd=False)  # pyright: ignore[reportArgumentType]
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

    def __init__(self, chunks: Iterable[bytes], limit: int, deadline: Deadline):
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


def read_body(
    resp: httpx.Response, codings: list[str], max_bytes: int, deadline: Deadline
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
