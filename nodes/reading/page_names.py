"""Which accepted pages a text names, as a page of a closed corpus links to another: by the page's name.

A page's ``subject`` is its title without a trailing "(disambiguation)" aside; its ``page_name`` is that subject
without a place's ", qualifier" as titles of places carry it ("Waimea Bay, Hawaii", "Bangor, Maine"): a page names
the place without it ("surfing 25-foot waves at Waimea Bay"). Used by the brief (``named_by_on_topic``: which
off-topic pages it may quote) and by the answer (``reading.answer.bridged``: the page the answer's sentence leads to).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME_MIN_CHARS = 4  # the shortest page name a text must hold to name that page
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)$")
_QUALIFIER = re.compile(r",\s+[A-Z][^,()]*$")


def subject(title: str) -> str:
    """A page's subject: its title, a trailing "(disambiguation)" aside."""
    return _DISAMBIGUATION.sub("", title).strip()


def page_name(title: str) -> str:
    """The name a text calls a page by: its ``subject`` without a place's ", qualifier"."""
    return _QUALIFIER.sub("", subject(title)).strip()


def mentions(text: str, name: str) -> list[tuple[int, int]]:
    """Where ``text`` names ``name``: whole words, case-blind."""
    return [m.span() for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)]


def names(text: str, name: str, within: Sequence[str] = ()) -> bool:
    """Whether ``text`` names ``name`` (at least ``NAME_MIN_CHARS`` long) other than as a part of a longer name in
    ``within`` that it names ("Prejudice" in "Who wrote Pride and Prejudice?" is the novel's title, not the page
    Prejudice)."""
    if len(name) < NAME_MIN_CHARS:
        return False
    longer = [span for n in within for span in mentions(text, n)]
    return any(not any(a <= start and end <= b for a, b in longer) for start, end in mentions(text, name))
