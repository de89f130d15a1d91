"""ReplaySource: a search source answering with a claim's recorded search hits.

``../shared/data/factcheck/claims.jsonl`` keeps, per claim, the five passages a
web search returned (URL, passage, annotated stance). Replaying them lets the
whole ``verify`` graph run offline on real evidence: every query gets the
recorded hits in rank order, and ``fetch`` returns a hit's full passage.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from saturate.state.records import SearchResult
from saturate.state.text import clip

SNIPPET_CHARS = 500


class ReplaySource:
    name = "replay"

    def __init__(self, hits: list[dict], name: str = "replay"):
        self.name = name
        self.hits = [h for h in hits if h.get("url")]
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

    def stance_oracle(self, url: str) -> str | None:
        """The annotated stance of a recorded hit (for evaluating the rule with gold stances)."""
        return self.stances.get(url)


def load_claims(path: Path | str) -> list[dict]:
    """Claims in the factcheck format; a clear ValueError naming the line for a malformed one."""
    path = Path(path)
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}: line {n} is not valid JSON ({exc})") from None
            if (
                not isinstance(row, dict)
                or not isinstance(row.get("claim"), str)
                or not isinstance(row.get("hits", []), list)
            ):
                raise ValueError(f"{path}: line {n} needs a 'claim' string and a 'hits' list")
            if row.get("label") not in (None, "True", "False", "Invalid"):
                raise ValueError(f"{path}: line {n} has label {row.get('label')!r}; expected True, False or Invalid")
            out.append(row)
    return out
