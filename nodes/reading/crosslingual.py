"""A question in another language than English: read by the multilingual embedding model, not the English reader.

The trained reader (``reading.reader``) learned English questions only; a Spanish, French or German question
("¿Cuál es la capital de Francia?") would find the page that answers it (``embed_model multilingual``) and then read
none of its sentences as answering. Such a question (``is_english`` False) is read by the session's embedding
model instead: the first ``SENTENCES_PER_SOURCE`` sentences of each accepted result, "title. sentence", ranked by
their cosine to the question, the best given as **likely** (not confirmed: no model trained to read answers read
it), with the next best beside it while it is at least ``SUPPORT_SHARE`` of its cosine. "Not found" only when no
sentence was retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from saturate.nodes.reading.answer import (
    LIKELY_PREFIX,
    ReaderAnswer,
    cited_numbers,
    compose,
    not_found,
    result_docs,
)
from saturate.nodes.reading.question import split_sentences
from saturate.nodes.reading.reader import Candidate, Read
from saturate.state.text import STOPWORDS

SENTENCES_PER_SOURCE = 4
MAX_SOURCES = 10
SUPPORT_SHARE = 0.9
MIN_SENTENCE_CHARS = 20
# function words of the languages the multilingual model reads best after English (Spanish, French, German,
# Italian, Portuguese, Dutch): a question with more of them than English ones is not English
_OTHER = frozenset(
    """el la los las del es cuál cual qué quién quien dónde donde cuándo cuando cómo como por para una uno
    le les est quel quelle quels qui où quand comment des du une sont et
    der die das ist wer was wo wann wie welche welcher welches und von den dem ein eine sind
    il lo gli di che chi dove perché è sono della
    o os as um uma onde quem qual são é da dos das
    het een wie wat waar wanneer hoe welke zijn van""".split()
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def is_english(question: str) -> bool:
    """Whether the question reads as English: not more function words of another language than of English."""
    words = [w.lower() for w in _WORD.findall(question)]
    other = sum(w in _OTHER and w not in STOPWORDS for w in words)
    english = sum(w in STOPWORDS and w not in _OTHER for w in words)
    accented = any(not w.isascii() for w in words)
    return not (other >= 2 and other > english) and not (accented and other >= 1 and english == 0)


def embedding_read(embeddings, question: str, docs: Sequence[tuple[str, str]]) -> list[tuple[float, int, str]]:
    """(cosine, source index, sentence) of the first sentences of each source, best first."""
    pool: list[tuple[int, str]] = []
    for i, (_, text) in enumerate(docs[:MAX_SOURCES]):
        for s in split_sentences(text or "")[:SENTENCES_PER_SOURCE]:
            if len(s) >= MIN_SENTENCE_CHARS:
                pool.append((i, s))
    if not pool:
        return []
    vectors = embeddings.embed_documents([f"{docs[i][0]}. {s}" if docs[i][0] else s for i, s in pool])
    q = embeddings.embed_query(question)
    scored = []
    for (i, s), v in zip(pool, vectors):
        scored.append((round(sum(a * b for a, b in zip(q, v)), 6), i, s))
    return sorted(scored, key=lambda t: (-t[0], t[1]))


def crosslingual_answer(
    embeddings, question: str, results: Sequence[Mapping[str, Any]], pages: dict[str, str]
) -> ReaderAnswer:
    """The answer to a question that is not English (module docstring): likely, or not found with no sentence."""
    docs = result_docs(results, pages)
    reads = embedding_read(embeddings, question, docs)
    if not reads:
        return ReaderAnswer(not_found(question, results), [], 0.0, False, "not found")
    best = reads[0][0]
    chosen = [reads[0]] + [r for r in reads[1:2] if best > 0 and r[0] >= SUPPORT_SHARE * best and r[1] != reads[0][1]]
    as_reads = [Read(Candidate(i, 0, docs[i][0], s), round(max(c, 0.0), 6)) for c, i, s in chosen]
    answer = compose(question, as_reads, LIKELY_PREFIX)
    cited = cited_numbers(answer)
    return ReaderAnswer(answer, cited, round(best, 6), True, "likely", "", as_reads)
