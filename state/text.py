"""Plain-text helpers shared by nodes and sources: terms, sentences, overlap."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable

# A short English stopword list: function words and question words that carry
# no topic (kept small and explicit so its effect on queries is predictable).
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t d ll m o re ve y isn aren wasn weren hasn haven hadn
    doesn don didn won wouldn shouldn couldn mustn many much whose known called name named one first
    found located situated based""".split()
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9])")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters/digits, Unicode-aware)."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text or "")]


def terms(text: str) -> list[str]:
    """Content terms: words minus stopwords and 1-letter tokens, order kept, duplicates kept.

    A possessive is folded into its word ("Bonetti's" → "bonetti"): the same name either way, and the
    FTS5 tokenizer would otherwise read "bonetti's" as the phrase "bonetti s", which only matches the
    possessive form.
    """
    out = []
    for w in words(text):
        if w.endswith("'s") and len(w) > 3:
            w = w[:-2]
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            out.append(w)
    return out


@functools.lru_cache(maxsize=8192)
def term_set(text: str) -> frozenset[str]:
    """The set of content terms (cached: nodes re-read the same accepted results every round)."""
    return frozenset(terms(text))


def paragraphs(text: str) -> list[str]:
    """The paragraphs of ``text`` (split at blank lines and before list items), spaces folded, empty ones left out."""
    return [p for p in (" ".join(x.split()) for x in re.split(r"\n\s*\n|\n(?=[-*•] )", text or "")) if p]


def paragraph_sentences(paragraph: str) -> list[str]:
    """The sentences of one paragraph of ``paragraphs``."""
    return [s.strip() for s in _SENT.split(paragraph) if s.strip()]


def sentences(text: str) -> list[str]:
    """Split prose into sentences (good enough for extractive merging)."""
    return [s for para in paragraphs(text) for s in paragraph_sentences(para)]


def overlap(a: str | set[str] | frozenset[str], b: str | set[str] | frozenset[str]) -> float:
    """Share of a's content terms that also occur in b (0 when a has none)."""
    sa = a if isinstance(a, (set, frozenset)) else term_set(a)
    sb = b if isinstance(b, (set, frozenset)) else term_set(b)
    if not sa:
        return 0.0
    return len(sa & sb) / len(sa)


# C0 and C1 control characters (but newline and tab), DEL, and the bidirectional overrides/isolates that can
# reorder what a terminal shows
# control characters, bidi embeddings/overrides/isolates and the invisible direction marks (LRM, RLM, ALM)
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_TAG_LIKE = re.compile(r"<(\s*/?\s*[A-Za-z!?][^<>\n]{0,80})>")


def printable(text: str, newlines: bool = True) -> str:
    """Text safe to print on a terminal: control characters and bidi overrides shown as ``\\uXXXX`` escapes
    (also a valid escape inside a JSON string), so a task, a title or a page cannot move the cursor, retitle
    the window or hide text."""
    out = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text or "")
    return out if newlines else out.replace("\n", " ")


def has_control_characters(text: str) -> bool:
    """Whether text holds characters ``printable`` would escape."""
    return bool(_UNPRINTABLE.search(text or ""))


def lone_surrogate(line: str, value: object) -> str | None:
    """The first lone surrogate in ``value``'s strings, as its ``\\uXXXX`` escape, else None. JSON allows an
    escape such as ``\\ud800`` alone (Python's json reads it), but no Unicode text holds one: it could not be
    stored, printed or written as UTF-8 later. ``line`` is the JSON text ``value`` was read from: without a
    ``\\ud`` escape in it (almost always) nothing is walked."""
    if "\\ud" not in line and "\\uD" not in line:
        return None
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            bad = next((ch for ch in item if "\ud800" <= ch <= "\udfff"), None)
            if bad is not None:
                return f"\\u{ord(bad):04x}"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def defuse(text: str) -> str:
    """Tag-like sequences (``<x>``, ``</sources>``) lose their angle brackets: ‹x›. Untrusted text (pages,
    search results, corpus text) cannot close or open the delimiters prompts put around data."""
    return _TAG_LIKE.sub(lambda m: f"‹{m.group(1)}›", text or "")


# a URL or URI-like reference: scheme:/ or scheme:// (a browser reads https:/host too), a scheme that runs, embeds
# or mails without // (javascript:, data:, vbscript:, file:, mailto:), a protocol-relative //host, a www. host
_URL = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]{1,20}:/{1,3}|\b(?:javascript|data|vbscript|file|mailto|https?|ftp):|(?<![\w/:])//(?=[a-z0-9])"
    r"|\bwww\.)[^\s<>\"'\]\)]*",
    re.IGNORECASE,
)
# a bare domain: lower-case labels ending in a public suffix (evil.com, a.b.co.uk), or any domain with a path
# (Evil.com/x); a capitalised name such as Amazon.com or Booking.com without a path is a name, not a link
_BARE = re.compile(r"(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(/[^\s<>\"'\]\)]*)?", re.I)
LINK_REMOVED = "[link removed]"


@functools.cache
def _extractor():
    import tldextract  # imported on first use: most texts hold no bare domain

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)  # the bundled list; no network


def _public_suffix(host: str) -> bool:
    """Whether ``host`` ends in a public suffix with a domain before it."""
    parts = _extractor()(host)
    return bool(parts.suffix and parts.domain)


# full-width letters and punctuation and the ideographic full stops, folded to ASCII one character for one (so a
# match's position in the folded text is its position in the text): ｅｖｉｌ．ｃｏｍ and evil。com are links too
_FOLD = {0x3002: ".", 0xFF0E: ".", 0xFF61: ".", **{c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}}
_MAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}\b", re.IGNORECASE)


def scrub_urls(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """``text`` with every URL not in ``allowed`` (the retrieved sources') replaced by ``[link removed]``;
    (text, the removed URLs). Untrusted text can carry links; an answer must only ever point at a source. Links are
    found in the text with full-width letters and ideographic dots folded to ASCII; a scheme without slashes
    (``https:evil.com``), a mail address and a bare domain in capitals (``EVIL.COM``) count too."""
    text = text or ""
    folded = text.translate(_FOLD)
    spans: list[tuple[int, int]] = []
    removed: list[str] = []

    def take(start: int, end: int) -> None:
        url = text[start:end].rstrip(".,;:!?")
        folded_url = folded[start : start + len(url)]
        if url in allowed or folded_url in allowed:
            return
        removed.append(url)
        spans.append((start, start + len(url)))

    for m in _URL.finditer(folded):
        take(m.start(), m.end())
    for m in _MAIL.finditer(folded):
        if not any(a < m.end() and m.start() < b for a, b in spans):
            take(m.start(), m.end())
    for m in _BARE.finditer(folded):
        if any(a < m.end() and m.start() < b for a, b in spans):
            continue
        host, path = m.group(1), m.group(2) or ""
        if (path or host == host.lower() or host == host.upper()) and _public_suffix(host.lower()):
            whole = (host + path).rstrip(".,;:!?")
            if whole in allowed or any(whole in a for a in allowed):
                continue
            removed.append(text[m.start() : m.start() + len(whole)])
            spans.append((m.start(), m.start() + len(whole)))
    out, last = [], 0
    for a, b in sorted(spans):
        if a < last:
            continue
        out.append(text[last:a] + LINK_REMOVED)
        last = b
    out.append(text[last:])
    return "".join(out), removed


def clip(text: str, limit: int) -> str:
    """Cut at a word boundary to at most ``limit`` characters (adds … when cut)."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def clip_lines(text: str, limit: int) -> str:
    """Whole lines while they fit in ``limit``; a first line longer than that is clipped."""
    out: list[str] = []
    used = 0
    for line in (ln.rstrip() for ln in (text or "").strip().splitlines()):
        if not line:
            continue
        need = len(line) + (1 if out else 0)
        if used + need > limit:
            if not out:
                out.append(clip(line, limit))
            break
        out.append(line)
        used += need
    return "\n".join(out)


def without_pieces(text: str, secrets: list[str], size: int, mark: str) -> str:
    """``text`` with every run of characters covered by a piece of ``size`` characters of a secret replaced by
    ``mark``: a message that quotes part of a password or a key keeps none of it. Linear in the text and the secrets
    (their ``size``-grams in a set), so a megabyte-long secret costs what its length does."""
    grams = {secret[i : i + size] for secret in secrets for i in range(len(secret) - size + 1)}
    grams.discard(mark[:size])
    if not grams or len(text) < size:
        return text
    covered = bytearray(len(text))
    for i in range(len(text) - size + 1):
        if text[i : i + size] in grams:
            covered[i : i + size] = b"\x01" * size
    if not any(covered):
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(mark)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def did_you_mean(name: str, choices: Iterable[str], shown: str = "`{}`") -> str:
    """The hint "did you mean `max_rounds`?" for the choice a mistyped ``name`` most likely meant (difflib's closest
    match above its default cutoff), else "". ``shown`` formats the choice (the CLI shows a flag bare: "{}")."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f"did you mean {shown.format(close[0])}?" if close else ""
