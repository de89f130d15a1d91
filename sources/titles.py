"""TitleCorpus: a shallow view of a local corpus — BM25 over document titles only.

Same index file, documents and URLs as the corpus's ``LocalCorpus`` (so a
document found by both merges into one result with both sources attributed),
but the FTS5 query is restricted to the ``title`` column: precise for names of
people, places, works and organisations, blind to facts inside documents.
Configured as the ``titles`` source kind (ceiling 3 by default).
"""

from __future__ import annotations

from saturate.sources.local import LocalCorpus, match_expression


class TitleCorpus(LocalCorpus):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.name = f"titles:{self.corpus_name}"

    def match(self, query: str) -> str:
        expr = match_expression(query)
        return f"{{title}} : ({expr})" if expr else ""
