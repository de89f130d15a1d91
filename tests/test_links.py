"""No link reaches an answer, a proof or a key actor unless it is a retrieved source's (issue 24): the filter
catches www. hosts, protocol-relative //host, mailto:, https:/host, javascript: and bare lower-case domains, and it
runs on claim proofs and multi-source key actors too."""

from __future__ import annotations

import json

import pytest

from saturate.graph import verify
from saturate.nodes.multi.decide import _without_links
from saturate.sources.local import LocalCorpus
from saturate.state.text import LINK_REMOVED, scrub_urls

SOURCE = "https://en.wikipedia.org/wiki/Bubye_River"


@pytest.mark.parametrize(
    "link",
    [
        "https://evil.example/x",
        "javascript:alert(1)",
        "www.evil.com/login",
        "//evil.com/p",
        "mailto:someone@evil.com",
        "https:/evil.com/x",
        "evil.com",
        "Evil.com/path",
        "data:text/html,hi",
    ],
)
def test_every_spelling_of_a_link_is_removed(link):
    text, removed = scrub_urls(f"See {link} now, or {SOURCE}.", {SOURCE})
    assert LINK_REMOVED in text and link.rstrip("/") not in text and SOURCE in text and removed


def test_names_and_numbers_are_not_links():
    for text in ("Amazon.com and Booking.com are companies", "e.g. the U.S., Node.js, St. Louis", "ratio 3.5 v2.0"):
        assert scrub_urls(text) == (text, [])


def test_a_claim_proof_quotes_no_link_from_a_passage(home, tmp_path):
    corpus = tmp_path / "c.jsonl"
    text = (
        "The Bubye River is a river in Zimbabwe. The Bubye River is in Zimbabwe, see https://evil.example/x "
        "and javascript:alert(1) and www.evil.com for more."
    )
    corpus.write_text(json.dumps({"id": "b", "title": "Bubye River", "text": text, "url": SOURCE}) + "\n")
    result = verify("The Bubye River is in Zimbabwe.", source=LocalCorpus.open(corpus, tmp_path / "idx"), seed=1)
    for bad in ("evil.example", "javascript:", "www.evil.com"):
        assert bad not in result.proof and bad not in result.answer
    assert SOURCE in result.proof


def test_key_actors_carry_no_link_but_the_sources():
    actor = {
        "name": "Acme",
        "kind": "organisation",
        "what": "Acme (www.acme-phish.com) makes things; see https://en.wikipedia.org/wiki/Acme",
        "role": "javascript:alert(1) runs it",
        "facts": ["In 1990 Acme moved to //evil.com/x"],
        "sources": [1],
        "mentions": 2,
    }
    clean = _without_links(actor, {"https://en.wikipedia.org/wiki/Acme"})
    blob = json.dumps(clean)
    assert "acme-phish" not in blob and "javascript:" not in blob and "evil.com" not in blob
    assert "https://en.wikipedia.org/wiki/Acme" in clean["what"]


def test_page_extraction_reads_a_bounded_number_of_elements():
    """A small gzip can decode to a hundred thousand table rows (issue 24: 71 s in extraction); a page is read up to
    ``MAX_TAGS`` elements, from its start, where the main text is."""
    from saturate.sources.extract import MAX_TAGS, bounded_markup, main_text

    rows = "<tr><td>cell a</td><td>cell b</td></tr>" * 100_000
    intro = "<h1>Title</h1><p>The intro says what the page is.</p>"
    body = f"<html><body><main>{intro}<table>{rows}</table></main></body></html>"
    cut = bounded_markup(body)
    assert cut.count("<") == MAX_TAGS - 1 and body.startswith(cut)
    text = main_text(body)
    assert "The intro says what the page is." in text and text.count("cell a") < MAX_TAGS // 4
    small = "<html><body><p>short</p></body></html>"
    assert bounded_markup(small) == small


@pytest.mark.parametrize(
    "link",
    ["EVIL-J.COM", "admin@evil-m.com", "https:Evil-N.com", "https:evil-n.com/x", "ｅｖｉｌ．ｃｏｍ", "evil。com"],
)
def test_link_forms_the_scrub_kept_are_removed(link):
    """Issue 36: capitals, a mail address, a scheme without slashes, full-width letters and ideographic dots."""
    text, removed = scrub_urls(f"See {link} now, or {SOURCE}.", {SOURCE})
    assert link not in text and LINK_REMOVED in text and SOURCE in text, text
    assert removed == [link]


def test_names_and_times_are_not_links():
    for text in ("Amazon.com sells books", "at 10:30 the ratio was 1:2", "J. R. R. Tolkien wrote it"):
        assert scrub_urls(text) == (text, [])


def test_direction_marks_and_escapes_never_reach_a_terminal_or_a_report():
    from saturate.state.text import printable
    from saturate.views.report_parts import e

    for raw in ("\u200e", "\u200f", "\u061c", "\u202e", "\x1b[2J"):
        assert raw not in printable(f"a{raw}b") and raw not in e(f"a{raw}b")
