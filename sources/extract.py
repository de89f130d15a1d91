"""Main text of a fetched page: trafilatura, with a small lxml fallback.

``main_text(body, content_type, url)`` returns plain text without navigation,
headers, footers, scripts or styles. HTML goes through trafilatura (favouring
precision: on short pages its recall mode keeps menus); when it finds nothing (or is missing), a simple
readability-style pass over lxml keeps the text of <main>/<article> (else
<body>) minus boilerplate elements. ``text/plain`` is only normalised.

Page text is untrusted data. It is returned as text and nothing else: links
are not extracted (nothing in a page can choose what is fetched next), and
tag-like sequences such as ``</sources>`` are defused (their angle brackets
become ‹ ›) so the text cannot close the delimiters that prompts put around
it.
"""

from __future__ import annotations

import logging
import re

from saturate.state.text import defuse

BOILERPLATE_TAGS = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "nav", "header", "footer", "aside", "form", "button", "select", "menu", "dialog",
)  # fmt: skip
BLOCK_TAGS = ("p", "div", "section", "article", "main", "li", "h1", "h2", "h3", "h4", "h5", "h6",
              "blockquote", "pre", "tr", "td", "th", "dd", "dt", "br", "table", "ul", "ol")  # fmt: skip

# Tags of a page read at most (``bounded_markup``): trafilatura takes about 0.9 s for 20,000 on this machine, 8.8 s
# for 200,000 (a 3.9 MB table); the text kept is cut at page_max_chars anyway
MAX_TAGS = 20_000
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_BLANKS = re.compile(r"\n{3,}")

logging.getLogger("trafilatura").setLevel(logging.ERROR)


def normalize(text: str) -> str:
    lines = [_SPACES.sub(" ", ln).strip() for ln in (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def bounded_markup(body: str, max_tags: int = MAX_TAGS) -> str:
    """``body`` cut before its ``max_tags``-th tag: extraction time grows with the elements (a small gzip can
    decode to a hundred thousand table rows), so a page is read up to there (its start, where the main text is)."""
    at, pos = 0, -1
    for _ in range(max_tags):
        pos = body.find("<", pos + 1)
        if pos < 0:
            return body
        at = pos
    return body[:at]


def main_text(body: str, content_type: str = "text/html", url: str | None = None) -> str:
    """Plain main text of a page body (HTML or text); '' when there is none."""
    if not body or not body.strip():
        return ""
    if content_type == "text/plain":
        return defuse(normalize(body))
    body = bounded_markup(body)
    text = _trafilatura(body, url)
    if not text:
        text = fallback_text(body)
    return defuse(normalize(text))


def _trafilatura(body: str, url: str | None) -> str:
    import trafilatura  # heavy (~0.3 s with its lxml/justext stack): imported when the first page is read

    try:
        out = trafilatura.extract(
            body,
            url=url,
            output_format="txt",
            include_comments=False,
            include_tables=True,
            include_images=False,
            include_links=False,
            favor_precision=True,  # boilerplate out first; the snippet already gives recall
            deduplicate=False,
        )
    except Exception:  # noqa: BLE001 - a broken page falls back to the simple extractor
        return ""
    return out or ""


def fallback_text(body: str) -> str:
    """Readability-style text: <main>/<article> (else <body>) without boilerplate elements."""
    # imported when needed, like trafilatura (lxml comes with it); lxml.etree is a compiled module and lxml ships
    # no stubs for it (lxml-stubs is not installed), so pyright cannot see it
    from lxml import etree, html  # pyright: ignore[reportAttributeAccessIssue]

    try:
        doc = html.fromstring(body)
    except (etree.ParserError, ValueError):
        return ""
    for el in list(doc.iter(etree.Comment, etree.ProcessingInstruction, *BOILERPLATE_TAGS)):
        if el.getparent() is not None:
            el.drop_tree()
    roots = doc.xpath("//main") or doc.xpath("//article") or doc.xpath("//body") or [doc]
    parts: list[str] = []
    for root in roots:
        for el in root.iter(*BLOCK_TAGS):
            el.tail = "\n" + (el.tail or "")
        parts.append(root.text_content())
    return "\n".join(parts)
