"""Whether a sentence holds a gold answer: the distant supervision of the reader's training (``fit_reader.py``)."""

from __future__ import annotations

import re


def find_answer(sentence: str, answers: list[str], patterns: list[str]) -> tuple[int, int] | None:
    """(start, end) of the first gold answer in ``sentence``: an answer string as whole words in any case
    (WebQuestions), or a match of an answer pattern in any case (CuratedTREC); None when there is none."""
    spans = []
    for a in answers:
        if a.strip():
            m = re.search(rf"(?<!\w){re.escape(a.strip())}(?!\w)", sentence, re.I)
            if m:
                spans.append((m.start(), m.end()))
    for p in patterns:
        try:
            m = re.search(p, sentence, re.I)
        except re.error:
            continue
        if m and m.end() > m.start():
            spans.append((m.start(), m.end()))
    return min(spans) if spans else None
