"""TitleCorpus: a shallow view of a local corpus — BM25 over document titles only.

Same index file, documents and URLs as the corpus's ``LocalCorpus`` (so a
document found by both merges into one result with both sources attributed),
but the FTS5 query is restricted to the ``title`` column: precise for names of
people, places, works and organisations, blind to facts inside documents.
Configured as the ``titles`` source kind (ceiling 3 by default).
"""

from __future__ import annotations

from state.records import SearchResult
from state.text import clip

from sources.local import SNIPPET_CHARS, LocalCorpus, match_expression


class TitleCorpus(LocalCorpus):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.name = f"titles:{self.corpus_name}"

    def search(self, query: str, k: int) -> list[SearchResult]:
        expr = match_expression(query)
        if not expr or k <= 0:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT d.id, d.url, d.title, substr(d.text, 1, ?), fts.rank "
                "FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? ORDER BY fts.rank LIMIT ?",
                (SNIPPET_CHARS * 4, f"{{title}} : ({expr})", k),
            ).fetchall()
        return [
            SearchResult(id=doc_id, url=url, title=title, snippet=clip(head, SNIPPET_CHARS), source=self.name, score=-bm25)
            for doc_id, url, title, head, bm25 in rows
        ]
