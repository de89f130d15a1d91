"""ReplaySource: a search source answering with a claim's recorded search hits.

A factcheck claims file (``factcheck/claims.jsonl`` of the evaluation data) keeps, per claim, the passages a web
search returned (URL, passage, annotated stance). Replaying them lets the whole
``verify`` graph run offline on real evidence: every query gets the recorded
hits in rank order, and ``fetch`` returns a hit's passage.

**Every recorded passage is its own hit.** A page often gave several passages
(with different annotated stances); keyed by URL alone, all but one would be
lost. A hit keeps its real URL; only a URL seen earlier in the same claim's
hits gets a ``#passage-<n>`` fragment (n = the hit's 1-based rank among the
recorded hits; an existing fragment is replaced), so every hit has its own key
while every link still opens the page. ``replayed_urls`` lists the URL each
recorded hit replays under, in order.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from saturate.state.errors import BadInput
from saturate.state.files import bounded_jsonl
from saturate.state.records import SearchResult
from saturate.state.text import clip

# A recorded passage is what the search engine returned for the hit (the annotators judged it whole; at most
# ~1,030 characters in the public file): a result's snippet is the passage up to this length.
SNIPPET_CHARS = 2000


def replay_urls(urls: list[str]) -> list[str]:
    """The URL each recorded hit replays under: the recorded one, or, when it repeats, ``#passage-<n>``."""
    out: list[str] = []
    seen: set[str] = set()
    for n, url in enumerate(urls, 1):
        if url in seen:
            base = url.split("#", 1)[0]
            url, extra = f"{base}#passage-{n}", 1
            while url in seen or url in urls:  # a recorded URL may itself end in #passage-<n>
                extra += 1
                url = f"{base}#passage-{n}-{extra}"
        seen.add(url)
        out.append(url)
    return out


class ReplaySource:
    name = "replay"

    def __init__(self, hits: list[dict], name: str = "replay"):
        self.name = name
        recorded = [h for h in hits if h.get("url")]
        self.replayed_urls = replay_urls([h["url"] for h in recorded])
        self.hits = [{**h, "url": url, "recorded_url": h["url"]} for h, url in zip(recorded, self.replayed_urls)]
        self._text = {h["url"]: h.get("passage") or h.get("text") or "" for h in self.hits}
        self.stances = {h["url"]: h.get("stance") for h in self.hits}
        self.calls = 0

    def search(self, query: str, k: int) -> list[SearchResult]:
        self.calls += 1
        out = []
        for h in self.hits[:k]:
            text = self._text[h["url"]]
            out.append(
                SearchResult(
                    id=h["url"],
                    url=h["url"],
                    title=h.get("title") or urlsplit(h["url"]).hostname or "",
                    snippet=clip(text, SNIPPET_CHARS),
                    source=self.name,
                )
            )
        return out

    def fetch(self, result: SearchResult) -> str:
        if result.url not in self._text:
            raise KeyError(f"{result.url} is not among the recorded hits")
        return self._text[result.url]

    def passage(self, url: str) -> str:
        """The recorded passage of a replayed hit ("" for an unknown URL)."""
        return self._text.get(url, "")

    def stance_oracle(self, url: str) -> str | None:
        """The annotated stance of a recorded hit (for evaluating the rule with gold stances)."""
        return self.stances.get(url)


class ClaimsError(BadInput):
    """A claims file that cannot be used (a ValueError, as ``load_claims`` always raised; BadInput: one line, exit 2
    from any command)."""


def load_claims(path: Path | str) -> list[dict]:
    """Claims in the factcheck format; ClaimsError (a ValueError) naming the line for a malformed one, and for a
    path that is no regular file, a file over ``MAX_EVAL_FILE_BYTES`` or a line over ``MAX_EVAL_LINE_BYTES``, bytes
    that are not UTF-8 (read a bounded line at a time: ``--claims /dev/zero`` must not be read into memory whole)."""
    out = []
    for n, row in bounded_jsonl(path, "claims file", ClaimsError):
        if not isinstance(row.get("claim"), str) or not isinstance(row.get("hits", []), list):
            raise ClaimsError(f"{path}: line {n} needs a 'claim' string and a 'hits' list")
        if row.get("label") not in (None, "True", "False", "Invalid"):
            raise ClaimsError(f"{path}: line {n} has label {row.get('label')!r}; expected True, False or Invalid")
        out.append(row)
    return out
